/* Writing XML as libvirt writes it (xml_write.h). */
#include "server/drivers/conf/xml_write.h"

void rv_xml_put_escaped(FILE *fp, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        case '\'': fputs("&apos;", fp); break;
        case '"': fputs("&quot;", fp); break;
        default: fputc(*s, fp);
        }
    }
}
