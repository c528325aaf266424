/* The QEMU driver's vcpu and emulator pinning:
 *   PIN_VCPU(_FLAGS): live, sched_setaffinity on the vcpu's thread (its id
 *     from query-cpus-fast); config, <cputune><vcpupin> in the definition;
 *     GET_VCPU_PIN_INFO reads the threads' affinity, or the definition;
 *   PIN_EMULATOR: the same on every thread of QEMU that is not a vcpu
 *     (<emulatorpin>), GET_EMULATOR_PIN_INFO reads the main thread's;
 *   at start, rv_qemu_pin_apply() pins as the definition says.
 * Each live call is a QMP command answered through a deferred reply; the
 * callback finds the domain again by name and monitor (it may have
 * stopped meanwhile); with config too, the definition is written (durable)
 * once the live part has succeeded, as libvirtd does. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"


RV_LOG_CATEGORY("drivers.qemu.pin");

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2, TYPED_PARAM_STRING_OKAY = 0x4 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)
#define NO_TRANSIENT_CONFIG "transient domains do not have any persistent config"

int rv_qemu_pick_defs(const rv_nonnull_domain *wire, unsigned int flags, const char *transient,
                      qemu_dom **d, bool *live, bool *config, rv_err *err)
{
    if (!(*d = rv_qemu_dom_get(wire, err)))
        return -1;
    *live = flags & AFFECT_LIVE;
    *config = flags & AFFECT_CONFIG;
    if (!*live && !*config) {
        *live = rv_qemu_dom_active(*d);
        *config = !*live;
    }
    int rc = *live ? rv_qemu_need_monitor(*d, err) : 0;
    if (rc)
        return rc;
    if (*config && !(*d)->def)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    transient);
    return 0;
}

int rv_qemu_pick_getter(const rv_nonnull_domain *wire, unsigned int flags, qemu_dom **d,
                        bool *live, rv_err *err)
{
    bool config;
    if (!(*d = rv_qemu_dom_get(wire, err)))
        return -1;
    if ((flags & AFFECT_LIVE) && !rv_qemu_dom_active(*d))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    return rv_qemu_pick_defs(wire, flags, NO_TRANSIENT_CONFIG, d, live, &config, err);
}

/* A request waiting for QEMU's answer. */
typedef struct pin_req {
    rv_qemu_live_req live;
    int vcpu;                   /* PIN_VCPU: the vcpu; -1: the emulator */
    cpu_set_t set;
    bool config;                /* then the definition too */
    char *cpulist;              /* the map as a list, for the definitions */
    int ncpumaps, maplen;       /* GET_VCPU_PIN_INFO */
    char *disk;                 /* block I/O: the device id (the target) */
} pin_req;

static void req_free(pin_req *req)
{
    free(req->cpulist);
    free(req->live.name);
    free(req->disk);
    free(req);
}

static pin_req *req_new(qemu_dom *d, rv_err *err)
{
    return rv_qemu_live_req_new(sizeof(pin_req), d, err);
}

static void qmp_send(qemu_dom *d, pin_req *req, const char *command, json_object *args,
                     rv_qmp_reply_fn fn)
{
    if (!rv_qemu_send_for(d, req->live.reply, command, args, fn, req))
        req_free(req);
}

/* The thread of vcpu index in query-cpus-fast's answer, or 0. */
static pid_t vcpu_thread(json_object *cpus, long long index)
{
    size_t n = json_object_is_type(cpus, json_type_array) ? json_object_array_length(cpus) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *cpu = json_object_array_get_idx(cpus, i);
        if (rv_qmp_json_int(cpu, "cpu-index", -1) == index)
            return (pid_t)rv_qmp_json_int(cpu, "thread-id", 0);
    }
    return 0;
}

void rv_qemu_map_to_set(const unsigned char *map, size_t len, cpu_set_t *set)
{
    CPU_ZERO(set);
    for (size_t b = 0; b < len * 8 && b < CPU_SETSIZE; b++)
        if (map[b / 8] & (1u << (b % 8)))
            CPU_SET(b, set);
}

void rv_qemu_set_to_map(const cpu_set_t *set, unsigned char *map, int maplen)
{
    for (int b = 0; b < maplen * 8 && b < CPU_SETSIZE; b++)
        if (CPU_ISSET(b, set))
            map[b / 8] |= (unsigned char)(1u << (b % 8));
}

/* A pinning the definition keeps as a CPU set. */
static void mask_to_set(const rv_tune_cpumask *m, cpu_set_t *set)
{
    CPU_ZERO(set);
    rv_qemu_map_to_set(m->map, m->len, set);
}

