/* The domain-wide tuning model both drivers keep: see domain_tune.h. */
#include <stdlib.h>
#include <string.h>

#include "server/drivers/conf/domain_tune.h"
#include "server/drivers/conf/xml_write.h"
#include "server/drivers/tune_params.h"

enum {
    TYPED_PARAM_STRING_OKAY = 4,
    /* What a client can make a domain hold: device paths and their count. */
    MAX_BLKIO_DEVICES = 256, MAX_PATH_LEN = 4096,
};

const char *const rv_tune_numa_modes[] = { "strict", "preferred", "interleave", "restrictive",
                                           NULL };
enum { NUMA_MODES = 4 };

const rv_tune_field rv_tune_memory_fields[3] = {
    { "hard_limit", RV_TYPED_PARAM_ULLONG }, { "soft_limit", RV_TYPED_PARAM_ULLONG },
    { "swap_hard_limit", RV_TYPED_PARAM_ULLONG },
};
const rv_tune_field rv_tune_blkio_fields[6] = {
    { "weight", RV_TYPED_PARAM_UINT },
    { "device_weight", RV_TYPED_PARAM_STRING },
    { "device_read_iops_sec", RV_TYPED_PARAM_STRING },
    { "device_write_iops_sec", RV_TYPED_PARAM_STRING },
    { "device_read_bytes_sec", RV_TYPED_PARAM_STRING },
    { "device_write_bytes_sec", RV_TYPED_PARAM_STRING },
};
const rv_tune_field rv_tune_numa_fields[2] = {
    { "numa_mode", RV_TYPED_PARAM_INT }, { "numa_nodeset", RV_TYPED_PARAM_STRING },
};

static int oom(int from, rv_err *err)
{
    return rv_err_fail(err, from, RV_ERR_NO_MEMORY, "out of memory");
}

rv_domain_tune *rv_domain_tune_new(void)
{
    rv_domain_tune *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    for (int k = 0; k < RV_TUNE_MEM_LIMITS; k++)
        t->mem[k] = RV_TUNE_UNLIMITED;
    t->numa_mode = -1;
    return t;
}

rv_domain_tune *rv_domain_tune_of(rv_domain_tune **t, int from, rv_err *err)
{
    if (!*t && !(*t = rv_domain_tune_new()))
        oom(from, err);
    return *t;
}

void rv_domain_tune_free(rv_domain_tune *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ndevs; i++)
        free(t->devs[i].path);
    free(t->devs);
    for (size_t i = 0; i < t->npins; i++)
        free(t->pins[i].map);
    free(t->pins);
    free(t->emulator.map);
    free(t->numa_nodeset);
    for (size_t i = 0; i < t->niothreads; i++)
        free(t->iothreads[i].pin.map);
    free(t->iothreads);
    free(t);
}

static int copy_mask(rv_tune_cpumask *to, const unsigned char *map, size_t len)
{
    unsigned char *copy = len ? malloc(len) : NULL;
    if (len && !copy)
        return -1;
    if (len)
        memcpy(copy, map, len);
    free(to->map);
    /* An empty map is still a pinning: keep a byte so that map is set. */
    to->map = copy ? copy : calloc(1, 1);
    to->len = len;
    return to->map ? 0 : -1;
}

