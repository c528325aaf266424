/* Block jobs on the QEMU driver: BLOCK_RESIZE, BLOCK_COPY, BLOCK_REBASE,
 * BLOCK_PULL, BLOCK_COMMIT, GET_BLOCK_JOB_INFO, BLOCK_JOB_ABORT and
 * BLOCK_JOB_SET_SPEED, on QEMU's blockdev jobs (blockdev-mirror,
 * block-stream, block-commit; job-complete, block-job-cancel,
 * job-dismiss), one job a disk as libvirt allows.
 *
 * Nothing waits: each call is a chain of QMP commands whose answers
 * arrive on the loop, and QEMU's events move a job on: BLOCK_JOB_READY
 * (a copy or an active commit may pivot), BLOCK_JOB_COMPLETED and
 * BLOCK_JOB_CANCELLED (the outcome), JOB_STATUS_CHANGE "concluded" (the
 * job is dismissed and its outcome applied: a pivot puts the new source
 * in the live definition, and in the persistent one when it had the same
 * source, as libvirtd does).  Each step sends the BLOCK_JOB and
 * BLOCK_JOB_2 events libvirtd sends.  Jobs are started with
 * auto-dismiss off so that the outcome is read before QEMU forgets it.
 *
 * A disk is found in QEMU by query-block (its BlockBackend drive-<target>
 * from the command line, or its device's qdev path when hotplugged), and
 * the job runs on its root node, whatever that is after earlier pivots.
 * A copy's destination is made by remvirtd (the file) and by QEMU
 * (blockdev-create for qcow2, a job too), then blockdev-add'ed; so are a
 * disk-only snapshot's overlays, put over their disks by one transaction
 * of blockdev-snapshot.
 *
 * A job QEMU runs outlives remvirtd: its record (rv_qemu_blockjob_status)
 * is in the domain's status, rewritten at each step, and a restarted
 * remvirtd takes it back (rv_qemu_blockjob_restore), then asks QEMU what
 * became of it meanwhile (rv_qemu_blockjob_resync): a job still running
 * goes on; one that became ready or concluded is told and, concluded,
 * dismissed and its outcome applied, whether a copy pivoted read from the
 * disk's active image (the only witness of a pivot asked just before the
 * stop). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/safe_open.h"
#include "server/drivers/conf/snapshot_xml.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("drivers.qemu.blockjob");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* libvirt's values (libvirt-domain.h). */
enum { T_PULL = 1, T_COPY = 2, T_COMMIT = 3, T_ACTIVE_COMMIT = 4, T_BACKUP = 5 };
enum { ST_COMPLETED = 0, ST_FAILED = 1, ST_CANCELED = 2, ST_READY = 3 };
enum { ABORT_ASYNC = 1, ABORT_PIVOT = 2 };
enum { COPY_SHALLOW = 1, COPY_REUSE_EXT = 2, COPY_TRANSIENT_JOB = 4, COPY_SYNC_WRITES = 8 };
enum { REBASE_SHALLOW = 1, REBASE_REUSE_EXT = 2, REBASE_COPY_RAW = 4, REBASE_COPY = 8,
       REBASE_RELATIVE = 16, REBASE_COPY_DEV = 32, REBASE_BANDWIDTH_BYTES = 64 };
enum { COMMIT_SHALLOW = 1, COMMIT_ACTIVE = 4, COMMIT_RELATIVE = 8, COMMIT_BANDWIDTH_BYTES = 16 };
enum { PULL_BANDWIDTH_BYTES = 64, SPEED_BANDWIDTH_BYTES = 1, INFO_BANDWIDTH_BYTES = 1,
       RESIZE_BYTES = 1 };

/* One image of a disk's chain, from query-block (the active one first). */
typedef struct layer {
    char *file;
    rv_qemu_disk_format format;
    unsigned long long size;
} layer;

/* A job on one disk, from the call that starts it until QEMU concludes it. */
typedef struct bjob {
    char *dom;
    pid_t pid;
    rv_qmp *qmp;
    char *target;               /* vda */
    char id[64];                /* QEMU's job id */
    int type;                   /* T_* */
    bool running;               /* QEMU has the job (else it is being set up) */
    bool ready, pivoting, cancelling;
    bool abort_asked;           /* an abort without a pivot, any type */
    int outcome;                /* ST_*, -1 until QEMU says */
    char *new_source;           /* where a pivot leads */
    rv_qemu_disk_format new_format;
    char nodes[2][64];          /* a copy's destination: format node, file node */
    rv_deferred *waiter;        /* a synchronous abort, answered at the end */
    struct setup *setup;        /* the start under way */
    struct bjob *next;
} bjob;

static bjob *jobs;
static unsigned serial;         /* makes node and job names unique */

/* A call under way: its QMP answers continue it. */
typedef struct setup {
    rv_qemu_live_req live;
    bjob *job;                  /* the job it starts (NULL: resize, info, speed, abort) */
    char *target;
    char *root;                 /* the disk's root node in QEMU */
    layer *chain;
    size_t nchain;
    /* what the call asked */
    unsigned flags;
    unsigned long long speed, granularity, buf_size, size;
    char *base, *top;
    bool shallow, sync_writes;
    char create_id[64];         /* blockdev-create's job */
    bool create_failed;
    int want_info;              /* GET_BLOCK_JOB_INFO: flags + 1 */
    char backup_id[64];         /* ... of the disk's backup job (qemu_backup.c) */
    void (*next_step)(struct setup *s);
    /* A new image being made (make_image): a copy's destination, a
     * snapshot's overlay. */
    struct {
        char *file;
        rv_qemu_disk_format format;
        unsigned long long size;
        const char *backing;    /* a new qcow2's backing file (borrowed), or NULL */
        rv_qemu_disk_format backing_format;
        bool reuse;             /* the file is there (REUSE_EXT) */
        bool no_backing;        /* opened without its backing (an overlay) */
        char nodes[2][64];      /* format node, file node */
        int added;              /* how many of them QEMU has: 0, 1 (file), 2 */
    } img;
    void (*img_done)(struct setup *s);
    struct snap_part *parts;    /* a disk-only snapshot's disks */
    size_t nparts, part;
    struct setup *making_next;  /* in making */
    struct setup *next;         /* in setups */
} setup;

/* Every call under way. */
static setup *setups;

/* The setups whose blockdev-create job runs. */
static setup *making;

static void making_drop(setup *s)
{
    for (setup **pp = &making; *pp; pp = &(*pp)->making_next)
        if (*pp == s) {
            *pp = s->making_next;
            break;
        }
}

/* ================================================================ jobs */

static void chain_free(layer *chain, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(chain[i].file);
    free(chain);
}

/* One disk of a disk-only snapshot. */
typedef struct snap_part {
    char *target, *file;        /* the overlay */
    char *root;                 /* the disk's root node now */
    char *old;                  /* its source now */
    rv_qemu_disk_format old_format;
    unsigned long long size;
    char node[64];              /* the overlay's format node, once added */
    char file_node[64];
} snap_part;

static void parts_free(snap_part *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(parts[i].target);
        free(parts[i].file);
        free(parts[i].root);
        free(parts[i].old);
    }
    free(parts);
}

