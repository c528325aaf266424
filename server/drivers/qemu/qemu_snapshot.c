/* The QEMU driver's domain snapshots: internal snapshots of qcow2 disks.
 * A shut-off domain's disks get them from `qemu-img snapshot -c/-a/-d`,
 * run as child processes the loop watches; a running (or paused) domain
 * takes them through its monitor (HMP savevm, loadvm, delvm: the memory
 * state too), answered when QEMU is done.  Either way the call's reply is
 * deferred and the loop never waits.  Disks that are not qcow2 are
 * refused by name; CD-ROMs and read-only disks are left out.
 *
 * The metadata (the tree, server/drivers/conf/snapshot_tree.h) of a domain is
 * one JSON file, <config_dir>/snapshot/<domain>.json, written atomically
 * after every change and read again the first time the domain's
 * snapshots are asked for after remvirtd starts.
 *
 * One snapshot operation at a time per domain, and none while one of the
 * domain's jobs (start, destroy, ...) runs: such calls are refused.
 * Reverting a running domain to a shut-off snapshot, or a shut-off one to
 * a running snapshot, is refused (destroy or start it first). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_moments.h"
#include "server/drivers/qemu/qemu_snapshot.h"
#include "server/drivers/conf/snapshot_tree.h"

RV_LOG_CATEGORY("drivers.qemu.snapshot");

enum {
    MAX_SNAPSHOTS = RV_QEMU_MOMENTS_MAX,    /* per domain */
    OUTPUT_MAX = 2048,                  /* what is kept of qemu-img's messages */
    CREATE_FLAGS = RV_DOMAIN_SNAPSHOT_CREATE_ATOMIC | RV_DOMAIN_SNAPSHOT_CREATE_VALIDATE,
    LIST_FLAGS = 0x7ff,
    REVERT_FLAGS = RV_DOMAIN_SNAPSHOT_REVERT_RUNNING | RV_DOMAIN_SNAPSHOT_REVERT_PAUSED |
                   RV_DOMAIN_SNAPSHOT_REVERT_FORCE,
    DELETE_FLAGS = RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN | RV_DOMAIN_SNAPSHOT_DELETE_METADATA_ONLY |
                   RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY,
};
#define MONITOR_TIMEOUT 600.0           /* seconds a savevm may take */

/* The domains' snapshots (qemu_moments.h); the trash's entries name
 * the images each snapshot may be left in. */
typedef rv_qemu_moments qsnaps;
static rv_qemu_moment_kind snap_kind = { .dir = "snapshot", .plural = "snapshots" };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static const char *dom_name(const qemu_dom *d)
{
    return rv_qemu_dom_def(d)->name;
}

char *rv_qemu_snapshot_metadata_path(const char *name)
{
    return rv_qemu_moments_path(&snap_kind, name);
}

static qsnaps *snaps_of(const qemu_dom *d, rv_err *err)
{
    return rv_qemu_moments_of(&snap_kind, d, err);
}

int rv_qemu_snapshots_undefine(const qemu_dom *d, unsigned int flags, rv_err *err)
{
    return rv_qemu_moments_undefine(&snap_kind, d,
                                    (flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA) != 0, err);
}

void rv_qemu_snapshots_forget(const unsigned char uuid[16])
{
    rv_qemu_moments_forget(&snap_kind, uuid);
}

void rv_qemu_snapshots_cleanup(void)
{
    rv_qemu_moments_cleanup(&snap_kind);
}

/* Start-up (it may wait): `qemu-img snapshot OP name file`; for -d, true
 * when the image no longer holds it; for -a, when it ran well. */
static bool img_sync(const char *op, const char *name, const char *file)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execlp("qemu-img", "qemu-img", "snapshot", op, name, file, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    if (strcmp(op, "-d") != 0)
        return false;
    /* Failing because the image does not have it is as good. */
    if (pid < 0 || access(file, F_OK) < 0)
        return pid >= 0;
    char *cmd = NULL;
    bool gone = false;
    if (!strchr(file, '\'') && !strchr(name, '\'') &&
        asprintf(&cmd, "qemu-img snapshot -l '%s' 2>/dev/null", file) >= 0) {
        FILE *fp = popen(cmd, "r");
        char line[512];
        gone = fp != NULL;
        while (fp && fgets(line, sizeof(line), fp)) {
            char id[64], tag[256];
            if (sscanf(line, "%63s %255s", id, tag) == 2 && strcmp(tag, name) == 0)
                gone = false;
        }
        if (fp && pclose(fp) != 0)
            gone = false;
        free(cmd);
    }
    return gone;
}

static bool purge_one(const char *name, const char *file)
{
    return img_sync("-d", name, file);
}

/* One metadata file's trash: what a kill left on the disks of a domain
 * that is not running goes now (qemu-img); the file keeps what stays. */
