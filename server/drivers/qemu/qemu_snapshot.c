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
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_snapshot.h"
#include "server/drivers/conf/snapshot_tree.h"

RV_LOG_CATEGORY("drivers.qemu.snapshot");

enum {
    MAX_SNAPSHOTS = 256,                /* per domain: each one holds a domain's XML */
    METADATA_MAX = 16 * 1024 * 1024,    /* the bytes of one domain's metadata file */
    OUTPUT_MAX = 2048,                  /* what is kept of qemu-img's messages */
    CREATE_FLAGS = RV_DOMAIN_SNAPSHOT_CREATE_ATOMIC | RV_DOMAIN_SNAPSHOT_CREATE_VALIDATE,
    LIST_FLAGS = 0x7ff,
    REVERT_FLAGS = RV_DOMAIN_SNAPSHOT_REVERT_RUNNING | RV_DOMAIN_SNAPSHOT_REVERT_PAUSED |
                   RV_DOMAIN_SNAPSHOT_REVERT_FORCE,
    DELETE_FLAGS = RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN | RV_DOMAIN_SNAPSHOT_DELETE_METADATA_ONLY |
                   RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY,
};
#define MONITOR_TIMEOUT 600.0           /* seconds a savevm may take */

/* One domain's snapshots, by its uuid (its name names the file). */
typedef struct qsnaps {
    unsigned char uuid[16];
    rv_snap_tree tree;
    bool busy;                          /* an operation is under way */
    struct qsnaps *next;
} qsnaps;

static qsnaps *all_snaps;

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static const char *dom_name(const qemu_dom *d)
{
    return rv_qemu_dom_def(d)->name;
}

/* ================================================================ the metadata file */

static char *metadata_path(const char *name)
{
    char *dir = rv_qemu_path(rv_qemu.config_dir, "snapshot", "");
    char *path = dir ? rv_qemu_path(dir, name, ".json") : NULL;
    free(dir);
    return path;
}

static json_object *rec_to_json(const rv_snap_rec *s)
{
    json_object *o = json_object_new_object(), *disks = json_object_new_array();
    json_object_object_add(o, "name", json_object_new_string(s->name));
    if (s->description)
        json_object_object_add(o, "description", json_object_new_string(s->description));
    json_object_object_add(o, "created", json_object_new_int64(s->created));
    json_object_object_add(o, "state", json_object_new_int(s->state));
    if (s->parent)
        json_object_object_add(o, "parent", json_object_new_string(s->parent->name));
    json_object_object_add(o, "domain", json_object_new_string(s->dom_xml));
    for (size_t i = 0; i < s->ndisks; i++) {
        json_object *disk = json_object_new_object();
        json_object_object_add(disk, "name", json_object_new_string(s->disks[i].name));
        json_object_object_add(disk, "snapshot", json_object_new_string(s->disks[i].snapshot));
        json_object_array_add(disks, disk);
    }
    json_object_object_add(o, "disks", disks);
    return o;
}

/* Write the domain's metadata (or remove the file when there is none). */
static int save_metadata(const qemu_dom *d, const qsnaps *q, rv_err *err)
{
    char *path = metadata_path(dom_name(d));
    if (!path)
        return oom(err);
    if (q->tree.n == 0) {
        unlink(path);
        free(path);
        return 0;
    }
    json_object *root = json_object_new_object(), *list = json_object_new_array();
    for (size_t i = 0; i < q->tree.n; i++)
        json_object_array_add(list, rec_to_json(q->tree.items[i]));
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(q->uuid, uuid);
    json_object_object_add(root, "uuid", json_object_new_string(uuid));
    json_object_object_add(root, "snapshots", list);
    if (q->tree.current)
        json_object_object_add(root, "current", json_object_new_string(q->tree.current->name));
    char *dir = rv_qemu_path(rv_qemu.config_dir, "snapshot", "");
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
    int rc = !dir || !text ? oom(err) : rv_qemu_mkdirs(dir, err);
    if (rc == 0)
        rc = rv_qemu_write_file(path, text, true, err);
    json_object_put(root);
    free(dir);
    free(path);
    return rc;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v) : NULL;
}

