/* A slot's call that waits for QMP answers from a running domain (the
 * pinning and block I/O tuning calls): the common part of its request
 * (qemu_driver.h), a disk's entry in QEMU's block answers, and a command
 * whose answer nobody waits for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.live");

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

json_object *rv_qemu_block_entry(json_object *list, const char *target)
{
    char drive[80], backend[96];
    snprintf(drive, sizeof(drive), "drive-%s", target);
    snprintf(backend, sizeof(backend), "/machine/peripheral/%s/virtio-backend", target);
    size_t n = list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(list, i), *v;
        const char *dev = json_object_object_get_ex(e, "device", &v) ? json_object_get_string(v) : "";
        const char *qdev = json_object_object_get_ex(e, "qdev", &v) ? json_object_get_string(v) : "";
        if (strcmp(dev, drive) == 0 || strcmp(qdev, target) == 0 || strcmp(qdev, backend) == 0)
            return e;
    }
    return NULL;
}

static void ignore_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    if (err)
        RV_DEBUG("%s: %s", (const char *)opaque, err->message ? err->message : "");
}

void rv_qemu_send_quietly(rv_qmp *qmp, const char *command, const char *key, const char *value)
{
    json_object *args = key ? json_object_new_object() : NULL;     /* (no key: no arguments) */
    if (args)
        json_object_object_add(args, key, json_object_new_string(value));
    rv_err ignored = { 0 };
    /* command: a literal, alive for the answer's log line */
    if (!qmp || rv_qmp_command(qmp, command, args, 0, ignore_reply, (void *)command, &ignored) < 0)
        rv_err_clear(&ignored);
}

void rv_qemu_set_link_quietly(rv_qmp *qmp, const char *name, bool up)
{
    json_object *args = json_object_new_object();
    json_object_object_add(args, "name", json_object_new_string(name));
    json_object_object_add(args, "up", json_object_new_boolean(up));
    rv_err ignored = { 0 };
    if (!qmp || rv_qmp_command(qmp, "set_link", args, 0, ignore_reply, (void *)"set_link", &ignored) < 0)
        rv_err_clear(&ignored);
}

void rv_qemu_finish_qmp_error(rv_deferred *reply, const char *command, const rv_err *qerr)
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
        rv_qemu_finish_qmp_error(req->reply, req->command, err);
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
