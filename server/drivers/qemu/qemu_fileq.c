/* The definitions of networks, storage pools, secrets and network filters
 * are changed through one queue per family, off the loop: an operation
 * waits for the ones before it, then checks what it must against the
 * state as they left it (prepare), has the store helper (qemu_sync.c)
 * make its files durable, one step after the other, and changes memory
 * (commit) only once its commit step is on disk; then the call is
 * answered.  A step that fails before the commit leaves nothing changed
 * (the steps before a commit only add what nothing refers to yet); one
 * after it is logged and the operation stands.  Domain definitions have
 * their own queue per domain (qemu_defwrite.c). */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.fileq");

int rv_qemu_fileop_step(rv_qemu_fileop *op, char *path, char *text, bool commit)
{
    if (!path || op->nsteps == RV_QEMU_FILEOP_STEPS) {
        free(path);
        free(text);
        return -1;
    }
    op->step[op->nsteps].path = path;
    op->step[op->nsteps].text = text;
    if (commit)
        op->commit_step = op->nsteps;
    op->nsteps++;
    return 0;
}

static void op_end(rv_qemu_fileop *op, const rv_err *err)
{
    rv_qemu_fileq *q = op->queue;
    q->head = op->next;
    if (!q->head)
        q->tail = &q->head;
    if (!err && op->after)
        op->after(op);
    if (op->reply)
        rv_deferred_finish(op->reply, err);
    else if (err)
        RV_WARN("%s", err->message);
    for (int i = 0; i < op->nsteps; i++) {
        free(op->step[i].path);
        if (op->step[i].text)   /* (a secret's value, maybe) */
            memset(op->step[i].text, 0, strlen(op->step[i].text));
        free(op->step[i].text);
    }
    rv_qemu_sync_forget(&op->sync);
    op->destroy(op);
}

static void run(rv_qemu_fileq *q);

static void on_step(rv_qemu_sync *s, int error)
{
    rv_qemu_fileop *op = s->data;
    rv_qemu_fileq *q = op->queue;
    int at = op->at;
    if (error) {
        rv_err err = { 0 };
        rv_err_set(&err, q->from, RV_ERR_SYSTEM_ERROR, "cannot %s '%s': %s",
                   op->step[at].text ? "write" : "remove", op->step[at].path,
                   error > 0 ? strerror(error) : "the store helper died");
        if (at <= op->commit_step) {
            op_end(op, &err);
            rv_err_clear(&err);
            run(q);
            return;
        }
        RV_WARN("%s (the change stands)", err.message);
        rv_err_clear(&err);
    }
    if (at == op->commit_step)
        op->commit(op);
    op->at++;
    run(q);
}

/* Go on with the head: its next step, or its end, then the next op. */
static void run(rv_qemu_fileq *q)
{
    while (q->head) {
        rv_qemu_fileop *op = q->head;
        rv_err err = { 0 };
        if (op->at < 0) {
            op->at = 0;
            op->commit_step = -1;
            if (op->prepare(op, &err) < 0) {
                op_end(op, &err);
                rv_err_clear(&err);
                continue;
            }
            if (op->commit_step < 0)
                op->commit_step = op->nsteps - 1;
            if (op->nsteps == 0)
                op->commit(op);     /* (nothing on disk: memory only) */
        }
        if (op->at >= op->nsteps) {
            op_end(op, NULL);
            continue;
        }
        rv_crash_point(q->name, op->at + 1);
        op->sync.done = on_step;
        op->sync.data = op;
        const char *path = op->step[op->at].path, *text = op->step[op->at].text;
        int rc = text ? rv_qemu_sync_write(&op->sync, path, text, &err)
                      : rv_qemu_sync_remove(&op->sync, path, &err);
        if (rc == 0)
            return;
        if (op->at <= op->commit_step) {
            op_end(op, &err);
        } else {
            RV_WARN("%s (the change stands)", err.message);
            op->at++;
        }
        rv_err_clear(&err);
    }
}

void rv_qemu_fileq_add(rv_qemu_fileq *q, rv_qemu_fileop *op)
{
    if (!q->tail)
        q->tail = &q->head;
    op->queue = q;
    op->at = -1;
    op->next = NULL;
    *q->tail = op;
    q->tail = &op->next;
    if (q->head == op)
        run(q);
}

void *rv_qemu_fileop_new(const rv_qemu_fileq *q, size_t size,
                         void (*destroy)(rv_qemu_fileop *op), rv_err *err)
{
    rv_qemu_fileop *op = calloc(1, size);
    if (op)
        op->destroy = destroy;
    else
        rv_err_set(err, q->from, RV_ERR_NO_MEMORY, "out of memory");
    return op;
}

static void defop_destroy(rv_qemu_fileop *o)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    free(op->xml);
    if (op->def)
        op->free_def(op->def);
    free(op);
}

int rv_qemu_defop_submit(rv_qemu_fileq *q, const char *xml, const unsigned char *uuid,
                         void (*free_def)(void *def),
                         int (*prepare)(rv_qemu_fileop *op, rv_err *err),
                         void (*commit)(rv_qemu_fileop *op), rv_err *err)
{
    rv_qemu_defop *op = rv_qemu_fileop_new(q, sizeof(*op), defop_destroy, err);
    if (!op)
        return -1;
    op->free_def = free_def;
    if (uuid)
        memcpy(op->uuid, uuid, 16);
    if (xml && !(op->xml = strdup(xml))) {
        defop_destroy(&op->op);
        return rv_err_fail(err, q->from, RV_ERR_NO_MEMORY, "out of memory");
    }
    return rv_qemu_fileq_submit(q, &op->op, prepare, commit, err);
}

int rv_qemu_fileq_submit(rv_qemu_fileq *q, rv_qemu_fileop *op,
                         int (*prepare)(rv_qemu_fileop *op, rv_err *err),
                         void (*commit)(rv_qemu_fileop *op), rv_err *err)
{
    op->prepare = prepare;
    op->commit = commit;
    if (!(op->reply = rv_driver_defer(err))) {
        op->destroy(op);
        return -1;
    }
    rv_qemu_fileq_add(q, op);
    return RV_DEFERRED;
}

bool rv_qemu_fileq_busy(const rv_qemu_fileq *q)
{
    return q->head != NULL;
}

void rv_qemu_fileq_release(rv_qemu_fileq *q)
{
    rv_err err = { 0 };
    rv_err_set(&err, q->from, RV_ERR_OPERATION_FAILED, "operation failed: remvirtd is stopping");
    /* A step under way finishes on its own; the next remvirtd reads
     * whichever file is there. */
    while (q->head)
        op_end(q->head, &err);
    rv_err_clear(&err);
}
