/* The test driver's tuning setters.  What libvirt 9.0's test driver keeps
 * is kept here too, per definition (a running persistent domain's live
 * definition is separated from its persistent one on its first live
 * change, as libvirt copies the definition at start), so that the getters
 * (test_stats.c) read it back; the scheduler weight is checked and
 * dropped, as there.  dumpxml shows the domain-wide tuning (<blkiotune>,
 * <memtune>, <cputune>, <numatune>); a new definition starts without any
 * (its tuning elements are not read yet). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_stats.h"
#include "server/drivers/test/test_tune.h"
#include "server/drivers/tune_params.h"
#include "server/drivers/conf/xml_write.h"

#define MEMORY_UNLIMITED 9007199254740991ULL   /* libvirt's 2^53 - 1 */
#define IOTUNE_LIMIT 1000000000000000ULL       /* the test driver's largest limit */
enum {
    AFFECT_LIVE = 1, AFFECT_CONFIG = 2, VCPU_MAXIMUM = 4, TIME_SYNC = 1,
    TEST_MAX_VCPUS = 32, NUMA_MODES = 4, BLKIO_KINDS = 5,
    /* What a client can make a domain hold: device paths and their count,
     * a throttle group's name. */
    MAX_BLKIO_DEVICES = 256, MAX_PATH_LEN = 4096, MAX_GROUP_LEN = 255,
};

typedef struct blkio_dev {
    char *path;
    unsigned long long val[BLKIO_KINDS];
} blkio_dev;
typedef struct iotune {
    char *target;
    unsigned long long val[TEST_IOTUNE_NUMBERS];
    char *group;
} iotune;
typedef struct bandwidth {
    int iface;
    int has_in, has_out;
    unsigned int val[7];
} bandwidth;
typedef struct cpumask {
    unsigned char *map;
    size_t len;
} cpumask;

struct test_tune {
    unsigned long long mem[3];
    unsigned int blkio_weight;
    blkio_dev *devs;
    size_t ndevs;
    int numa_specified, numa_mode;
    char *numa_nodeset;             /* list form; NULL: none */
    bandwidth *bw;
    size_t nbw;
    iotune *io;
    size_t nio;
    cpumask *pins;                  /* by vcpu */
    size_t npins;
    cpumask emulator;
};

#define fail_oom test_fail_oom
#define check_flags test_check_flags

void test_tune_free(test_tune *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ndevs; i++)
        free(t->devs[i].path);
    free(t->devs);
    free(t->numa_nodeset);
    free(t->bw);
    for (size_t i = 0; i < t->nio; i++) {
        free(t->io[i].target);
        free(t->io[i].group);
    }
    free(t->io);
    for (size_t i = 0; i < t->npins; i++)
        free(t->pins[i].map);
    free(t->pins);
    free(t->emulator.map);
    free(t);
}

static char *dup_or_null(const char *s, int *bad)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *bad = 1;
    return d;
}

static int copy_mask(cpumask *to, const cpumask *from)
{
    to->len = from->len;
    to->map = from->len ? malloc(from->len) : NULL;
    if (from->len && !to->map)
        return -1;
    if (from->len)
        memcpy(to->map, from->map, from->len);
    return 0;
}

static test_tune *tune_dup(const test_tune *t)
{
    int bad = 0;
    test_tune *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    *n = *t;
    n->devs = NULL, n->ndevs = 0, n->bw = NULL, n->nbw = 0, n->io = NULL, n->nio = 0;
    n->pins = NULL, n->npins = 0, n->emulator.map = NULL, n->emulator.len = 0;
    n->numa_nodeset = dup_or_null(t->numa_nodeset, &bad);
    if ((t->ndevs && !(n->devs = calloc(t->ndevs, sizeof(*n->devs)))) ||
        (t->nbw && !(n->bw = calloc(t->nbw, sizeof(*n->bw)))) ||
        (t->nio && !(n->io = calloc(t->nio, sizeof(*n->io)))) ||
        (t->npins && !(n->pins = calloc(t->npins, sizeof(*n->pins)))))
        bad = 1;
    for (size_t i = 0; !bad && i < t->ndevs; i++, n->ndevs++) {
        n->devs[i] = t->devs[i];
        n->devs[i].path = dup_or_null(t->devs[i].path, &bad);
    }
    if (!bad && t->nbw) {
        memcpy(n->bw, t->bw, t->nbw * sizeof(*n->bw));
        n->nbw = t->nbw;
    }
    for (size_t i = 0; !bad && i < t->nio; i++, n->nio++) {
        n->io[i] = t->io[i];
        n->io[i].target = dup_or_null(t->io[i].target, &bad);
        n->io[i].group = dup_or_null(t->io[i].group, &bad);
    }
    for (size_t i = 0; !bad && i < t->npins; i++, n->npins++)
        bad = copy_mask(&n->pins[i], &t->pins[i]) < 0;
    if (!bad)
        bad = copy_mask(&n->emulator, &t->emulator) < 0;
    if (bad) {
        test_tune_free(n);
        return NULL;
    }
    return n;
}

/* def's tuning, made when it has none yet. */
static test_tune *tune_of(rv_test_def *def, rv_err *err)
{
    if (!def->tune) {
        if (!(def->tune = calloc(1, sizeof(*def->tune)))) {
            fail_oom(err);
            return NULL;
        }
        for (int i = 0; i < 3; i++)
            def->tune->mem[i] = MEMORY_UNLIMITED;
    }
    return def->tune;
}

