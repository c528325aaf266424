/* The QEMU driver's network filters: defined, kept as libvirtd formats
 * them, listed and undefined; stored as config_dir/nwfilter/<name>.xml
 * (atomic, durable writes through qemu_store.c) and loaded again at
 * start-up.  They are never applied to guest traffic (remvirt has no
 * ebtables/iptables side), so there are no filter bindings either: their
 * list is empty and lookups answer "not found", as libvirtd with no guest
 * using a filter. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_secret.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

RV_LOG_CATEGORY("drivers.qemu.nwfilter");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NWFILTER, (code), __VA_ARGS__)

enum {
    DEFINE_VALIDATE = 1,                /* virNWFilterDefineFlags */
    NWFILTER_XML_MAX = 1 << 20,         /* the longest filter XML read */
    RULE_PRIORITY_DEFAULT = 500,
    PRIORITY_MIN = -1000, PRIORITY_MAX = 1000,
};

/* The chain prefixes libvirt knows, with their default priorities. */
static const struct {
    const char *prefix;
    int priority;
} chains[] = {
    { "stp", -810 }, { "mac", -800 }, { "vlan", -750 }, { "ipv4", -700 },
    { "ipv6", -600 }, { "arp", -500 }, { "rarp", -400 },
};

static const char *const actions[] = { "drop", "accept", "reject", "return", "continue" };
static const char *const directions[] = { "in", "out", "inout" };
/* The protocols a rule may match; a rule keeps the first it names. */
static const char *const protocols[] = {
    "mac", "vlan", "stp", "arp", "rarp", "ip", "ipv6", "tcp", "udp", "sctp", "icmp", "igmp",
    "esp", "ah", "udplite", "all", "tcp-ipv6", "udp-ipv6", "sctp-ipv6", "icmpv6", "esp-ipv6",
    "ah-ipv6", "udplite-ipv6", "all-ipv6",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct qfilter {
    char *name;
    unsigned char uuid[16];
    char *xml;                  /* as formatted, with the uuid */
    struct qfilter *next;
} qfilter;

static struct {
    char *dir;
    qfilter *list;
    int n;
} st;

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static int in_list(const char *const *list, size_t n, const char *word)
{
    for (size_t i = 0; word && i < n; i++)
        if (strcmp(list[i], word) == 0)
            return (int)i;
    return -1;
}

static void put_attr(FILE *fp, const char *name, const char *value)
{
    fprintf(fp, " %s='", name);
    rv_xml_put_escaped(fp, value);
    fputc('\'', fp);
}

/* Every attribute of n, in the document's order. */
static int put_all_attrs(FILE *fp, const xmlNode *n)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
        if (!v)
            return -1;
        put_attr(fp, (const char *)a->name, (const char *)v);
        xmlFree(v);
    }
    return 0;
}

/* A decimal integer in [min, max]; 0 when it is not one. */
static int parse_int(const char *text, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return 0;
    *out = (int)v;
    return 1;
}

static int format_rule(FILE *fp, xmlNode *rule, rv_err *err)
{
    int failed = 0, rc = -1, prio = RULE_PRIORITY_DEFAULT;
    char *action = rv_lx_attr(rule, "action", &failed);
    char *direction = rv_lx_attr(rule, "direction", &failed);
    char *priority = rv_lx_attr(rule, "priority", &failed);
    char *statematch = rv_lx_attr(rule, "statematch", &failed);
    if (failed)
        oom(err);
    else if (!action)
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: rule node requires action attribute");
    else if (!direction)
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: rule node requires direction attribute");
    else if (in_list(actions, COUNT(actions), action) < 0)
        fail(err, RV_ERR_CONFIG_UNSUPPORTED,
             "unsupported configuration: unknown rule action attribute value");
    else if (in_list(directions, COUNT(directions), direction) < 0)
        fail(err, RV_ERR_CONFIG_UNSUPPORTED,
             "unsupported configuration: unknown rule direction attribute value");
    else
        rc = 0;
    if (rc == 0) {
        /* Out of range: the default, silently, as libvirt does. */
        if (priority)
            parse_int(priority, PRIORITY_MIN, PRIORITY_MAX, &prio);
        fprintf(fp, "  <rule action='%s' direction='%s' priority='%d'%s", action, direction, prio,
                statematch && (strcmp(statematch, "0") == 0 || strcmp(statematch, "false") == 0)
                    ? " statematch='false'" : "");
        xmlNode *proto = rule->children;
        while (proto && (proto->type != XML_ELEMENT_NODE ||
                         in_list(protocols, COUNT(protocols), (const char *)proto->name) < 0))
            proto = proto->next;
        if (!proto) {
            fputs("/>\n", fp);
        } else {
            fprintf(fp, ">\n    <%s", (const char *)proto->name);
            if (put_all_attrs(fp, proto) < 0)
                rc = oom(err);
            fputs("/>\n  </rule>\n", fp);
        }
    }
    free(action);
    free(direction);
    free(priority);
    free(statematch);
    return rc;
}

