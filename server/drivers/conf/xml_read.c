/* Reading peer-sent XML with libxml2 (see xml_read.h). */
#include "server/drivers/conf/xml_read.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "common/util.h"

/* How much of a long line an error message shows on each side of the
 * error, so the message stays far below the wire's string limit. */
enum { CONTEXT_MAX = 4096 };

/* The message libvirt gives for a document libxml2 refuses:
 * "(NAME):LINE: what", the line holding the error ("(null)" when empty)
 * and a pointer under the column: a '-' for each character before it
 * (tabs copied, so it lines up), then '^'. */
static void syntax_error(const char *xml, const char *docname, int from, const xmlError *e,
                         rv_err *err)
{
    char what[256] = "unknown error";
    if (e && e->message)
        snprintf(what, sizeof(what), "%s", e->message);
    size_t l = strlen(what);
    while (l > 0 && what[l - 1] == '\n')
        what[--l] = '\0';
    int line = e ? e->line : 0;
    const char *p = xml;
    for (int i = 1; i < line && p; i++)
        if ((p = strchr(p, '\n')))
            p++;
    if (!p)
        p = "";
    size_t len = strcspn(p, "\n"), col = e && e->int2 > 0 ? (size_t)e->int2 - 1 : 0;
    if (col > len)
        col = len;
    if (col > CONTEXT_MAX) {        /* the part of a long line around the error */
        p += col - CONTEXT_MAX;
        len -= col - CONTEXT_MAX;
        col = CONTEXT_MAX;
    }
    if (len > col + CONTEXT_MAX)
        len = col + CONTEXT_MAX;
    char *pointer = malloc(col + 2);
    if (!pointer) {
        rv_err_set(err, from, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    for (size_t i = 0; i < col; i++)
        pointer[i] = p[i] == '\t' ? '\t' : '-';
    pointer[col] = '^';
    pointer[col + 1] = '\0';
    bool bare = docname[0] == '=';
    rv_err_set(err, from, RV_ERR_XML_DETAIL, "%s%s%s:%d: %s\n%.*s\n%s", bare ? "" : "(",
               docname + bare, bare ? "" : ")", line, what, len ? (int)len : 6, len ? p : "(null)",
               pointer);
    free(pointer);
}

/* libvirt reports the first error libxml2 raises (later ones follow
 * from it): keep that one. */
static void keep_first(void *data, xmlError *e)
{
    xmlParserCtxt *ctxt = data;
    xmlError *first = ctxt->_private;
    if (first->code == 0)
        xmlCopyError(e, first);
}

/* What parsing a document needs of nothing but its text: what
 * rv_lx_read finds before and during libxml2's parse, so that it can be
 * done ahead, on another thread (rv_lx_preparse). */
struct rv_lx_preparsed {
    const char *xml;
    size_t len;
    bool doctype;               /* holds "<!DOCTYPE": refused unparsed */
    bool taken;                 /* a read used it */
    bool no_memory;
    xmlDoc *doc;                /* libxml2's tree, when well-formed */
    xmlDoc *lent;               /* that tree, while the read's caller has it */
    bool has_error;
    xmlError error;             /* else the first error libxml2 raised */
};

/* The loop's: the document rv_lx_offer made the next read's. */
static rv_lx_preparsed *offered;

static void parse_text(rv_lx_preparsed *p)
{
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        p->no_memory = true;
        return;
    }
    ctxt->_private = &p->error;
    ctxt->sax->serror = keep_first;
    /* No XML_PARSE_NOENT, DTDLOAD, DTDATTR or HUGE: libxml2's limits stay. */
    xmlDoc *doc = xmlCtxtReadMemory(ctxt, p->xml, (int)p->len, NULL, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc && ctxt->wellFormed) {
        p->doc = doc;
    } else {
        xmlFreeDoc(doc);
        const xmlError *last = p->error.code ? NULL : xmlCtxtGetLastError(ctxt);
        if (last)
            xmlCopyError((xmlError *)last, &p->error);
        p->has_error = p->error.code || last;
    }
    xmlFreeParserCtxt(ctxt);
}

static void scan_text(const char *xml, rv_lx_preparsed *p)
{
    p->xml = xml;
    p->len = strlen(xml);
    p->doctype = strstr(xml, "<!DOCTYPE") != NULL;
}

void rv_lx_init(void)
{
    xmlInitParser();
}

rv_lx_preparsed *rv_lx_preparse(const char *xml)
{
    rv_lx_preparsed *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    scan_text(xml, p);
    /* The length bound is the reader's (unknown here): a document over it
     * is parsed in vain, but off the loop, and refused as before. */
    if (!p->doctype && p->len <= INT_MAX)
        parse_text(p);
    return p;
}

void rv_lx_preparsed_free(rv_lx_preparsed *p)
{
    if (!p)
        return;
    xmlFreeDoc(p->doc);
    xmlResetError(&p->error);
    free(p);
}

void rv_lx_offer(rv_lx_preparsed *p)
{
    rv_lx_preparsed_free(offered);
    offered = p;
}

void rv_lx_free(xmlDoc *doc)
{
    if (doc && offered && offered->lent == doc) {
        offered->doc = doc;     /* freed with the rest, rv_lx_withdraw */
        offered->lent = NULL;
        return;
    }
    xmlFreeDoc(doc);
}

rv_lx_preparsed *rv_lx_withdraw(void)
{
    rv_lx_preparsed *p = offered;
    offered = NULL;
    return p;
}

xmlNode *rv_lx_read(const char *xml, size_t max, const char *root, const char *docname,
                    int from, xmlDoc **docp, rv_err *err)
{
    rv_lx_preparsed local = { 0 }, *p = &local;
    const char *what = root ? root : "device";
    xmlNode *top = NULL;
    *docp = NULL;
    if (offered && !offered->taken && offered->xml == xml) {
        p = offered;
        p->taken = true;
    } else {
        scan_text(xml, p);
    }
    if (p->len > max) {
        rv_err_set(err, from, RV_ERR_XML_ERROR, "XML error: %s XML of %zu bytes is over the limit of %zu",
                   what, p->len, max);
        goto out;
    }
    if (p->doctype) {
        rv_err_set(err, from, RV_ERR_XML_ERROR,
                   "XML error: %s XML may not have a DOCTYPE (DTDs and entities are refused)",
                   what);
        goto out;
    }
    if (p == &local)
        parse_text(p);
    if (p->no_memory) {
        rv_err_set(err, from, RV_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    if (!p->doc) {
        syntax_error(xml, docname, from, p->has_error ? &p->error : NULL, err);
        goto out;
    }
    xmlDoc *doc = p->doc;
    top = xmlDocGetRootElement(doc);
    if (doc->intSubset || doc->extSubset)
        rv_err_set(err, from, RV_ERR_XML_ERROR, "XML error: %s XML may not have a DOCTYPE", what);
    else if (!top || (root && strcmp((const char *)top->name, root) != 0))
        /* From libvirt's XML helpers: error domain XML. */
        rv_err_set(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                   "XML error: expecting root element of '%s', not '%s'", root,
                   top ? (const char *)top->name : "");
    else {
        *docp = doc;
        p->doc = NULL;
        if (p != &local)
            p->lent = doc;
    }
    if (!*docp)
        top = NULL;
out:
    /* A refused document goes here, so no caller's error path can keep it
     * (an offered one with the rest of it, rv_lx_withdraw). */
    if (p == &local) {
        xmlFreeDoc(p->doc);
        xmlResetError(&p->error);
    }
    return top;
}

xmlNode *rv_lx_child(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
            return c;
    return NULL;
}

int rv_lx_is_plain(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !n->ns && strcmp((const char *)n->name, name) == 0;
}

xmlNode *rv_lx_plain_child(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (rv_lx_is_plain(c, name))
            return c;
    return NULL;
}

char *rv_lx_attr(const xmlNode *n, const char *name, int *failed)
{
    xmlChar *v = n ? xmlGetNoNsProp(n, (const xmlChar *)name) : NULL;
    if (!v)
        return NULL;
    char *copy = strdup((const char *)v);
    xmlFree(v);
    if (!copy)
        *failed = 1;
    return copy;
}

char *rv_lx_text(const xmlNode *n, int *failed)
{
    /* An element holding one text node, nearly every one, is copied from
     * that node at once: xmlNodeGetContent builds its copy in a growing
     * buffer, which for a 400 KB description faulted in twice its size
     * on the loop. */
    const xmlNode *only = n && n->type == XML_ELEMENT_NODE ? n->children : NULL;
    if (only && !only->next && only->content &&
        (only->type == XML_TEXT_NODE || only->type == XML_CDATA_SECTION_NODE)) {
        const char *text = (const char *)only->content;
        char *copy = text[0] ? strdup(text) : NULL;
        if (text[0] && !copy)
            *failed = 1;
        return copy;
    }
    xmlChar *raw = n ? xmlNodeGetContent(n) : NULL;
    if (!raw)
        return NULL;
    char *copy = raw[0] ? strdup((const char *)raw) : NULL;
    if (raw[0] && !copy)
        *failed = 1;
    xmlFree(raw);
    return copy;
}

int rv_lx_check_name(const char *name, const char *illegal, rv_err *err)
{
    size_t at = strcspn(name, illegal);
    if (!name[at])
        return 0;
    rv_err_set(err, RV_FROM_XML, RV_ERR_XML_DETAIL, "invalid char in name: %c", name[at]);
    return -1;
}

int rv_lx_read_uuid(const char *text, unsigned char uuid[16], int from, rv_err *err)
{
    if (!text) {
        rv_uuid_generate(uuid);
        return 0;
    }
    const char *s = text;
    while (isspace((unsigned char)*s))
        s++;
    for (int i = 0; i < 16;) {
        if (*s == '-' || *s == ' ') {
            s++;
            continue;
        }
        int hi = rv_hex_digit((unsigned char)s[0]);
        int lo = hi < 0 ? -1 : rv_hex_digit((unsigned char)s[1]);
        if (lo < 0)
            goto bad;
        uuid[i++] = (unsigned char)(hi << 4 | lo);
        s += 2;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return 0;
bad:
    rv_err_set(err, from, RV_ERR_INTERNAL_ERROR, "internal error: malformed uuid element");
    return -1;
}
