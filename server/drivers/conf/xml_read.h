/* Reading an XML document a peer sent, with libxml2 and safely: a size
 * bound checked first, no DTD (so no entities to expand and nothing to
 * fetch), no network, libxml2's own depth and size limits kept.  Errors
 * read as libvirt's: a syntax error is VIR_ERR_XML_DETAIL "(NAME):LINE:
 * what", the line and a pointer under the column; a wrong root element
 * is VIR_ERR_XML_ERROR from the XML error domain.  The one reader of
 * every definition both drivers read (xml_tree.h keeps what must be kept
 * as given). */
#ifndef RV_SERVER_DRIVERS_CONF_XML_READ_H
#define RV_SERVER_DRIVERS_CONF_XML_READ_H

#include <stddef.h>

#include <libxml/tree.h>

#include "common/error.h"

/* The root element of xml (NUL-terminated), which must be called root
 * (NULL: any, a device's XML),
 * with *docp the document for the caller to free (rv_lx_free); on
 * failure NULL, with err set and *docp NULL (nothing to free).  docname
 * names the document in a syntax error, in parentheses as libvirt names
 * its in-memory documents ("(network_definition)"), or as it is after a
 * leading '=' ("=network_update_xml").  from: the error domain of the errors that are
 * not libvirt's XML helpers' (RV_FROM_STORAGE, ...); max: the longest
 * document accepted, in bytes. */
xmlNode *rv_lx_read(const char *xml, size_t max, const char *root, const char *docname,
                    int from, xmlDoc **docp, rv_err *err);

/* A document parsed ahead, off the loop (server/preparse.c parses a
 * call's large document on a work thread before its slot runs).
 * rv_lx_preparse (any thread; touches only xml, which must stay as it is
 * until the result is freed or read): what rv_lx_read would find in xml
 * whatever its other arguments; NULL when out of memory.  rv_lx_offer
 * (the loop): the first rv_lx_read of exactly xml (the same pointer) uses
 * p instead of parsing, with the same result and errors; rv_lx_withdraw
 * then takes p back, with the document in it if that read refused it or
 * its caller gave it to rv_lx_free, for the caller to free with
 * rv_lx_preparsed_free (a tree of megabytes: off the loop too). */
typedef struct rv_lx_preparsed rv_lx_preparsed;
/* libxml2's set-up, before any thread parses (its first use would
 * otherwise do it, racing with another thread's). */
void rv_lx_init(void);
rv_lx_preparsed *rv_lx_preparse(const char *xml);
void rv_lx_offer(rv_lx_preparsed *p);
rv_lx_preparsed *rv_lx_withdraw(void);
/* Free a document rv_lx_read gave (an offered one goes back with the
 * rest, rv_lx_withdraw). */
void rv_lx_free(xmlDoc *doc);
void rv_lx_preparsed_free(rv_lx_preparsed *p);

/* The first child element called name, or NULL. */
xmlNode *rv_lx_child(const xmlNode *n, const char *name);
/* The same outside any namespace (XPath's "./name"), and whether n is
 * such an element called name. */
xmlNode *rv_lx_plain_child(const xmlNode *n, const char *name);
int rv_lx_is_plain(const xmlNode *n, const char *name);
/* An attribute, malloc'd, or NULL when absent (*failed set if out of memory). */
char *rv_lx_attr(const xmlNode *n, const char *name, int *failed);
/* XPath's string() of an element, malloc'd; NULL when the element is
 * absent or its text empty, as libvirt's virXPathString has it. */
char *rv_lx_text(const xmlNode *n, int *failed);

/* A name (of a volume, a network filter, ...) that holds none of the
 * characters in illegal; else -1 with err set as libvirt's XML helpers
 * set it ("invalid char in name: C", VIR_ERR_XML_DETAIL, from XML). */
int rv_lx_check_name(const char *name, const char *illegal, rv_err *err);

/* A <uuid> element's text as libvirt reads it: blanks around 32 hex
 * digits, '-' or ' ' allowed between the byte pairs; NULL text (no
 * element, or empty) gets a generated one.  -1 with libvirt's "malformed
 * uuid element" (INTERNAL_ERROR, error domain from). */
int rv_lx_read_uuid(const char *text, unsigned char uuid[16], int from, rv_err *err);

#endif
