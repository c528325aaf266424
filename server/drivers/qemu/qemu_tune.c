/* The QEMU driver's memory and vcpu changes: setmem through the balloon,
 * setmaxmem in the definition, setvcpus in the definition and, live, by
 * hotplugging vcpus into the free slots QEMU was started with
 * (<vcpu current='N'>M</vcpu> gives -smp N,maxcpus=M), and unplugging
 * the hotplugged ones (the vcpus QEMU started with stay).  An unplug is
 * the guest's to grant: device_del asks it (ACPI), and the vcpu is gone
 * once query-hotpluggable-cpus lists its slot free again (polled: QEMU
 * 7.2 sends DEVICE_DELETED only for the vcpu's lapic, not for the vcpu).
 *
 * A live change is a QMP command answered through a deferred reply; its
 * callback finds the domain again by name and by monitor (the domain may
 * have stopped, or been undefined, meanwhile) before it records the
 * change.  As libvirtd, a change that is both live and config changes
 * the definition only once the live part has succeeded.
 *
 * SET_VCPU (setvcpu LIST --enable/--disable) goes through setvcpus' count:
 * the vcpus on stay 0..N-1 (plugged lowest first, unplugged highest
 * first), so a list whose result would leave a gap is refused. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("drivers.qemu.tune");

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2, MAXIMUM = 0x4 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

typedef struct tune_req tune_req;
/* What QEMU's answer to a request's command goes on to. */
typedef void (*tune_step)(tune_req *req, qemu_dom *d, json_object *ret);

/* A live change under way: what to record once QEMU has done it. */
struct tune_req {
    rv_deferred *reply;
    rv_qmp *qmp;                /* the monitor asked: the same process still */
    char *name;
    bool config;                /* then the definition too */
    bool config_written;        /* setvcpus: the definition first, put back on failure */
    unsigned old_config_vcpus;  /* ... as it was */
    unsigned long long old_live_kib; /* setmem: the balloon's target before */
    rv_err error;               /* the failure answered once the definition is back */
    unsigned long long memory_kib;
    unsigned nvcpus;            /* the count wanted */
    json_object *slots;         /* free vcpu slots to plug (or plugged ones
                                 * to unplug), in order */
    size_t next_slot, nslots;
    /* An unplug under way: the vcpu's QOM path, polled until it is gone. */
    char *unplug_path;
    ev_timer unplug_poll;
    double unplug_deadline;
    tune_step step;             /* the command sent: what its answer goes on to */
};

static void req_free(tune_req *req)
{
    ev_timer_stop(rv_qemu.loop, &req->unplug_poll);
    free(req->unplug_path);
    json_object_put(req->slots);
    free(req->name);
    rv_err_clear(&req->error);
    free(req);
}

/* The domain the request is about, if it still runs in the same process. */
static qemu_dom *req_dom(const tune_req *req, rv_qmp *qmp)
{
    qemu_dom *d = rv_qemu_find_name(req->name);
    return d && d->qmp == qmp && d->live ? d : NULL;
}


static void save_status(qemu_dom *d)
{
    rv_err err = { 0 };
    if (rv_qemu_save_status(d, &err) < 0)
        RV_WARN("domain '%s': %s", d->live->name, err.message);
    rv_err_clear(&err);
}

/* What a change of the persistent definition sets (checked against the
 * newest definition, written or queued: qemu_defwrite.c). */
typedef struct tune_change {
    unsigned long long memory_kib;
    unsigned nvcpus;
} tune_change;

typedef int (*change_fn)(rv_qemu_domain_def *def, const void *ctx, rv_err *err);

/* Write the definition changed by change; reply (taken) is answered once
 * it is durable, or with the error (nothing changed). */
static void config_change(qemu_dom *d, change_fn change, const tune_change *ch, rv_deferred *reply)
{
    rv_err err = { 0 };
    if (rv_qemu_def_change(d, change, ch, reply, &err) < 0)
        rv_deferred_finish(reply, &err);
    rv_err_clear(&err);
}