/* sched_setaffinity with libvirt's wording of a refusal. */
static int set_affinity(pid_t tid, const cpu_set_t *set, rv_err *err)
{
    if (sched_setaffinity(tid, sizeof(*set), set) == 0)
        return 0;
    int e = errno;
    return fail(err, RV_ERR_SYSTEM_ERROR, "cannot set CPU affinity on process %d: %s", (int)tid,
                strerror(e));
}

/* ================================================================ definitions */

/* What a pin call records: the vcpu (-1: the emulator) and its list. */
typedef struct pin_change {
    int vcpu;
    const char *cpulist;
} pin_change;

static int record_pin(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const pin_change *ch = ctx;
    /* Every vcpu's list goes into the definition's file (at most 1 MiB). */
    if (strlen(ch->cpulist) > 1024)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: the cpu list is longer than "
                    "1024 characters");
    return rv_domain_tune_of(&def->tune, RV_FROM_QEMU, err)
               ? rv_domain_tune_pin_list(def->tune, ch->vcpu, ch->cpulist, RV_FROM_QEMU, err)
               : -1;
}

/* The live part done: the live XML says so, and the definition changes
 * when asked (the reply then waits for it to be durable). */
static void live_done(pin_req *req, qemu_dom *d, rv_err *err)
{
    pin_change ch = { req->vcpu, req->cpulist };
    if (!rv_err_is_set(err)) {
        rv_err ignored = { 0 };
        if (record_pin(d->live, &ch, &ignored) < 0)
            rv_err_clear(&ignored);
        char field[48] = "cputune.emulatorpin";
        if (req->vcpu >= 0)
            snprintf(field, sizeof(field), "cputune.vcpupin%d", req->vcpu);
        rv_qemu_emit_tunable_string(d, field, req->cpulist);
        if (req->config && rv_qemu_def_change(d, record_pin, &ch, req->live.reply, err) == 0) {
            req_free(req);
            return;
        }
    }
    rv_deferred_finish(req->live.reply, rv_err_is_set(err) ? err : NULL);
    req_free(req);
}

/* Only the definition: written, the call answered once it is durable. */
static int config_only(qemu_dom *d, int vcpu, const char *map, u_int maplen, rv_err *err)
{
    char *list = rv_tune_bitmap_format((const unsigned char *)map, maplen);
    if (!list)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    pin_change ch = { vcpu, list };
    rv_deferred *reply = rv_driver_defer(err);
    int rc = reply ? rv_qemu_def_change(d, record_pin, &ch, reply, err) : -1;
    if (rc < 0 && reply) {
        rv_deferred_finish(reply, err);
        rv_err_clear(err);
        rc = 0;
    }
    free(list);
    return rc < 0 ? -1 : RV_DEFERRED;
}

/* ================================================================ vcpus */

static void on_cpus_pin(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    pin_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_err err = { 0 };
    pid_t tid = vcpu_thread(ret, req->vcpu);
    if (tid <= 0)
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                   "invalid argument: vcpu %d is out of range of live cpu count %zu", req->vcpu,
                   json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0);
    else
        set_affinity(tid, &req->set, &err);
    live_done(req, rv_qemu_find_name(req->live.name), &err);
    rv_err_clear(&err);
}

static int pin_vcpu(const rv_nonnull_domain *wire, unsigned int vcpu, const char *map,
                    u_int maplen, unsigned int flags, const char *api, rv_err *err)
{
    if (maplen == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in %s must not be NULL", api);
    bool live, config;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainPinVcpuFlags", err) < 0)
        return -1;
    qemu_dom *d = NULL;
    int rc = rv_qemu_pick_defs(wire, flags, NO_TRANSIENT_CONFIG, &d, &live, &config, err);
    if (rc)
        return rc;
    if (rv_tune_bitmap_empty((const unsigned char *)map, maplen))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Empty cpu list for pinning");
    if (live && vcpu >= rv_qemu_def_vcpus(d->live))
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: vcpu %u is out of range of live cpu count %u", vcpu,
                    rv_qemu_def_vcpus(d->live));
    if (config && vcpu >= d->def->vcpus)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: vcpu %u is out of range of persistent cpu count %u", vcpu,
                    d->def->vcpus);
    if (!live)
        return config_only(d, (int)vcpu, map, maplen, err);
    pin_req *req = req_new(d, err);
    if (!req)
        return -1;
    req->vcpu = (int)vcpu;
    req->config = config;
    if (!(req->cpulist = rv_tune_bitmap_format((const unsigned char *)map, maplen))) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return RV_DEFERRED;
    }
    rv_qemu_map_to_set((const unsigned char *)map, maplen, &req->set);
    qmp_send(d, req, "query-cpus-fast", NULL, on_cpus_pin);
    return RV_DEFERRED;
}