static rv_snap_rec *rec_from_json(json_object *o, const rv_snap_tree *t)
{
    const char *name = get_str(o, "name"), *xml = get_str(o, "domain");
    const char *parent = get_str(o, "parent"), *description = get_str(o, "description");
    json_object *v = NULL, *disks = NULL;
    if (!name || !xml || rv_snap_tree_find(t, name) ||
        !json_object_object_get_ex(o, "disks", &disks) ||
        !json_object_is_type(disks, json_type_array))
        return NULL;
    rv_snap_rec *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->name = strdup(name);
    s->dom_xml = strdup(xml);
    s->description = description ? strdup(description) : NULL;
    s->created = json_object_object_get_ex(o, "created", &v) ? json_object_get_int64(v) : 0;
    s->state = json_object_object_get_ex(o, "state", &v) ? json_object_get_int(v)
                                                          : RV_DOMAIN_SHUTOFF;
    if (s->state != RV_DOMAIN_RUNNING && s->state != RV_DOMAIN_PAUSED)
        s->state = RV_DOMAIN_SHUTOFF;
    s->parent = parent ? rv_snap_tree_find(t, parent) : NULL;
    size_t n = json_object_array_length(disks);
    s->disks = n ? calloc(n, sizeof(*s->disks)) : NULL;
    bool ok = s->name && s->dom_xml && (!description || s->description) && (!n || s->disks) &&
              (!parent || s->parent);
    for (size_t i = 0; ok && i < n; i++) {
        json_object *disk = json_object_array_get_idx(disks, i);
        const char *dn = get_str(disk, "name"), *mode = get_str(disk, "snapshot");
        if (!dn || !mode || !(s->disks[i].name = strdup(dn))) {
            ok = false;
            break;
        }
        s->disks[i].snapshot = (char *)(strcmp(mode, "internal") == 0 ? rv_snap_mode_internal
                                                                       : rv_snap_mode_no);
        s->ndisks++;
    }
    if (!ok) {
        rv_snap_rec_free(s);
        return NULL;
    }
    return s;
}

/* The domain's metadata file into q->tree; a missing file is no snapshots,
 * a damaged one is logged and read as far as it goes. */
static void load_metadata(const qemu_dom *d, qsnaps *q)
{
    char *path = metadata_path(dom_name(d));
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    char *text = fd >= 0 ? malloc(METADATA_MAX + 1) : NULL;
    size_t len = 0;
    ssize_t got = 1;
    while (text && len < METADATA_MAX && (got = read(fd, text + len, METADATA_MAX - len)) > 0)
        len += (size_t)got;
    if (fd >= 0)
        close(fd);
    json_object *root = text && got >= 0 && len < METADATA_MAX
                            ? (text[len] = '\0', json_tokener_parse(text)) : NULL;
    if (fd >= 0 && !root)
        RV_WARN("domain '%s': cannot read the snapshot metadata '%s'", dom_name(d), path);
    /* A file left by an earlier domain of the same name is not this one's. */
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(q->uuid, uuid);
    const char *owner = root ? get_str(root, "uuid") : NULL;
    if (root && (!owner || strcmp(owner, uuid) != 0)) {
        RV_WARN("domain '%s': '%s' belongs to domain %s, not to this one (%s): ignored",
                dom_name(d), path, owner ? owner : "(none)", uuid);
        json_object_put(root);
        root = NULL;
    }
    json_object *list = NULL;
    if (root && json_object_object_get_ex(root, "snapshots", &list) &&
        json_object_is_type(list, json_type_array)) {
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n && i < MAX_SNAPSHOTS; i++) {
            rv_snap_rec *s = rec_from_json(json_object_array_get_idx(list, i), &q->tree);
            rv_snap_rec *parent = s ? s->parent : NULL;
            q->tree.current = parent;       /* add() hangs s under the current one */
            rv_err err = { 0 };
            if (!s || rv_snap_tree_add(&q->tree, s, MAX_SNAPSHOTS, &err) < 0) {
                RV_WARN("domain '%s': snapshot %zu of '%s' dropped", dom_name(d), i, path);
                rv_snap_rec_free(s);
            }
            rv_err_clear(&err);
        }
        const char *current = get_str(root, "current");
        q->tree.current = current ? rv_snap_tree_find(&q->tree, current) : NULL;
    }
    json_object_put(root);
    free(text);
    free(path);
}

/* The domain's snapshots, read from disk the first time. */
static qsnaps *snaps_of(const qemu_dom *d, rv_err *err)
{
    const unsigned char *uuid = rv_qemu_dom_def(d)->uuid;
    for (qsnaps *q = all_snaps; q; q = q->next)
        if (memcmp(q->uuid, uuid, 16) == 0)
            return q;
    qsnaps *q = calloc(1, sizeof(*q));
    if (!q) {
        oom(err);
        return NULL;
    }
    memcpy(q->uuid, uuid, 16);
    load_metadata(d, q);
    q->next = all_snaps;
    all_snaps = q;
    return q;
}

