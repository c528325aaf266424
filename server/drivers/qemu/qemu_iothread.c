/* The QEMU driver's IOThreads (the definition's <iothreadids>, each
 * QEMU's "-object iothread,id=iothreadN"), as libvirtd 9.0's QEMU driver:
 *   GET_IOTHREAD_INFO: live, QEMU's query-iothreads (its order) and each
 *     thread's CPU affinity; else the definition's, pinned or all CPUs;
 *   PIN_IOTHREAD: live, sched_setaffinity on the thread (TUNABLE event
 *     cputune.iothreadpinN); config, <iothreadpin>;
 *   ADD_IOTHREAD, DEL_IOTHREAD: live, object-add / object-del; config,
 *     <iothreadids>; one a disk uses is not removed;
 *   SET_IOTHREAD_PARAMS: live only, qom-set of the polling values.
 * Each live part is QMP answered through a deferred reply; the callback
 * finds the domain again by name (it may have stopped meanwhile).  With
 * config too, the definition is written (durable, one commit point) once
 * the live part has succeeded; everything is checked before anything is
 * changed. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("drivers.qemu.iothread");

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)
#define TRANSIENT "transient domains do not have any persistent config"

/* The host's CPUs as libvirt counts them for a CPU map. */
static int host_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    return n > 0 && n <= CPU_SETSIZE ? (int)n : 1;
}

unsigned rv_qemu_iothread_id(const char *id)
{
    unsigned long long v;
    char *end;
    if (!id || strncmp(id, "iothread", 8) != 0 || !id[8])
        return 0;
    errno = 0;
    v = strtoull(id + 8, &end, 10);
    return errno || *end || v > 0xffffffffULL ? 0 : (unsigned)v;
}

/* The thread of IOThread id in query-iothreads' answer, or 0. */
static pid_t iothread_tid(json_object *list, unsigned id)
{
    size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(list, i), *name;
        if (json_object_object_get_ex(t, "id", &name) &&
            rv_qemu_iothread_id(json_object_get_string(name)) == id)
            return (pid_t)rv_qmp_json_int(t, "thread-id", 0);
    }
    return 0;
}

/* An info entry's map (maplen bytes) from set. */
static int info_map(rv_domain_iothread_info *info, const cpu_set_t *set, int maplen, rv_err *err)
{
    unsigned char *map = calloc((size_t)maplen, 1);
    if (!map)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    rv_qemu_set_to_map(set, map, maplen);
    info->cpumap.cpumap_val = (char *)map;
    info->cpumap.cpumap_len = (u_int)maplen;
    return 0;
}

/* ================================================================ requests */

/* A change of a definition's IOThreads (live or persistent). */
typedef int (*change_fn)(rv_qemu_domain_def *def, const void *ctx, rv_err *err);

typedef struct io_req {
    rv_qemu_live_req live;
    unsigned id;
    bool config;                /* then the definition too */
    change_fn fn;               /* what the definitions then record */
    unsigned char *map;         /* PIN: the map given; ADD: every CPU */
    size_t maplen;
    char *cpulist;              /* PIN: the map as a list (the TUNABLE event) */
    /* SET_IOTHREAD_PARAMS: the qom-set properties still to send. */
    const char *props[8];
    unsigned long long values[8];
    int nprops, next;
} io_req;

static void req_free(io_req *req)
{
    free(req->map);
    free(req->cpulist);
    free(req->live.name);
    free(req);
}

static void qmp_send(qemu_dom *d, io_req *req, const char *command, json_object *args,
                     rv_qmp_reply_fn fn)
{
    if (!rv_qemu_send_for(d, req->live.reply, command, args, fn, req))
        req_free(req);
}

/* What a change of a definition's IOThreads asks. */
typedef struct io_change {
    unsigned id;
    const unsigned char *map;   /* PIN */
    size_t maplen;
} io_change;

static int add_check(const rv_qemu_domain_def *def, unsigned id, rv_err *err)
{
    if (rv_domain_tune_iothread_find(def->tune, id) >= 0)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: an IOThread is already using iothread_id '%u'", id);
    return 0;
}

static int record_add(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const io_change *ch = ctx;
    return add_check(def, ch->id, err) < 0 || !rv_domain_tune_of(&def->tune, RV_FROM_QEMU, err)
               ? -1 : rv_domain_tune_iothread_add(def->tune, ch->id, false, RV_FROM_QEMU, err);
}

/* The index of IOThread id in def, or -1 with libvirt's refusals of its
 * removal (unknown, or a disk uses it). */
