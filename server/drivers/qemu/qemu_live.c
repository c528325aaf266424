/* A slot's call that waits for QMP answers from a running domain (the
 * pinning and block I/O tuning calls): the common part of its request
 * (qemu_driver.h). */
#include <stdio.h>
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

/* QMP's error for command as libvirtd words it ("internal error: unable to
 * execute QEMU command 'X': DESC"); other errors (the monitor closed, a
 * timeout) as they are. */
static void finish_qmp_error(rv_deferred *reply, const char *command, const rv_err *qerr)
{
    const char *msg = qerr->message ? qerr->message : "";
    char prefix[128];
    snprintf(prefix, sizeof prefix, "QEMU command '%s' failed: ", command);
    if (qerr->code != RV_ERR_OPERATION_FAILED || strncmp(msg, prefix, strlen(prefix)) != 0) {
        rv_deferred_finish(reply, qerr);
        return;
    }
    rv_qemu_finish_error(reply, RV_ERR_INTERNAL_ERROR,
                         "internal error: unable to execute QEMU command '%s': %s", command,
                         msg + strlen(prefix));
}

static void live_void_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    rv_qemu_live_req *req = opaque;
    if (err && req->command)
        finish_qmp_error(req->reply, req->command, err);
    else if (rv_qemu_live_req_alive(req, qmp, err))
        rv_deferred_finish(req->reply, NULL);
    free(req->name);
    free(req);
}

int rv_qemu_live_void(qemu_dom *d, const char *command, json_object *args, rv_err *err)
{
    rv_qemu_live_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req) {
        json_object_put(args);
        return -1;
    }
    req->command = command;
    if (!rv_qemu_send_for(d, req->reply, command, args, live_void_done, req)) {
        free(req->name);
        free(req);
    }
    return RV_DEFERRED;
}
