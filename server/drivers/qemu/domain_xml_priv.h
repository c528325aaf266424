/* domain_xml.c's reading helpers, shared with domain_devices.c (not a
 * public interface: both files read the same document the same way). */
#ifndef RV_SERVER_DRIVERS_QEMU_DOMAIN_XML_PRIV_H
#define RV_SERVER_DRIVERS_QEMU_DOMAIN_XML_PRIV_H

#include <stdio.h>

#include "server/drivers/qemu/domain_xml.h"

/* libxml2's xmlNode (its headers are not needed to include this one). */
struct _xmlNode;

/* Every attribute of n is in allowed (NULL-terminated), else
 * CONFIG_UNSUPPORTED naming it. */
int rv_qx_check_attrs(const struct _xmlNode *n, const char *const *allowed, rv_err *err);
/* The next child element after *cursor (NULL: the first): 1, 0 at the end, -1. */
int rv_qx_next_child(const struct _xmlNode *parent, const struct _xmlNode **cursor, rv_err *err);
/* An element holding only text: its trimmed text, malloc'd. */
int rv_qx_text_of(const struct _xmlNode *n, const char *const *allowed, char **out, rv_err *err);
/* An empty element with only the attributes allowed. */
int rv_qx_empty_element(const struct _xmlNode *n, const char *const *attrs, rv_err *err);
/* Attribute name of n, malloc'd, or NULL when absent. */
char *rv_qx_attr(const struct _xmlNode *n, const char *name);
/* word's index in words (NULL-terminated), or -1. */
int rv_qx_word_index(const char *word, const char *const *words);
/* An attribute that must be one of words: its index, or -1 with err set. */
int rv_qx_attr_word(const struct _xmlNode *n, const char *name, const char *const *words, rv_err *err);
/* A decimal (or 0x hexadecimal) number. */
int rv_qx_parse_uint(const char *text, unsigned long long *out);
void rv_qx_put_escaped(FILE *fp, const char *s);
/* <memory unit='...'>N</memory> in KiB (and the like). */
int rv_qx_parse_memory(const struct _xmlNode *n, unsigned long long *kib, rv_err *err);

#endif
