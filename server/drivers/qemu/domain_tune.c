/* Reading and writing the tuning elements of QEMU domain XML (see
 * domain_tune.h), strict as the rest of domain_xml.c: anything outside
 * the subset is CONFIG_UNSUPPORTED naming it. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "server/drivers/conf/xml_read.h"
#include "server/drivers/qemu/domain_tune.h"
#include "server/drivers/qemu/domain_xml_priv.h"
#include "server/drivers/tune_params.h"

const char *const rv_qemu_iotune_options[RV_QEMU_IOTUNE_NUMBERS] = {
    "bps-total", "bps-read", "bps-write", "iops-total", "iops-read", "iops-write",
    "bps-total-max", "bps-read-max", "bps-write-max", "iops-total-max", "iops-read-max",
    "iops-write-max", "iops-size", "bps-total-max-length", "bps-read-max-length",
    "bps-write-max-length", "iops-total-max-length", "iops-read-max-length",
    "iops-write-max-length",
};
const rv_tune_rules rv_qemu_tune_rules = { .from = RV_FROM_QEMU, .limits_truncate = true,
                                           .blkio_weight_only = true };

static const char *name_of(const xmlNode *n)
{
    return (const char *)n->name;
}

static int xml_fail(rv_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int xml_fail(rv_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, RV_FROM_DOM, code, fmt, ap);
    va_end(ap);
    return -1;
}

void rv_qemu_iotune_free(rv_qemu_iotune *io)
{
    if (io)
        free(io->group);
    free(io);
}

/* A number element's text. */
static int number_of(const xmlNode *n, const char *const *attrs, unsigned long long *v,
                     rv_err *err)
{
    char *text = NULL;
    if (rv_qx_text_of(n, attrs, &text, err) < 0)
        return -1;
    int bad = rv_qx_parse_uint(text, v) < 0;
    if (bad)
        xml_fail(err, RV_ERR_XML_ERROR, "invalid <%s> value '%s'", name_of(n), text);
    free(text);
    return bad ? -1 : 0;
}

/* A cpu or node list attribute (not empty) as a bitmap, *map malloc'd. */
static int cpulist_attr(const xmlNode *n, const char *name, unsigned char **map, size_t *len,
                        rv_err *err)
{
    char *s = rv_qx_attr(n, name);
    if (!s)
        return xml_fail(err, RV_ERR_XML_ERROR, "<%s> has no %s", name_of(n), name);
    rv_err perr = { 0 };
    if (rv_tune_bitmap_parse(s, map, len, &perr) < 0 || rv_tune_bitmap_empty(*map, *len)) {
        if (!rv_err_is_set(&perr))
            free(*map);
        rv_err_clear(&perr);
        xml_fail(err, RV_ERR_XML_ERROR, "invalid %s '%s'", name, s);
        free(s);
        return -1;
    }
    free(s);
    return 0;
}

/* A <vcpupin> (vcpu) or <emulatorpin> (vcpu -1) into t. */
static int pin_attr(const xmlNode *n, rv_domain_tune *t, int vcpu, rv_err *err)
{
    unsigned char *map;
    size_t len;
    if (cpulist_attr(n, "cpuset", &map, &len, err) < 0)
        return -1;
    int rc = rv_domain_tune_pin(t, vcpu, map, len, RV_FROM_DOM, err);
    free(map);
    return rc;
}

static int parse_memtune(const xmlNode *n, rv_domain_tune *t, rv_err *err)
{
    const xmlNode *c = NULL;
    int more;
    while ((more = rv_qx_next_child(n, &c, err)) > 0) {
        int k = rv_qx_word_index(name_of(c), rv_tune_memory_names);
        if (k < 0)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "memtune");
        unsigned long long kib;
        if (rv_qx_parse_memory(c, &kib, err) < 0)
            return -1;
        rv_domain_tune_set_limit(t, &rv_qemu_tune_rules, k, kib);
    }
    return more;
}

/* An unsigned attribute as libvirt reads it, with its errors; 0: absent
 * (required: refused), or refused when not nonzero. */
