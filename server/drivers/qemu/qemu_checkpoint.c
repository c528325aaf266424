/* The QEMU driver's domain checkpoints, as libvirt 9.0's QEMU driver
 * makes them (compared side by side: tests/interop/test-qemu-checkpoints.sh):
 * a checkpoint is a persistent dirty bitmap named after it on each of its
 * disks, added in one QMP transaction (block-dirty-bitmap-add, persistent)
 * to the disk's root node; QEMU writes the bitmaps into the qcow2 images
 * when it closes them.  Every bitmap stays enabled, so a checkpoint's
 * bitmap alone holds what changed since it; deleting a checkpoint removes
 * its bitmaps (its parent's already cover the same changes).  As libvirt:
 * only a running domain makes or deletes checkpoints (no qemu-img path),
 * raw disks are refused, a bitmap must be named after its checkpoint.
 *
 * The metadata (server/drivers/conf/snapshot_tree.h records, the JSON of
 * qemu_snapshot.h) of a domain is <config_dir>/checkpoint/<domain>.json,
 * written off the loop (rv_qemu_sync) and read again the first time after
 * remvirtd starts.  Its "trash" names checkpoints whose bitmaps the disks
 * may hold without the checkpoint being listed: a create writes the name
 * there before adding the bitmaps, and its commit writes the checkpoint
 * and drops the name; a delete's commit writes the tree without the
 * checkpoints and their names in the trash, then removes the bitmaps and
 * drops the names.  A create of a name in the trash first removes what a
 * killed remvirtd may have left under it.  Crash points:
 * checkpoint-create:1 (the intent written), :2 (the bitmaps added, not
 * committed); checkpoint-delete:1 (before the commit), :2 (committed, the
 * bitmaps still there).  A checkpoint made with a backup goes the same
 * way (rv_qemu_checkpoint_with), its bitmaps added by the backup's
 * transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/conf/snapshot_tree.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/qemu_checkpoint.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_moments.h"

RV_LOG_CATEGORY("drivers.qemu.checkpoint");

enum {
    MAX_CHECKPOINTS = RV_QEMU_MOMENTS_MAX,    /* per domain */
    CREATE_FLAGS = RV_DOMAIN_CHECKPOINT_CREATE_REDEFINE |
                   RV_DOMAIN_CHECKPOINT_CREATE_REDEFINE_VALIDATE,
    XML_FLAGS = RV_DOMAIN_CHECKPOINT_XML_SECURE | RV_DOMAIN_CHECKPOINT_XML_NO_DOMAIN |
                RV_DOMAIN_CHECKPOINT_XML_SIZE,
    LIST_FLAGS = RV_DOMAIN_CHECKPOINT_LIST_ROOTS | RV_DOMAIN_CHECKPOINT_LIST_TOPOLOGICAL |
                 RV_DOMAIN_CHECKPOINT_LIST_LEAVES | RV_DOMAIN_CHECKPOINT_LIST_NO_LEAVES,
    DELETE_FLAGS = RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN |
                   RV_DOMAIN_CHECKPOINT_DELETE_METADATA_ONLY |
                   RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY,
};

/* The domains' checkpoints (qemu_moments.h); the trash's entries have
 * no files: their bitmaps are on the checkpoint's disks. */
typedef rv_qemu_moments qchks;
static rv_qemu_moment_kind chk_kind = { .dir = "checkpoint", .plural = "checkpoints" };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static const char *dom_name(const qemu_dom *d)
{
    return rv_qemu_dom_def(d)->name;
}

/* ================================================================ the metadata */

char *rv_qemu_checkpoint_metadata_path(const char *name)
{
    return rv_qemu_moments_path(&chk_kind, name);
}

static qchks *find_chks(const unsigned char uuid[16])
{
    return rv_qemu_moments_find(&chk_kind, uuid);
}

static qchks *chks_of(const qemu_dom *d, rv_err *err)
{
    return rv_qemu_moments_of(&chk_kind, d, err);
}

void rv_qemu_checkpoints_cleanup(void)
{
    rv_qemu_moments_cleanup(&chk_kind);
}

void rv_qemu_checkpoints_forget(const unsigned char uuid[16])
{
    rv_qemu_moments_forget(&chk_kind, uuid);
}

int rv_qemu_checkpoints_undefine(const qemu_dom *d, unsigned int flags, rv_err *err)
{
    return rv_qemu_moments_undefine(&chk_kind, d,
                                    (flags & RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA) != 0, err);
}

bool rv_qemu_checkpoints_busy(const qemu_dom *d)
{
    const qchks *q = find_chks(rv_qemu_dom_def(d)->uuid);
    return q && q->busy;
}

