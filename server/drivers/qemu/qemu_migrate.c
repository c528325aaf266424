/* Live migration between two daemons, libvirt's version 3 protocol with
 * typed parameters in its managed direct form (the client drives the
 * steps; docs/wire-protocol.md lists them, docs/qemu-driver.md says
 * what each end does):
 *   source       BEGIN3    the cookie and the domain XML (nothing changes)
 *   destination  PREPARE3  a QEMU started with -incoming defer, paused,
 *                          listening (migrate-incoming) on a port of
 *                          qemu_migration_port_min..max; its URI answered
 *   source       PERFORM3  a MIGRATE_OUT job: QMP migrate to that URI,
 *                          polled (the domain's job record: domjobinfo,
 *                          domjobabort) until QEMU says completed
 *   destination  FINISH3   the stream is in: cont (unless PAUSED), the
 *                          definition kept with PERSIST_DEST; cancelled
 *                          or failed: this QEMU goes
 *   source       CONFIRM3  the source QEMU goes (shut off, migrated), or,
 *                          cancelled, runs again
 * The guest runs on exactly one side: the source runs it until QEMU's
 * stream is complete, and again unless FINISH3 succeeded (the client
 * calls CONFIRM3 cancelled when anything after BEGIN3 failed).  Nothing
 * here waits: QMP is asynchronous and the calls are answered later.
 * (Peer to peer: qemu_migrate_p2p.c; tunnelled, PREPARE_TUNNEL3 sharing
 * PREPARE3's rv_qemu_migrate_prepare_in: qemu_migrate_tunnel.c.) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("qemu.migrate");

/* libvirt's virDomainMigrateFlags (public header). */
enum {
    MIGRATE_LIVE = 1u << 0,
    MIGRATE_PEER2PEER = 1u << 1,
    MIGRATE_TUNNELLED = 1u << 2,
    MIGRATE_PERSIST_DEST = 1u << 3,
    MIGRATE_UNDEFINE_SOURCE = 1u << 4,
    MIGRATE_PAUSED = 1u << 5,
    MIGRATE_NON_SHARED_DISK = 1u << 6,
    MIGRATE_NON_SHARED_INC = 1u << 7,
    MIGRATE_CHANGE_PROTECTION = 1u << 8,
    MIGRATE_UNSAFE = 1u << 9,
    MIGRATE_OFFLINE = 1u << 10,
    MIGRATE_ABORT_ON_ERROR = 1u << 12,
    MIGRATE_POSTCOPY = RV_QEMU_MIGRATE_POSTCOPY,
    MIGRATE_POSTCOPY_RESUME = RV_QEMU_MIGRATE_POSTCOPY_RESUME,
};
/* What remvirtd does (UNSAFE: it does not check disk caches anyway). */
#define MIGRATE_KNOWN                                                                              \
    (MIGRATE_LIVE | MIGRATE_PEER2PEER | MIGRATE_TUNNELLED | MIGRATE_PERSIST_DEST | MIGRATE_UNDEFINE_SOURCE |          \
     MIGRATE_PAUSED | MIGRATE_CHANGE_PROTECTION | MIGRATE_UNSAFE | MIGRATE_ABORT_ON_ERROR |        \
     MIGRATE_NON_SHARED_DISK | MIGRATE_NON_SHARED_INC | MIGRATE_OFFLINE | MIGRATE_POSTCOPY |       \
     MIGRATE_POSTCOPY_RESUME |                                                                     \
     RV_QEMU_MIGRATE_CAPS /* (ZEROCOPY refused by qemu_migrate_caps.c, with its reason) */)
#define MIGRATE_NON_SHARED (MIGRATE_NON_SHARED_DISK | MIGRATE_NON_SHARED_INC)
/* libvirt's parameter names (VIR_MIGRATE_PARAM_*). */
#define PARAM_URI "migrate_uri"
#define PARAM_DEST_XML "destination_xml"
#define PARAM_PERSIST_XML "persistent_xml"

/* (the driver's errors are in its own error domain) */
#define fail(err, ...) rv_err_fail(err, RV_FROM_QEMU, __VA_ARGS__)

/* (PEER2PEER: PERFORM3 drives the destination itself, qemu_migrate_p2p.c;
 * the destination's steps see the flag too) */
#define check_flags rv_qemu_migrate_check_flags
int rv_qemu_migrate_check_flags(unsigned int flags, const char *func, rv_err *err)
{
    /* (tunnelled: qemu_migrate_tunnel.c; peer-to-peer only, as libvirt's) */
    if ((flags & MIGRATE_TUNNELLED) && !(flags & MIGRATE_PEER2PEER))
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: %s: %s", func,
                    "tunnelled migration requires peer-to-peer (--p2p)");
    if ((flags & MIGRATE_TUNNELLED) && (flags & (MIGRATE_NON_SHARED | MIGRATE_OFFLINE)))
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: %s: %s", func,
                    "remvirtd tunnels live migrations with shared storage only");
    if ((flags & MIGRATE_TUNNELLED) && (flags & RV_QEMU_MIGRATE_TLS))
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: %s: %s", func,
                    "the tunnel is the daemons' own connection: use its TLS (qemu+tls://) "
                    "rather than --tls");
    /* (libvirt's messages for these, not compared side by side) */
    if ((flags & MIGRATE_OFFLINE) && (flags & MIGRATE_NON_SHARED))
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "offline migration cannot handle non-shared storage");
    if ((flags & MIGRATE_OFFLINE) && !(flags & MIGRATE_PERSIST_DEST))
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "offline migration must be specified with the persistent flag set");
    if ((flags & MIGRATE_NON_SHARED) == MIGRATE_NON_SHARED)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "Flags 'VIR_MIGRATE_NON_SHARED_DISK' and 'VIR_MIGRATE_NON_SHARED_INC' are "
                    "mutually exclusive");
    if (rv_qemu_postcopy_check_flags(flags, err) < 0)
        return -1;
    return rv_qemu_check_flags(RV_FROM_QEMU, flags, MIGRATE_KNOWN, func, err);
}

/* A string parameter (NULL: absent); other parameters are left alone, as
 * libvirtd ignores those its driver does not use. */
static const char *param_string(const rv_typed_param *params, u_int n, const char *name)
{
    const rv_typed_param *p = rv_tune_param_find(params, n, name);
    return p && p->value.type == RV_TYPED_PARAM_STRING ? p->value.rv_typed_param_value_u.s : NULL;
}