rv_domain_tune *rv_domain_tune_dup(const rv_domain_tune *t)
{
    rv_domain_tune *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    *n = *t;
    n->devs = NULL, n->ndevs = 0, n->pins = NULL, n->npins = 0;
    n->emulator = (rv_tune_cpumask){ NULL, 0 };
    n->iothreads = NULL, n->niothreads = 0;
    n->numa_nodeset = t->numa_nodeset ? strdup(t->numa_nodeset) : NULL;
    int bad = t->numa_nodeset && !n->numa_nodeset;
    if ((t->ndevs && !(n->devs = calloc(t->ndevs, sizeof(*n->devs)))) ||
        (t->npins && !(n->pins = calloc(t->npins, sizeof(*n->pins)))) ||
        (t->niothreads && !(n->iothreads = calloc(t->niothreads, sizeof(*n->iothreads)))))
        bad = 1;
    for (size_t i = 0; !bad && i < t->ndevs; i++, n->ndevs++) {
        n->devs[i] = t->devs[i];
        bad = !(n->devs[i].path = strdup(t->devs[i].path));
    }
    for (size_t i = 0; !bad && i < t->npins; i++, n->npins++)
        bad = t->pins[i].map && copy_mask(&n->pins[i], t->pins[i].map, t->pins[i].len) < 0;
    if (!bad && t->emulator.map)
        bad = copy_mask(&n->emulator, t->emulator.map, t->emulator.len) < 0;
    for (size_t i = 0; !bad && i < t->niothreads; i++, n->niothreads++) {
        n->iothreads[i] = t->iothreads[i];
        n->iothreads[i].pin = (rv_tune_cpumask){ NULL, 0 };
        bad = t->iothreads[i].pin.map &&
              copy_mask(&n->iothreads[i].pin, t->iothreads[i].pin.map, t->iothreads[i].pin.len) < 0;
    }
    if (bad) {
        rv_domain_tune_free(n);
        return NULL;
    }
    return n;
}

/* ================================================================ values */

void rv_domain_tune_set_limit(rv_domain_tune *t, const rv_tune_rules *rules, int which,
                              unsigned long long kib)
{
    t->mem[which] = kib < RV_TUNE_UNLIMITED && (kib || !rules->limits_truncate)
                        ? kib : RV_TUNE_UNLIMITED;
}

static int blkio_parse_error(const char *kind, const char *s, rv_err *err)
{
    return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                       "invalid argument: unable to parse blkio device '%s' '%s'", kind, s);
}

/* "path,value,path,value" of kind merged into t (an existing path takes
 * the new value, a new one is added unless its value is 0). */
static int blkio_merge(rv_domain_tune *t, int kind, const char *s, int from, rv_err *err)
{
    const char *name = rv_tune_blkio_names[kind + 1];
    size_t commas = 0;
    if (!*s)
        return 0;
    for (const char *q = s; *q; q++)
        commas += *q == ',';
    if (!(commas & 1))
        return blkio_parse_error(name, s, err);
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        if (!comma)
            return blkio_parse_error(name, s, err);
        size_t plen = (size_t)(comma - p);
        const char *num = comma + 1;
        char *end;
        unsigned long long v = 0;
        int ok = *num >= '0' && *num <= '9';
        if (ok) {
            v = strtoull(num, &end, 10);
            /* weights and iops are unsigned ints in libvirt */
            ok = (kind >= 3 || v <= 0xffffffffULL) && (*end == ',' || *end == '\0');
        }
        if (!ok)
            return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                               "invalid argument: invalid value '%s' for parameter '%s' of "
                               "device '%.*s'", num, name, (int)plen, p);
        rv_tune_blkio_dev *dev = NULL;
        for (size_t i = 0; i < t->ndevs && !dev; i++)
            if (strlen(t->devs[i].path) == plen && strncmp(t->devs[i].path, p, plen) == 0)
                dev = &t->devs[i];
        if (!dev && v && (t->ndevs == MAX_BLKIO_DEVICES || plen > MAX_PATH_LEN))
            return rv_err_fail(err, from, RV_ERR_INVALID_ARG,
                               "invalid argument: at most %d blkio devices of paths up to %d "
                               "bytes", MAX_BLKIO_DEVICES, MAX_PATH_LEN);
        if (!dev && v) {
            rv_tune_blkio_dev *grown = realloc(t->devs, (t->ndevs + 1) * sizeof(*grown));
            if (!grown)
                return oom(from, err);
            t->devs = grown;
            dev = &t->devs[t->ndevs];
            memset(dev, 0, sizeof(*dev));
            if (!(dev->path = strndup(p, plen)))
                return oom(from, err);
            t->ndevs++;
        }
        if (dev)
            dev->val[kind] = v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

int rv_domain_tune_set_device(rv_domain_tune *t, const rv_tune_rules *rules, const char *path,
                              int kind, unsigned long long value, rv_err *err)
{
    if (strchr(path, ','))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                           "XML error: a blkio device path with a comma: %s", path);
    size_t len = strlen(path) + 24;
    char *s = malloc(len);
    if (!s)
        return oom(rules->from, err);
    snprintf(s, len, "%s,%llu", path, value);
    int rc = blkio_merge(t, kind, s, rules->from, err);
    free(s);
    return rc;
}