int rv_qemu_snapshots_undefine(const qemu_dom *d, unsigned int flags, rv_err *err)
{
    qsnaps *q = rv_qemu_dom_active(d) ? NULL : snaps_of(d, err);
    if (!q)
        return rv_qemu_dom_active(d) ? 0 : -1;
    if (q->busy)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain '%s' is busy with another job",
                    dom_name(d));
    if (q->tree.n && !(flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot delete inactive domain with %zu "
                    "snapshots", q->tree.n);
    rv_snap_tree_clear(&q->tree);
    return save_metadata(d, q, err);    /* removes the file */
}

void rv_qemu_snapshots_cleanup(void)
{
    while (all_snaps) {
        qsnaps *q = all_snaps;
        all_snaps = q->next;
        rv_snap_tree_clear(&q->tree);
        free(q);
    }
}

/* ================================================================ qemu-img, watched by the loop */

typedef void (*img_done_fn)(void *opaque, const rv_err *err);

typedef struct img_run {
    ev_child child;
    ev_io out;
    int fd;
    char output[OUTPUT_MAX + 1];
    size_t len;
    bool exited, eof;
    int status;
    img_done_fn done;
    void *opaque;
} img_run;

static void img_finish_if_done(img_run *r)
{
    if (!r->exited || !r->eof)
        return;
    rv_err err = { 0 };
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
        while (r->len && (r->output[r->len - 1] == '\n' || r->output[r->len - 1] == ' '))
            r->len--;
        r->output[r->len] = '\0';
        for (char *p = r->output; *p; p++)
            if (*p == '\n')
                *p = ' ';
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: qemu-img: %s",
                   r->len ? r->output : "failed");
    }
    r->done(r->opaque, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
    free(r);
}

static void img_on_exit(struct ev_loop *loop, ev_child *w, int revents)
{
    (void)revents;
    img_run *r = (img_run *)((char *)w - offsetof(img_run, child));
    ev_child_stop(loop, w);
    r->status = w->rstatus;
    r->exited = true;
    img_finish_if_done(r);
}

static void img_on_output(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    img_run *r = (img_run *)((char *)w - offsetof(img_run, out));
    char buf[1024];
    ssize_t n = read(r->fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n > 0) {
        size_t keep = (size_t)n < OUTPUT_MAX - r->len ? (size_t)n : OUTPUT_MAX - r->len;
        memcpy(r->output + r->len, buf, keep);
        r->len += keep;
        return;
    }
    ev_io_stop(loop, w);
    close(r->fd);
    r->eof = true;
    img_finish_if_done(r);
}

/* Run `qemu-img snapshot OP NAME FILE`; done runs later, from the loop. */
static int img_snapshot(const char *op, const char *name, const char *file, img_done_fn done,
                        void *opaque, rv_err *err)
{
    int fds[2];
    img_run *r = calloc(1, sizeof(*r));
    if (!r)
        return oom(err);
    if (pipe2(fds, O_CLOEXEC) < 0) {
        free(r);
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot create a pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0)
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execlp("qemu-img", "qemu-img", "snapshot", op, name, file, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        free(r);
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot fork: %s", strerror(errno));
    }
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    r->fd = fds[0];
    r->done = done;
    r->opaque = opaque;
    ev_io_init(&r->out, img_on_output, r->fd, EV_READ);
    ev_io_start(rv_qemu.loop, &r->out);
    ev_child_init(&r->child, img_on_exit, pid, 0);
    ev_child_start(rv_qemu.loop, &r->child);
    RV_DEBUG("qemu-img snapshot %s '%s' '%s' (pid %d)", op, name, file, (int)pid);
    return 0;
}

/* ================================================================ operations */

typedef enum { OP_CREATE, OP_REVERT, OP_DELETE } op_kind;

/* One snapshot call under way: what it does, its steps (one qemu-img run
 * per disk, or one monitor command), and the reply. */
typedef struct snap_op {
    op_kind kind;
    unsigned char uuid[16];             /* the domain: found again after each step */
    rv_deferred *reply;
    rv_snap_rec *rec;                   /* CREATE: the new snapshot, added when done */
    char **names;                       /* the snapshots acted on (DELETE: several) */
    size_t nnames, at_name;
    char **files;                       /* the qcow2 images (shut-off domain) */
    size_t nfiles, at_file;
    const char *img_op;                 /* "-c", "-a", "-d"; NULL: the monitor */
    unsigned int flags;
    bool then_pause, then_resume;       /* REVERT of an active domain, after loadvm */
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
    free(op);
}