static int del_check(const rv_qemu_domain_def *def, unsigned id, rv_err *err)
{
    int i = rv_domain_tune_iothread_find(def->tune, id);
    if (i < 0)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: cannot find IOThread '%u' in iothreadids list", id);
    for (size_t k = 0; k < def->ndisks; k++)
        if (def->disks[k].iothread == id)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: cannot remove IOThread %u "
                        "since it is being used by disk '%s'", id, def->disks[k].target);
    for (size_t k = 0; k < def->dev.ncontrollers; k++)
        if (def->dev.controllers[k].iothread == id)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: cannot remove IOThread '%u' "
                        "since it is being used by controller", id);
    return i;
}

static int record_del(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const io_change *ch = ctx;
    int i = del_check(def, ch->id, err);
    if (i < 0)
        return -1;
    rv_domain_tune_iothread_del(def->tune, (size_t)i);
    return 0;
}

static int pin_check(const rv_qemu_domain_def *def, unsigned id, bool live, rv_err *err)
{
    int i = rv_domain_tune_iothread_find(def->tune, id);
    if (i < 0)
        fail(err, RV_ERR_INVALID_ARG, live ? "invalid argument: iothread %u not found"
                                           : "invalid argument: iothreadid %u not found", id);
    return i;
}

static int record_pin(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const io_change *ch = ctx;
    int i = pin_check(def, ch->id, def->aliases, err);
    return i < 0 ? -1
                 : rv_domain_tune_iothread_pin(def->tune, (size_t)i, ch->map, ch->maplen,
                                               RV_FROM_QEMU, err);
}

/* Only the definition: written, the call answered once it is durable. */
static int config_only(qemu_dom *d, change_fn fn, const io_change *ch, rv_err *err)
{
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    if (rv_qemu_def_change(d, fn, ch, reply, err) < 0) {
        rv_deferred_finish(reply, err);
        rv_err_clear(err);
    }
    return RV_DEFERRED;
}

/* The live part done (err: how it failed): the live definition follows
 * it, then the persistent one when asked (the reply then waits for it to
 * be durable). */
static void live_done(io_req *req, change_fn fn, rv_err *err)
{
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    io_change ch = { req->id, req->map, req->maplen };
    if (!rv_err_is_set(err) && d && d->live) {
        rv_err ignored = { 0 };
        if (fn(d->live, &ch, &ignored) < 0)
            rv_err_clear(&ignored);
        /* The live XML a restarted remvirtd reads back. */
        if (rv_qemu_save_status(d, &ignored) < 0)
            rv_err_clear(&ignored);
        if (fn == record_pin) {
            char field[48];
            snprintf(field, sizeof(field), "cputune.iothreadpin%u", req->id);
            rv_qemu_emit_tunable_string(d, field, req->cpulist);
        }
        if (req->config && rv_qemu_def_change(d, fn, &ch, req->live.reply, err) == 0) {
            req_free(req);
            return;
        }
    }
    rv_deferred_finish(req->live.reply, rv_err_is_set(err) ? err : NULL);
    req_free(req);
}

/* A change's flags checked and its domain picked; id 0 refused where
 * libvirt refuses it (DEL_IOTHREAD: its public API; ADD_IOTHREAD and
 * SET_IOTHREAD_PARAMS: its QEMU driver; PIN_IOTHREAD finds no such one). */
static int pick(const rv_nonnull_domain *wire, unsigned id, unsigned int flags, const char *func,
                qemu_dom **d, bool *live, bool *config, rv_err *err)
{
    if (id == 0 && strcmp(func, "qemuDomainDelIOThread") == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "iothread_id in virDomainDelIOThread must not be zero");
    if (id == 0 && strcmp(func, "qemuDomainPinIOThread") != 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: invalid value of 0 for iothread_id");
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG, func, err) < 0)
        return -1;
    return rv_qemu_pick_defs(wire, flags, TRANSIENT, d, live, config, err);
}

/* ================================================================ info */

