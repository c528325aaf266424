/* VIR_MIGRATE_ABORT_ON_ERROR (`virsh migrate --abort-on-error`): an
 * outgoing migration whose guest QEMU pauses for a disk I/O error (a disk
 * with error_policy='stop' or 'enospace': paused (I/O error)) is
 * cancelled, as libvirtd cancels it, and fails with libvirtd's words;
 * the guest stays here, paused (I/O error): CONFIRM3 (cancelled) resumes
 * only a guest the migration stopped.  Without the flag the migration
 * goes on (and the destination's "cont" retries the I/O there).  Checked
 * when the guest pauses during the stream, and when the stream begins
 * (a guest paused so already).  After a post-copy switch nothing is
 * cancelled: the guest can no longer run here. */
#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("qemu.migrate");

#define ABORT_ON_ERROR (1u << 12)

void rv_qemu_migrate_io_error(qemu_dom *d)
{
    rv_qemu_jobinfo *j = d->job_now;
    if (!d->job_busy || !d->jobs || d->jobs->kind != QJOB_MIGRATE_OUT ||
        !(d->jobs->flags & ABORT_ON_ERROR) || d->state != RV_DOMAIN_PAUSED ||
        d->reason != RV_DOMAIN_PAUSED_IOERROR || !j || !j->abort || j->aborted || j->io_error ||
        rv_qemu_postcopy_switched(d))
        return;
    RV_WARN("domain '%s': paused by an I/O error: its migration is cancelled (abort-on-error)",
            d->live ? d->live->name : "");
    j->io_error = true;
    rv_err e = { 0 };
    if (j->abort(d, &e) < 0) {
        RV_WARN("domain '%s': the migration could not be cancelled: %s", d->live ? d->live->name : "",
                e.message ? e.message : "");
        j->io_error = false;
    }
    rv_err_clear(&e);
}

bool rv_qemu_migrate_io_error_end(qemu_dom *d, rv_err *err)
{
    rv_qemu_jobinfo *j = d->job_now;
    if (!j || !j->io_error)
        return false;
    rv_err_clear(err);
    /* (libvirtd 9.0's words) */
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: job '%s' failed due to I/O error",
               j->name);
    return true;
}