/* PERSIST_DEST's definition: the persistent_xml parameter's when given
 * (nova sends one), else the running one's; it must name the same
 * domain.  NULL with err. */
static rv_qemu_domain_def *persist_def(const rv_typed_param *params, u_int n,
                                       const rv_qemu_domain_def *live, rv_err *err)
{
    const char *given = param_string(params, n, PARAM_PERSIST_XML);
    char *xml = given ? NULL : rv_qemu_domain_format(live);
    if (!given && !xml) {
        fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
        return NULL;
    }
    const char *text = given ? given : xml;
    rv_qemu_domain_def *def = rv_qemu_domain_parse(text, strlen(text), err);
    free(xml);
    if (def && (memcmp(def->uuid, live->uuid, sizeof(def->uuid)) != 0 ||
                strcmp(def->name, live->name) != 0)) {
        rv_qemu_domain_free(def);
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s names another domain than '%s'",
             PARAM_PERSIST_XML, live->name);
        return NULL;
    }
    return def;
}

/* ================================================================ source */

/* The job lock (libvirtd 9.0, observed: other changes wait 30 s for its
 * state change lock and fail with this; remvirtd refuses at once). */
bool rv_qemu_migration_locked(const qemu_dom *d, rv_err *err)
{
    if (rv_qemu_postcopy_failed(d)) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_TIMEOUT,
                   "Timed out during operation: cannot acquire state change lock (held by "
                   "monitor=remoteDispatchDomainMigrateConfirm3Params)");
        return true;
    }
    if (!d->migration_owner)
        return false;
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_TIMEOUT,
               "Timed out during operation: cannot acquire state change lock (held by "
               "monitor=remoteDispatchDomainMigrateBegin3Params)");
    return true;
}

static void unlock_one(void *obj, void *conn)
{
    qemu_dom *d = obj;
    if (d->migration_owner == conn) {
        RV_INFO("domain '%s': its migration's client went away: unlocked",
                d->live ? d->live->name : d->def ? d->def->name : "?");
        d->migration_owner = NULL;
    }
}

void rv_qemu_migration_unlock_conn(const struct rv_driver_conn *c)
{
    rv_dom_list_each(&rv_qemu.doms, unlock_one, (void *)c);
}

int rv_qemu_domain_migrate_begin3_params(rv_driver_conn *c,
                                         const rv_domain_migrate_begin3_params_args *args,
                                         rv_domain_migrate_begin3_params_ret *ret, rv_err *err)
{
    if (args->flags & MIGRATE_POSTCOPY_RESUME)
        return rv_qemu_postcopy_refuse_resume(&args->dom, err);
    if (check_flags(args->flags, "qemuDomainMigrateBegin3Params", err) < 0 ||
        rv_qemu_migcaps_parse(args->flags, args->params.params_val, args->params.params_len, false,
                              NULL, err) < 0)
        return -1;
    bool offline = args->flags & MIGRATE_OFFLINE;
    qemu_dom *d = rv_qemu_migrate_source(&args->dom, offline, err);
    if (!d)
        return -1;
    const char *dxml = param_string(args->params.params_val, args->params.params_len,
                                    PARAM_DEST_XML);
    if (rv_qemu_migrate_begin(d, offline, dxml, &ret->xml, &ret->cookie_out.cookie_out_val,
                              &ret->cookie_out.cookie_out_len, err) < 0)
        return -1;
    if (args->flags & MIGRATE_CHANGE_PROTECTION)
        d->migration_owner = c;
    return 0;
}

qemu_dom *rv_qemu_migrate_source(const rv_nonnull_domain *dom, bool offline, rv_err *err)
{
    qemu_dom *d = offline ? rv_qemu_dom_get(dom, err) : rv_qemu_dom_get_active(dom, err);
    if (!d)
        return NULL;
    /* Offline: the persistent definition moves, nothing runs. */
    if (offline && !d->def) {
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
             "cannot migrate a transient domain offline");
        return NULL;
    }
    return rv_qemu_migrate_check_idle(d, err) < 0 ? NULL : d;
}

int rv_qemu_migrate_check_idle(const qemu_dom *d, rv_err *err)
{
    const char *name = rv_qemu_dom_def(d)->name;
    if (d->migration_owner)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: another migration job is already running "
                    "for domain '%s'", name);
    if (d->starting || d->stopping || d->migrate_in || d->save || d->job_busy || d->p2p)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain '%s' is busy with another job",
                    name);
    return 0;
}

int rv_qemu_migrate_begin(qemu_dom *d, bool offline, const char *dxml, char **xml, char **cookie,
                          u_int *cookie_len, rv_err *err)
{
    const rv_qemu_domain_def *src = offline ? d->def : d->live;
    if (dxml) {
        /* The client's XML is the same domain (a random UUID in XML
         * without one would make it another at the destination). */
        rv_qemu_domain_def *def = rv_qemu_domain_parse(dxml, strlen(dxml), err);
        if (!def)
            return -1;
        bool same = memcmp(def->uuid, src->uuid, sizeof(def->uuid)) == 0;
        rv_qemu_domain_free(def);
        if (!same)
            return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: %s",
                        "Target domain uuid does not match source");
    }
    *xml = dxml ? strdup(dxml) : offline ? rv_qemu_domain_format(src) : rv_qemu_migrate_xml(d);
    if (!*xml)
        return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    if (rv_qemu_migrate_cookie(src, false, 0, cookie, cookie_len, err) < 0) {
        free(*xml);
        *xml = NULL;
        return -1;
    }
    return 0;
}

static void on_set_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    (void)ret;
    if (err)
        RV_WARN("%s: %s", (const char *)opaque, err->message ? err->message : "");
}

/* migrate_cancel, its answer only logged (nothing to cancel is fine). */
static void cancel_quietly(qemu_dom *d)
{
    rv_err e = { 0 };
    if (d->qmp && rv_qmp_command(d->qmp, "migrate_cancel", NULL, 0, on_set_reply,
                                 (void *)"migrate_cancel", &e) < 0)
        rv_err_clear(&e);
}