/* The same for a call answered here (RV_DEFERRED or -1). */
static int config_only(qemu_dom *d, change_fn change, const tune_change *ch, rv_err *err)
{
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    config_change(d, change, ch, reply);
    return RV_DEFERRED;
}

static void ignore_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret, (void)err, (void)opaque;
}

/* setmem --live --config: the definition could not be written, so the
 * balloon goes back to where it was (an error changed nothing). */
static void on_memory_config(void *data, const rv_err *err)
{
    tune_req *req = data;
    qemu_dom *d = err ? req_dom(req, req->qmp) : NULL;
    if (d && d->live->balloon) {
        json_object *args = json_object_new_object();
        rv_err qerr = { 0 };
        if (args)
            json_object_object_add(args, "value",
                                   json_object_new_int64((int64_t)(req->old_live_kib * 1024)));
        if (!args || rv_qmp_command(d->qmp, "balloon", args, 0, ignore_reply, NULL, &qerr) < 0)
            RV_WARN("domain '%s': cannot put the balloon back: %s", req->name,
                    qerr.message ? qerr.message : "out of memory");
        rv_err_clear(&qerr);
        d->live->current_memory_kib = req->old_live_kib;
        save_status(d);
    }
    rv_deferred_finish(req->reply, err);
    req->reply = NULL;
    req_free(req);
}

/* Finish a request: setmem's definition too when asked (answered once it
 * is on disk); setvcpus wrote its definition first. */
static void req_finish(tune_req *req, qemu_dom *d, change_fn to_config)
{
    rv_err err = { 0 };
    tune_change ch = { req->memory_kib, req->nvcpus };
    if (req->config && !req->config_written && d && d->def &&
        rv_qemu_def_change_then(d, to_config, &ch, NULL, on_memory_config, req, &err) == 0)
        return;
    if (rv_err_is_set(&err)) {
        on_memory_config(req, &err);
        rv_err_clear(&err);
        return;
    }
    rv_deferred_finish(req->reply, NULL);
    req->reply = NULL;
    req_free(req);
}

static int vcpus_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err);

static void on_config_restored(void *data, const rv_err *err)
{
    tune_req *req = data;
    if (err)
        RV_WARN("domain '%s': cannot put the vcpus of its definition back: %s", req->name,
                err->message);
    rv_deferred_finish(req->reply, &req->error);
    req->reply = NULL;
    req_free(req);
}

/* Answer the error; a definition written first (setvcpus --live
 * --config) is put back before. */
static void req_error(tune_req *req, const rv_err *err)
{
    rv_err_set(&req->error, err->domain, err->code, "%s", err->message ? err->message : "failed");
    qemu_dom *d = req->config_written ? rv_qemu_find_name(req->name) : NULL;
    if (d && d->def) {
        tune_change ch = { .nvcpus = req->old_config_vcpus };
        rv_err e = { 0 };
        int rc = rv_qemu_def_change_then(d, vcpus_to_config, &ch, NULL, on_config_restored, req, &e);
        if (rc == 0)
            return;
        RV_WARN("domain '%s': cannot put the vcpus of its definition back: %s", req->name, e.message);
        rv_err_clear(&e);
    }
    on_config_restored(req, NULL);
}

/* req_error with an error of this driver's. */
#define REQ_REFUSE(req, code, ...)                                                       \
    do {                                                                                \
        rv_err e_ = { 0 };                                                              \
        rv_err_set(&e_, RV_FROM_QEMU, (code), __VA_ARGS__);                              \
        req_error((req), &e_);                                                          \
        rv_err_clear(&e_);                                                              \
    } while (0)

static void req_fail(tune_req *req, const rv_err *why)
{
    REQ_REFUSE(req, RV_ERR_OPERATION_FAILED, "operation failed: %s",
               why && why->message ? why->message : "the domain stopped");
}