int rv_domain_tune_pin(rv_domain_tune *t, int vcpu, const unsigned char *map, size_t len,
                       int from, rv_err *err)
{
    rv_tune_cpumask *m = &t->emulator;
    if (vcpu >= 0) {
        size_t need = (size_t)vcpu + 1;
        if (need > t->npins) {
            rv_tune_cpumask *grown = realloc(t->pins, need * sizeof(*grown));
            if (!grown)
                return oom(from, err);
            memset(grown + t->npins, 0, (need - t->npins) * sizeof(*grown));
            t->pins = grown;
            t->npins = need;
        }
        m = &t->pins[vcpu];
    }
    return copy_mask(m, map, len) < 0 ? oom(from, err) : 0;
}

int rv_domain_tune_iothread_find(const rv_domain_tune *t, unsigned id)
{
    for (size_t i = 0; t && i < t->niothreads; i++)
        if (t->iothreads[i].id == id)
            return (int)i;
    return -1;
}

int rv_domain_tune_iothread_add(rv_domain_tune *t, unsigned id, bool autofill, int from,
                                rv_err *err)
{
    rv_tune_iothread *grown = realloc(t->iothreads, (t->niothreads + 1) * sizeof(*grown));
    if (!grown)
        return oom(from, err);
    t->iothreads = grown;
    t->iothreads[t->niothreads++] =
        (rv_tune_iothread){ .id = id, .autofill = autofill, .pool_min = -1, .pool_max = -1 };
    return 0;
}

void rv_domain_tune_iothread_del(rv_domain_tune *t, size_t i)
{
    free(t->iothreads[i].pin.map);
    memmove(&t->iothreads[i], &t->iothreads[i + 1],
            (t->niothreads - i - 1) * sizeof(t->iothreads[0]));
    t->niothreads--;
    /* The ids left are no longer 1..N: written by id from now on, as
     * libvirt writes them. */
    for (size_t k = 0; k < t->niothreads; k++)
        t->iothreads[k].autofill = false;
}

int rv_domain_tune_iothreads_fill(rv_domain_tune *t, size_t count, int from, rv_err *err)
{
    for (unsigned id = 1; t->niothreads < count; id++)
        if (rv_domain_tune_iothread_find(t, id) < 0 &&
            rv_domain_tune_iothread_add(t, id, true, from, err) < 0)
            return -1;
    return 0;
}

int rv_domain_tune_iothread_pin(rv_domain_tune *t, size_t i, const unsigned char *map, size_t len,
                                int from, rv_err *err)
{
    if (copy_mask(&t->iothreads[i].pin, map, len) < 0)
        return oom(from, err);
    t->iothreads[i].autofill = false;
    return 0;
}

int rv_domain_tune_pin_list(rv_domain_tune *t, int vcpu, const char *list, int from,
                            rv_err *err)
{
    unsigned char *map;
    size_t len;
    if (rv_tune_bitmap_parse(list, &map, &len, err) < 0)
        return -1;
    int rc = rv_domain_tune_pin(t, vcpu, map, len, from, err);
    free(map);
    return rc;
}

const rv_tune_cpumask *rv_domain_tune_pin_of(const rv_domain_tune *t, int vcpu)
{
    const rv_tune_cpumask *m = !t ? NULL : vcpu < 0 ? &t->emulator
                             : (size_t)vcpu < t->npins ? &t->pins[vcpu] : NULL;
    return m && m->map ? m : NULL;
}

/* ================================================================ XML */

static bool device_set(const rv_tune_blkio_dev *dev)
{
    for (int k = 0; k < RV_TUNE_BLKIO_KINDS; k++)
        if (dev->val[k])
            return true;
    return false;
}