static void setup_free(setup *s)
{
    if (!s)
        return;
    making_drop(s);
    for (setup **pp = &setups; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    free(s->img.file);
    parts_free(s->parts, s->nparts);
    if (s->job)
        s->job->setup = NULL;
    chain_free(s->chain, s->nchain);
    free(s->target);
    free(s->root);
    free(s->base);
    free(s->top);
    free(s->live.name);
    free(s);
}

static void job_unlink(bjob *j)
{
    for (bjob **pp = &jobs; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    if (j->setup)
        j->setup->job = NULL;
    free(j->dom);
    free(j->target);
    free(j->new_source);
    free(j);
}

/* The job on d's disk target, or NULL. */
static bjob *job_of(const qemu_dom *d, const char *target)
{
    for (bjob *j = jobs; j; j = j->next)
        if (strcmp(j->dom, d->live->name) == 0 && j->pid == d->pid && strcmp(j->target, target) == 0)
            return j;
    return NULL;
}

bool rv_qemu_blockjob_busy(const qemu_dom *d, const char *target)
{
    return job_of(d, target) != NULL;
}

static bjob *job_by_id(const qemu_dom *d, const char *id)
{
    for (bjob *j = jobs; j; j = j->next)
        if (strcmp(j->dom, d->live->name) == 0 && j->pid == d->pid && strcmp(j->id, id) == 0)
            return j;
    return NULL;
}

/* d's status (with its jobs' records) rewritten, off the loop; not once
 * it stops (its status goes). */
static void record(const qemu_dom *d)
{
    rv_err err = { 0 };
    if (d && d->live && d->pid > 0 && !d->stopping && rv_qemu_save_status(d, &err) < 0)
        RV_WARN("cannot record the block jobs of domain '%s': %s", d->live->name, err.message);
    rv_err_clear(&err);
}

/* BLOCK_JOB names the disk by its source as it is now (after a pivot,
 * the new one), as libvirtd does. */
static void event(qemu_dom *d, const bjob *j, int status)
{
    rv_dom_ref ref = { 0 };
    const rv_qemu_disk *disk = rv_qemu_disk_find(d->live, j->target);
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_block_job_event(&rv_qemu_driver, &ref, disk ? disk->source : NULL, j->target, j->type,
                                  status);
    free(ref.name);
}

/* A pivot's new source, in a definition whose disk had the old one. */
typedef struct pivot_ctx {
    const char *target, *old_source, *new_source;
    rv_qemu_disk_format format;
} pivot_ctx;

static int pivot_def(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const pivot_ctx *p = ctx;
    rv_qemu_disk *disk = rv_qemu_disk_find(def, p->target);
    if (!disk || !disk->source || strcmp(disk->source, p->old_source) != 0)
        return 0;
    char *source = strdup(p->new_source);
    if (!source)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    free(disk->source);
    disk->source = source;
    disk->format = p->format;
    /* A volume disk is a file disk from now on, as on libvirtd. */
    free(disk->pool);
    free(disk->volume);
    disk->pool = disk->volume = NULL;
    return 0;
}

/* The end of job j is told (the event, a waiting abort) and j goes. */
static void job_told(qemu_dom *d, bjob *j)
{
    int outcome = j->outcome;
    /* A copy or an active commit asked to end without a pivot is
     * canceled, whatever QEMU calls it. */
    if (j->cancelling && outcome == ST_COMPLETED)
        outcome = ST_CANCELED;
    event(d, j, outcome);
    rv_deferred *waiter = j->waiter;
    job_unlink(j);
    record(d);
    if (waiter)
        rv_deferred_finish(waiter, NULL);
}

/* The definition has the pivot's new source (or could not take it):
 * then the end is told, as libvirtd tells it once the config is saved. */
static void on_pivot_defined(void *data, const rv_err *err)
{
    bjob *j = data;
    for (bjob *k = jobs; k; k = k->next)
        if (k == j) {
            qemu_dom *d = rv_qemu_find_name(j->dom);
            if (err)
                RV_WARN("cannot record the new source of disk '%s' of domain '%s' in its definition: %s",
                        j->target, j->dom, err->message ? err->message : "");
            if (d && d->live && d->pid == j->pid)
                job_told(d, j);
            return;
        }
}

/* A node added over QMP (a hotplugged disk's, a copy's destination, a
 * snapshot's overlay) stays open until deleted, and its file with it, an
 * unlinked one's dirty pages still written back, as long as QEMU runs.
 * So once a job has dropped layers from a disk's chain (a pivot, a
 * commit, a pull), the disk's nodes of ours go unless in use: QEMU
 * refuses to delete a node in use, so each is tried, format nodes before
 * the file nodes under them.  Those of a call under way (a destination or
 * an overlay not yet in place) are left alone. */
static bool in_a_setup(const char *node)
{
    for (const setup *s = setups; s; s = s->next) {
        if (strcmp(s->img.nodes[0], node) == 0 || strcmp(s->img.nodes[1], node) == 0)
            return true;
        for (size_t i = 0; i < s->nparts; i++)
            if (strcmp(s->parts[i].node, node) == 0 || strcmp(s->parts[i].file_node, node) == 0)
                return true;
    }
    return false;
}

static void on_nodes_listed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    char *target = opaque;
    char fmt[80], file[80], hot[80];
    snprintf(fmt, sizeof(fmt), "img-fmt-%s-", target);
    snprintf(file, sizeof(file), "img-file-%s-", target);
    snprintf(hot, sizeof(hot), "drive-%s", target);
    size_t n = !err && json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            json_object *name = NULL;
            json_object_object_get_ex(json_object_array_get_idx(ret, i), "node-name", &name);
            const char *node = json_object_get_string(name);
            if (!node)
                continue;
            bool ours = pass == 0 ? strncmp(node, fmt, strlen(fmt)) == 0 || strcmp(node, hot) == 0
                                  : strncmp(node, file, strlen(file)) == 0;
            if (ours && !in_a_setup(node))
                rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", node);
        }
    free(target);
}

static void drop_unused_nodes(qemu_dom *d, const char *target)
{
    char *t = strdup(target);
    json_object *a = json_object_new_object();
    json_object_object_add(a, "flat", json_object_new_boolean(true));
    rv_err err = { 0 };
    if (!t || !d->qmp || rv_qmp_command(d->qmp, "query-named-block-nodes", a, 0, on_nodes_listed, t, &err) < 0) {
        free(t);
        rv_err_clear(&err);
    }
}

static void conclude_applied(qemu_dom *d, bjob *j);

/* A pivot's job-dismiss answered: QEMU has forgotten the job and only
 * then is the pivot applied and recorded, so that a remvirtd stopped in
 * between finds the disk on the new image and applies it (resync_job). */
static void on_pivot_dismissed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret, (void)err;
    char *dom_and_id = opaque;
    rv_crash_point("blockjob-pivot", 1);
    qemu_dom *d = rv_qemu_find_name(dom_and_id);
    bjob *j = d && d->qmp == qmp ? job_by_id(d, dom_and_id + strlen(dom_and_id) + 1) : NULL;
    if (j)
        conclude_applied(d, j);
    free(dom_and_id);
}

/* QEMU concluded job j: dismissed, its outcome applied and told. */
static void conclude(qemu_dom *d, bjob *j)
{
    int outcome = j->outcome < 0 ? ST_FAILED : j->outcome;
    j->outcome = outcome;
    RV_INFO("domain '%s': block job %s ended (%d)", d->live->name, j->id, outcome);
    if (outcome == ST_COMPLETED && j->pivoting && j->new_source && d->qmp) {
        /* "<domain>\0<job id>" */
        size_t n = strlen(d->live->name) + 1, m = strlen(j->id) + 1;
        char *dom_and_id = malloc(n + m);
        json_object *a = json_object_new_object();
        rv_err e = { 0 };
        if (dom_and_id && a) {
            memcpy(dom_and_id, d->live->name, n);
            memcpy(dom_and_id + n, j->id, m);
            json_object_object_add(a, "id", json_object_new_string(j->id));
            if (rv_qmp_command(d->qmp, "job-dismiss", a, 0, on_pivot_dismissed, dom_and_id, &e) == 0)
                return;
            a = NULL;   /* (the command owned it) */
        }
        rv_err_clear(&e);
        json_object_put(a);
        free(dom_and_id);
    } else {
        rv_qemu_send_quietly(d->qmp, "job-dismiss", "id", j->id);
    }
    conclude_applied(d, j);
}

/* Its outcome applied (a pivot to the live XML and the definition) and told. */
static void conclude_applied(qemu_dom *d, bjob *j)
{
    int outcome = j->outcome;
    bool pivoted = outcome == ST_COMPLETED && j->pivoting && j->new_source;
    if (outcome == ST_COMPLETED)
        drop_unused_nodes(d, j->target);
    if (pivoted) {
        rv_qemu_disk *disk = rv_qemu_disk_find(d->live, j->target);
        pivot_ctx p = { j->target, disk && disk->source ? disk->source : "", j->new_source, j->new_format };
        char *old = strdup(p.old_source);
        p.old_source = old ? old : "";
        rv_err err = { 0 };
        pivot_def(d->live, &p, &err);
        if (rv_qemu_save_status(d, &err) < 0)
            RV_WARN("cannot record the new source of disk '%s' of domain '%s': %s", j->target,
                    d->live->name, err.message);
        rv_err_clear(&err);
        int rc = d->def ? rv_qemu_def_change_then_no_event(d, pivot_def, &p, on_pivot_defined, j, &err) : -1;
        rv_err_clear(&err);
        free(old);
        if (rc == 0)
            return;     /* told once the definition is written */
    } else if (j->type == T_COPY) {
        /* The destination QEMU no longer needs. */
        for (int i = 0; i < 2; i++)
            if (j->nodes[i][0])
                rv_qemu_send_quietly(d->qmp, "blockdev-del", "node-name", j->nodes[i]);
    }
    job_told(d, j);
}

void rv_qemu_blockjob_domain_gone(qemu_dom *d)
{
    for (bjob **pp = &jobs; *pp;) {
        bjob *j = *pp;
        if (strcmp(j->dom, d->live ? d->live->name : "") != 0 || j->pid != d->pid) {
            pp = &j->next;
            continue;
        }
        if (j->waiter)
            rv_qemu_finish_error(j->waiter, RV_ERR_OPERATION_FAILED, "operation failed: the domain stopped");
        j->waiter = NULL;
        job_unlink(j);
    }
}