const char *rv_qemu_checkpoint_bitmap(const qemu_dom *d, const char *name, const char *target,
                                      rv_err *err)
{
    qchks *q = chks_of(d, err);
    rv_snap_rec *s = q ? rv_snap_tree_find(&q->tree, name) : NULL;
    if (!q)
        return NULL;
    if (!s) {
        fail(err, RV_ERR_NO_DOMAIN_CHECKPOINT,
             "Domain checkpoint not found: no domain checkpoint with matching name '%s'", name);
        return NULL;
    }
    for (size_t i = 0; i < s->ndisks; i++)
        if (strcmp(s->disks[i].name, target) == 0 && s->disks[i].bitmap)
            return s->disks[i].bitmap;
    fail(err, RV_ERR_CHECKPOINT_INCONSISTENT,
         "checkpoint inconsistent: checkpoint '%s' has no bitmap on disk '%s'", name, target);
    return NULL;
}

/* ================================================================ operations */

/* A create: INTENT (the trash with its name written), BITMAPS (QEMU's
 * root nodes, then the transaction), COMMIT (the tree with it written).
 * A delete: COMMIT (the tree without them written), BITMAPS (removed),
 * CLEAN (their names out of the trash). */
typedef enum { ST_INTENT, ST_BITMAPS, ST_COMMIT, ST_CLEAN } op_step;

typedef struct chk_op {
    bool create;
    op_step step;
    unsigned char uuid[16];
    rv_deferred *reply;
    rv_snap_rec *rec;                   /* a create's checkpoint until the commit */
    char **names;                       /* the checkpoints whose bitmaps are acted on */
    size_t nnames;
    char **targets, **bitmaps;          /* those bitmaps: disk and name */
    size_t nbitmaps;
    bool leftovers;                     /* a create's name was in the trash */
    rv_snap_tree cand;                  /* the tree written at the commit */
    json_object *trash;                 /* the trash written with the current step */
    rv_qemu_sync sync;
    bool with;                          /* made with a backup: done, not reply, is told */
    rv_qemu_checkpoint_done *done;
    void *done_data;
} chk_op;

static void op_free(chk_op *op)
{
    rv_snap_rec_free(op->rec);
    for (size_t i = 0; i < op->nnames; i++)
        free(op->names[i]);
    free(op->names);
    for (size_t i = 0; i < op->nbitmaps; i++) {
        free(op->targets[i]);
        free(op->bitmaps[i]);
    }
    free(op->targets);
    free(op->bitmaps);
    rv_snap_tree_clear(&op->cand);
    json_object_put(op->trash);
    rv_qemu_sync_forget(&op->sync);
    free(op);
}

/* q's trash with op's names added (add) or taken out; NULL without memory. */
static json_object *trash_with(const qchks *q, const chk_op *op, bool add)
{
    return rv_qemu_moments_trash_with(q->trash, op->names, op->nnames, NULL, 0, add);
}

static int put_chk(const qemu_dom *d, const char *name, rv_nonnull_domain_checkpoint *wire,
                   rv_err *err)
{
    return rv_qemu_moments_put(d, name, &wire->name, &wire->dom, err);
}

/* Answer the call and end the operation. */
static void op_end(chk_op *op, const rv_err *err)
{
    qchks *q = find_chks(op->uuid);
    if (q)
        q->busy = false;
    if (op->done)
        op->done(op, op->done_data, err);
    else if (op->reply)
        rv_deferred_finish(op->reply, err);
    op_free(op);
}

static void op_fail(chk_op *op, int code, const char *message)
{
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, code, "%s", message);
    op_end(op, &err);
    rv_err_clear(&err);
}

static void on_written(rv_qemu_sync *s, int error);

/* Write tree t with op->trash, off the loop; on_written follows. */
static int write_metadata(chk_op *op, const qemu_dom *d, const rv_snap_tree *t, rv_err *err)
{
    op->sync.done = on_written;
    op->sync.data = op;
    return rv_qemu_moments_write(&chk_kind, &op->sync, d, op->uuid, t, op->trash, NULL, err);
}

/* The next write; the call is answered with the error if it cannot start. */
static void op_write(chk_op *op, op_step step, const rv_snap_tree *t)
{
    rv_err err = { 0 };
    qemu_dom *d = rv_qemu_find_uuid(op->uuid);
    op->step = step;
    if (!d) {
        op_fail(op, RV_ERR_NO_DOMAIN, "Domain not found: the domain is gone");
        return;
    }
    if (write_metadata(op, d, t, &err) < 0) {
        op_end(op, &err);
        rv_err_clear(&err);
    }
}