static void perform_end(qemu_dom *d, const rv_err *err)
{
    rv_err aborted = { 0 };
    if (rv_qemu_migrate_stall_end(d, &aborted) && err)
        err = &aborted;
    else if (err && rv_qemu_migrate_io_error_end(d, &aborted))
        err = &aborted;
    else if (err && err->code != RV_ERR_OPERATION_ABORTED && rv_qemu_jobinfo_aborted(d, &aborted))
        err = &aborted;
    if (err) {
        RV_WARN("domain '%s': migration to %s failed: %s", d->live->name, d->jobs->path,
                err->message ? err->message : "");
        /* QEMU runs the guest again itself; CONFIRM3 (cancelled) makes
         * sure.  (A stream cut short may leave QEMU "active": stop it.
         * After a post-copy switch nothing is cancelled: the guest can
         * no longer run here.) */
        if (!rv_qemu_postcopy_switched(d))
            cancel_quietly(d);
    } else {
        RV_INFO("domain '%s': migration to %s completed", d->live->name, d->jobs->path);
        rv_crash_point("migrate-perform", 2);    /* (stream complete, not answered) */
        d->migrated_out = true;
    }
    d->migtune.outgoing = RV_QEMU_MIGOUT_NONE;
    rv_qemu_migcaps_end(d);
    if (!rv_qemu_postcopy_keeps_job(d, err))
        rv_qemu_jobinfo_end(d, !err, !err);    /* (JOB_COMPLETED: libvirtd sends it, observed) */
    if (!err && d->jobs->reply) {
        /* (out of memory: answered without the figures) */
        rv_domain_migrate_perform3_params_ret *r = rv_deferred_ret(d->jobs->reply);
        rv_err e = { 0 };
        if (rv_qemu_migrate_stats_cookie(d, &r->cookie_out.cookie_out_val, &r->cookie_out.cookie_out_len, &e) < 0)
            rv_err_clear(&e);
    }
    rv_qemu_job_done(d, err);
    if (d->p2p)
        rv_qemu_migrate_p2p_performed(d, err);
    rv_err_clear(&aborted);
}

/* The stream is over (err: why not): the disks' mirrors first, if any. */
static void perform_done(qemu_dom *d, const rv_err *err)
{
    if (d->migstore)
        rv_qemu_migstore_end(d, err, perform_end);
    else
        perform_end(d, err);
}

static void on_migrate_sent(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->job_busy || d->jobs->kind != QJOB_MIGRATE_OUT)
        return;
    if (err) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: migration: %s",
                   err->message ? err->message : "QEMU refused");
        perform_done(d, &e);
        rv_err_clear(&e);
        return;
    }
    rv_crash_point("migrate-perform", 1);    /* (QEMU sends the stream) */
    rv_qemu_migrate_stall_watch(d);
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(d);
    if (j && j->aborted)
        rv_qemu_migration_cancel(d, NULL);
    rv_qemu_migrate_io_error(d);    /* (a guest paused for an I/O error already) */
    rv_qemu_migration_wait(d, perform_done);
}

/* {"capability": name, "state": on} added to caps: false when out of memory. */
static bool cap_set(json_object *caps, const char *name, bool on)
{
    json_object *cap = json_object_new_object();
    if (!cap || json_object_object_add(cap, "capability", json_object_new_string(name)) < 0 ||
        json_object_object_add(cap, "state", json_object_new_boolean(on)) < 0 ||
        json_object_array_add(caps, cap) < 0) {
        json_object_put(cap);
        return false;
    }
    return true;
}

/* Migration capabilities, before the migration (QEMU answers in order):
 * "events", so that each state change is seen at once
 * (rv_qemu_migration_poke) rather than at the next 50 ms poll; and on
 * the destination "late-block-activate": its QEMU takes the disks (and
 * their locks) only at FINISH3's cont, so a source whose migration is
 * cancelled after the stream completed can still run the guest;
 * "postcopy-ram" as this migration's flags say, set either way (a QEMU
 * that arrived post-copy keeps it on, and a destination without it
 * would refuse the stream). */
static void migration_caps(qemu_dom *d, bool incoming)
{
    json_object *args = json_object_new_object(), *caps = json_object_new_array();
    rv_err e = { 0 };
    if (!args || !caps || !cap_set(caps, "events", true) ||
        (incoming && !cap_set(caps, "late-block-activate", true)) ||
        !cap_set(caps, "postcopy-ram", rv_qemu_postcopy_allowed(d))) {
        json_object_put(args);
        json_object_put(caps);
        return;
    }
    json_object_object_add(args, "capabilities", caps);
    if (!d->qmp || rv_qmp_command(d->qmp, "migrate-set-capabilities", args, 0, on_set_reply,
                                  (void *)"migrate-set-capabilities", &e) < 0)
        rv_err_clear(&e);
}

/* The memory and device state, once QEMU has the migration's
 * capabilities, parameters and TLS (set: why not). */
static void send_migrate(qemu_dom *d, const rv_err *set)
{
    rv_err err = { 0 };
    if (!d->job_busy || d->jobs->kind != QJOB_MIGRATE_OUT)
        return;
    if (set) {
        perform_done(d, set);
        return;
    }
    json_object *args = json_object_new_object();
    if (!args || json_object_object_add(args, "uri", json_object_new_string(d->jobs->path)) < 0) {
        json_object_put(args);
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        perform_done(d, &err);
        rv_err_clear(&err);
        return;
    }
    RV_INFO("domain '%s': migrating to %s", d->live->name, d->jobs->path);
    d->migtune.outgoing = rv_qemu_postcopy_allowed(d) ? RV_QEMU_MIGOUT_POSTCOPY : RV_QEMU_MIGOUT_PRECOPY;
    if (!d->qmp || rv_qmp_command(d->qmp, "migrate", args, 0, on_migrate_sent, d, &err) < 0) {
        if (!rv_err_is_set(&err))
            rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: no QEMU monitor");
        perform_done(d, &err);
    }
    rv_err_clear(&err);
}

/* After the disks' mirrors are ready. */
static void send_stream(qemu_dom *d, const rv_err *mirrored)
{
    if (mirrored) {
        perform_done(d, mirrored);
        return;
    }
    migration_caps(d, false);
    rv_qemu_migcaps_apply(d, false, send_migrate);
}

void rv_qemu_migrate_perform(qemu_dom *d)
{
    rv_qemu_jobinfo_begin(d, RV_DOMAIN_JOB_OPERATION_MIGRATION_OUT, "migration out",
                          d->migstore ? rv_qemu_migstore_abort : rv_qemu_migration_cancel, NULL);
    if (rv_qemu_migstore_pending(d))
        rv_qemu_migstore_mirror(d, send_stream);
    else
        send_stream(d, NULL);
}