void rv_domain_tune_format_memory(FILE *fp, const rv_domain_tune *t)
{
    static const char *const tags[RV_TUNE_BLKIO_KINDS] = {
        "weight", "read_iops_sec", "write_iops_sec", "read_bytes_sec", "write_bytes_sec",
    };
    if (!t)
        return;
    bool devs = false;
    for (size_t i = 0; i < t->ndevs; i++)
        devs |= device_set(&t->devs[i]);
    if (t->blkio_weight || devs) {
        fputs("  <blkiotune>\n", fp);
        if (t->blkio_weight)
            fprintf(fp, "    <weight>%u</weight>\n", t->blkio_weight);
        for (size_t i = 0; i < t->ndevs; i++) {
            if (!device_set(&t->devs[i]))
                continue;
            fputs("    <device>\n      <path>", fp);
            rv_xml_put_escaped(fp, t->devs[i].path);
            fputs("</path>\n", fp);
            for (int k = 0; k < RV_TUNE_BLKIO_KINDS; k++)
                if (t->devs[i].val[k])
                    fprintf(fp, "      <%s>%llu</%s>\n", tags[k], t->devs[i].val[k], tags[k]);
            fputs("    </device>\n", fp);
        }
        fputs("  </blkiotune>\n", fp);
    }
    bool limits = false;
    for (int k = 0; k < RV_TUNE_MEM_LIMITS; k++)
        limits |= t->mem[k] < RV_TUNE_UNLIMITED;
    if (!limits)
        return;
    fputs("  <memtune>\n", fp);
    for (int k = 0; k < RV_TUNE_MEM_LIMITS; k++)
        if (t->mem[k] < RV_TUNE_UNLIMITED)
            fprintf(fp, "    <%s unit='KiB'>%llu</%s>\n", rv_tune_memory_names[k], t->mem[k],
                    rv_tune_memory_names[k]);
    fputs("  </memtune>\n", fp);
}

/* <vcpupin> or <emulatorpin> (vcpu -1) when m is set. */
static void format_pin(FILE *fp, const rv_tune_cpumask *m, long vcpu)
{
    char *list = m->map ? rv_tune_bitmap_format(m->map, m->len) : NULL;
    if (list && vcpu >= 0)
        fprintf(fp, "    <vcpupin vcpu='%ld' cpuset='%s'/>\n", vcpu, list);
    else if (list)
        fprintf(fp, "    <emulatorpin cpuset='%s'/>\n", list);
    free(list);
}

void rv_domain_tune_format_iothreads(FILE *fp, const rv_domain_tune *t)
{
    if (!t || !t->niothreads)
        return;
    fprintf(fp, "  <iothreads>%zu</iothreads>\n", t->niothreads);
    bool named = false;
    for (size_t i = 0; i < t->niothreads && !named; i++)
        named = !t->iothreads[i].autofill || t->iothreads[i].pool_min >= 0 ||
                t->iothreads[i].pool_max >= 0;
    if (!named)
        return;
    fputs("  <iothreadids>\n", fp);
    for (size_t i = 0; i < t->niothreads; i++) {
        const rv_tune_iothread *io = &t->iothreads[i];
        fprintf(fp, "    <iothread id='%u'", io->id);
        if (io->pool_min >= 0)
            fprintf(fp, " thread_pool_min='%d'", io->pool_min);
        if (io->pool_max >= 0)
            fprintf(fp, " thread_pool_max='%d'", io->pool_max);
        fputs("/>\n", fp);
    }
    fputs("  </iothreadids>\n", fp);
}

void rv_domain_tune_format_cpu(FILE *fp, const rv_domain_tune *t, bool placement_auto)
{
    bool any = t && (t->cpu_shares || t->emulator.map);
    for (size_t v = 0; t && v < t->npins && !any; v++)
        any = t->pins[v].map != NULL;
    for (size_t i = 0; t && i < t->niothreads && !any; i++)
        any = t->iothreads[i].pin.map != NULL;
    if (any) {
        fputs("  <cputune>\n", fp);
        if (t->cpu_shares)
            fprintf(fp, "    <shares>%llu</shares>\n", t->cpu_shares);
        for (size_t v = 0; v < t->npins; v++)
            format_pin(fp, &t->pins[v], (long)v);
        format_pin(fp, &t->emulator, -1);
        for (size_t i = 0; i < t->niothreads; i++) {
            char *list = t->iothreads[i].pin.map
                             ? rv_tune_bitmap_format(t->iothreads[i].pin.map, t->iothreads[i].pin.len)
                             : NULL;
            if (list)
                fprintf(fp, "    <iothreadpin iothread='%u' cpuset='%s'/>\n", t->iothreads[i].id,
                        list);
            free(list);
        }
        fputs("  </cputune>\n", fp);
    }
    int mode = t && t->numa_mode >= 0 ? t->numa_mode : 0;
    if (t && t->numa_mode >= 0 && t->numa_nodeset)
        fprintf(fp, "  <numatune>\n    <memory mode='%s' nodeset='%s'/>\n  </numatune>\n",
                rv_tune_numa_modes[mode], t->numa_nodeset);
    else if (placement_auto)
        fprintf(fp, "  <numatune>\n    <memory mode='%s' placement='auto'/>\n  </numatune>\n",
                rv_tune_numa_modes[mode]);
}

