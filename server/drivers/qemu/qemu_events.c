/* The domain events QEMU gives rise to, beyond the lifecycle ones
 * (qemu_process.c) and the device ones (qemu_hotplug.c): QMP events
 * turned into libvirt's, with the state changes libvirtd makes for them
 * (a watchdog or an I/O error that pauses, a watchdog's dump, guest power
 * management);
 * the events of calls (TUNABLE, METADATA_CHANGE); and
 * DOMAIN_SET_BLOCK_THRESHOLD with the BLOCK_THRESHOLD event it leads to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/domain_xml_priv.h"

RV_LOG_CATEGORY("drivers.qemu.events");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

void rv_qemu_emit(const qemu_dom *d, const rv_dom_event *ev)
{
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_dom_event(&rv_qemu_driver, &ref, ev);
    free(ref.name);
}

void rv_qemu_emit_tunable(const qemu_dom *d, rv_typed_param *params, u_int n)
{
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_TUNABLE };
    ev.u.tunable.params.params_val = params;
    ev.u.tunable.params.params_len = n;
    rv_qemu_emit(d, &ev);
}

void rv_qemu_emit_tunable_string(const qemu_dom *d, const char *field, const char *value)
{
    rv_typed_param p = { .field = (char *)field };
    p.value.type = RV_TYPED_PARAM_STRING;
    p.value.rv_typed_param_value_u.s = (char *)value;
    rv_qemu_emit_tunable(d, &p, 1);
}

void rv_qemu_emit_metadata_change(const qemu_dom *d, int type, const char *nsuri)
{
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_metadata_event(&rv_qemu_driver, &ref, type, nsuri);
    free(ref.name);
}

/* ================================================================ QMP events */