int rv_qemu_domain_migrate_perform3_params(rv_driver_conn *c,
                                           const rv_domain_migrate_perform3_params_args *args,
                                           rv_domain_migrate_perform3_params_ret *ret, rv_err *err)
{
    (void)ret;
    if (args->flags & MIGRATE_PEER2PEER)
        return rv_qemu_migrate_p2p(c, args, err);
    if (check_flags(args->flags, "qemuDomainMigratePerform3Params", err) < 0 ||
        rv_qemu_migcaps_parse(args->flags, args->params.params_val, args->params.params_len, false,
                              NULL, err) < 0)
        return -1;
    if (args->dconnuri && *args->dconnuri)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "a destination connection URI needs VIR_MIGRATE_PEER2PEER");
    const char *uri = param_string(args->params.params_val, args->params.params_len, PARAM_URI);
    if (!uri || strncmp(uri, "tcp:", 4) != 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: migration URI '%s' is not tcp:HOST:PORT",
                    uri ? uri : "");
    qemu_dom *d = rv_qemu_dom_get_active(&args->dom, err);
    if (!d || rv_qemu_migrate_out_check(d, args->params.params_val, args->params.params_len, err) < 0)
        return -1;
    if (args->flags & MIGRATE_NON_SHARED) {
        /* (the disks are copied first, at the migration's bandwidth) */
        const rv_typed_param *bw = rv_tune_param_find(args->params.params_val, args->params.params_len,
                                                      "bandwidth");
        unsigned long long mib = bw ? bw->value.rv_typed_param_value_u.ul : 0;
        if (rv_qemu_migstore_perform(d, args->flags, args->params.params_val, args->params.params_len, uri,
                                     args->cookie_in.cookie_in_val, args->cookie_in.cookie_in_len,
                                     mib ? mib : d->migtune.max_bandwidth, err) < 0)
            return -1;
    }
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply) {
        rv_qemu_migstore_gone(d);
        return -1;
    }
    rv_qemu_migrate_out(d, args->params.params_val, args->params.params_len, args->flags, uri, reply);
    return RV_DEFERRED;
}

int rv_qemu_migrate_out_check(const qemu_dom *d, const rv_typed_param *params, u_int n, rv_err *err)
{
    const rv_typed_param *bw = rv_tune_param_find(params, n, "bandwidth");
    if (bw && bw->value.type != RV_TYPED_PARAM_ULLONG)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s", "bandwidth must be unsigned long long");
    if (bw && bw->value.rv_typed_param_value_u.ul > RV_QEMU_MIG_BANDWIDTH_MAX)
        return fail(err, RV_ERR_OVERFLOW, "numerical overflow: bandwidth must be less than %llu",
                    (unsigned long long)RV_QEMU_MIG_BANDWIDTH_MAX + 1);
    if (!d->qmp)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "domain is not running");
    return 0;
}

void rv_qemu_migrate_out(qemu_dom *d, const rv_typed_param *params, u_int n, unsigned int flags,
                         const char *uri, rv_deferred *reply)
{
    const rv_typed_param *bw = rv_tune_param_find(params, n, "bandwidth");
    unsigned long long mib = bw ? bw->value.rv_typed_param_value_u.ul : 0;
    /* The bandwidth (MiB/s) goes first: QEMU takes commands in order.
     * None or 0: the domain's kept MIGRATE_SET_MAX_SPEED value
     * (unlimited until set), as libvirtd does. */
    json_object *p = rv_qemu_migtune_bandwidth_args(mib ? mib : d->migtune.max_bandwidth);
    rv_err e = { 0 };
    if (!p || rv_qmp_command(d->qmp, "migrate-set-parameters", p, 0, on_set_reply,
                             (void *)"migrate-set-parameters", &e) < 0)
        RV_WARN("domain '%s': migrate-set-parameters: %s", d->live->name, e.message ? e.message : "");
    rv_err_clear(&e);
    rv_qemu_postcopy_begin(d, flags, true);
    rv_qemu_postcopy_out_params(d, params, n);
    /* (a libvirtd destination answers tcp://HOST:PORT; out of memory,
     * the URI goes as it is and QEMU's refusal fails the migration) */
    char *quri = rv_qemu_migrate_qemu_uri(uri);
    rv_err ce = { 0 };      /* (checked by the caller) */
    if (rv_qemu_migcaps_parse(flags, params, n, false, &d->migcaps, &ce) < 0)
        rv_err_clear(&ce);
    rv_qemu_migcaps_set_host(&d->migcaps, quri ? quri : uri);
    rv_qemu_job_add_path(d, QJOB_MIGRATE_OUT, flags, quri ? quri : uri, reply);
    free(quri);
}

static bool dom_has_qmp(const void *obj, const void *qmp)
{
    return ((const qemu_dom *)obj)->qmp == qmp;
}

/* CONFIRM3 cancelled: a guest the migration left stopped (QEMU's
 * postmigrate, or paused with no reason of the user's) runs again:
 * running (migration canceled), Resumed Migrated.  QEMU refuses "cont"
 * until its migration is finalized (finish-migrate, for a moment after
 * the stream completed): asked again every 50 ms, for 5 s at most. */
typedef struct cancel_wait {
    ev_timer timer;
    rv_deferred *reply;
    rv_qmp *qmp;
    int tries;
    rv_err why;                 /* the answer (peer-to-peer: what failed); unset: success */
} cancel_wait;

static void cancel_wait_end(cancel_wait *w)
{
    rv_deferred_finish(w->reply, rv_err_is_set(&w->why) ? &w->why : NULL);
    rv_err_clear(&w->why);
    free(w);
}

static void ask_status(cancel_wait *w);

static void on_cancel_retry(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    ask_status((cancel_wait *)t);
}

static void on_cancelled_status(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    cancel_wait *w = opaque;
    qemu_dom *d = rv_dom_list_find(&rv_qemu.doms, dom_has_qmp, qmp);
    json_object *status = NULL;
    const char *s = !err && json_object_object_get_ex(ret, "status", &status)
                        ? json_object_get_string(status) : "";
    if (d && strcmp(s, "finish-migrate") == 0 && ++w->tries < 100) {
        ev_timer_init(&w->timer, on_cancel_retry, 0.05, 0.);
        ev_timer_start(rv_qemu.loop, &w->timer);
        return;
    }
    bool stopped = strcmp(s, "postmigrate") == 0 ||
                   (strcmp(s, "paused") == 0 && d && d->reason != RV_DOMAIN_PAUSED_USER);
    if (d && stopped && d->state == RV_DOMAIN_PAUSED) {
        qemu_job *job = rv_qemu_job_add(d, QJOB_RESUME, QJOB_MIGRATE_IN, w->reply, NULL);
        if (job)
            rv_err_move(&job->fail, &w->why);
        rv_err_clear(&w->why);
        free(w);
    } else {
        cancel_wait_end(w);
    }
}