static int format_filterref(FILE *fp, xmlNode *ref, rv_err *err)
{
    int failed = 0;
    char *filter = rv_lx_attr(ref, "filter", &failed);
    if (!filter) {
        /* libvirt's words for this case, though it is not a rule. */
        return failed ? oom(err)
                      : fail(err, RV_ERR_INTERNAL_ERROR,
                             "internal error: rule node requires action attribute");
    }
    fputs("  <filterref", fp);
    put_attr(fp, "filter", filter);
    free(filter);
    int params = 0;
    for (xmlNode *p = ref->children; p; p = p->next) {
        if (p->type != XML_ELEMENT_NODE || !xmlStrEqual(p->name, BAD_CAST "parameter"))
            continue;
        char *name = rv_lx_attr(p, "name", &failed), *value = rv_lx_attr(p, "value", &failed);
        if (name && value) {
            fputs(params++ ? "" : ">\n", fp);
            fputs("    <parameter", fp);
            put_attr(fp, "name", name);
            put_attr(fp, "value", value);
            fputs("/>\n", fp);
        }
        free(name);
        free(value);
    }
    fputs(params ? "  </filterref>\n" : "/>\n", fp);
    return failed ? oom(err) : 0;
}

/* Parse a filter's XML and format it as libvirtd does (*xml, malloc'd),
 * with its name and uuid (generated when it has none). */
