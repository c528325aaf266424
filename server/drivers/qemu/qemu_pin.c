/* The QEMU driver's pinning and block I/O throttling, live:
 *   PIN_VCPU(_FLAGS): sched_setaffinity on the vcpu's thread (its id from
 *     query-cpus-fast), GET_VCPU_PIN_INFO reads the threads' affinity;
 *   PIN_EMULATOR: the same on every thread of QEMU that is not a vcpu,
 *     GET_EMULATOR_PIN_INFO reads the main thread's;
 *   SET_BLOCK_IO_TUNE: QMP block_set_io_throttle on the disk's device,
 *     GET_BLOCK_IO_TUNE: its limits from query-block.
 * The definition does not keep <cputune> or <iotune> yet: --config is
 * refused with OPERATION_UNSUPPORTED, saying so.  Each live call is a QMP
 * command answered through a deferred reply; the callback finds the
 * domain again by name and monitor (it may have stopped meanwhile). */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"


enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2, TYPED_PARAM_STRING_OKAY = 0x4 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int check_flags(unsigned int flags, unsigned int known, const char *func, rv_err *err)
{
    if (flags & ~known)
        return fail(err, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                    flags & ~known, func);
    return 0;
}

static void finish_error(rv_deferred *reply, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void finish_error(rv_deferred *reply, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, RV_FROM_QEMU, code, fmt, ap);
    va_end(ap);
    rv_deferred_finish(reply, &err);
    rv_err_clear(&err);
}

/* The running domain flags name (live unless config asked): config is
 * refused, the definition having no place for it yet. */
static qemu_dom *live_dom(const rv_nonnull_domain *wire, unsigned int flags, const char *what,
                          rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (!d)
        return NULL;
    if (flags & AFFECT_CONFIG) {
        fail(err, RV_ERR_OPERATION_UNSUPPORTED,
             "Operation not supported: remvirt's QEMU driver does not keep %s in the "
             "persistent definition yet (use --live)", what);
        return NULL;
    }
    if (!rv_qemu_dom_active(d) || d->stopping || !d->qmp || !rv_qmp_is_ready(d->qmp)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain is not running");
        return NULL;
    }
    return d;
}

/* A request waiting for QEMU's answer. */
typedef struct pin_req {
    rv_deferred *reply;
    rv_qmp *qmp;
    char *name;
    pid_t pid;
    int vcpu;                   /* PIN_VCPU: the vcpu; -1: the emulator */
    cpu_set_t set;
    int ncpumaps, maplen;       /* GET_VCPU_PIN_INFO */
    char *disk;                 /* block I/O: the device id (the target) */
} pin_req;

static void req_free(pin_req *req)
{
    free(req->name);
    free(req->disk);
    free(req);
}

static pin_req *req_new(qemu_dom *d, rv_err *err)
{
    pin_req *req = calloc(1, sizeof(*req));
    if (!req || !(req->name = strdup(d->live->name))) {
        free(req);
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    req->qmp = d->qmp;
    req->pid = d->pid;
    if (!(req->reply = rv_driver_defer(err))) {
        req_free(req);
        return NULL;
    }
    return req;
}

/* Send command; on failure the call is answered and the request freed. */
static void qmp_send(qemu_dom *d, pin_req *req, const char *command, json_object *args,
                 rv_qmp_reply_fn fn)
{
    rv_err err = { 0 };
    if (rv_qmp_command(d->qmp, command, args, 0, fn, req, &err) == 0)
        return;
    rv_deferred_finish(req->reply, &err);
    rv_err_clear(&err);
    req_free(req);
}

/* Whether the request's domain still runs in the same process. */
static bool req_alive(const pin_req *req, rv_qmp *qmp, const rv_err *err)
{
    qemu_dom *d = rv_qemu_find_name(req->name);
    if (err) {
        rv_deferred_finish(req->reply, err);
        return false;
    }
    if (!d || d->qmp != qmp || !d->live || d->pid != req->pid) {
        finish_error(req->reply, RV_ERR_OPERATION_FAILED,
                     "operation failed: the domain stopped");
        return false;
    }
    return true;
}

static long long json_int(json_object *obj, const char *key, long long def)
{
    json_object *v = NULL;
    if (!obj || !json_object_object_get_ex(obj, key, &v) || !v)
        return def;
    return json_object_get_int64(v);
}

/* The thread of vcpu index in query-cpus-fast's answer, or 0. */
static pid_t vcpu_thread(json_object *cpus, long long index)
{
    size_t n = json_object_is_type(cpus, json_type_array) ? json_object_array_length(cpus) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *cpu = json_object_array_get_idx(cpus, i);
        if (json_int(cpu, "cpu-index", -1) == index)
            return (pid_t)json_int(cpu, "thread-id", 0);
    }
    return 0;
}

static void map_to_set(const unsigned char *map, size_t len, cpu_set_t *set)
{
    CPU_ZERO(set);
    for (size_t b = 0; b < len * 8 && b < CPU_SETSIZE; b++)
        if (map[b / 8] & (1u << (b % 8)))
            CPU_SET(b, set);
}