static void recover_file(const char *path)
{
    json_object *root = rv_qemu_moments_read(path, "start-up"), *trash = NULL, *revert = NULL;
    bool has_trash = root && json_object_object_get_ex(root, "trash", &trash) &&
                     json_object_is_type(trash, json_type_array) && json_object_array_length(trash);
    bool has_revert = root && json_object_object_get_ex(root, "revert", &revert);
    if (!has_trash && !has_revert) {
        json_object_put(root);
        return;
    }
    unsigned char uuid[16];
    const char *owner = rv_qemu_moments_str(root, "uuid");
    qemu_dom *d = owner && rv_uuid_parse(owner, uuid) == 0 ? rv_qemu_find_uuid(uuid) : NULL;
    bool active = d && rv_qemu_dom_active(d);
    if (active) {
        /* Its QEMU has the images open: left for a start-up when it is off. */
        RV_INFO("'%s': snapshots left in the trash of a running domain", path);
        json_object_put(root);
        return;
    }
    /* A revert past its commit point (the current snapshot written): the
     * disks are reverted now (again: qemu-img -a can be repeated). */
    json_object *images = NULL;
    const char *target = has_revert ? rv_qemu_moments_str(revert, "name") : NULL;
    bool reverted = target && json_object_object_get_ex(revert, "files", &images) &&
                    json_object_is_type(images, json_type_array);
    for (size_t k = 0; reverted && k < json_object_array_length(images); k++) {
        const char *file = json_object_get_string(json_object_array_get_idx(images, k));
        reverted = file && img_sync("-a", target, file);
    }
    if (has_revert && reverted) {
        RV_INFO("'%s': the revert to snapshot '%s' that a kill interrupted is finished", path, target);
        json_object_object_del(root, "revert");
    } else if (has_revert) {
        RV_WARN("'%s': cannot finish the revert to snapshot '%s'", path, target ? target : "?");
    }
    json_object *kept = json_object_new_array();
    for (size_t i = 0; kept && has_trash && i < json_object_array_length(trash); i++) {
        json_object *e = json_object_array_get_idx(trash, i), *files = NULL;
        const char *name = rv_qemu_moments_str(e, "name");
        bool done = name != NULL;
        if (name && json_object_object_get_ex(e, "files", &files) &&
            json_object_is_type(files, json_type_array))
            for (size_t k = 0; k < json_object_array_length(files); k++) {
                const char *file = json_object_get_string(json_object_array_get_idx(files, k));
                if (file && !purge_one(name, file)) {
                    RV_WARN("cannot remove snapshot '%s' from '%s'", name, file);
                    done = false;
                }
            }
        if (done)
            RV_INFO("snapshot '%s' removed from the disks (an operation interrupted by a kill)", name);
        else
            json_object_array_add(kept, json_object_get(e));
    }
    if (!kept) {
        json_object_put(root);
        return;
    }
    if (has_trash)
        json_object_object_del(root, "trash");
    if (json_object_array_length(kept))
        json_object_object_add(root, "trash", kept);
    else
        json_object_put(kept);
    rv_err err = { 0 };
    json_object *list = NULL;
    if (!json_object_object_get_ex(root, "trash", NULL) &&
        !json_object_object_get_ex(root, "revert", NULL) &&
        (!json_object_object_get_ex(root, "snapshots", &list) || !json_object_array_length(list))) {
        if (unlink(path) < 0)
            RV_WARN("cannot remove '%s': %s", path, strerror(errno));
    } else if (rv_qemu_write_file(path, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY),
                                  true, &err) < 0) {
        RV_WARN("%s", err.message);
    }
    rv_err_clear(&err);
    json_object_put(root);
}

void rv_qemu_snapshots_recover(void)
{
    char *dir = rv_qemu_path(rv_qemu.config_dir, "snapshot", "");
    DIR *dp = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char *path = rv_qemu_path(dir, e->d_name, "");
        if (path)
            recover_file(path);
        free(path);
    }
    if (dp)
        closedir(dp);
    free(dir);
}


/* ================================================================ qemu-img, watched by the loop */

typedef void (*img_done_fn)(void *opaque, const rv_err *err);

typedef struct img_run {
    int out;                    /* its stdout and stderr: a memfd */
    img_done_fn done;
    void *opaque;
} img_run;

static void img_exited(void *data, int status, const char *why)
{
    img_run *r = data;
    rv_err err = { 0 };
    if (status < 0) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: qemu-img: %s",
                   why ? why : "failed");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char output[OUTPUT_MAX + 1];
        ssize_t n = pread(r->out, output, OUTPUT_MAX, 0);
        size_t len = n > 0 ? (size_t)n : 0;
        while (len && (output[len - 1] == '\n' || output[len - 1] == ' '))
            len--;
        output[len] = '\0';
        for (char *p = output; *p; p++)
            if (*p == '\n')
                *p = ' ';
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: qemu-img: %s",
                   len ? output : "failed");
    }
    close(r->out);
    r->done(r->opaque, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
    free(r);
}

/* Run `qemu-img snapshot OP NAME FILE` (through the spawner helper: the
 * loop does not fork); done runs later, from the loop. */
static int img_snapshot(const char *op, const char *name, const char *file, img_done_fn done,
                        void *opaque, rv_err *err)
{
    img_run *r = calloc(1, sizeof(*r));
    char *qemu_img = rv_qemu_find_program("qemu-img");
    if (!r || !qemu_img) {
        free(r);
        free(qemu_img);
        return qemu_img || !r ? oom(err)
                              : fail(err, RV_ERR_OPERATION_FAILED,
                                     "operation failed: qemu-img (Debian: qemu-utils) is not installed");
    }
    r->out = memfd_create("qemu-img-output", MFD_CLOEXEC);
    r->done = done;
    r->opaque = opaque;
    char *argv[] = { qemu_img, "snapshot", (char *)op, (char *)name, (char *)file, NULL };
    int rc = r->out < 0 ? fail(err, RV_ERR_SYSTEM_ERROR, "cannot create a buffer for qemu-img: %s",
                               strerror(errno))
                        : rv_qemu_run(argv, r->out, -1, -1, img_exited, r, err);
    free(qemu_img);
    if (rc < 0) {
        if (r->out >= 0)
            close(r->out);
        free(r);
        return -1;
    }
    RV_DEBUG("qemu-img snapshot %s '%s' '%s'", op, name, file);
    return 0;
}

/* ================================================================ operations */

typedef enum { OP_CREATE, OP_REVERT, OP_DELETE } op_kind;

/* One snapshot call under way: what it does, its steps (one qemu-img run
 * per disk and name, or one monitor command per name), and the reply.
 *
 * Each operation has one commit point, the metadata file written with
 * the tree as the operation leaves it (docs/qemu-driver.md):
 * - create: first the metadata with the new snapshot in its trash (so a
 *   restart removes it from the disks), then the data (qemu-img -c or
 *   savevm), then the commit: the metadata with the snapshot listed.  A
 *   failure before the commit removes what the disks got and the trash
 *   entry: nothing changed.
 * - delete: first the commit: the metadata without the snapshots, which
 *   go to its trash; then their data (qemu-img -d or delvm), then the
 *   trash is emptied.  Nothing is deleted before the metadata that no
 *   longer lists it is durable; a restart finishes what is in the trash.
 * - revert: the commit is the metadata's new current snapshot, then the
 *   data (qemu-img -a or loadvm); if that fails, the current one is put
 *   back.
 * The tree in memory changes at the commit only. */
typedef enum { PH_PREPARE, PH_DATA, PH_COMMIT, PH_UNDO, PH_CLEANUP, PH_DONE } op_phase;