static int parse_filter(const char *text, char **name, unsigned char uuid[16], char **xml,
                        rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0, rc = -1, prio = 0;
    char *chain = NULL, *priority = NULL, *uuid_text = NULL, *buf = NULL;
    size_t len = 0;
    FILE *fp = NULL;
    *name = *xml = NULL;
    xmlNode *root = rv_lx_read(text, NWFILTER_XML_MAX, "filter", "nwfilter_definition",
                               RV_FROM_NWFILTER, &doc, err);
    if (!root)
        goto out;
    *name = rv_lx_attr(root, "name", &failed);
    chain = rv_lx_attr(root, "chain", &failed);
    priority = rv_lx_attr(root, "priority", &failed);
    uuid_text = rv_lx_text(rv_lx_child(root, "uuid"), &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    if (!*name) {
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: filter has no name");
        goto out;
    }
    if (chain && strcmp(chain, "root") != 0) {
        size_t i = 0;
        while (i < COUNT(chains) && strncmp(chain, chains[i].prefix, strlen(chains[i].prefix)))
            i++;
        if (i == COUNT(chains)) {
            fail(err, RV_ERR_INVALID_ARG,
                 "invalid argument: Invalid chain name '%s'. Please use a chain name called "
                 "'root' or any of the following prefixes: mac, vlan, stp, arp, rarp, ipv4, ipv6",
                 chain);
            goto out;
        }
        prio = chains[i].priority;
    }
    if (priority && !parse_int(priority, PRIORITY_MIN, PRIORITY_MAX, &prio)) {
        fail(err, RV_ERR_INVALID_ARG,
             "invalid argument: Priority '%s' is outside valid range of [%d,%d]", priority,
             PRIORITY_MIN, PRIORITY_MAX);
        goto out;
    }
    if (uuid_text && rv_uuid_parse(uuid_text, uuid) < 0) {
        fail(err, RV_ERR_XML_ERROR, "XML error: malformed uuid element");
        goto out;
    }
    if (!uuid_text)
        rv_uuid_generate(uuid);
    char uuid_out[RV_UUID_STRING_LEN];
    rv_uuid_format(uuid, uuid_out);
    if (!(fp = open_memstream(&buf, &len))) {
        oom(err);
        goto out;
    }
    fputs("<filter", fp);
    put_attr(fp, "name", *name);
    put_attr(fp, "chain", chain ? chain : "root");
    if (prio)
        fprintf(fp, " priority='%d'", prio);
    fprintf(fp, ">\n  <uuid>%s</uuid>\n", uuid_out);
    for (xmlNode *n = root->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (xmlStrEqual(n->name, BAD_CAST "rule") ? format_rule(fp, n, err) < 0
            : xmlStrEqual(n->name, BAD_CAST "filterref") ? format_filterref(fp, n, err) < 0
                                                         : 0)
            goto out;
    }
    fputs("</filter>\n", fp);
    if (fclose(fp) != 0) {
        fp = NULL;
        oom(err);
        goto out;
    }
    fp = NULL;
    *xml = buf;
    buf = NULL;
    rc = 0;
out:
    if (fp)
        fclose(fp);
    free(buf);
    free(chain);
    free(priority);
    free(uuid_text);
    xmlFreeDoc(doc);
    if (rc < 0) {
        free(*name);
        *name = NULL;
    }
    return rc;
}

/* ---- the table ---- */

static qfilter *find_name(const char *name)
{
    for (qfilter *f = st.list; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static qfilter *find_uuid(const unsigned char uuid[16])
{
    for (qfilter *f = st.list; f; f = f->next)
        if (memcmp(f->uuid, uuid, 16) == 0)
            return f;
    return NULL;
}

static qfilter *get_uuid(const unsigned char uuid[16], rv_err *err)
{
    qfilter *f = find_uuid(uuid);
    if (!f) {
        char text[RV_UUID_STRING_LEN];
        rv_uuid_format(uuid, text);
        fail(err, RV_ERR_NO_NWFILTER,
             "Network filter not found: no nwfilter with matching uuid '%s'", text);
    }
    return f;
}

static int to_wire(rv_nonnull_nwfilter *wire, const qfilter *f, rv_err *err)
{
    if (!(wire->name = strdup(f->name)))
        return oom(err);
    memcpy(wire->uuid, f->uuid, 16);
    return 0;
}

static void filter_free(qfilter *f)
{
    free(f->name);
    free(f->xml);
    free(f);
}

/* config_dir/nwfilter/<name>.xml, or NULL for a name that cannot be a
 * file name (it would leave the directory). */
static char *file_of(const char *name)
{
    if (!st.dir || !*name || strchr(name, '/') || name[0] == '.')
        return NULL;
    return rv_qemu_path(st.dir, name, ".xml");
}

/* The checks libvirtd makes before it defines name with uuid. */
static int check_define(const char *name, const unsigned char uuid[16], rv_err *err)
{
    const qfilter *by_uuid = find_uuid(uuid), *by_name = find_name(name);
    char text[RV_UUID_STRING_LEN];
    if (by_uuid && strcmp(by_uuid->name, name) != 0)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: filter with same UUID but different name ('%s') already "
                    "exists", by_uuid->name);
    if (by_name && memcmp(by_name->uuid, uuid, 16) != 0) {
        rv_uuid_format(by_name->uuid, text);
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: filter '%s' already exists with uuid %s", name, text);
    }
    if (!by_name && st.n >= RV_NWFILTER_LIST_MAX)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: there are already %d filters, the most remvirt keeps",
                    st.n);
    return 0;
}

/* Add or replace; takes name and xml. */
static qfilter *put(char *name, const unsigned char uuid[16], char *xml, rv_err *err)
{
    qfilter *f = find_name(name);
    if (f) {
        free(name);
        free(f->xml);
        f->xml = xml;
        return f;
    }
    if (!(f = calloc(1, sizeof(*f)))) {
        free(name);
        free(xml);
        oom(err);
        return NULL;
    }
    f->name = name;
    memcpy(f->uuid, uuid, 16);
    f->xml = xml;
    f->next = st.list;
    st.list = f;
    st.n++;
    return f;
}

/* ---- the slots ---- */

int rv_qemu_connect_num_of_nwfilters(rv_driver_conn *c, rv_connect_num_of_nwfilters_ret *ret,
                                     rv_err *err)
{
    (void)c, (void)err;
    ret->num = st.n;
    return 0;
}

int rv_qemu_connect_list_nwfilters(rv_driver_conn *c, const rv_connect_list_nwfilters_args *args,
                                   rv_connect_list_nwfilters_ret *ret, rv_err *err)
{
    (void)c;
    if (args->maxnames < 0 || args->maxnames > RV_NWFILTER_LIST_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "maximum %d is outside 0..%d",
                           args->maxnames, RV_NWFILTER_LIST_MAX);
    int n = st.n < args->maxnames ? st.n : args->maxnames;
    if (n == 0)
        return 0;
    if (!(ret->names.names_val = calloc((size_t)n, sizeof(char *))))
        return oom(err);
    qfilter *f = st.list;
    for (int i = 0; i < n; i++, f = f->next) {
        if (!(ret->names.names_val[i] = strdup(f->name)))
            return oom(err);    /* the dispatcher frees what was filled */
        ret->names.names_len++;
    }
    return 0;
}

int rv_qemu_connect_list_all_nwfilters(rv_driver_conn *c,
                                       const rv_connect_list_all_nwfilters_args *args,
                                       rv_connect_list_all_nwfilters_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterConnectListAllNWFilters", err) < 0)
        return -1;
    ret->ret = (u_int)st.n;
    if (!args->need_results || st.n == 0)
        return 0;
    if (!(ret->filters.filters_val = calloc((size_t)st.n, sizeof(rv_nonnull_nwfilter))))
        return oom(err);
    for (qfilter *f = st.list; f; f = f->next) {
        if (to_wire(&ret->filters.filters_val[ret->filters.filters_len], f, err) < 0)
            return -1;
        ret->filters.filters_len++;
    }
    return 0;
}

int rv_qemu_nwfilter_lookup_by_name(rv_driver_conn *c, const rv_nwfilter_lookup_by_name_args *args,
                                    rv_nwfilter_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    qfilter *f = find_name(args->name);
    if (!f)
        return fail(err, RV_ERR_NO_NWFILTER,
                    "Network filter not found: no nwfilter with matching name '%s'", args->name);
    return to_wire(&ret->nwfilter, f, err);
}

int rv_qemu_nwfilter_lookup_by_uuid(rv_driver_conn *c, const rv_nwfilter_lookup_by_uuid_args *args,
                                    rv_nwfilter_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c;
    qfilter *f = get_uuid((const unsigned char *)args->uuid, err);
    return f ? to_wire(&ret->nwfilter, f, err) : -1;
}

int rv_qemu_nwfilter_get_xml_desc(rv_driver_conn *c, const rv_nwfilter_get_xml_desc_args *args,
                                  rv_nwfilter_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qfilter *f;
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterGetXMLDesc", err) < 0 ||
        !(f = get_uuid((const unsigned char *)args->nwfilter.uuid, err)))
        return -1;
    if (!(ret->xml = strdup(f->xml)))
        return oom(err);
    return 0;
}