static void on_info(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    io_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_domain_get_iothread_info_ret *out = rv_deferred_ret(req->live.reply);
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    rv_err err = { 0 };
    if (n > RV_IOTHREAD_INFO_MAX)
        n = RV_IOTHREAD_INFO_MAX;
    out->info.info_val = n ? calloc(n, sizeof(*out->info.info_val)) : NULL;
    if (n && !out->info.info_val)
        fail(&err, RV_ERR_NO_MEMORY, "out of memory");
    int maplen = (host_cpus() + 7) / 8;
    for (size_t i = 0; i < n && !rv_err_is_set(&err); i++) {
        json_object *t = json_object_array_get_idx(ret, i), *name;
        unsigned id = json_object_object_get_ex(t, "id", &name)
                          ? rv_qemu_iothread_id(json_object_get_string(name)) : 0;
        pid_t tid = (pid_t)rv_qmp_json_int(t, "thread-id", 0);
        cpu_set_t set;
        if (!id)
            continue;   /* not one of the domain's */
        if (sched_getaffinity(tid, sizeof(set), &set) < 0) {
            fail(&err, RV_ERR_SYSTEM_ERROR, "cannot get CPU affinity of process %d: %s",
                 (int)tid, strerror(errno));
            break;
        }
        rv_domain_iothread_info *info = &out->info.info_val[out->info.info_len];
        info->iothread_id = id;
        if (info_map(info, &set, maplen, &err) == 0)
            out->info.info_len++;
    }
    out->ret = out->info.info_len;
    rv_deferred_finish(req->live.reply, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
    req_free(req);
}

int rv_qemu_domain_get_iothread_info(rv_driver_conn *c, const rv_domain_get_iothread_info_args *args,
                                     rv_domain_get_iothread_info_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainGetIOThreadInfo", err) < 0)
        return -1;
    qemu_dom *d;
    bool live;
    int rc = rv_qemu_pick_getter(&args->dom, args->flags, &d, &live, err);
    if (rc)
        return rc;
    if (live) {
        io_req *req = rv_qemu_live_req_new(sizeof(io_req), d, err);
        if (!req)
            return -1;
        qmp_send(d, req, "query-iothreads", NULL, on_info);
        return RV_DEFERRED;
    }
    /* The definition's: each pinned as it says, else to every CPU. */
    const rv_qemu_domain_def *def = rv_qemu_def_newest(d) ? rv_qemu_def_newest(d) : d->def;
    const rv_domain_tune *t = def->tune;
    size_t n = t ? t->niothreads : 0;
    int ncpus = host_cpus(), maplen = (ncpus + 7) / 8;
    if (n && !(ret->info.info_val = calloc(n, sizeof(*ret->info.info_val))))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int b = 0; b < ncpus; b++)
            CPU_SET(b, &set);
        if (t->iothreads[i].pin.map)
            rv_qemu_map_to_set(t->iothreads[i].pin.map, t->iothreads[i].pin.len, &set);
        ret->info.info_val[i].iothread_id = t->iothreads[i].id;
        if (info_map(&ret->info.info_val[i], &set, maplen, err) < 0)
            return -1;
        ret->info.info_len++;
    }
    ret->ret = (unsigned)n;
    return 0;
}

/* ================================================================ pin */

/* The thread of req's IOThread put on req's map (query-iothreads'
 * answer), then the definitions follow: PIN_IOTHREAD's, or a new
 * IOThread's (on every CPU, as libvirtd sets it up: it would keep the
 * pinning of the thread that made it). */
static void on_threads(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    io_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_err err = { 0 };
    pid_t tid = iothread_tid(ret, req->id);
    cpu_set_t set;
    rv_qemu_map_to_set(req->map, req->maplen, &set);
    int e = tid <= 0 ? ESRCH : sched_setaffinity(tid, sizeof(set), &set) < 0 ? errno : 0;
    if (e && req->fn != record_pin)
        RV_WARN("domain '%s': IOThread %u stays where QEMU put it: %s", req->live.name, req->id,
                strerror(e));
    else if (tid <= 0)
        fail(&err, RV_ERR_INVALID_ARG, "invalid argument: iothread %u not found", req->id);
    else if (e)
        fail(&err, RV_ERR_SYSTEM_ERROR, "cannot set CPU affinity on process %d: %s", (int)tid,
             strerror(e));
    live_done(req, req->fn, &err);
    rv_err_clear(&err);
}