static bjob *job_new(qemu_dom *d, const char *target, int type, rv_err *err)
{
    bjob *j = calloc(1, sizeof(*j));
    if (!j || !(j->dom = strdup(d->live->name)) || !(j->target = strdup(target))) {
        if (j) {
            free(j->dom);
            free(j->target);
            free(j);
        }
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    static const char *const kinds[] = { "", "pull", "copy", "commit", "active-commit" };
    snprintf(j->id, sizeof(j->id), "%s-%s-%u", kinds[type], target, ++serial);
    j->pid = d->pid;
    j->qmp = d->qmp;
    j->type = type;
    j->outcome = -1;
    j->next = jobs;
    jobs = j;
    return j;
}

static void make_image(setup *s);

/* ================================================================ QEMU's events */

void rv_qemu_blockjob_event(qemu_dom *d, const char *name, json_object *data)
{
    json_object *v = NULL;
    const char *id = NULL;
    if (!data || !d->live)
        return;
    if (json_object_object_get_ex(data, strcmp(name, "JOB_STATUS_CHANGE") == 0 ? "id" : "device", &v))
        id = json_object_get_string(v);
    if (!id)
        return;
    if (strcmp(name, "JOB_STATUS_CHANGE") == 0) {
        const char *status = json_object_object_get_ex(data, "status", &v) ? json_object_get_string(v) : "";
        /* A new image's blockdev-create? */
        for (setup *s = making; s; s = s->making_next) {
            if (strcmp(s->create_id, id) != 0 || s->live.pid != d->pid)
                continue;
            if (strcmp(status, "aborting") == 0)
                s->create_failed = true;
            else if (strcmp(status, "concluded") == 0)
                make_image(s);
            return;
        }
        bjob *j = job_by_id(d, id);
        if (j && strcmp(status, "concluded") == 0)
            conclude(d, j);
        return;
    }
    bjob *j = job_by_id(d, id);
    if (!j)
        return;
    if (strcmp(name, "BLOCK_JOB_READY") == 0 && !j->ready) {
        j->ready = true;
        record(d);
        event(d, j, ST_READY);
    } else if (strcmp(name, "BLOCK_JOB_COMPLETED") == 0) {
        j->outcome = json_object_object_get_ex(data, "error", &v) ? ST_FAILED : ST_COMPLETED;
        if (j->outcome == ST_FAILED)
            RV_WARN("domain '%s': block job %s failed: %s", d->live->name, id, json_object_get_string(v));
    } else if (strcmp(name, "BLOCK_JOB_CANCELLED") == 0) {
        j->outcome = ST_CANCELED;
    }
}

/* ================================================================ the calls' common steps */

static setup *setup_new(qemu_dom *d, const char *target, rv_err *err)
{
    setup *s = rv_qemu_live_req_new(sizeof(*s), d, err);
    if (!s)
        return NULL;
    s->next = setups;
    setups = s;
    if (!(s->target = strdup(target))) {
        rv_qemu_finish_error(s->live.reply, RV_ERR_NO_MEMORY, "out of memory");
        setup_free(s);
        return NULL;
    }
    return s;
}

/* The nodes of the images s made that QEMU has: they go (a call that
 * failed half-way). */
static void drop_images(setup *s, rv_qmp *qmp)
{
    for (size_t k = 0; k < s->nparts; k++)
        if (s->parts[k].node[0])
            rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", s->parts[k].node);
    if (s->img.added == 2)
        rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", s->img.nodes[0]);
    if (s->img.added >= 1)
        rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", s->img.nodes[1]);
    s->img.added = 0;
}

/* In an answer's callback: s if its domain still runs and QEMU said yes;
 * else the call is answered, a job being set up dropped, NULL. */
static setup *alive(rv_qmp *qmp, const rv_err *err, void *opaque)
{
    setup *s = opaque;
    if (rv_qemu_live_req_alive(&s->live, qmp, err))
        return s;
    if (!rv_qmp_is_closed(qmp))
        drop_images(s, qmp);
    if (s->job)
        job_unlink(s->job);
    setup_free(s);
    return NULL;
}

static bool send_step(setup *s, const char *command, json_object *args, rv_qmp_reply_fn fn)
{
    qemu_dom *d = rv_qemu_find_name(s->live.name);
    if (rv_qemu_send_for(d, s->live.reply, command, args, fn, s))
        return true;
    if (s->job)
        job_unlink(s->job);
    setup_free(s);
    return false;
}

/* The call succeeded: answered, the job (if any) now QEMU's. */
static void succeed(setup *s)
{
    if (s->job) {
        s->job->running = true;
        memcpy(s->job->nodes, s->img.nodes, sizeof(s->job->nodes));
        record(rv_qemu_find_name(s->live.name));
    }
    rv_deferred_finish(s->live.reply, NULL);
    setup_free(s);
}

/* The call fails with this error; a job being set up goes, with the
 * destination nodes it added. */
__attribute__((format(printf, 3, 4)))
static void fail_setup(setup *s, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rv_qemu_finish_error(s->live.reply, code, "%s", msg);
    qemu_dom *d = rv_qemu_find_name(s->live.name);
    if (d && d->qmp)
        drop_images(s, d->qmp);
    if (s->job)
        job_unlink(s->job);
    setup_free(s);
}

static rv_qemu_disk_format format_of(const char *name)
{
    return name && strcmp(name, "qcow2") == 0 ? RV_QEMU_FORMAT_QCOW2 : RV_QEMU_FORMAT_RAW;
}

static const char *format_name(rv_qemu_disk_format f)
{
    return f == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw";
}

/* query-block's entry for the disk: the root node and the chain. */
static void on_query_block(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    setup *s = alive(qmp, err, opaque);
    if (!s)
        return;
    json_object *e = rv_qemu_block_entry(ret, s->target), *inserted = NULL, *v;
    if (!e || !json_object_object_get_ex(e, "inserted", &inserted)) {
        fail_setup(s, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: disk '%s' has no medium",
                   s->target);
        return;
    }
    if (json_object_object_get_ex(inserted, "node-name", &v))
        s->root = strdup(json_object_get_string(v));
    json_object *image = NULL;
    json_object_object_get_ex(inserted, "image", &image);
    for (json_object *img = image; img; img = json_object_object_get_ex(img, "backing-image", &v) ? v : NULL) {
        layer *more = realloc(s->chain, (s->nchain + 1) * sizeof(*more));
        if (!more)
            break;
        s->chain = more;
        layer *l = &s->chain[s->nchain++];
        l->file = strdup(json_object_object_get_ex(img, "filename", &v) ? json_object_get_string(v) : "");
        l->format = format_of(json_object_object_get_ex(img, "format", &v) ? json_object_get_string(v) : NULL);
        l->size = (unsigned long long)rv_qmp_json_int(img, "virtual-size", 0);
    }
    if (!s->root || !s->nchain) {
        fail_setup(s, RV_ERR_INTERNAL_ERROR, "internal error: QEMU did not describe disk '%s'", s->target);
        return;
    }
    s->next_step(s);
}

/* The disk the call names on running d; a job on it refused when
 * no_job (libvirtd's words). */
static qemu_dom *running_disk(const rv_nonnull_domain *wire, const char *path, rv_qemu_disk **disk,
                              rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get_running(wire, err);
    if (!d)
        return NULL;
    if (!(*disk = rv_qemu_disk_find(d->live, path)) || !(*disk)->source) {
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk '%s' not found in domain", path);
        return NULL;
    }
    return d;
}

/* Start: a new setup for running d's disk, which has no job (a new job of
 * type on it when type > 0); its first step query-block, then next. */
static int start(const rv_nonnull_domain *wire, const char *path, int type, void (*next)(setup *),
                 setup **sp, rv_err *err)
{
    rv_qemu_disk *disk;
    qemu_dom *d = running_disk(wire, path, &disk, err);
    if (!d)
        return -1;
    if (type > 0 && (job_of(d, disk->target) || rv_qemu_backup_job_id(d, disk->target)))
        return fail(err, RV_ERR_BLOCK_COPY_ACTIVE, "block copy still active: disk '%s' already in active block job", disk->target);
    setup *s = setup_new(d, disk->target, err);
    if (!s)
        return -1;
    if (type > 0 && !(s->job = job_new(d, disk->target, type, err))) {
        rv_deferred_finish(s->live.reply, err);
        rv_err_clear(err);
        setup_free(s);
        return RV_DEFERRED;
    }
    if (s->job)
        s->job->setup = s;
    s->next_step = next;
    *sp = s;
    return 0;
}

static int go(setup *s)
{
    send_step(s, "query-block", NULL, on_query_block);
    return RV_DEFERRED;
}

/* MiB/s (or bytes/s) into bytes/s, refused past the top as libvirt does. */
static int bandwidth(unsigned long long bw, bool bytes, unsigned long long *out, rv_err *err)
{
    if (!bytes && bw > (~0ULL >> 20))
        return fail(err, RV_ERR_OVERFLOW, "bandwidth must be less than %llu", (~0ULL >> 20) + 1);
    *out = bytes ? bw : bw << 20;
    return 0;
}

/* The layer of s's chain a path names (its file), or -1. */
static int layer_of(const setup *s, const char *path)
{
    for (size_t i = 0; i < s->nchain; i++)
        if (strcmp(s->chain[i].file, path) == 0)
            return (int)i;
    return -1;
}

static void add_speed(json_object *args, unsigned long long speed)
{
    if (speed)
        json_object_object_add(args, "speed", json_object_new_int64((int64_t)speed));
}

static void on_job_started(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    setup *s = alive(qmp, err, opaque);
    if (s)
        succeed(s);
}

/* ================================================================ resize */

static void on_resized(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    setup *s = alive(qmp, err, opaque);
    if (s)
        succeed(s);
}

static void resize_step(setup *s)
{
    unsigned long long size = s->size;
    /* qcow2 wants whole sectors (libvirt rounds up too). */
    if (s->chain[0].format == RV_QEMU_FORMAT_QCOW2)
        size = (size + 511) / 512 * 512;
    json_object *args = json_object_new_object();
    json_object_object_add(args, "node-name", json_object_new_string(s->root));
    json_object_object_add(args, "size", json_object_new_int64((int64_t)size));
    send_step(s, "block_resize", args, on_resized);
}

int rv_qemu_domain_block_resize(rv_driver_conn *c, const rv_domain_block_resize_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RESIZE_BYTES, "qemuDomainBlockResize", err) < 0)
        return -1;
    unsigned long long size = args->size;
    if (!(args->flags & RESIZE_BYTES)) {
        if (size > (~0ULL >> 10))
            return fail(err, RV_ERR_OVERFLOW, "size must be less than %llu", (~0ULL >> 10) + 1);
        size <<= 10;
    }
    if (size > (unsigned long long)INT64_MAX)
        return fail(err, RV_ERR_OVERFLOW, "size must be less than %llu", (unsigned long long)INT64_MAX);
    qemu_dom *d = rv_qemu_dom_get_running(&args->dom, err);
    if (d && !rv_qemu_disk_find(d->live, args->disk))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk '%s' was not found in the domain config",
                    args->disk);
    setup *s;
    if (!d || start(&args->dom, args->disk, 0, resize_step, &s, err) < 0)
        return -1;
    s->size = size;
    return go(s);
}