/* A define or an undefine, through the family's queue (qemu_fileq.c):
 * checked at its turn, answered once its file is durable (or gone),
 * memory changed then. */
typedef struct filter_op {
    rv_qemu_fileop op;
    char *text;                 /* define: the XML asked for */
    char *name, *xml;           /* define: parsed at its turn */
    unsigned char uuid[16];
    rv_nonnull_nwfilter *(*out)(void *ret);     /* define: where the reply's result has it */
} filter_op;

static rv_qemu_fileq filter_queue = { .name = "nwfilter", .from = RV_FROM_NWFILTER };

static void filter_op_destroy(rv_qemu_fileop *o)
{
    filter_op *op = (filter_op *)o;
    free(op->text);
    free(op->name);
    free(op->xml);
    free(op);
}

static int parse_checked(const char *text, char **name, unsigned char uuid[16], char **xml,
                         rv_err *err)
{
    if (parse_filter(text, name, uuid, xml, err) < 0)
        return -1;
    char *path = file_of(*name);
    int rc = rv_lx_check_name(*name, "\n", err) < 0 || check_define(*name, uuid, err) < 0 ||
             (!path && fail(err, RV_ERR_INVALID_ARG, "invalid argument: filter name '%s' cannot "
                                                     "be a file name", *name)) ? -1 : 0;
    free(path);
    if (rc < 0) {
        free(*name);
        free(*xml);
        *name = *xml = NULL;
    }
    return rc;
}

