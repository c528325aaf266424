/* Reading and writing the tuning elements of QEMU domain XML (see
 * domain_tune.h), strict as the rest of domain_xml.c: anything outside
 * the subset is CONFIG_UNSUPPORTED naming it. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

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
const char *const rv_qemu_numa_modes[] = { "strict", "preferred", "interleave", "restrictive",
                                           NULL };
static const char *const mem_names[RV_QEMU_MEM_LIMITS] = { "hard_limit", "soft_limit",
                                                           "swap_hard_limit" };

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

rv_qemu_tune *rv_qemu_tune_new(void)
{
    rv_qemu_tune *t = calloc(1, sizeof(*t));
    if (t)
        t->numa_mode = -1;
    return t;
}

void rv_qemu_tune_free(rv_qemu_tune *t)
{
    if (!t)
        return;
    for (int i = 0; i < RV_QEMU_TUNE_MAX_VCPUS; i++)
        free(t->vcpupin[i]);
    free(t->emulatorpin);
    free(t->numa_nodeset);
    free(t);
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

/* A cpu or node list attribute, written back in its canonical form. */
static int cpulist_attr(const xmlNode *n, const char *name, char **out, rv_err *err)
{
    char *s = rv_qx_attr(n, name);
    unsigned char *map;
    size_t len;
    if (!s)
        return xml_fail(err, RV_ERR_XML_ERROR, "<%s> has no %s", name_of(n), name);
    rv_err perr = { 0 };
    if (rv_tune_bitmap_parse(s, &map, &len, &perr) < 0 || rv_tune_bitmap_empty(map, len)) {
        if (!rv_err_is_set(&perr))
            free(map);
        rv_err_clear(&perr);
        xml_fail(err, RV_ERR_XML_ERROR, "invalid %s '%s'", name, s);
        free(s);
        return -1;
    }
    free(s);
    free(*out);
    *out = rv_tune_bitmap_format(map, len);
    free(map);
    if (!*out) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    return 0;
}

static int parse_memtune(const xmlNode *n, rv_qemu_tune *t, rv_err *err)
{
    const xmlNode *c = NULL;
    int more;
    while ((more = rv_qx_next_child(n, &c, err)) > 0) {
        int k = rv_qx_word_index(name_of(c), mem_names);
        if (k < 0)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "memtune");
        if (rv_qx_parse_memory(c, &t->mem[k], err) < 0)
            return -1;
    }
    return more;
}

static int parse_cputune(const xmlNode *n, rv_qemu_tune *t, rv_err *err)
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
            if (bad || cpulist_attr(c, "cpuset", &t->vcpupin[v], err) < 0)
                return -1;
        } else if (strcmp(name_of(c), "emulatorpin") == 0) {
            if (rv_qx_empty_element(c, emulatorpin_attrs, err) < 0 ||
                cpulist_attr(c, "cpuset", &t->emulatorpin, err) < 0)
                return -1;
        } else {
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <%s> in <%s>",
                            name_of(c), "cputune");
        }
    }
    return more;
}

static int parse_numatune(const xmlNode *n, rv_qemu_tune *t, rv_err *err)
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
        t->numa_mode = mode ? rv_qx_attr_word(c, "mode", rv_qemu_numa_modes, err) : 0;
        free(mode);
        if (t->numa_mode < 0)
            return -1;
        char *nodeset = rv_qx_attr(c, "nodeset");
        free(nodeset);
        if (!nodeset)
            return xml_fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                            "unsupported <numatune> without a nodeset");
        if (cpulist_attr(c, "nodeset", &t->numa_nodeset, err) < 0)
            return -1;
    }
    return more;
}

int rv_qemu_tune_parse(const xmlNode *n, rv_qemu_tune **tune, rv_err *err)
{
    static const char *const none[] = { NULL };
    if (!*tune && !(*tune = rv_qemu_tune_new())) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    rv_qemu_tune *t = *tune;
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

int rv_qemu_tune_check(const rv_qemu_tune *t, unsigned vcpus, rv_err *err)
{
    for (unsigned v = vcpus; t && v < RV_QEMU_TUNE_MAX_VCPUS; v++)
        if (t->vcpupin[v]) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                       "vcpupin for vcpu %u, but the domain has %u vcpus", v, vcpus);
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

void rv_qemu_tune_format_memory(FILE *fp, const rv_qemu_tune *t)
{
    if (!t)
        return;
    if (t->blkio_weight)
        fprintf(fp, "  <blkiotune>\n    <weight>%u</weight>\n  </blkiotune>\n", t->blkio_weight);
    if (t->mem[0] || t->mem[1] || t->mem[2]) {
        fputs("  <memtune>\n", fp);
        for (int k = 0; k < RV_QEMU_MEM_LIMITS; k++)
            if (t->mem[k])
                fprintf(fp, "    <%s unit='KiB'>%llu</%s>\n", mem_names[k], t->mem[k],
                        mem_names[k]);
        fputs("  </memtune>\n", fp);
    }
}

void rv_qemu_tune_format_cpu(FILE *fp, const rv_qemu_tune *t)
{
    if (!t)
        return;
    bool any = t->cpu_shares || t->emulatorpin;
    for (int v = 0; v < RV_QEMU_TUNE_MAX_VCPUS && !any; v++)
        any = t->vcpupin[v] != NULL;
    if (any) {
        fputs("  <cputune>\n", fp);
        if (t->cpu_shares)
            fprintf(fp, "    <shares>%llu</shares>\n", t->cpu_shares);
        for (int v = 0; v < RV_QEMU_TUNE_MAX_VCPUS; v++)
            if (t->vcpupin[v])
                fprintf(fp, "    <vcpupin vcpu='%d' cpuset='%s'/>\n", v, t->vcpupin[v]);
        if (t->emulatorpin)
            fprintf(fp, "    <emulatorpin cpuset='%s'/>\n", t->emulatorpin);
        fputs("  </cputune>\n", fp);
    }
    if (t->numa_mode >= 0 && t->numa_nodeset)
        fprintf(fp, "  <numatune>\n    <memory mode='%s' nodeset='%s'/>\n  </numatune>\n",
                rv_qemu_numa_modes[t->numa_mode], t->numa_nodeset);
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
