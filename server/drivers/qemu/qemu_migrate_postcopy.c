/* Post-copy live migration (VIR_MIGRATE_POSTCOPY; docs/qemu-driver.md,
 * "Post-copy"), the way libvirtd 9.0 runs it (observed side by side):
 *   PREPARE3   destination: QEMU's postcopy-ram capability on
 *   PERFORM3   source: postcopy-ram on, max-postcopy-bandwidth (the
 *              bandwidth.postcopy parameter); answered when QEMU has
 *              switched to post-copy (migrate-postcopy, qemu_migtune.c):
 *              the source is then paused (post-copy): Suspended Migrated,
 *              Suspended Post-copy; its job record goes on (not abortable)
 *   FINISH3    destination: at the switch, cont: running (post-copy),
 *              Resumed Post-copy; answered once the stream is complete:
 *              running (migrated), Resumed Migrated
 *   CONFIRM3   source: waits for QEMU's stream to complete, then stops
 *              the source's QEMU as after a pre-copy migration.
 * Peer-to-peer (qemu_migrate_p2p.c) runs the same steps: the thread's
 * FINISH3 follows PERFORM3's end at the switch, and the client's call is
 * answered after CONFIRM3 (with FINISH3's error when it failed).
 * After the switch the guest's memory is split between the two QEMUs: a
 * failure (either end gone, or the source's remvirtd restarted) leaves
 * the source paused (post-copy failed), never running on stale memory,
 * its job and lock kept until its QEMU goes.
 * Also here, for virsh's client-side helpers: MIGRATION_ITERATION events
 * (--postcopy-after-precopy) and SUSPEND during an outgoing migration
 * (--timeout). */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("qemu.migrate");

#define fail(err, ...) rv_err_fail(err, RV_FROM_QEMU, __VA_ARGS__)

enum {
    PC_ALLOWED,     /* started with VIR_MIGRATE_POSTCOPY, not switched */
    PC_ACTIVE,      /* QEMU says postcopy-active: waits end at the switch */
    PC_DRAINING,    /* FINISH3 / CONFIRM3 waiting for the stream's end */
    PC_FAILED,      /* the stream broke after the switch */
};

struct rv_qemu_postcopy {
    int state;
    bool out;                   /* the source's */
    /* CONFIRM3 waiting (source) */
    rv_deferred *confirm;
    unsigned int confirm_flags;
    /* FINISH3's rest, after the stream is in (destination) */
    void (*drained)(qemu_dom *d, void *op, const rv_err *err);
    void *op;
};

int rv_qemu_postcopy_check_flags(unsigned int flags, rv_err *err)
{
    if (flags & RV_QEMU_MIGRATE_POSTCOPY_RESUME)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: %s",
                    "remvirtd cannot resume a failed post-copy migration (VIR_MIGRATE_POSTCOPY_RESUME)");
    /* (peer-to-peer: its thread plays the client's steps, the same here) */
    if ((flags & RV_QEMU_MIGRATE_POSTCOPY) &&
        (flags & (RV_QEMU_MIGRATE_TUNNELLED | RV_QEMU_MIGRATE_NON_SHARED_DISK |
                  RV_QEMU_MIGRATE_NON_SHARED_INC | RV_QEMU_MIGRATE_OFFLINE)))
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: %s",
                    "remvirtd migrates post-copy only live, not tunnelled, with shared storage");
    return 0;
}

int rv_qemu_postcopy_refuse_resume(const rv_nonnull_domain *dom, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(dom, err);
    if (!d)
        return -1;
    /* (libvirtd's answer when there is nothing to resume) */
    if (!d->postcopy || d->postcopy->state != PC_FAILED)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain '%s' is not being migrated",
                    rv_qemu_dom_def(d)->name);
    return rv_qemu_postcopy_check_flags(RV_QEMU_MIGRATE_POSTCOPY_RESUME, err);
}

void rv_qemu_postcopy_begin(qemu_dom *d, unsigned int flags, bool out)
{
    rv_qemu_postcopy_gone(d);
    if (!(flags & RV_QEMU_MIGRATE_POSTCOPY))
        return;
    d->postcopy = calloc(1, sizeof(*d->postcopy));
    if (d->postcopy) {
        d->postcopy->state = PC_ALLOWED;
        d->postcopy->out = out;
    } else {
        RV_WARN("domain '%s': out of memory: migrated pre-copy only", d->live->name);
    }
}