/* A request, its reply deferred. */
static tune_req *req_new(qemu_dom *d, bool config, rv_err *err)
{
    tune_req *req = calloc(1, sizeof(*req));
    if (!req || !(req->name = strdup(d->live->name))) {
        free(req);
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    req->qmp = d->qmp;
    req->config = config;
    if (!(req->reply = rv_driver_defer(err))) {
        req_free(req);
        return NULL;
    }
    return req;
}

static void on_answer(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    tune_req *req = opaque;
    qemu_dom *d = req_dom(req, qmp);
    if (err || !d)
        req_fail(req, err);
    else
        req->step(req, d, ret);
}

/* command (args taken) to d's monitor (d NULL: the domain is gone, the
 * request fails); QEMU's answer goes on to step. */
static void req_send(tune_req *req, qemu_dom *d, const char *command, json_object *args,
                     tune_step step)
{
    rv_err err = { 0 };
    req->step = step;
    if (!d)
        json_object_put(args);
    if (!d || rv_qmp_command(d->qmp, command, args, 0, on_answer, req, &err) < 0)
        req_fail(req, d ? &err : NULL);
    rv_err_clear(&err);
}

/* ================================================================ memory */

static int memory_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const tune_change *ch = ctx;
    if (ch->memory_kib > def->memory_kib)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: cannot set memory higher than max memory");
    def->current_memory_kib = ch->memory_kib;
    return 0;
}

static int max_memory_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    (void)err;
    const tune_change *ch = ctx;
    def->memory_kib = ch->memory_kib;
    if (def->current_memory_kib > ch->memory_kib)
        def->current_memory_kib = ch->memory_kib;
    return 0;
}

static void balloon_done(tune_req *req, qemu_dom *d, json_object *ret)
{
    (void)ret;
    /* The target; the guest's driver gets there in its own time
     * (BALLOON_CHANGE says where it is). */
    req->old_live_kib = d->live->current_memory_kib;
    d->live->current_memory_kib = req->memory_kib;
    save_status(d);
    req_finish(req, d, memory_to_config);
}

static int set_memory(qemu_dom *d, unsigned long long kib, unsigned int flags, bool live,
                      bool config, rv_err *err)
{
    if (flags & MAXIMUM) {
        if (live)
            return fail(err, RV_ERR_OPERATION_INVALID,
                        "Requested operation is not valid: cannot resize the maximum memory on an "
                        "active domain");
        if (kib == 0)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: memory size must be greater than 0");
        tune_change ch = { .memory_kib = kib };
        return config_only(d, max_memory_to_config, &ch, err);
    }
    if ((live && kib > d->live->memory_kib) || (config && kib > d->def->memory_kib))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: cannot set memory higher than max memory");
    if (kib == 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: memory size must be greater than 0");
    if (!live) {
        tune_change ch = { .memory_kib = kib };
        return config_only(d, memory_to_config, &ch, err);
    }
    if (!d->live->balloon)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Unable to change memory of active domain "
                    "without the balloon device and guest OS balloon driver");
    tune_req *req = req_new(d, config, err);
    if (!req)
        return -1;
    req->memory_kib = kib;
    json_object *args = json_object_new_object();
    if (args)
        json_object_object_add(args, "value", json_object_new_int64((int64_t)(kib * 1024)));
    req_send(req, d, "balloon", args, balloon_done);
    return RV_DEFERRED;
}

/* ================================================================ vcpus */

static int vcpus_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const tune_change *ch = ctx;
    if (ch->nvcpus > def->vcpus)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: requested vcpus is greater than max allowable vcpus for "
                    "the persistent domain: %u > %u", ch->nvcpus, def->vcpus);
    def->current_vcpus = ch->nvcpus < def->vcpus ? ch->nvcpus : def->vcpus;
    return 0;
}

static int max_vcpus_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    (void)err;
    const tune_change *ch = ctx;
    unsigned current = rv_qemu_def_vcpus(def);
    def->vcpus = ch->nvcpus;
    def->current_vcpus = current < ch->nvcpus ? current : ch->nvcpus;
    return 0;
}

static void plug_next(tune_req *req, qemu_dom *d);

static void device_added(tune_req *req, qemu_dom *d, json_object *ret)
{
    (void)ret;
    /* From the first hotplug on, the live XML lists the vcpus (<vcpus>). */
    if (!d->live->boot_vcpus)
        d->live->boot_vcpus = rv_qemu_def_vcpus(d->live);
    unsigned now = rv_qemu_def_vcpus(d->live) + 1;
    d->live->current_vcpus = now < d->live->vcpus ? now : d->live->vcpus;
    save_status(d);
    plug_next(req, d);
}