/* A copy of def, as libvirt copies one: written out and read back. */
static rv_test_def *def_copy(const rv_test_def *def, rv_err *err)
{
    rv_test_def *copy = NULL;
    char *xml = rv_test_def_format(def, -1);
    if (!xml) {
        fail_oom(err);
        return NULL;
    }
    int rc = rv_test_def_parse(xml, &copy, err);
    free(xml);
    if (rc < 0)
        return NULL;
    /* What the XML holds was read back; the rest is copied over it. */
    test_tune_free(copy->tune);
    copy->tune = NULL;
    if (def->tune && !(copy->tune = tune_dup(def->tune))) {
        rv_test_def_free(copy);
        fail_oom(err);
        return NULL;
    }
    return copy;
}

static test_dom *dom_of(const rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire);
    return test_dom_get(&ref, err);
}

/* A running persistent domain gets a live definition of its own. */
static int split_live(test_dom *d, rv_err *err)
{
    if (d->id < 0 || !d->persistent || d->next_def)
        return 0;
    rv_test_def *copy = def_copy(d->def, err);
    if (!copy)
        return -1;
    d->next_def = d->def;
    d->def = copy;
    return 0;
}

/* libvirt's choice of definitions for flags: *live and/or *config (either
 * may be NULL); exclusive: live and config together refused. */
static int get_defs(test_dom *d, unsigned int flags, int exclusive, rv_test_def **live,
                    rv_test_def **config, rv_err *err)
{
    int active = d->id >= 0;
    if (exclusive && (flags & AFFECT_LIVE) && (flags & AFFECT_CONFIG))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: Flags 'VIR_DOMAIN_AFFECT_LIVE' and "
                           "'VIR_DOMAIN_AFFECT_CONFIG' are mutually exclusive");
    if (!(flags & (AFFECT_LIVE | AFFECT_CONFIG)))
        flags |= active ? AFFECT_LIVE : AFFECT_CONFIG;
    if ((flags & AFFECT_LIVE) && !active)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if ((flags & AFFECT_CONFIG) && !d->persistent)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: transient domains do not have "
                           "any persistent config");
    if (split_live(d, err) < 0)
        return -1;
    *live = (flags & AFFECT_LIVE) ? d->def : NULL;
    *config = (flags & AFFECT_CONFIG) ? (d->next_def ? d->next_def : d->def) : NULL;
    return 0;
}

/* The one definition flags name; *is_live says which. */
static rv_test_def *one_def(test_dom *d, unsigned int flags, int *is_live, rv_err *err)
{
    rv_test_def *live, *config;
    if (get_defs(d, flags, 1, &live, &config, err) < 0)
        return NULL;
    if (is_live)
        *is_live = live != NULL;
    return live ? live : config;
}

/* ================================================================ read back */

unsigned long long test_tune_mem(const rv_test_def *def, int which)
{
    return def->tune ? def->tune->mem[which] : MEMORY_UNLIMITED;
}

unsigned int test_tune_blkio_weight(const rv_test_def *def)
{
    return def->tune ? def->tune->blkio_weight : 0;
}

char *test_tune_blkio_devices(const rv_test_def *def, int kind)
{
    size_t cap = 1;
    const test_tune *t = def->tune;
    for (size_t i = 0; t && i < t->ndevs; i++)
        cap += strlen(t->devs[i].path) + 24;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; t && i < t->ndevs; i++) {
        if (!t->devs[i].val[kind])
            continue;
        used += (size_t)snprintf(out + used, cap - used, "%s%s,%llu", used ? "," : "",
                                 t->devs[i].path, t->devs[i].val[kind]);
    }
    return out;
}

int test_tune_numa_mode(const rv_test_def *def)
{
    return def->tune && def->tune->numa_specified ? def->tune->numa_mode : 0;
}

const char *test_tune_numa_nodeset(const rv_test_def *def)
{
    return def->tune && def->tune->numa_nodeset ? def->tune->numa_nodeset : "";
}

static bandwidth *find_bw(const test_tune *t, int iface)
{
    for (size_t i = 0; t && i < t->nbw; i++)
        if (t->bw[i].iface == iface)
            return &t->bw[i];
    return NULL;
}

void test_tune_bandwidth(const rv_test_def *def, int iface, unsigned int out[7])
{
    const bandwidth *b = find_bw(def->tune, iface);
    for (int i = 0; i < 7; i++)
        out[i] = b && (i < 4 ? b->has_in : b->has_out) ? b->val[i] : 0;
}

static iotune *find_io(const test_tune *t, const char *target)
{
    for (size_t i = 0; t && i < t->nio; i++)
        if (strcmp(t->io[i].target, target) == 0)
            return &t->io[i];
    return NULL;
}

const char *test_tune_iotune(const rv_test_def *def, const char *target,
                             unsigned long long out[TEST_IOTUNE_NUMBERS])
{
    const iotune *io = find_io(def->tune, target);
    for (int i = 0; i < TEST_IOTUNE_NUMBERS; i++)
        out[i] = io ? io->val[i] : 0;
    return io && io->group ? io->group : "";
}