static void on_nodes(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque);

/* Ask QEMU for its block nodes: the bitmaps' steps follow in on_nodes. */
static void op_bitmaps(chk_op *op)
{
    rv_err err = { 0 };
    qemu_dom *d = rv_qemu_find_uuid(op->uuid);
    op->step = ST_BITMAPS;
    if (!d || !rv_qemu_dom_active(d) || !d->qmp) {
        fail(&err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain is not running");
        on_nodes(NULL, NULL, &err, op);
    } else if (rv_qmp_command(d->qmp, "query-block", NULL, 0, on_nodes, op, &err) < 0) {
        on_nodes(NULL, NULL, &err, op);
    }
    rv_err_clear(&err);
}

/* A delete's bitmaps are gone, or could not all go (logged: their names
 * stay in the trash, for a create of the same name to remove). */
static void delete_finish(chk_op *op, const rv_err *err)
{
    qchks *q = find_chks(op->uuid);
    if (err || !q) {
        if (err)
            RV_WARN("checkpoint-delete: bitmaps left on the disks: %s",
                    err->message ? err->message : "QEMU refused");
        op_end(op, NULL);
        return;
    }
    json_object_put(op->trash);
    op->trash = trash_with(q, op, false);
    if (!op->trash) {
        op_end(op, NULL);
        return;
    }
    op_write(op, ST_CLEAN, &q->tree);
}

/* A create's bitmaps were added (or not: err). */
static void on_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    chk_op *op = opaque;
    qchks *q = find_chks(op->uuid);
    if (err) {
        op_fail(op, err->code ? err->code : RV_ERR_OPERATION_FAILED,
                err->message ? err->message : "operation failed: QEMU refused the bitmaps");
        return;
    }
    rv_crash_point("checkpoint-create", 2);
    rv_err e = { 0 };
    json_object_put(op->trash);
    op->trash = q ? trash_with(q, op, false) : NULL;
    rv_snap_rec *rec = op->rec;
    if (!q || !op->trash || rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, &e) < 0 ||
        rv_snap_tree_add(&op->cand, rec, MAX_CHECKPOINTS, &e) < 0) {
        if (!rv_err_is_set(&e))
            oom(&e);
        op_end(op, &e);
        rv_err_clear(&e);
        return;
    }
    op->rec = NULL;                     /* the candidate tree's now */
    op_write(op, ST_COMMIT, &op->cand);
}

static void on_removed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    delete_finish(opaque, err);
}

/* One transaction of block-dirty-bitmap-add or -remove over the bitmaps,
 * their nodes from query-block's answer list. */
static json_object *transaction(const chk_op *op, json_object *list, const char *type,
                                rv_err *err)
{
    json_object *actions = json_object_new_array();
    for (size_t i = 0; actions && i < op->nbitmaps; i++) {
        json_object *entry = rv_qemu_block_entry(list, op->targets[i]), *inserted = NULL, *v;
        const char *node = entry && json_object_object_get_ex(entry, "inserted", &inserted) &&
                                   json_object_object_get_ex(inserted, "node-name", &v)
                               ? json_object_get_string(v) : NULL;
        if (!node) {
            json_object_put(actions);
            fail(err, RV_ERR_OPERATION_FAILED, "operation failed: QEMU has no disk '%s'",
                 op->targets[i]);
            return NULL;
        }
        json_object *data = json_object_new_object(), *action = json_object_new_object();
        json_object_object_add(data, "node", json_object_new_string(node));
        json_object_object_add(data, "name", json_object_new_string(op->bitmaps[i]));
        if (strcmp(type, "block-dirty-bitmap-add") == 0)
            json_object_object_add(data, "persistent", json_object_new_boolean(1));
        json_object_object_add(action, "type", json_object_new_string(type));
        json_object_object_add(action, "data", data);
        json_object_array_add(actions, action);
    }
    json_object *args = actions ? json_object_new_object() : NULL;
    if (!args) {
        json_object_put(actions);
        oom(err);
        return NULL;
    }
    json_object_object_add(args, "actions", actions);
    return args;
}

static void ignore_answer(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    if (err)
        RV_DEBUG("%s: %s", (const char *)opaque, err->message ? err->message : "");
}

