/* What a migration leaves when one of its daemons or its client goes in
 * the middle (docs/qemu-driver.md, "Failures and restarts"):
 *   - a source QEMU found at start-up with its stream complete
 *     (postmigrate) is resumed when its disks can be taken back: the
 *     destination's QEMU (with late-block-activate, remvirtd's and
 *     libvirtd's) takes the images' locks only when it lets the guest
 *     run, so a "cont" here that QEMU grants means the guest runs nowhere
 *     else, and from then on the destination's "cont" is the one QEMU
 *     refuses.  A guest without such a disk stays paused (migration), for
 *     the administrator, as before;
 *   - an incoming migration whose PREPARE3 connection closes before
 *     FINISH3 (a peer-to-peer source that died) has its waiting QEMU
 *     destroyed, as libvirtd destroys it with that connection. */
#include <stdlib.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("qemu.migrate");

bool rv_qemu_migrate_may_reclaim(const qemu_dom *d)
{
    const rv_qemu_domain_def *def = d->live;
    for (size_t i = 0; def && i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        if (disk->device == RV_QEMU_DISK_DISK && disk->source && !disk->readonly)
            return true;
    }
    return false;
}

static void incoming_orphaned(void *obj, void *conn)
{
    qemu_dom *d = obj;
    if (d->migrate_in_conn != conn)
        return;
    d->migrate_in_conn = NULL;
    /* (FINISH3 under way, or done: the guest may be running here) */
    if (d->migrate_finish || !rv_qemu_dom_active(d) || (!d->migrate_in && !d->starting))
        return;
    RV_WARN("domain '%s': the connection that prepared its incoming migration closed before "
            "FINISH3: its QEMU goes", d->live ? d->live->name : "?");
    rv_qemu_job_add(d, QJOB_DESTROY, 0, NULL, NULL);
}

void rv_qemu_migrate_conn_closed(const struct rv_driver_conn *c)
{
    rv_dom_list_each(&rv_qemu.doms, incoming_orphaned, (void *)c);
}

/* ---- an outgoing stream that sends nothing ----
 * A cut link stalls QEMU's stream without an error until TCP gives up
 * (about 15 minutes); the client's keepalive closes its connection to the
 * destination but does not end PERFORM3 here.  So PERFORM3 watches what
 * QEMU has sent (its job record, polled every 50 ms) once a second, and
 * when nothing went for qemu_migration_stall_timeout seconds it cancels
 * the stream: QEMU runs the guest on here, and PERFORM3 fails. */
struct rv_qemu_migstall {
    ev_timer timer;
    qemu_dom *dom;
    unsigned long long sent;
    int quiet;                  /* seconds without progress */
    bool fired;
};

static void on_stall_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    rv_qemu_migstall *s = (rv_qemu_migstall *)t;
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(s->dom);
    unsigned long long sent = j ? j->mem_processed + j->disk_processed : 0;
    if (sent != s->sent) {
        s->sent = sent;
        s->quiet = 0;
        return;
    }
    if (++s->quiet < rv_qemu.migration_stall_timeout)
        return;
    ev_timer_stop(rv_qemu.loop, &s->timer);
    s->fired = true;
    RV_WARN("domain '%s': its migration sent nothing for %d s: cancelled", s->dom->live->name,
            s->quiet);
    rv_qemu_migration_cancel(s->dom, NULL);
}

void rv_qemu_migrate_stall_watch(qemu_dom *d)
{
    if (rv_qemu.migration_stall_timeout <= 0 || d->migstall)
        return;
    rv_qemu_migstall *s = calloc(1, sizeof(*s));
    if (!s)
        return;     /* (unwatched: the stream ends as TCP decides) */
    s->dom = d;
    ev_timer_init(&s->timer, on_stall_tick, 1., 1.);
    ev_timer_start(rv_qemu.loop, &s->timer);
    d->migstall = s;
}

bool rv_qemu_migrate_stall_end(qemu_dom *d, rv_err *err)
{
    rv_qemu_migstall *s = d->migstall;
    if (!s)
        return false;
    d->migstall = NULL;
    ev_timer_stop(rv_qemu.loop, &s->timer);
    bool fired = s->fired;
    if (fired && err)
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                   "operation failed: migration stalled: nothing was sent for %d s "
                   "(qemu_migration_stall_timeout)", s->quiet);
    free(s);
    return fired;
}