/* ================================================================ getters */

/* A device list of kind ("path,value,..."), "" when none; NULL: no memory. */
static char *device_list(const rv_domain_tune *t, int kind)
{
    size_t cap = 1;
    for (size_t i = 0; t && i < t->ndevs; i++)
        cap += strlen(t->devs[i].path) + 24;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; t && i < t->ndevs; i++)
        if (t->devs[i].val[kind])
            used += (size_t)snprintf(out + used, cap - used, "%s%s,%llu", used ? "," : "",
                                     t->devs[i].path, t->devs[i].val[kind]);
    return out;
}

int rv_domain_tune_count(int kind)
{
    return kind == RV_TUNE_GET_MEMORY ? 3 : kind == RV_TUNE_GET_BLKIO ? 6 : 2;
}

int rv_domain_tune_get(const rv_domain_tune *t, int kind, int nparams, unsigned int flags,
                       rv_typed_param **val, unsigned int *len, int from, rv_err *err)
{
    const rv_tune_field *fields = kind == RV_TUNE_GET_MEMORY ? rv_tune_memory_fields
                                : kind == RV_TUNE_GET_BLKIO ? rv_tune_blkio_fields
                                : rv_tune_numa_fields;
    /* A client that cannot take strings gets the first (a number) only,
     * as from libvirtd. */
    int want = kind == RV_TUNE_GET_MEMORY || (flags & TYPED_PARAM_STRING_OKAY) ? nparams : 1;
    rv_typed_param *p = rv_tune_param_list(want, rv_domain_tune_count(kind), len, err);
    if (!(*val = p))
        return -1;
    for (unsigned int i = 0; i < *len; i++) {
        rv_typed_param_value *v = &p[i].value;
        if (rv_tune_param_name(&p[i], fields[i].name, fields[i].type, err) < 0)
            return -1;
        if (kind == RV_TUNE_GET_MEMORY)
            v->rv_typed_param_value_u.ul = t ? t->mem[i] : RV_TUNE_UNLIMITED;
        else if (i == 0 && kind == RV_TUNE_GET_BLKIO)
            v->rv_typed_param_value_u.ui = t ? t->blkio_weight : 0;
        else if (i == 0)
            v->rv_typed_param_value_u.i = t && t->numa_mode >= 0 ? t->numa_mode : 0;
        else if (!(v->rv_typed_param_value_u.s =
                       kind == RV_TUNE_GET_BLKIO ? device_list(t, (int)i - 1)
                       : strdup(t && t->numa_nodeset ? t->numa_nodeset : "")))
            return oom(from, err);
    }
    return 0;
}

/* ================================================================ setters */

int rv_domain_tune_set_memory(rv_domain_tune *t, const rv_domain_tune *check,
                              const rv_typed_param *p, unsigned int n, const rv_tune_rules *rules,
                              rv_err *err)
{
    const rv_typed_param *given[RV_TUNE_MEM_LIMITS];
    unsigned long long v[RV_TUNE_MEM_LIMITS];
    for (int k = 0; k < RV_TUNE_MEM_LIMITS; k++) {
        given[k] = rv_tune_param_find(p, n, rv_tune_memory_names[k]);
        v[k] = given[k] ? given[k]->value.rv_typed_param_value_u.ul
                        : check ? check->mem[k] : RV_TUNE_UNLIMITED;
    }
    if ((given[RV_TUNE_MEM_HARD] || given[RV_TUNE_MEM_SWAP]) &&
        v[RV_TUNE_MEM_HARD] > v[RV_TUNE_MEM_SWAP])
        return rv_err_fail(err, rules->from, RV_ERR_INVALID_ARG,
                           "invalid argument: memory hard_limit tunable value must be lower "
                           "than or equal to swap_hard_limit");
    for (int k = 0; k < RV_TUNE_MEM_LIMITS; k++)
        if (given[k] && rules->limits_truncate)
            rv_domain_tune_set_limit(t, rules, k, v[k]);
        else if (given[k])
            t->mem[k] = v[k];
    return 0;
}

