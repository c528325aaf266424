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

/* The document grows in an rv_buf, not in open_memstream's buffer: each
 * time that one grows glibc allocates anew, zeroes the new part and
 * copies, so a 400 KB document cost the loop twice its size in page
 * faults; an rv_buf grown on the loop takes a buffer the loop keeps
 * (common/buf_store.h) instead. */
static ssize_t buf_write(void *cookie, const char *p, size_t size)
{
    rv_xml_buf *b = cookie;
    if (rv_buf_reserve(&b->out, size) < 0)
        return -1;
    memcpy(b->out.data + b->out.len, p, size);
    b->out.len += size;
    return (ssize_t)size;
}

static int buf_close(void *cookie)
{
    rv_xml_buf *b = cookie;
    if (rv_buf_reserve(&b->out, 1) < 0) {
        rv_buf_free(&b->out);
        return -1;
    }
    b->size = b->out.len;
    b->out.data[b->out.len] = '\0';
    b->text = b->out.data;
    memset(&b->out, 0, sizeof(b->out));
    return 0;
}

FILE *rv_xml_open(rv_xml_buf *b)
{
    *b = (rv_xml_buf){ 0 };
    return fopencookie(b, "w", (cookie_io_functions_t){ .write = buf_write, .close = buf_close });
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
