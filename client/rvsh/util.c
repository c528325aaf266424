/* rvsh: what the commands share: errors, states as virsh names them, JSON
 * output, number and file reading, tables. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "rvsh.h"

#define MAX_XML_FILE (10 * 1024 * 1024)     /* what virsh accepts too */

const char *const opts_list[] = { "all", "inactive", "json", NULL };
const char *const opts_json[] = { "json", NULL };
const char *const opts_disable[] = { "disable", NULL };

void error_line(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The library's reason for the last failure. */
void lib_error(void)
{
    const rv_error_info *e = rv_last_error();
    error_line("%s", e ? e->message : "unknown error");
}

int has_opt(const command *cmd, const cmd_args *a, const char *name)
{
    for (unsigned int i = 0; cmd->options && cmd->options[i]; i++)
        if (strcmp(cmd->options[i], name) == 0)
            return (a->opts >> i) & 1;
    return 0;
}

/* The value given to option "name=", or NULL. */
const char *opt_value(const command *cmd, const cmd_args *a, const char *name)
{
    size_t n = strlen(name);
    for (unsigned int i = 0; cmd->options && cmd->options[i]; i++)
        if (strncmp(cmd->options[i], name, n) == 0 && strcmp(cmd->options[i] + n, "=") == 0)
            return (a->opts >> i) & 1 ? a->opt_values[i] : NULL;
    return NULL;
}

const char *state_name(int state)
{
    static const char *const names[] = {
        "no state", "running", "idle", "paused", "in shutdown", "shut off", "crashed",
        "pmsuspended",
    };
    if (state < 0 || state >= (int)(sizeof(names) / sizeof(names[0])))
        return "no state";
    return names[state];
}

const char *reason_name(int state, int reason)
{
    static const char *const running[] = {
        "unknown", "booted", "migrated", "restored", "from snapshot", "unpaused",
        "migration canceled", "save canceled", "event wakeup", "crashed", "post-copy",
        "post-copy failed",
    };
    static const char *const paused[] = {
        "unknown", "user", "migrating", "saving", "dumping", "I/O error", "watchdog",
        "from snapshot", "shutting down", "creating snapshot", "crashed", "starting up",
        "post-copy", "post-copy failed",
    };
    static const char *const shutdown[] = { "unknown", "user" };
    static const char *const shutoff[] = {
        "unknown", "shutdown", "destroyed", "crashed", "migrated", "saved", "failed",
        "from snapshot", "daemon",
    };
    static const char *const crashed[] = { "unknown", "panicked" };
    const char *const *names = NULL;
    int n = 0;
#define USE(list) (names = (list), n = (int)(sizeof(list) / sizeof((list)[0])))
    switch (state) {
    case RV_DOMAIN_RUNNING: USE(running); break;
    case RV_DOMAIN_PAUSED: USE(paused); break;
    case RV_DOMAIN_SHUTDOWN: USE(shutdown); break;
    case RV_DOMAIN_SHUTOFF: USE(shutoff); break;
    case RV_DOMAIN_CRASHED: USE(crashed); break;
    default: break;
    }
#undef USE
    if (!names || reason < 0 || reason >= n)
        return "unknown";
    return names[reason];
}

void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (*p < 0x20)
                printf("\\u%04x", *p);
            else
                putchar(*p);
        }
    }
    putchar('"');
}

void json_key(const char *key, int *first)
{
    printf("%s", *first ? "" : ", ");
    *first = 0;
    json_string(key);
    fputs(": ", stdout);
}

void json_str_field(const char *key, const char *value, int *first)
{
    json_key(key, first);
    if (value)
        json_string(value);
    else
        fputs("null", stdout);
}

/* known: 0 prints null. */
void json_num_field(const char *key, unsigned long long value, int known, int *first)
{
    json_key(key, first);
    if (known)
        printf("%llu", value);
    else
        fputs("null", stdout);
}

/* value < 0 prints null. */
void json_bool_field(const char *key, int value, int *first)
{
    json_key(key, first);
    fputs(value < 0 ? "null" : value ? "true" : "false", stdout);
}

int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int read_file(const char *path, char **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        error_line("Failed to open file '%s': %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(MAX_XML_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_XML_FILE + 1, f) : 0;
    int bad = !buf || ferror(f);
    int too_big = n > MAX_XML_FILE;
    int saved = errno;
    fclose(f);
    if (bad || too_big) {
        if (!buf)
            error_line("out of memory");
        else if (too_big)
            error_line("file '%s' is larger than %d bytes", path, MAX_XML_FILE);
        else
            error_line("Failed to read file '%s': %s", path, strerror(saved));
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* Columns are as wide as their widest cell in characters (UTF-8 code
 * points), so multi-byte names line up. */
size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

void print_cell(const char *s, size_t width, int last)
{
    fputs(s, stdout);
    if (!last)
        printf("%*s", (int)(width - text_width(s) + 3), "");
}

/* hostname, uri, capabilities: print one string (and take it). */
int print_line(char *s)
{
    if (!s) {
        lib_error();
        return -1;
    }
    printf("%s\n", s);
    free(s);
    return 0;
}

const char *yes_no(int v)
{
    return v ? "yes" : "no";
}

/* virsh's sizes: bytes below 1 KiB, else the largest binary unit under it. */
void print_size(const char *label, unsigned long long bytes)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)bytes;
    size_t u = 0;
    while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >= (1ULL << (10 * (u + 1))))
        u++;
    v /= (double)(1ULL << (10 * u));
    printf("%-15s %.2lf %s\n", label, v, units[u]);
}