static void on_nodes(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    chk_op *op = opaque;
    qemu_dom *d = rv_qemu_find_uuid(op->uuid);
    rv_err e = { 0 };
    json_object *args = NULL;
    if (err)
        rv_err_set(&e, err->domain, err->code, "%s", err->message ? err->message : "QEMU failed");
    else if (!d || !d->qmp)
        fail(&e, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain is not running");
    else
        args = transaction(op, ret, op->create ? "block-dirty-bitmap-add"
                                               : "block-dirty-bitmap-remove", &e);
    /* What a killed remvirtd may have left under a create's name goes
     * first: all of its bitmaps or none (one transaction added them).
     * QEMU answers in order. */
    json_object *leftovers = args && op->create && op->leftovers
                                 ? transaction(op, ret, "block-dirty-bitmap-remove", &e) : NULL;
    if (leftovers && rv_qmp_command(d->qmp, "transaction", leftovers, 0, ignore_answer,
                                    "checkpoint leftovers", &e) < 0) {
        json_object_put(args);
        args = NULL;
    }
    rv_qmp_reply_fn next = op->create ? on_added : on_removed;
    if (args && rv_qmp_command(d->qmp, "transaction", args, 0, next, op, &e) == 0)
        return;
    if (op->create) {
        op_end(op, &e);
    } else {
        delete_finish(op, &e);
    }
    rv_err_clear(&e);
}

static void on_written(rv_qemu_sync *s, int error)
{
    chk_op *op = s->data;
    qchks *q = find_chks(op->uuid);
    qemu_dom *d = rv_qemu_find_uuid(op->uuid);
    if (error || !q) {
        rv_err err = { 0 };
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot write the checkpoint metadata of domain '%s': %s",
                   d ? dom_name(d) : "(gone)",
                   error > 0 ? strerror(error) : error ? "the store helper died" : "gone");
        if (op->step == ST_CLEAN) {
            RV_WARN("%s", err.message);
            op_end(op, NULL);
        } else {
            /* A create not committed leaves its bitmaps, named in the
             * trash written first; they go with the next create of the
             * name. */
            op_end(op, &err);
        }
        rv_err_clear(&err);
        return;
    }
    switch (op->step) {
    case ST_INTENT:
        json_object_put(q->trash);
        q->trash = json_object_get(op->trash);
        rv_crash_point("checkpoint-create", 1);
        if (op->with) {
            /* The backup's transaction adds the bitmaps; it calls
             * rv_qemu_checkpoint_added when QEMU has answered. */
            rv_qemu_checkpoint_done *ready = op->done;
            op->done = NULL;
            ready(op, op->done_data, NULL);
            return;
        }
        op_bitmaps(op);
        return;
    case ST_COMMIT: {
        /* The commit: the tree written is the domain's. */
        rv_snap_tree_clear(&q->tree);
        q->tree = op->cand;
        memset(&op->cand, 0, sizeof(op->cand));
        json_object_put(q->trash);
        q->trash = json_object_get(op->trash);
        if (op->create && op->with) {
            RV_INFO("domain '%s': checkpoint '%s' made with a backup", d ? dom_name(d) : "?",
                    op->names[0]);
            op_end(op, NULL);
            return;
        }
        if (op->create) {
            rv_err e = { 0 };
            rv_domain_checkpoint_create_xml_ret *ret = rv_deferred_ret(op->reply);
            RV_INFO("domain '%s': checkpoint '%s' made", d ? dom_name(d) : "?", op->names[0]);
            if (!d || put_chk(d, op->names[0], &ret->checkpoint, &e) < 0) {
                if (!rv_err_is_set(&e))
                    fail(&e, RV_ERR_NO_DOMAIN, "Domain not found: the domain is gone");
                op_end(op, &e);
            } else {
                op_end(op, NULL);
            }
            rv_err_clear(&e);
            return;
        }
        rv_crash_point("checkpoint-delete", 2);
        if (op->nbitmaps)
            op_bitmaps(op);
        else
            op_end(op, NULL);
        return;
    }
    case ST_CLEAN:
    default:
        json_object_put(q->trash);
        q->trash = json_object_get(op->trash);
        op_end(op, NULL);
        return;
    }
}

/* ================================================================ slots */

static qemu_dom *dom_and_chks(const rv_nonnull_domain *wire, qchks **q, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    return d && (*q = chks_of(d, err)) ? d : NULL;
}

static rv_snap_rec *find_chk(qchks *q, const char *name, rv_err *err)
{
    rv_snap_rec *s = rv_snap_tree_find(&q->tree, name);
    if (!s)
        fail(err, RV_ERR_NO_DOMAIN_CHECKPOINT,
             "Domain checkpoint not found: no domain checkpoint with matching name '%s'", name);
    return s;
}