static void ask_status(cancel_wait *w)
{
    rv_err e = { 0 };
    if (!rv_dom_list_find(&rv_qemu.doms, dom_has_qmp, w->qmp) ||
        rv_qmp_command(w->qmp, "query-status", NULL, 0, on_cancelled_status, w, &e) < 0) {
        /* The domain or its monitor went: nothing to resume. */
        cancel_wait_end(w);
    }
    rv_err_clear(&e);
}

int rv_qemu_domain_migrate_confirm3_params(rv_driver_conn *c,
                                           const rv_domain_migrate_confirm3_params_args *args,
                                           rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, "qemuDomainMigrateConfirm3Params", err) < 0)
        return -1;
    if (args->flags & MIGRATE_OFFLINE) {
        /* The definition is at the destination now: with UNDEFINE_SOURCE
         * it goes from here (a guest running here runs on, transient). */
        qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
        if (!d)
            return -1;
        d->migration_owner = NULL;
        if (args->cancelled || !(args->flags & MIGRATE_UNDEFINE_SOURCE) || !d->def)
            return 0;
        rv_deferred *reply = rv_driver_defer(err);
        if (!reply || rv_qemu_def_remove(d, 0, reply, err) < 0)
            return -1;
        return RV_DEFERRED;
    }
    qemu_dom *d = rv_qemu_dom_get_active(&args->dom, err);
    if (!d)
        return -1;
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    if (rv_qemu_migrate_confirm(d, args->flags, args->cancelled, reply, NULL, err) < 0)
        rv_deferred_finish(reply, err);
    return RV_DEFERRED;
}

int rv_qemu_migrate_confirm(qemu_dom *d, unsigned int flags, bool cancelled, rv_deferred *reply,
                            const rv_err *why, rv_err *err)
{
    int pc = rv_qemu_postcopy_confirm(d, flags, cancelled, reply, why);
    if (pc)
        return pc;
    rv_qemu_postcopy_gone(d);
    d->migration_owner = NULL;      /* (the steps below change it) */
    if (cancelled) {
        /* Anything failed after BEGIN3: the guest runs here.  QEMU has
         * usually resumed it already; whether it did is asked, after
         * migrate_cancel (QEMU answers in order, and its STOP, if any,
         * has been seen by then). */
        RV_INFO("domain '%s': migration cancelled, it stays here", d->live->name);
        d->migrated_out = false;
        cancel_quietly(d);
        cancel_wait *w = calloc(1, sizeof(*w));
        if (!w)
            return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
        w->reply = reply;
        if (why)
            rv_err_set(&w->why, why->domain, why->code, "%s", why->message ? why->message : "");
        if (!d->qmp) {
            cancel_wait_end(w);
            return RV_DEFERRED;
        }
        w->qmp = d->qmp;
        ask_status(w);
        return RV_DEFERRED;
    }
    /* Only after a stream that completed, the guest still stopped here:
     * a success confirmed out of turn would leave it running nowhere. */
    if (!d->migrated_out || d->state != RV_DOMAIN_PAUSED)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "domain has no completed outgoing migration to confirm");
    /* The guest runs on the destination: this QEMU goes (shut off,
     * migrated), and with UNDEFINE_SOURCE its definition too. */
    /* The answer comes with the destroy's, which waits for the status
     * file's removal by the store helper (qemu_sync.c, one request at a
     * time, in order): the definition's removal, asked first, is done by
     * then, and the caller finds no trace of the guest here. */
    rv_crash_point("migrate-confirm", 1);
    if ((flags & MIGRATE_UNDEFINE_SOURCE) && d->def && rv_qemu_def_remove(d, 0, NULL, err) < 0)
        return -1;
    rv_qemu_job_add(d, QJOB_DESTROY, QJOB_MIGRATE_IN, reply, NULL);
    return RV_DEFERRED;
}

/* ================================================================ destination */

static bool dom_has_port(const void *obj, const void *port)
{
    const qemu_dom *d = obj;
    return d->migrate_port == *(const int *)port || rv_qemu_migstore_port(d) == *(const int *)port;
}

/* A port of the range that no incoming migration of ours has and that
 * binds now (QEMU binds it a moment later; a loser of that race fails
 * its PREPARE3 with QEMU's error).  0: none free. */
static int pick_port(void)
{
    static int next;
    int span = rv_qemu.migration_port_max - rv_qemu.migration_port_min + 1;
    for (int i = 0; i < span; i++) {
        int port = rv_qemu.migration_port_min + (next++ % span);
        if (rv_dom_list_find(&rv_qemu.doms, dom_has_port, &port))
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return 0;
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        bool ok = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
        close(fd);
        if (ok)
            return port;
    }
    return 0;
}

/* FINISH3's wait for the stream, then its run and answer. */
typedef struct qemu_migrate_finish {
    rv_deferred *reply;
    unsigned int flags;
    qemu_dom *dom;              /* (while its definition is written) */
} finish_op;

void rv_qemu_migrate_gone(qemu_dom *d)
{
    rv_qemu_migstore_gone(d);
    rv_qemu_migtunnel_gone(d);
    rv_qemu_postcopy_gone(d);
    d->migration_owner = NULL;
    d->migrate_in_conn = NULL;
    rv_qemu_migrate_stall_end(d, NULL);
    rv_qemu_migrate_in_gone(d);
    d->migrate_port = 0;
    d->migrate_in = false;
    d->migrated_out = false;
    if (d->p2p) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   "the domain's QEMU went away");
        rv_qemu_migrate_p2p_performed(d, &e);
        rv_err_clear(&e);
    }
    if (d->migrate_finish) {
        /* Its QEMU went while the stream came: FINISH3 fails. */
        finish_op *op = d->migrate_finish;
        d->migrate_finish = NULL;
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                   "operation failed: the incoming QEMU went away");
        rv_deferred_finish(op->reply, &e);
        rv_err_clear(&e);
        free(op);
    }
}

/* A unix channel socket or a graphics port the source's remvirtd chose
 * for itself: this end chooses its own (the paths name the source's run
 * directory; on one machine they would collide). */
