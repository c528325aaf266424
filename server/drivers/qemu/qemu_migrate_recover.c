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