static const char *str_of(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static bool bool_of(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static long long int_of(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

/* A word's index in a NULL-ended list, or dflt. */
static int word(const char *s, const char *const *words, int dflt)
{
    for (int i = 0; s && words[i]; i++)
        if (strcmp(s, words[i]) == 0)
            return i;
    return dflt;
}

/* The live disk a QMP "device" (drive-TARGET) or qdev "id" (TARGET) names. */
static const rv_qemu_disk *disk_of(const qemu_dom *d, json_object *data)
{
    const char *dev = str_of(data, "device"), *id = str_of(data, "id");
    if (dev && strncmp(dev, "drive-", 6) == 0)
        dev += 6;
    for (size_t i = 0; d->live && i < d->live->ndisks; i++) {
        const char *t = d->live->disks[i].target;
        if ((dev && strcmp(dev, t) == 0) || (id && strcmp(id, t) == 0))
            return &d->live->disks[i];
    }
    return NULL;
}

/* A pause QEMU made for a reason of its own: libvirtd's state and
 * lifecycle event come with the event that says why. */
static void paused_by(qemu_dom *d, int reason, int detail)
{
    if (d->state == RV_DOMAIN_RUNNING)
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, reason, RV_EVENT_SUSPENDED, detail);
}

/* <watchdog action='dump'>, as libvirtd does it: QEMU paused the guest
 * (its action is pause); a core dump (QEMU's migration stream, as
 * libvirtd's automatic dumps) to dump_dir/<name>-<date>-<time>, then the
 * guest resumes.  Jobs of the domain nobody waits for: a failure is
 * logged, and a guest whose dump failed still resumes, as with libvirtd. */
static void watchdog_dump(qemu_dom *d)
{
    /* A guest that fires again before its last dump is written gets no
     * second one queued (the resume queued after that dump resumes it):
     * what it can make the host hold stays one dump. */
    for (const qemu_job *j = d->jobs; j; j = j->next)
        if (j->kind == QJOB_DUMP && !j->reply) {
            RV_WARN("domain '%s': watchdog fired again while its dump is under way: no new dump",
                    d->live->name);
            return;
        }
    rv_err err = { 0 };
    char stamp[32] = "";
    struct tm tm;
    time_t now = time(NULL);
    if (localtime_r(&now, &tm))
        strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H:%M:%S", &tm);
    char *path = NULL;
    if (rv_qemu_mkdirs(rv_qemu.dump_dir, &err) < 0 ||
        asprintf(&path, "%s/%s-%s", rv_qemu.dump_dir, d->live->name, stamp) < 0) {
        path = NULL;
        RV_WARN("domain '%s': no watchdog dump: %s", d->live->name,
                err.message ? err.message : "out of memory");
        rv_err_clear(&err);
    } else {
        rv_qemu_job_add_path(d, QJOB_DUMP, (unsigned)RV_DOMAIN_CORE_DUMP_FORMAT_RAW << 24, path, NULL);
    }
    free(path);
    rv_qemu_job_add(d, QJOB_RESUME, 0, NULL, NULL);
}

static void on_watchdog(qemu_dom *d, json_object *data)
{
    /* QEMU's action words in libvirt's order (RV_DOMAIN_EVENT_WATCHDOG_*). */
    static const char *const actions[] = { "none", "pause", "reset", "poweroff", "shutdown",
                                           "debug", "inject-nmi", NULL };
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_WATCHDOG };
    ev.u.watchdog.msg.action = word(str_of(data, "action"), actions, RV_DOMAIN_EVENT_WATCHDOG_NONE);
    rv_qemu_emit(d, &ev);
    if (ev.u.watchdog.msg.action == RV_DOMAIN_EVENT_WATCHDOG_PAUSE)
        paused_by(d, RV_DOMAIN_PAUSED_WATCHDOG, RV_EVENT_SUSPENDED_WATCHDOG);
    if (d->live->dev.watchdog.present && d->live->dev.watchdog.action == RV_QEMU_WATCHDOG_DUMP)
        watchdog_dump(d);
}

static void on_io_error(qemu_dom *d, json_object *data)
{
    static const char *const actions[] = { "ignore", "stop", "report", NULL };
    const rv_qemu_disk *disk = disk_of(d, data);
    char alias[64] = "";
    if (disk)
        rv_qemu_disk_alias(d->live, disk, alias, sizeof(alias));
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_IO_ERROR_REASON };
    rv_domain_event_io_error_reason_msg *m = &ev.u.io_error_reason.msg;
    m->srcPath = disk && disk->source ? disk->source : "";
    m->devAlias = alias;
    m->action = word(str_of(data, "action"), actions, RV_DOMAIN_EVENT_IO_ERROR_NONE);
    m->reason = bool_of(data, "nospace") ? "enospc" : "";
    /* libvirtd sends both: the plain event first. */
    rv_dom_event plain = { .id = RV_DOMAIN_EVENT_ID_IO_ERROR };
    plain.u.io_error.msg.srcPath = m->srcPath;
    plain.u.io_error.msg.devAlias = m->devAlias;
    plain.u.io_error.msg.action = m->action;
    rv_qemu_emit(d, &plain);
    rv_qemu_emit(d, &ev);
    if (m->action == RV_DOMAIN_EVENT_IO_ERROR_PAUSE) {
        paused_by(d, RV_DOMAIN_PAUSED_IOERROR, RV_EVENT_SUSPENDED_IOERROR);
        rv_qemu_migrate_io_error(d);
    }
}

static void graphics_address(json_object *o, bool spice, rv_domain_event_graphics_address *a,
                             char *port, size_t size)
{
    static const char *const families[] = { "ipv4", "ipv6", "unix", NULL };
    a->family = word(str_of(o, "family"), families, RV_DOMAIN_EVENT_GRAPHICS_ADDRESS_IPV4);
    a->node = (char *)(str_of(o, "host") ? str_of(o, "host") : "");
    const char *service = spice ? str_of(o, "port") : str_of(o, "service");
    snprintf(port, size, "%s", service ? service : "");
    a->service = port;
}