static rv_snap_rec *chk_get(const rv_nonnull_domain_checkpoint *wire, qemu_dom **dp, qchks **qp,
                            rv_err *err)
{
    return (*dp = dom_and_chks(&wire->dom, qp, err)) ? find_chk(*qp, wire->name, err) : NULL;
}


static chk_op *op_new(bool create, const qchks *q, rv_err *err)
{
    chk_op *op = calloc(1, sizeof(*op));
    if (!op) {
        oom(err);
        return NULL;
    }
    op->create = create;
    memcpy(op->uuid, q->uuid, 16);
    return op;
}

/* Take s's bitmaps into op's list; -1 without memory. */
static int add_bitmaps(chk_op *op, const rv_snap_rec *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ndisks; i++)
        n += s->disks[i].bitmap != NULL;
    if (!n)
        return 0;
    char **t = realloc(op->targets, (op->nbitmaps + n) * sizeof(*t));
    if (t)
        op->targets = t;
    char **b = t ? realloc(op->bitmaps, (op->nbitmaps + n) * sizeof(*b)) : NULL;
    if (!b)
        return -1;
    op->bitmaps = b;
    for (size_t i = 0; i < s->ndisks; i++) {
        if (!s->disks[i].bitmap)
            continue;
        op->targets[op->nbitmaps] = strdup(s->disks[i].name);
        op->bitmaps[op->nbitmaps] = strdup(s->disks[i].bitmap);
        op->nbitmaps++;
        if (!op->targets[op->nbitmaps - 1] || !op->bitmaps[op->nbitmaps - 1])
            return -1;
    }
    return 0;
}

static int add_name(chk_op *op, const char *name)
{
    char **n = realloc(op->names, (op->nnames + 1) * sizeof(*n));
    if (!n)
        return -1;
    op->names = n;
    if (!(n[op->nnames] = strdup(name)))
        return -1;
    op->nnames++;
    return 0;
}

/* A new checkpoint of d as req asks, checked as libvirt checks it; NULL
 * with err. */
static rv_snap_rec *new_checkpoint(const qemu_dom *d, rv_snapshot_request *req, rv_err *err)
{
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    rv_snap_rec *s = rv_snap_rec_new(req, rv_qemu_domain_format(def));
    const char **targets = s ? calloc(def->ndisks + 1, sizeof(*targets)) : NULL;
    if (!targets) {
        rv_snap_rec_free(s);
        oom(err);
        return NULL;
    }
    for (size_t i = 0; i < def->ndisks; i++)
        targets[i] = def->disks[i].target;
    s->state = RV_DOMAIN_RUNNING;
    int rc = rv_chk_rec_disks(s, req, targets, def->ndisks, err);
    free(targets);
    for (size_t i = 0; rc == 0 && i < s->ndisks; i++) {
        const rv_snapshot_disk *sd = &s->disks[i];
        const rv_qemu_disk *disk = &def->disks[i];
        if (!sd->bitmap)
            continue;
        if (strcmp(sd->bitmap, s->name) != 0)
            rc = fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                      "unsupported configuration: bitmap for disk '%s' must match checkpoint "
                      "name '%s'", sd->name, s->name);
        else if (disk->format != RV_QEMU_FORMAT_QCOW2 || disk->device == RV_QEMU_DISK_CDROM ||
                 disk->readonly || !disk->source)
            rc = fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                      "unsupported configuration: checkpoint for disk %s unsupported for "
                      "storage type %s", sd->name,
                      disk->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw");
    }
    if (rc < 0) {
        rv_snap_rec_free(s);
        return NULL;
    }
    return s;
}

/* A create of d's checkpoint from xml, checked, its operation ready for
 * its first write (the intent); NULL with err. */