const unsigned char *test_tune_vcpu_pin(const rv_test_def *def, unsigned int vcpu, size_t *len)
{
    const test_tune *t = def->tune;
    if (!t || vcpu >= t->npins || !t->pins[vcpu].map)
        return NULL;
    *len = t->pins[vcpu].len;
    return t->pins[vcpu].map;
}

const unsigned char *test_tune_emulator_pin(const rv_test_def *def, size_t *len)
{
    if (!def->tune || !def->tune->emulator.map)
        return NULL;
    *len = def->tune->emulator.len;
    return def->tune->emulator.map;
}

/* ================================================================ from the XML */

static int blkio_merge(test_tune *t, int kind, const char *s, rv_err *err);

int test_tune_set_mem(rv_test_def *def, int which, unsigned long long kib, rv_err *err)
{
    test_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    t->mem[which] = kib < MEMORY_UNLIMITED ? kib : MEMORY_UNLIMITED;
    return 0;
}

int test_tune_set_blkio_weight(rv_test_def *def, unsigned int weight, rv_err *err)
{
    test_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    t->blkio_weight = weight;
    return 0;
}

int test_tune_set_blkio_device(rv_test_def *def, const char *path, int kind,
                               unsigned long long value, rv_err *err)
{
    test_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    char num[24];
    snprintf(num, sizeof(num), "%llu", value);
    size_t len = strlen(path) + strlen(num) + 2;
    char *s = malloc(len);
    if (!s)
        return fail_oom(err);
    snprintf(s, len, "%s,%s", path, num);
    int rc = strchr(path, ',') ? rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                                             "XML error: a blkio device path with a comma: %s",
                                             path)
                               : blkio_merge(t, kind, s, err);
    free(s);
    return rc;
}

int test_tune_set_pin(rv_test_def *def, int vcpu, const char *list, rv_err *err)
{
    unsigned char *map;
    size_t len;
    test_tune *t;
    if (vcpu >= 0 && (unsigned int)vcpu >= def->vcpus)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                           "XML error: vcpupin for vcpu %d, the domain has %u", vcpu, def->vcpus);
    if (!(t = tune_of(def, err)) || rv_tune_bitmap_parse(list, &map, &len, err) < 0)
        return -1;
    cpumask *m = &t->emulator;
    if (vcpu >= 0) {
        if ((size_t)vcpu >= t->npins) {
            cpumask *grown = realloc(t->pins, ((size_t)vcpu + 1) * sizeof(*grown));
            if (!grown) {
                free(map);
                return fail_oom(err);
            }
            memset(grown + t->npins, 0, ((size_t)vcpu + 1 - t->npins) * sizeof(*grown));
            t->pins = grown;
            t->npins = (size_t)vcpu + 1;
        }
        m = &t->pins[vcpu];
    }
    free(m->map);
    m->map = map;
    m->len = len;
    return 0;
}

int test_tune_set_numa(rv_test_def *def, int mode, const char *nodeset, rv_err *err)
{
    test_tune *t = tune_of(def, err);
    unsigned char *map;
    size_t len;
    if (!t)
        return -1;
    char *list = NULL;
    if (nodeset) {
        if (rv_tune_bitmap_parse(nodeset, &map, &len, err) < 0)
            return -1;
        list = rv_tune_bitmap_format(map, len);
        free(map);
        if (!list)
            return fail_oom(err);
    }
    free(t->numa_nodeset);
    t->numa_nodeset = list;
    t->numa_specified = 1;
    t->numa_mode = mode;
    return 0;
}

/* ================================================================ balloon */

/* A new empty element name with one attribute. */
static rv_xml_node *new_element(const char *name, const char *attr, const char *value)
{
    rv_xml_node *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->name = strdup(name);
    n->attrs = calloc(1, sizeof(*n->attrs));
    if (n->attrs) {
        n->nattrs = 1;
        n->attrs[0].name = strdup(attr);
        n->attrs[0].value = strdup(value);
    }
    if (!n->name || !n->attrs || !n->attrs[0].name || !n->attrs[0].value) {
        rv_xml_free(n);
        return NULL;
    }
    return n;
}

int test_tune_stats_period(const rv_nonnull_domain *dom, unsigned int flags, int period,
                           rv_err *err)
{
    test_dom *d;
    rv_test_def *def;
    if (!(d = dom_of(dom, err)) || !(def = one_def(d, flags, NULL, err)))
        return -1;
    rv_xml_node *balloon = NULL;
    for (size_t k = 0; def->devices && k < def->devices->nkids && !balloon; k++) {
        rv_xml_node *el = def->devices->kids[k];
        if (el && el->name && strcmp(el->name, "memballoon") == 0)
            balloon = el;
    }
    const char *model = balloon ? rv_xml_attr_get(balloon, "model") : NULL;
    if (!balloon || (model && strcmp(model, "none") == 0))
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR,
                           "internal error: No memory balloon device configured, can not set "
                           "the collection period");
    /* libvirt writes <stats period> first in the balloon, and none for 0. */
    size_t at = balloon->nkids;
    for (size_t i = 0; i < balloon->nkids && at == balloon->nkids; i++)
        if (balloon->kids[i] && balloon->kids[i]->name &&
            strcmp(balloon->kids[i]->name, "stats") == 0)
            at = i;
    if (at < balloon->nkids) {
        rv_xml_free(balloon->kids[at]);
        balloon->kids[at] = NULL;
    }
    if (period == 0)
        return 0;
    char num[16];
    snprintf(num, sizeof(num), "%d", period);
    rv_xml_node *stats = new_element("stats", "period", num);
    rv_xml_node **kids = stats ? realloc(balloon->kids, (balloon->nkids + 1) * sizeof(*kids))
                               : NULL;
    if (!kids) {
        rv_xml_free(stats);
        return fail_oom(err);
    }
    memmove(kids + 1, kids, balloon->nkids * sizeof(*kids));
    kids[0] = stats;
    balloon->kids = kids;
    balloon->nkids++;
    balloon->kids_cap = balloon->nkids;
    return 0;
}