static qemu_dom *op_dom(const snap_op *op)
{
    return rv_qemu_find_uuid(op->uuid);
}

static qsnaps *op_snaps(const snap_op *op)
{
    for (qsnaps *q = all_snaps; q; q = q->next)
        if (memcmp(q->uuid, op->uuid, 16) == 0)
            return q;
    return NULL;
}

static int put_snap(const qemu_dom *d, const char *name, rv_nonnull_domain_snapshot *wire,
                    rv_err *err)
{
    rv_dom_ref ref = { 0 };
    if (!(wire->name = strdup(name)) || rv_qemu_dom_ref(d, &ref) < 0)
        return oom(err);
    rv_dom_ref_to_wire(&wire->dom, &ref);
    return 0;
}

/* The metadata change an operation makes once the data part is done. */
static int op_commit(snap_op *op, qemu_dom *d, qsnaps *q, rv_err *err)
{
    switch (op->kind) {
    case OP_CREATE: {
        if (rv_snap_tree_add(&q->tree, op->rec, MAX_SNAPSHOTS, err) < 0)
            return -1;
        const char *name = op->rec->name;
        op->rec = NULL;
        rv_domain_snapshot_create_xml_ret *ret = rv_deferred_ret(op->reply);
        if (save_metadata(d, q, err) < 0 || put_snap(d, name, &ret->snap, err) < 0)
            return -1;
        RV_INFO("domain '%s': snapshot '%s' taken", dom_name(d), name);
        return 0;
    }
    case OP_REVERT:
        q->tree.current = rv_snap_tree_find(&q->tree, op->names[0]);
        RV_INFO("domain '%s': reverted to snapshot '%s'", dom_name(d), op->names[0]);
        return save_metadata(d, q, err);
    case OP_DELETE: {
        rv_snap_rec *s = rv_snap_tree_find(&q->tree, op->names[0]);
        unsigned char *doomed = s ? rv_snap_tree_doomed(&q->tree, s, op->flags) : NULL;
        if (s && !doomed)
            return oom(err);
        if (s)
            rv_snap_tree_remove(&q->tree, s, doomed, op->flags);
        free(doomed);
        RV_INFO("domain '%s': snapshot '%s' deleted (flags 0x%x)", dom_name(d), op->names[0],
                op->flags);
        return save_metadata(d, q, err);
    }
    }
    return 0;
}