/* ================================================================ info, speed, abort */

static void on_job_info(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    setup *s = alive(qmp, err, opaque);
    if (!s)
        return;
    rv_domain_get_block_job_info_ret *out = rv_deferred_ret(s->live.reply);
    qemu_dom *d = rv_qemu_find_name(s->live.name);
    bjob *j = job_of(d, s->target);
    const char *id = j && j->running ? j->id : s->backup_id[0] ? s->backup_id : NULL;
    json_object *v;
    for (size_t i = 0; id && ret && i < json_object_array_length(ret); i++) {
        json_object *e = json_object_array_get_idx(ret, i);
        if (!json_object_object_get_ex(e, "device", &v) || strcmp(json_object_get_string(v), id) != 0)
            continue;
        unsigned long long speed = (unsigned long long)rv_qmp_json_int(e, "speed", 0);
        out->found = 1;
        out->type = j ? j->type : T_BACKUP;
        out->cur = (unsigned long long)rv_qmp_json_int(e, "offset", 0);
        out->end = (unsigned long long)rv_qmp_json_int(e, "len", 0);
        out->bandwidth = (s->want_info - 1) & INFO_BANDWIDTH_BYTES ? speed : speed >> 20;
        bool ready = json_object_object_get_ex(e, "ready", &v) && json_object_get_boolean(v);
        /* As libvirtd: a two-phase job shows cur == end only once it
         * may pivot, so that tools offer the pivot no earlier. */
        if (j && (j->type == T_COPY || j->type == T_ACTIVE_COMMIT) && !ready && out->end && out->cur == out->end)
            out->cur--;
        if (ready && out->end == 0)
            out->cur = out->end = 1;
        break;
    }
    succeed(s);
}

static void info_step(setup *s)
{
    send_step(s, "query-block-jobs", NULL, on_job_info);
}

int rv_qemu_domain_get_block_job_info(rv_driver_conn *c, const rv_domain_get_block_job_info_args *args,
                                      rv_domain_get_block_job_info_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, INFO_BANDWIDTH_BYTES, "qemuDomainGetBlockJobInfo",
                            err) < 0)
        return -1;
    rv_qemu_disk *disk;
    qemu_dom *d = running_disk(&args->dom, args->path, &disk, err);
    if (!d)
        return -1;
    /* A backup's job on the disk shows too, as on libvirtd. */
    const char *backup_id = job_of(d, disk->target) ? NULL : rv_qemu_backup_job_id(d, disk->target);
    if (!job_of(d, disk->target) && !backup_id)
        return 0;       /* found 0: no job */
    setup *s = setup_new(d, disk->target, err);
    if (!s)
        return -1;
    s->want_info = (int)args->flags + 1;
    if (backup_id)
        snprintf(s->backup_id, sizeof(s->backup_id), "%s", backup_id);
    info_step(s);
    return RV_DEFERRED;
}

/* The job the call names on running d, or NULL with libvirtd's error. */
static bjob *named_job(const rv_nonnull_domain *wire, const char *path, qemu_dom **dp, rv_err *err)
{
    rv_qemu_disk *disk;
    qemu_dom *d = running_disk(wire, path, &disk, err);
    bjob *j = d ? job_of(d, disk->target) : NULL;
    if (d && (!j || !j->running)) {
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk %s does not have an active block job",
             disk->target);
        return NULL;
    }
    *dp = d;
    return j;
}

int rv_qemu_domain_block_job_set_speed(rv_driver_conn *c, const rv_domain_block_job_set_speed_args *args,
                                       rv_err *err)
{
    (void)c;
    unsigned long long speed = 0;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, SPEED_BANDWIDTH_BYTES, "qemuDomainBlockJobSetSpeed",
                            err) < 0 ||
        bandwidth(args->bandwidth, args->flags & SPEED_BANDWIDTH_BYTES, &speed, err) < 0)
        return -1;
    bjob *j = named_job(&args->dom, args->path, &d, err);
    if (!j)
        return -1;
    setup *s = setup_new(d, j->target, err);
    if (!s)
        return -1;
    json_object *a = json_object_new_object();
    json_object_object_add(a, "device", json_object_new_string(j->id));
    json_object_object_add(a, "speed", json_object_new_int64((int64_t)speed));
    send_step(s, "block-job-set-speed", a, on_job_started);
    return RV_DEFERRED;
}

/* QEMU took the pivot or the cancel: answered now (ASYNC), or when the
 * job concludes. */
static void on_abort_sent(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    setup *s = opaque;
    qemu_dom *d = rv_qemu_find_name(s->live.name);
    bjob *j = d && d->live ? job_of(d, s->target) : NULL;
    if (err && j) {
        j->pivoting = j->cancelling = j->abort_asked = false;
        record(d);
    }
    if (!(s = alive(qmp, err, opaque)))
        return;
    if (!(s->flags & ABORT_ASYNC) && j && !j->waiter) {
        j->waiter = s->live.reply;
        s->live.reply = NULL;
        setup_free(s);
        return;
    }
    succeed(s);
}

int rv_qemu_domain_block_job_abort(rv_driver_conn *c, const rv_domain_block_job_abort_args *args, rv_err *err)
{
    (void)c;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, ABORT_ASYNC | ABORT_PIVOT, "qemuDomainBlockJobAbort",
                            err) < 0)
        return -1;
    rv_qemu_disk *disk;
    if ((d = running_disk(&args->dom, args->path, &disk, err)) && !job_of(d, disk->target) &&
        rv_qemu_backup_job_id(d, disk->target)) {
        /* As libvirtd: the backup's job on the disk is cancelled, and
         * with it the backup. */
        if (args->flags & ABORT_PIVOT)
            return fail(err, RV_ERR_OPERATION_INVALID,
                        "Requested operation is not valid: job type 'backup' does not support pivot");
        return rv_qemu_backup_abort(d, err);
    }
    rv_err_clear(err);
    bjob *j = named_job(&args->dom, args->path, &d, err);
    if (!j)
        return -1;
    bool pivot = args->flags & ABORT_PIVOT;
    if (j->pivoting || j->cancelling)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: block job on disk '%s' is "
                    "already being ended", j->target);
    if (pivot && j->type != T_COPY && j->type != T_ACTIVE_COMMIT)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: job type '%s' does not support pivot",
                    j->type == T_PULL ? "pull" : "commit");
    if (pivot && !j->ready)
        return fail(err, RV_ERR_BLOCK_COPY_ACTIVE, "block copy still active: block job '%s' not ready for pivot yet",
                    j->id);
    setup *s = setup_new(d, j->target, err);
    if (!s)
        return -1;
    s->flags = args->flags;
    json_object *a = json_object_new_object();
    json_object_object_add(a, pivot ? "id" : "device", json_object_new_string(j->id));
    if (pivot)
        j->pivoting = true;
    else
        j->cancelling = j->type == T_COPY || j->type == T_ACTIVE_COMMIT;
    j->abort_asked = !pivot;
    record(d);
    send_step(s, pivot ? "job-complete" : "block-job-cancel", a, on_abort_sent);
    return RV_DEFERRED;
}

/* ================================================================ pull and commit */

/* A base (given by path) under layer top, or -1 with the call answered. */
static int base_below(setup *s, int top, const char *what)
{
    int b = s->base ? layer_of(s, s->base) : (int)s->nchain - 1;
    if (s->base && b <= top) {
        fail_setup(s, RV_ERR_INVALID_ARG, "invalid argument: could not find image '%s' beneath '%s' in chain",
                   s->base, s->chain[top].file);
        return -1;
    }
    if (b <= top) {
        fail_setup(s, RV_ERR_INVALID_ARG, "invalid argument: top '%s' in chain for '%s' has no backing file",
                   s->chain[top].file, s->target);
        return -1;
    }
    (void)what;
    return b;
}