static void drop_source_choices(rv_qemu_domain_def *def)
{
    for (size_t i = 0; i < def->dev.nchannels; i++) {
        rv_qemu_channel *ch = &def->dev.channels[i];
        char tail[64];
        snprintf(tail, sizeof(tail), ".channel.%zu", i);
        size_t n = ch->path ? strlen(ch->path) : 0, t = strlen(tail);
        if (ch->type == RV_QEMU_CHANNEL_UNIX && n > t && strcmp(ch->path + n - t, tail) == 0) {
            free(ch->path);
            ch->path = NULL;
        }
    }
    if (def->graphics.autoport)
        def->graphics.port = -1;
    if (def->spice.autoport)
        def->spice.port = -1;
}

int rv_qemu_domain_migrate_prepare3_params(rv_driver_conn *c,
                                           const rv_domain_migrate_prepare3_params_args *args,
                                           rv_domain_migrate_prepare3_params_ret *ret, rv_err *err)
{
    const rv_typed_param *params = args->params.params_val;
    u_int n = args->params.params_len;
    rv_qemu_migcaps caps;
    if (check_flags(args->flags, "qemuDomainMigratePrepare3Params", err) < 0 ||
        rv_qemu_migcaps_parse(args->flags, params, n, true, &caps, err) < 0)
        return -1;
    const char *xml = param_string(params, n, PARAM_DEST_XML);
    if (!xml)
        return fail(err, RV_ERR_INVALID_ARG, "%s", "invalid argument: no domain XML given");
    /* The host the source is told: the migrate_uri's when the client gave
     * one (tcp:HOST, tcp://HOST[:PORT]), else qemu_migration_host, else
     * this host's name. */
    const char *uri_in = param_string(params, n, PARAM_URI);
    char host[256] = "";
    int port = 0;
    if (uri_in) {
        const char *h = strncmp(uri_in, "tcp://", 6) == 0 ? uri_in + 6
                        : strncmp(uri_in, "tcp:", 4) == 0 ? uri_in + 4 : NULL;
        if (!h || !*h)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: unsupported migration URI '%s'",
                        uri_in);
        const char *colon = strrchr(h, ':');
        size_t hl = colon && !strchr(h, ']') ? (size_t)(colon - h) : strlen(h);
        if (colon && !strchr(h, ']'))
            port = atoi(colon + 1);
        if (hl >= sizeof(host) || (colon && (port <= 0 || port > 65535)))
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: bad migration URI '%s'", uri_in);
        memcpy(host, h, hl);
        host[hl] = '\0';
        char *slash = strchr(host, '/');
        if (slash)
            *slash = '\0';
    } else if (rv_qemu.migration_host) {
        snprintf(host, sizeof(host), "%s", rv_qemu.migration_host);
    } else {
        gethostname(host, sizeof(host) - 1);
    }
    if (args->flags & MIGRATE_OFFLINE) {
        /* Nothing runs here: the definition, checked now, is made at
         * FINISH3.  (The client wants a URI all the same: this host's.) */
        rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), err);
        if (!def)
            return -1;
        int kept = rv_qemu_migrate_offline_keep(def->name, xml);
        rv_qemu_domain_free(def);
        if (kept < 0 || !(ret->uri_out = malloc(sizeof(*ret->uri_out))) ||
            asprintf(ret->uri_out, strchr(host, ':') ? "tcp:[%s]" : "tcp:%s", host) < 0) {
            free(ret->uri_out);
            ret->uri_out = NULL;
            return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
        }
        return 0;
    }
    if (args->flags & MIGRATE_TUNNELLED)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "a tunnelled migration is prepared with PREPARE_TUNNEL3");
    if (!port && !(port = pick_port()))
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: %s", "no free port for the incoming migration");
    qemu_dom *d;
    rv_deferred *reply = rv_qemu_migrate_prepare_in(params, n, args->flags, &caps, port, &d, err);
    if (!reply)
        return -1;
    rv_domain_migrate_prepare3_params_ret *r = rv_deferred_ret(reply);
    rv_err cerr = { 0 };    /* (out of memory only: the reply goes without; the
                             * source then says there is no NBD server) */
    if (rv_qemu_migrate_cookie(d->live, true, rv_qemu_migstore_port(d), &r->cookie_out.cookie_out_val,
                               &r->cookie_out.cookie_out_len, &cerr) < 0)
        rv_err_clear(&cerr);
    r->uri_out = malloc(sizeof(*r->uri_out));
    if (r->uri_out && asprintf(r->uri_out, strchr(host, ':') ? "tcp:[%s]:%d" : "tcp:%s:%d", host,
                               port) < 0) {
        free(r->uri_out);
        r->uri_out = NULL;
    }
    d->migrate_in_conn = c;
    rv_qemu_job_add(d, QJOB_START, QJOB_MIGRATE_IN | RV_DOMAIN_START_PAUSED, reply, NULL);
    return RV_DEFERRED;
}

rv_deferred *rv_qemu_migrate_prepare_in(const rv_typed_param *params, u_int n, unsigned int flags,
                                        const rv_qemu_migcaps *caps, int port, qemu_dom **out,
                                        rv_err *err)
{
    const char *xml = param_string(params, n, PARAM_DEST_XML);
    if (!xml) {
        fail(err, RV_ERR_INVALID_ARG, "%s", "invalid argument: no domain XML given");
        return NULL;
    }
    rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), err);
    if (!def)
        return NULL;
    drop_source_choices(def);
    rv_qemu_migrate_incoming_def(def);
    const char *dname = param_string(params, n, "destination_name");
    if (dname && *dname && strcmp(dname, def->name) != 0) {
        char *copy = strdup(dname);
        if (!copy) {
            rv_qemu_domain_free(def);
            fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
            return NULL;
        }
        free(def->name);
        def->name = copy;
    }
    if (flags & MIGRATE_PERSIST_DEST) {
        /* (a persistent_xml that cannot be kept fails before anything starts) */
        rv_qemu_domain_def *pd = persist_def(params, n, def, err);
        if (!pd) {
            rv_qemu_domain_free(def);
            return NULL;
        }
        rv_qemu_domain_free(pd);
    }
    /* An inactive definition here with a managed save image: which state
     * is the guest's would be unclear later: refused rather than guessed. */
    qemu_dom *here = rv_qemu_find_uuid(def->uuid);
    if (here && here->def && !rv_qemu_dom_active(here) && rv_qemu_has_managed_save(here->def->name)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain '%s' has a managed save image here",
             here->def->name);
        rv_qemu_domain_free(def);
        return NULL;
    }
    /* Non-shared disks: exported by this QEMU's NBD server on disks_port,
     * else on another port of the range. */
    rv_qemu_migstore *ms = NULL;
    if (flags & MIGRATE_NON_SHARED) {
        const rv_typed_param *dp = rv_tune_param_find(params, n, "disks_port");
        int nbd_port = dp && dp->value.type == RV_TYPED_PARAM_INT ? dp->value.rv_typed_param_value_u.i : 0;
        if (dp && (dp->value.type != RV_TYPED_PARAM_INT || nbd_port < 0 || nbd_port > 65535)) {
            rv_qemu_domain_free(def);
            fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s", "bad disks_port");
            return NULL;
        }
        /* (the migration's port is nobody's yet: skipped by hand) */
        for (int tries = 0; !dp && tries < 2 && (!nbd_port || nbd_port == port); tries++)
            nbd_port = pick_port();
        if (!nbd_port || nbd_port == port) {
            rv_qemu_domain_free(def);
            fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                 "no free port for the disks' NBD server");
            return NULL;
        }
        if (!(ms = rv_qemu_migstore_new_dest(def, flags, params, n, nbd_port, err))) {
            rv_qemu_domain_free(def);
            return NULL;
        }
    }
    qemu_dom *d;
    rv_deferred *reply = rv_qemu_take_live_deferred(def, &d, err);
    if (!reply) {
        rv_qemu_migstore_free(ms);
        return NULL;
    }
    d->migstore = ms;
    d->migcaps = *caps;
    rv_qemu_postcopy_begin(d, flags, false);
    d->migrate_port = port;
    *out = d;
    return reply;
}