/* ================================================================ XML */

static const char *const blkio_tags[BLKIO_KINDS] = {
    "weight", "read_iops_sec", "write_iops_sec", "read_bytes_sec", "write_bytes_sec",
};
static const char *const numa_modes[NUMA_MODES] = { "strict", "preferred", "interleave",
                                                    "restrictive" };

/* What a memory stream wrote, or NULL when it wrote nothing. */
static char *stream_text(FILE *fp, char **buf)
{
    /* fclose sets *buf: read it only after. */
    if (fclose(fp) != 0 || !*buf || !**buf) {
        free(*buf);
        return NULL;
    }
    return *buf;
}

char *test_tune_xml_memory(const rv_test_def *def)
{
    const test_tune *t = def->tune;
    rv_xml_buf b;
    FILE *fp;
    if (!t || !(fp = rv_xml_open(&b)))
        return NULL;
    int devs = 0;
    for (size_t i = 0; i < t->ndevs; i++)
        for (int k = 0; k < BLKIO_KINDS; k++)
            devs |= t->devs[i].val[k] != 0;
    if (t->blkio_weight || devs) {
        fputs("  <blkiotune>\n", fp);
        if (t->blkio_weight)
            fprintf(fp, "    <weight>%u</weight>\n", t->blkio_weight);
        for (size_t i = 0; i < t->ndevs; i++) {
            int any = 0;
            for (int k = 0; k < BLKIO_KINDS; k++)
                any |= t->devs[i].val[k] != 0;
            if (!any)
                continue;
            fputs("    <device>\n      <path>", fp);
            rv_xml_put_escaped(fp, t->devs[i].path);
            fputs("</path>\n", fp);
            for (int k = 0; k < BLKIO_KINDS; k++)
                if (t->devs[i].val[k])
                    fprintf(fp, "      <%s>%llu</%s>\n", blkio_tags[k], t->devs[i].val[k],
                            blkio_tags[k]);
            fputs("    </device>\n", fp);
        }
        fputs("  </blkiotune>\n", fp);
    }
    int limits = 0;
    for (int k = 0; k < 3; k++)
        limits |= t->mem[k] < MEMORY_UNLIMITED;
    if (limits) {
        fputs("  <memtune>\n", fp);
        for (int k = 0; k < 3; k++)
            if (t->mem[k] < MEMORY_UNLIMITED)
                fprintf(fp, "    <%s unit='KiB'>%llu</%s>\n", rv_tune_memory_names[k], t->mem[k],
                        rv_tune_memory_names[k]);
        fputs("  </memtune>\n", fp);
    }
    return stream_text(fp, &b.text);
}

char *test_tune_xml_cpu(const rv_test_def *def)
{
    const test_tune *t = def->tune;
    rv_xml_buf b;
    FILE *fp;
    if (!t || !(fp = rv_xml_open(&b)))
        return NULL;
    int pins = t->emulator.map != NULL;
    for (size_t v = 0; v < t->npins; v++)
        pins |= t->pins[v].map != NULL;
    if (pins) {
        fputs("  <cputune>\n", fp);
        for (size_t v = 0; v < t->npins; v++) {
            char *list = t->pins[v].map ? rv_tune_bitmap_format(t->pins[v].map, t->pins[v].len)
                                        : NULL;
            if (list)
                fprintf(fp, "    <vcpupin vcpu='%zu' cpuset='%s'/>\n", v, list);
            free(list);
        }
        char *list = t->emulator.map ? rv_tune_bitmap_format(t->emulator.map, t->emulator.len)
                                     : NULL;
        if (list)
            fprintf(fp, "    <emulatorpin cpuset='%s'/>\n", list);
        free(list);
        fputs("  </cputune>\n", fp);
    }
    if (t->numa_specified && t->numa_nodeset)
        fprintf(fp, "  <numatune>\n    <memory mode='%s' nodeset='%s'/>\n  </numatune>\n",
                numa_modes[t->numa_mode], t->numa_nodeset);
    else if (t->numa_specified && def->placement_auto)
        fprintf(fp, "  <numatune>\n    <memory mode='%s' placement='auto'/>\n  </numatune>\n",
                numa_modes[t->numa_mode]);
    return stream_text(fp, &b.text);
}

/* ================================================================ scheduler */

static const rv_tune_field sched_fields[] = { { "weight", RV_TYPED_PARAM_UINT } };