static int define_prepare(rv_qemu_fileop *o, rv_err *err)
{
    filter_op *op = (filter_op *)o;
    if (parse_checked(op->text, &op->name, op->uuid, &op->xml, err) < 0)
        return -1;
    char *xml = strdup(op->xml);
    if (!xml || rv_qemu_fileop_step(o, file_of(op->name), xml, true) < 0)
        return oom(err);
    return 0;
}

static void define_commit(rv_qemu_fileop *o)
{
    filter_op *op = (filter_op *)o;
    rv_err err = { 0 };
    qfilter *f = put(op->name, op->uuid, op->xml, &err);
    op->name = op->xml = NULL;
    if (!f || to_wire(op->out(rv_deferred_ret(o->reply)), f, &err) < 0)
        RV_WARN("%s", err.message);
    rv_err_clear(&err);
}

static int define(const char *text, rv_nonnull_nwfilter *(*out)(void *ret), rv_err *err)
{
    char *name, *xml;
    unsigned char uuid[16];
    /* Refused at once when bad; checked again at its turn. */
    if (parse_checked(text, &name, uuid, &xml, err) < 0)
        return -1;
    free(name);
    free(xml);
    filter_op *op = rv_qemu_fileop_new(&filter_queue, sizeof(*op), filter_op_destroy, err);
    if (!op)
        return -1;
    if (!(op->text = strdup(text))) {
        filter_op_destroy(&op->op);
        return oom(err);
    }
    op->out = out;
    return rv_qemu_fileq_submit(&filter_queue, &op->op, define_prepare, define_commit, err);
}

static rv_nonnull_nwfilter *define_xml_out(void *ret)
{
    return &((rv_nwfilter_define_xml_ret *)ret)->nwfilter;
}

static rv_nonnull_nwfilter *define_xml_flags_out(void *ret)
{
    return &((rv_nwfilter_define_xml_flags_ret *)ret)->nwfilter;
}

int rv_qemu_nwfilter_define_xml(rv_driver_conn *c, const rv_nwfilter_define_xml_args *args,
                                rv_nwfilter_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return define(args->xml, define_xml_out, err);
}

int rv_qemu_nwfilter_define_xml_flags(rv_driver_conn *c,
                                      const rv_nwfilter_define_xml_flags_args *args,
                                      rv_nwfilter_define_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    /* VALIDATE: the parser checks what it reads (no RNG schema). */
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, DEFINE_VALIDATE, "nwfilterDefineXMLFlags", err) < 0)
        return -1;
    (void)ret;
    return define(args->xml, define_xml_flags_out, err);
}

static int undefine_prepare(rv_qemu_fileop *o, rv_err *err)
{
    filter_op *op = (filter_op *)o;
    qfilter *f = get_uuid(op->uuid, err);
    if (!f)
        return -1;
    if (rv_qemu_fileop_step(o, file_of(f->name), NULL, true) < 0)
        return oom(err);
    return 0;
}