static void on_graphics(qemu_dom *d, const char *name, json_object *data)
{
    bool spice = strncmp(name, "SPICE_", 6) == 0;
    const char *phase = name + (spice ? 6 : 4);
    json_object *server = NULL, *client = NULL;
    if (!data || !json_object_object_get_ex(data, "server", &server) ||
        !json_object_object_get_ex(data, "client", &client))
        return;
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_GRAPHICS };
    rv_domain_event_graphics_msg *m = &ev.u.graphics.msg;
    m->phase = strcmp(phase, "CONNECTED") == 0     ? RV_DOMAIN_EVENT_GRAPHICS_CONNECT
               : strcmp(phase, "INITIALIZED") == 0 ? RV_DOMAIN_EVENT_GRAPHICS_INITIALIZE
                                                   : RV_DOMAIN_EVENT_GRAPHICS_DISCONNECT;
    char lport[32], rport[32];
    graphics_address(server, spice, &m->local, lport, sizeof(lport));
    graphics_address(client, spice, &m->remote, rport, sizeof(rport));
    const char *auth = str_of(server, "auth");
    m->authScheme = (char *)(auth ? auth : "");
    rv_domain_event_graphics_identity ids[2];
    u_int n = 0;
    const char *dname = str_of(client, "x509_dname"), *user = str_of(client, "sasl_username");
    if (dname)
        ids[n++] = (rv_domain_event_graphics_identity){ "x509dname", (char *)dname };
    if (user)
        ids[n++] = (rv_domain_event_graphics_identity){ "saslUsername", (char *)user };
    m->subject.subject_val = ids;
    m->subject.subject_len = n;
    rv_qemu_emit(d, &ev);
}

static void on_tray(qemu_dom *d, json_object *data)
{
    const rv_qemu_disk *disk = disk_of(d, data);
    if (!disk)
        return;
    char alias[64];
    rv_qemu_disk_alias(d->live, disk, alias, sizeof(alias));
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_TRAY_CHANGE };
    ev.u.tray_change.msg.devAlias = alias;
    ev.u.tray_change.msg.reason = bool_of(data, "tray-open") ? RV_DOMAIN_EVENT_TRAY_CHANGE_OPEN
                                                              : RV_DOMAIN_EVENT_TRAY_CHANGE_CLOSE;
    rv_qemu_emit(d, &ev);
}

/* Guest power management: the event, then (as libvirtd) the state. */
static void on_pm(qemu_dom *d, int event_id)
{
    rv_dom_event ev = { .id = event_id };
    rv_qemu_emit(d, &ev);
    if (event_id == RV_DOMAIN_EVENT_ID_PMWAKEUP) {
        if (d->state == RV_DOMAIN_PMSUSPENDED)
            rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_WAKEUP, RV_EVENT_STARTED,
                                  RV_EVENT_STARTED_WAKEUP);
    } else if (d->state == RV_DOMAIN_RUNNING) {
        rv_qemu_dom_set_state(d, RV_DOMAIN_PMSUSPENDED, RV_DOMAIN_PMSUSPENDED_UNKNOWN,
                              RV_EVENT_PMSUSPENDED,
                              event_id == RV_DOMAIN_EVENT_ID_PMSUSPEND ? RV_EVENT_PMSUSPENDED_MEMORY
                                                                       : RV_EVENT_PMSUSPENDED_DISK);
    }
}

static void on_memory_failure(qemu_dom *d, json_object *data)
{
    static const char *const recipients[] = { "hypervisor", "guest", NULL };
    static const char *const actions[] = { "ignore", "inject", "fatal", "reset", NULL };
    json_object *flags = NULL;
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_MEMORY_FAILURE };
    ev.u.memory_failure.recipient = word(str_of(data, "recipient"), recipients, 0);
    ev.u.memory_failure.action = word(str_of(data, "action"), actions, 0);
    if (data && json_object_object_get_ex(data, "flags", &flags))
        ev.u.memory_failure.flags =
            (bool_of(flags, "action-required") ? RV_DOMAIN_MEMORY_FAILURE_ACTION_REQUIRED : 0) |
            (bool_of(flags, "recursive") ? RV_DOMAIN_MEMORY_FAILURE_RECURSIVE : 0);
    rv_qemu_emit(d, &ev);
}

/* The guest agent's port opened or closed (the agent inside started or
 * stopped): libvirtd's AGENT_LIFECYCLE, for its channel only. */
