/* Domain XML for the test driver: reader, domain definition, writers.
 * See test_xml.h.  Error texts and the positions they point at follow
 * what libvirtd 9.0 reports (libxml2's wording for syntax errors) so that
 * virsh prints the same thing against remvirtd. */
#include "server/drivers/test/test_xml.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "server/drivers/test/test_tune.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ================================================================ strings */

/* An rv_buf used as a growing C string: always NUL-terminated. */
static int buf_add(rv_buf *b, const char *s, size_t n)
{
    if (rv_buf_reserve(b, n + 1) < 0)
        return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static int buf_vprintf(rv_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static int buf_vprintf(rv_buf *b, const char *fmt, va_list ap)
{
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    if (n < 0)
        return -1;
    int ret = buf_add(b, s, (size_t)n);
    free(s);
    return ret;
}

/* The buffer's string, handed over at its exact size (rv_buf starts at
 * 4 KiB, too much to keep per string); NULL only when out of memory. */
static char *buf_take(rv_buf *b)
{
    char *s = b->data ? realloc(b->data, b->len + 1) : strdup("");
    if (!s)
        s = b->data;                /* shrinking failed: keep the bigger block */
    memset(b, 0, sizeof(*b));
    return s;
}

/* ================================================================ reader */

typedef struct xml_reader {
    const char *doc;            /* the whole document, NUL-terminated */
    const char *p;              /* where reading is */
    const char *docname;
    size_t nodes;               /* elements, attributes and text nodes so far */
    rv_buf scratch;             /* the text or attribute value being read */
    rv_err *err;
} xml_reader;

typedef struct open_element {
    rv_xml_node *el;
    const char *start;          /* its '<', for "line N" in messages */
} open_element;

static int line_of(const char *doc, const char *at)
{
    int line = 1;
    for (const char *q = doc; q < at; q++)
        if (*q == '\n')
            line++;
    return line;
}

/* How much of a long line an error message shows on each side of the
 * error, so the message stays far below the wire's string limit. */
enum { CONTEXT_MAX = 4096 };

/* libvirt follows libxml2's message with the line holding the error and a
 * pointer under the column (tabs copied so it lines up); an empty line
 * shows as "(null)".  An error sitting on a line end points past the
 * line before it. */
static int append_context(rv_buf *b, const char *doc, const char *at)
{
    const char *start = at;
    while (start > doc && (*start == '\n' || *start == '\r'))
        start--;
    while (start > doc && at - start < CONTEXT_MAX && *start != '\n' && *start != '\r')
        start--;
    if ((*start == '\n' || *start == '\r') && start < at)
        start++;
    size_t n = strcspn(start, "\n\r");
    if (n > (size_t)(at - start) + CONTEXT_MAX)
        n = (size_t)(at - start) + CONTEXT_MAX;
    if (buf_add(b, n ? start : "(null)", n ? n : 6) < 0 || buf_add(b, "\n", 1) < 0)
        return -1;
    for (const char *q = start; q < at; q++)
        if (buf_add(b, *q == '\t' ? "\t" : "-", 1) < 0)
            return -1;
    return buf_add(b, "^", 1);
}

static int fail_at(xml_reader *r, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(xml_reader *r, const char *at, const char *fmt, ...)
{
    rv_buf b = { 0 };
    va_list ap;
    va_start(ap, fmt);
    int ok = buf_add(&b, r->docname, strlen(r->docname)) == 0 &&
             buf_add(&b, ":", 1) == 0;
    if (ok) {
        char line[16];
        int n = snprintf(line, sizeof(line), "%d: ", line_of(r->doc, at));
        ok = buf_add(&b, line, (size_t)n) == 0 && buf_vprintf(&b, fmt, ap) == 0 &&
             buf_add(&b, "\n", 1) == 0 && append_context(&b, r->doc, at) == 0;
    }
    va_end(ap);
    if (ok)
        rv_err_set(r->err, RV_FROM_DOMAIN, RV_ERR_XML_DETAIL, "%s", b.data);
    else
        rv_err_set(r->err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory");
    rv_buf_free(&b);
    return -1;
}

static int fail_oom(xml_reader *r)
{
    rv_err_set(r->err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_blanks(xml_reader *r)
{
    size_t n = 0;
    while (is_blank(r->p[n]))
        n++;
    r->p += n;
    return n;
}

static int is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           c >= 0x80;
}

static int is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static int is_xml_char(unsigned long c)
{
    return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
           (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/* The character at s: its length, or 0 when the bytes are not UTF-8
 * (cut short, overlong, or a bad lead byte).  The code point may still be
 * outside XML's range. */
static size_t utf8_decode(const unsigned char *s, unsigned int *cp)
{
    unsigned int c = s[0], min;
    size_t len;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xe0) == 0xc0) {
        len = 2, c &= 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, c &= 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, c &= 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min)
        return 0;
    *cp = c;
    return len;
}

static int fail_not_utf8(xml_reader *r, const char *at)
{
    const unsigned char *s = (const unsigned char *)at;
    unsigned int b[4];
    int ended = 0;
    for (int i = 0; i < 4; i++) {
        b[i] = ended ? 0 : s[i];    /* never read past the terminator */
        ended = ended || s[i] == 0;
    }
    return fail_at(r, at, "Input is not proper UTF-8, indicate encoding !\n"
                   "Bytes: 0x%02X 0x%02X 0x%02X 0x%02X", b[0], b[1], b[2], b[3]);
}

/* Check the character at r->p without moving: its length, or -1 with the
 * error set.  ASCII control characters pass; their message depends on
 * where they appear, so the caller reports them. */
static int read_char(xml_reader *r, unsigned int *cp)
{
    size_t len = utf8_decode((const unsigned char *)r->p, cp);
    if (len == 0)
        return fail_not_utf8(r, r->p);
    if (len > 1 && !is_xml_char(*cp))
        return fail_at(r, r->p, "Char 0x%X out of allowed range", *cp);
    return (int)len;
}

/* Length of the XML name at r->p (0 when none starts there). */
static int scan_name(xml_reader *r, size_t *len)
{
    const char *s = r->p;
    size_t n = 0;
    if (is_name_start((unsigned char)s[0])) {
        while (is_name_char((unsigned char)s[n])) {
            unsigned int cp;
            size_t l = utf8_decode((const unsigned char *)s + n, &cp);
            if (l == 0)
                return fail_not_utf8(r, s + n);
            n += l;
        }
    }
    *len = n;
    return 0;
}

static int count_node(xml_reader *r)
{
    if (++r->nodes > RV_XML_MAX_NODES)
        return fail_at(r, r->p, "document too large: more than %d elements, attributes "
                       "and text nodes", RV_XML_MAX_NODES);
    return 0;
}

static int add_kid(xml_reader *r, rv_xml_node *parent, rv_xml_node *kid)
{
    if (parent->nkids == parent->kids_cap) {
        size_t cap = parent->kids_cap ? parent->kids_cap * 2 : 4;
        rv_xml_node **kids = realloc(parent->kids, cap * sizeof(*kids));
        if (!kids)
            return fail_oom(r);
        parent->kids = kids;
        parent->kids_cap = cap;
    }
    parent->kids[parent->nkids++] = kid;
    return 0;
}

static int append_utf8(rv_buf *b, unsigned long cp)
{
    char s[4];
    size_t n;
    if (cp < 0x80) {
        s[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        s[0] = (char)(0xc0 | cp >> 6), s[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    } else if (cp < 0x10000) {
        s[0] = (char)(0xe0 | cp >> 12), s[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        s[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
    } else {
        s[0] = (char)(0xf0 | cp >> 18), s[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), s[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
    }
    return buf_add(b, s, n);
}

static int digit_value(char c, int hex)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (hex && c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (hex && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* r->p is at "&#": append the character it names. */
static int read_char_ref(xml_reader *r, rv_buf *out)
{
    int hex = r->p[1] == 'x';
    unsigned long v = 0;
    r->p += hex ? 2 : 1;
    for (; *r->p != ';'; r->p++) {
        int d = digit_value(*r->p, hex);
        if (d < 0)
            return fail_at(r, r->p, hex ? "CharRef: invalid hexadecimal value"
                                        : "CharRef: invalid decimal value");
        v = v * (hex ? 16 : 10) + (unsigned long)d;
        if (v > 0x110000)
            v = 0x110000;       /* saturate: anything past is out of bounds */
    }
    r->p++;
    if (v >= 0x110000)
        return fail_at(r, r->p, "xmlParseCharRef: character reference out of bounds");
    if (!is_xml_char(v))
        return fail_at(r, r->p, "xmlParseCharRef: invalid xmlChar value %lu", v);
    return append_utf8(out, v) < 0 ? fail_oom(r) : 0;
}

/* r->p is at '&': append what the reference stands for.  Only XML's five
 * predefined entities exist here (no DTD). */
static int read_reference(xml_reader *r, rv_buf *out)
{
    static const struct { const char *name; char c; } predefined[] = {
        { "lt", '<' }, { "gt", '>' }, { "amp", '&' }, { "quot", '"' }, { "apos", '\'' },
    };
    size_t n;
    r->p++;
    if (*r->p == '#')
        return read_char_ref(r, out);
    if (scan_name(r, &n) < 0)
        return -1;
    if (n == 0)
        return fail_at(r, r->p, "xmlParseEntityRef: no name");
    const char *name = r->p;
    r->p += n;
    if (*r->p != ';')
        return fail_at(r, r->p, "EntityRef: expecting ';'");
    r->p++;
    for (size_t i = 0; i < ARRAY_LEN(predefined); i++)
        if (strlen(predefined[i].name) == n && memcmp(predefined[i].name, name, n) == 0)
            return buf_add(out, &predefined[i].c, 1) < 0 ? fail_oom(r) : 0;
    return fail_at(r, r->p, "Entity '%.*s' not defined", (int)n, name);
}

/* Append the character at r->p to out and step over it; a CR or CR LF
 * becomes newline, XML's line-end rule.  in_attr picks the message for a
 * character XML forbids. */
static int take_char(xml_reader *r, rv_buf *out, int in_attr)
{
    const char *s = r->p;
    unsigned int cp;
    if (*s == '\r') {
        r->p += s[1] == '\n' ? 2 : 1;
        return buf_add(out, "\n", 1) < 0 ? fail_oom(r) : 0;
    }
    int len = read_char(r, &cp);
    if (len < 0)
        return -1;
    if (!is_xml_char(cp))
        return in_attr ? fail_at(r, s, "invalid character in attribute value")
                       : fail_at(r, s, "PCDATA invalid Char value %u", cp);
    r->p += len;
    return buf_add(out, s, (size_t)len) < 0 ? fail_oom(r) : 0;
}

/* Text and attribute values are gathered in one reused buffer and copied
 * out at their size. */
static rv_buf *scratch_reset(xml_reader *r)
{
    r->scratch.start = r->scratch.len = 0;
    return &r->scratch;
}

static char *scratch_copy(xml_reader *r)
{
    return strndup(r->scratch.data ? r->scratch.data : "", r->scratch.len);
}

/* Make a text node of the scratch buffer unless it is empty. */
static int add_text(xml_reader *r, rv_xml_node *parent)
{
    if (r->scratch.len == 0)
        return 0;
    if (count_node(r) < 0)
        return -1;
    rv_xml_node *node = calloc(1, sizeof(*node));
    if (node)
        node->text = scratch_copy(r);
    if (!node || !node->text) {
        free(node);
        return fail_oom(r);
    }
    if (add_kid(r, parent, node) < 0) {
        rv_xml_free(node);
        return -1;
    }
    return 0;
}

/* Character data up to the next markup, as one text node. */
static int read_text(xml_reader *r, rv_xml_node *parent)
{
    rv_buf *text = scratch_reset(r);
    while (*r->p && *r->p != '<') {
        int ret;
        if (*r->p == '&')
            ret = read_reference(r, text);
        else if (strncmp(r->p, "]]>", 3) == 0)
            ret = fail_at(r, r->p, "Sequence ']]>' not allowed in content");
        else
            ret = take_char(r, text, 0);
        if (ret < 0)
            return -1;
    }
    return add_text(r, parent);
}

/* libxml2 quotes the section read so far, less its last two bytes. */
static int fail_cdata(xml_reader *r, const char *content, const char *stop)
{
    size_t n = (size_t)(stop - content);
    if (n < 2)
        return fail_at(r, stop, "Unregistered error message");
    n = n - 2 > 50 ? 50 : n - 2;
    return fail_at(r, stop, "CData section not finished\n%.*s", (int)n, content);
}

/* r->p is at "<![CDATA[": its content becomes a text node. */
static int read_cdata(xml_reader *r, rv_xml_node *parent)
{
    rv_buf *text = scratch_reset(r);
    const char *content = r->p + 9;
    r->p = content;
    while (strncmp(r->p, "]]>", 3) != 0) {
        unsigned int cp;
        int bad = *r->p == '\0';
        if (!bad && *r->p != '\r') {
            int len = read_char(r, &cp);
            if (len < 0)
                return -1;
            bad = !is_xml_char(cp);
        }
        if (bad)
            return fail_cdata(r, content, r->p);
        if (take_char(r, text, 0) < 0)
            return -1;
    }
    r->p += 3;
    return add_text(r, parent);
}

/* r->p is at "<!--". */
static int skip_comment(xml_reader *r)
{
    const char *open = r->p;
    r->p += 4;
    for (;;) {
        const char *s = r->p;
        unsigned int cp;
        if (*s == '\0')
            return fail_at(r, s, "Comment not terminated");
        if (s[0] == '-' && s[1] == '-') {
            if (s[2] != '>')
                return fail_at(r, s, "Double hyphen within comment: %.*s", (int)(s - open), open);
            r->p += 3;
            return 0;
        }
        int len = read_char(r, &cp);
        if (len < 0)
            return -1;
        if (!is_xml_char(cp))
            return fail_at(r, s, "xmlParseComment: invalid xmlChar value %u", cp);
        r->p += len;
    }
}

/* r->p is at "<?" (not the XML declaration): skip the instruction. */
static int skip_pi(xml_reader *r)
{
    size_t n;
    r->p += 2;
    if (scan_name(r, &n) < 0)
        return -1;
    if (n == 0)
        return fail_at(r, r->p, "xmlParsePI : no target name");
    const char *target = r->p;
    r->p += n;
    if (n == 3 && memcmp(target, "xml", 3) == 0)
        return fail_at(r, r->p, "XML declaration allowed only at the start of the document");
    if (strncmp(r->p, "?>", 2) != 0 && !is_blank(*r->p))
        return fail_at(r, r->p, "ParsePI: PI %.*s space expected", (int)n, target);
    while (strncmp(r->p, "?>", 2) != 0) {
        unsigned int cp = 0;
        int len = *r->p ? read_char(r, &cp) : 0;
        if (len < 0)
            return -1;
        if (len == 0 || !is_xml_char(cp))
            return fail_at(r, r->p, "ParsePI: PI %.*s never end ...", (int)n, target);
        r->p += len;
    }
    r->p += 2;
    return 0;
}

/* Whitespace, comments and processing instructions around the root. */
static int skip_misc(xml_reader *r)
{
    for (;;) {
        skip_blanks(r);
        int ret;
        if (strncmp(r->p, "<!--", 4) == 0)
            ret = skip_comment(r);
        else if (strncmp(r->p, "<?", 2) == 0)
            ret = skip_pi(r);
        else
            return 0;
        if (ret < 0)
            return -1;
    }
}

/* One pseudo-attribute of the XML declaration, if `name` comes next:
 * *value gets the text between the quotes (not NUL-terminated). */
static int read_decl_attr(xml_reader *r, const char *name, const char **value, size_t *len)
{
    const char *save = r->p;
    size_t n = strlen(name);
    *value = NULL;
    skip_blanks(r);
    if (strncmp(r->p, name, n) != 0) {
        r->p = save;
        return 0;
    }
    r->p += n;
    skip_blanks(r);
    if (*r->p != '=')
        return fail_at(r, r->p, "expected '='");
    r->p++;
    skip_blanks(r);
    char quote = *r->p;
    if (quote != '\'' && quote != '"')
        return fail_at(r, r->p, "String not started expecting ' or \"");
    const char *end = strchr(r->p + 1, quote);
    if (!end)
        return fail_at(r, r->p + strlen(r->p), "String not closed expecting \" or '");
    *value = r->p + 1;
    *len = (size_t)(end - *value);
    r->p = end + 1;
    return 0;
}

/* Input always arrives as UTF-8 (libvirt tells libxml2 so, whatever the
 * declaration says); an encoding the declaration names must still exist. */
static int known_encoding(const char *name, size_t n)
{
    static const char *const names[] = {
        "UTF-8", "UTF8", "US-ASCII", "ASCII", "ISO-8859-1", "ISO-LATIN-1", "LATIN1",
    };
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strlen(names[i]) == n && strncasecmp(names[i], name, n) == 0)
            return 1;
    return 0;
}

static int read_xml_decl(xml_reader *r)
{
    const char *v;
    size_t n;
    if (strncmp(r->p, "<?xml", 5) != 0 || !is_blank(r->p[5]))
        return 0;
    r->p += 5;
    if (read_decl_attr(r, "version", &v, &n) < 0)
        return -1;
    if (!v) {
        skip_blanks(r);
        return fail_at(r, r->p, "Malformed declaration expecting version");
    }
    if (n < 2 || strncmp(v, "1.", 2) != 0)
        return fail_at(r, r->p, "Unsupported version '%.*s'", (int)n, v);
    if (!is_blank(*r->p) && strncmp(r->p, "?>", 2) != 0)
        return fail_at(r, r->p, "Blank needed here");
    if (read_decl_attr(r, "encoding", &v, &n) < 0)
        return -1;
    if (v && !known_encoding(v, n))
        return fail_at(r, r->p, "Unsupported encoding %.*s", (int)n, v);
    if (read_decl_attr(r, "standalone", &v, &n) < 0)
        return -1;
    if (v && !(n == 3 && memcmp(v, "yes", 3) == 0) && !(n == 2 && memcmp(v, "no", 2) == 0))
        return fail_at(r, v, "standalone accepts only 'yes' or 'no'");
    skip_blanks(r);
    if (strncmp(r->p, "?>", 2) != 0)
        return fail_at(r, r->p, "parsing XML declaration: '?>' expected");
    r->p += 2;
    return 0;
}

static int attr_exists(const rv_xml_node *el, const char *name, size_t n)
{
    for (size_t i = 0; i < el->nattrs; i++)
        if (strlen(el->attrs[i].name) == n && memcmp(el->attrs[i].name, name, n) == 0)
            return 1;
    return 0;
}

/* The quoted value at r->p, references resolved and blanks normalised to
 * spaces (XML's attribute-value rule). */
static int read_attr_value(xml_reader *r, rv_buf *value)
{
    char quote = *r->p;
    if (quote != '\'' && quote != '"')
        return fail_at(r, r->p, "AttValue: \" or ' expected");
    r->p++;
    while (*r->p != quote) {
        const char *s = r->p;
        int ret;
        if (*s == '\0')
            ret = fail_at(r, s, "AttValue: ' expected");
        else if (*s == '<')
            ret = fail_at(r, s, "Unescaped '<' not allowed in attributes values");
        else if (*s == '&')
            ret = read_reference(r, value);
        else if (*s == '\t' || *s == '\n' || *s == '\r') {
            r->p += (s[0] == '\r' && s[1] == '\n') ? 2 : 1;
            ret = buf_add(value, " ", 1) < 0 ? fail_oom(r) : 0;
        } else
            ret = take_char(r, value, 1);
        if (ret < 0)
            return -1;
    }
    r->p++;
    return 0;
}

/* The attribute name, with the scratch buffer as its value. */
static int add_attr(xml_reader *r, rv_xml_node *el, const char *name, size_t n)
{
    rv_xml_attr *attrs = realloc(el->attrs, (el->nattrs + 1) * sizeof(*attrs));
    char *copy = strndup(name, n), *value = scratch_copy(r);
    if (attrs)
        el->attrs = attrs;
    if (!attrs || !copy || !value) {
        free(copy);
        free(value);
        return fail_oom(r);
    }
    el->attrs[el->nattrs].name = copy;
    el->attrs[el->nattrs].value = value;
    el->nattrs++;
    return 0;
}

static int read_attribute(xml_reader *r, rv_xml_node *el)
{
    size_t n;
    if (scan_name(r, &n) < 0)
        return -1;
    if (n == 0)
        return fail_at(r, r->p, "error parsing attribute name");
    const char *name = r->p;
    if (el->nattrs >= RV_XML_MAX_ATTRS)
        return fail_at(r, name, "too many attributes on element %s: more than %d", el->name,
                       RV_XML_MAX_ATTRS);
    r->p += n;
    skip_blanks(r);
    if (*r->p != '=')
        return fail_at(r, r->p, "Specification mandates value for attribute %.*s", (int)n, name);
    r->p++;
    skip_blanks(r);
    if (count_node(r) < 0 || read_attr_value(r, scratch_reset(r)) < 0)
        return -1;
    if (attr_exists(el, name, n))
        return fail_at(r, r->p, "Attribute %.*s redefined", (int)n, name);
    return add_attr(r, el, name, n);
}

static int read_attributes(xml_reader *r, rv_xml_node *el, const char *lt, int *empty)
{
    skip_blanks(r);
    for (;;) {
        if (*r->p == '>' || strncmp(r->p, "/>", 2) == 0) {
            *empty = *r->p == '/';
            r->p += *empty ? 2 : 1;
            return 0;
        }
        if (*r->p == '\0')
            return fail_at(r, r->p, "Couldn't find end of Start Tag %s line %d", el->name,
                           line_of(r->doc, lt));
        if (read_attribute(r, el) < 0)
            return -1;
        if (*r->p != '>' && strncmp(r->p, "/>", 2) != 0 && skip_blanks(r) == 0)
            return fail_at(r, r->p, "attributes construct error");
    }
}

/* r->p is at '<': a new element from its start tag; *empty for <x/>. */
static rv_xml_node *read_start_tag(xml_reader *r, int *empty)
{
    const char *lt = r->p;
    size_t n;
    r->p++;
    if (scan_name(r, &n) < 0)
        return NULL;
    if (n == 0) {
        fail_at(r, r->p, "StartTag: invalid element name");
        return NULL;
    }
    if (count_node(r) < 0)
        return NULL;
    rv_xml_node *el = calloc(1, sizeof(*el));
    if (el)
        el->name = strndup(r->p, n);
    if (!el || !el->name) {
        fail_oom(r);
        rv_xml_free(el);
        return NULL;
    }
    r->p += n;
    if (read_attributes(r, el, lt, empty) < 0) {
        rv_xml_free(el);
        return NULL;
    }
    return el;
}

/* r->p is at "</": it must close the innermost open element. */
static int read_end_tag(xml_reader *r, open_element *stack, size_t *depth)
{
    const open_element *top = &stack[*depth - 1];
    size_t n;
    r->p += 2;
    if (scan_name(r, &n) < 0)
        return -1;
    const char *name = r->p;
    r->p += n;
    skip_blanks(r);
    if (*r->p != '>')
        return fail_at(r, r->p, "expected '>'");
    r->p++;
    if (n != strlen(top->el->name) || memcmp(name, top->el->name, n) != 0)
        return fail_at(r, r->p, "Opening and ending tag mismatch: %s line %d and %.*s",
                       top->el->name, line_of(r->doc, top->start), n ? (int)n : 10,
                       n ? name : "unparsable");
    (*depth)--;
    return 0;
}

static int read_child_element(xml_reader *r, open_element *stack, size_t *depth)
{
    const char *start = r->p;
    int empty;
    if (*depth >= RV_XML_MAX_DEPTH)
        return fail_at(r, start, "Excessive depth in document: 256 use XML_PARSE_HUGE option");
    rv_xml_node *el = read_start_tag(r, &empty);
    if (!el)
        return -1;
    if (add_kid(r, stack[*depth - 1].el, el) < 0) {
        rv_xml_free(el);
        return -1;
    }
    if (!empty)
        stack[(*depth)++] = (open_element){ el, start };
    return 0;
}

/* One piece of the innermost open element's content. */
static int read_content(xml_reader *r, open_element *stack, size_t *depth)
{
    const open_element *top = &stack[*depth - 1];
    const char *s = r->p;
    if (*s == '\0')
        return fail_at(r, s, "Premature end of data in tag %s line %d", top->el->name,
                       line_of(r->doc, top->start));
    if (*s != '<')
        return read_text(r, top->el);
    if (s[1] == '/')
        return read_end_tag(r, stack, depth);
    if (strncmp(s, "<!--", 4) == 0)
        return skip_comment(r);
    if (strncmp(s, "<![CDATA[", 9) == 0)
        return read_cdata(r, top->el);
    if (s[1] == '?')
        return skip_pi(r);
    return read_child_element(r, stack, depth);
}

/* The root element and everything in it, without recursion: the open
 * elements live on a bounded stack. */
static rv_xml_node *read_root(xml_reader *r)
{
    open_element stack[RV_XML_MAX_DEPTH];
    size_t depth = 0;
    const char *start = r->p;
    int empty;
    rv_xml_node *root = read_start_tag(r, &empty);
    if (!root)
        return NULL;
    if (!empty)
        stack[depth++] = (open_element){ root, start };
    while (depth > 0) {
        if (read_content(r, stack, &depth) < 0) {
            rv_xml_free(root);
            return NULL;
        }
    }
    return root;
}

static rv_xml_node *read_document(xml_reader *r)
{
    if (*r->doc == '\0') {
        fail_at(r, r->doc, "Document is empty");
        return NULL;
    }
    if (read_xml_decl(r) < 0 || skip_misc(r) < 0)
        return NULL;
    if (strncmp(r->p, "<!DOCTYPE", 9) == 0) {
        /* A DTD could define entities; refusing it keeps expansion bounded. */
        fail_at(r, r->p, "DOCTYPE is not supported");
        return NULL;
    }
    if (*r->p != '<') {
        fail_at(r, r->p, "Start tag expected, '<' not found");
        return NULL;
    }
    rv_xml_node *root = read_root(r);
    if (!root)
        return NULL;
    if (skip_misc(r) < 0 ||
        (*r->p && fail_at(r, r->p, "Extra content at the end of the document") < 0)) {
        rv_xml_free(root);
        return NULL;
    }
    return root;
}

rv_xml_node *rv_xml_parse(const char *doc, const char *docname, rv_err *err)
{
    xml_reader r = { .doc = doc, .p = doc, .docname = docname, .err = err };
    rv_xml_node *root = read_document(&r);
    rv_buf_free(&r.scratch);
    return root;
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

static int append_string(rv_buf *b, const rv_xml_node *node)
{
    if (node->text)
        return buf_add(b, node->text, strlen(node->text));
    for (size_t i = 0; i < node->nkids; i++)
        if (node->kids[i] && append_string(b, node->kids[i]) < 0)
            return -1;
    return 0;
}

char *rv_xml_string(const rv_xml_node *el)
{
    rv_buf b = { 0 };
    if (append_string(&b, el) < 0) {
        rv_buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* ================================================================ domain */

static const char *const virt_types[] = {
    "none", "qemu", "kqemu", "kvm", "xen", "lxc", "uml", "openvz", "test", "vmware",
    "hyperv", "vbox", "phyp", "parallels", "bhyve", "vz", "hvf",
};
static const char *const os_types[] = { "hvm", "xen", "linux", "exe", "uml", "xenpvh" };
static const char *const arches[] = {
    "alpha", "armv6l", "armv7l", "armv7b", "aarch64", "cris", "i686", "ia64", "lm32",
    "m68k", "microblaze", "microblazeel", "mips", "mipsel", "mips64", "mips64el",
    "openrisc", "parisc", "parisc64", "ppc", "ppcle", "ppc64", "ppc64le", "ppcemb",
    "riscv32", "riscv64", "s390", "s390x", "sh4", "sh4eb", "sparc", "sparc64",
    "unicore32", "x86_64", "xtensa", "xtensaeb",
};
static const char *const boot_devs[] = { "fd", "hd", "cdrom", "network" };
static const char *const actions[] = {      /* indexed by RV_TEST_ACTION_* */
    "destroy", "restart", "rename-restart", "preserve", "coredump-destroy",
    "coredump-restart",
};

static int find_name(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}
#define FIND(names, s) find_name((names), ARRAY_LEN(names), (s))

static int def_fail(rv_err *err, int domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int def_fail(rv_err *err, int domain, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, domain, code, fmt, ap);
    va_end(ap);
    return -1;
}

static int def_oom(rv_err *err)
{
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory");
}

/* The text of el, or NULL when el is absent or its text empty: libvirt
 * treats an empty element like a missing one. */
static int text_of(const rv_xml_node *el, char **out, rv_err *err)
{
    *out = NULL;
    if (!el)
        return 0;
    char *s = rv_xml_string(el);
    if (!s)
        return def_oom(err);
    if (*s)
        *out = s;
    else
        free(s);
    return 0;
}

static int child_text(const rv_xml_node *root, const char *name, char **out, rv_err *err)
{
    return text_of(rv_xml_child(root, name), out, err);
}

/* An attribute, copied; NULL when absent or empty. */
static int attr_copy(const rv_xml_node *el, const char *name, char **out, rv_err *err)
{
    const char *v = el ? rv_xml_attr_get(el, name) : NULL;
    *out = NULL;
    if (v && *v && !(*out = strdup(v)))
        return def_oom(err);
    return 0;
}

/* Numbers as libvirt reads them: strtoull in base 10, without a minus
 * sign or anything after the digits. */
static int parse_ull(const char *s, unsigned long long *out)
{
    unsigned long long v = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned int d = (unsigned int)(*s - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (*s)
        return -1;
    *out = v;
    return 0;
}

static int parse_uint(const char *s, unsigned int *out)
{
    unsigned long long v;
    if (!s || parse_ull(s, &v) < 0 || v > UINT_MAX)
        return -1;
    *out = (unsigned int)v;
    return 0;
}

static int hex_digit(char c)
{
    return digit_value(c, 1);
}

/* libvirt's reading of <uuid>: blanks around 32 hex digits, with '-' or
 * ' ' allowed between the byte pairs. */
static int parse_uuid_text(const char *s, unsigned char uuid[16])
{
    while (isspace((unsigned char)*s))
        s++;
    for (int i = 0; i < 16;) {
        if (*s == '-' || *s == ' ') {
            s++;
            continue;
        }
        int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);
        if (lo < 0)
            return -1;
        uuid[i++] = (unsigned char)(hi << 4 | lo);
        s += 2;
    }
    while (isspace((unsigned char)*s))
        s++;
    return *s ? -1 : 0;
}

/* Bytes per unit: b/byte/bytes, then k m g t p e with an optional "iB"
 * (powers of 1024) or "B" (powers of 1000); no unit means KiB. */
static int unit_scale(const char *unit, unsigned long long *scale)
{
    static const char powers[] = "kmgtpe";
    if (!unit || !*unit) {
        *scale = 1024;
        return 0;
    }
    if (!strcasecmp(unit, "b") || !strcasecmp(unit, "byte") || !strcasecmp(unit, "bytes")) {
        *scale = 1;
        return 0;
    }
    const char *p = strchr(powers, tolower((unsigned char)unit[0]));
    unsigned long long base;
    if (!p || !*p)
        return -1;
    if (unit[1] == '\0' || !strcasecmp(unit + 1, "iB"))
        base = 1024;
    else if (!strcasecmp(unit + 1, "B"))
        base = 1000;
    else
        return -1;
    *scale = 1;
    for (const char *q = powers; q <= p; q++)
        *scale *= base;
    return 0;
}

/* <memory>/<currentMemory>: a number scaled by its unit, in KiB rounded
 * up; 0 when absent or empty. */
static int parse_mem_kib(const rv_xml_node *root, const char *elname,
                         unsigned long long *kib, rv_err *err)
{
    const rv_xml_node *el = rv_xml_child(root, elname);
    const char *unit = el ? rv_xml_attr_get(el, "unit") : NULL;
    unsigned long long value, scale;
    char *text;
    int ret = -1;
    *kib = 0;
    if (text_of(el, &text, err) < 0)
        return -1;
    if (!text)
        ret = 0;
    else if (parse_ull(text, &value) < 0)
        def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                 "XML error: Invalid value '%s' for element or attribute './%s[1]'", text, elname);
    else if (unit_scale(unit, &scale) < 0)
        def_fail(err, RV_FROM_NONE, RV_ERR_INVALID_ARG,
                 "invalid argument: unknown suffix '%s'", unit);
    else if (value > LLONG_MAX / scale)
        def_fail(err, RV_FROM_NONE, RV_ERR_OVERFLOW, "numerical overflow: value too large: %s%s",
                 text, unit ? unit : "");
    else {
        *kib = (value * scale + 1023) / 1024;
        ret = 0;
    }
    free(text);
    return ret;
}

/* ---- tuning: <memtune>, <blkiotune>, <cputune> pins, <numatune> ---- */

static int parse_number(const rv_xml_node *el, const char *what, unsigned long long *v,
                        rv_err *err)
{
    char *text;
    if (text_of(el, &text, err) < 0)
        return -1;
    int bad = !text || parse_ull(text, v) < 0;
    if (bad)
        def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR, "XML error: Invalid value '%s' for %s",
                 text ? text : "", what);
    free(text);
    return bad ? -1 : 0;
}

static int parse_blkiotune(const rv_xml_node *bt, rv_test_def *def, rv_err *err)
{
    static const char *const kinds[] = { "weight", "read_iops_sec", "write_iops_sec",
                                         "read_bytes_sec", "write_bytes_sec" };
    unsigned long long v;
    const rv_xml_node *w = rv_xml_child(bt, "weight");
    if (w && (parse_number(w, "blkiotune weight", &v, err) < 0 || v > UINT_MAX ||
              test_tune_set_blkio_weight(def, (unsigned int)v, err) < 0))
        return rv_err_is_set(err) ? -1 : def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                                                  "XML error: blkiotune weight out of range");
    for (size_t i = 0; i < bt->nkids; i++) {
        const rv_xml_node *dev = bt->kids[i];
        if (!dev || !dev->name || strcmp(dev->name, "device") != 0)
            continue;
        char *path;
        if (text_of(rv_xml_child(dev, "path"), &path, err) < 0)
            return -1;
        if (!path)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: missing blkio device path");
        int rc = 0;
        for (int k = 0; rc == 0 && k < 5; k++) {
            const rv_xml_node *el = rv_xml_child(dev, kinds[k]);
            if (el && (parse_number(el, kinds[k], &v, err) < 0 ||
                       test_tune_set_blkio_device(def, path, k, v, err) < 0))
                rc = -1;
        }
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int parse_tuning(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    static const char *const limits[] = { "hard_limit", "soft_limit", "swap_hard_limit" };
    static const char *const modes[] = { "strict", "preferred", "interleave", "restrictive" };
    const rv_xml_node *mt = rv_xml_child(root, "memtune");
    for (int k = 0; mt && k < 3; k++) {
        unsigned long long kib;
        if (rv_xml_child(mt, limits[k]) &&
            (parse_mem_kib(mt, limits[k], &kib, err) < 0 ||
             test_tune_set_mem(def, k, kib, err) < 0))
            return -1;
    }
    const rv_xml_node *bt = rv_xml_child(root, "blkiotune");
    if (bt && parse_blkiotune(bt, def, err) < 0)
        return -1;
    const rv_xml_node *ct = rv_xml_child(root, "cputune");
    for (size_t i = 0; ct && i < ct->nkids; i++) {
        const rv_xml_node *el = ct->kids[i];
        int emulator = el && el->name && strcmp(el->name, "emulatorpin") == 0;
        if (!el || !el->name || (!emulator && strcmp(el->name, "vcpupin") != 0))
            continue;
        const char *vcpu = rv_xml_attr_get(el, "vcpu"), *cpuset = rv_xml_attr_get(el, "cpuset");
        unsigned long long v = 0;
        if (!cpuset || (!emulator && (!vcpu || parse_ull(vcpu, &v) < 0 || v > INT_MAX)))
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: <%s> needs %s", el->name,
                            emulator ? "a cpuset" : "a vcpu and a cpuset");
        if (test_tune_set_pin(def, emulator ? -1 : (int)v, cpuset, err) < 0)
            return -1;
    }
    const rv_xml_node *nt = rv_xml_child(root, "numatune");
    const rv_xml_node *mem = nt ? rv_xml_child(nt, "memory") : NULL;
    if (mem) {
        const char *mode = rv_xml_attr_get(mem, "mode");
        int m = mode ? -1 : 0;
        for (int k = 0; mode && k < 4; k++)
            if (strcmp(mode, modes[k]) == 0)
                m = k;
        if (m < 0)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: Unsupported NUMA memory tuning mode '%s'", mode);
        if (test_tune_set_numa(def, m, rv_xml_attr_get(mem, "nodeset"), err) < 0)
            return -1;
    }
    return 0;
}

/* ---- the steps, in libvirt's order ---- */

static int check_root(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    (void)def;
    if (strcmp(root->name, "domain") != 0)
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                        "XML error: expecting root element of 'domain', not '%s'", root->name);
    return 0;
}

static int parse_name(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (child_text(root, "name", &def->name, err) < 0)
        return -1;
    if (!def->name)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_NO_NAME, "missing name information");
    return 0;
}

static int parse_uuid(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    char *text;
    if (child_text(root, "uuid", &text, err) < 0)
        return -1;
    int bad = text && parse_uuid_text(text, def->uuid) < 0;
    if (!text)
        rv_uuid_generate(def->uuid);
    free(text);
    if (bad)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                        "internal error: malformed uuid element");
    return 0;
}

static int parse_virt_type(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (attr_copy(root, "type", &def->virt_type, err) < 0)
        return -1;
    if (!def->virt_type)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                        "internal error: missing domain type attribute");
    if (FIND(virt_types, def->virt_type) < 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: invalid domain type %s", def->virt_type);
    return 0;
}

static int parse_os_type(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    const rv_xml_node *os = rv_xml_child(root, "os");
    const rv_xml_node *type = os ? rv_xml_child(os, "type") : NULL;
    if (text_of(type, &def->os_type, err) < 0)
        return -1;
    if (!def->os_type)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: an os <type> must be specified");
    if (FIND(os_types, def->os_type) < 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: unknown OS type '%s'", def->os_type);
    if (strcmp(def->os_type, "exe") == 0)   /* needs <init>, which is not modelled */
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: OS type 'exe' is not supported by "
                        "remvirt's test driver");
    if (attr_copy(type, "arch", &def->arch, err) < 0 ||
        attr_copy(type, "machine", &def->machine, err) < 0)
        return -1;
    if (def->arch && FIND(arches, def->arch) < 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: Unknown architecture %s", def->arch);
    if (!def->arch && !(def->arch = strdup("i686")))    /* the test host's guest arch */
        return def_oom(err);
    return 0;
}

static int parse_title(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (child_text(root, "title", &def->title, err) < 0 ||
        child_text(root, "description", &def->description, err) < 0)
        return -1;
    if (def->title && strchr(def->title, '\n'))
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: Domain title can't contain newlines");
    return 0;
}

static int parse_memory(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (parse_mem_kib(root, "memory", &def->max_mem_kib, err) < 0 ||
        parse_mem_kib(root, "currentMemory", &def->cur_mem_kib, err) < 0)
        return -1;
    return 0;
}

static int parse_vcpu_attrs(const rv_xml_node *vcpu, rv_test_def *def, rv_err *err)
{
    const char *current = rv_xml_attr_get(vcpu, "current");
    const char *placement = rv_xml_attr_get(vcpu, "placement");
    if (current && parse_uint(current, &def->vcpus_current) < 0)
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                        "XML error: Invalid value for attribute 'current' in element 'vcpu': "
                        "'%s'. Expected non-negative integer value", current);
    if (placement && strcmp(placement, "static") != 0 && strcmp(placement, "auto") != 0)
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                        "XML error: Invalid value for attribute 'placement' in element "
                        "'vcpu': '%s'.", placement);
    def->placement_auto = placement && strcmp(placement, "auto") == 0;
    return 0;
}

static int parse_vcpu(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    const rv_xml_node *vcpu = rv_xml_child(root, "vcpu");
    def->vcpus = 1;
    if (vcpu) {
        char *text = rv_xml_string(vcpu);
        int bad = text && parse_uint(text, &def->vcpus) < 0;
        free(text);
        if (!text)
            return def_oom(err);
        if (bad)
            return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                            "XML error: maximum vcpus count must be an integer");
    }
    if (def->vcpus > RV_TEST_MAX_VCPUS)     /* GetInfo carries the count in 16 bits */
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: %u vCPUs is over remvirt's limit of %d",
                        def->vcpus, RV_TEST_MAX_VCPUS);
    def->vcpus_current = def->vcpus;
    if (vcpu && parse_vcpu_attrs(vcpu, def, err) < 0)
        return -1;
    if (def->vcpus == 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                        "internal error: CPU IDs in <numa> exceed the <vcpu> count");
    if (def->vcpus_current > def->vcpus)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: maximum vCPU count must not be less "
                        "than current vCPU count");
    return 0;
}

static int parse_action(rv_xml_node *root, const char *elname, int dflt, int *out, rv_err *err)
{
    char *text;
    if (child_text(root, elname, &text, err) < 0)
        return -1;
    *out = text ? FIND(actions, text) : dflt;
    if (*out < 0)
        def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                 "unsupported configuration: unknown %s action: %s", elname, text);
    free(text);
    return *out < 0 ? -1 : 0;
}

static int parse_lifecycle(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (parse_action(root, "on_poweroff", RV_TEST_ACTION_DESTROY, &def->on_poweroff, err) < 0 ||
        parse_action(root, "on_reboot", RV_TEST_ACTION_RESTART, &def->on_reboot, err) < 0 ||
        parse_action(root, "on_crash", RV_TEST_ACTION_DESTROY, &def->on_crash, err) < 0)
        return -1;
    return 0;
}

/* Boot order matters only to hvm guests; libvirt reads the first four. */
static int parse_boot(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    const rv_xml_node *os = rv_xml_child(root, "os");
    if (strcmp(def->os_type, "hvm") != 0)
        return 0;
    for (size_t i = 0; i < os->nkids && def->nboot < RV_TEST_MAX_BOOT; i++) {
        const rv_xml_node *k = os->kids[i];
        if (!k->name || strcmp(k->name, "boot") != 0)
            continue;
        const char *dev = rv_xml_attr_get(k, "dev");
        if (!dev)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: Missing required attribute 'dev' in element 'boot'");
        int idx = FIND(boot_devs, dev);
        if (idx < 0)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: Invalid value for attribute 'dev' in element 'boot': "
                            "'%s'.", dev);
        def->boot[def->nboot++] = idx;
    }
    if (def->nboot == 0)
        def->boot[def->nboot++] = 1;    /* hd */
    return 0;
}

static int parse_clock(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    static const char *const unmodelled[] = { "variable", "timezone", "absolute" };
    const rv_xml_node *clock = rv_xml_child(root, "clock");
    const char *offset = clock ? rv_xml_attr_get(clock, "offset") : NULL;
    if (!offset || !*offset || strcmp(offset, "utc") == 0)
        return 0;
    if (strcmp(offset, "localtime") == 0) {
        def->clock_localtime = 1;
        return 0;
    }
    if (FIND(unmodelled, offset) >= 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: clock offset '%s' is not supported by "
                        "remvirt's test driver", offset);
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: unknown clock offset '%s'", offset);
}

static int check_action(const char *event, int action, rv_err *err)
{
    if (action != RV_TEST_ACTION_COREDUMP_DESTROY && action != RV_TEST_ACTION_COREDUMP_RESTART)
        return 0;
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: Lifecycle event '%s' doesn't support '%s' "
                    "action", event, actions[action]);
}

/* libvirt's checks once everything is read. */
static int check_def(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    (void)root;
    if (def->max_mem_kib == 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: Memory size must be specified via <memory> or in the "
                        "<numa> configuration");
    if (def->cur_mem_kib == 0 || def->cur_mem_kib > def->max_mem_kib)
        def->cur_mem_kib = def->max_mem_kib;
    if (check_action("poweroff", def->on_poweroff, err) < 0 ||
        check_action("reboot", def->on_reboot, err) < 0)
        return -1;
    if (strchr(def->name, '/'))
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: name %s cannot contain '/'", def->name);
    if (strchr(def->name, '\n'))
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_DETAIL, "invalid char in name: \n");
    return 0;
}

/* Take root's first <devices> out of the tree. */
static rv_xml_node *take_devices(rv_xml_node *root)
{
    for (size_t i = 0; i < root->nkids; i++) {
        rv_xml_node *k = root->kids[i];
        if (k && k->name && strcmp(k->name, "devices") == 0) {
            root->kids[i] = NULL;
            return k;
        }
    }
    return NULL;
}

int rv_test_def_parse(const char *xml, rv_test_def **out, rv_err *err)
{
    static int (*const steps[])(rv_xml_node *, rv_test_def *, rv_err *) = {
        check_root, parse_name, parse_uuid, parse_virt_type, parse_os_type, parse_title,
        parse_memory, parse_vcpu, parse_tuning, parse_lifecycle, parse_clock, parse_boot,
        check_def,
    };
    rv_xml_node *root = rv_xml_parse(xml, "(domain_definition)", err);
    if (!root)
        return -1;
    rv_test_def *def = calloc(1, sizeof(*def));
    int ret = def ? 0 : def_oom(err);
    for (size_t i = 0; ret == 0 && i < ARRAY_LEN(steps); i++)
        ret = steps[i](root, def, err);
    if (ret == 0) {
        def->devices = take_devices(root);
        *out = def;
    } else {
        rv_test_def_free(def);
    }
    rv_xml_free(root);
    return ret;
}

void rv_test_def_free(rv_test_def *def)
{
    if (!def)
        return;
    free(def->virt_type);
    free(def->name);
    free(def->title);
    free(def->description);
    free(def->os_type);
    free(def->arch);
    free(def->machine);
    rv_xml_free(def->devices);
    test_tune_free(def->tune);
    free(def);
}

/* ================================================================ writers */

/* Output goes into one buffer; the first allocation failure sticks and
 * the result is NULL. */
typedef struct writer {
    rv_buf buf;
    int failed;
} writer;

static void w_add(writer *w, const char *s, size_t n)
{
    if (!w->failed && buf_add(&w->buf, s, n) < 0)
        w->failed = 1;
}

static void w_str(writer *w, const char *s)
{
    w_add(w, s, strlen(s));
}

static void w_printf(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void w_printf(writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!w->failed && buf_vprintf(&w->buf, fmt, ap) < 0)
        w->failed = 1;
    va_end(ap);
}

static void w_indent(writer *w, int n)
{
    for (int i = 0; i < n; i++)
        w_add(w, " ", 1);
}

/* libvirt escapes all five special characters, in text and attributes. */
static void w_escaped(writer *w, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': w_str(w, "&lt;"); break;
        case '>': w_str(w, "&gt;"); break;
        case '&': w_str(w, "&amp;"); break;
        case '\'': w_str(w, "&apos;"); break;
        case '"': w_str(w, "&quot;"); break;
        default: w_add(w, s, 1); break;
        }
    }
}