int rv_qemu_domain_pin_vcpu(rv_driver_conn *c, const rv_domain_pin_vcpu_args *args, rv_err *err)
{
    (void)c;
    return pin_vcpu(&args->dom, args->vcpu, args->cpumap.cpumap_val, args->cpumap.cpumap_len,
                    AFFECT_LIVE, "virDomainPinVcpu", err);
}

int rv_qemu_domain_pin_vcpu_flags(rv_driver_conn *c, const rv_domain_pin_vcpu_flags_args *args,
                                  rv_err *err)
{
    (void)c;
    return pin_vcpu(&args->dom, args->vcpu, args->cpumap.cpumap_val, args->cpumap.cpumap_len,
                    args->flags, "virDomainPinVcpuFlags", err);
}

static void on_cpus_info(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    pin_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_domain_get_vcpu_pin_info_ret *out = rv_deferred_ret(req->live.reply);
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    if (n > (size_t)req->ncpumaps)
        n = (size_t)req->ncpumaps;
    size_t maps = (size_t)req->ncpumaps * (size_t)req->maplen;
    out->cpumaps.cpumaps_val = maps ? calloc(maps, 1) : NULL;
    if (maps && !out->cpumaps.cpumaps_val) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return;
    }
    out->cpumaps.cpumaps_len = (u_int)maps;
    for (size_t i = 0; i < n; i++) {
        pid_t tid = vcpu_thread(ret, (long long)i);
        cpu_set_t set;
        if (tid > 0 && sched_getaffinity(tid, sizeof(set), &set) == 0)
            rv_qemu_set_to_map(&set, (unsigned char *)out->cpumaps.cpumaps_val + i * (size_t)req->maplen,
                       req->maplen);
    }
    out->num = (int)n;
    rv_deferred_finish(req->live.reply, NULL);
    req_free(req);
}

/* A pin getter's flags checked (func: libvirtd's function), its domain,
 * and whether it asks the running QEMU (*live) or the definition. */