static void on_vserport(qemu_dom *d, json_object *data)
{
    const char *id = str_of(data, "id");
    const rv_qemu_devices *dev = &d->live->dev;
    for (size_t i = 0; id && i < dev->nchannels; i++) {
        char want[32];
        snprintf(want, sizeof(want), "channel%zu", i);
        if (strcmp(id, want) != 0 || !dev->channels[i].name ||
            strcmp(dev->channels[i].name, "org.qemu.guest_agent.0") != 0)
            continue;
        if (bool_of(data, "open"))
            d->agent_unopened = false;
        rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_AGENT_LIFECYCLE };
        ev.u.agent_lifecycle.state = bool_of(data, "open")
                                         ? RV_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_CONNECTED
                                         : RV_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_DISCONNECTED;
        ev.u.agent_lifecycle.reason = RV_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_REASON_CHANNEL;
        rv_qemu_emit(d, &ev);
    }
}

void rv_qemu_events_started(qemu_dom *d)
{
    if (!d->live || !rv_qemu_agent_configured(d->live))
        return;
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_AGENT_LIFECYCLE };
    ev.u.agent_lifecycle.state = RV_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_DISCONNECTED;
    ev.u.agent_lifecycle.reason = RV_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_REASON_DOMAIN_STARTED;
    rv_qemu_emit(d, &ev);
}

static void on_write_threshold(qemu_dom *d, json_object *data)
{
    const char *node = str_of(data, "node-name");
    for (qemu_threshold **p = &d->thresholds; node && *p; p = &(*p)->next) {
        qemu_threshold *t = *p;
        if (strcmp(t->node, node) != 0)
            continue;
        rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_BLOCK_THRESHOLD };
        ev.u.block_threshold.dev = t->dev;
        ev.u.block_threshold.path = t->path ? &t->path : NULL;
        ev.u.block_threshold.threshold = (unsigned long long)int_of(data, "write-threshold");
        ev.u.block_threshold.excess = (unsigned long long)int_of(data, "amount-exceeded");
        rv_qemu_emit(d, &ev);
        /* QEMU cleared it: so does remvirtd. */
        *p = t->next;
        rv_qemu_threshold_free(t);
        return;
    }
}

void rv_qemu_events_qmp(qemu_dom *d, const char *name, json_object *data)
{
    if (!d->live)
        return;
    if (strcmp(name, "RTC_CHANGE") == 0) {
        rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_RTC_CHANGE };
        ev.u.rtc_change.msg.offset = int_of(data, "offset");
        rv_qemu_emit(d, &ev);
    } else if (strcmp(name, "WATCHDOG") == 0) {
        on_watchdog(d, data);
    } else if (strcmp(name, "BLOCK_IO_ERROR") == 0) {
        on_io_error(d, data);
    } else if (strncmp(name, "VNC_", 4) == 0 || strncmp(name, "SPICE_", 6) == 0) {
        if (strcmp(name, "SPICE_MIGRATE_COMPLETED") != 0)
            on_graphics(d, name, data);
    } else if (strcmp(name, "DEVICE_TRAY_MOVED") == 0) {
        on_tray(d, data);
    } else if (strcmp(name, "SUSPEND") == 0) {
        on_pm(d, RV_DOMAIN_EVENT_ID_PMSUSPEND);
    } else if (strcmp(name, "SUSPEND_DISK") == 0) {
        on_pm(d, RV_DOMAIN_EVENT_ID_PMSUSPEND_DISK);
    } else if (strcmp(name, "WAKEUP") == 0) {
        on_pm(d, RV_DOMAIN_EVENT_ID_PMWAKEUP);
    } else if (strcmp(name, "BALLOON_CHANGE") == 0) {
        rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_BALLOON_CHANGE };
        ev.u.balloon_change.msg.actual = d->balloon_kib;
        rv_qemu_emit(d, &ev);
    } else if (strcmp(name, "MEMORY_FAILURE") == 0) {
        on_memory_failure(d, data);
    } else if (strcmp(name, "VSERPORT_CHANGE") == 0) {
        on_vserport(d, data);
    } else if (strcmp(name, "BLOCK_WRITE_THRESHOLD") == 0) {
        on_write_threshold(d, data);
    }
}

