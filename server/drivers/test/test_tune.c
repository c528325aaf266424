/* The test driver's tuning setters.  What libvirt 9.0's test driver keeps
 * is kept here too, per definition (a running persistent domain's live
 * definition is separated from its persistent one on its first live
 * change, as libvirt copies the definition at start), so that the getters
 * (test_stats.c) read it back; the scheduler weight is checked and
 * dropped, as there.  The domain-wide tuning is the shared model's
 * (conf/domain_tune.h), checked and applied there under this driver's
 * rules; dumpxml shows it.  The metadata setter (title, description)
 * shares the choice of definitions, so it is here too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_stats.h"
#include "server/drivers/test/test_tune.h"
#include "server/drivers/tune_params.h"
#include "server/drivers/conf/xml_write.h"

#define IOTUNE_LIMIT 1000000000000000ULL       /* the test driver's largest limit */
enum {
    AFFECT_LIVE = 1, AFFECT_CONFIG = 2, VCPU_MAXIMUM = 4, MEM_MAXIMUM = 4, TIME_SYNC = 1,
    TEST_MAX_VCPUS = 32,
    MAX_GROUP_LEN = 255,        /* what a client can make a throttle group's name */
};

const rv_tune_rules test_tune_rules = { .from = RV_FROM_TEST };

typedef struct iotune {
    char *target;
    unsigned long long val[TEST_IOTUNE_NUMBERS];
    char *group;
} iotune;
typedef struct bandwidth {
    int iface;
    rv_tune_bandwidth b;
} bandwidth;
struct test_tune {
    bandwidth *bw;
    size_t nbw;
    iotune *io;
    size_t nio;
};

#define fail_oom test_fail_oom
#define check_flags test_check_flags

void test_tune_free(test_tune *t)
{
    if (!t)
        return;
    free(t->bw);
    for (size_t i = 0; i < t->nio; i++) {
        free(t->io[i].target);
        free(t->io[i].group);
    }
    free(t->io);
    free(t);
}

static char *dup_or_null(const char *s, int *bad)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *bad = 1;
    return d;
}

static test_tune *tune_dup(const test_tune *t)
{
    int bad = 0;
    test_tune *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    if ((t->nbw && !(n->bw = calloc(t->nbw, sizeof(*n->bw)))) ||
        (t->nio && !(n->io = calloc(t->nio, sizeof(*n->io)))))
        bad = 1;
    if (!bad && t->nbw) {
        memcpy(n->bw, t->bw, t->nbw * sizeof(*n->bw));
        n->nbw = t->nbw;
    }
    for (size_t i = 0; !bad && i < t->nio; i++, n->nio++) {
        n->io[i] = t->io[i];
        n->io[i].target = dup_or_null(t->io[i].target, &bad);
        n->io[i].group = dup_or_null(t->io[i].group, &bad);
    }
    if (bad) {
        test_tune_free(n);
        return NULL;
    }
    return n;
}

/* def's bandwidth and I/O limits, made when it has none yet. */
static test_tune *limits_of(rv_test_def *def, rv_err *err)
{
    if (!def->limits && !(def->limits = calloc(1, sizeof(*def->limits))))
        fail_oom(err);
    return def->limits;
}