static void op_finish(snap_op *op, const rv_err *failure)
{
    qemu_dom *d = op_dom(op);
    qsnaps *q = op_snaps(op);
    rv_err err = { 0 };
    if (q)
        q->busy = false;
    if (failure)
        rv_err_set(&err, failure->domain, failure->code, "%s",
                   failure->message ? failure->message : "operation failed");
    else if (!d || !q)
        fail(&err, RV_ERR_OPERATION_FAILED, "operation failed: the domain went away meanwhile");
    else
        op_commit(op, d, q, &err);
    rv_deferred_finish(op->reply, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
    op_free(op);
}

static void op_step(snap_op *op);

static void on_img_done(void *opaque, const rv_err *err)
{
    snap_op *op = opaque;
    if (err) {
        op_finish(op, err);
        return;
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
    if (rv_err_is_set(&failure)) {
        op_finish(op, &failure);
        rv_err_clear(&failure);
        return;
    }
    op->at_name++;
    op_step(op);
}

static void on_state_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    snap_op *op = opaque;
    op->then_pause = op->then_resume = false;
    op_finish(op, err);
}

/* The next step: the next disk of the current snapshot name, the next
 * name, or the end. */
static void op_step(snap_op *op)
{
    rv_err err = { 0 };
    qemu_dom *d = op_dom(op);
    if (op->at_name == op->nnames || (op->img_op && op->nfiles == 0)) {
        if (d && d->qmp && (op->then_pause || op->then_resume)) {
            if (rv_qmp_command(d->qmp, op->then_pause ? "stop" : "cont", NULL, 0, on_state_done,
                               op, &err) == 0)
                return;
            op_finish(op, &err);
            rv_err_clear(&err);
            return;
        }
        op_finish(op, NULL);
        return;
    }
    const char *name = op->names[op->at_name];
    if (op->img_op) {
        if (img_snapshot(op->img_op, name, op->files[op->at_file], on_img_done, op, &err) < 0) {
            op_finish(op, &err);
            rv_err_clear(&err);
        }
        return;
    }
    const char *verb = op->kind == OP_CREATE ? "savevm"
                     : op->kind == OP_REVERT ? "loadvm" : "delvm";
    json_object *args = json_object_new_object();
    char *line = NULL;
    if (!d || !d->qmp || asprintf(&line, "%s %s", verb, name) < 0) {
        json_object_put(args);
        fail(&err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain is not running");
        op_finish(op, &err);
        rv_err_clear(&err);
        return;
    }
    json_object_object_add(args, "command-line", json_object_new_string(line));
    free(line);
    if (rv_qmp_command(d->qmp, "human-monitor-command", args, MONITOR_TIMEOUT, on_monitor_done,
                       op, &err) < 0) {
        op_finish(op, &err);
        rv_err_clear(&err);
    }
}

/* What every operation checks first: the domain is not busy, and for the
 * data part its qcow2 images (a shut-off domain) or its monitor. */
static snap_op *op_new(qemu_dom *d, qsnaps *q, op_kind kind, rv_err *err)
{
    if (q->busy || d->jobs || d->starting || d->stopping) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain '%s' is busy with another job",
             dom_name(d));
        return NULL;
    }
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
static int op_start(snap_op *op, qsnaps *q, rv_err *err)
{
    if (!(op->reply = rv_driver_defer(err))) {
        op_free(op);
        return -1;
    }
    q->busy = true;
    op_step(op);
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

int rv_qemu_domain_snapshot_create_xml(rv_driver_conn *c,
                                       const rv_domain_snapshot_create_xml_args *args,
                                       rv_domain_snapshot_create_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    qsnaps *q;
    qemu_dom *d;
    rv_snapshot_request req;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, CREATE_FLAGS, "qemuDomainSnapshotCreateXML", err) < 0 ||
        !(d = dom_and_snaps(&args->dom, &q, err)) ||
        rv_snapshot_request_parse(args->xml_desc, &req, err) < 0)
        return -1;
    snap_op *op = NULL;
    rv_snap_rec *s = calloc(1, sizeof(*s));
    int rc = s ? 0 : oom(err);
    if (rc == 0) {
        s->created = (long long)time(NULL);
        s->state = rv_qemu_dom_active(d) ? (d->state == RV_DOMAIN_PAUSED ? RV_DOMAIN_PAUSED
                                                                       : RV_DOMAIN_RUNNING)
                                         : RV_DOMAIN_SHUTOFF;
        if (req.name) {
            s->name = req.name;
            req.name = NULL;
        } else if (asprintf(&s->name, "%lld", s->created) < 0) {
            s->name = NULL;
        }
        s->description = req.description;
        req.description = NULL;
        s->dom_xml = rv_qemu_domain_format(rv_qemu_dom_def(d));
        if (!s->name || !s->dom_xml)
            rc = oom(err);
    }
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
    if (rc == 0 && s->state == RV_DOMAIN_SHUTOFF) {
        op->img_op = "-c";
        rc = take_files(d, op, err);
    }
    if (rc < 0) {
        rv_snap_rec_free(s);
        if (op)
            op_free(op);
        return -1;
    }
    op->rec = s;
    return op_start(op, q, err);
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
    }
    return op_start(op, q, err);
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
    unsigned char *doomed = op ? rv_snap_tree_doomed(&q->tree, s, flags) : NULL;
    if (!op)
        return -1;
    op->flags = flags;
    /* names[0] is s (metadata is found by it); the data goes for the doomed ones. */
    op->names = calloc(q->tree.n + 2, sizeof(*op->names));
    int rc = doomed && op->names && (op->names[0] = strdup(s->name)) ? 0 : oom(err);
    size_t first = 1;
    op->nnames = rc == 0 ? 1 : 0;
    for (size_t i = 0; rc == 0 && i < q->tree.n; i++)
        if (doomed[i] && !(op->names[op->nnames++] = strdup(q->tree.items[i]->name)))
            rc = oom(err);
    free(doomed);
    bool data = !(flags & RV_DOMAIN_SNAPSHOT_DELETE_METADATA_ONLY);
    if (rc == 0 && data && check_disks(d, err) < 0)
        rc = -1;
    if (rc == 0 && data && !rv_qemu_dom_active(d)) {
        op->img_op = "-d";
        rc = take_files(d, op, err);
    }
    if (rc < 0) {
        op_free(op);
        return -1;
    }
    /* Steps run over names[first..]: names[0] only names the metadata. */
    op->at_name = data ? first : op->nnames;
    return op_start(op, q, err);
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