/* libvirt's test driver checks the weight and keeps nothing. */
static int set_scheduler(const rv_nonnull_domain *dom, const rv_typed_param *p, u_int n,
                         unsigned int flags, const char *api, rv_err *err)
{
    if (rv_tune_params_check_call(p, n, api, "params", err) < 0 ||
        check_flags(flags, 0, "testDomainSetSchedulerParametersFlags", err) < 0 ||
        rv_tune_params_validate(p, n, sched_fields, 1, err) < 0)
        return -1;
    return dom_of(dom, err) ? 0 : -1;
}

int test_domain_set_scheduler_parameters(rv_driver_conn *c,
                                         const rv_domain_set_scheduler_parameters_args *args, rv_err *err)
{
    (void)c;
    return set_scheduler(&args->dom, args->params.params_val, args->params.params_len, 0,
                         "virDomainSetSchedulerParameters", err);
}

int test_domain_set_scheduler_parameters_flags(rv_driver_conn *c,
                                               const rv_domain_set_scheduler_parameters_flags_args *args, rv_err *err)
{
    (void)c;
    return set_scheduler(&args->dom, args->params.params_val, args->params.params_len,
                         args->flags, "virDomainSetSchedulerParametersFlags", err);
}

/* ================================================================ memory */

int test_domain_set_memory_parameters(rv_driver_conn *c,
                                      const rv_domain_set_memory_parameters_args *args, rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "hard_limit", RV_TYPED_PARAM_ULLONG }, { "soft_limit", RV_TYPED_PARAM_ULLONG },
        { "swap_hard_limit", RV_TYPED_PARAM_ULLONG },
    };
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    test_dom *d;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    if (rv_tune_params_check_call(p, n, "virDomainSetMemoryParameters", "params", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetMemoryParameters",
                    err) < 0 ||
        rv_tune_params_validate(p, n, fields, 3, err) < 0 || !(d = dom_of(&args->dom, err)) ||
        !(def = one_def(d, args->flags, NULL, err)) || !(t = tune_of(def, err)))
        return -1;
    const rv_typed_param *hard = rv_tune_param_find(p, n, "hard_limit");
    const rv_typed_param *soft = rv_tune_param_find(p, n, "soft_limit");
    const rv_typed_param *swap = rv_tune_param_find(p, n, "swap_hard_limit");
    /* As libvirt's test driver: checked against the live definition. */
    if (hard || swap) {
        unsigned long long h = hard ? hard->value.rv_typed_param_value_u.ul
                                    : test_tune_mem(d->def, TEST_MEM_HARD);
        unsigned long long s = swap ? swap->value.rv_typed_param_value_u.ul
                                    : test_tune_mem(d->def, TEST_MEM_SWAP);
        if (h > s)
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                               "invalid argument: memory hard_limit tunable value must be "
                               "lower than or equal to swap_hard_limit");
    }
    if (soft)
        t->mem[TEST_MEM_SOFT] = soft->value.rv_typed_param_value_u.ul;
    if (hard)
        t->mem[TEST_MEM_HARD] = hard->value.rv_typed_param_value_u.ul;
    if (swap)
        t->mem[TEST_MEM_SWAP] = swap->value.rv_typed_param_value_u.ul;
    return 0;
}

/* ================================================================ blkio */

/* The per-device lists: BLKIO_PARAMETERS' names after the weight. */
static const char *const *const blkio_kinds = rv_tune_blkio_names + 1;

static int blkio_parse_error(const char *kind, const char *s, rv_err *err)
{
    return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                       "invalid argument: unable to parse blkio device '%s' '%s'", kind, s);
}

/* "path,value,path,value": merged into t (an existing path takes the new
 * value, a new one is added unless its value is 0). */
static int blkio_merge(test_tune *t, int kind, const char *s, rv_err *err)
{
    size_t commas = 0;
    if (!*s)
        return 0;
    for (const char *q = s; *q; q++)
        commas += *q == ',';
    if (!(commas & 1))
        return blkio_parse_error(blkio_kinds[kind], s, err);
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        if (!comma)
            return blkio_parse_error(blkio_kinds[kind], s, err);
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
                               "device '%.*s'", num, blkio_kinds[kind], (int)plen, p);
        blkio_dev *dev = NULL;
        for (size_t i = 0; i < t->ndevs && !dev; i++)
            if (strlen(t->devs[i].path) == plen && strncmp(t->devs[i].path, p, plen) == 0)
                dev = &t->devs[i];
        if (!dev && v && (t->ndevs == MAX_BLKIO_DEVICES || plen > MAX_PATH_LEN))
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                               "invalid argument: at most %d blkio devices of paths up to %d "
                               "bytes", MAX_BLKIO_DEVICES, MAX_PATH_LEN);
        if (!dev && v) {
            blkio_dev *grown = realloc(t->devs, (t->ndevs + 1) * sizeof(*grown));
            if (!grown)
                return fail_oom(err);
            t->devs = grown;
            dev = &t->devs[t->ndevs];
            memset(dev, 0, sizeof(*dev));
            if (!(dev->path = strndup(p, plen)))
                return fail_oom(err);
            t->ndevs++;
        }
        if (dev)
            dev->val[kind] = v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