static rv_domain_tune *tune_of(rv_test_def *def, rv_err *err)
{
    return rv_domain_tune_of(&def->tune, RV_FROM_TEST, err);
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
    /* What the XML holds was read back; the tuning is copied over it (as
     * kept, and what the XML does not hold). */
    rv_domain_tune_free(copy->tune);
    copy->tune = NULL;
    if ((def->tune && !(copy->tune = rv_domain_tune_dup(def->tune))) ||
        (def->limits && !(copy->limits = tune_dup(def->limits)))) {
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

static bandwidth *find_bw(const test_tune *t, int iface)
{
    for (size_t i = 0; t && i < t->nbw; i++)
        if (t->bw[i].iface == iface)
            return &t->bw[i];
    return NULL;
}

void test_tune_bandwidth(const rv_test_def *def, int iface, unsigned int out[7])
{
    const bandwidth *b = find_bw(def->limits, iface);
    for (int i = 0; i < 7; i++)
        out[i] = b && (i < 4 ? b->b.has_in : b->b.has_out) ? b->b.val[i] : 0;
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
    const iotune *io = find_io(def->limits, target);
    for (int i = 0; i < TEST_IOTUNE_NUMBERS; i++)
        out[i] = io ? io->val[i] : 0;
    return io && io->group ? io->group : "";
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

/* ================================================================ typed params */

/* The common start of a setter of typed parameters: the call's checks,
 * the flags, the parameters, the domain and the one definition flags
 * name (*d its domain, *is_live whether it is the live one; either may
 * be NULL). */
static rv_test_def *params_def(const rv_nonnull_domain *dom, const rv_typed_param *p, u_int n,
                               unsigned int flags, const char *api, const char *what,
                               const char *func, const rv_tune_field *fields, size_t nfields,
                               test_dom **d, int *is_live, rv_err *err)
{
    if (rv_tune_params_check_call(p, n, api, what, err) < 0 ||
        rv_tune_check_exclusive(flags, err) < 0 ||
        check_flags(flags, AFFECT_LIVE | AFFECT_CONFIG, func, err) < 0 ||
        rv_tune_params_validate(p, n, fields, nfields, err) < 0)
        return NULL;
    test_dom *found = dom_of(dom, err);
    if (d)
        *d = found;
    return found ? one_def(found, flags, is_live, err) : NULL;
}

/* SET_MEMORY, _BLKIO and _NUMA_PARAMETERS (kind, by its fields): the
 * shared model's. */
static int set_tune(const rv_nonnull_domain *dom, const rv_typed_param *p, u_int n,
                    unsigned int flags, const char *api, const char *func,
                    const rv_tune_field *fields, size_t nfields, rv_err *err)
{
    test_dom *d;
    rv_test_def *def;
    int live;
    if (!(def = params_def(dom, p, n, flags, api, "params", func, fields, nfields, &d, &live,
                           err)) ||
        !tune_of(def, err))
        return -1;
    /* As libvirt's test driver: the limits checked against the live
     * definition's. */
    if (fields == rv_tune_memory_fields)
        return rv_domain_tune_set_memory(def->tune, d->def->tune, p, n, &test_tune_rules, err);
    if (fields == rv_tune_blkio_fields)
        return rv_domain_tune_set_blkio(def->tune, p, n, &test_tune_rules, err);
    return rv_domain_tune_set_numa(def->tune, p, n, live, def->placement_auto, &test_tune_rules,
                                   err);
}

#define SET_TUNE_SLOT(fn, args_type, api, func, fields, nfields)                          \
    int test_##fn(rv_driver_conn *c, const args_type *args, rv_err *err)                 \
    {                                                                                     \
        (void)c;                                                                          \
        return set_tune(&args->dom, args->params.params_val, args->params.params_len,     \
                        args->flags, api, func, fields, nfields, err);                    \
    }
SET_TUNE_SLOT(domain_set_memory_parameters, rv_domain_set_memory_parameters_args,
              "virDomainSetMemoryParameters", "testDomainSetMemoryParameters",
              rv_tune_memory_fields, 3)
SET_TUNE_SLOT(domain_set_blkio_parameters, rv_domain_set_blkio_parameters_args,
              "virDomainSetBlkioParameters", "testDomainSetBlkioParameters", rv_tune_blkio_fields,
              6)
SET_TUNE_SLOT(domain_set_numa_parameters, rv_domain_set_numa_parameters_args,
              "virDomainSetNumaParameters", "testDomainSetNumaParameters", rv_tune_numa_fields, 2)
#undef SET_TUNE_SLOT

/* ================================================================ interfaces */

int test_domain_set_interface_parameters(rv_driver_conn *c,
                                         const rv_domain_set_interface_parameters_args *args, rv_err *err)
{
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    if (!(def = params_def(&args->dom, p, n, args->flags, "virDomainSetInterfaceParameters",
                           "params", "testDomainSetInterfaceParameters", rv_tune_bandwidth_fields,
                           RV_TUNE_BANDWIDTH_FIELDS, NULL, NULL,
                           err)))
        return -1;
    int iface = test_stats_iface_index(def, args->device, err);
    if (iface < 0 || !(t = limits_of(def, err)))
        return -1;
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
    rv_tune_bandwidth_apply(&b->b, p, n);
    return 0;
}

/* ================================================================ block I/O */

int test_domain_set_block_io_tune(rv_driver_conn *c,
                                  const rv_domain_set_block_io_tune_args *args, rv_err *err)
{
    rv_tune_field fields[TEST_IOTUNE_NUMBERS + 1];
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    rv_test_def *def;
    test_tune *t;
    (void)c;
    for (int k = 0; k < TEST_IOTUNE_NUMBERS; k++)
        fields[k] = (rv_tune_field){ rv_tune_iotune_names[k], RV_TYPED_PARAM_ULLONG };
    fields[TEST_IOTUNE_NUMBERS] = (rv_tune_field){ "group_name", RV_TYPED_PARAM_STRING };
    if (!(def = params_def(&args->dom, p, n, args->flags, "virDomainSetBlockIoTune", "nparams",
                           "testDomainSetBlockIoTune", fields, TEST_IOTUNE_NUMBERS + 1, NULL,
                           NULL, err)))
        return -1;
    const char *target = test_stats_disk_target(def, args->disk);
    if (!target)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: missing persistent configuration for disk '%s'",
                           args->disk);
    if (!(t = limits_of(def, err)))
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

static int pin_vcpu(const rv_nonnull_domain *dom, unsigned int vcpu, const char *map,
                    u_int maplen, unsigned int flags, const char *api, rv_err *err)
{
    test_dom *d;
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
    if (split_live(d, err) < 0 || !tune_of(d->def, err))
        return -1;
    return rv_domain_tune_pin(d->def->tune, (int)vcpu, (const unsigned char *)map, maplen,
                              RV_FROM_TEST, err);
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
    if (!tune_of(def, err))
        return -1;
    return rv_domain_tune_pin(def->tune, -1, (const unsigned char *)args->cpumap.cpumap_val,
                              args->cpumap.cpumap_len, RV_FROM_TEST, err);
}

int test_domain_set_lifecycle_action(rv_driver_conn *c,
                                     const rv_domain_set_lifecycle_action_args *args,
                                     rv_err *err)
{
    test_dom *d;
    rv_test_def *live, *config;
    (void)c;
    if (rv_domain_lifecycle_check(args->type, args->action, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetLifecycleAction",
                    err) < 0 ||
        rv_domain_lifecycle_allowed(args->type, args->action, err) < 0 ||
        !(d = dom_of(&args->dom, err)) || get_defs(d, args->flags, 0, &live, &config, err) < 0)
        return -1;
    if (live)
        rv_domain_lifecycle_set(&live->base, args->type, args->action);
    if (config)
        rv_domain_lifecycle_set(&config->base, args->type, args->action);
    return 0;
}

int test_domain_set_perf_events(rv_driver_conn *c, const rv_domain_set_perf_events_args *args,
                                rv_err *err)
{
    test_dom *d;
    rv_test_def *def;
    (void)c;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetPerfEvents", err) < 0 ||
        rv_domain_perf_check(args->params.params_val, args->params.params_len, err) < 0 ||
        !(d = dom_of(&args->dom, err)) || !(def = one_def(d, args->flags, NULL, err)))
        return -1;
    rv_domain_perf_set(&def->base, args->params.params_val, args->params.params_len);
    return 0;
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

/* ================================================================ memory */

/* one_def, refusing live and config together in the words of libvirt's
 * virDomainObjGetOneDef (no "invalid argument" prefix). */
static rv_test_def *the_one_def(test_dom *d, unsigned int flags, int *is_live, rv_err *err)
{
    if ((flags & AFFECT_LIVE) && (flags & AFFECT_CONFIG)) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG, "Flags 'VIR_DOMAIN_AFFECT_LIVE' and "
                   "'VIR_DOMAIN_AFFECT_CONFIG' are mutually exclusive");
        return NULL;
    }
    return one_def(d, flags, is_live, err);
}

/* The balloon (current memory) or with MEM_MAXIMUM the maximum of the one
 * definition flags name; a running domain's maximum is fixed. */
static int set_memory(const rv_nonnull_domain *dom, unsigned long long kib, unsigned int flags,
                      const char *api, rv_err *err)
{
    test_dom *d;
    rv_test_def *def;
    int is_live;
    if (kib == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "memory in %s must not be zero", api);
    if (check_flags(flags, AFFECT_LIVE | AFFECT_CONFIG | MEM_MAXIMUM,
                    "testDomainSetMemoryFlags", err) < 0 || !(d = dom_of(dom, err)) ||
        !(def = the_one_def(d, flags, &is_live, err)))
        return -1;
    if (flags & MEM_MAXIMUM) {
        if (is_live)
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                               "Requested operation is not valid: cannot resize the maximum "
                               "memory on an active domain");
        def->memory_kib = kib;
        if (def->current_memory_kib > kib)
            def->current_memory_kib = kib;
        return 0;
    }
    if (kib > def->memory_kib)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: cannot set memory higher than max memory");
    def->current_memory_kib = kib;
    return 0;
}