static void w_text_element(writer *w, const char *name, const char *text)
{
    w_printf(w, "  <%s>", name);
    w_escaped(w, text);
    w_printf(w, "</%s>\n", name);
}

static char *w_finish(writer *w)
{
    if (w->failed) {
        rv_buf_free(&w->buf);
        return NULL;
    }
    return buf_take(&w->buf);
}

static int is_blank_text(const char *s)
{
    while (is_blank(*s))
        s++;
    return *s == '\0';
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

/* A kept subtree in libvirt's layout: two spaces per level, single-quoted
 * attributes, empty elements closed with "/>", layout whitespace dropped. */
static void write_node(writer *w, const rv_xml_node *el, int indent)
{
    w_indent(w, indent);
    w_printf(w, "<%s", el->name);
    for (size_t i = 0; i < el->nattrs; i++) {
        w_printf(w, " %s='", el->attrs[i].name);
        w_escaped(w, el->attrs[i].value);
        w_str(w, "'");
    }
    int nested = has_element_kids(el);
    if (!nested && !has_text(el)) {
        w_str(w, "/>\n");
        return;
    }
    w_str(w, nested ? ">\n" : ">");
    for (size_t i = 0; i < el->nkids; i++) {
        const rv_xml_node *k = el->kids[i];
        if (k && k->name) {
            write_node(w, k, indent + 2);
        } else if (k && (!nested || !is_blank_text(k->text))) {
            w_indent(w, nested ? indent + 2 : 0);
            w_escaped(w, k->text);
            w_str(w, nested ? "\n" : "");
        }
    }
    w_indent(w, nested ? indent : 0);
    w_printf(w, "</%s>\n", el->name);
}

/* Tuning the setters keep (test_tune.c), written and freed; NULL: none. */
static void write_tuning(writer *w, char *xml)
{
    if (xml)
        w_str(w, xml);
    free(xml);
}

static void write_vcpu(writer *w, const rv_test_def *def)
{
    w_printf(w, "  <vcpu placement='%s'", def->placement_auto ? "auto" : "static");
    if (def->vcpus_current != def->vcpus)
        w_printf(w, " current='%u'", def->vcpus_current);
    w_printf(w, ">%u</vcpu>\n", def->vcpus);
    char *cpu = test_tune_xml_cpu(def);
    if (cpu)
        write_tuning(w, cpu);
    else if (def->placement_auto)
        w_str(w, "  <numatune>\n    <memory mode='strict' placement='auto'/>\n  </numatune>\n");
}

static void write_os(writer *w, const rv_test_def *def)
{
    w_str(w, "  <os>\n    <type arch='");
    w_escaped(w, def->arch);
    if (def->machine) {
        w_str(w, "' machine='");
        w_escaped(w, def->machine);
    }
    w_printf(w, "'>%s</type>\n", def->os_type);
    for (size_t i = 0; i < def->nboot; i++)
        w_printf(w, "    <boot dev='%s'/>\n", boot_devs[def->boot[i]]);
    w_str(w, "  </os>\n");
}

static void write_devices(writer *w, const rv_xml_node *devices)
{
    w_str(w, "  <devices>\n");
    for (size_t i = 0; devices && i < devices->nkids; i++) {
        const rv_xml_node *k = devices->kids[i];
        if (k && k->name)
            write_node(w, k, 4);
    }
    w_str(w, "  </devices>\n");
}

char *rv_test_def_format(const rv_test_def *def, int id)
{
    writer w = { { 0 }, 0 };
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(def->uuid, uuid);
    w_str(&w, "<domain type='");
    w_escaped(&w, def->virt_type);
    w_str(&w, "'");
    if (id >= 0)
        w_printf(&w, " id='%d'", id);
    w_str(&w, ">\n");
    w_text_element(&w, "name", def->name);
    w_printf(&w, "  <uuid>%s</uuid>\n", uuid);
    if (def->title)
        w_text_element(&w, "title", def->title);
    if (def->description)
        w_text_element(&w, "description", def->description);
    w_printf(&w, "  <memory unit='KiB'>%llu</memory>\n", def->max_mem_kib);
    w_printf(&w, "  <currentMemory unit='KiB'>%llu</currentMemory>\n", def->cur_mem_kib);
    write_tuning(&w, test_tune_xml_memory(def));
    write_vcpu(&w, def);
    write_os(&w, def);
    w_printf(&w, "  <clock offset='%s'/>\n", def->clock_localtime ? "localtime" : "utc");
    w_printf(&w, "  <on_poweroff>%s</on_poweroff>\n", actions[def->on_poweroff]);
    w_printf(&w, "  <on_reboot>%s</on_reboot>\n", actions[def->on_reboot]);
    w_printf(&w, "  <on_crash>%s</on_crash>\n", actions[def->on_crash]);
    write_devices(&w, def->devices);
    w_str(&w, "</domain>\n");
    return w_finish(&w);
}

/* ================================================================ capabilities */

/* What libvirt 9.0's test:///default reports: an i686 host with two NUMA
 * cells of eight CPUs, and hvm and xen guests. */
static const char capabilities_head[] =
    "<capabilities>\n"
    "\n"
    "  <host>\n"
    "    <cpu>\n"
    "      <arch>i686</arch>\n"
    "      <features>\n"
    "        <pae/>\n"
    "        <nonpae/>\n"
    "      </features>\n"
    "      <pages unit='KiB' size='4'/>\n"
    "      <pages unit='KiB' size='8'/>\n"
    "      <pages unit='KiB' size='2048'/>\n"
    "      <pages unit='KiB' size='1048576'/>\n"
    "    </cpu>\n"
    "    <power_management/>\n"
    "    <iommu support='no'/>\n"
    "    <topology>\n"
    "      <cells num='2'>\n";

static const char capabilities_tail[] =
    "      </cells>\n"
    "    </topology>\n"
    "    <secmodel>\n"
    "      <model>testSecurity</model>\n"
    "      <doi></doi>\n"
    "    </secmodel>\n"
    "  </host>\n"
    "\n";

static void write_cell(writer *w, int cell, unsigned long long mem_kib, int page_kib)
{
    w_printf(w, "        <cell id='%d'>\n", cell);
    w_printf(w, "          <memory unit='KiB'>%llu</memory>\n", mem_kib);
    w_printf(w, "          <pages unit='KiB' size='%d'>524288</pages>\n", page_kib);
    w_str(w, "          <pages unit='KiB' size='2048'>0</pages>\n"
             "          <pages unit='KiB' size='1048576'>0</pages>\n"
             "          <cpus num='8'>\n");
    for (int core = 0; core < 8; core++) {
        int cpu = cell * 8 + core;
        w_printf(w, "            <cpu id='%d' socket_id='%d' die_id='0' core_id='%d' "
                 "siblings='%d'/>\n", cpu, cell, core, cpu);
    }
    w_str(w, "          </cpus>\n        </cell>\n");
}

static void write_guest(writer *w, const char *os_type)
{
    w_printf(w, "  <guest>\n    <os_type>%s</os_type>\n", os_type);
    w_str(w, "    <arch name='i686'>\n"
             "      <wordsize>32</wordsize>\n"
             "      <emulator>/usr/bin/test-hv</emulator>\n"
             "      <domain type='test'/>\n"
             "    </arch>\n"
             "    <features>\n"
             "      <pae/>\n"
             "      <nonpae/>\n"
             "    </features>\n"
             "  </guest>\n\n");
}

char *rv_test_capabilities(void)
{
    writer w = { { 0 }, 0 };
    w_str(&w, capabilities_head);
    write_cell(&w, 0, 2097152, 4);
    write_cell(&w, 1, 4194304, 8);
    w_str(&w, capabilities_tail);
    write_guest(&w, "hvm");
    write_guest(&w, "xen");
    w_str(&w, "</capabilities>\n");
    return w_finish(&w);
}

/* ================================================================ networks */

/* libvirt writes a network's elements in this order, whatever order they
 * came in; elements it does not model are dropped. */
static const char *const net_elements[] = {
    "metadata", "forward", "bridge", "mtu", "mac", "domain", "dns", "ip", "route",
    "virtualport", "portgroup",
};

/* Modes whose networks get a host bridge, with libvirt's STP defaults. */
static int net_has_own_bridge(const rv_xml_node *root)
{
    const rv_xml_node *fwd = rv_xml_child(root, "forward");
    const char *mode = fwd ? rv_xml_attr_get(fwd, "mode") : NULL;
    return !mode || strcmp(mode, "nat") == 0 || strcmp(mode, "route") == 0 ||
           strcmp(mode, "open") == 0;
}

int rv_test_net_def_parse(const char *xml, rv_test_net_def **out, rv_err *err)
{
    rv_xml_node *root = rv_xml_parse(xml, "(network_definition)", err);
    if (!root)
        return -1;
    rv_test_net_def *def = calloc(1, sizeof(*def));
    char *uuid = NULL;
    int ret = def ? 0 : def_oom(err);
    if (ret == 0 && strcmp(root->name, "network") != 0)
        ret = def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                       "XML error: expecting root element of 'network', not '%s'", root->name);
    if (ret == 0 && (ret = child_text(root, "name", &def->name, err)) == 0 && !def->name)
        ret = def_fail(err, RV_FROM_NETWORK, RV_ERR_NO_NAME, "missing name information");
    if (ret == 0 && (ret = child_text(root, "uuid", &uuid, err)) == 0) {
        if (!uuid)
            rv_uuid_generate(def->uuid);
        else if (parse_uuid_text(uuid, def->uuid) < 0)
            ret = def_fail(err, RV_FROM_NETWORK, RV_ERR_INTERNAL_ERROR,
                           "internal error: malformed uuid element");
    }
    free(uuid);
    if (ret == 0)
        ret = attr_copy(rv_xml_child(root, "bridge"), "name", &def->bridge, err);
    if (ret == 0) {
        def->root = root;
        *out = def;
    } else {
        rv_test_net_def_free(def);
        rv_xml_free(root);
    }
    return ret;
}