int test_domain_set_blkio_parameters(rv_driver_conn *c,
                                     const rv_domain_set_blkio_parameters_args *args, rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "weight", RV_TYPED_PARAM_UINT },
        { "device_weight", RV_TYPED_PARAM_STRING },
        { "device_read_iops_sec", RV_TYPED_PARAM_STRING },
        { "device_write_iops_sec", RV_TYPED_PARAM_STRING },
        { "device_read_bytes_sec", RV_TYPED_PARAM_STRING },
        { "device_write_bytes_sec", RV_TYPED_PARAM_STRING },
    };
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    test_dom *d;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    if (rv_tune_params_check_call(p, n, "virDomainSetBlkioParameters", "params", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetBlkioParameters",
                    err) < 0 ||
        rv_tune_params_validate(p, n, fields, 6, err) < 0 || !(d = dom_of(&args->dom, err)) ||
        !(def = one_def(d, args->flags, NULL, err)) || !(t = tune_of(def, err)))
        return -1;
    /* Like libvirt, a bad device list fails the call but the others apply. */
    int rc = 0;
    for (u_int i = 0; i < n; i++) {
        if (strcmp(p[i].field, "weight") == 0) {
            t->blkio_weight = p[i].value.rv_typed_param_value_u.ui;
            continue;
        }
        for (int k = 0; k < BLKIO_KINDS; k++)
            if (strcmp(p[i].field, blkio_kinds[k]) == 0 &&
                blkio_merge(t, k, p[i].value.rv_typed_param_value_u.s, err) < 0)
                rc = -1;
    }
    return rc;
}

/* ================================================================ numa */

int test_domain_set_numa_parameters(rv_driver_conn *c,
                                    const rv_domain_set_numa_parameters_args *args, rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "numa_mode", RV_TYPED_PARAM_INT }, { "numa_nodeset", RV_TYPED_PARAM_STRING },
    };
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    test_dom *d;
    rv_test_def *def;
    test_tune *t;
    int live, mode = -1;
    char *nodeset = NULL;
    (void)c;
    if (rv_tune_params_check_call(p, n, "virDomainSetNumaParameters", "params", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetNumaParameters",
                    err) < 0 ||
        rv_tune_params_validate(p, n, fields, 2, err) < 0 || !(d = dom_of(&args->dom, err)) ||
        !(def = one_def(d, args->flags, &live, err)) || !(t = tune_of(def, err)))
        return -1;
    for (u_int i = 0; i < n; i++) {
        if (strcmp(p[i].field, "numa_mode") == 0) {
            mode = p[i].value.rv_typed_param_value_u.i;
            if (mode < 0 || mode >= NUMA_MODES) {
                free(nodeset);
                return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                                   "invalid argument: unsupported numatune mode: '%d'", mode);
            }
            continue;
        }
        const char *s = p[i].value.rv_typed_param_value_u.s;
        unsigned char *map;
        size_t len;
        if (rv_tune_bitmap_parse(s, &map, &len, err) < 0) {
            free(nodeset);
            return -1;
        }
        int empty = rv_tune_bitmap_empty(map, len);
        free(nodeset);
        nodeset = empty ? NULL : rv_tune_bitmap_format(map, len);
        free(map);
        if (empty)
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                               "Requested operation is not valid: Invalid nodeset of "
                               "'numatune': %s", s);
        if (!nodeset)
            return fail_oom(err);
    }
    if (live && mode != -1 && t->numa_specified && t->numa_mode != mode) {
        free(nodeset);
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: can't change numatune mode "
                           "for running domain");
    }
    if (mode == -1 && !nodeset)
        return 0;
    /* libvirt's order: the mode is taken before the nodeset is found
     * missing, so a refused call still leaves it. */
    if (!t->numa_specified && mode == -1)
        mode = 0;
    t->numa_specified = 1;
    if (mode != -1)
        t->numa_mode = mode;
    if (nodeset) {
        free(t->numa_nodeset);
        t->numa_nodeset = nodeset;
    } else if (!t->numa_nodeset && !def->placement_auto) {
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: nodeset for NUMA memory tuning must be "
                           "set if 'placement' is 'static'");
    }
    return 0;
}

/* ================================================================ interfaces */

int test_domain_set_interface_parameters(rv_driver_conn *c,
                                         const rv_domain_set_interface_parameters_args *args, rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "inbound.average", RV_TYPED_PARAM_UINT }, { "inbound.peak", RV_TYPED_PARAM_UINT },
        { "inbound.burst", RV_TYPED_PARAM_UINT }, { "inbound.floor", RV_TYPED_PARAM_UINT },
        { "outbound.average", RV_TYPED_PARAM_UINT }, { "outbound.peak", RV_TYPED_PARAM_UINT },
        { "outbound.burst", RV_TYPED_PARAM_UINT },
    };
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    test_dom *d;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    if (rv_tune_params_check_call(p, n, "virDomainSetInterfaceParameters", "params", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                    "testDomainSetInterfaceParameters", err) < 0 ||
        rv_tune_params_validate(p, n, fields, 7, err) < 0 || !(d = dom_of(&args->dom, err)) ||
        !(def = one_def(d, args->flags, NULL, err)))
        return -1;
    int iface = test_stats_iface_index(def, args->device, err);
    if (iface < 0 || !(t = tune_of(def, err)))
        return -1;
    unsigned int val[7] = { 0 };
    int in_named = 0, out_named = 0;
    for (u_int i = 0; i < n; i++)
        for (int k = 0; k < 7; k++)
            if (strcmp(p[i].field, fields[k].name) == 0) {
                val[k] = p[i].value.rv_typed_param_value_u.ui;
                in_named |= k == 0 || k == 3;
                out_named |= k == 4;
            }
    /* An average (or inbound floor) makes a direction; naming it as 0
     * clears that direction. */
    int has_in = val[0] || val[3], has_out = val[4] != 0;
    bandwidth *b = find_bw(t, iface);
    if (!b) {
        bandwidth *grown = realloc(t->bw, (t->nbw + 1) * sizeof(*grown));
        if (!grown)
            return fail_oom(err);
        t->bw = grown;
        b = &t->bw[t->nbw++];
        memset(b, 0, sizeof(*b));
        b->iface = iface;
    }
    if (has_in || in_named) {
        b->has_in = has_in;
        memcpy(b->val, val, 4 * sizeof(val[0]));
    }
    if (has_out || out_named) {
        b->has_out = has_out;
        memcpy(b->val + 4, val + 4, 3 * sizeof(val[0]));
    }
    return 0;
}