bool rv_qemu_postcopy_allowed(const qemu_dom *d)
{
    return d->postcopy != NULL;
}

bool rv_qemu_postcopy_switched(const qemu_dom *d)
{
    return d->postcopy && d->postcopy->state != PC_ALLOWED;
}

bool rv_qemu_postcopy_failed(const qemu_dom *d)
{
    return d->postcopy && d->postcopy->out && d->postcopy->state == PC_FAILED;
}

bool rv_qemu_postcopy_keeps_job(qemu_dom *d, const rv_err *err)
{
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(d);
    if (err || !j || !rv_qemu_postcopy_switched(d))
        return false;
    /* (its figures go on from CONFIRM3's polls; libvirtd's words) */
    j->abort = NULL;
    j->no_abort = "cannot abort migration in post-copy mode";
    return true;
}

static void on_set_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret, (void)opaque;
    if (err)
        RV_WARN("max-postcopy-bandwidth: %s", err->message ? err->message : "");
}

void rv_qemu_postcopy_out_params(qemu_dom *d, const rv_typed_param *params, u_int n)
{
    const rv_typed_param *bw = rv_tune_param_find(params, n, "bandwidth.postcopy");
    if (!d->postcopy || !bw || bw->value.type != RV_TYPED_PARAM_ULLONG)
        return;
    json_object *args = json_object_new_object();
    rv_err e = { 0 };
    unsigned long long mib = bw->value.rv_typed_param_value_u.ul;
    if (mib > UINT64_MAX / (1024 * 1024) / 2)
        mib = UINT64_MAX / (1024 * 1024) / 2;
    if (!args || json_object_object_add(args, "max-postcopy-bandwidth",
                                        json_object_new_int64((int64_t)(mib * 1024 * 1024))) < 0 ||
        rv_qmp_command(d->qmp, "migrate-set-parameters", args, 0, on_set_reply, NULL, &e) < 0)
        RV_WARN("domain '%s': max-postcopy-bandwidth: %s", d->live->name, e.message ? e.message : "");
    rv_err_clear(&e);
}

/* A new reason within the same state, with its event (libvirtd sends
 * one although the state stays). */
static void reason_event(qemu_dom *d, int reason, int event, int detail)
{
    d->reason = reason;
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_lifecycle_event(&rv_qemu_driver, &ref, event, detail);
    free(ref.name);
}

/* The stream broke after the switch. */
static void failed(qemu_dom *d)
{
    d->postcopy->state = PC_FAILED;
    if (d->postcopy->out && d->state == RV_DOMAIN_PAUSED && d->reason != RV_DOMAIN_PAUSED_POSTCOPY_FAILED) {
        RV_WARN("domain '%s': post-copy migration failed: it stays paused here", d->live->name);
        reason_event(d, RV_DOMAIN_PAUSED_POSTCOPY_FAILED, RV_EVENT_SUSPENDED,
                     RV_EVENT_SUSPENDED_POSTCOPY_FAILED);
    }
}

void rv_qemu_postcopy_event(qemu_dom *d, json_object *data)
{
    json_object *st = NULL;
    if (!d->postcopy || !data || !json_object_object_get_ex(data, "status", &st))
        return;
    const char *s = json_object_get_string(st);
    if (strcmp(s, "postcopy-active") == 0 && d->postcopy->state == PC_ALLOWED)
        d->postcopy->state = PC_ACTIVE;
    else if ((strcmp(s, "postcopy-paused") == 0 || strcmp(s, "failed") == 0) &&
             d->postcopy->state != PC_ALLOWED)
        failed(d);
}

bool rv_qemu_postcopy_stop(qemu_dom *d)
{
    if (!d->postcopy || !d->postcopy->out || d->postcopy->state == PC_ALLOWED ||
        d->state != RV_DOMAIN_RUNNING)
        return false;
    /* (libvirtd: Suspended Migrated for the stop, then Suspended Post-copy) */
    rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_MIGRATION, RV_EVENT_SUSPENDED,
                          RV_EVENT_SUSPENDED_MIGRATED);
    reason_event(d, RV_DOMAIN_PAUSED_POSTCOPY, RV_EVENT_SUSPENDED, RV_EVENT_SUSPENDED_POSTCOPY);
    return true;
}

