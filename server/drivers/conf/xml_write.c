/* Writing XML as libvirt writes it (xml_write.h). */
#include "server/drivers/conf/xml_write.h"

#include <stdlib.h>

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

void rv_xml_put_text_element(FILE *fp, int indent, const char *name, const char *text)
{
    fprintf(fp, "%*s<%s>", indent, "", name);
    rv_xml_put_escaped(fp, text);
    fprintf(fp, "</%s>\n", name);
}

FILE *rv_xml_open(rv_xml_buf *b)
{
    b->text = NULL;
    b->size = 0;
    return open_memstream(&b->text, &b->size);
}

char *rv_xml_done(FILE *fp, char **buf)
{
    int bad = ferror(fp);
    /* fclose sets *buf: read it only after. */
    if (fclose(fp) != 0 || bad || !*buf) {
        free(*buf);
        *buf = NULL;
    }
    return *buf;
}