int rv_domain_tune_set_blkio(rv_domain_tune *t, const rv_typed_param *p, unsigned int n,
                             const rv_tune_rules *rules, rv_err *err)
{
    int rc = 0;
    for (unsigned int i = 0; i < n; i++) {
        const rv_typed_param_value *v = &p[i].value;
        if (strcmp(p[i].field, "weight") == 0) {
            unsigned int w = v->rv_typed_param_value_u.ui;
            if (rules->blkio_weight_only && (w < 100 || w > 1000))
                return rv_err_fail(err, rules->from, RV_ERR_INVALID_ARG,
                                   "invalid argument: out of blkio weight range.");
            t->blkio_weight = w;
            continue;
        }
        if (rules->blkio_weight_only) {
            if (*v->rv_typed_param_value_u.s)
                return rv_err_fail(err, rules->from, RV_ERR_OPERATION_UNSUPPORTED,
                                   "Operation not supported: remvirt's QEMU driver keeps the "
                                   "blkio weight only, not %s", p[i].field);
            continue;
        }
        for (int k = 0; k < RV_TUNE_BLKIO_KINDS; k++)
            if (strcmp(p[i].field, rv_tune_blkio_names[k + 1]) == 0 &&
                blkio_merge(t, k, v->rv_typed_param_value_u.s, rules->from, err) < 0)
                rc = -1;
    }
    return rc;
}

int rv_domain_tune_set_numa(rv_domain_tune *t, const rv_typed_param *p, unsigned int n, bool live,
                            bool placement_auto, const rv_tune_rules *rules, rv_err *err)
{
    int mode = -1;
    char *nodeset = NULL;
    for (unsigned int i = 0; i < n; i++) {
        if (strcmp(p[i].field, "numa_mode") == 0) {
            mode = p[i].value.rv_typed_param_value_u.i;
            if (mode < 0 || mode >= NUMA_MODES) {
                free(nodeset);
                return rv_err_fail(err, rules->from, RV_ERR_INVALID_ARG,
                                   "invalid argument: unsupported numatune mode: '%d'", mode);
            }
            continue;
        }
        const char *s = p[i].value.rv_typed_param_value_u.s;
        unsigned char *map;
        size_t len;
        free(nodeset);
        if (rv_tune_bitmap_parse(s, &map, &len, err) < 0)
            return -1;
        int empty = rv_tune_bitmap_empty(map, len);
        nodeset = empty ? NULL : rv_tune_bitmap_format(map, len);
        free(map);
        if (empty)
            return rv_err_fail(err, rules->from, RV_ERR_OPERATION_INVALID,
                               "Requested operation is not valid: Invalid nodeset of "
                               "'numatune': %s", s);
        if (!nodeset)
            return oom(rules->from, err);
    }
    if (live && mode != -1 && t->numa_mode >= 0 && t->numa_mode != mode) {
        free(nodeset);
        return rv_err_fail(err, rules->from, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: can't change numatune mode "
                           "for running domain");
    }
    if (mode == -1 && !nodeset)
        return 0;
    /* libvirt's order: the mode is taken before the nodeset is found
     * missing, so a refused call still leaves it. */
    if (mode != -1 || t->numa_mode < 0)
        t->numa_mode = mode != -1 ? mode : 0;
    if (nodeset) {
        free(t->numa_nodeset);
        t->numa_nodeset = nodeset;
    } else if (!t->numa_nodeset && !placement_auto) {
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: nodeset for NUMA memory tuning must be "
                           "set if 'placement' is 'static'");
    }
    return 0;
}