int test_domain_set_memory(rv_driver_conn *c, const rv_domain_set_memory_args *args,
                           rv_err *err)
{
    (void)c;
    return set_memory(&args->dom, args->memory, AFFECT_LIVE, "virDomainSetMemory", err);
}

int test_domain_set_max_memory(rv_driver_conn *c, const rv_domain_set_max_memory_args *args,
                               rv_err *err)
{
    (void)c;
    return set_memory(&args->dom, args->memory, MEM_MAXIMUM, "virDomainSetMaxMemory", err);
}

int test_domain_set_memory_flags(rv_driver_conn *c,
                                 const rv_domain_set_memory_flags_args *args, rv_err *err)
{
    (void)c;
    return set_memory(&args->dom, args->memory, args->flags, "virDomainSetMemoryFlags", err);
}

/* ================================================================ metadata */

/* <title> and <description> of the definitions flags name (both at once
 * allowed); libvirt's test driver never marks a domain updated. */
int test_domain_set_metadata(rv_driver_conn *c, const rv_domain_set_metadata_args *args,
                             rv_err *err)
{
    test_dom *d;
    rv_test_def *live, *config;
    const char *text = args->metadata ? *args->metadata : NULL;
    (void)c;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainSetMetadata", err) < 0 ||
        rv_domain_metadata_check(args->type, text, args->key ? *args->key : NULL,
                                 args->uri ? *args->uri : NULL, RV_FROM_TEST, err) < 0 ||
        !(d = dom_of(&args->dom, err)) || get_defs(d, args->flags, 0, &live, &config, err) < 0)
        return -1;
    if ((live && rv_domain_metadata_set(&live->base, args->type, text, err) < 0) ||
        (config && rv_domain_metadata_set(&config->base, args->type, text, err) < 0))
        return -1;
    /* libvirt's test driver tells subscribers, as its QEMU driver does. */
    rv_dom_ref ref = { .name = d->def->name, .id = d->id };
    memcpy(ref.uuid, d->def->uuid, sizeof(ref.uuid));
    rv_driver_metadata_event(&rv_test_driver, &ref, args->type, args->uri ? *args->uri : NULL);
    return 0;
}

int test_domain_get_metadata(rv_driver_conn *c, const rv_domain_get_metadata_args *args,
                             rv_domain_get_metadata_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_test_def *def;
    (void)c;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainGetMetadata", err) < 0 ||
        !(d = dom_of(&args->dom, err)) || !(def = the_one_def(d, args->flags, NULL, err)))
        return -1;
    return rv_domain_metadata_get(&def->base, args->type, args->uri ? *args->uri : NULL,
                                  &ret->metadata, err);
}

int test_domain_is_updated(rv_driver_conn *c, const rv_domain_is_updated_args *args,
                           rv_domain_is_updated_ret *ret, rv_err *err)
{
    (void)c;
    ret->updated = 0;
    return dom_of(&args->dom, err) ? 0 : -1;
}