typedef struct snap_op {
    op_kind kind;
    op_phase phase;
    unsigned char uuid[16];             /* the domain: found again after each step */
    rv_deferred *reply;
    rv_snap_rec *rec;                   /* CREATE: the new snapshot */
    char **names;                       /* the snapshots whose data is acted on */
    size_t nnames, at_name;
    char **files;                       /* the writable qcow2 images */
    size_t nfiles, at_file;
    const char *img_op;                 /* "-c", "-a", "-d"; NULL: the monitor */
    const char *verb;                   /* the monitor's: savevm, loadvm, delvm */
    bool data_failed;                   /* a step failed (a delete goes on) */
    unsigned int flags;
    bool then_pause, then_resume;       /* REVERT of an active domain, after loadvm */
    rv_snap_tree cand;                  /* the tree as the commit leaves it */
    json_object *trash;                 /* the trash written with cand (owned) */
    json_object *revert_rec;            /* REVERT of a shut-off domain: written with
                                         * the commit, so that start-up finishes it */
    char *old_current;                  /* REVERT: to put back if the data fails;
                                         * DELETE: the snapshot named */
    rv_err failure;                     /* why a create is undone */
    rv_qemu_sync sync;                  /* the metadata's write */
} snap_op;

static void op_free(snap_op *op)
{
    rv_snap_rec_free(op->rec);
    for (size_t i = 0; i < op->nnames; i++)
        free(op->names[i]);
    free(op->names);
    for (size_t i = 0; i < op->nfiles; i++)
        free(op->files[i]);
    free(op->files);
    rv_snap_tree_clear(&op->cand);
    json_object_put(op->trash);
    json_object_put(op->revert_rec);
    free(op->old_current);
    rv_err_clear(&op->failure);
    rv_qemu_sync_forget(&op->sync);
    free(op);
}

static qemu_dom *op_dom(const snap_op *op)
{
    return rv_qemu_find_uuid(op->uuid);
}

static qsnaps *op_snaps(const snap_op *op)
{
    return rv_qemu_moments_find(&snap_kind, op->uuid);
}

static int put_snap(const qemu_dom *d, const char *name, rv_nonnull_domain_snapshot *wire,
                    rv_err *err)
{
    return rv_qemu_moments_put(d, name, &wire->name, &wire->dom, err);
}

static void on_metadata(rv_qemu_sync *s, int error);

/* Write the metadata of tree t with op->trash, off the loop (the file
 * goes when there is nothing to keep); op_next runs once it is durable. */
static int write_metadata(snap_op *op, const qemu_dom *d, const rv_snap_tree *t, rv_err *err)
{
    op->sync.done = on_metadata;
    op->sync.data = op;
    return rv_qemu_moments_write(&snap_kind, &op->sync, d, op->uuid, t, op->trash,
                                 op->phase == PH_COMMIT ? op->revert_rec : NULL, err);
}

static void op_next(snap_op *op, const rv_err *err);
static void op_step(snap_op *op);

static void on_metadata(rv_qemu_sync *s, int error)
{
    snap_op *op = s->data;
    rv_err err = { 0 };
    if (error)
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot write the snapshot metadata of domain '%s': %s",
                   op_dom(op) ? dom_name(op_dom(op)) : "(gone)",
                   error > 0 ? strerror(error) : "the store helper died");
    op_next(op, error ? &err : NULL);
    rv_err_clear(&err);
}

/* The commit: the tree (and trash) written becomes the domain's. */
static void swap_in(snap_op *op, qsnaps *q)
{
    rv_snap_tree_clear(&q->tree);
    q->tree = op->cand;
    memset(&op->cand, 0, sizeof(op->cand));
    json_object_put(q->trash);
    q->trash = json_object_get(op->trash);
}

static void reply(snap_op *op, const rv_err *err)
{
    qsnaps *q = op_snaps(op);
    if (q)
        q->busy = false;
    rv_deferred_finish(op->reply, err);
    op_free(op);
}

/* Data steps over names from the first, with the image or monitor verb. */
static void run_data(snap_op *op, op_phase phase, const char *img_op, const char *verb)
{
    op->phase = phase;
    op->img_op = img_op;
    op->verb = verb;
    op->at_name = op->at_file = 0;
    op_step(op);
}

/* A create goes back to before its commit: the disks lose the snapshot
 * (the steps that fail there had nothing to remove). */
static void undo_create(snap_op *op, const rv_err *why)
{
    rv_err_set(&op->failure, why->domain, why->code, "%s",
               why->message ? why->message : "operation failed");
    qemu_dom *d = op_dom(op);
    bool live = d && rv_qemu_dom_active(d);
    run_data(op, PH_UNDO, live ? NULL : "-d", live ? "delvm" : NULL);
}