/* ================================================================ block I/O */

int test_domain_set_block_io_tune(rv_driver_conn *c,
                                  const rv_domain_set_block_io_tune_args *args, rv_err *err)
{
    rv_tune_field fields[TEST_IOTUNE_NUMBERS + 1];
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    test_dom *d;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    for (int k = 0; k < TEST_IOTUNE_NUMBERS; k++)
        fields[k] = (rv_tune_field){ rv_tune_iotune_names[k], RV_TYPED_PARAM_ULLONG };
    fields[TEST_IOTUNE_NUMBERS] = (rv_tune_field){ "group_name", RV_TYPED_PARAM_STRING };
    if (rv_tune_params_check_call(p, n, "virDomainSetBlockIoTune", "nparams", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetBlockIoTune",
                    err) < 0 ||
        rv_tune_params_validate(p, n, fields, TEST_IOTUNE_NUMBERS + 1, err) < 0 ||
        !(d = dom_of(&args->dom, err)) || !(def = one_def(d, args->flags, NULL, err)))
        return -1;
    const char *target = test_stats_disk_target(def, args->disk);
    if (!target)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: missing persistent configuration for disk '%s'",
                           args->disk);
    if (!(t = tune_of(def, err)))
        return -1;
    unsigned long long v[TEST_IOTUNE_NUMBERS];
    const char *group = test_tune_iotune(def, target, v);
    for (u_int i = 0; i < n; i++) {
        if (p[i].value.type == RV_TYPED_PARAM_STRING) {
            group = p[i].value.rv_typed_param_value_u.s;
            if (strlen(group) > MAX_GROUP_LEN)
                return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                                   "invalid argument: group_name longer than %d bytes",
                                   MAX_GROUP_LEN);
            continue;
        }
        unsigned long long x = p[i].value.rv_typed_param_value_u.ul;
        if (x > IOTUNE_LIMIT)
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_ARGUMENT_UNSUPPORTED,
                               "argument unsupported: block I/O throttle limit value must be "
                               "no more than %llu", IOTUNE_LIMIT);
        for (int k = 0; k < TEST_IOTUNE_NUMBERS; k++)
            if (strcmp(p[i].field, rv_tune_iotune_names[k]) == 0)
                v[k] = x;
    }
    /* total and read/write exclusive; each below its maximum (0 included,
     * as libvirt's test driver compares). */
    static const char *const what[] = { "bytes_sec", "iops_sec", "bytes_sec_max",
                                        "iops_sec_max" };
    static const int first[] = { 0, 3, 6, 9 };
    for (int g = 0; g < 4; g++) {
        int k = first[g];
        if (v[k] && (v[k + 1] || v[k + 2]))
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                               "invalid argument: total and read/write of %s cannot be set at "
                               "the same time", what[g]);
    }
    for (int k = 0; k < 6; k++)
        if (v[k] > v[k + 6])
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                               "invalid argument: %s cannot be set higher than %s ",
                               rv_tune_iotune_names[k], rv_tune_iotune_names[k + 6]);
    iotune *io = find_io(t, target);
    char *gcopy = strdup(group);
    if (!gcopy)
        return fail_oom(err);
    if (!io) {
        iotune *grown = realloc(t->io, (t->nio + 1) * sizeof(*grown));
        if (!grown) {
            free(gcopy);
            return fail_oom(err);
        }
        t->io = grown;
        io = &t->io[t->nio];
        memset(io, 0, sizeof(*io));
        if (!(io->target = strdup(target))) {
            free(gcopy);
            return fail_oom(err);
        }
        t->nio++;
    }
    memcpy(io->val, v, sizeof(v));
    free(io->group);
    io->group = gcopy;
    return 0;
}

/* ================================================================ pinning */

static int store_mask(cpumask *m, const char *map, u_int len, rv_err *err)
{
    unsigned char *copy = malloc(len);
    if (!copy)
        return fail_oom(err);
    memcpy(copy, map, len);
    free(m->map);
    m->map = copy;
    m->len = len;
    return 0;
}

