/* The QEMU driver's tuning that libvirtd applies through cgroups: memory
 * limits (<memtune>), the blkio weight (<blkiotune>), the scheduler's
 * cpu_shares (<cputune><shares>) and NUMA memory (<numatune>).  remvirtd
 * uses no cgroups, so a running domain's values cannot change or be read
 * back: --live answers as libvirtd does on a host without the controller
 * ("cgroup ... is not mounted"); --config changes the definition (through
 * the durable write path) and the getters read it. */
#include <stdlib.h>
#include <string.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2, TYPED_PARAM_STRING_OKAY = 0x4 };
#define MEMORY_UNLIMITED 9007199254740991ULL   /* libvirt's 2^53 - 1 KiB */

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* The definition flags name; NULL with libvirtd's error for a running
 * domain's (controller is the cgroup it would need) and the like. */
static const rv_qemu_domain_def *pick(qemu_dom *d, unsigned int flags, const char *controller,
                                      rv_err *err)
{
    bool live = (flags & AFFECT_LIVE) || (!(flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (live && !rv_qemu_dom_active(d)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain is not running");
        return NULL;
    }
    if (live) {
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s", controller);
        return NULL;
    }
    if (!d->def) {
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: transient "
             "domains do not have any persistent config");
        return NULL;
    }
    return d->def;
}

/* The common start of a setter: checks, the domain, and refusal of live. */
static qemu_dom *setter(const rv_nonnull_domain *wire, const rv_typed_param *p, u_int n,
                        unsigned int flags, const char *api, const char *func,
                        const rv_tune_field *fields, size_t nfields, const char *controller,
                        rv_err *err)
{
    qemu_dom *d;
    if (rv_tune_params_check_call(p, n, api, "params", err) < 0 ||
        rv_tune_check_exclusive(flags, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG, func, err) < 0 ||
        rv_tune_params_validate(p, n, fields, nfields, err) < 0 ||
        !(d = rv_qemu_dom_get(wire, err)) || !pick(d, flags, controller, err))
        return NULL;
    return d;
}

/* The common start of a getter: nparams bounded, the flags, the domain.
 * nparams 0 asks how many there are: *count (of n) and 0; else 1 with
 * *def the definition flags name; -1 with err set. */
static int getter(const rv_nonnull_domain *wire, int nparams, unsigned int flags, const char *func,
                  const char *controller, int n, int *count, const rv_qemu_domain_def **def,
                  rv_err *err)
{
    qemu_dom *d;
    if (rv_tune_check_nparams(nparams, RV_TUNING_PARAMS_MAX, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, flags,
                            AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY, func, err) < 0 ||
        rv_tune_check_exclusive(flags, err) < 0 || !(d = rv_qemu_dom_get(wire, err)))
        return -1;
    if (nparams == 0) {
        *count = n;
        return 0;
    }
    return (*def = pick(d, flags, controller, err)) ? 1 : -1;
}

typedef struct params_change {
    const rv_typed_param *p;
    u_int n;
} params_change;

/* Write the definition changed by change(def, params); the reply waits. */
static int write_change(qemu_dom *d, int (*change)(rv_qemu_domain_def *, const void *, rv_err *),
                        const rv_typed_param *p, u_int n, rv_err *err)
{
    params_change ch = { p, n };
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    if (rv_qemu_def_change(d, change, &ch, reply, err) < 0) {
        rv_deferred_finish(reply, err);
        rv_err_clear(err);
    }
    return RV_DEFERRED;
}

static rv_qemu_tune *tune_of(rv_qemu_domain_def *def, rv_err *err)
{
    if (!def->tune && !(def->tune = rv_qemu_tune_new()))
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
    return def->tune;
}

/* ================================================================ memory */

#define NO_MEMORY_CGROUP "cgroup memory controller is not mounted"

static int record_memory(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    rv_qemu_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    unsigned long long v[3];
    for (int k = 0; k < 3; k++) {
        const rv_typed_param *p = rv_tune_param_find(ch->p, ch->n, rv_tune_memory_names[k]);
        v[k] = p ? p->value.rv_typed_param_value_u.ul : t->mem[k] ? t->mem[k] : MEMORY_UNLIMITED;
    }
    if (v[0] > v[2])
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: memory hard_limit tunable value "
                    "must be lower than or equal to swap_hard_limit");
    for (int k = 0; k < 3; k++)
        t->mem[k] = v[k] >= MEMORY_UNLIMITED ? 0 : v[k];
    return 0;
}