/* Where the operation goes after a step (err: that step failed). */
static void op_next(snap_op *op, const rv_err *err)
{
    qemu_dom *d = op_dom(op);
    qsnaps *q = op_snaps(op);
    rv_err e = { 0 };
    if (!d || !q) {
        fail(&e, RV_ERR_OPERATION_FAILED, "operation failed: the domain went away meanwhile");
        reply(op, &e);
        rv_err_clear(&e);
        return;
    }
    const char *what = op->kind == OP_CREATE ? "snapshot-create"
                       : op->kind == OP_DELETE ? "snapshot-delete" : "snapshot-revert";
    switch (op->phase) {
    case PH_PREPARE:                    /* CREATE: the trash entry written */
        if (err) {
            reply(op, err);
            return;
        }
        json_object_put(q->trash);
        q->trash = json_object_get(op->trash);
        rv_crash_point(what, 2);
        run_data(op, PH_DATA, op->img_op, op->verb);
        return;
    case PH_DATA:
        if (op->kind == OP_CREATE) {
            if (err) {
                undo_create(op, err);
                return;
            }
            rv_crash_point(what, 3);
            /* The commit: listed, out of the trash. */
            rv_err_clear(&e);
            json_object *trash = rv_qemu_moments_trash_with(q->trash, op->names, op->nnames, NULL, 0, false);
            json_object_put(op->trash);
            op->trash = trash;
            if (rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, &e) < 0 || !trash ||
                rv_snap_tree_add(&op->cand, op->rec, MAX_SNAPSHOTS, &e) < 0) {
                if (!rv_err_is_set(&e))
                    oom(&e);
                undo_create(op, &e);
                rv_err_clear(&e);
                return;
            }
            op->rec = NULL;
            op->phase = PH_COMMIT;
            if (write_metadata(op, d, &op->cand, &e) < 0) {
                undo_create(op, &e);
                rv_err_clear(&e);
            }
            return;
        }
        if (op->kind == OP_REVERT) {
            if (err) {
                /* The current snapshot goes back (if that write fails,
                 * it stays the one asked for). */
                rv_err_set(&op->failure, err->domain, err->code, "%s", err->message);
                rv_snap_tree_clear(&op->cand);
                if (rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, &e) == 0) {
                    op->cand.current = op->old_current ? rv_snap_tree_find(&op->cand, op->old_current)
                                                       : NULL;
                    op->phase = PH_UNDO;
                    if (write_metadata(op, d, &op->cand, &e) == 0)
                        return;
                }
                rv_err_clear(&e);
                reply(op, &op->failure);
                return;
            }
            RV_INFO("domain '%s': reverted to snapshot '%s'", dom_name(d), q->tree.current->name);
            rv_crash_point(what, 3);
            /* The disks are reverted: the record of it goes. */
            rv_snap_tree_clear(&op->cand);
            op->phase = PH_CLEANUP;
            if (op->revert_rec && rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, &e) == 0 &&
                write_metadata(op, d, &op->cand, &e) == 0)
                return;
            rv_err_clear(&e);
            reply(op, NULL);
            return;
        }
        /* DELETE: committed; the trash goes once the data has. */
        rv_crash_point(what, 3);
        if (op->nnames == 0) {
            reply(op, NULL);
            return;
        }
        if (op->data_failed) {
            RV_WARN("domain '%s': snapshot '%s' deleted, but not from every disk: what is left "
                    "is removed when remvirtd starts again", dom_name(d), op->old_current);
            reply(op, NULL);
            return;
        }
        json_object *left = rv_qemu_moments_trash_with(q->trash, op->names, op->nnames, NULL, 0, false);
        if (!left) {
            reply(op, NULL);
            return;
        }
        json_object_put(op->trash);
        op->trash = left;
        rv_snap_tree_clear(&op->cand);
        op->phase = PH_CLEANUP;
        if (rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, &e) < 0 ||
            write_metadata(op, d, &op->cand, &e) < 0) {
            RV_WARN("domain '%s': %s", dom_name(d), e.message);
            rv_err_clear(&e);
            reply(op, NULL);
        }
        return;
    case PH_COMMIT:
        if (op->kind == OP_CREATE) {
            if (err) {
                undo_create(op, err);
                return;
            }
            swap_in(op, q);
            rv_crash_point(what, 4);
            rv_domain_snapshot_create_xml_ret *ret = rv_deferred_ret(op->reply);
            const char *name = op->names[0];
            RV_INFO("domain '%s': snapshot '%s' taken", dom_name(d), name);
            reply(op, put_snap(d, name, &ret->snap, &e) < 0 ? &e : NULL);
            rv_err_clear(&e);
            return;
        }
        /* DELETE and REVERT: the metadata first. */
        if (err) {
            reply(op, err);
            return;
        }
        swap_in(op, q);
        rv_crash_point(what, 2);
        if (op->kind == OP_DELETE)
            RV_INFO("domain '%s': snapshot '%s' deleted (flags 0x%x)", dom_name(d),
                    op->old_current, op->flags);
        run_data(op, PH_DATA, op->img_op, op->verb);
        return;
    case PH_UNDO:
        if (op->kind == OP_CREATE) {
            /* The disks are clean: the trash entry goes (if this write
             * fails too, a restart removes what it names). */
            json_object *kept = rv_qemu_moments_trash_with(q->trash, op->names, op->nnames, NULL, 0, false);
            json_object_put(op->trash);
            op->trash = kept;
            rv_snap_tree_clear(&op->cand);
            op->phase = PH_CLEANUP;
            if (kept && rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, &e) == 0 &&
                write_metadata(op, d, &op->cand, &e) == 0)
                return;
            rv_err_clear(&e);
            reply(op, &op->failure);
            return;
        }
        /* REVERT: the current one written back. */
        if (!err)
            swap_in(op, q);
        reply(op, &op->failure);
        return;
    case PH_CLEANUP:
        if (op->kind == OP_CREATE) {
            if (!err)
                swap_in(op, q);
            reply(op, &op->failure);
            return;
        }
        if (err)
            RV_WARN("domain '%s': %s", dom_name(d), err->message);
        else
            swap_in(op, q);
        rv_crash_point(what, 4);
        reply(op, NULL);
        return;
    case PH_DONE:
        break;
    }
}

static void on_img_done(void *opaque, const rv_err *err)
{
    snap_op *op = opaque;
    if (err && op->phase == PH_DATA && op->kind != OP_DELETE) {
        op_next(op, err);
        return;
    }
    if (err) {
        /* Undoing a create, or deleting: the rest goes on. */
        RV_DEBUG("snapshot step failed: %s", err->message);
        op->data_failed = true;
    }
    if (++op->at_file == op->nfiles) {
        op->at_file = 0;
        op->at_name++;
    }
    op_step(op);
}

static void on_monitor_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    snap_op *op = opaque;
    rv_err failure = { 0 };
    /* HMP answers with text: nothing when all went well, else what failed. */
    const char *text = !err && json_object_is_type(ret, json_type_string)
                           ? json_object_get_string(ret) : "";
    if (err)
        rv_err_set(&failure, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   err->message ? err->message : "QEMU monitor failed");
    else if (text[0])
        rv_err_set(&failure, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %.*s",
                   (int)strcspn(text, "\r\n"), text);
    if (rv_err_is_set(&failure) && op->phase == PH_DATA && op->kind != OP_DELETE) {
        op_next(op, &failure);
        rv_err_clear(&failure);
        return;
    }
    op->data_failed |= rv_err_is_set(&failure);
    rv_err_clear(&failure);
    op->at_name++;
    op_step(op);
}