static void undefine_commit(rv_qemu_fileop *o)
{
    filter_op *op = (filter_op *)o;
    for (qfilter **p = &st.list; *p; p = &(*p)->next) {
        if (memcmp((*p)->uuid, op->uuid, 16) == 0) {
            qfilter *f = *p;
            *p = f->next;
            st.n--;
            filter_free(f);
            return;
        }
    }
}

int rv_qemu_nwfilter_undefine(rv_driver_conn *c, const rv_nwfilter_undefine_args *args,
                              rv_err *err)
{
    (void)c;
    qfilter *f = get_uuid((const unsigned char *)args->nwfilter.uuid, err);
    if (!f)
        return -1;
    filter_op *op = rv_qemu_fileop_new(&filter_queue, sizeof(*op), filter_op_destroy, err);
    if (!op)
        return -1;
    memcpy(op->uuid, f->uuid, 16);
    return rv_qemu_fileq_submit(&filter_queue, &op->op, undefine_prepare, undefine_commit, err);
}

int rv_qemu_connect_list_all_nwfilter_bindings(
    rv_driver_conn *c, const rv_connect_list_all_nwfilter_bindings_args *args,
    rv_connect_list_all_nwfilter_bindings_ret *ret, rv_err *err)
{
    (void)c;
    ret->ret = 0;
    return rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterConnectListAllNWFilterBindings", err);
}

int rv_qemu_nwfilter_binding_lookup_by_port_dev(
    rv_driver_conn *c, const rv_nwfilter_binding_lookup_by_port_dev_args *args,
    rv_nwfilter_binding_lookup_by_port_dev_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return fail(err, RV_ERR_NO_NWFILTER_BINDING,
                "Network filter binding not found: no nwfilter binding for port dev '%s'",
                args->name);
}

int rv_qemu_nwfilter_binding_get_xml_desc(rv_driver_conn *c,
                                          const rv_nwfilter_binding_get_xml_desc_args *args,
                                          rv_nwfilter_binding_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return fail(err, RV_ERR_NO_NWFILTER_BINDING,
                "Network filter binding not found: no nwfilter binding for port dev '%s'",
                args->nwfilter.portdev);
}

/* ---- start-up and exit ---- */

/* A filter read from its file. */
typedef struct filter_file {
    char *name, *xml;
    unsigned char uuid[16];
} filter_file;

static void free_file(void *f_)
{
    filter_file *f = f_;
    free(f->name);
    free(f->xml);
    free(f);
}

static void *parse_file(const char *text, const char **name, const unsigned char **uuid,
                        const char **unique, rv_err *err)
{
    (void)unique;
    filter_file *f = calloc(1, sizeof(*f));
    if (!f) {
        oom(err);
        return NULL;
    }
    if (parse_filter(text, &f->name, f->uuid, &f->xml, err) < 0) {
        free_file(f);
        return NULL;
    }
    *name = f->name;
    *uuid = f->uuid;
    return f;
}

static void add_file(void *f_, const char *path, void *opaque)
{
    (void)opaque;
    filter_file *f = f_;
    rv_err err = { 0 };
    if (check_define(f->name, f->uuid, &err) < 0) {
        RV_WARN("nwfilter file '%s' is not used: %s", path, err.message);
        free_file(f);
    } else {
        put(f->name, f->uuid, f->xml, &err);
        free(f);
    }
    rv_err_clear(&err);
}

static const rv_qemu_def_family filter_files = {
    "nwfilter", NULL, NWFILTER_XML_MAX, parse_file, add_file, free_file,
};

void rv_qemu_nwfilter_init(void)
{
    if (!(st.dir = rv_qemu_path(rv_qemu.config_dir, "nwfilter", ""))) {
        RV_ERROR("QEMU driver: out of memory; no network filters");
        return;
    }
    rv_qemu_load_defs(st.dir, &filter_files, NULL);
}

void rv_qemu_nwfilter_cleanup(void)
{
    rv_qemu_fileq_release(&filter_queue);
    while (st.list) {
        qfilter *f = st.list;
        st.list = f->next;
        filter_free(f);
    }
    free(st.dir);
    memset(&st, 0, sizeof(st));
}