static void set_to_map(const cpu_set_t *set, unsigned char *map, int maplen)
{
    for (int b = 0; b < maplen * 8 && b < CPU_SETSIZE; b++)
        if (CPU_ISSET(b, set))
            map[b / 8] |= (unsigned char)(1u << (b % 8));
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

/* ================================================================ vcpus */

static void on_cpus_pin(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    pin_req *req = opaque;
    if (!req_alive(req, qmp, qerr)) {
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
    rv_deferred_finish(req->reply, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
    req_free(req);
}

static int pin_vcpu(const rv_nonnull_domain *wire, unsigned int vcpu, const char *map,
                    u_int maplen, unsigned int flags, const char *api, rv_err *err)
{
    if (maplen == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in %s must not be NULL", api);
    if (check_flags(flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainPinVcpuFlags", err) < 0)
        return -1;
    qemu_dom *d = live_dom(wire, flags, "<cputune> vcpu pinning", err);
    if (!d)
        return -1;
    if (rv_tune_bitmap_empty((const unsigned char *)map, maplen))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Empty cpu list for pinning");
    if (vcpu >= rv_qemu_def_vcpus(d->live))
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: vcpu %u is out of range of live cpu count %u", vcpu,
                    rv_qemu_def_vcpus(d->live));
    pin_req *req = req_new(d, err);
    if (!req)
        return -1;
    req->vcpu = (int)vcpu;
    map_to_set((const unsigned char *)map, maplen, &req->set);
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
    if (!req_alive(req, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_domain_get_vcpu_pin_info_ret *out = rv_deferred_ret(req->reply);
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    if (n > (size_t)req->ncpumaps)
        n = (size_t)req->ncpumaps;
    size_t maps = (size_t)req->ncpumaps * (size_t)req->maplen;
    out->cpumaps.cpumaps_val = maps ? calloc(maps, 1) : NULL;
    if (maps && !out->cpumaps.cpumaps_val) {
        finish_error(req->reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return;
    }
    out->cpumaps.cpumaps_len = (u_int)maps;
    for (size_t i = 0; i < n; i++) {
        pid_t tid = vcpu_thread(ret, (long long)i);
        cpu_set_t set;
        if (tid > 0 && sched_getaffinity(tid, sizeof(set), &set) == 0)
            set_to_map(&set, (unsigned char *)out->cpumaps.cpumaps_val + i * (size_t)req->maplen,
                       req->maplen);
    }
    out->num = (int)n;
    rv_deferred_finish(req->reply, NULL);
    req_free(req);
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
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainGetVcpuPinInfo",
                    err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    bool live = (args->flags & AFFECT_LIVE) ||
                (!(args->flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (!live) {
        /* Nothing pinned in a definition: every vcpu may run anywhere. */
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
        for (int i = 0; i < n; i++)
            set_to_map(&all, (unsigned char *)ret->cpumaps.cpumaps_val + (size_t)i * args->maplen,
                       args->maplen);
        ret->num = n;
        return 0;
    }
    if (!(d = live_dom(&args->dom, AFFECT_LIVE, "", err)))
        return -1;
    pin_req *req = req_new(d, err);
    if (!req)
        return -1;
    req->ncpumaps = args->ncpumaps;
    req->maplen = args->maplen;
    qmp_send(d, req, "query-cpus-fast", NULL, on_cpus_info);
    return RV_DEFERRED;
}

/* ================================================================ emulator */

static void on_cpus_emulator(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    pin_req *req = opaque;
    if (!req_alive(req, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_err err = { 0 };
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)req->pid);
    DIR *dir = opendir(path);
    if (!dir)
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot read %s: %s", path,
                   strerror(errno));
    struct dirent *e;
    size_t ncpus = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    while (dir && !rv_err_is_set(&err) && (e = readdir(dir))) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (tid <= 0 || *end)
            continue;
        bool is_vcpu = false;
        for (size_t i = 0; i < ncpus && !is_vcpu; i++)
            is_vcpu = json_int(json_object_array_get_idx(ret, i), "thread-id", 0) == tid;
        /* A thread gone meanwhile (ESRCH) is no failure. */
        if (!is_vcpu && sched_setaffinity((pid_t)tid, sizeof(req->set), &req->set) < 0 &&
            errno != ESRCH)
            set_affinity((pid_t)tid, &req->set, &err);
    }
    if (dir)
        closedir(dir);
    rv_deferred_finish(req->reply, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
    req_free(req);
}

int rv_qemu_domain_pin_emulator(rv_driver_conn *c, const rv_domain_pin_emulator_args *args,
                                rv_err *err)
{
    (void)c;
    if (args->cpumap.cpumap_len == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in virDomainPinEmulator must not be NULL");
    if (rv_tune_check_exclusive(args->flags, err) < 0 ||
        check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainPinEmulator", err) < 0)
        return -1;
    qemu_dom *d = live_dom(&args->dom, args->flags, "<cputune> emulator pinning", err);
    if (!d)
        return -1;
    if (rv_tune_bitmap_empty((const unsigned char *)args->cpumap.cpumap_val,
                             args->cpumap.cpumap_len))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Empty cpu list for pinning");
    pin_req *req = req_new(d, err);
    if (!req)
        return -1;
    req->vcpu = -1;
    map_to_set((const unsigned char *)args->cpumap.cpumap_val, args->cpumap.cpumap_len,
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
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainGetEmulatorPinInfo",
                    err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    bool live = (args->flags & AFFECT_LIVE) ||
                (!(args->flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (live && (!rv_qemu_dom_active(d) || d->pid <= 0))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain is not running");
    cpu_set_t set;
    /* Live: where QEMU's main thread may run; the definition: anywhere. */
    if (sched_getaffinity(live ? d->pid : 0, sizeof(set), &set) < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot get CPU affinity of process %d: %s",
                    (int)(live ? d->pid : 0), strerror(errno));
    if (!(ret->cpumaps.cpumaps_val = calloc((size_t)args->maplen, 1)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    ret->cpumaps.cpumaps_len = (u_int)args->maplen;
    set_to_map(&set, (unsigned char *)ret->cpumaps.cpumaps_val, args->maplen);
    ret->ret = 1;
    return 0;
}