bool rv_qemu_postcopy_resume(qemu_dom *d)
{
    if (!d->postcopy || d->postcopy->out || d->postcopy->state == PC_ALLOWED)
        return false;
    if (d->state != RV_DOMAIN_RUNNING)
        rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_POSTCOPY, RV_EVENT_RESUMED,
                              RV_EVENT_RESUMED_POSTCOPY);
    return true;
}

int rv_qemu_postcopy_status(qemu_dom *d, const char *s)
{
    if (!d->postcopy)
        return 0;
    if (strcmp(s, "postcopy-active") == 0 && d->postcopy->state <= PC_ACTIVE) {
        d->postcopy->state = PC_ACTIVE;
        return 1;   /* (PERFORM3 and FINISH3's first wait end at the switch) */
    }
    if (strcmp(s, "postcopy-paused") == 0 || strcmp(s, "postcopy-recover") == 0) {
        failed(d);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the end of the stream */

static void confirm_drained(qemu_dom *d, const rv_err *err)
{
    rv_qemu_postcopy *pc = d->postcopy;
    rv_deferred *reply = pc->confirm;
    unsigned int flags = pc->confirm_flags;
    pc->confirm = NULL;
    if (err) {
        failed(d);
        rv_deferred_finish(reply, err);
        return;
    }
    rv_qemu_jobinfo_end(d, true, true);
    rv_qemu_postcopy_gone(d);
    rv_err e = { 0 };
    if (rv_qemu_migrate_confirm(d, flags, false, reply, NULL, &e) < 0)
        rv_deferred_finish(reply, &e);
    rv_err_clear(&e);
}

int rv_qemu_postcopy_confirm(qemu_dom *d, unsigned int flags, bool cancelled, rv_deferred *reply,
                             const rv_err *why)
{
    rv_qemu_postcopy *pc = d->postcopy;
    if (!pc || pc->state == PC_ALLOWED || !pc->out)
        return 0;
    d->migration_owner = NULL;
    if (cancelled || pc->state == PC_FAILED) {
        /* The destination has run the guest: its memory is no longer
         * whole here.  Paused (post-copy failed) for the administrator,
         * as libvirtd leaves it. */
        failed(d);
        rv_deferred_finish(reply, why);
        return RV_DEFERRED;
    }
    pc->state = PC_DRAINING;
    pc->confirm = reply;
    pc->confirm_flags = flags;
    rv_qemu_migration_wait(d, confirm_drained);
    return RV_DEFERRED;
}

static void finish_drained(qemu_dom *d, const rv_err *err)
{
    rv_qemu_postcopy *pc = d->postcopy;
    if (!pc || !pc->drained)
        return;
    void (*drained)(qemu_dom *, void *, const rv_err *) = pc->drained;
    void *op = pc->op;
    pc->drained = NULL;
    d->migrate_finish = NULL;
    if (err)
        failed(d);
    else if (d->state == RV_DOMAIN_RUNNING)
        /* (all of the guest is here: running (migrated), Resumed Migrated, as libvirtd) */
        reason_event(d, RV_DOMAIN_RUNNING_MIGRATED, RV_EVENT_RESUMED, RV_EVENT_RESUMED_MIGRATED);
    rv_qemu_postcopy_gone(d);
    drained(d, op, err);
}

bool rv_qemu_postcopy_finish(qemu_dom *d, void (*drained)(qemu_dom *d, void *op, const rv_err *err),
                             void *op)
{
    rv_qemu_postcopy *pc = d->postcopy;
    if (!pc || pc->out || pc->state != PC_ACTIVE)
        return false;
    rv_qemu_postcopy_resume(d);
    pc->state = PC_DRAINING;
    pc->drained = drained;
    pc->op = op;
    /* (held there meanwhile: the QEMU's end answers it, rv_qemu_migrate_gone) */
    d->migrate_finish = op;
    rv_qemu_migration_wait(d, finish_drained);
    return true;
}

void rv_qemu_postcopy_gone(qemu_dom *d)
{
    rv_qemu_postcopy *pc = d->postcopy;
    if (!pc)
        return;
    d->postcopy = NULL;
    if (pc->out && pc->state == PC_FAILED)
        rv_qemu_jobinfo_end(d, false, false);
    if (pc->confirm) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   "the domain's QEMU went away during the post-copy migration");
        rv_deferred_finish(pc->confirm, &e);
        rv_err_clear(&e);
    }
    free(pc);
}