static void pull_step(setup *s)
{
    json_object *a = json_object_new_object();
    if (s->base) {
        if (base_below(s, 0, "pull") < 0) {
            json_object_put(a);
            return;
        }
        json_object_object_add(a, "base", json_object_new_string(s->base));
    }
    json_object_object_add(a, "job-id", json_object_new_string(s->job->id));
    json_object_object_add(a, "device", json_object_new_string(s->root));
    json_object_object_add(a, "auto-dismiss", json_object_new_boolean(false));
    add_speed(a, s->speed);
    send_step(s, "block-stream", a, on_job_started);
}

static int pull(const rv_nonnull_domain *wire, const char *path, const char *base, unsigned long long bw,
                bool bytes, rv_err *err)
{
    unsigned long long speed = 0;
    setup *s;
    if (bandwidth(bw, bytes, &speed, err) < 0)
        return -1;
    int rc = start(wire, path, T_PULL, pull_step, &s, err);
    if (rc)
        return rc;
    s->speed = speed;
    if (base && !(s->base = strdup(base))) {
        fail_setup(s, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    return go(s);
}

int rv_qemu_domain_block_pull(rv_driver_conn *c, const rv_domain_block_pull_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, PULL_BANDWIDTH_BYTES, "qemuDomainBlockPull", err) < 0)
        return -1;
    return pull(&args->dom, args->path, NULL, args->bandwidth, args->flags & PULL_BANDWIDTH_BYTES, err);
}

static void commit_step(setup *s)
{
    int top = s->top ? layer_of(s, s->top) : 0;
    if (s->top && top < 0) {
        fail_setup(s, RV_ERR_INVALID_ARG, "invalid argument: could not find image '%s' in chain for '%s'",
                   s->top, s->target);
        return;
    }
    if (top == 0 && !(s->flags & COMMIT_ACTIVE)) {
        fail_setup(s, RV_ERR_INVALID_ARG, "invalid argument: commit of '%s' active layer requires active flag",
                   s->target);
        return;
    }
    if (!s->base && (s->flags & COMMIT_SHALLOW) && top + 1 < (int)s->nchain)
        s->base = strdup(s->chain[top + 1].file);
    int base = base_below(s, top, "commit");
    if (base < 0)
        return;
    bjob *j = s->job;
    if (top == 0) {
        /* Its id was made for an inactive commit. */
        j->type = T_ACTIVE_COMMIT;
        snprintf(j->id, sizeof(j->id), "active-commit-%s-%u", j->target, ++serial);
        j->new_source = strdup(s->chain[base].file);
        j->new_format = s->chain[base].format;
    }
    json_object *a = json_object_new_object();
    json_object_object_add(a, "job-id", json_object_new_string(j->id));
    json_object_object_add(a, "device", json_object_new_string(s->root));
    if (top > 0)
        json_object_object_add(a, "top", json_object_new_string(s->chain[top].file));
    json_object_object_add(a, "base", json_object_new_string(s->chain[base].file));
    json_object_object_add(a, "auto-dismiss", json_object_new_boolean(false));
    add_speed(a, s->speed);
    send_step(s, "block-commit", a, on_job_started);
}

int rv_qemu_domain_block_commit(rv_driver_conn *c, const rv_domain_block_commit_args *args, rv_err *err)
{
    (void)c;
    unsigned long long speed = 0;
    setup *s;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            COMMIT_SHALLOW | COMMIT_ACTIVE | COMMIT_RELATIVE | COMMIT_BANDWIDTH_BYTES,
                            "qemuDomainBlockCommit", err) < 0 ||
        bandwidth(args->bandwidth, args->flags & COMMIT_BANDWIDTH_BYTES, &speed, err) < 0)
        return -1;
    int rc = start(&args->dom, args->disk, T_COMMIT, commit_step, &s, err);
    if (rc)
        return rc;
    s->speed = speed;
    s->flags = args->flags;
    if ((args->base && *args->base && !(s->base = strdup(*args->base))) ||
        (args->top && *args->top && !(s->top = strdup(*args->top)))) {
        fail_setup(s, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    /* The disk's target names its active layer too. */
    if (s->top && strcmp(s->top, s->target) == 0) {
        free(s->top);
        s->top = NULL;
    }
    return go(s);
}

/* ================================================================ new images */

/* s->img is made: the file (unless reused), its file node, for a new
 * qcow2 a blockdev-create job on it (JOB_STATUS_CHANGE "concluded" brings
 * it back here), then the format node; then s->img_done(s). */
static void make_image(setup *s);

static void on_format_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    setup *s = alive(qmp, err, opaque);
    if (s) {
        s->img.added = 2;
        s->img_done(s);
    }
}

static void add_format_node(setup *s)
{
    if (s->create_failed) {
        fail_setup(s, RV_ERR_OPERATION_FAILED, "operation failed: QEMU could not format '%s'", s->img.file);
        return;
    }
    json_object *a = json_object_new_object();
    json_object_object_add(a, "driver", json_object_new_string(format_name(s->img.format)));
    json_object_object_add(a, "node-name", json_object_new_string(s->img.nodes[0]));
    json_object_object_add(a, "file", json_object_new_string(s->img.nodes[1]));
    /* An overlay gets its backing from blockdev-snapshot. */
    if (s->img.no_backing)
        json_object_object_add(a, "backing", NULL);
    send_step(s, "blockdev-add", a, on_format_added);
}

static void on_created(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    /* The job runs: JOB_STATUS_CHANGE "concluded" goes on (make_image). */
    if (!alive(qmp, err, opaque))
        return;
}

static void on_file_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    setup *s = alive(qmp, err, opaque);
    if (!s)
        return;
    s->img.added = 1;
    if (s->img.reuse || s->img.format != RV_QEMU_FORMAT_QCOW2) {
        add_format_node(s);
        return;
    }
    snprintf(s->create_id, sizeof(s->create_id), "create-%s-%u", s->target, ++serial);
    json_object *o = json_object_new_object(), *a = json_object_new_object();
    json_object_object_add(o, "driver", json_object_new_string("qcow2"));
    json_object_object_add(o, "file", json_object_new_string(s->img.nodes[1]));
    json_object_object_add(o, "size", json_object_new_int64((int64_t)s->img.size));
    if (s->img.backing) {
        json_object_object_add(o, "backing-file", json_object_new_string(s->img.backing));
        json_object_object_add(o, "backing-fmt", json_object_new_string(format_name(s->img.backing_format)));
    }
    json_object_object_add(a, "job-id", json_object_new_string(s->create_id));
    json_object_object_add(a, "options", o);
    s->making_next = making;
    making = s;
    send_step(s, "blockdev-create", a, on_created);
}

static void make_image(setup *s)
{
    if (s->create_id[0]) {
        /* blockdev-create concluded: dismissed, then the format node. */
        qemu_dom *d = rv_qemu_find_name(s->live.name);
        rv_qemu_send_quietly(d ? d->qmp : NULL, "job-dismiss", "id", s->create_id);
        s->create_id[0] = '\0';
        making_drop(s);
        add_format_node(s);
        return;
    }
    if (!s->img.reuse) {
        /* As libvirtd without REUSE_EXT: a new (empty) file. */
        /* (a FIFO or a device named there neither holds the open nor is used) */
        const char *kind = NULL;
        int fd = rv_open_file_at(AT_FDCWD, s->img.file, O_WRONLY | O_CREAT | O_TRUNC, 0600, false, &kind);
        if (fd < 0 && kind) {
            fail_setup(s, RV_ERR_OPERATION_INVALID,
                       "Requested operation is not valid: '%s' is a %s, not a regular file",
                       s->img.file, kind);
            return;
        }
        /* A raw one as large as the source (QEMU's mirror wants that);
         * blockdev-create sizes a qcow2. */
        if (fd >= 0 && s->img.format == RV_QEMU_FORMAT_RAW && ftruncate(fd, (off_t)s->img.size) < 0) {
            close(fd);
            fd = -1;
        }
        if (fd < 0) {
            char why[128];
            snprintf(why, sizeof(why), "%s", strerror(errno));
            fail_setup(s, RV_ERR_SYSTEM_ERROR, "cannot create file '%s': %s", s->img.file, why);
            return;
        }
        close(fd);
    }
    snprintf(s->img.nodes[0], sizeof(s->img.nodes[0]), "img-fmt-%s-%u", s->target, ++serial);
    snprintf(s->img.nodes[1], sizeof(s->img.nodes[1]), "img-file-%s-%u", s->target, serial);
    s->img.added = 0;
    json_object *a = json_object_new_object();
    json_object_object_add(a, "driver", json_object_new_string("file"));
    json_object_object_add(a, "node-name", json_object_new_string(s->img.nodes[1]));
    json_object_object_add(a, "filename", json_object_new_string(s->img.file));
    send_step(s, "blockdev-add", a, on_file_added);
}

/* ================================================================ copy */