static void on_state_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    snap_op *op = opaque;
    op->then_pause = op->then_resume = false;
    if (err)
        RV_WARN("snapshot-revert: %s", err->message ? err->message : "QEMU refused");
    op_next(op, NULL);
}

/* The next data step: the next disk of the current snapshot name, the
 * next name, or the end. */
static void op_step(snap_op *op)
{
    rv_err err = { 0 };
    qemu_dom *d = op_dom(op);
    if (op->at_name == op->nnames || (op->img_op && op->nfiles == 0)) {
        if (op->phase == PH_DATA && d && d->qmp && (op->then_pause || op->then_resume)) {
            if (rv_qmp_command(d->qmp, op->then_pause ? "stop" : "cont", NULL, 0, on_state_done,
                               op, &err) == 0)
                return;
            RV_WARN("snapshot-revert: %s", err.message);
            rv_err_clear(&err);
        }
        op_next(op, NULL);
        return;
    }
    const char *name = op->names[op->at_name];
    if (op->img_op) {
        if (img_snapshot(op->img_op, name, op->files[op->at_file], on_img_done, op, &err) < 0) {
            on_img_done(op, &err);
            rv_err_clear(&err);
        }
        return;
    }
    json_object *args = json_object_new_object();
    char *line = NULL;
    if (!d || !d->qmp || asprintf(&line, "%s %s", op->verb, name) < 0) {
        json_object_put(args);
        fail(&err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain is not running");
        on_monitor_done(NULL, NULL, &err, op);
        rv_err_clear(&err);
        return;
    }
    json_object_object_add(args, "command-line", json_object_new_string(line));
    free(line);
    if (rv_qmp_command(d->qmp, "human-monitor-command", args, MONITOR_TIMEOUT, on_monitor_done,
                       op, &err) < 0) {
        on_monitor_done(NULL, NULL, &err, op);
        rv_err_clear(&err);
    }
}

/* What every operation checks first: the domain is not busy, and for the
 * data part its qcow2 images (a shut-off domain) or its monitor. */
static snap_op *op_new(qemu_dom *d, qsnaps *q, op_kind kind, rv_err *err)
{
    if (rv_qemu_moments_busy(d, q, err) < 0)
        return NULL;
    snap_op *op = calloc(1, sizeof(*op));
    if (!op) {
        oom(err);
        return NULL;
    }
    op->kind = kind;
    memcpy(op->uuid, q->uuid, 16);
    return op;
}

/* The images a shut-off domain's internal snapshots live in: every
 * writable disk, each of which must be qcow2. */
static int take_files(const qemu_dom *d, snap_op *op, rv_err *err)
{
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    op->files = calloc(def->ndisks + 1, sizeof(*op->files));
    if (!op->files)
        return oom(err);
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        if (disk->device == RV_QEMU_DISK_CDROM || disk->readonly || !disk->source)
            continue;
        if (!(op->files[op->nfiles++] = strdup(disk->source)))
            return oom(err);
    }
    return 0;
}

/* Internal snapshots need every writable disk in qcow2, and one at least. */
static int check_disks(const qemu_dom *d, rv_err *err)
{
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    size_t writable = 0;
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        if (disk->device == RV_QEMU_DISK_CDROM || disk->readonly || !disk->source)
            continue;
        if (disk->format != RV_QEMU_FORMAT_QCOW2) {
            rv_err_set(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: internal snapshot for disk %s unsupported "
                       "for storage type raw (only qcow2 images hold internal snapshots)",
                       disk->target);
            return -1;
        }
        writable++;
    }
    if (!writable) {
        rv_err_set(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported configuration: domain '%s' has no writable qcow2 disk to hold "
                   "an internal snapshot", def->name);
        return -1;
    }
    return 0;
}

/* QEMU's monitor and qemu-img read the name as a word: keep it one. */
static int check_name(const char *name, rv_err *err)
{
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("._+:-", *p)))
            return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: snapshot name '%s': the QEMU driver takes "
                        "letters, digits and . _ + : - only", name);
    if (name[0] == '-' || strlen(name) > 128)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: snapshot name '%s' may not begin with '-' or "
                    "be longer than 128 characters", name);
    return 0;
}

/* Start op (its steps set) with the call deferred; RV_DEFERRED or -1. */
static int op_start(snap_op *op, qemu_dom *d, qsnaps *q, rv_err *err)
{
    const char *what = op->kind == OP_CREATE ? "snapshot-create"
                       : op->kind == OP_DELETE ? "snapshot-delete" : "snapshot-revert";
    if (!op->trash || !(op->reply = rv_driver_defer(err))) {
        if (!op->trash)
            oom(err);
        op_free(op);
        return -1;
    }
    q->busy = true;
    rv_crash_point(what, 1);
    rv_err e = { 0 };
    /* A create writes its trash entry first, the others their commit. */
    if (write_metadata(op, d, op->kind == OP_CREATE ? &q->tree : &op->cand, &e) < 0) {
        reply(op, &e);
        rv_err_clear(&e);
    }
    return RV_DEFERRED;
}

/* ================================================================ slots */

static qemu_dom *dom_and_snaps(const rv_nonnull_domain *wire, qsnaps **q, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    return d && (*q = snaps_of(d, err)) ? d : NULL;
}

static rv_snap_rec *snap_get(const rv_nonnull_domain_snapshot *wire, qemu_dom **dp, qsnaps **qp,
                             rv_err *err)
{
    if (!(*dp = dom_and_snaps(&wire->dom, qp, err)))
        return NULL;
    rv_snap_rec *s = rv_snap_tree_find(&(*qp)->tree, wire->name);
    if (!s)
        fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
             "Domain snapshot not found: no domain snapshot with matching name '%s'", wire->name);
    return s;
}

/* A disk-only external snapshot (qemu_blockjob.c makes the overlays):
 * of a running domain, and without metadata (NO_METADATA, as nova asks
 * for it): the snapshot list never holds it. */