static chk_op *create_op(qemu_dom *d, qchks *q, const char *xml, unsigned int flags, rv_err *err)
{
    rv_snapshot_request req;
    if (!rv_qemu_dom_active(d)) {
        fail(err, RV_ERR_OPERATION_UNSUPPORTED,
             "Operation not supported: cannot create checkpoint for inactive domain");
        return NULL;
    }
    if (rv_checkpoint_request_parse(xml, &req, err) < 0)
        return NULL;
    rv_snap_rec *s = NULL;
    int rc = 0;
    if (flags & RV_DOMAIN_CHECKPOINT_CREATE_REDEFINE)
        rc = req.has_creation_time
                 ? fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: remvirt's QEMU driver cannot redefine "
                        "checkpoints")
                 : rv_err_fail(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_INTERNAL_ERROR,
                               "internal error: missing creationTime from existing checkpoint");
    if (rc == 0 && !(s = new_checkpoint(d, &req, err)))
        rc = -1;
    rv_snapshot_request_clear(&req);
    if (rc == 0 && rv_snap_tree_find(&q->tree, s->name))
        rc = rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_FAILED,
                         "operation failed: domain moment %s already exists", s->name);
    if (rc == 0 && q->tree.n >= MAX_CHECKPOINTS)
        rc = fail(err, RV_ERR_OPERATION_FAILED,
                  "operation failed: a domain may have at most %d checkpoints here",
                  MAX_CHECKPOINTS);
    chk_op *op = NULL;
    if (rc == 0 && (rv_qemu_moments_busy(d, q, err) < 0 || !(op = op_new(true, q, err))))
        rc = -1;
    if (rc == 0 && (add_name(op, s->name) < 0 || add_bitmaps(op, s) < 0 ||
                    !(op->trash = trash_with(q, op, true))))
        rc = oom(err);
    if (rc < 0) {
        rv_snap_rec_free(s);
        if (op)
            op_free(op);
        return NULL;
    }
    op->rec = s;
    op->leftovers = rv_qemu_moments_in_trash(q->trash, s->name);
    return op;
}

int rv_qemu_domain_checkpoint_create_xml(rv_driver_conn *c,
                                         const rv_domain_checkpoint_create_xml_args *args,
                                         rv_domain_checkpoint_create_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    qchks *q;
    qemu_dom *d;
    chk_op *op;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, CREATE_FLAGS, "qemuCheckpointCreateXML",
                            err) < 0 ||
        !(d = dom_and_chks(&args->dom, &q, err)) ||
        !(op = create_op(d, q, args->xml_desc, args->flags, err)))
        return -1;
    if (!(op->reply = rv_driver_defer(err))) {
        op_free(op);
        return -1;
    }
    q->busy = true;
    op_write(op, ST_INTENT, &q->tree);
    return RV_DEFERRED;
}

/* ---------------------------------------------------------------- with a backup */

rv_qemu_chk_op *rv_qemu_checkpoint_with(qemu_dom *d, const char *xml, rv_qemu_checkpoint_done *done,
                                        void *data, rv_err *err)
{
    qchks *q = chks_of(d, err);
    chk_op *op = q ? create_op(d, q, xml, 0, err) : NULL;
    if (!op)
        return NULL;
    op->with = true;
    op->done = done;
    op->done_data = data;
    q->busy = true;
    op_write(op, ST_INTENT, &q->tree);
    return op;
}

int rv_qemu_checkpoint_actions(rv_qemu_chk_op *op, rv_qmp *qmp, json_object *blocks,
                               json_object *actions, rv_err *err)
{
    json_object *args = transaction(op, blocks, "block-dirty-bitmap-add", err), *list;
    if (!args)
        return -1;
    /* What a killed remvirtd left under the name goes first, as a create
     * removes it (QEMU refuses a removal and an addition of one name in
     * one transaction; it answers in order). */
    json_object *leftovers = op->leftovers ? transaction(op, blocks, "block-dirty-bitmap-remove", err)
                                           : NULL;
    if (leftovers && rv_qmp_command(qmp, "transaction", leftovers, 0, ignore_answer,
                                    "checkpoint leftovers", err) < 0) {
        json_object_put(args);
        return -1;
    }
    json_object_object_get_ex(args, "actions", &list);
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *a = json_object_array_get_idx(list, i), *data;
        json_object_object_get_ex(a, "data", &data);
        json_object_object_add(data, "disabled", json_object_new_boolean(0));
        json_object_array_add(actions, json_object_get(a));
    }
    json_object_put(args);
    return 0;
}

void rv_qemu_checkpoint_added(rv_qemu_chk_op *op, const rv_err *qerr, rv_qemu_checkpoint_done *done,
                              void *data)
{
    op->done = done;
    op->done_data = data;
    on_added(NULL, NULL, qerr, op);
}