static void start_mirror(setup *s)
{
    bjob *j = s->job;
    json_object *a = json_object_new_object();
    json_object_object_add(a, "job-id", json_object_new_string(j->id));
    json_object_object_add(a, "device", json_object_new_string(s->root));
    json_object_object_add(a, "target", json_object_new_string(s->img.nodes[0]));
    json_object_object_add(a, "sync", json_object_new_string(s->shallow ? "top" : "full"));
    json_object_object_add(a, "auto-dismiss", json_object_new_boolean(false));
    add_speed(a, s->speed);
    if (s->granularity)
        json_object_object_add(a, "granularity", json_object_new_int64((int64_t)s->granularity));
    if (s->buf_size)
        json_object_object_add(a, "buf-size", json_object_new_int64((int64_t)s->buf_size));
    if (s->sync_writes)
        json_object_object_add(a, "copy-mode", json_object_new_string("write-blocking"));
    send_step(s, "blockdev-mirror", a, on_job_started);
}

/* After query-block: the destination, then the mirror. */
static void copy_step(setup *s)
{
    s->img.size = s->chain[0].size;
    if (s->shallow && s->nchain > 1) {
        s->img.backing = s->chain[1].file;
        s->img.backing_format = s->chain[1].format;
    }
    s->img_done = start_mirror;
    make_image(s);
}

/* A file's format as its first bytes say (an existing destination). */
static rv_qemu_disk_format probe_format(const char *file)
{
    unsigned char magic[4] = { 0 };
    int fd = rv_open_file_at(AT_FDCWD, file, O_RDONLY, 0, false, NULL);
    if (fd >= 0) {
        if (read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic))
            magic[0] = 0;
        close(fd);
    }
    return memcmp(magic, "QFI\xfb", 4) == 0 ? RV_QEMU_FORMAT_QCOW2 : RV_QEMU_FORMAT_RAW;
}

/* A copy of the disk path names to dest (format NULL: the source's, or an
 * existing file's own). */
static int copy(const rv_nonnull_domain *wire, const char *path, const char *dest, const char *format,
                unsigned long long speed, unsigned long long granularity, unsigned long long buf_size,
                bool shallow, bool reuse, bool sync_writes, bool transient_job, rv_err *err)
{
    setup *s;
    if (format && strcmp(format, "raw") != 0 && strcmp(format, "qcow2") != 0)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: format '%s' of a block copy "
                    "destination (raw or qcow2)", format);
    if (granularity && (granularity & (granularity - 1)))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: granularity must be power of 2");
    rv_qemu_disk *disk;
    qemu_dom *d = running_disk(wire, path, &disk, err);
    if (!d)
        return -1;
    /* As libvirtd 9.0: a copy that would outlive the job needs a
     * transient domain. */
    if (d->def && !transient_job)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: domain is not transient");
    if (job_of(d, disk->target) || rv_qemu_backup_job_id(d, disk->target))
        return fail(err, RV_ERR_BLOCK_COPY_ACTIVE, "block copy still active: disk '%s' already in active block job",
                    disk->target);
    struct stat st;
    if (!reuse && stat(dest, &st) == 0 && !S_ISBLK(st.st_mode))
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: external destination file for "
                    "disk %s already exists and is not a block device: %s", disk->target, dest);
    if (strcmp(dest, disk->source) == 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: destination '%s' is the disk's own source",
                    dest);
    rv_qemu_disk_format src_format = disk->format;
    int rc = start(wire, path, T_COPY, copy_step, &s, err);
    if (rc)
        return rc;
    bjob *j = s->job;
    j->new_format = format ? format_of(format) : reuse ? probe_format(dest) : src_format;
    s->img.format = j->new_format;
    s->img.reuse = reuse;
    if (!(j->new_source = strdup(dest)) || !(s->img.file = strdup(dest))) {
        fail_setup(s, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    s->speed = speed;
    s->granularity = granularity;
    s->buf_size = buf_size;
    s->shallow = shallow;
    s->sync_writes = sync_writes;
    return go(s);
}

/* destxml's source file and format (NULL: not given). */
static int read_dest(const char *xml, char **file, char **format, rv_err *err)
{
    xmlDoc *doc;
    xmlNode *root = rv_lx_read(xml, 1 << 20, "disk", "(block copy destination)", RV_FROM_DOM, &doc, err);
    if (!root)
        return -1;
    int failed = 0;
    char *type = rv_lx_attr(root, "type", &failed);
    xmlNode *src = rv_lx_child(root, "source"), *drv = rv_lx_child(root, "driver");
    *file = src ? rv_lx_attr(src, "file", &failed) : NULL;
    *format = drv ? rv_lx_attr(drv, "type", &failed) : NULL;
    int rc = 0;
    if (type && strcmp(type, "file") != 0)
        rc = rv_err_fail(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                         "unsupported configuration: block copy destination of type '%s' (file only)", type);
    else if (!*file)
        rc = rv_err_fail(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "XML error: the destination has no <source file>");
    free(type);
    rv_lx_free(doc);
    if (rc < 0) {
        free(*file);
        free(*format);
        *file = *format = NULL;
    }
    return rc;
}

int rv_qemu_domain_block_copy(rv_driver_conn *c, const rv_domain_block_copy_args *args, rv_err *err)
{
    (void)c;
    static const rv_tune_field fields[] = {
        { "bandwidth", RV_TYPED_PARAM_ULLONG },
        { "buf-size", RV_TYPED_PARAM_ULLONG },
        { "granularity", RV_TYPED_PARAM_UINT },
    };
    const rv_typed_param *p = args->params.params_val;
    unsigned n = args->params.params_len;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            COPY_SHALLOW | COPY_REUSE_EXT | COPY_TRANSIENT_JOB | COPY_SYNC_WRITES,
                            "qemuDomainBlockCopy", err) < 0 ||
        rv_tune_params_validate(p, n, fields, 3, err) < 0)
        return -1;
    const rv_typed_param *bw = rv_tune_param_find(p, n, "bandwidth");
    const rv_typed_param *buf = rv_tune_param_find(p, n, "buf-size");
    const rv_typed_param *gran = rv_tune_param_find(p, n, "granularity");
    char *file, *format;
    if (read_dest(args->destxml, &file, &format, err) < 0)
        return -1;
    int rc = copy(&args->dom, args->path, file, format, bw ? bw->value.rv_typed_param_value_u.ul : 0,
                  gran ? gran->value.rv_typed_param_value_u.ui : 0, buf ? buf->value.rv_typed_param_value_u.ul : 0,
                  args->flags & COPY_SHALLOW, args->flags & COPY_REUSE_EXT, args->flags & COPY_SYNC_WRITES,
                  args->flags & COPY_TRANSIENT_JOB, err);
    free(file);
    free(format);
    return rc;
}

int rv_qemu_domain_block_rebase(rv_driver_conn *c, const rv_domain_block_rebase_args *args, rv_err *err)
{
    (void)c;
    const char *base = args->base && *args->base ? *args->base : NULL;
    unsigned f = args->flags;
    if (rv_qemu_check_flags(RV_FROM_QEMU, f,
                            REBASE_SHALLOW | REBASE_REUSE_EXT | REBASE_COPY_RAW | REBASE_COPY | REBASE_RELATIVE |
                                REBASE_COPY_DEV | REBASE_BANDWIDTH_BYTES,
                            "qemuDomainBlockRebase", err) < 0)
        return -1;
    if (!(f & REBASE_COPY)) {
        /* As libvirt: without COPY a rebase is a pull down to base. */
        if (f & (REBASE_SHALLOW | REBASE_REUSE_EXT | REBASE_COPY_RAW | REBASE_COPY_DEV))
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: flags 0x%x need a copy (flag COPY)", f);
        return pull(&args->dom, args->path, base, args->bandwidth, f & REBASE_BANDWIDTH_BYTES, err);
    }
    if (!base)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: a copy needs a destination (base)");
    if (f & REBASE_COPY_DEV)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: block device destinations (file only)");
    if (f & REBASE_RELATIVE)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Relative backing during copy not supported yet");
    unsigned long long speed = 0;
    if (bandwidth(args->bandwidth, f & REBASE_BANDWIDTH_BYTES, &speed, err) < 0)
        return -1;
    return copy(&args->dom, args->path, base, f & REBASE_COPY_RAW ? "raw" : NULL, speed, 0, 0,
                f & REBASE_SHALLOW, f & REBASE_REUSE_EXT, false, false, err);
}

/* ================================================================ disk-only snapshots */

/* The overlays are in place: the disks' sources are now theirs, live and
 * in the definition (as libvirtd), and the call has its snapshot. */
typedef struct overlay_ctx {
    const snap_part *parts;
    size_t n;
} overlay_ctx;

static int overlay_def(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const overlay_ctx *o = ctx;
    for (size_t i = 0; i < o->n; i++) {
        pivot_ctx p = { o->parts[i].target, o->parts[i].old, o->parts[i].file, RV_QEMU_FORMAT_QCOW2 };
        if (pivot_def(def, &p, err) < 0)
            return -1;
    }
    return 0;
}