static qemu_dom *getter(const rv_nonnull_domain *wire, unsigned int flags, const char *func,
                        bool *live, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG, func, err) < 0 ||
        rv_tune_check_exclusive(flags, err) < 0)
        return NULL;
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (d)
        *live = (flags & AFFECT_LIVE) || (!(flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    return d;
}

int rv_qemu_domain_get_vcpu_pin_info(rv_driver_conn *c,
                                     const rv_domain_get_vcpu_pin_info_args *args,
                                     rv_domain_get_vcpu_pin_info_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (args->ncpumaps < 0 || args->ncpumaps > RV_VCPUINFO_MAX)
        return fail(err, RV_ERR_RPC, "ncpumaps > REMOTE_VCPUINFO_MAX");
    if (args->maplen <= 0 || (long long)args->ncpumaps * args->maplen > RV_CPUMAPS_MAX)
        return fail(err, RV_ERR_RPC, args->maplen <= 0 ? "maplen must be positive"
                                                       : "maxinfo * maplen > REMOTE_CPUMAPS_MAX");
    bool live;
    qemu_dom *d = getter(&args->dom, args->flags, "qemuDomainGetVcpuPinInfo", &live, err);
    if (!d)
        return -1;
    if (!live) {
        /* The definition's <vcpupin>s; a vcpu without one runs anywhere. */
        const rv_qemu_domain_def *def = d->def ? d->def : rv_qemu_dom_def(d);
        int n = args->ncpumaps < (int)def->vcpus ? args->ncpumaps : (int)def->vcpus;
        size_t maps = (size_t)args->ncpumaps * (size_t)args->maplen;
        ret->cpumaps.cpumaps_val = maps ? calloc(maps, 1) : NULL;
        if (maps && !ret->cpumaps.cpumaps_val)
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
        ret->cpumaps.cpumaps_len = (u_int)maps;
        cpu_set_t all;
        if (sched_getaffinity(0, sizeof(all), &all) < 0)
            CPU_ZERO(&all);
        for (int i = 0; i < n; i++) {
            cpu_set_t set = all;
            const rv_tune_cpumask *pin = rv_domain_tune_pin_of(def->tune, i);
            if (pin)
                mask_to_set(pin, &set);
            rv_qemu_set_to_map(&set, (unsigned char *)ret->cpumaps.cpumaps_val + (size_t)i * args->maplen,
                       args->maplen);
        }
        ret->num = n;
        return 0;
    }
    int rc = rv_qemu_need_monitor(d, err);
    if (rc)
        return rc;
    pin_req *req = req_new(d, err);
    if (!req)
        return -1;
    req->ncpumaps = args->ncpumaps;
    req->maplen = args->maplen;
    qmp_send(d, req, "query-cpus-fast", NULL, on_cpus_info);
    return RV_DEFERRED;
}

/* ================================================================ emulator */

/* Whether thread tid of QEMU pid is an IOThread's: QEMU names them "IO
 * <object id>" (-name debug-threads=on), and libvirtd's emulator pinning
 * leaves them to their <iothreadpin>. */
static bool iothread_thread(pid_t pid, long tid)
{
    char path[80], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm", (int)pid, tid);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return false;
    bool got = fgets(comm, sizeof(comm), fp) != NULL;
    fclose(fp);
    return got && strncmp(comm, "IO iothread", 11) == 0;
}

/* Pin every thread of QEMU pid that is neither one of cpus' vcpu threads
 * nor an IOThread's. */
static int pin_emulator_threads(pid_t pid, json_object *cpus, const cpu_set_t *set, rv_err *err)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot read %s: %s", path, strerror(errno));
    struct dirent *e;
    size_t ncpus = json_object_is_type(cpus, json_type_array) ? json_object_array_length(cpus) : 0;
    int rc = 0;
    while (rc == 0 && (e = readdir(dir))) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (tid <= 0 || *end)
            continue;
        bool is_vcpu = iothread_thread((pid_t)pid, tid);
        for (size_t i = 0; i < ncpus && !is_vcpu; i++)
            is_vcpu = rv_qmp_json_int(json_object_array_get_idx(cpus, i), "thread-id", 0) == tid;
        /* A thread gone meanwhile (ESRCH) is no failure. */
        if (!is_vcpu && sched_setaffinity((pid_t)tid, sizeof(*set), set) < 0 && errno != ESRCH)
            rc = set_affinity((pid_t)tid, set, err);
    }
    closedir(dir);
    return rc;
}

static void on_cpus_emulator(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    pin_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_err err = { 0 };
    pin_emulator_threads(req->live.pid, ret, &req->set, &err);
    live_done(req, rv_qemu_find_name(req->live.name), &err);
    rv_err_clear(&err);
}