static int create_disk_only(const rv_domain_snapshot_create_xml_args *args,
                            rv_domain_snapshot_create_xml_ret *ret, rv_err *err)
{
    enum { NO_METADATA = RV_DOMAIN_SNAPSHOT_CREATE_NO_METADATA, REUSE_EXT = RV_DOMAIN_SNAPSHOT_CREATE_REUSE_EXT,
           QUIESCE = RV_DOMAIN_SNAPSHOT_CREATE_QUIESCE };
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            CREATE_FLAGS | RV_DOMAIN_SNAPSHOT_CREATE_DISK_ONLY | NO_METADATA | REUSE_EXT | QUIESCE,
                            "qemuDomainSnapshotCreateXML", err) < 0)
        return -1;
    /* libvirtd's answer when the guest has no agent channel (nova then
     * asks again without QUIESCE). */
    if (args->flags & QUIESCE)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: QEMU guest agent is not configured");
    if (!(args->flags & NO_METADATA))
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: disk-only snapshots are taken without metadata only "
                    "(NO_METADATA, virsh --no-metadata)");
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (!rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: disk-only snapshots of a shut-off domain are not supported here");
    rv_snapshot_request req;
    if (rv_snapshot_request_parse(args->xml_desc, &req, err) < 0)
        return -1;
    char *name = req.name;
    if (!name && asprintf(&name, "%lld", (long long)time(NULL)) < 0)
        name = NULL;
    int rc = !name ? oom(err) : req.memory && strcmp(req.memory, "no") != 0
        ? fail(err, RV_ERR_CONFIG_UNSUPPORTED,
               "unsupported configuration: disk-only snapshot must not save memory")
        : check_name(name, err) < 0 ? -1
        : rv_qemu_blockjob_snapshot(d, &req, name, args->flags & REUSE_EXT, ret, err);
    if (name != req.name)
        free(name);
    rv_snapshot_request_clear(&req);
    return rc;
}

int rv_qemu_domain_snapshot_create_xml(rv_driver_conn *c,
                                       const rv_domain_snapshot_create_xml_args *args,
                                       rv_domain_snapshot_create_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    qsnaps *q;
    qemu_dom *d;
    rv_snapshot_request req;
    if (args->flags & RV_DOMAIN_SNAPSHOT_CREATE_DISK_ONLY)
        return create_disk_only(args, ret, err);
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, CREATE_FLAGS, "qemuDomainSnapshotCreateXML", err) < 0 ||
        !(d = dom_and_snaps(&args->dom, &q, err)) ||
        rv_snapshot_request_parse(args->xml_desc, &req, err) < 0)
        return -1;
    snap_op *op = NULL;
    rv_snap_rec *s = rv_snap_rec_new(&req, rv_qemu_domain_format(rv_qemu_dom_def(d)));
    int rc = s ? 0 : oom(err);
    if (rc == 0)
        s->state = rv_qemu_dom_active(d) ? (d->state == RV_DOMAIN_PAUSED ? RV_DOMAIN_PAUSED
                                                                       : RV_DOMAIN_RUNNING)
                                         : RV_DOMAIN_SHUTOFF;
    if (rc == 0 && req.memory && strcmp(req.memory, "internal") != 0 &&
        !(strcmp(req.memory, "no") == 0 && s->state == RV_DOMAIN_SHUTOFF))
        rc = fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                  "unsupported configuration: memory snapshot mode '%s' is not supported: the "
                  "QEMU driver takes internal snapshots only", req.memory);
    for (size_t i = 0; rc == 0 && i < req.ndisks; i++)
        if (req.disks[i].snapshot && strcmp(req.disks[i].snapshot, "internal") != 0)
            rc = fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                      "unsupported configuration: disk '%s' must use snapshot mode 'internal'",
                      req.disks[i].name ? req.disks[i].name : "");
    rv_snapshot_request_clear(&req);
    if (rc == 0 && (check_name(s->name, err) < 0 || check_disks(d, err) < 0))
        rc = -1;
    if (rc == 0 && rv_snap_tree_find(&q->tree, s->name))
        rc = fail(err, RV_ERR_OPERATION_FAILED, "operation failed: domain moment %s already exists",
                  s->name);
    if (rc == 0 && rv_qemu_moments_in_trash(q->trash, s->name))
        rc = fail(err, RV_ERR_OPERATION_INVALID,
                  "Requested operation is not valid: snapshot '%s' is still being removed from "
                  "the disks", s->name);
    if (rc == 0 && q->tree.n >= MAX_SNAPSHOTS)
        rc = fail(err, RV_ERR_OPERATION_FAILED,
                  "operation failed: a domain may have at most %d snapshots here", MAX_SNAPSHOTS);
    /* The disks as the snapshot lists them. */
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    if (rc == 0 && def->ndisks && !(s->disks = calloc(def->ndisks, sizeof(*s->disks))))
        rc = oom(err);
    for (size_t i = 0; rc == 0 && i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        bool skip = disk->device == RV_QEMU_DISK_CDROM || disk->readonly || !disk->source;
        if (!(s->disks[i].name = strdup(disk->target)))
            rc = oom(err);
        s->disks[i].snapshot = (char *)(skip ? rv_snap_mode_no : rv_snap_mode_internal);
        s->ndisks += rc == 0;
    }
    if (rc == 0 && !(op = op_new(d, q, OP_CREATE, err)))
        rc = -1;
    if (rc == 0 && (!(op->names = calloc(1, sizeof(*op->names))) ||
                    !(op->names[0] = strdup(s->name))))
        rc = oom(err);
    if (op)
        op->nnames = op->names && op->names[0] ? 1 : 0;
    if (rc == 0) {
        op->img_op = s->state == RV_DOMAIN_SHUTOFF ? "-c" : NULL;
        op->verb = "savevm";
        op->phase = PH_PREPARE;
        rc = take_files(d, op, err);
    }
    if (rc == 0)
        op->trash = rv_qemu_moments_trash_with(q->trash, op->names, op->nnames, op->files, op->nfiles, true);
    if (rc < 0) {
        rv_snap_rec_free(s);
        if (op)
            op_free(op);
        return -1;
    }
    op->rec = s;
    return op_start(op, d, q, err);
}