/* device_add of the next free slot: its type, an id, and its place
 * (socket-id, core-id, thread-id ...: "props" as QEMU listed them). */
static void plug_next(tune_req *req, qemu_dom *d)
{
    if (rv_qemu_def_vcpus(d->live) >= req->nvcpus || req->next_slot >= req->nslots) {
        if (rv_qemu_def_vcpus(d->live) < req->nvcpus) {
            REQ_REFUSE(req, RV_ERR_OPERATION_FAILED, "operation failed: QEMU has no free vcpu "
                       "slot left (%u of %u vcpus are on)", rv_qemu_def_vcpus(d->live),
                       req->nvcpus);
            return;
        }
        req_finish(req, d, vcpus_to_config);
        return;
    }
    json_object *slot = json_object_array_get_idx(req->slots, req->next_slot++);
    json_object *type = NULL, *props = NULL;
    json_object_object_get_ex(slot, "type", &type);
    json_object_object_get_ex(slot, "props", &props);
    json_object *args = json_object_new_object();
    char id[32];
    snprintf(id, sizeof(id), "vcpu%u", rv_qemu_def_vcpus(d->live));
    if (args) {
        json_object_object_add(args, "driver", json_object_new_string(type ? json_object_get_string(type) : ""));
        json_object_object_add(args, "id", json_object_new_string(id));
        if (props) {
            json_object_object_foreach(props, key, val)
                json_object_object_add(args, key, json_object_get(val));
        }
    }
    req_send(req, d, "device_add", args, device_added);
}

/* How long the guest has to let a vcpu go (libvirtd's wait too), and how
 * often the slot is looked at meanwhile. */
#define UNPLUG_WAIT 5.0
#define UNPLUG_POLL 0.1
/* The QOM paths of the vcpus device_add put in (their ids are ours). */
#define HOTPLUGGED_PREFIX "/machine/peripheral/"

static void unplug_next(tune_req *req, qemu_dom *d);

/* The vcpus as QEMU has them now: the count on, and the count QEMU was
 * started with (the ones not under HOTPLUGGED_PREFIX).  The live
 * definition is brought in line: an unplug the guest granted after a
 * call had given up on it shows here. */
static void vcpus_resync(qemu_dom *d, json_object *ret)
{
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    unsigned on = 0, hotplugged = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *path = NULL;
        if (!json_object_object_get_ex(json_object_array_get_idx(ret, i), "qom-path", &path))
            continue;
        on++;
        hotplugged += strncmp(json_object_get_string(path), HOTPLUGGED_PREFIX,
                              strlen(HOTPLUGGED_PREFIX)) == 0;
    }
    if (on == 0 || on > d->live->vcpus)
        return;     /* not what this definition started: leave it */
    if (!d->live->boot_vcpus && hotplugged)
        d->live->boot_vcpus = on - hotplugged;
    if (on != rv_qemu_def_vcpus(d->live)) {
        RV_INFO("domain '%s': QEMU has %u vcpus on, not %u", d->live->name, on,
                rv_qemu_def_vcpus(d->live));
        d->live->current_vcpus = on < d->live->vcpus ? on : d->live->vcpus;
        save_status(d);
    }
}

static void unplug_checked(tune_req *req, qemu_dom *d, json_object *ret)
{
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    bool still = false;
    for (size_t i = 0; i < n; i++) {
        json_object *path = NULL;
        if (json_object_object_get_ex(json_object_array_get_idx(ret, i), "qom-path", &path) &&
            strcmp(json_object_get_string(path), req->unplug_path) == 0)
            still = true;
    }
    if (!still) {
        unsigned now = rv_qemu_def_vcpus(d->live) - 1;
        d->live->current_vcpus = now;
        d->vcpus_unplugged = true;
        save_status(d);
        free(req->unplug_path);
        req->unplug_path = NULL;
        unplug_next(req, d);
        return;
    }
    if (ev_now(rv_qemu.loop) >= req->unplug_deadline) {
        REQ_REFUSE(req, RV_ERR_OPERATION_TIMEOUT, "Timed out during operation: vcpu unplug "
                   "request timed out. Unplug result must be manually inspected in the domain");
        return;
    }
    ev_timer_start(rv_qemu.loop, &req->unplug_poll);
}