int rv_qemu_domain_pin_iothread(rv_driver_conn *c, const rv_domain_pin_iothread_args *args,
                                rv_err *err)
{
    (void)c;
    const unsigned char *map = (const unsigned char *)args->cpumap.cpumap_val;
    size_t len = args->cpumap.cpumap_len;
    if (len == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "cpumap in virDomainPinIOThread must not be NULL");
    qemu_dom *d = NULL;
    bool live, config;
    int rc = pick(&args->dom, args->iothreads_id, args->flags, "qemuDomainPinIOThread", &d,
                  &live, &config, err);
    if (rc)
        return rc;
    if (rv_tune_bitmap_empty(map, len))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Empty iothread cpumap list for pinning");
    if ((live && pin_check(d->live, args->iothreads_id, true, err) < 0) ||
        (config && pin_check(rv_qemu_def_newest(d), args->iothreads_id, false, err) < 0))
        return -1;
    io_change ch = { args->iothreads_id, map, len };
    if (!live)
        return config_only(d, record_pin, &ch, err);
    io_req *req = rv_qemu_live_req_new(sizeof(io_req), d, err);
    if (!req)
        return -1;
    req->id = args->iothreads_id;
    req->config = config;
    req->maplen = len;
    if (!(req->map = malloc(len)) || !(req->cpulist = rv_tune_bitmap_format(map, len))) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return RV_DEFERRED;
    }
    memcpy(req->map, map, len);
    req->fn = record_pin;
    qmp_send(d, req, "query-iothreads", NULL, on_threads);
    return RV_DEFERRED;
}

/* ================================================================ add, del */

static void on_added(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    (void)ret;
    io_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    rv_err err = { 0 };
    if (d)
        qmp_send(d, req, "query-iothreads", NULL, on_threads);
    else
        live_done(req, req->fn, &err);
}

static void on_deleted(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    (void)ret;
    io_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    rv_err err = { 0 };
    live_done(req, req->fn, &err);
}

/* ADD_IOTHREAD (add) or DEL_IOTHREAD. */
static int add_or_del(const rv_nonnull_domain *wire, unsigned id, unsigned int flags, bool add,
                      rv_err *err)
{
    qemu_dom *d = NULL;
    bool live, config;
    int rc = pick(wire, id, flags, add ? "qemuDomainAddIOThread" : "qemuDomainDelIOThread", &d,
                  &live, &config, err);
    if (rc)
        return rc;
    if (add ? (live && add_check(d->live, id, err) < 0) ||
                  (config && add_check(rv_qemu_def_newest(d), id, err) < 0)
            : (live && del_check(d->live, id, err) < 0) ||
                  (config && del_check(rv_qemu_def_newest(d), id, err) < 0))
        return -1;
    io_change ch = { .id = id };
    if (!live)
        return config_only(d, add ? record_add : record_del, &ch, err);
    io_req *req = rv_qemu_live_req_new(sizeof(io_req), d, err);
    if (!req)
        return -1;
    req->id = id;
    req->config = config;
    req->fn = add ? record_add : record_del;
    if (add) {
        /* Where the new thread goes: every CPU. */
        req->maplen = (size_t)(host_cpus() + 7) / 8;
        if (!(req->map = malloc(req->maplen))) {
            rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
            req_free(req);
            return RV_DEFERRED;
        }
        memset(req->map, 0, req->maplen);
        for (int b = 0; b < host_cpus(); b++)
            req->map[b / 8] |= (unsigned char)(1u << (b % 8));
    }
    char name[32];
    snprintf(name, sizeof(name), "iothread%u", id);
    json_object *args = json_object_new_object();
    if (add)
        json_object_object_add(args, "qom-type", json_object_new_string("iothread"));
    json_object_object_add(args, "id", json_object_new_string(name));
    qmp_send(d, req, add ? "object-add" : "object-del", args, add ? on_added : on_deleted);
    return RV_DEFERRED;
}

int rv_qemu_domain_add_iothread(rv_driver_conn *c, const rv_domain_add_iothread_args *args,
                                rv_err *err)
{
    (void)c;
    return add_or_del(&args->dom, args->iothread_id, args->flags, true, err);
}

int rv_qemu_domain_del_iothread(rv_driver_conn *c, const rv_domain_del_iothread_args *args,
                                rv_err *err)
{
    (void)c;
    return add_or_del(&args->dom, args->iothread_id, args->flags, false, err);
}

/* ================================================================ params */

/* libvirt's parameter names (name order), QEMU's properties. */
static const rv_tune_field param_fields[] = {
    { "aio_max_batch", RV_TYPED_PARAM_ULLONG }, { "poll_grow", RV_TYPED_PARAM_UINT },
    { "poll_max_ns", RV_TYPED_PARAM_ULLONG },  { "poll_shrink", RV_TYPED_PARAM_UINT },
    { "thread_pool_max", RV_TYPED_PARAM_INT },  { "thread_pool_min", RV_TYPED_PARAM_INT },
};
static const char *const param_props[] = {
    "aio-max-batch", "poll-grow", "poll-max-ns", "poll-shrink", "thread-pool-max",
    "thread-pool-min",
};
enum { NPARAMS = sizeof(param_fields) / sizeof(param_fields[0]) };