void rv_test_net_def_free(rv_test_net_def *def)
{
    if (!def)
        return;
    free(def->name);
    free(def->bridge);
    rv_xml_free(def->root);
    free(def);
}

/* <bridge> as libvirt completes it: name, then stp and delay (defaults
 * "on" and "0"), then whatever else was given. */
static void write_net_bridge(writer *w, const rv_xml_node *root)
{
    const rv_xml_node *br = rv_xml_child(root, "bridge");
    if (!net_has_own_bridge(root)) {
        if (br)
            write_node(w, br, 2);
        return;
    }
    const char *name = br ? rv_xml_attr_get(br, "name") : NULL;
    const char *stp = br ? rv_xml_attr_get(br, "stp") : NULL;
    const char *delay = br ? rv_xml_attr_get(br, "delay") : NULL;
    w_str(w, "  <bridge");
    if (name) {
        w_str(w, " name='");
        w_escaped(w, name);
        w_str(w, "'");
    }
    w_str(w, " stp='");
    w_escaped(w, stp ? stp : "on");
    w_str(w, "' delay='");
    w_escaped(w, delay ? delay : "0");
    w_str(w, "'");
    for (size_t i = 0; br && i < br->nattrs; i++) {
        const char *a = br->attrs[i].name;
        if (strcmp(a, "name") == 0 || strcmp(a, "stp") == 0 || strcmp(a, "delay") == 0)
            continue;
        w_printf(w, " %s='", a);
        w_escaped(w, br->attrs[i].value);
        w_str(w, "'");
    }
    w_str(w, "/>\n");
}

char *rv_test_net_def_format(const rv_test_net_def *def)
{
    writer w = { { 0 }, 0 };
    char uuid[RV_UUID_STRING_LEN];
    const rv_xml_node *root = def->root;
    rv_uuid_format(def->uuid, uuid);
    w_str(&w, "<network");
    for (size_t i = 0; i < root->nattrs; i++) {
        w_printf(&w, " %s='", root->attrs[i].name);
        w_escaped(&w, root->attrs[i].value);
        w_str(&w, "'");
    }
    w_str(&w, ">\n");
    w_text_element(&w, "name", def->name);
    w_printf(&w, "  <uuid>%s</uuid>\n", uuid);
    for (size_t e = 0; e < ARRAY_LEN(net_elements); e++) {
        if (strcmp(net_elements[e], "bridge") == 0) {
            write_net_bridge(&w, root);
            continue;
        }
        for (size_t i = 0; i < root->nkids; i++) {
            const rv_xml_node *k = root->kids[i];
            if (k && k->name && strcmp(k->name, net_elements[e]) == 0)
                write_node(&w, k, 2);
        }
    }
    w_str(&w, "</network>\n");
    return w_finish(&w);
}