static int number_attr(const xmlNode *n, const char *name, bool required, bool nonzero,
                       const char *expected, unsigned *out, rv_err *err)
{
    char *s = rv_qx_attr(n, name);
    unsigned long long v = 0;
    int rc = 0;
    *out = 0;
    if (!s) {
        if (required)
            rc = xml_fail(err, RV_ERR_XML_ERROR, "XML error: Missing required attribute '%s' in element '%s'",
                          name, name_of(n));
    } else if (rv_qx_parse_uint(s, &v) < 0 || v > 0xffffffffULL) {
        rc = xml_fail(err, RV_ERR_XML_ERROR, "XML error: Invalid value for attribute '%s' in element '%s': "
                      "'%s'. Expected %s", name, name_of(n), s, expected);
    } else if (nonzero && v == 0) {
        rc = xml_fail(err, RV_ERR_XML_ERROR, "XML error: Invalid value for attribute '%s' in element '%s': "
                      "Zero is not permitted", name, name_of(n));
    }
    free(s);
    *out = (unsigned)v;
    return rc;
}

/* An unsigned attribute (libvirt's "unsigned int" attribute errors). */
static int uint_attr(const xmlNode *n, const char *name, bool required, bool nonzero,
                     unsigned *out, rv_err *err)
{
    return number_attr(n, name, required, nonzero, "non-negative integer value", out, err);
}

int rv_qemu_disk_iothread_attr(const xmlNode *driver, unsigned *iothread, rv_err *err)
{
    return uint_attr(driver, "iothread", false, true, iothread, err);
}

/* An <iothreadpin>: its IOThread must be one the definition has. */
static int parse_iothreadpin(const xmlNode *c, rv_domain_tune *t, rv_err *err)
{
    static const char *const attrs[] = { "iothread", "cpuset", NULL };
    unsigned id;
    if (rv_qx_empty_element(c, attrs, err) < 0 || uint_attr(c, "iothread", true, true, &id, err) < 0)
        return -1;
    int i = rv_domain_tune_iothread_find(t, id);
    if (i < 0)
        return rv_err_fail(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: Cannot find 'iothread' : %u", id);
    if (t->iothreads[i].pin.map)
        return xml_fail(err, RV_ERR_XML_ERROR, "XML error: duplicate iothreadpin for same iothread '%u'", id);
    unsigned char *map;
    size_t len;
    if (cpulist_attr(c, "cpuset", &map, &len, err) < 0)
        return -1;
    int rc = rv_domain_tune_iothread_pin(t, (size_t)i, map, len, RV_FROM_DOM, err);
    free(map);
    return rc;
}

int rv_qemu_iothreads_parse(const xmlNode *root, rv_domain_tune **tune, rv_err *err)
{
    static const char *const none[] = { NULL };
    static const char *const id_attrs[] = { "id", "thread_pool_min", "thread_pool_max", NULL };
    const xmlNode *count_el = rv_lx_plain_child(root, "iothreads");
    const xmlNode *ids = rv_lx_plain_child(root, "iothreadids");
    if (!count_el && !ids)
        return 0;
    unsigned long long count = 0;
    if (count_el) {
        char *text = NULL;
        if (rv_qx_text_of(count_el, none, &text, err) < 0)
            return -1;
        int bad = rv_qx_parse_uint(text, &count) < 0;
        if (bad)
            xml_fail(err, RV_ERR_XML_ERROR, "XML error: invalid iothreads count '%s'", text ? text : "");
        free(text);
        if (bad)
            return -1;
        if (count > RV_QEMU_MAX_IOTHREADS)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                            "unsupported configuration: more than %d IOThreads",
                            RV_QEMU_MAX_IOTHREADS);
    }
    rv_domain_tune *t = rv_domain_tune_of(tune, RV_FROM_DOM, err);
    if (!t)
        return -1;
    const xmlNode *c = NULL;
    int more = 0;
    if (ids && rv_qx_check_attrs(ids, none, err) < 0)
        return -1;
    while (ids && (more = rv_qx_next_child(ids, &c, err)) > 0) {
        unsigned id;
        if (strcmp(name_of(c), "iothread") != 0)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "iothreadids");
        if (rv_qx_empty_element(c, id_attrs, err) < 0 ||
            uint_attr(c, "id", true, true, &id, err) < 0)
            return -1;
        if (rv_domain_tune_iothread_find(t, id) >= 0)
            return xml_fail(err, RV_ERR_XML_ERROR, "XML error: duplicate iothread id '%u' found", id);
        if (t->niothreads >= RV_QEMU_MAX_IOTHREADS)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                            "unsupported configuration: more than %d IOThreads",
                            RV_QEMU_MAX_IOTHREADS);
        unsigned pool[2];
        bool given[2] = { false, false };
        static const char *const pool_attrs[2] = { "thread_pool_min", "thread_pool_max" };
        for (int k = 0; k < 2; k++) {
            char *v = rv_qx_attr(c, pool_attrs[k]);
            given[k] = v != NULL;
            free(v);
            /* (A signed int in libvirt, refused below 0.) */
            if (given[k] && (number_attr(c, pool_attrs[k], true, false, "non-negative value",
                                         &pool[k], err) < 0 || pool[k] > 0x7fffffff))
                return rv_err_is_set(err) ? -1
                       : xml_fail(err, RV_ERR_XML_ERROR, "XML error: invalid %s", pool_attrs[k]);
        }
        if (rv_domain_tune_iothread_add(t, id, false, RV_FROM_DOM, err) < 0)
            return -1;
        t->iothreads[t->niothreads - 1].pool_min = given[0] ? (int)pool[0] : -1;
        t->iothreads[t->niothreads - 1].pool_max = given[1] ? (int)pool[1] : -1;
    }
    if (more < 0)
        return -1;
    return rv_domain_tune_iothreads_fill(t, (size_t)count, RV_FROM_DOM, err);
}