int rv_qemu_domain_revert_to_snapshot(rv_driver_conn *c,
                                      const rv_domain_revert_to_snapshot_args *args, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s;
    unsigned int flags = args->flags;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, REVERT_FLAGS, "qemuDomainRevertToSnapshot", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    bool active = rv_qemu_dom_active(d), running_snap = s->state != RV_DOMAIN_SHUTOFF;
    if (active && !running_snap)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: snapshot '%s' was taken with the domain shut off: "
                    "destroy domain '%s' before reverting to it", s->name, dom_name(d));
    if (!active && running_snap)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: snapshot '%s' holds a running domain's memory: "
                    "start domain '%s' before reverting to it", s->name, dom_name(d));
    if (check_disks(d, err) < 0)
        return -1;
    snap_op *op = op_new(d, q, OP_REVERT, err);
    if (!op)
        return -1;
    op->flags = flags;
    if (!(op->names = calloc(1, sizeof(*op->names))) || !(op->names[0] = strdup(s->name))) {
        op_free(op);
        return oom(err);
    }
    op->nnames = 1;
    op->phase = PH_COMMIT;
    op->verb = "loadvm";
    if (q->tree.current && !(op->old_current = strdup(q->tree.current->name))) {
        op_free(op);
        return oom(err);
    }
    if (rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, err) < 0) {
        op_free(op);
        return -1;
    }
    op->cand.current = rv_snap_tree_find(&op->cand, s->name);
    op->trash = json_object_get(q->trash ? q->trash : NULL);
    if (!op->trash)
        op->trash = json_object_new_array();
    if (active) {
        bool want_paused = !(flags & RV_DOMAIN_SNAPSHOT_REVERT_RUNNING) &&
                           ((flags & RV_DOMAIN_SNAPSHOT_REVERT_PAUSED) ||
                            s->state == RV_DOMAIN_PAUSED);
        op->then_pause = want_paused && d->state == RV_DOMAIN_RUNNING;
        op->then_resume = !want_paused && d->state == RV_DOMAIN_PAUSED;
    } else {
        op->img_op = "-a";
        if (take_files(d, op, err) < 0) {
            op_free(op);
            return -1;
        }
        json_object *rec = rv_qemu_moments_trash_with(NULL, op->names, 1, op->files, op->nfiles, true);
        op->revert_rec = rec ? json_object_get(json_object_array_get_idx(rec, 0)) : NULL;
        json_object_put(rec);
        if (!op->revert_rec) {
            op_free(op);
            return oom(err);
        }
    }
    return op_start(op, d, q, err);
}

int rv_qemu_domain_snapshot_delete(rv_driver_conn *c, const rv_domain_snapshot_delete_args *args,
                                   rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s;
    unsigned int flags = args->flags;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, DELETE_FLAGS, "qemuDomainSnapshotDelete", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    if ((flags & RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN) &&
        (flags & RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY))
        return fail(err, RV_ERR_INVALID_ARG,
                    "Flags 'VIR_DOMAIN_SNAPSHOT_DELETE_CHILDREN' and "
                    "'VIR_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY' are mutually exclusive");
    snap_op *op = op_new(d, q, OP_DELETE, err);
    if (!op)
        return -1;
    op->flags = flags;
    op->phase = PH_COMMIT;
    op->verb = "delvm";
    bool data = !(flags & RV_DOMAIN_SNAPSHOT_DELETE_METADATA_ONLY);
    /* The tree as the commit leaves it, and the names whose data goes
     * (to the trash first). */
    unsigned char *doomed = NULL;
    int rc = rv_qemu_moments_copy(op->uuid, &q->tree, &op->cand, err);
    rv_snap_rec *cs = rc == 0 ? rv_snap_tree_find(&op->cand, s->name) : NULL;
    if (rc == 0 && (!(doomed = rv_snap_tree_doomed(&op->cand, cs, flags)) ||
                    !(op->names = calloc(op->cand.n + 1, sizeof(*op->names))) ||
                    !(op->old_current = strdup(s->name))))
        rc = oom(err);
    for (size_t i = 0; rc == 0 && data && i < op->cand.n; i++)
        if (doomed[i] && !(op->names[op->nnames++] = strdup(op->cand.items[i]->name)))
            rc = oom(err);
    if (rc == 0)
        rv_snap_tree_remove(&op->cand, cs, doomed, flags);
    free(doomed);
    if (rc == 0 && data && check_disks(d, err) < 0)
        rc = -1;
    if (rc == 0 && data) {
        op->img_op = rv_qemu_dom_active(d) ? NULL : "-d";
        rc = take_files(d, op, err);
    }
    if (rc == 0)
        op->trash = rv_qemu_moments_trash_with(q->trash, op->names, op->nnames, op->files, op->nfiles, true);
    if (rc < 0) {
        op_free(op);
        return -1;
    }
    return op_start(op, d, q, err);
}

int rv_qemu_domain_snapshot_get_xml_desc(rv_driver_conn *c,
                                         const rv_domain_snapshot_get_xml_desc_args *args,
                                         rv_domain_snapshot_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_XML_SECURE, "qemuDomainSnapshotGetXMLDesc", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    ret->xml = rv_snap_rec_format(s);
    return rv_string_result(ret->xml ? 0 : oom(err), &ret->xml, err);
}

int rv_qemu_domain_snapshot_num(rv_driver_conn *c, const rv_domain_snapshot_num_args *args,
                                rv_domain_snapshot_num_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    rv_snap_rec **list = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainSnapshotNum", err) < 0 ||
        !dom_and_snaps(&args->dom, &q, err))
        return -1;
    int n = rv_snap_tree_collect(&q->tree, NULL, args->flags, &list);
    free(list);
    if (n < 0)
        return oom(err);
    ret->num = n;
    return 0;
}

static int put_names(rv_snap_rec **list, int n, int max, char ***val, u_int *len, rv_err *err)
{
    if (max < 0 || max > RV_DOMAIN_SNAPSHOT_LIST_MAX)
        return fail(err, RV_ERR_RPC, "maxnames %d is outside 0..%d", max,
                    RV_DOMAIN_SNAPSHOT_LIST_MAX);
    if (n > max)
        n = max;
    *val = n > 0 ? calloc((size_t)n, sizeof(**val)) : NULL;
    if (n > 0 && !*val)
        return oom(err);
    for (int i = 0; i < n; i++) {
        if (!((*val)[i] = strdup(list[i]->name)))
            return oom(err);            /* the dispatcher frees what was put */
        *len = (u_int)i + 1;
    }
    return 0;
}

