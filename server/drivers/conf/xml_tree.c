/* Kept documents (xml_tree.h): libxml2's tree copied into a small one. */
#include "server/drivers/conf/xml_tree.h"

#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

static int add_kid(rv_xml_node *parent, rv_xml_node *kid)
{
    if (parent->nkids == parent->kids_cap) {
        size_t cap = parent->kids_cap ? parent->kids_cap * 2 : 4;
        rv_xml_node **grown = realloc(parent->kids, cap * sizeof(*grown));
        if (!grown)
            return -1;
        parent->kids = grown;
        parent->kids_cap = cap;
    }
    parent->kids[parent->nkids++] = kid;
    return 0;
}

/* "prefix:name", or name without a prefix. */
static char *qualified(const xmlNs *ns, const xmlChar *name)
{
    if (!ns || !ns->prefix)
        return strdup((const char *)name);
    size_t lp = strlen((const char *)ns->prefix), ln = strlen((const char *)name);
    char *s = malloc(lp + ln + 2);
    if (s) {
        memcpy(s, ns->prefix, lp);
        s[lp] = ':';
        memcpy(s + lp + 1, name, ln + 1);
    }
    return s;
}

static int add_attr(rv_xml_node *el, char *name, char *value)
{
    rv_xml_attr *grown = name && value ? realloc(el->attrs, (el->nattrs + 1) * sizeof(*grown))
                                       : NULL;
    if (!grown) {
        free(name);
        free(value);
        return -1;
    }
    el->attrs = grown;
    el->attrs[el->nattrs++] = (rv_xml_attr){ name, value };
    return 0;
}

/* A namespace's URI as given: libxml2 keeps an '&' in it as "&#38;"
 * (it resolves that only in attribute values proper). */
static char *ns_uri(const xmlNs *ns)
{
    const char *href = ns->href ? (const char *)ns->href : "";
    char *out = malloc(strlen(href) + 1), *o = out;
    for (const char *p = href; out && *p;) {
        if (strncmp(p, "&#38;", 5) == 0) {
            *o++ = '&';
            p += 5;
        } else {
            *o++ = *p++;
        }
    }
    if (out)
        *o = '\0';
    return out;
}

static int copy_attrs(const xmlNode *n, rv_xml_node *el)
{
    for (const xmlNs *ns = n->nsDef; ns; ns = ns->next) {
        char *name = ns->prefix ? malloc(strlen((const char *)ns->prefix) + 7)
                                : strdup("xmlns");
        if (name && ns->prefix)
            sprintf(name, "xmlns:%s", (const char *)ns->prefix);
        if (add_attr(el, name, ns_uri(ns)) < 0)
            return -1;
    }
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
        int rc = add_attr(el, qualified(a->ns, a->name), v ? strdup((const char *)v) : NULL);
        xmlFree(v);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Recursion is bounded by libxml2's depth limit. */
static rv_xml_node *copy_element(const xmlNode *n)
{
    rv_xml_node *el = calloc(1, sizeof(*el));
    if (!el || !(el->name = qualified(n->ns, n->name)) || copy_attrs(n, el) < 0)
        goto fail;
    for (const xmlNode *c = n->children; c; c = c->next) {
        rv_xml_node *kid = NULL;
        if (c->type == XML_ELEMENT_NODE) {
            if (!(kid = copy_element(c)))
                goto fail;
        } else if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (!c->content || !c->content[0])
                continue;
            if (!(kid = calloc(1, sizeof(*kid))) ||
                !(kid->text = strdup((const char *)c->content))) {
                free(kid);
                goto fail;
            }
        } else {
            continue;           /* comments, processing instructions */
        }
        if (add_kid(el, kid) < 0) {
            rv_xml_free(kid);
            goto fail;
        }
    }
    return el;
fail:
    rv_xml_free(el);
    return NULL;
}

rv_xml_node *rv_xml_tree_copy(const struct _xmlNode *n)
{
    return copy_element(n);
}