static void on_unplug_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    tune_req *req = w->data;
    req_send(req, req_dom(req, req->qmp), "query-hotpluggable-cpus", NULL, unplug_checked);
}

static void device_deleted(tune_req *req, qemu_dom *d, json_object *ret)
{
    (void)d, (void)ret;
    /* Asked: the guest now lets it go, or not. */
    req->unplug_deadline = ev_now(rv_qemu.loop) + UNPLUG_WAIT;
    ev_timer_init(&req->unplug_poll, on_unplug_poll, UNPLUG_POLL, 0.);
    req->unplug_poll.data = req;
    ev_timer_start(rv_qemu.loop, &req->unplug_poll);
}

/* device_del of the next hotplugged vcpu (by its QOM path), the highest
 * first, until the count is down to the one asked. */
static void unplug_next(tune_req *req, qemu_dom *d)
{
    if (rv_qemu_def_vcpus(d->live) <= req->nvcpus) {
        req_finish(req, d, vcpus_to_config);
        return;
    }
    if (req->next_slot >= req->nslots) {
        REQ_REFUSE(req, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: only "
                   "hotplugged vcpus can be unplugged: the domain started with %u",
                   rv_qemu_def_vcpus(d->live));
        return;
    }
    json_object *path = NULL;
    json_object_object_get_ex(json_object_array_get_idx(req->slots, req->next_slot++),
                              "qom-path", &path);
    json_object *args = json_object_new_object();
    if (!(req->unplug_path = strdup(json_object_get_string(path))) || !args ||
        json_object_object_add(args, "id", json_object_new_string(req->unplug_path)) < 0) {
        json_object_put(args);
        req_fail(req, NULL);
        return;
    }
    req_send(req, d, "device_del", args, device_deleted);
}

static void hotpluggable_listed(tune_req *req, qemu_dom *d, json_object *ret)
{
    vcpus_resync(d, ret);
    bool plug = req->nvcpus > rv_qemu_def_vcpus(d->live);
    /* To plug: the free slots (no "qom-path"), lowest first (QEMU lists
     * them from the highest).  To unplug: the hotplugged ones, highest
     * first. */
    if (!(req->slots = json_object_new_array())) {
        req_fail(req, NULL);
        return;
    }
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = plug ? n - 1 - k : k;
        json_object *slot = json_object_array_get_idx(ret, i), *path = NULL;
        bool on = json_object_object_get_ex(slot, "qom-path", &path);
        if (plug ? !on
                 : on && strncmp(json_object_get_string(path), HOTPLUGGED_PREFIX,
                                 strlen(HOTPLUGGED_PREFIX)) == 0)
            json_object_array_add(req->slots, json_object_get(slot));
    }
    req->nslots = json_object_array_length(req->slots);
    if (plug && d->vcpus_unplugged && (d->live->accel == RV_QEMU_VIRT_QEMU || !rv_qemu.kvm)) {
        /* Seen with QEMU 7.2: its process dies (SIGSEGV) when a vcpu is
         * plugged into a slot one was unplugged from (TCG). */
        REQ_REFUSE(req, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: QEMU under TCG "
                   "crashes when vcpus are plugged in again after an unplug; restart the domain "
                   "to have more vcpus");
        return;
    }
    if (plug)
        plug_next(req, d);
    else
        unplug_next(req, d);
}

/* setvcpus --live: what QEMU has, then plug or unplug. */
static void vcpus_live(tune_req *req)
{
    req_send(req, req_dom(req, req->qmp), "query-hotpluggable-cpus", NULL, hotpluggable_listed);
}

static void on_vcpus_config(void *data, const rv_err *err)
{
    tune_req *req = data;
    if (err) {
        rv_deferred_finish(req->reply, err);
        req->reply = NULL;
        req_free(req);
        return;
    }
    req->config_written = true;
    vcpus_live(req);
}