int rv_qemu_domain_pin_emulator(rv_driver_conn *c, const rv_domain_pin_emulator_args *args,
                                rv_err *err)
{
    (void)c;
    if (args->cpumap.cpumap_len == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in virDomainPinEmulator must not be NULL");
    if (rv_tune_check_exclusive(args->flags, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainPinEmulator", err) < 0)
        return -1;
    bool live, config;
    qemu_dom *d = NULL;
    int rc = rv_qemu_pick_defs(&args->dom, args->flags, NO_TRANSIENT_CONFIG, &d, &live, &config,
                               err);
    if (rc)
        return rc;
    if (rv_tune_bitmap_empty((const unsigned char *)args->cpumap.cpumap_val,
                             args->cpumap.cpumap_len))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Empty cpu list for pinning");
    if (!live)
        return config_only(d, -1, args->cpumap.cpumap_val, args->cpumap.cpumap_len, err);
    pin_req *req = req_new(d, err);
    if (!req)
        return -1;
    req->vcpu = -1;
    req->config = config;
    if (!(req->cpulist = rv_tune_bitmap_format((const unsigned char *)args->cpumap.cpumap_val,
                                               args->cpumap.cpumap_len))) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return RV_DEFERRED;
    }
    rv_qemu_map_to_set((const unsigned char *)args->cpumap.cpumap_val, args->cpumap.cpumap_len,
               &req->set);
    qmp_send(d, req, "query-cpus-fast", NULL, on_cpus_emulator);
    return RV_DEFERRED;
}

int rv_qemu_domain_get_emulator_pin_info(rv_driver_conn *c,
                                         const rv_domain_get_emulator_pin_info_args *args,
                                         rv_domain_get_emulator_pin_info_ret *ret, rv_err *err)
{
    (void)c;
    if (args->maplen <= 0 || args->maplen > RV_CPUMAP_MAX)
        return fail(err, RV_ERR_RPC, args->maplen <= 0 ? "maplen must be positive"
                                                       : "maplen > REMOTE_CPUMAP_MAX");
    bool live;
    qemu_dom *d = getter(&args->dom, args->flags, "qemuDomainGetEmulatorPinInfo", &live, err);
    if (!d)
        return -1;
    int rc = live ? rv_qemu_need_monitor(d, err) : 0;
    if (rc)
        return rc;
    cpu_set_t set;
    /* Live: where QEMU's main thread may run; the definition: its
     * <emulatorpin>, else anywhere. */
    if (sched_getaffinity(live ? d->pid : 0, sizeof(set), &set) < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot get CPU affinity of process %d: %s",
                    (int)(live ? d->pid : 0), strerror(errno));
    const rv_tune_cpumask *pin = d->def ? rv_domain_tune_pin_of(d->def->tune, -1) : NULL;
    if (!live && pin)
        mask_to_set(pin, &set);
    if (!(ret->cpumaps.cpumaps_val = calloc((size_t)args->maplen, 1)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    ret->cpumaps.cpumaps_len = (u_int)args->maplen;
    rv_qemu_set_to_map(&set, (unsigned char *)ret->cpumaps.cpumaps_val, args->maplen);
    ret->ret = 1;
    return 0;
}

/* ================================================================ at start */

typedef struct apply_req {
    char *name;
    rv_qmp *qmp;
    pid_t pid;
} apply_req;

static bool iothreads_pinned(const rv_domain_tune *t)
{
    for (size_t i = 0; t && i < t->niothreads; i++)
        if (t->iothreads[i].pin.map)
            return true;
    return false;
}

/* The domain req was made for, still running the same QEMU, or NULL. */
static qemu_dom *apply_dom(const apply_req *req, rv_qmp *qmp, const rv_err *qerr)
{
    qemu_dom *d = rv_qemu_find_name(req->name);
    return !qerr && d && d->qmp == qmp && d->pid == req->pid && d->live && d->live->tune ? d
                                                                                      : NULL;
}

static void on_iothreads_apply(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    apply_req *req = opaque;
    qemu_dom *d = apply_dom(req, qmp, qerr);
    if (d)
        rv_qemu_iothread_pins_set(d, ret);
    free(req->name);
    free(req);
}

static void on_cpus_apply(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    apply_req *req = opaque;
    qemu_dom *d = apply_dom(req, qmp, qerr);
    if (d) {
        const rv_domain_tune *t = d->live->tune;
        rv_err err = { 0 };
        cpu_set_t set;
        if (t->emulator.map) {
            mask_to_set(&t->emulator, &set);
            pin_emulator_threads(req->pid, ret, &set, &err);
        }
        for (size_t v = 0; v < t->npins && !rv_err_is_set(&err); v++) {
            pid_t tid = t->pins[v].map ? vcpu_thread(ret, (int)v) : 0;
            if (tid > 0) {
                mask_to_set(&t->pins[v], &set);
                set_affinity(tid, &set, &err);
            }
        }
        if (rv_err_is_set(&err))
            RV_WARN("domain '%s': its <cputune> pinning: %s", req->name, err.message);
        rv_err_clear(&err);
        /* Then the IOThreads, whose threads the emulator's pinning left. */
        if (iothreads_pinned(t) &&
            rv_qmp_command(qmp, "query-iothreads", NULL, 0, on_iothreads_apply, req, &err) == 0)
            return;
        if (rv_err_is_set(&err))
            RV_WARN("domain '%s': cannot pin its IOThreads: %s", req->name, err.message);
        rv_err_clear(&err);
    }
    free(req->name);
    free(req);
}

void rv_qemu_pin_apply(qemu_dom *d)
{
    const rv_domain_tune *t = d->live ? d->live->tune : NULL;
    bool any = t && (t->emulator.map || iothreads_pinned(t));
    for (size_t v = 0; t && v < t->npins && !any; v++)
        any = t->pins[v].map != NULL;
    if (!any)
        return;
    apply_req *req = calloc(1, sizeof(*req));
    rv_err err = { 0 };
    if (!req || !(req->name = strdup(d->live->name))) {
        free(req);
        RV_WARN("domain '%s': no memory to pin its threads", d->live->name);
        return;
    }
    req->qmp = d->qmp;
    req->pid = d->pid;
    if (rv_qmp_command(d->qmp, "query-cpus-fast", NULL, 0, on_cpus_apply, req, &err) < 0) {
        RV_WARN("domain '%s': cannot pin its threads: %s", d->live->name, err.message);
        free(req->name);
        free(req);
    }
    rv_err_clear(&err);
}
