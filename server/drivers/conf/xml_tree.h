/* A document, or the part of one, that a definition keeps as it was
 * given (a test domain's <devices>, a network): read by the shared reader
 * (xml_read.h) and copied into this small tree, which a driver may change
 * (a balloon's stats period, a network's bridge) and write back in
 * libvirt's layout.  Comments and processing instructions are dropped;
 * CDATA becomes text; attributes keep their order, the namespace
 * declarations first. */
#ifndef RV_SERVER_DRIVERS_CONF_XML_TREE_H
#define RV_SERVER_DRIVERS_CONF_XML_TREE_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

typedef struct rv_xml_attr {
    char *name;                         /* with its prefix: "xmlns:app" */
    char *value;                        /* entities and references resolved */
} rv_xml_attr;

typedef struct rv_xml_node rv_xml_node;
struct rv_xml_node {
    char *name;                         /* NULL for a text node */
    char *text;                         /* a text node's content */
    rv_xml_attr *attrs;
    size_t nattrs;
    rv_xml_node **kids;                 /* entries may be NULL once taken */
    size_t nkids, kids_cap;
};

/* The document xml (NUL-terminated), read as rv_lx_read reads it (the
 * same bounds, checks and errors; its root must be called root), as a
 * tree; NULL with err set. */
rv_xml_node *rv_xml_tree_read(const char *xml, size_t max, const char *root,
                              const char *docname, int from, rv_err *err);
/* libxml2's element n and what is below it as a tree; NULL: no memory. */
struct _xmlNode;
rv_xml_node *rv_xml_tree_copy(const struct _xmlNode *n);
void rv_xml_free(rv_xml_node *node);

/* The attribute's value, or NULL. */
const char *rv_xml_attr_get(const rv_xml_node *el, const char *name);
/* The first child element called name, or NULL. */
rv_xml_node *rv_xml_child(const rv_xml_node *el, const char *name);
/* All text below el, concatenated (XPath's string()); malloc'd. */
char *rv_xml_string(const rv_xml_node *el);
/* The same into *out, or NULL when el is absent or its text empty
 * (libvirt reads an empty element as a missing one); -1: no memory. */
int rv_xml_text_copy(const rv_xml_node *el, char **out);

/* el and what is below it, indent spaces in, as libvirt lays it out: two
 * more spaces per level, single-quoted attributes, empty elements closed
 * with "/>", layout whitespace dropped. */
void rv_xml_put_node(FILE *fp, const rv_xml_node *el, int indent);
/* el's attributes, each as " name='value'". */
void rv_xml_put_attrs(FILE *fp, const rv_xml_node *el);

#endif