int rv_qemu_domain_set_memory_parameters(rv_driver_conn *c,
                                         const rv_domain_set_memory_parameters_args *args,
                                         rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "hard_limit", RV_TYPED_PARAM_ULLONG }, { "soft_limit", RV_TYPED_PARAM_ULLONG },
        { "swap_hard_limit", RV_TYPED_PARAM_ULLONG },
    };
    (void)c;
    qemu_dom *d = setter(&args->dom, args->params.params_val, args->params.params_len,
                         args->flags, "virDomainSetMemoryParameters",
                         "qemuDomainSetMemoryParameters", fields, 3, NO_MEMORY_CGROUP, err);
    return d ? write_change(d, record_memory, args->params.params_val, args->params.params_len,
                            err)
             : -1;
}

int rv_qemu_domain_get_memory_parameters(rv_driver_conn *c,
                                         const rv_domain_get_memory_parameters_args *args,
                                         rv_domain_get_memory_parameters_ret *ret, rv_err *err)
{
    (void)c;
    const rv_qemu_domain_def *def;
    int rc = getter(&args->dom, args->nparams, args->flags, "qemuDomainGetMemoryParameters",
                    NO_MEMORY_CGROUP, 3, &ret->nparams, &def, err);
    if (rc != 1)
        return rc;
    rv_typed_param *p = rv_tune_param_list(args->nparams, 3, &ret->params.params_len, err);
    if (!(ret->params.params_val = p))
        return -1;
    for (u_int i = 0; i < ret->params.params_len; i++) {
        if (rv_tune_param_name(&p[i], rv_tune_memory_names[i], RV_TYPED_PARAM_ULLONG, err) < 0)
            return -1;
        unsigned long long v = def->tune ? def->tune->mem[i] : 0;
        p[i].value.rv_typed_param_value_u.ul = v ? v : MEMORY_UNLIMITED;
    }
    return 0;
}

/* ================================================================ blkio */

#define NO_BLKIO_CGROUP "blkio cgroup isn't mounted"

static int record_blkio(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    rv_qemu_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    for (u_int i = 0; i < ch->n; i++) {
        const rv_typed_param *p = &ch->p[i];
        if (strcmp(p->field, "weight") != 0) {
            if (*p->value.rv_typed_param_value_u.s)
                return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: "
                            "remvirt's QEMU driver keeps the blkio weight only, not %s",
                            p->field);
            continue;
        }
        unsigned w = p->value.rv_typed_param_value_u.ui;
        if (w < 100 || w > 1000)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: out of blkio weight range.");
        t->blkio_weight = w;
    }
    return 0;
}

int rv_qemu_domain_set_blkio_parameters(rv_driver_conn *c,
                                        const rv_domain_set_blkio_parameters_args *args,
                                        rv_err *err)
{
    rv_tune_field fields[6];
    (void)c;
    for (int k = 0; k < 6; k++)
        fields[k] = (rv_tune_field){ rv_tune_blkio_names[k],
                                     k ? RV_TYPED_PARAM_STRING : RV_TYPED_PARAM_UINT };
    qemu_dom *d = setter(&args->dom, args->params.params_val, args->params.params_len,
                         args->flags, "virDomainSetBlkioParameters",
                         "qemuDomainSetBlkioParameters", fields, 6, NO_BLKIO_CGROUP, err);
    return d ? write_change(d, record_blkio, args->params.params_val, args->params.params_len,
                            err)
             : -1;
}

