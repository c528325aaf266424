/* Writing XML as libvirt writes it: the drivers print their documents
 * with stdio, a field at a time, and escape every text and attribute
 * value the same way. */
#ifndef RV_SERVER_DRIVERS_CONF_XML_WRITE_H
#define RV_SERVER_DRIVERS_CONF_XML_WRITE_H

#include <stdio.h>

#include "common/util.h"

/* s with the five XML special characters as entities (&lt; &gt; &amp;
 * &apos; &quot;), fit for element text and attributes in either quote. */
void rv_xml_put_escaped(FILE *fp, const char *s);
/* "  <name>text</name>\n", indent spaces in, text escaped. */
void rv_xml_put_text_element(FILE *fp, int indent, const char *name, const char *text);
/* A document written with stdio into memory: fp = rv_xml_open(&b), the
 * writes, then rv_xml_done(fp, &b.text). */
typedef struct rv_xml_buf {
    char *text;                 /* set when the stream is closed */
    size_t size;
    rv_buf out;                 /* the stream's */
} rv_xml_buf;
/* A stream writing into b; NULL when memory is short. */
FILE *rv_xml_open(rv_xml_buf *b);
/* Close fp, a stream from rv_xml_open() whose b.text is *buf: the text,
 * or NULL (and *buf freed) when writing failed. */
char *rv_xml_done(FILE *fp, char **buf);
/* A stream that only counts what is written into *count (from 0), for
 * a document's length without the document: writing a 400 KB one into
 * memory only to measure it cost the loop its page faults. */
FILE *rv_xml_count_open(size_t *count);

#endif