/* ================================================================ block threshold */

void rv_qemu_threshold_free(qemu_threshold *t)
{
    if (!t)
        return;
    free(t->node);
    free(t->dev);
    free(t->path);
    free(t);
}

void rv_qemu_thresholds_clear(qemu_dom *d)
{
    while (d->thresholds) {
        qemu_threshold *t = d->thresholds;
        d->thresholds = t->next;
        rv_qemu_threshold_free(t);
    }
}

typedef struct threshold_req {
    rv_qemu_live_req live;
    qemu_threshold *t;          /* node unknown until QEMU names it */
    unsigned long long threshold;
} threshold_req;

static void req_free(threshold_req *req)
{
    rv_qemu_threshold_free(req->t);
    free(req->live.name);
    free(req);
}

static void on_set(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    (void)ret;
    threshold_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    /* One threshold per node: a new one replaces, 0 clears. */
    for (qemu_threshold **p = &d->thresholds; *p; p = &(*p)->next) {
        if (strcmp((*p)->node, req->t->node) == 0) {
            qemu_threshold *old = *p;
            *p = old->next;
            rv_qemu_threshold_free(old);
            break;
        }
    }
    if (req->threshold) {
        req->t->next = d->thresholds;
        d->thresholds = req->t;
        req->t = NULL;
    }
    rv_deferred_finish(req->live.reply, NULL);
    req_free(req);
}

/* The storage (file) node under the disk's drive: the threshold counts
 * what the image file takes, as libvirtd's does. */
static void on_nodes(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    threshold_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, qerr)) {
        req_free(req);
        return;
    }
    const char *node = NULL;
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    for (size_t i = 0; i < n && !node; i++) {
        json_object *b = json_object_array_get_idx(ret, i);
        const char *drv = str_of(b, "drv"), *file = str_of(b, "file");
        if (drv && strcmp(drv, "file") == 0 && file && strcmp(file, req->t->path) == 0)
            node = str_of(b, "node-name");
    }
    if (!node || !(req->t->node = strdup(node))) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_INTERNAL_ERROR,
                             "internal error: no QEMU block node for disk '%s'", req->t->dev);
        req_free(req);
        return;
    }
    json_object *args = json_object_new_object();
    if (!args) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return;
    }
    json_object_object_add(args, "node-name", json_object_new_string(node));
    json_object_object_add(args, "write-threshold", json_object_new_int64((int64_t)req->threshold));
    if (!rv_qemu_send_for(rv_qemu_find_name(req->live.name), req->live.reply,
                          "block-set-write-threshold", args, on_set, req))
        req_free(req);
}

int rv_qemu_domain_set_block_threshold(rv_driver_conn *c,
                                       const rv_domain_set_block_threshold_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSetBlockThreshold", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get_running(&args->dom, err);
    if (!d)
        return -1;
    int rc = rv_qemu_need_monitor(d, err);
    if (rc)
        return rc;
    const rv_qemu_disk *disk = NULL;
    for (size_t i = 0; i < d->live->ndisks && !disk; i++)
        if (strcmp(d->live->disks[i].target, args->dev) == 0 ||
            (d->live->disks[i].source && strcmp(d->live->disks[i].source, args->dev) == 0))
            disk = &d->live->disks[i];
    if (!disk)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk '%s' not found in domain",
                    args->dev);
    if (!disk->source)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: disk '%s' does not have a source",
                    args->dev);
    threshold_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req)
        return -1;
    req->threshold = args->threshold;
    if (!(req->t = calloc(1, sizeof(*req->t))) || !(req->t->dev = strdup(disk->target)) ||
        !(req->t->path = strdup(disk->source))) {
        rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        req_free(req);
        return RV_DEFERRED;
    }
    json_object *q = json_object_new_object();
    if (q)
        json_object_object_add(q, "flat", json_object_new_boolean(1));
    if (!rv_qemu_send_for(d, req->live.reply, "query-named-block-nodes", q, on_nodes, req))
        req_free(req);
    return RV_DEFERRED;
}