static void exported(qemu_dom *d, const rv_err *err)
{
    if (d->starting && err)
        rv_qemu_start_failed(d, err);
    else if (d->starting)
        rv_qemu_start_done(d);
}

static void on_incoming_listening(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->starting)
        return;
    if (err) {
        rv_err e = { 0 };
        if (d->migrate_tunnel)
            rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: QEMU cannot take the tunnelled migration: %s",
                       err->message ? err->message : "");
        else
            rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: QEMU cannot listen for the migration on port %d: %s",
                       d->migrate_port, err->message ? err->message : "");
        rv_qemu_start_failed(d, &e);
        rv_err_clear(&e);
        return;
    }
    if (d->migstore)
        rv_qemu_migstore_export(d, exported);
    else
        rv_qemu_start_done(d);
}

/* QEMU listens once it has the migration's capabilities, parameters and
 * TLS (set: why not). */
static void listen_incoming(qemu_dom *d, const rv_err *set)
{
    rv_err err = { 0 };
    if (!d->starting)
        return;
    if (set) {
        rv_qemu_start_failed(d, set);
        return;
    }
    char uri[64];
    snprintf(uri, sizeof(uri), "tcp:0.0.0.0:%d", d->migrate_port);
    /* (tunnelled: the stream's pipe, passed first; qemu_migrate_tunnel.c) */
    if (d->migrate_tunnel && rv_qemu_migtunnel_pass_in(d, uri, sizeof(uri), &err) < 0) {
        rv_qemu_start_failed(d, &err);
        rv_err_clear(&err);
        return;
    }
    json_object *args = json_object_new_object();
    if (!args || json_object_object_add(args, "uri", json_object_new_string(uri)) < 0) {
        json_object_put(args);
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    } else {
        rv_qemu_migrate_in_begin(d);
        rv_qmp_command(d->qmp, "migrate-incoming", args, 0, on_incoming_listening, d, &err);
    }
    if (rv_err_is_set(&err))
        rv_qemu_start_failed(d, &err);
    rv_err_clear(&err);
}

void rv_qemu_migrate_incoming(qemu_dom *d)
{
    migration_caps(d, true);
    rv_qemu_migcaps_apply(d, true, listen_incoming);
}


static void finish_fail(qemu_dom *d, finish_op *op, const rv_err *why)
{
    RV_WARN("domain '%s': incoming migration failed: %s", d->live ? d->live->name : "?",
            why->message ? why->message : "");
    d->migrate_in = false;
    if (rv_qemu_dom_active(d))
        rv_qemu_stop_process(d, RV_DOMAIN_SHUTOFF_FAILED, RV_EVENT_STOPPED_FAILED);
    rv_deferred_finish(op->reply, why);
    free(op);
}


/* The incoming job completed, with the figures of FINISH3's cookie. */
static void finish_recorded(qemu_dom *d, const finish_op *op)
{
    const rv_domain_migrate_finish3_params_args *a = rv_deferred_args(op->reply);
    rv_qemu_migrate_in_done(d, a->cookie_in.cookie_in_val, a->cookie_in.cookie_in_len);
}

/* FINISH3's PERSIST_DEST definition written (or not: why). */
static void on_persisted(void *data, const rv_err *why)
{
    finish_op *op = data;
    rv_err e = { 0 };
    if (why) {
        /* libvirt's word: the guest runs here, but is not persistent. */
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_MIGRATE_PERSIST_FAILED,
                   "migration successfully aborted: the definition could not be kept: %s",
                   why->message ? why->message : "");
    } else {
        rv_crash_point("migrate-finish", 3);     /* (durable, not answered) */
        rv_domain_migrate_finish3_params_ret *r = rv_deferred_ret(op->reply);
        rv_qemu_put_dom(op->dom, &r->dom, &e);
    }
    rv_deferred_finish(op->reply, rv_err_is_set(&e) ? &e : NULL);
    rv_err_clear(&e);
    free(op);
}

static void finish_running(qemu_dom *d, void *opaque, const rv_err *err);

static void on_finish_cont(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    finish_op *op = d->migrate_finish;
    d->migrate_finish = NULL;
    if (!op)
        return;
    if (d->qmp != qmp || err) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: resume failed: %s",
                   err && err->message ? err->message : "the domain went away");
        finish_fail(d, op, &e);
        rv_err_clear(&e);
        return;
    }
    /* (post-copy: running now, the rest once the stream is complete) */
    if (!rv_qemu_postcopy_finish(d, finish_running, op))
        finish_running(d, op, NULL);
}