rv_xml_node *rv_xml_tree_read(const char *xml, size_t max, const char *root,
                              const char *docname, int from, rv_err *err)
{
    xmlDoc *doc;
    xmlNode *top = rv_lx_read(xml, max, root, docname, from, &doc, err);
    if (!top)
        return NULL;
    rv_xml_node *tree = copy_element(top);
    rv_lx_free(doc);
    if (!tree)
        rv_err_set(err, from, RV_ERR_NO_MEMORY, "out of memory");
    return tree;
}

void rv_xml_free(rv_xml_node *node)
{
    if (!node)
        return;
    for (size_t i = 0; i < node->nkids; i++)
        rv_xml_free(node->kids[i]);
    for (size_t i = 0; i < node->nattrs; i++) {
        free(node->attrs[i].name);
        free(node->attrs[i].value);
    }
    free(node->kids);
    free(node->attrs);
    free(node->name);
    free(node->text);
    free(node);
}

const char *rv_xml_attr_get(const rv_xml_node *el, const char *name)
{
    for (size_t i = 0; i < el->nattrs; i++)
        if (strcmp(el->attrs[i].name, name) == 0)
            return el->attrs[i].value;
    return NULL;
}

rv_xml_node *rv_xml_child(const rv_xml_node *el, const char *name)
{
    for (size_t i = 0; i < el->nkids; i++)
        if (el->kids[i] && el->kids[i]->name && strcmp(el->kids[i]->name, name) == 0)
            return el->kids[i];
    return NULL;
}

static void put_string(FILE *fp, const rv_xml_node *node)
{
    if (node->text)
        fputs(node->text, fp);
    for (size_t i = 0; i < node->nkids; i++)
        if (node->kids[i])
            put_string(fp, node->kids[i]);
}

char *rv_xml_string(const rv_xml_node *el)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    put_string(fp, el);
    return rv_xml_done(fp, &buf);
}

int rv_xml_text_copy(const rv_xml_node *el, char **out)
{
    *out = NULL;
    if (!el)
        return 0;
    char *s = rv_xml_string(el);
    if (!s)
        return -1;
    if (*s)
        *out = s;
    else
        free(s);
    return 0;
}

#define BLANKS " \t\r\n"

static int is_blank_text(const char *s)
{
    return s[strspn(s, BLANKS)] == '\0';
}

static int has_element_kids(const rv_xml_node *el)
{
    for (size_t i = 0; i < el->nkids; i++)
        if (el->kids[i] && el->kids[i]->name)
            return 1;
    return 0;
}

static int has_text(const rv_xml_node *el)
{
    for (size_t i = 0; i < el->nkids; i++)
        if (el->kids[i] && el->kids[i]->text && !is_blank_text(el->kids[i]->text))
            return 1;
    return 0;
}

void rv_xml_put_attrs(FILE *fp, const rv_xml_node *el)
{
    for (size_t i = 0; i < el->nattrs; i++) {
        fprintf(fp, " %s='", el->attrs[i].name);
        rv_xml_put_escaped(fp, el->attrs[i].value);
        fputc('\'', fp);
    }
}

void rv_xml_put_node(FILE *fp, const rv_xml_node *el, int indent)
{
    fprintf(fp, "%*s<%s", indent, "", el->name);
    rv_xml_put_attrs(fp, el);
    int nested = has_element_kids(el);
    if (!nested && !has_text(el)) {
        fputs("/>\n", fp);
        return;
    }
    fputs(nested ? ">\n" : ">", fp);
    for (size_t i = 0; i < el->nkids; i++) {
        const rv_xml_node *k = el->kids[i];
        if (k && k->name) {
            rv_xml_put_node(fp, k, indent + 2);
        } else if (k && !nested) {
            rv_xml_put_escaped(fp, k->text);
        } else if (k && !is_blank_text(k->text)) {
            /* Text between elements goes on a line of its own, without
             * the blanks around it (so a second pass writes the same). */
            const char *t = k->text + strspn(k->text, BLANKS);
            size_t n = strlen(t);
            while (strchr(BLANKS, t[n - 1]))
                n--;
            char *trimmed = strndup(t, n);
            fprintf(fp, "%*s", indent + 2, "");
            rv_xml_put_escaped(fp, trimmed ? trimmed : t);
            fputc('\n', fp);
            free(trimmed);
        }
    }
    fprintf(fp, "%*s</%s>\n", nested ? indent : 0, "", el->name);
}
