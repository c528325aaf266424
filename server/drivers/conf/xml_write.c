/* Writing XML as libvirt writes it (xml_write.h). */
#include "server/drivers/conf/xml_write.h"

#include <stdlib.h>
#include <string.h>

void rv_xml_put_escaped(FILE *fp, const char *s)
{
    /* Runs of plain characters go out whole: a character at a time
     * (fputc takes the stream's lock each time) made formatting a 400 KB
     * description two thirds of remvirtd's CPU in test-client-threads. */
    for (;;) {
        size_t run = strcspn(s, "<>&'\"");
        if (run)
            fwrite(s, 1, run, fp);
        s += run;
        switch (*s) {
        case '\0': return;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        case '\'': fputs("&apos;", fp); break;
        default: fputs("&quot;", fp); break;
        }
        s++;
    }
}

void rv_xml_put_text_element(FILE *fp, int indent, const char *name, const char *text)
{
    fprintf(fp, "%*s<%s>", indent, "", name);
    rv_xml_put_escaped(fp, text);
    fprintf(fp, "</%s>\n", name);
}

static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
    (void)buf;
    *(size_t *)cookie += size;
    return (ssize_t)size;
}

FILE *rv_xml_count_open(size_t *count)
{
    *count = 0;
    return fopencookie(count, "w", (cookie_io_functions_t){ .write = count_write });
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
