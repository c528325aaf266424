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

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)
#define TRANSIENT_CONFIG "transient domains do not have any persistent config"

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
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: " TRANSIENT_CONFIG);
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
 * *def the definition flags name (live_readable: a running domain's
 * values need no cgroup); -1 with err set. */
static int getter(const rv_nonnull_domain *wire, int nparams, unsigned int flags, const char *func,
                  const char *controller, bool live_readable, int n, int *count,
                  const rv_qemu_domain_def **def, rv_err *err)
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
    bool live = (flags & AFFECT_LIVE) || (!(flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (!live_readable || !live)
        return (*def = pick(d, flags, controller, err)) ? 1 : -1;
    if (!rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain is not running");
    *def = d->live;
    return 1;
}

/* GET_MEMORY/BLKIO/NUMA_PARAMETERS (kind RV_TUNE_GET_*). */
static int get_params(const rv_nonnull_domain *wire, int kind, int nparams, unsigned int flags,
                      const char *func, const char *controller, int *count,
                      rv_typed_param **val, u_int *len, rv_err *err)
{
    const rv_qemu_domain_def *def = NULL;
    /* The live definition's NUMA values are what QEMU runs with (it keeps
     * the <numatune> it was started with). */
    int rc = getter(wire, nparams, flags, func, controller, kind == RV_TUNE_GET_NUMA,
                    rv_domain_tune_count(kind), count, &def, err);
    if (rc != 1)
        return rc;
    return rv_domain_tune_get(def->tune, kind, nparams, flags, val, len, RV_FROM_QEMU, err);
}

typedef struct params_change {
    const rv_typed_param *p;
    u_int n;
} params_change;

/* Write the definition changed by change(def, ctx); the reply waits. */
static int write_change(qemu_dom *d, int (*change)(rv_qemu_domain_def *, const void *, rv_err *),
                        const void *ctx, rv_err *err)
{
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    if (rv_qemu_def_change(d, change, ctx, reply, err) < 0) {
        rv_deferred_finish(reply, err);
        rv_err_clear(err);
    }
    return RV_DEFERRED;
}

/* A setter of the shared model's: checks, the domain, live refused, then
 * change recorded in the definition. */
static int set_params(const rv_nonnull_domain *wire, const rv_typed_param *p, u_int n,
                      unsigned int flags, const char *api, const char *func,
                      const rv_tune_field *fields, size_t nfields, const char *controller,
                      int (*change)(rv_qemu_domain_def *, const void *, rv_err *), rv_err *err)
{
    qemu_dom *d = setter(wire, p, n, flags, api, func, fields, nfields, controller, err);
    params_change ch = { p, n };
    return d ? write_change(d, change, &ch, err) : -1;
}

#define NO_MEMORY_CGROUP "cgroup memory controller is not mounted"
#define NO_BLKIO_CGROUP "blkio cgroup isn't mounted"
#define NO_CPUSET_CGROUP "cgroup cpuset controller is not mounted"

static int record_memory(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    return rv_domain_tune_of(&def->tune, RV_FROM_QEMU, err)
               ? rv_domain_tune_set_memory(def->tune, def->tune, ch->p, ch->n,
                                           &rv_qemu_tune_rules, err)
               : -1;
}

static int record_blkio(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    return rv_domain_tune_of(&def->tune, RV_FROM_QEMU, err)
               ? rv_domain_tune_set_blkio(def->tune, ch->p, ch->n, &rv_qemu_tune_rules, err)
               : -1;
}

static int record_numa(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const params_change *ch = ctx;
    return rv_domain_tune_of(&def->tune, RV_FROM_QEMU, err)
               ? rv_domain_tune_set_numa(def->tune, ch->p, ch->n, false, false,
                                         &rv_qemu_tune_rules, err)
               : -1;
}

int rv_qemu_domain_set_memory_parameters(rv_driver_conn *c,
                                         const rv_domain_set_memory_parameters_args *args,
                                         rv_err *err)
{
    (void)c;
    return set_params(&args->dom, args->params.params_val, args->params.params_len, args->flags,
                      "virDomainSetMemoryParameters", "qemuDomainSetMemoryParameters",
                      rv_tune_memory_fields, 3, NO_MEMORY_CGROUP, record_memory, err);
}

int rv_qemu_domain_get_memory_parameters(rv_driver_conn *c,
                                         const rv_domain_get_memory_parameters_args *args,
                                         rv_domain_get_memory_parameters_ret *ret, rv_err *err)
{
    (void)c;
    return get_params(&args->dom, RV_TUNE_GET_MEMORY, args->nparams, args->flags,
                      "qemuDomainGetMemoryParameters", NO_MEMORY_CGROUP, &ret->nparams,
                      &ret->params.params_val, &ret->params.params_len, err);
}

int rv_qemu_domain_set_blkio_parameters(rv_driver_conn *c,
                                        const rv_domain_set_blkio_parameters_args *args,
                                        rv_err *err)
{
    (void)c;
    return set_params(&args->dom, args->params.params_val, args->params.params_len, args->flags,
                      "virDomainSetBlkioParameters", "qemuDomainSetBlkioParameters",
                      rv_tune_blkio_fields, 6, NO_BLKIO_CGROUP, record_blkio, err);
}

int rv_qemu_domain_get_blkio_parameters(rv_driver_conn *c,
                                        const rv_domain_get_blkio_parameters_args *args,
                                        rv_domain_get_blkio_parameters_ret *ret, rv_err *err)
{
    (void)c;
    return get_params(&args->dom, RV_TUNE_GET_BLKIO, args->nparams, args->flags,
                      "qemuDomainGetBlkioParameters", NO_BLKIO_CGROUP, &ret->nparams,
                      &ret->params.params_val, &ret->params.params_len, err);
}

int rv_qemu_domain_set_numa_parameters(rv_driver_conn *c,
                                       const rv_domain_set_numa_parameters_args *args,
                                       rv_err *err)
{
    (void)c;
    return set_params(&args->dom, args->params.params_val, args->params.params_len, args->flags,
                      "virDomainSetNumaParameters", "qemuDomainSetNumaParameters",
                      rv_tune_numa_fields, 2, NO_CPUSET_CGROUP, record_numa, err);
}

int rv_qemu_domain_get_numa_parameters(rv_driver_conn *c,
                                       const rv_domain_get_numa_parameters_args *args,
                                       rv_domain_get_numa_parameters_ret *ret, rv_err *err)
{
    (void)c;
    return get_params(&args->dom, RV_TUNE_GET_NUMA, args->nparams, args->flags,
                      "qemuDomainGetNumaParameters", NO_CPUSET_CGROUP, &ret->nparams,
                      &ret->params.params_val, &ret->params.params_len, err);
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
    rv_domain_tune *t = rv_domain_tune_of(&def->tune, RV_FROM_QEMU, err);
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
    return set_params(wire, p, n, flags, api, "qemuDomainSetSchedulerParametersFlags",
                      sched_fields, NSCHED, NO_CPU_CGROUP, record_sched, err);
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

/* ================================================================ interface bandwidth */

/* An interface's <bandwidth> is kept in the definition (--config) and
 * read back; remvirtd shapes no traffic, so a running interface's cannot
 * change.  User networking has no host device to shape at all: refused
 * with libvirtd's words. */
static int iface_of(const rv_qemu_domain_def *def, const char *device, rv_err *err)
{
    static const char *const types[] = { "user", "bridge", "network" };
    int i = rv_qemu_iface_index(def, device);
    if (i < 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: '%s' is not a known interface", device);
    if (def->interfaces[i].type == RV_QEMU_NET_USER)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: setting bandwidth on "
                    "interfaces of type '%s' is not implemented yet", types[def->interfaces[i].type]);
    return i;
}

typedef struct bandwidth_change {
    const char *device;
    const rv_typed_param *p;
    u_int n;
} bandwidth_change;

static int record_bandwidth(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const bandwidth_change *ch = ctx;
    int i = iface_of(def, ch->device, err);
    if (i < 0)
        return -1;
    rv_tune_bandwidth_apply(&def->interfaces[i].bandwidth, ch->p, ch->n);
    return 0;
}

int rv_qemu_domain_set_interface_parameters(rv_driver_conn *c,
                                            const rv_domain_set_interface_parameters_args *args,
                                            rv_err *err)
{
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    qemu_dom *d;
    (void)c;
    if (rv_tune_params_check_call(p, n, "virDomainSetInterfaceParameters", "params", err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainSetInterfaceParameters", err) < 0 ||
        rv_tune_params_validate(p, n, rv_tune_bandwidth_fields, RV_TUNE_BANDWIDTH_FIELDS, err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    bool live = (args->flags & AFFECT_LIVE) ||
                (!(args->flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    bool config = (args->flags & AFFECT_CONFIG) || !live;
    if (live && !rv_qemu_dom_active(d))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if (config && !d->def)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: " TRANSIENT_CONFIG);
    if ((live && iface_of(d->live, args->device, err) < 0) ||
        (config && iface_of(rv_qemu_def_newest(d), args->device, err) < 0))
        return -1;
    if (live)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: remvirtd does not "
                    "shape a running interface's traffic; change its bandwidth with --config");
    bandwidth_change ch = { args->device, p, n };
    return write_change(d, record_bandwidth, &ch, err);
}

int rv_qemu_domain_get_interface_parameters(rv_driver_conn *c,
                                            const rv_domain_get_interface_parameters_args *args,
                                            rv_domain_get_interface_parameters_ret *ret, rv_err *err)
{
    qemu_dom *d;
    (void)c;
    if (rv_tune_check_nparams(args->nparams, RV_TUNING_PARAMS_MAX, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY,
                            "qemuDomainGetInterfaceParameters", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 || !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    bool live = (args->flags & AFFECT_LIVE) ||
                (!(args->flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (live && !rv_qemu_dom_active(d))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if (!live && !d->def)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: " TRANSIENT_CONFIG);
    const rv_qemu_domain_def *def = live ? d->live : d->def;
    if (args->nparams == 0) {
        ret->nparams = RV_TUNE_BANDWIDTH_FIELDS;
        return 0;
    }
    int i = rv_qemu_iface_index(def, args->device);
    if (i < 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: '%s' is not a known interface", args->device);
    const rv_tune_bandwidth *bw = &def->interfaces[i].bandwidth;
    rv_typed_param *p = rv_tune_param_list(args->nparams, RV_TUNE_BANDWIDTH_FIELDS,
                                           &ret->params.params_len, err);
    if (!(ret->params.params_val = p))
        return -1;
    for (u_int k = 0; k < ret->params.params_len; k++) {
        if (rv_tune_param_name(&p[k], rv_tune_bandwidth_fields[k].name, RV_TYPED_PARAM_UINT, err) < 0)
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
        p[k].value.rv_typed_param_value_u.ui = (k < 4 ? bw->has_in : bw->has_out) ? bw->val[k] : 0;
    }
    ret->nparams = (int)ret->params.params_len;
    return 0;
}