/* ---------------------------------------------------------------- suspend during a migration */

static void on_stopped(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    rv_err e = { 0 };
    if (err)
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   err->message ? err->message : "QEMU refused to stop");
    rv_deferred_finish(opaque, err ? &e : NULL);
    rv_err_clear(&e);
}

bool rv_qemu_migrate_suspend(qemu_dom *d, rv_deferred *reply)
{
    /* (the job's own STOP handling says paused (migration), Suspended
     * Migrated, as libvirtd: qemu_process.c) */
    if (!d->job_busy || !d->jobs || d->jobs->kind != QJOB_MIGRATE_OUT || !d->qmp)
        return false;
    if (d->state == RV_DOMAIN_PAUSED) {
        rv_deferred_finish(reply, NULL);
        return true;
    }
    rv_err e = { 0 };
    if (rv_qmp_command(d->qmp, "stop", NULL, 0, on_stopped, reply, &e) < 0) {
        rv_deferred_finish(reply, &e);
        rv_err_clear(&e);
    }
    return true;
}

/* ---------------------------------------------------------------- MIGRATION_ITERATION */

void rv_qemu_migrate_pass_event(qemu_dom *d, json_object *data)
{
    json_object *pass = NULL;
    if (!d->job_busy || !d->jobs || d->jobs->kind != QJOB_MIGRATE_OUT || !data ||
        !json_object_object_get_ex(data, "pass", &pass))
        return;
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_MIGRATION_ITERATION };
    ev.u.migration_iteration.iteration = json_object_get_int(pass);
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_dom_event(&rv_qemu_driver, &ref, &ev);
    free(ref.name);
}

/* ---------------------------------------------------------------- reattach */

static bool dom_has_qmp(const void *obj, const void *qmp)
{
    return ((const qemu_dom *)obj)->qmp == qmp;
}

static void on_cancel_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret, (void)opaque;
    if (err)
        RV_DEBUG("migrate_cancel at reattach: %s", err->message ? err->message : "");
}

static void on_reattach_status(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    bool reclaim = opaque != NULL;
    qemu_dom *d = rv_dom_list_find(&rv_qemu.doms, dom_has_qmp, qmp);
    json_object *st = NULL;
    const char *s = !err && json_object_object_get_ex(ret, "status", &st) ? json_object_get_string(st) : "";
    if (d && strncmp(s, "postcopy-", 9) == 0) {
        /* After the switch nothing is undone (a cancelled post-copy
         * stream would leave the guest whole nowhere): paused (post-copy
         * failed) for the administrator, as a failure after the switch;
         * QEMU's stream goes on by itself. */
        RV_WARN("domain '%s': its post-copy migration (%s) lost remvirtd's stop: it stays paused",
                d->live->name, s);
        bool event = d->state != RV_DOMAIN_PAUSED || d->reason != RV_DOMAIN_PAUSED_POSTCOPY_FAILED;
        d->state = RV_DOMAIN_PAUSED;
        if (event)
            reason_event(d, RV_DOMAIN_PAUSED_POSTCOPY_FAILED, RV_EVENT_SUSPENDED,
                         RV_EVENT_SUSPENDED_POSTCOPY_FAILED);
        rv_err e = { 0 };
        if (rv_qemu_save_status(d, &e) < 0)
            RV_WARN("domain '%s': %s", d->live->name, e.message ? e.message : "");
        rv_err_clear(&e);
        return;
    }
    rv_err e = { 0 };
    if (rv_qmp_command(qmp, "migrate_cancel", NULL, 0, on_cancel_reply, NULL, &e) < 0)
        RV_WARN("migrate_cancel at reattach: %s", e.message ? e.message : "");
    rv_err_clear(&e);
    /* (a completed pre-copy stream: the guest runs here again if QEMU can
     * take its disks back, qemu_migrate_recover.c) */
    if (d && reclaim)
        rv_qemu_job_add(d, QJOB_RESUME, QJOB_MIGRATE_IN, NULL, NULL);
}

int rv_qemu_migrate_reattach_cancel(rv_qmp *qmp, bool reclaim, rv_err *err)
{
    return rv_qmp_command(qmp, "query-migrate", NULL, 0, on_reattach_status,
                          reclaim ? (void *)qmp : NULL, err);
}