static int set_vcpus(qemu_dom *d, unsigned int n, unsigned int flags, bool live, bool config,
                     rv_err *err)
{
    if (n == 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: the vcpu count must be at least 1");
    if (flags & MAXIMUM) {
        if (live)
            return fail(err, RV_ERR_INVALID_ARG,
                        "invalid argument: changing of maximum vCPU count isn't supported via "
                        "the live domain: use --config");
        if (n > RV_QEMU_MAX_VCPUS)
            return fail(err, RV_ERR_INVALID_ARG,
                        "invalid argument: requested vcpus is greater than max allowable vcpus "
                        "for the domain type: %u > %d", n, RV_QEMU_MAX_VCPUS);
        tune_change ch = { .nvcpus = n };
        return config_only(d, max_vcpus_to_config, &ch, err);
    }
    if (live && n > d->live->vcpus)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: requested vcpus is greater than max allowable vcpus for "
                    "the live domain: %u > %u", n, d->live->vcpus);
    if (config && n > d->def->vcpus)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: requested vcpus is greater than max allowable vcpus for "
                    "the persistent domain: %u > %u", n, d->def->vcpus);
    if (!live) {
        tune_change ch = { .nvcpus = n };
        return config_only(d, vcpus_to_config, &ch, err);
    }
    tune_req *req = req_new(d, config, err);
    if (!req)
        return -1;
    req->nvcpus = n;
    if (config) {
        /* The definition first: if the live part fails it is put back,
         * an unplug the guest may still grant is not taken back. */
        const rv_qemu_domain_def *newest = rv_qemu_def_newest(d);
        req->old_config_vcpus = newest ? rv_qemu_def_vcpus(newest) : n;
        tune_change ch = { .nvcpus = n };
        rv_err cerr = { 0 };
        if (rv_qemu_def_change_then(d, vcpus_to_config, &ch, NULL, on_vcpus_config, req, &cerr) < 0) {
            rv_deferred_finish(req->reply, &cerr);
            req->reply = NULL;
            req_free(req);
        }
        rv_err_clear(&cerr);
        return RV_DEFERRED;
    }
    vcpus_live(req);
    return RV_DEFERRED;
}

/* SET_MEMORY (memory) or SET_VCPUS: the flags checked against func's
 * (NULL: none to check), the domain, the definitions they name, then the
 * change. */
static int set_count(const rv_nonnull_domain *wire, bool memory, unsigned long long n,
                     unsigned int flags, const char *func, rv_err *err)
{
    qemu_dom *d;
    bool live, config;
    if (func && rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG | MAXIMUM,
                                    func, err) < 0)
        return -1;
    int rc = rv_qemu_pick_defs(wire, flags, "cannot change persistent config of a transient "
                               "domain", &d, &live, &config, err);
    if (rc)
        return rc;
    return memory ? set_memory(d, n, flags, live, config, err)
                  : set_vcpus(d, (unsigned int)n, flags, live, config, err);
}

/* The slots: memory or vcpus, with the flags they take and the driver
 * function whose flags are checked (NULL: none). */
#define COUNT_SLOT(fn, args_type, memory, count, flags_expr, func)                        \
    int rv_qemu_##fn(rv_driver_conn *c, const args_type *args, rv_err *err)              \
    {                                                                                     \
        (void)c;                                                                          \
        return set_count(&args->dom, memory, args->count, flags_expr, func, err);         \
    }
COUNT_SLOT(domain_set_memory, rv_domain_set_memory_args, true, memory, AFFECT_LIVE, NULL)
COUNT_SLOT(domain_set_max_memory, rv_domain_set_max_memory_args, true, memory, MAXIMUM, NULL)
COUNT_SLOT(domain_set_memory_flags, rv_domain_set_memory_flags_args, true, memory,
           args->flags, "qemuDomainSetMemoryFlags")