static int parse_cputune(const xmlNode *n, rv_domain_tune *t, rv_err *err)
{
    static const char *const vcpupin_attrs[] = { "vcpu", "cpuset", NULL };
    static const char *const emulatorpin_attrs[] = { "cpuset", NULL };
    const xmlNode *c = NULL;
    int more;
    while ((more = rv_qx_next_child(n, &c, err)) > 0) {
        if (strcmp(name_of(c), "shares") == 0) {
            if (number_of(c, NULL, &t->cpu_shares, err) < 0)
                return -1;
        } else if (strcmp(name_of(c), "vcpupin") == 0) {
            if (rv_qx_empty_element(c, vcpupin_attrs, err) < 0)
                return -1;
            char *vcpu = rv_qx_attr(c, "vcpu");
            unsigned long long v;
            int bad = rv_qx_parse_uint(vcpu, &v) < 0 || v >= RV_QEMU_TUNE_MAX_VCPUS;
            if (bad)
                xml_fail(err, RV_ERR_XML_ERROR, "invalid vcpupin vcpu '%s'", vcpu ? vcpu : "");
            free(vcpu);
            if (bad || pin_attr(c, t, (int)v, err) < 0)
                return -1;
        } else if (strcmp(name_of(c), "emulatorpin") == 0) {
            if (rv_qx_empty_element(c, emulatorpin_attrs, err) < 0 ||
                pin_attr(c, t, -1, err) < 0)
                return -1;
        } else if (strcmp(name_of(c), "iothreadpin") == 0) {
            if (parse_iothreadpin(c, t, err) < 0)
                return -1;
        } else {
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "cputune");
        }
    }
    return more;
}