int rv_qemu_domain_get_blkio_parameters(rv_driver_conn *c,
                                        const rv_domain_get_blkio_parameters_args *args,
                                        rv_domain_get_blkio_parameters_ret *ret, rv_err *err)
{
    (void)c;
    const rv_qemu_domain_def *def;
    int rc = getter(&args->dom, args->nparams, args->flags, "qemuDomainGetBlkioParameters",
                    NO_BLKIO_CGROUP, 6, &ret->nparams, &def, err);
    if (rc != 1)
        return rc;
    /* The device lists are strings: only for a client that takes them. */
    int want = (args->flags & TYPED_PARAM_STRING_OKAY) ? args->nparams : 1;
    rv_typed_param *p = rv_tune_param_list(want, 6, &ret->params.params_len, err);
    if (!(ret->params.params_val = p))
        return -1;
    for (u_int i = 0; i < ret->params.params_len; i++) {
        if (rv_tune_param_name(&p[i], rv_tune_blkio_names[i], i ? RV_TYPED_PARAM_STRING : RV_TYPED_PARAM_UINT,
                       err) < 0)
            return -1;
        if (i == 0)
            p[i].value.rv_typed_param_value_u.ui = def->tune ? def->tune->blkio_weight : 0;
        else if (!(p[i].value.rv_typed_param_value_u.s = strdup("")))
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    return 0;
}

/* ================================================================ NUMA */

#define NO_CPUSET_CGROUP "cgroup cpuset controller is not mounted"

static int record_numa(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    rv_qemu_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    int mode = t->numa_mode;
    char *nodeset = NULL;
    for (u_int i = 0; i < ch->n; i++) {
        const rv_typed_param *p = &ch->p[i];
        if (strcmp(p->field, "numa_mode") == 0) {
            mode = p->value.rv_typed_param_value_u.i;
            if (mode < 0 || mode > 3) {
                free(nodeset);
                return fail(err, RV_ERR_INVALID_ARG,
                            "invalid argument: unsupported numatune mode: '%d'", mode);
            }
            continue;
        }
        unsigned char *map;
        size_t len;
        if (rv_tune_bitmap_parse(p->value.rv_typed_param_value_u.s, &map, &len, err) < 0) {
            free(nodeset);
            return -1;
        }
        int empty = rv_tune_bitmap_empty(map, len);
        free(nodeset);
        nodeset = empty ? NULL : rv_tune_bitmap_format(map, len);
        free(map);
        if (empty)
            return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: "
                        "Invalid nodeset of 'numatune': %s", p->value.rv_typed_param_value_u.s);
        if (!nodeset)
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    if (!nodeset && !t->numa_nodeset)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: nodeset for NUMA memory tuning must be "
                           "set if 'placement' is 'static'");
    t->numa_mode = mode < 0 ? 0 : mode;
    if (nodeset) {
        free(t->numa_nodeset);
        t->numa_nodeset = nodeset;
    }
    return 0;
}

int rv_qemu_domain_set_numa_parameters(rv_driver_conn *c,
                                       const rv_domain_set_numa_parameters_args *args,
                                       rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "numa_mode", RV_TYPED_PARAM_INT }, { "numa_nodeset", RV_TYPED_PARAM_STRING },
    };
    (void)c;
    qemu_dom *d = setter(&args->dom, args->params.params_val, args->params.params_len,
                         args->flags, "virDomainSetNumaParameters",
                         "qemuDomainSetNumaParameters", fields, 2, NO_CPUSET_CGROUP, err);
    return d ? write_change(d, record_numa, args->params.params_val, args->params.params_len, err)
             : -1;
}