static void on_snapshot(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    setup *s = alive(qmp, err, opaque);
    if (!s)
        return;
    qemu_dom *d = rv_qemu_find_name(s->live.name);
    overlay_ctx o = { s->parts, s->nparts };
    rv_err e = { 0 };
    overlay_def(d->live, &o, &e);
    if (rv_qemu_save_status(d, &e) < 0)
        RV_WARN("cannot record the overlays of domain '%s': %s", d->live->name, e.message);
    rv_err_clear(&e);
    /* QEMU holds them now: not ours to drop. */
    for (size_t k = 0; k < s->nparts; k++)
        s->parts[k].node[0] = '\0';
    rv_deferred *reply = s->live.reply;
    s->live.reply = NULL;
    if (d->def && rv_qemu_def_change_no_event(d, overlay_def, &o, reply, &e) == 0)
        reply = NULL;
    if (reply)
        rv_deferred_finish(reply, NULL);
    rv_err_clear(&e);
    setup_free(s);
}

/* Every overlay made: one transaction puts them all over their disks. */
static void snapshot_next(setup *s)
{
    if (s->part < s->nparts && s->img.added == 2) {
        /* The overlay just made is the part's. */
        snap_part *p = &s->parts[s->part++];
        memcpy(p->node, s->img.nodes[0], sizeof(p->node));
        memcpy(p->file_node, s->img.nodes[1], sizeof(p->file_node));
        s->img.added = 0;
    }
    if (s->part < s->nparts) {
        snap_part *p = &s->parts[s->part];
        free(s->img.file);
        s->img.file = strdup(p->file);
        free(s->target);
        s->target = strdup(p->target);
        if (!s->img.file || !s->target) {
            fail_setup(s, RV_ERR_NO_MEMORY, "out of memory");
            return;
        }
        s->img.format = RV_QEMU_FORMAT_QCOW2;
        s->img.size = p->size;
        s->img.backing = p->old;
        s->img.backing_format = p->old_format;
        s->img.no_backing = true;
        s->create_id[0] = '\0';
        s->img_done = snapshot_next;
        make_image(s);
        return;
    }
    json_object *actions = json_object_new_array();
    for (size_t k = 0; k < s->nparts; k++) {
        json_object *act = json_object_new_object(), *data = json_object_new_object();
        json_object_object_add(data, "node", json_object_new_string(s->parts[k].root));
        json_object_object_add(data, "overlay", json_object_new_string(s->parts[k].node));
        json_object_object_add(act, "type", json_object_new_string("blockdev-snapshot"));
        json_object_object_add(act, "data", data);
        json_object_array_add(actions, act);
    }
    json_object *a = json_object_new_object();
    json_object_object_add(a, "actions", actions);
    send_step(s, "transaction", a, on_snapshot);
}

/* query-block's answer: each disk's root node, format and size. */
static void on_snapshot_blocks(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    setup *s = alive(qmp, err, opaque);
    if (!s)
        return;
    for (size_t k = 0; k < s->nparts; k++) {
        snap_part *p = &s->parts[k];
        json_object *e = rv_qemu_block_entry(ret, p->target), *ins = NULL, *img = NULL, *v;
        if (!e || !json_object_object_get_ex(e, "inserted", &ins) || !json_object_object_get_ex(ins, "image", &img) ||
            !json_object_object_get_ex(ins, "node-name", &v)) {
            fail_setup(s, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: disk '%s' has no medium",
                       p->target);
            return;
        }
        p->root = strdup(json_object_get_string(v));
        p->size = (unsigned long long)rv_qmp_json_int(img, "virtual-size", 0);
        p->old_format = format_of(json_object_object_get_ex(img, "format", &v) ? json_object_get_string(v) : NULL);
        if (!p->root) {
            fail_setup(s, RV_ERR_NO_MEMORY, "out of memory");
            return;
        }
    }
    snapshot_next(s);
}