COUNT_SLOT(domain_set_vcpus, rv_domain_set_vcpus_args, false, nvcpus, AFFECT_LIVE, NULL)
COUNT_SLOT(domain_set_vcpus_flags, rv_domain_set_vcpus_flags_args, false, nvcpus,
           args->flags, "qemuDomainSetVcpusFlags")
#undef COUNT_SLOT

static bool map_has(const unsigned char *map, size_t k)
{
    return (map[k / 8] >> (k % 8)) & 1;
}

/* libvirtd's checks of each vcpu in map (len bytes), in its order and
 * words: present in a definition of max vcpus; live (where "live"), on
 * is the count on, not in the state asked and (to disable) not one QEMU
 * started with (the first fixed); in the definition (where "persistent")
 * not vcpu 0.  Then the count on afterwards, or -1 with err, also when
 * the vcpus on would not be 0..N-1 (remvirtd's own refusal). */
static int vcpus_after(const unsigned char *map, size_t len, bool enable, unsigned on,
                       unsigned fixed, unsigned max, bool live, rv_err *err)
{
    unsigned lo = max, hi = 0, n = 0;
    for (size_t k = 0; k < len * 8; k++) {
        if (!map_has(map, k))
            continue;
        if (k >= max)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: vcpu %zu is not present in "
                        "%s config", k, live ? "live" : "persistent");
        if (live && (k < on) == enable)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: vcpu '%zu' is already in "
                        "requested state", k);
        if (live && k < fixed)
            return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: vcpu '%zu' "
                        "can't be unplugged", k);
        if (!live && k == 0)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: vCPU '0' can't be modified");
        lo = (unsigned)k < lo ? (unsigned)k : lo;
        hi = (unsigned)k;
        n++;
    }
    /* A range; enabling it must start at or below the first vcpu off and
     * disabling it must reach the last vcpu on. */
    if (hi - lo + 1 == n && (enable ? lo <= on : hi + 1 >= on))
        return (int)(enable ? (hi + 1 > on ? hi + 1 : on) : (lo < on ? lo : on));
    return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: remvirtd keeps a "
                "domain's vcpus on as 0 to N-1: enable from the lowest vcpu off (%u) up, "
                "disable from the highest vcpu on (%u) down", on, on - 1);
}

int rv_qemu_domain_set_vcpu(rv_driver_conn *c, const rv_domain_set_vcpu_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainSetVcpu", err) < 0)
        return -1;
    if (args->state != 0 && args->state != 1)
        return fail(err, RV_ERR_INVALID_ARG, "unsupported state value");
    unsigned char *map = NULL;
    size_t len = 0;
    if (rv_tune_bitmap_parse(args->cpumap, &map, &len, err) < 0)
        return -1;
    bool enable = args->state == 1;
    int rc = -1, n_live = -1, n_config = -1;
    qemu_dom *d;
    bool live, config;
    if (rv_tune_bitmap_empty(map, len)) {
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: no vcpus selected for modification");
        goto out;
    }
    if ((rc = rv_qemu_pick_defs(&args->dom, args->flags, "cannot change persistent config of a "
                                "transient domain", &d, &live, &config, err)) != 0)
        goto out;
    rc = -1;
    if (live) {
        unsigned on = rv_qemu_def_vcpus(d->live);
        unsigned fixed = d->live->boot_vcpus ? d->live->boot_vcpus : on;
        if ((n_live = vcpus_after(map, len, enable, on, fixed, d->live->vcpus, true, err)) < 0)
            goto out;
    }
    if (config && (n_config = vcpus_after(map, len, enable, rv_qemu_def_vcpus(d->def), 1,
                                          d->def->vcpus, false, err)) < 0)
        goto out;
    if (live && config && n_live != n_config) {
        fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: the live domain and "
             "its definition have different vcpus on: change them one at a time");
        goto out;
    }
    rc = set_vcpus(d, (unsigned)(live ? n_live : n_config), 0, live, config, err);
out:
    free(map);
    return rc;
}

int rv_qemu_domain_get_max_memory(rv_driver_conn *c, const rv_domain_get_max_memory_args *args,
                                  rv_domain_get_max_memory_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->memory = rv_qemu_dom_def(d)->memory_kib;
    return 0;
}