static void send_next_prop(qemu_dom *d, io_req *req);

static void on_prop_set(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    (void)ret;
    io_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    if (req->next < req->nprops && d) {
        send_next_prop(d, req);
        return;
    }
    /* The thread pool's bounds are in the live XML, as libvirtd keeps them. */
    int i = d && d->live ? rv_domain_tune_iothread_find(d->live->tune, req->id) : -1;
    for (int k = 0; i >= 0 && k < req->nprops; k++) {
        rv_tune_iothread *t = &d->live->tune->iothreads[i];
        if (strcmp(req->props[k], "thread-pool-min") == 0)
            t->pool_min = (int)req->values[k];
        else if (strcmp(req->props[k], "thread-pool-max") == 0)
            t->pool_max = (int)req->values[k];
    }
    rv_err ignored = { 0 };
    if (i >= 0 && rv_qemu_save_status(d, &ignored) < 0)
        rv_err_clear(&ignored);
    rv_deferred_finish(req->live.reply, NULL);
    req_free(req);
}

/* qom-set of the next property; the answer sends the one after it. */
static void send_next_prop(qemu_dom *d, io_req *req)
{
    char path[40];
    snprintf(path, sizeof(path), "/objects/iothread%u", req->id);
    json_object *args = json_object_new_object();
    json_object_object_add(args, "path", json_object_new_string(path));
    json_object_object_add(args, "property", json_object_new_string(req->props[req->next]));
    json_object_object_add(args, "value", json_object_new_int64((int64_t)req->values[req->next]));
    req->next++;
    qmp_send(d, req, "qom-set", args, on_prop_set);
}

int rv_qemu_domain_set_iothread_params(rv_driver_conn *c,
                                       const rv_domain_set_iothread_params_args *args, rv_err *err)
{
    (void)c;
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    qemu_dom *d = NULL;
    bool live, config;
    if (rv_tune_params_check_call(p, n, "virDomainSetIOThreadParams", "params", err) < 0 ||
        rv_tune_params_validate(p, n, param_fields, NPARAMS, err) < 0)
        return -1;
    int rc = pick(&args->dom, args->iothread_id, args->flags, "qemuDomainSetIOThreadParams", &d,
                  &live, &config, err);
    if (rc)
        return rc;
    if (config)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: configuring persistent polling values is not "
                    "supported");
    if (rv_domain_tune_iothread_find(d->live->tune, args->iothread_id) < 0)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: cannot find IOThread '%u' in iothreadids",
                    args->iothread_id);
    for (u_int i = 0; i < n; i++) {
        const rv_typed_param_value *v = &p[i].value;
        if ((v->type == RV_TYPED_PARAM_INT && v->rv_typed_param_value_u.i < 0) ||
            (v->type == RV_TYPED_PARAM_ULLONG && v->rv_typed_param_value_u.ul > INT64_MAX))
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: value of '%s' out of range",
                        p[i].field);
    }
    io_req *req = rv_qemu_live_req_new(sizeof(io_req), d, err);
    if (!req)
        return -1;
    req->id = args->iothread_id;
    for (u_int i = 0; i < n && req->nprops < (int)NPARAMS; i++) {
        size_t k = 0;
        while (k < NPARAMS && strcmp(param_fields[k].name, p[i].field) != 0)
            k++;
        const rv_typed_param_value *v = &p[i].value;
        req->props[req->nprops] = param_props[k];
        req->values[req->nprops++] = v->type == RV_TYPED_PARAM_UINT ? v->rv_typed_param_value_u.ui
                                     : v->type == RV_TYPED_PARAM_INT
                                         ? (unsigned long long)v->rv_typed_param_value_u.i
                                         : v->rv_typed_param_value_u.ul;
    }
    send_next_prop(d, req);
    return RV_DEFERRED;
}

/* ================================================================ at start */

void rv_qemu_iothread_pins_set(const qemu_dom *d, json_object *iothreads)
{
    const rv_domain_tune *t = d->live->tune;
    for (size_t i = 0; t && i < t->niothreads; i++) {
        pid_t tid = t->iothreads[i].pin.map ? iothread_tid(iothreads, t->iothreads[i].id) : 0;
        cpu_set_t set;
        rv_qemu_map_to_set(t->iothreads[i].pin.map, t->iothreads[i].pin.len, &set);
        if (tid > 0 && sched_setaffinity(tid, sizeof(set), &set) < 0)
            RV_WARN("domain '%s': cannot pin IOThread %u: %s", d->live->name,
                    t->iothreads[i].id, strerror(errno));
    }
}