int rv_qemu_domain_checkpoint_delete(rv_driver_conn *c,
                                     const rv_domain_checkpoint_delete_args *args, rv_err *err)
{
    (void)c;
    qchks *q;
    qemu_dom *d;
    rv_snap_rec *s;
    unsigned int flags = args->flags;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, DELETE_FLAGS, "qemuCheckpointDelete", err) < 0)
        return -1;
    if ((flags & RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN) &&
        (flags & RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY))
        return rv_err_fail(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_INVALID_ARG,
                           "Flags 'VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN' and "
                           "'VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY' are mutually exclusive");
    if (!(s = chk_get(&args->checkpoint, &d, &q, err)))
        return -1;
    if (!rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: cannot delete checkpoint for inactive domain");
    chk_op *op = NULL;
    if (rv_qemu_moments_busy(d, q, err) < 0 || !(op = op_new(false, q, err)))
        return -1;
    int rc = rv_qemu_moments_copy(q->uuid, &q->tree, &op->cand, err);
    rv_snap_rec *cs = rc == 0 ? rv_snap_tree_find(&op->cand, s->name) : NULL;
    unsigned char *doomed = cs ? rv_snap_tree_doomed(&op->cand, cs, flags) : NULL;
    if (rc == 0 && !doomed)
        rc = oom(err);
    bool metadata_only = (flags & RV_DOMAIN_CHECKPOINT_DELETE_METADATA_ONLY) != 0;
    for (size_t i = 0; rc == 0 && i < op->cand.n; i++)
        if (doomed[i] && (add_name(op, op->cand.items[i]->name) < 0 ||
                          (!metadata_only && add_bitmaps(op, op->cand.items[i]) < 0)))
            rc = oom(err);
    if (rc == 0 && !(op->trash = trash_with(q, op, !metadata_only)))
        rc = oom(err);
    if (rc == 0 && !(op->reply = rv_driver_defer(err)))
        rc = -1;
    if (rc < 0) {
        free(doomed);
        op_free(op);
        return -1;
    }
    rv_snap_tree_remove(&op->cand, cs, doomed, flags);
    free(doomed);
    RV_INFO("domain '%s': deleting checkpoint '%s' (flags 0x%x)", dom_name(d), s->name, flags);
    q->busy = true;
    rv_crash_point("checkpoint-delete", 1);
    op_write(op, ST_COMMIT, &op->cand);
    return RV_DEFERRED;
}

/* ---------------------------------------------------------------- queries */

/* XML_SIZE: the bytes each bitmap says changed, from query-block. */
typedef struct size_req {
    rv_qemu_live_req live;
    unsigned char uuid[16];
    char *name;
    bool with_domain;
} size_req;

static void size_req_free(size_req *r)
{
    free(r->live.name);
    free(r->name);
    free(r);
}

long long rv_qemu_bitmap_count(json_object *entry, const char *bitmap)
{
    json_object *inserted = NULL, *list = NULL;
    if (!(json_object_object_get_ex(entry, "inserted", &inserted) &&
          json_object_object_get_ex(inserted, "dirty-bitmaps", &list)))
        json_object_object_get_ex(entry, "dirty-bitmaps", &list);
    size_t n = list && json_object_is_type(list, json_type_array) ? json_object_array_length(list)
                                                                   : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *b = json_object_array_get_idx(list, i), *v;
        const char *name = rv_qemu_moments_str(b, "name");
        if (name && strcmp(name, bitmap) == 0)
            return json_object_object_get_ex(b, "count", &v) ? json_object_get_int64(v) : 0;
    }
    return -1;
}

static void on_sizes(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    size_req *r = opaque;
    if (!rv_qemu_live_req_alive(&r->live, qmp, err)) {
        size_req_free(r);
        return;
    }
    qchks *q = find_chks(r->uuid);
    rv_snap_rec *s = q ? rv_snap_tree_find(&q->tree, r->name) : NULL;
    if (!s) {
        rv_qemu_finish_error(r->live.reply, RV_ERR_NO_DOMAIN_CHECKPOINT,
                             "Domain checkpoint not found: no domain checkpoint with matching "
                             "name '%s'", r->name);
        size_req_free(r);
        return;
    }
    unsigned long long *sizes = calloc(s->ndisks + 1, sizeof(*sizes));
    for (size_t i = 0; sizes && i < s->ndisks; i++)
        if (s->disks[i].bitmap) {
            long long n = rv_qemu_bitmap_count(rv_qemu_block_entry(ret, s->disks[i].name),
                                               s->disks[i].bitmap);
            sizes[i] = n > 0 ? (unsigned long long)n : 0;
        }
    rv_domain_checkpoint_get_xml_desc_ret *out = rv_deferred_ret(r->live.reply);
    out->xml = sizes ? rv_chk_rec_format(s, r->with_domain, sizes) : NULL;
    free(sizes);
    if (out->xml)
        rv_deferred_finish(r->live.reply, NULL);
    else
        rv_qemu_finish_error(r->live.reply, RV_ERR_NO_MEMORY, "out of memory");
    size_req_free(r);
}

