/* A slot's call that waits for QMP answers from a running domain (the
 * pinning and block I/O tuning calls): the common part of its request
 * (qemu_driver.h). */
#include <stdlib.h>
#include <string.h>

#include "server/drivers/qemu/qemu_driver.h"

void *rv_qemu_live_req_new(size_t size, qemu_dom *d, rv_err *err)
{
    rv_qemu_live_req *r = calloc(1, size);
    if (!r || !(r->name = strdup(d->live->name))) {
        free(r);
        rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    r->qmp = d->qmp;
    r->pid = d->pid;
    if (!(r->reply = rv_driver_defer(err))) {
        free(r->name);
        free(r);
        return NULL;
    }
    return r;
}

bool rv_qemu_live_req_alive(const rv_qemu_live_req *r, rv_qmp *qmp, const rv_err *qerr)
{
    qemu_dom *d = rv_qemu_find_name(r->name);
    if (qerr) {
        rv_deferred_finish(r->reply, qerr);
        return false;
    }
    if (!d || d->qmp != qmp || !d->live || d->pid != r->pid) {
        rv_qemu_finish_error(r->reply, RV_ERR_OPERATION_FAILED,
                             "operation failed: the domain stopped");
        return false;
    }
    return true;
}