static void finish_running(qemu_dom *d, void *opaque, const rv_err *err)
{
    finish_op *op = opaque;
    if (err) {
        /* (post-copy broke: the guest's memory is split, nothing can be
         * undone here; the QEMU is left for the administrator) */
        rv_deferred_finish(op->reply, err);
        free(op);
        return;
    }
    rv_qemu_postcopy_gone(d);   /* (a POSTCOPY migration that completed pre-copy) */
    d->migrate_in = false;
    d->migrate_port = 0;
    rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_MIGRATED, RV_EVENT_RESUMED,
                          RV_EVENT_RESUMED_MIGRATED);
    finish_recorded(d, op);
    rv_err e = { 0 };
    if (rv_qemu_save_status(d, &e) < 0)
        RV_WARN("domain '%s': %s", d->live->name, e.message);
    rv_err_clear(&e);
    rv_crash_point("migrate-finish", 2);     /* (it runs here) */
    rv_domain_migrate_finish3_params_ret *r = rv_deferred_ret(op->reply);
    if (op->flags & MIGRATE_PERSIST_DEST) {
        /* The definition is kept: answered once it is durable. */
        const rv_domain_migrate_finish3_params_args *a = rv_deferred_args(op->reply);
        rv_qemu_domain_def *def = persist_def(a->params.params_val, a->params.params_len, d->live, &e);
        op->dom = d;
        if (def && rv_qemu_def_write_then(d, def, on_persisted, op, &e) == 0)
            return;
        if (!rv_err_is_set(&e))
            rv_err_set(&e, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        on_persisted(op, &e);
        rv_err_clear(&e);
        return;
    }
    if (rv_qemu_put_dom(d, &r->dom, &e) < 0) {
        rv_deferred_finish(op->reply, &e);
        rv_err_clear(&e);
    } else {
        rv_deferred_finish(op->reply, NULL);
    }
    free(op);
}

static void on_stream_in(qemu_dom *d, const rv_err *err)
{
    finish_op *op = d->migrate_finish;
    if (!op)
        return;
    if (err) {
        d->migrate_finish = NULL;
        finish_fail(d, op, err);
        return;
    }
    RV_INFO("domain '%s': incoming migration completed", d->live->name);
    rv_crash_point("migrate-finish", 1);
    rv_qemu_migstore_stop_server(d);
    rv_qemu_migcaps_end(d);    /* (the disks are all here too) */
    if (op->flags & MIGRATE_PAUSED) {
        /* It stays paused, as asked; it is here now. */
        d->migrate_in = false;
        d->migrate_port = 0;
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_USER, RV_EVENT_SUSPENDED,
                              RV_EVENT_SUSPENDED_PAUSED);
        finish_recorded(d, op);
        d->migrate_finish = NULL;
        rv_err e = { 0 };
        rv_domain_migrate_finish3_params_ret *r = rv_deferred_ret(op->reply);
        rv_deferred_finish(op->reply, rv_qemu_put_dom(d, &r->dom, &e) < 0 ? &e : NULL);
        rv_err_clear(&e);
        free(op);
        return;
    }
    rv_err e = { 0 };
    if (!d->qmp || rv_qmp_command(d->qmp, "cont", NULL, 0, on_finish_cont, d, &e) < 0) {
        d->migrate_finish = NULL;
        if (!rv_err_is_set(&e))
            rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: no QEMU monitor");
        finish_fail(d, op, &e);
    }
    rv_err_clear(&e);
}

static rv_nonnull_domain *finish_ret_dom(void *ret)
{
    return &((rv_domain_migrate_finish3_params_ret *)ret)->dom;
}

int rv_qemu_domain_migrate_finish3_params(rv_driver_conn *c,
                                          const rv_domain_migrate_finish3_params_args *args,
                                          rv_domain_migrate_finish3_params_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    if (check_flags(args->flags, "qemuDomainMigrateFinish3Params", err) < 0)
        return -1;
    const char *xml = param_string(args->params.params_val, args->params.params_len, PARAM_DEST_XML);
    /* (the step with plain arguments names the domain only: its live
     * definition here is the one PREPARE3 took) */
    const char *dname = param_string(args->params.params_val, args->params.params_len,
                                     "destination_name");
    if (!xml && !dname)
        return fail(err, RV_ERR_INVALID_ARG, "%s", "invalid argument: no domain XML given");
    if (args->flags & MIGRATE_OFFLINE) {
        /* (PREPARE3's XML: the one it checked; the client's, if given) */
        char *prepared = dname ? rv_qemu_migrate_offline_take(dname) : NULL;
        int rc = args->cancelled ? fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                                        "migration was cancelled")
                 : xml || prepared ? rv_qemu_define(xml ? xml : prepared, finish_ret_dom, err)
                                   : fail(err, RV_ERR_NO_DOMAIN, "Domain not found: %s",
                                          "no offline migration of this domain prepared");
        free(prepared);
        return rc;
    }
    qemu_dom *d;
    if (xml) {
        rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), err);
        if (!def)
            return -1;
        d = rv_qemu_find_uuid(def->uuid);
        rv_qemu_domain_free(def);
    } else {
        d = rv_qemu_find_name(dname);
    }
    if (d)
        d->migrate_in_conn = NULL;      /* (this call finishes or cancels it) */
    if (!d || !d->migrate_in || !rv_qemu_dom_active(d))
        return fail(err, RV_ERR_NO_DOMAIN, "Domain not found: %s",
                    "no incoming migration of this domain");
    if (d->migrate_finish)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: %s", "its migration is finishing already");
    if (!args->cancelled && (args->flags & MIGRATE_PERSIST_DEST)) {
        rv_qemu_domain_def *pd = persist_def(args->params.params_val, args->params.params_len,
                                             d->live, err);
        if (!pd) {
            /* (PREPARE3 checked it; a FINISH3 with another one fails as
             * cancelled, so that the source keeps the guest) */
            d->migrate_in = false;
            rv_qemu_stop_process(d, RV_DOMAIN_SHUTOFF_FAILED, RV_EVENT_STOPPED_FAILED);
            return -1;
        }
        rv_qemu_domain_free(pd);
    }
    if (args->cancelled) {
        /* The source keeps the guest: the waiting QEMU goes. */
        RV_INFO("domain '%s': incoming migration cancelled", d->live->name);
        d->migrate_in = false;
        rv_qemu_stop_process(d, RV_DOMAIN_SHUTOFF_FAILED, RV_EVENT_STOPPED_FAILED);
        return fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s", "migration was cancelled");
    }
    finish_op *op = calloc(1, sizeof(*op));
    if (!op)
        return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    if (!(op->reply = rv_driver_defer(err))) {
        free(op);
        return -1;
    }
    op->flags = args->flags;
    d->migrate_finish = op;
    rv_qemu_migration_wait(d, on_stream_in);
    return RV_DEFERRED;
}