int rv_qemu_domain_checkpoint_get_xml_desc(rv_driver_conn *c,
                                           const rv_domain_checkpoint_get_xml_desc_args *args,
                                           rv_domain_checkpoint_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qchks *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, XML_FLAGS, "qemuCheckpointGetXMLDesc",
                            err) < 0 ||
        !(s = chk_get(&args->checkpoint, &d, &q, err)))
        return -1;
    bool with_domain = !(args->flags & RV_DOMAIN_CHECKPOINT_XML_NO_DOMAIN);
    if (!(args->flags & RV_DOMAIN_CHECKPOINT_XML_SIZE)) {
        ret->xml = rv_chk_rec_format(s, with_domain, NULL);
        return rv_string_result(ret->xml ? 0 : oom(err), &ret->xml, err);
    }
    if (!rv_qemu_dom_active(d) || !d->qmp)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain is not running");
    size_req *r = rv_qemu_live_req_new(sizeof(*r), d, err);
    if (!r)
        return -1;
    memcpy(r->uuid, q->uuid, 16);
    r->with_domain = with_domain;
    if (!(r->name = strdup(s->name))) {
        rv_qemu_finish_error(r->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        size_req_free(r);
        return RV_DEFERRED;
    }
    if (!rv_qemu_send_for(d, r->live.reply, "query-block", NULL, on_sizes, r))
        size_req_free(r);
    return RV_DEFERRED;
}

int rv_qemu_domain_checkpoint_lookup_by_name(rv_driver_conn *c,
                                             const rv_domain_checkpoint_lookup_by_name_args *args,
                                             rv_domain_checkpoint_lookup_by_name_ret *ret,
                                             rv_err *err)
{
    (void)c;
    qchks *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainCheckpointLookupByName",
                            err) < 0 ||
        !(d = dom_and_chks(&args->dom, &q, err)) || !(s = find_chk(q, args->name, err)))
        return -1;
    return put_chk(d, s->name, &ret->checkpoint, err);
}

int rv_qemu_domain_checkpoint_get_parent(rv_driver_conn *c,
                                         const rv_domain_checkpoint_get_parent_args *args,
                                         rv_domain_checkpoint_get_parent_ret *ret, rv_err *err)
{
    (void)c;
    qchks *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainCheckpointGetParent",
                            err) < 0 ||
        !(s = chk_get(&args->checkpoint, &d, &q, err)))
        return -1;
    if (!s->parent)
        return fail(err, RV_ERR_NO_DOMAIN_CHECKPOINT,
                    "Domain checkpoint not found: checkpoint '%s' does not have a parent",
                    s->name);
    return put_chk(d, s->parent->name, &ret->parent, err);
}

/* A list call's reply: the count, and the checkpoints when asked for. */
static int put_list(const qemu_dom *d, const qchks *q, const rv_snap_rec *under,
                    unsigned int flags, int need, rv_nonnull_domain_checkpoint **val, u_int *len,
                    int *count, rv_err *err)
{
    rv_snap_rec **list;
    int n = rv_snap_tree_collect(&q->tree, under, flags, &list);
    if (n < 0)
        return oom(err);
    *count = n;
    int rc = 0;
    if (need && n > 0 && !(*val = calloc((size_t)n, sizeof(**val))))
        rc = oom(err);
    for (int i = 0; rc == 0 && need && i < n; i++) {
        *len = (u_int)i + 1;            /* the dispatcher frees what was put */
        rc = put_chk(d, list[i]->name, &(*val)[i], err);
    }
    free(list);
    return rc;
}

int rv_qemu_domain_list_all_checkpoints(rv_driver_conn *c,
                                        const rv_domain_list_all_checkpoints_args *args,
                                        rv_domain_list_all_checkpoints_ret *ret, rv_err *err)
{
    (void)c;
    qchks *q;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainListAllCheckpoints",
                            err) < 0 ||
        !(d = dom_and_chks(&args->dom, &q, err)))
        return -1;
    return put_list(d, q, NULL, args->flags, args->need_results,
                    &ret->checkpoints.checkpoints_val, &ret->checkpoints.checkpoints_len,
                    &ret->ret, err);
}

int rv_qemu_domain_checkpoint_list_all_children(rv_driver_conn *c,
                                                const rv_domain_checkpoint_list_all_children_args *args,
                                                rv_domain_checkpoint_list_all_children_ret *ret,
                                                rv_err *err)
{
    (void)c;
    qchks *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS,
                            "qemuDomainCheckpointListAllChildren", err) < 0 ||
        !(s = chk_get(&args->checkpoint, &d, &q, err)))
        return -1;
    return put_list(d, q, s, args->flags, args->need_results, &ret->checkpoints.checkpoints_val,
                    &ret->checkpoints.checkpoints_len, &ret->ret, err);
}