int rv_qemu_blockjob_snapshot(qemu_dom *d, const struct rv_snapshot_request *req, const char *name, bool reuse,
                              rv_domain_snapshot_create_xml_ret *ret, rv_err *err)
{
    (void)ret;
    const rv_qemu_domain_def *def = d->live;
    snap_part *parts = calloc(def->ndisks ? def->ndisks : 1, sizeof(*parts));
    size_t n = 0;
    if (!parts)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < req->ndisks; i++)
        if (!req->disks[i].name || !rv_qemu_disk_find(def, req->disks[i].name)) {
            parts_free(parts, 0);
            return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                               "unsupported configuration: no disk named '%s'",
                               req->disks[i].name ? req->disks[i].name : "");
        }
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        const rv_snapshot_disk *asked = NULL;
        for (size_t k = 0; k < req->ndisks; k++)
            if (rv_qemu_disk_find(def, req->disks[k].name) == disk)
                asked = &req->disks[k];
        if (disk->device == RV_QEMU_DISK_CDROM || disk->readonly || !disk->source ||
            (asked && asked->snapshot && strcmp(asked->snapshot, "no") == 0))
            continue;
        if (asked && asked->snapshot && strcmp(asked->snapshot, "external") != 0) {
            parts_free(parts, n);
            return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                               "unsupported configuration: disk '%s' must use snapshot mode 'external'",
                               disk->target);
        }
        if (job_of(d, disk->target)) {
            parts_free(parts, n);
            return fail(err, RV_ERR_BLOCK_COPY_ACTIVE,
                        "block copy still active: disk '%s' already in active block job", disk->target);
        }
        snap_part *p = &parts[n++];
        p->target = strdup(disk->target);
        p->old = strdup(disk->source);
        p->old_format = disk->format;
        if (asked && asked->file) {
            p->file = strdup(asked->file);
        } else {
            /* libvirt's default: the source's name, its extension
             * replaced by the snapshot's name. */
            const char *dot = strrchr(disk->source, '.'), *slash = strrchr(disk->source, '/');
            int stem = dot && (!slash || dot > slash) ? (int)(dot - disk->source) : (int)strlen(disk->source);
            if (asprintf(&p->file, "%.*s.%s", stem, disk->source, name) < 0)
                p->file = NULL;
        }
        if (!p->target || !p->old || !p->file) {
            parts_free(parts, n);
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
        }
        struct stat st;
        if (!reuse && stat(p->file, &st) == 0 && !S_ISBLK(st.st_mode)) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: external snapshot file for disk %s already exists and "
                       "is not a block device: %s", disk->target, p->file);
            parts_free(parts, n);
            return -1;
        }
    }
    if (!n) {
        parts_free(parts, n);
        return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: no disk to snapshot");
    }
    setup *s = setup_new(d, parts[0].target, err);
    if (!s) {
        parts_free(parts, n);
        return -1;
    }
    s->parts = parts;
    s->nparts = n;
    s->img.reuse = reuse;
    rv_domain_snapshot_create_xml_ret *out = rv_deferred_ret(s->live.reply);
    rv_dom_ref ref = { 0 };
    if (!(out->snap.name = strdup(name)) || rv_qemu_dom_ref(d, &ref) < 0) {
        fail_setup(s, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    rv_dom_ref_to_wire(&out->snap.dom, &ref);
    send_step(s, "query-block", NULL, on_snapshot_blocks);
    return RV_DEFERRED;
}

/* ================================================================ across a restart */

/* A word of a record: bytes other than [A-Za-z0-9._/+-] as %XX, "-" for
 * an empty one, so that any path fits in a space-separated line. */
static void put_word(FILE *f, const char *w)
{
    if (!w || !*w) {
        fputs(" -", f);
        return;
    }
    fputc(' ', f);
    for (const unsigned char *p = (const unsigned char *)w; *p; p++)
        if (isalnum(*p) || strchr("._/+-", *p))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
}

static char *get_word(char **line)
{
    char *w = strsep(line, " ");
    if (!w || !*w)
        return NULL;
    char *out = malloc(strlen(w) + 1), *o = out;
    for (const char *p = w; out && *p; p++) {
        unsigned x;
        if (*p == '%' && sscanf(p + 1, "%2x", &x) == 1) {
            *o++ = (char)x;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    if (out)
        *o = '\0';
    if (out && strcmp(out, "-") == 0)
        *out = '\0';
    return out;
}

char *rv_qemu_blockjob_status(const qemu_dom *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    for (const bjob *j = jobs; j; j = j->next) {
        if (!j->running || strcmp(j->dom, d->live->name) != 0 || j->pid != d->pid)
            continue;
        fprintf(f, "blockjob %d %d %d %d %d %d", j->type, j->ready, j->pivoting, j->cancelling, j->abort_asked,
                (int)j->new_format);
        put_word(f, j->id);
        put_word(f, j->target);
        put_word(f, j->nodes[0]);
        put_word(f, j->nodes[1]);
        put_word(f, j->new_source);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The number a name of ours ends with ("copy-vda-7"): new names go past it. */
static void serial_past(const char *name)
{
    const char *dash = name ? strrchr(name, '-') : NULL;
    unsigned long n = dash ? strtoul(dash + 1, NULL, 10) : 0;
    if (n > serial && n < 0xffffffffUL)
        serial = (unsigned)n;
}

void rv_qemu_blockjob_restore(qemu_dom *d, const char *status)
{
    for (const char *l = strstr(status, "\nblockjob "); l; l = strstr(l + 1, "\nblockjob ")) {
        const char *end = strchr(l + 1, '\n');
        char *line = end ? strndup(l + 10, (size_t)(end - l - 10)) : NULL, *rest = line;
        int type, ready, pivoting, cancelling, aborted, format, used = 0;
        if (!line || sscanf(line, "%d %d %d %d %d %d %n", &type, &ready, &pivoting, &cancelling, &aborted,
                            &format, &used) != 6 || !used || type < T_PULL || type > T_ACTIVE_COMMIT) {
            RV_WARN("domain '%s': ignoring an unreadable block job record", d->live->name);
            free(line);
            continue;
        }
        rest += used;
        char *id = get_word(&rest), *target = get_word(&rest), *n0 = get_word(&rest), *n1 = get_word(&rest),
             *source = get_word(&rest);
        rv_err err = { 0 };
        bjob *j = id && target && n0 && n1 && source && strlen(id) < sizeof(j->id) &&
                          strlen(n0) < sizeof(j->nodes[0]) && strlen(n1) < sizeof(j->nodes[1])
                      ? job_new(d, target, type, &err)
                      : NULL;
        if (j) {
            snprintf(j->id, sizeof(j->id), "%s", id);
            snprintf(j->nodes[0], sizeof(j->nodes[0]), "%s", n0);
            snprintf(j->nodes[1], sizeof(j->nodes[1]), "%s", n1);
            j->running = true;
            j->ready = ready, j->pivoting = pivoting, j->cancelling = cancelling, j->abort_asked = aborted;
            j->new_format = (rv_qemu_disk_format)format;
            if (*source)
                j->new_source = source, source = NULL;
            serial_past(j->id);
            RV_INFO("domain '%s': block job %s on disk '%s' taken back", d->live->name, j->id, j->target);
        } else {
            RV_WARN("domain '%s': ignoring a block job record: %s", d->live->name,
                    err.message ? err.message : "unreadable");
        }
        rv_err_clear(&err);
        free(id), free(target), free(n0), free(n1), free(source), free(line);
    }
}

/* What QEMU says of the domain's jobs and disks, after a restart. */
typedef struct resync {
    char *dom;
    pid_t pid;
    json_object *jobs;          /* query-jobs' answer, until query-block's */
} resync;

static void resync_free(resync *r)
{
    json_object_put(r->jobs);
    free(r->dom);
    free(r);
}

/* In a resync's answer: its domain, if it still runs with this monitor. */
static qemu_dom *resync_dom(const resync *r, rv_qmp *qmp, const rv_err *err, const char *what)
{
    qemu_dom *d = rv_qemu_find_name(r->dom);
    if (!d || !d->live || d->pid != r->pid || d->qmp != qmp)
        return NULL;
    if (err) {
        RV_WARN("domain '%s': cannot read its block jobs back (%s): %s", r->dom, what,
                err->message ? err->message : "");
        return NULL;
    }
    return d;
}

/* The active image of the disk with this target, per query-block. */
static const char *active_file(json_object *blocks, const char *target)
{
    json_object *e = rv_qemu_block_entry(blocks, target), *ins, *img, *v;
    if (e && json_object_object_get_ex(e, "inserted", &ins) && json_object_object_get_ex(ins, "image", &img) &&
        json_object_object_get_ex(img, "filename", &v))
        return json_object_get_string(v);
    return NULL;
}

/* One recorded job j, as QEMU now has it (e: its query-jobs entry, or NULL). */
static void resync_job(qemu_dom *d, bjob *j, json_object *e, json_object *blocks)
{
    json_object *v;
    const char *status = e && json_object_object_get_ex(e, "status", &v) ? json_object_get_string(v) : NULL;
    const char *now = active_file(blocks, j->target);
    if (!status && j->new_source && (j->type == T_COPY || j->type == T_ACTIVE_COMMIT) && now &&
        strcmp(now, j->new_source) == 0) {
        /* Dismissed, and remvirtd stopped before the status had the
         * pivot: the disk reads the new image, so the pivot is applied
         * now (the dismiss is asked again, in vain). */
        RV_INFO("domain '%s': block job %s pivoted before remvirtd stopped", d->live->name, j->id);
        j->outcome = ST_COMPLETED;
        j->pivoting = true;
        j->cancelling = false;
        conclude(d, j);
        return;
    }
    if (!status) {
        /* Dismissed before the record said so: nothing left to tell. */
        RV_WARN("domain '%s': block job %s is no longer in QEMU: dropped", d->live->name, j->id);
        job_unlink(j);
        record(d);
        return;
    }
    if (strcmp(status, "concluded") == 0) {
        bool failed = json_object_object_get_ex(e, "error", &v);
        if (failed && !j->abort_asked)
            RV_WARN("domain '%s': block job %s failed while remvirtd was away: %s", d->live->name, j->id,
                    json_object_get_string(v));
        j->outcome = !failed ? ST_COMPLETED : j->abort_asked ? ST_CANCELED : ST_FAILED;
        if (!failed && j->new_source && (j->type == T_COPY || j->type == T_ACTIVE_COMMIT)) {
            /* Completed: pivoted if the disk now reads the new image,
             * else ended by a cancel after it was ready. */
            j->pivoting = now && strcmp(now, j->new_source) == 0;
            j->cancelling = !j->pivoting;
        }
        RV_INFO("domain '%s': block job %s concluded while remvirtd was away", d->live->name, j->id);
        conclude(d, j);
        return;
    }
    if (strcmp(status, "ready") == 0 && !j->ready) {
        j->ready = true;
        record(d);
        event(d, j, ST_READY);
    }
    /* A pivot or an abort asked just before the stop may never have
     * reached QEMU: asked again (QEMU takes a repeat). */
    bool running = strcmp(status, "running") == 0 || strcmp(status, "ready") == 0;
    if (strcmp(status, "ready") == 0 && j->pivoting)
        rv_qemu_send_quietly(d->qmp, "job-complete", "id", j->id);
    else if (running && (j->cancelling || j->abort_asked))
        rv_qemu_send_quietly(d->qmp, "block-job-cancel", "device", j->id);
}

static void on_resync_blocks(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    resync *r = opaque;
    qemu_dom *d = resync_dom(r, qmp, err, "query-block");
    size_t n = r->jobs ? json_object_array_length(r->jobs) : 0;
    for (size_t i = 0; d && i < n; i++) {
        /* A new image's blockdev-create left concluded by the stop. */
        json_object *e = json_object_array_get_idx(r->jobs, i), *v, *st;
        const char *id = json_object_object_get_ex(e, "id", &v) ? json_object_get_string(v) : NULL;
        serial_past(id);
        if (id && strncmp(id, "create-", 7) == 0 && json_object_object_get_ex(e, "status", &st) &&
            strcmp(json_object_get_string(st), "concluded") == 0)
            rv_qemu_send_quietly(qmp, "job-dismiss", "id", id);
    }
    for (bjob *j = jobs, *next; d && j; j = next) {
        next = j->next;
        if (strcmp(j->dom, r->dom) != 0 || j->pid != r->pid || !j->running)
            continue;
        j->qmp = qmp;
        json_object *e = NULL;
        for (size_t i = 0; i < n && !e; i++) {
            json_object *v, *x = json_object_array_get_idx(r->jobs, i);
            if (json_object_object_get_ex(x, "id", &v) && strcmp(json_object_get_string(v), j->id) == 0)
                e = x;
        }
        resync_job(d, j, e, ret);     /* (may free j, no other job) */
    }
    resync_free(r);
}

static void on_resync_jobs(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    resync *r = opaque;
    rv_err e = { 0 };
    if (!resync_dom(r, qmp, err, "query-jobs") ||
        rv_qmp_command(qmp, "query-block", NULL, 0, on_resync_blocks, r, &e) < 0) {
        rv_err_clear(&e);
        resync_free(r);
        return;
    }
    r->jobs = json_object_get(ret);
}

/* The nodes QEMU has: new names go past those of ours. */
static void on_resync_nodes(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)opaque;
    size_t n = !err && json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *v;
        if (json_object_object_get_ex(json_object_array_get_idx(ret, i), "node-name", &v) &&
            strncmp(json_object_get_string(v), "img-", 4) == 0)
            serial_past(json_object_get_string(v));
    }
}

void rv_qemu_blockjob_resync(qemu_dom *d)
{
    rv_err err = { 0 };
    json_object *a = json_object_new_object();
    json_object_object_add(a, "flat", json_object_new_boolean(true));
    if (rv_qmp_command(d->qmp, "query-named-block-nodes", a, 0, on_resync_nodes, NULL, &err) < 0)
        rv_err_clear(&err);
    resync *r = calloc(1, sizeof(*r));
    if (!r || !(r->dom = strdup(d->live->name))) {
        free(r);
        RV_WARN("domain '%s': out of memory reading its block jobs back", d->live->name);
        return;
    }
    r->pid = d->pid;
    if (rv_qmp_command(d->qmp, "query-jobs", NULL, 0, on_resync_jobs, r, &err) < 0) {
        RV_WARN("domain '%s': cannot read its block jobs back: %s", d->live->name, err.message);
        rv_err_clear(&err);
        resync_free(r);
    }
}