static int pin_vcpu(const rv_nonnull_domain *dom, unsigned int vcpu, const char *map,
                    u_int maplen, unsigned int flags, const char *api, rv_err *err)
{
    test_dom *d;
    test_tune *t;
    if (maplen == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in %s must not be NULL", api);
    if (check_flags(flags, 0, "testDomainPinVcpuFlags", err) < 0 || !(d = dom_of(dom, err)))
        return -1;
    if (d->id < 0)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: cannot pin vcpus on an inactive "
                           "domain");
    if (vcpu >= d->def->current_vcpus)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: requested vcpu '%u' is not present in the "
                           "domain", vcpu);
    if (split_live(d, err) < 0 || !(t = tune_of(d->def, err)))
        return -1;
    if (vcpu >= t->npins) {
        cpumask *grown = realloc(t->pins, (vcpu + 1) * sizeof(*grown));
        if (!grown)
            return fail_oom(err);
        memset(grown + t->npins, 0, (vcpu + 1 - t->npins) * sizeof(*grown));
        t->pins = grown;
        t->npins = vcpu + 1;
    }
    return store_mask(&t->pins[vcpu], map, maplen, err);
}

int test_domain_pin_vcpu(rv_driver_conn *c, const rv_domain_pin_vcpu_args *args,
                         rv_err *err)
{
    (void)c;
    return pin_vcpu(&args->dom, args->vcpu, args->cpumap.cpumap_val, args->cpumap.cpumap_len,
                    0, "virDomainPinVcpu", err);
}

int test_domain_pin_vcpu_flags(rv_driver_conn *c,
                               const rv_domain_pin_vcpu_flags_args *args, rv_err *err)
{
    (void)c;
    return pin_vcpu(&args->dom, args->vcpu, args->cpumap.cpumap_val, args->cpumap.cpumap_len,
                    args->flags, "virDomainPinVcpuFlags", err);
}

int test_domain_pin_emulator(rv_driver_conn *c, const rv_domain_pin_emulator_args *args,
                             rv_err *err)
{
    test_dom *d;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    if (args->cpumap.cpumap_len == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in virDomainPinEmulator must not be NULL");
    if (rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainPinEmulator",
                    err) < 0 ||
        !(d = dom_of(&args->dom, err)) || !(def = one_def(d, args->flags, NULL, err)))
        return -1;
    if (rv_tune_bitmap_empty((const unsigned char *)args->cpumap.cpumap_val,
                             args->cpumap.cpumap_len))
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: Empty cpu list for pinning");
    if (!(t = tune_of(def, err)))
        return -1;
    return store_mask(&t->emulator, args->cpumap.cpumap_val, args->cpumap.cpumap_len, err);
}

/* ================================================================ time */

int test_domain_set_time(rv_driver_conn *c, const rv_domain_set_time_args *args,
                         rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(args->flags, TIME_SYNC, "testDomainSetTime", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    if (d->id < 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    /* SYNC keeps what was sent (virsh sends 0), as libvirt's test driver. */
    d->time_set = 1;
    d->time_sec = args->seconds;
    d->time_nsec = args->nseconds;
    return 0;
}

/* ================================================================ vcpu count */

static int set_vcpus(const rv_nonnull_domain *dom, unsigned int nvcpus, unsigned int flags,
                     const char *api, rv_err *err)
{
    test_dom *d;
    rv_test_def *live, *config;
    if ((flags & VCPU_MAXIMUM) && !(flags & AFFECT_CONFIG))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "Flag 'VIR_DOMAIN_AFFECT_CONFIG' is required by flag "
                           "'VIR_DOMAIN_VCPU_MAXIMUM'");
    if (nvcpus == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "nvcpus in %s must not be zero", api);
    if (check_flags(flags, AFFECT_LIVE | AFFECT_CONFIG | VCPU_MAXIMUM,
                    "testDomainSetVcpusFlags", err) < 0)
        return -1;
    if (nvcpus > TEST_MAX_VCPUS)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: requested cpu amount exceeds maximum supported "
                           "amount (%u > %d)", nvcpus, TEST_MAX_VCPUS);
    if (!(d = dom_of(dom, err)) || get_defs(d, flags, 0, &live, &config, err) < 0)
        return -1;
    if (live && live->vcpus < nvcpus)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: requested cpu amount exceeds maximum (%u > %u)",
                           nvcpus, live->vcpus);
    if (config && !(flags & VCPU_MAXIMUM) && config->vcpus < nvcpus)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: requested cpu amount exceeds maximum (%u > %u)",
                           nvcpus, config->vcpus);
    if (live)
        live->current_vcpus = nvcpus;
    if (config && (flags & VCPU_MAXIMUM)) {
        config->vcpus = nvcpus;
        if (config->current_vcpus > nvcpus)
            config->current_vcpus = nvcpus;
    } else if (config) {
        config->current_vcpus = nvcpus;
    }
    return 0;
}

int test_domain_set_vcpus(rv_driver_conn *c, const rv_domain_set_vcpus_args *args,
                          rv_err *err)
{
    (void)c;
    return set_vcpus(&args->dom, args->nvcpus, AFFECT_LIVE, "virDomainSetVcpus", err);
}

int test_domain_set_vcpus_flags(rv_driver_conn *c,
                                const rv_domain_set_vcpus_flags_args *args, rv_err *err)
{
    (void)c;
    return set_vcpus(&args->dom, args->nvcpus, args->flags, "virDomainSetVcpusFlags", err);
}