int rv_qemu_domain_get_numa_parameters(rv_driver_conn *c,
                                       const rv_domain_get_numa_parameters_args *args,
                                       rv_domain_get_numa_parameters_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d;
    if (rv_tune_check_nparams(args->nparams, RV_TUNING_PARAMS_MAX, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY,
                            "qemuDomainGetNumaParameters", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 || !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    if (args->nparams == 0) {
        ret->nparams = 2;
        return 0;
    }
    /* The live definition's values are what QEMU runs with (it keeps
     * the <numatune> it was started with): no cgroup needed to read them. */
    bool live = (args->flags & AFFECT_LIVE) ||
                (!(args->flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (live && !rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain is not running");
    const rv_qemu_domain_def *def = live ? d->live : d->def;
    if (!def)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: "
                    "transient domains do not have any persistent config");
    int want = (args->flags & TYPED_PARAM_STRING_OKAY) ? args->nparams : 1;
    rv_typed_param *p = rv_tune_param_list(want, 2, &ret->params.params_len, err);
    if (!(ret->params.params_val = p))
        return -1;
    const rv_qemu_tune *t = def->tune;
    if (rv_tune_param_name(&p[0], "numa_mode", RV_TYPED_PARAM_INT, err) < 0)
        return -1;
    p[0].value.rv_typed_param_value_u.i = t && t->numa_mode >= 0 ? t->numa_mode : 0;
    if (ret->params.params_len > 1 &&
        (rv_tune_param_name(&p[1], "numa_nodeset", RV_TYPED_PARAM_STRING, err) < 0 ||
         !(p[1].value.rv_typed_param_value_u.s =
               strdup(t && t->numa_nodeset ? t->numa_nodeset : ""))))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

/* ================================================================ scheduler */

#define NO_CPU_CGROUP "cgroup CPU controller is not mounted"
/* libvirtd's parameters of the posix scheduler, the ones a definition
 * keeps first (remvirt keeps cpu_shares only). */
static const rv_tune_field sched_fields[] = {
    { "cpu_shares", RV_TYPED_PARAM_ULLONG }, { "vcpu_period", RV_TYPED_PARAM_ULLONG },
    { "vcpu_quota", RV_TYPED_PARAM_LLONG }, { "emulator_period", RV_TYPED_PARAM_ULLONG },
    { "emulator_quota", RV_TYPED_PARAM_LLONG }, { "global_period", RV_TYPED_PARAM_ULLONG },
    { "global_quota", RV_TYPED_PARAM_LLONG }, { "iothread_period", RV_TYPED_PARAM_ULLONG },
    { "iothread_quota", RV_TYPED_PARAM_LLONG },
};
enum { NSCHED = sizeof(sched_fields) / sizeof(sched_fields[0]), SCHED_REPORTED = 5 };

static int record_sched(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    rv_qemu_tune *t = tune_of(def, err);
    if (!t)
        return -1;
    for (u_int i = 0; i < ch->n; i++) {
        const rv_typed_param *p = &ch->p[i];
        if (strcmp(p->field, "cpu_shares") != 0) {
            if (p->value.rv_typed_param_value_u.ul)
                return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: "
                            "remvirt's QEMU driver keeps cpu_shares only, not %s", p->field);
            continue;
        }
        unsigned long long v = p->value.rv_typed_param_value_u.ul;
        if (v > 262144)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: value of cpu_shares is out "
                        "of range (at most 262144)");
        t->cpu_shares = v;
    }
    return 0;
}

static int set_sched(const rv_nonnull_domain *wire, const rv_typed_param *p, u_int n,
                     unsigned int flags, const char *api, rv_err *err)
{
    qemu_dom *d = setter(wire, p, n, flags, api, "qemuDomainSetSchedulerParametersFlags",
                         sched_fields, NSCHED, NO_CPU_CGROUP, err);
    return d ? write_change(d, record_sched, p, n, err) : -1;
}

int rv_qemu_domain_set_scheduler_parameters(rv_driver_conn *c,
    const rv_domain_set_scheduler_parameters_args *args, rv_err *err)
{
    (void)c;
    return set_sched(&args->dom, args->params.params_val, args->params.params_len, 0,
                     "virDomainSetSchedulerParameters", err);
}

int rv_qemu_domain_set_scheduler_parameters_flags(rv_driver_conn *c,
    const rv_domain_set_scheduler_parameters_flags_args *args, rv_err *err)
{
    (void)c;
    return set_sched(&args->dom, args->params.params_val, args->params.params_len, args->flags,
                     "virDomainSetSchedulerParametersFlags", err);
}

int rv_qemu_domain_get_scheduler_type(rv_driver_conn *c,
                                      const rv_domain_get_scheduler_type_args *args,
                                      rv_domain_get_scheduler_type_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->nparams = SCHED_REPORTED;
    ret->type = strdup("posix");
    return ret->type ? 0 : fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static int get_sched(const rv_nonnull_domain *wire, int nparams, unsigned int flags,
                     rv_typed_param **val, u_int *len, rv_err *err)
{
    qemu_dom *d;
    const rv_qemu_domain_def *def;
    if (rv_tune_check_nparams(nparams, RV_TUNING_PARAMS_MAX, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY,
                            "qemuDomainGetSchedulerParametersFlags", err) < 0 ||
        rv_tune_check_exclusive(flags, err) < 0 || !(d = rv_qemu_dom_get(wire, err)) ||
        !(def = pick(d, flags, NO_CPU_CGROUP, err)))
        return -1;
    rv_typed_param *p = rv_tune_param_list(nparams, SCHED_REPORTED, len, err);
    if (!(*val = p))
        return -1;
    for (u_int i = 0; i < *len; i++) {
        if (rv_tune_param_name(&p[i], sched_fields[i].name, sched_fields[i].type, err) < 0)
            return -1;
        if (i == 0)
            p[i].value.rv_typed_param_value_u.ul = def->tune ? def->tune->cpu_shares : 0;
    }
    return 0;
}

int rv_qemu_domain_get_scheduler_parameters(rv_driver_conn *c,
    const rv_domain_get_scheduler_parameters_args *args,
    rv_domain_get_scheduler_parameters_ret *ret, rv_err *err)
{
    (void)c;
    return get_sched(&args->dom, args->nparams, 0, &ret->params.params_val,
                     &ret->params.params_len, err);
}

int rv_qemu_domain_get_scheduler_parameters_flags(rv_driver_conn *c,
    const rv_domain_get_scheduler_parameters_flags_args *args,
    rv_domain_get_scheduler_parameters_flags_ret *ret, rv_err *err)
{
    (void)c;
    return get_sched(&args->dom, args->nparams, args->flags, &ret->params.params_val,
                     &ret->params.params_len, err);
}