int rv_qemu_domain_snapshot_list_names(rv_driver_conn *c,
                                       const rv_domain_snapshot_list_names_args *args,
                                       rv_domain_snapshot_list_names_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    rv_snap_rec **list = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainSnapshotListNames", err) < 0 ||
        !dom_and_snaps(&args->dom, &q, err))
        return -1;
    int n = rv_snap_tree_collect(&q->tree, NULL, args->flags, &list);
    int rc = n < 0 ? oom(err) : put_names(list, n, args->maxnames, &ret->names.names_val,
                                          &ret->names.names_len, err);
    free(list);
    return rc;
}

int rv_qemu_domain_snapshot_list_children_names(rv_driver_conn *c,
    const rv_domain_snapshot_list_children_names_args *args,
                                                rv_domain_snapshot_list_children_names_ret *ret,
                                                rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s, **list = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainSnapshotListChildrenNames", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    int n = rv_snap_tree_collect(&q->tree, s, args->flags, &list);
    int rc = n < 0 ? oom(err) : put_names(list, n, args->maxnames, &ret->names.names_val,
                                          &ret->names.names_len, err);
    free(list);
    return rc;
}

int rv_qemu_domain_snapshot_lookup_by_name(rv_driver_conn *c,
                                           const rv_domain_snapshot_lookup_by_name_args *args,
                                           rv_domain_snapshot_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSnapshotLookupByName", err) < 0 ||
        !(d = dom_and_snaps(&args->dom, &q, err)))
        return -1;
    if (!rv_snap_tree_find(&q->tree, args->name))
        return fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
                    "Domain snapshot not found: no domain snapshot with matching name '%s'",
                    args->name);
    return put_snap(d, args->name, &ret->snap, err);
}

int rv_qemu_domain_has_current_snapshot(rv_driver_conn *c,
                                        const rv_domain_has_current_snapshot_args *args,
                                        rv_domain_has_current_snapshot_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainHasCurrentSnapshot", err) < 0 ||
        !dom_and_snaps(&args->dom, &q, err))
        return -1;
    ret->result = q->tree.current != NULL;
    return 0;
}

int rv_qemu_domain_snapshot_current(rv_driver_conn *c, const rv_domain_snapshot_current_args *args,
                                    rv_domain_snapshot_current_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSnapshotCurrent", err) < 0 ||
        !(d = dom_and_snaps(&args->dom, &q, err)))
        return -1;
    if (!q->tree.current)
        return fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
                    "Domain snapshot not found: the domain does not have a current snapshot");
    return put_snap(d, q->tree.current->name, &ret->snap, err);
}

int rv_qemu_domain_snapshot_get_parent(rv_driver_conn *c,
                                       const rv_domain_snapshot_get_parent_args *args,
                                       rv_domain_snapshot_get_parent_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSnapshotGetParent", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    if (!s->parent)
        return fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
                    "Domain snapshot not found: snapshot '%s' does not have a parent", s->name);
    return put_snap(d, s->parent->name, &ret->snap, err);
}

int rv_qemu_domain_snapshot_num_children(rv_driver_conn *c,
                                         const rv_domain_snapshot_num_children_args *args,
                                         rv_domain_snapshot_num_children_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s, **list = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainSnapshotNumChildren", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    int n = rv_snap_tree_collect(&q->tree, s, args->flags, &list);
    free(list);
    if (n < 0)
        return oom(err);
    ret->num = n;
    return 0;
}

int rv_qemu_domain_snapshot_is_current(rv_driver_conn *c,
                                       const rv_domain_snapshot_is_current_args *args,
                                       rv_domain_snapshot_is_current_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSnapshotIsCurrent", err) < 0 ||
        !(s = snap_get(&args->snap, &d, &q, err)))
        return -1;
    ret->current = q->tree.current == s;
    return 0;
}

int rv_qemu_domain_snapshot_has_metadata(rv_driver_conn *c,
                                         const rv_domain_snapshot_has_metadata_args *args,
                                         rv_domain_snapshot_has_metadata_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSnapshotHasMetadata", err) < 0 ||
        !snap_get(&args->snap, &d, &q, err))
        return -1;
    ret->metadata = 1;
    return 0;
}

static int put_list(const qemu_dom *d, rv_snap_rec **list, int n, int need,
                    rv_nonnull_domain_snapshot **val, u_int *len, int *count, rv_err *err)
{
    *count = n;
    if (!need || n == 0)
        return 0;
    if (!(*val = calloc((size_t)n, sizeof(**val))))
        return oom(err);
    for (int i = 0; i < n; i++) {
        *len = (u_int)i + 1;            /* the dispatcher frees what was put */
        if (put_snap(d, list[i]->name, &(*val)[i], err) < 0)
            return -1;
    }
    return 0;
}

int rv_qemu_domain_list_all_snapshots(rv_driver_conn *c,
                                      const rv_domain_list_all_snapshots_args *args,
                                      rv_domain_list_all_snapshots_ret *ret, rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec **list = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainListAllSnapshots", err) < 0 ||
        !(d = dom_and_snaps(&args->dom, &q, err)))
        return -1;
    int n = rv_snap_tree_collect(&q->tree, NULL, args->flags, &list);
    int rc = n < 0 ? oom(err) : put_list(d, list, n, args->need_results,
                                         &ret->snapshots.snapshots_val,
                                         &ret->snapshots.snapshots_len, &ret->ret, err);
    free(list);
    return rc;
}

int rv_qemu_domain_snapshot_list_all_children(rv_driver_conn *c,
                                              const rv_domain_snapshot_list_all_children_args *args,
                                              rv_domain_snapshot_list_all_children_ret *ret,
                                              rv_err *err)
{
    (void)c;
    qsnaps *q;
    qemu_dom *d;
    rv_snap_rec *s, **list = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, LIST_FLAGS, "qemuDomainSnapshotListAllChildren", err) < 0 ||
        !(s = snap_get(&args->snapshot, &d, &q, err)))
        return -1;
    int n = rv_snap_tree_collect(&q->tree, s, args->flags, &list);
    int rc = n < 0 ? oom(err) : put_list(d, list, n, args->need_results,
                                         &ret->snapshots.snapshots_val,
                                         &ret->snapshots.snapshots_len, &ret->ret, err);
    free(list);
    return rc;
}