static int parse_numatune(const xmlNode *n, rv_domain_tune *t, rv_err *err)
{
    static const char *const memory_attrs[] = { "mode", "nodeset", NULL };
    const xmlNode *c = NULL;
    int more;
    while ((more = rv_qx_next_child(n, &c, err)) > 0) {
        if (strcmp(name_of(c), "memory") != 0)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "numatune");
        if (rv_qx_empty_element(c, memory_attrs, err) < 0)
            return -1;
        char *mode = rv_qx_attr(c, "mode");
        t->numa_mode = mode ? rv_qx_attr_word(c, "mode", rv_tune_numa_modes, err) : 0;
        free(mode);
        if (t->numa_mode < 0)
            return -1;
        char *nodeset = rv_qx_attr(c, "nodeset");
        free(nodeset);
        if (!nodeset)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                            "unsupported <numatune> without a nodeset");
        unsigned char *map;
        size_t len;
        if (cpulist_attr(c, "nodeset", &map, &len, err) < 0)
            return -1;
        free(t->numa_nodeset);
        t->numa_nodeset = rv_tune_bitmap_format(map, len);
        free(map);
        if (!t->numa_nodeset)
            return xml_fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    return more;
}

int rv_qemu_tune_parse(const xmlNode *n, rv_domain_tune **tune, rv_err *err)
{
    static const char *const none[] = { NULL };
    rv_domain_tune *t = rv_domain_tune_of(tune, RV_FROM_DOM, err);
    if (!t)
        return -1;
    if (rv_qx_check_attrs(n, none, err) < 0)
        return -1;
    if (strcmp(name_of(n), "memtune") == 0)
        return parse_memtune(n, t, err);
    if (strcmp(name_of(n), "cputune") == 0)
        return parse_cputune(n, t, err);
    if (strcmp(name_of(n), "numatune") == 0)
        return parse_numatune(n, t, err);
    /* <blkiotune>: the weight only. */
    const xmlNode *c = NULL;
    int more;
    while ((more = rv_qx_next_child(n, &c, err)) > 0) {
        unsigned long long w;
        if (strcmp(name_of(c), "weight") != 0)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "blkiotune");
        if (number_of(c, NULL, &w, err) < 0)
            return -1;
        if (w < 100 || w > 1000)
            return xml_fail(err, RV_ERR_XML_ERROR, "invalid blkio weight %llu (100 to 1000)", w);
        t->blkio_weight = (unsigned)w;
    }
    return more;
}

int rv_qemu_tune_check(const rv_domain_tune *t, unsigned vcpus, rv_err *err)
{
    for (size_t v = vcpus; t && v < t->npins; v++)
        if (t->pins[v].map) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                       "vcpupin for vcpu %zu, but the domain has %u vcpus", v, vcpus);
            return -1;
        }
    return 0;
}

int rv_qemu_iotune_parse(const xmlNode *n, rv_qemu_iotune **io, rv_err *err)
{
    static const char *const none[] = { NULL };
    if (!*io && !(*io = calloc(1, sizeof(**io)))) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (rv_qx_check_attrs(n, none, err) < 0)
        return -1;
    const xmlNode *c = NULL;
    int more;
    while ((more = rv_qx_next_child(n, &c, err)) > 0) {
        if (strcmp(name_of(c), "group_name") == 0) {
            free((*io)->group);
            (*io)->group = NULL;
            if (rv_qx_text_of(c, NULL, &(*io)->group, err) < 0)
                return -1;
            continue;
        }
        int k = rv_qx_word_index(name_of(c), rv_tune_iotune_names);
        if (k < 0)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "iotune");
        if (number_of(c, NULL, &(*io)->val[k], err) < 0)
            return -1;
    }
    return more;
}

void rv_qemu_iotune_format(FILE *fp, const rv_qemu_iotune *io)
{
    bool any = io && io->group;
    for (int k = 0; io && k < RV_QEMU_IOTUNE_NUMBERS && !any; k++)
        any = io->val[k] != 0;
    if (!any)
        return;
    fputs("      <iotune>\n", fp);
    /* libvirt's order: group_name after size_iops_sec (index 12). */
    for (int k = 0; k < RV_QEMU_IOTUNE_NUMBERS; k++) {
        if (io->val[k])
            fprintf(fp, "        <%s>%llu</%s>\n", rv_tune_iotune_names[k], io->val[k],
                    rv_tune_iotune_names[k]);
        if (k == 12 && io->group) {
            fputs("        <group_name>", fp);
            rv_qx_put_escaped(fp, io->group);
            fputs("</group_name>\n", fp);
        }
    }
    fputs("      </iotune>\n", fp);
}