/* A virsh table: ncols columns as wide as their widest cell, a rule. */
void print_table(const char *const *heads, size_t ncols, const char *const *cells,
                        size_t nrows)
{
    size_t w[8], rule = 0;
    for (size_t k = 0; k < ncols; k++) {
        w[k] = text_width(heads[k]);
        for (size_t i = 0; i < nrows; i++)
            if (text_width(cells[i * ncols + k]) > w[k])
                w[k] = text_width(cells[i * ncols + k]);
        rule += w[k] + 3;
    }
    putchar(' ');
    for (size_t k = 0; k < ncols; k++)
        print_cell(heads[k], w[k], k + 1 == ncols);
    putchar('\n');
    for (size_t k = 0; k < rule; k++)
        putchar('-');
    putchar('\n');
    for (size_t i = 0; i < nrows; i++) {
        putchar(' ');
        for (size_t k = 0; k < ncols; k++)
            print_cell(cells[i * ncols + k], w[k], k + 1 == ncols);
        putchar('\n');
    }
}

xmlNode *xml_child(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
            return c;
    return NULL;
}

char *xml_text(const xmlNode *n)
{
    xmlChar *raw = n ? xmlNodeGetContent(n) : NULL;
    char *copy = raw && raw[0] ? strdup((const char *)raw) : NULL;
    xmlFree(raw);
    return copy;
}

/* A list call failed.  Against a server that lacks it (libvirtd's test
 * driver) virsh counts with the older call and reports that one's
 * failure instead. */
void list_failed(shell *sh, int (*count)(rv_conn *conn), const char *what)
{
    const rv_error_info *e = rv_last_error();
    if (e && e->code == RV_ERROR_NO_SUPPORT && count(sh->conn) < 0)
        error_line("Failed to count %s", what);
    else
        error_line("Failed to list %s", what);
    lib_error();
}

/* A CPU map as virsh writes it: ranges and single CPUs, "0-3,6"; the
 * caller frees it.  NULL when out of memory. */
char *cpumap_ranges(const unsigned char *map, int ncpus)
{
    size_t cap = (size_t)ncpus * 12 + 1, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (int c = 0; c < ncpus; c++) {
        if (!(map[c / 8] & (1u << (c % 8))))
            continue;
        int end = c;
        while (end + 1 < ncpus && (map[(end + 1) / 8] & (1u << ((end + 1) % 8))))
            end++;
        len += (size_t)snprintf(out + len, cap - len, end > c ? "%s%d-%d" : "%s%d",
                                len ? "," : "", c, end);
        c = end;
    }
    return out;
}

/* A typed parameter's value as virsh prints it: into buf (size bytes),
 * or the string itself; never NULL. */
const char *param_text(const rv_typed_parameter *p, char *buf, size_t size)
{
    switch (p->type) {
    case RV_PARAM_INT: snprintf(buf, size, "%d", p->value.i); break;
    case RV_PARAM_UINT: snprintf(buf, size, "%u", p->value.ui); break;
    case RV_PARAM_LLONG: snprintf(buf, size, "%lld", p->value.l); break;
    case RV_PARAM_ULLONG: snprintf(buf, size, "%llu", p->value.ul); break;
    case RV_PARAM_DOUBLE: snprintf(buf, size, "%lf", p->value.d); break;
    case RV_PARAM_BOOLEAN: snprintf(buf, size, "%s", p->value.b ? "yes" : "no"); break;
    case RV_PARAM_STRING: return p->value.s ? p->value.s : "";
    default: snprintf(buf, size, "?"); break;
    }
    return buf;
}

/* The same value as JSON: a number, true/false or a string. */
void json_param(const rv_typed_parameter *p)
{
    char buf[64];
    switch (p->type) {
    case RV_PARAM_DOUBLE: printf("%.17g", p->value.d); break;
    case RV_PARAM_BOOLEAN: fputs(p->value.b ? "true" : "false", stdout); break;
    case RV_PARAM_STRING: json_string(p->value.s ? p->value.s : ""); break;
    default: fputs(param_text(p, buf, sizeof(buf)), stdout); break;
    }
}

/* --config, --live, --current as libvirt's AFFECT flags (0 current, 1
 * live, 2 config); virsh refuses --current with either of the others. */
int affect_flags(const command *cmd, const cmd_args *a, unsigned int *flags)
{
    int current = has_opt(cmd, a, "current");
    *flags = (has_opt(cmd, a, "live") ? 1u : 0) | (has_opt(cmd, a, "config") ? 2u : 0);
    if (current && *flags) {
        error_line("Options --current and --%s are mutually exclusive",
                   *flags & 1 ? "live" : "config");
        return -1;
    }
    return 0;
}

/* XML the server sent: no network, no entities, no noise on stderr. */
xmlDoc *parse_xml(const char *xml, const char *what)
{
    xmlDoc *doc = xmlReadMemory(xml, (int)strlen(xml), what, NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc)
        error_line("failed to parse the %s", what);
    return doc;
}

/* The value of attribute name of n, or NULL; the caller frees it. */
char *xml_attr(const xmlNode *n, const char *name)
{
    xmlChar *v = n ? xmlGetProp(n, (const xmlChar *)name) : NULL;
    char *copy = v ? strdup((const char *)v) : NULL;
    xmlFree(v);
    return copy;
}
