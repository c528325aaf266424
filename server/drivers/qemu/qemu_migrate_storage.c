/* Migration of non-shared storage (VIR_MIGRATE_NON_SHARED_DISK, "virsh
 * migrate --copy-storage-all", and NON_SHARED_INC, "--copy-storage-inc"),
 * the way libvirtd 9.0 does it, over QEMU's NBD server:
 *   destination  PREPARE3  after migrate-incoming: nbd-server-start on a
 *                          port (the disks_port parameter, else one of
 *                          qemu_migration_port_min..max) and a writable
 *                          block-export-add of each disk copied (named
 *                          drive-<target>); the port goes back in the
 *                          cookie, <nbd port='N'/>, as libvirt's does
 *   source       PERFORM3  before QEMU's migrate: for each disk copied a
 *                          blockdev-add of an NBD client node on that
 *                          export and a blockdev-mirror onto it (sync full,
 *                          or top for NON_SHARED_INC, whose destination has
 *                          the same backing chain); migrate only once every
 *                          mirror is READY; after the stream (completed or
 *                          not) block-job-cancel of each mirror (a READY one
 *                          with the guest stopped leaves the copy complete)
 *                          and blockdev-del of the NBD nodes, and only then
 *                          the answer
 *   destination  FINISH3   nbd-server-stop before cont
 * A failure at any step fails PERFORM3 (or PREPARE3): the client then
 * cancels, the source runs on with its own disks and the destination's
 * QEMU is killed; the destination's images stay as they are (libvirtd
 * leaves them too).  The destination's images must exist (created by the
 * administrator with the same size, or the same backing for
 * --copy-storage-inc): QEMU opens them at PREPARE3.
 * Nothing waits: the QMP answers and QEMU's BLOCK_JOB_* events move it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ev.h>

#include "common/log.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_jobinfo.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("qemu.migrate");

enum { PH_EXPORT, PH_MIRROR, PH_RUN, PH_END };

typedef struct mdisk {
    char *target;               /* vda */
    char *node;                 /* its root node in QEMU */
    bool started, ready, over;  /* its mirror */
} mdisk;

struct rv_qemu_migstore {
    bool source;
    bool incremental;           /* NON_SHARED_INC: sync top */
    int phase;
    mdisk *disks;
    size_t ndisks;
    char *host;                 /* source: the destination's NBD server */
    int port;                   /* its port (destination: our server's) */
    unsigned long long speed;   /* bytes/s for the mirrors; 0: unlimited */
    int pending;                /* destination: commands still to answer */
    rv_err err;                 /* the first failure */
    rv_qemu_migstore_done_fn next;
    /* Source: the mirrors' progress for domjobinfo (query-block-jobs
     * every 0.5 s while they run), in bytes. */
    ev_timer poll;
    qemu_dom *dom;
    unsigned long long copy_total, copy_done;
    /* Source: the suffix of this copy's job and node names: a copy that a
     * killed remvirtd left in QEMU (its NBD node stays) never collides. */
    unsigned tag;
};

/* migrate-<target>-<tag>, the mirror's job id; with "-nbd", its NBD node. */
static void job_name(const rv_qemu_migstore *ms, const char *target, bool node, char *buf, size_t size)
{
    snprintf(buf, size, "migrate-%s-%x%s", target, ms->tag, node ? "-nbd" : "");
}

#define fail(err, ...) rv_err_fail(err, RV_FROM_QEMU, __VA_ARGS__)

static void migstore_free(rv_qemu_migstore *ms)
{
    if (!ms)
        return;
    ev_timer_stop(rv_qemu.loop, &ms->poll);
    for (size_t i = 0; i < ms->ndisks; i++) {
        free(ms->disks[i].target);
        free(ms->disks[i].node);
    }
    free(ms->disks);
    free(ms->host);
    rv_err_clear(&ms->err);
    free(ms);
}

/* The disks copied: those the migrate_disks parameters name (each must
 * be a disk of def with a source), else every writable disk with a
 * source, as libvirtd chooses. */
static rv_qemu_migstore *migstore_new(const rv_qemu_domain_def *def, unsigned int flags,
                                      const rv_typed_param *params, u_int n, rv_err *err)
{
    rv_qemu_migstore *ms = calloc(1, sizeof(*ms));
    if (!ms || !(ms->disks = calloc(def->ndisks ? def->ndisks : 1, sizeof(*ms->disks)))) {
        free(ms);
        fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
        return NULL;
    }
    ms->incremental = !(flags & RV_QEMU_MIGRATE_NON_SHARED_DISK);
    bool named = false;
    for (u_int i = 0; i < n; i++) {
        if (strcmp(params[i].field, "migrate_disks") != 0)
            continue;
        named = true;
        const char *t = params[i].value.type == RV_TYPED_PARAM_STRING
                            ? params[i].value.rv_typed_param_value_u.s : "";
        rv_qemu_disk *disk = rv_qemu_disk_find((rv_qemu_domain_def *)def, t);
        if (!disk || !disk->source || disk->device != RV_QEMU_DISK_DISK) {
            migstore_free(ms);
            fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk target %s not found", t);
            return NULL;
        }
        bool dup = false;
        for (size_t k = 0; k < ms->ndisks; k++)
            dup |= strcmp(ms->disks[k].target, disk->target) == 0;
        if (!dup && !(ms->disks[ms->ndisks++].target = strdup(disk->target))) {
            migstore_free(ms);
            fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
            return NULL;
        }
    }
    for (size_t i = 0; !named && i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        if (!disk->source || disk->readonly || disk->device != RV_QEMU_DISK_DISK)
            continue;
        if (!(ms->disks[ms->ndisks++].target = strdup(disk->target))) {
            migstore_free(ms);
            fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
            return NULL;
        }
    }
    return ms;
}

/* The process went: the job waiting on it is answered by the process's
 * end (as for a stream cut short), so only the record goes. */
void rv_qemu_migstore_gone(qemu_dom *d)
{
    migstore_free(d->migstore);
    d->migstore = NULL;
}

static void keep_error(rv_qemu_migstore *ms, const char *what, const rv_err *err)
{
    if (!rv_err_is_set(&ms->err))
        rv_err_set(&ms->err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s: %s", what,
                   err && err->message ? err->message : "QEMU refused");
}

/* ================================================================ destination */

rv_qemu_migstore *rv_qemu_migstore_new_dest(const rv_qemu_domain_def *def, unsigned int flags,
                                            const rv_typed_param *params, u_int n, int port,
                                            rv_err *err)
{
    rv_qemu_migstore *ms = migstore_new(def, flags, params, n, err);
    if (ms) {
        ms->port = port;
        ms->phase = PH_EXPORT;
    }
    return ms;
}

void rv_qemu_migstore_free(rv_qemu_migstore *ms)
{
    migstore_free(ms);
}

int rv_qemu_migstore_port(const qemu_dom *d)
{
    return d->migstore && !d->migstore->source ? d->migstore->port : 0;
}

static void on_exported(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    rv_qemu_migstore *ms = d->migstore;
    if (d->qmp != qmp || !ms || ms->source)
        return;
    if (err)
        keep_error(ms, "the NBD server for the disks", err);
    if (--ms->pending > 0)
        return;
    rv_qemu_migstore_done_fn next = ms->next;
    ms->next = NULL;
    if (next)
        next(d, rv_err_is_set(&ms->err) ? &ms->err : NULL);
}

static void on_dest_blocks(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    qemu_dom *d = opaque;
    rv_qemu_migstore *ms = d->migstore;
    if (d->qmp != qmp || !ms || ms->source)
        return;
    rv_err e = { 0 };
    ms->pending = 1;            /* (this answer) */
    if (err) {
        keep_error(ms, "query-block", err);
        on_exported(qmp, NULL, NULL, d);
        return;
    }
    json_object *args = json_object_new_object(), *addr = json_object_new_object(),
                *data = json_object_new_object();
    char port[16];
    snprintf(port, sizeof(port), "%d", ms->port);
    json_object_object_add(data, "host", json_object_new_string("0.0.0.0"));
    json_object_object_add(data, "port", json_object_new_string(port));
    json_object_object_add(addr, "type", json_object_new_string("inet"));
    json_object_object_add(addr, "data", data);
    json_object_object_add(args, "addr", addr);
    if (rv_qmp_command(qmp, "nbd-server-start", args, 0, on_exported, d, &e) == 0)
        ms->pending++;
    else
        keep_error(ms, "nbd-server-start", &e);
    rv_err_clear(&e);
    for (size_t i = 0; i < ms->ndisks && !rv_err_is_set(&ms->err); i++) {
        json_object *entry = rv_qemu_block_entry(ret, ms->disks[i].target), *ins, *v;
        if (!entry || !json_object_object_get_ex(entry, "inserted", &ins) ||
            !json_object_object_get_ex(ins, "node-name", &v)) {
            rv_err_set(&ms->err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                       "internal error: QEMU has no disk '%s' to export", ms->disks[i].target);
            break;
        }
        char name[80];
        snprintf(name, sizeof(name), "drive-%s", ms->disks[i].target);
        json_object *a = json_object_new_object();
        json_object_object_add(a, "type", json_object_new_string("nbd"));
        json_object_object_add(a, "id", json_object_new_string(name));
        json_object_object_add(a, "node-name", json_object_new_string(json_object_get_string(v)));
        json_object_object_add(a, "name", json_object_new_string(name));
        json_object_object_add(a, "writable", json_object_new_boolean(1));
        if (rv_qmp_command(qmp, "block-export-add", a, 0, on_exported, d, &e) == 0)
            ms->pending++;
        else
            keep_error(ms, "block-export-add", &e);
        rv_err_clear(&e);
    }
    on_exported(qmp, NULL, NULL, d);
}

void rv_qemu_migstore_export(qemu_dom *d, rv_qemu_migstore_done_fn next)
{
    rv_qemu_migstore *ms = d->migstore;
    rv_err e = { 0 };
    ms->next = next;
    RV_INFO("domain '%s': exporting %zu disk(s) over NBD on port %d", d->live->name, ms->ndisks,
            ms->port);
    if (!d->qmp || rv_qmp_command(d->qmp, "query-block", NULL, 0, on_dest_blocks, d, &e) < 0) {
        ms->next = NULL;
        keep_error(ms, "query-block", &e);
        next(d, &ms->err);
    }
    rv_err_clear(&e);
}

void rv_qemu_migstore_stop_server(qemu_dom *d)
{
    if (!d->migstore || d->migstore->source)
        return;
    if (d->qmp)
        rv_qemu_send_quietly(d->qmp, "nbd-server-stop", NULL, NULL);
    migstore_free(d->migstore);
    d->migstore = NULL;
}

/* ================================================================ source */

/* The destination's NBD port from its cookie (<nbd port='N'>); 0 when
 * there is none. */
static int cookie_port(const char *cookie, u_int len)
{
    xmlDoc *doc;
    xmlNode *root = rv_qemu_migrate_cookie_read(cookie, len, &doc);
    xmlNode *nbd = root ? rv_lx_plain_child(root, "nbd") : NULL;
    int failed = 0;
    char *text = nbd ? rv_lx_attr(nbd, "port", &failed) : NULL;
    char *end = NULL;
    long port = text ? strtol(text, &end, 10) : 0;
    int ok = text && end != text && *end == '\0' && port > 0 && port < 65536;
    free(text);
    rv_lx_free(doc);
    return ok ? (int)port : 0;
}

int rv_qemu_migstore_perform(qemu_dom *d, unsigned int flags, const rv_typed_param *params, u_int n,
                             const char *uri, const char *cookie, u_int cookie_len,
                             unsigned long long bandwidth_mib, rv_err *err)
{
    int port = cookie_port(cookie, cookie_len);
    if (!port)
        return fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                    "the destination offered no NBD server for the disks (its cookie has no <nbd port>)");
    /* tcp:HOST:PORT or tcp://HOST:PORT, HOST maybe [v6] */
    const char *h = uri + (strncmp(uri, "tcp://", 6) == 0 ? 6 : 4);
    const char *end = strrchr(h, ':');
    if (!end || end == h)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: migration URI '%s' has no host", uri);
    if (*h == '[' && end[-1] == ']') {
        h++;
        end--;
    }
    if (d->migstore)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "a storage migration is already under way");
    rv_qemu_migstore *ms = migstore_new(d->live, flags, params, n, err);
    if (!ms)
        return -1;
    ms->source = true;
    ms->tag = (unsigned)time(NULL) & 0xffffff;
    ms->port = port;
    ms->speed = bandwidth_mib << 20;
    if (!(ms->host = strndup(h, (size_t)(end - h)))) {
        migstore_free(ms);
        return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    }
    d->migstore = ms;
    return 0;
}

bool rv_qemu_migstore_pending(const qemu_dom *d)
{
    return d->migstore && d->migstore->source && d->migstore->phase < PH_RUN;
}

static void mirror_failed(qemu_dom *d, const char *what, const rv_err *why)
{
    rv_qemu_migstore *ms = d->migstore;
    keep_error(ms, what, why);
    if (ms->phase == PH_MIRROR) {
        ms->phase = PH_RUN;     /* (nothing more is started) */
        rv_qemu_migstore_done_fn next = ms->next;
        ms->next = NULL;
        if (next)
            next(d, &ms->err);
    } else if (ms->phase == PH_RUN && d->qmp) {
        /* A mirror broke while the memory goes: the copy would be stale. */
        rv_qemu_send_quietly(d->qmp, "migrate_cancel", NULL, NULL);
    }
}

static void all_ready(qemu_dom *d)
{
    rv_qemu_migstore *ms = d->migstore;
    for (size_t i = 0; i < ms->ndisks; i++)
        if (!ms->disks[i].ready)
            return;
    RV_INFO("domain '%s': %zu disk mirror(s) ready, migrating the memory", d->live->name, ms->ndisks);
    ms->phase = PH_RUN;
    rv_qemu_migstore_done_fn next = ms->next;
    ms->next = NULL;
    if (next)
        next(d, NULL);
}

static void on_mirror_sent(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->migstore || !d->migstore->source)
        return;
    if (err)
        mirror_failed(d, "the disk mirror", err);
}

static void on_source_blocks(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    qemu_dom *d = opaque;
    rv_qemu_migstore *ms = d->migstore;
    if (d->qmp != qmp || !ms || !ms->source || ms->phase != PH_MIRROR)
        return;
    if (err) {
        mirror_failed(d, "query-block", err);
        return;
    }
    char port[16];
    snprintf(port, sizeof(port), "%d", ms->port);
    for (size_t i = 0; i < ms->ndisks; i++) {
        mdisk *md = &ms->disks[i];
        json_object *entry = rv_qemu_block_entry(ret, md->target), *ins, *v;
        if (!entry || !json_object_object_get_ex(entry, "inserted", &ins) ||
            !json_object_object_get_ex(ins, "node-name", &v) || !(md->node = strdup(json_object_get_string(v)))) {
            rv_err e = { 0 };
            rv_err_set(&e, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR, "QEMU has no disk '%s'", md->target);
            mirror_failed(d, "the disk mirror", &e);
            rv_err_clear(&e);
            return;
        }
    }
    for (size_t i = 0; i < ms->ndisks; i++) {
        mdisk *md = &ms->disks[i];
        char nbd[96], job[80], exp[80];
        job_name(ms, md->target, true, nbd, sizeof(nbd));
        job_name(ms, md->target, false, job, sizeof(job));
        snprintf(exp, sizeof(exp), "drive-%s", md->target);
        json_object *server = json_object_new_object(), *a = json_object_new_object();
        json_object_object_add(server, "type", json_object_new_string("inet"));
        json_object_object_add(server, "host", json_object_new_string(ms->host));
        json_object_object_add(server, "port", json_object_new_string(port));
        json_object_object_add(a, "driver", json_object_new_string("nbd"));
        json_object_object_add(a, "node-name", json_object_new_string(nbd));
        json_object_object_add(a, "server", server);
        json_object_object_add(a, "export", json_object_new_string(exp));
        rv_err e = { 0 };
        if (rv_qmp_command(qmp, "blockdev-add", a, 0, on_mirror_sent, d, &e) < 0) {
            mirror_failed(d, "blockdev-add", &e);
            rv_err_clear(&e);
            return;
        }
        json_object *m = json_object_new_object();
        json_object_object_add(m, "job-id", json_object_new_string(job));
        json_object_object_add(m, "device", json_object_new_string(md->node));
        json_object_object_add(m, "target", json_object_new_string(nbd));
        json_object_object_add(m, "sync", json_object_new_string(ms->incremental ? "top" : "full"));
        if (ms->speed)
            json_object_object_add(m, "speed", json_object_new_int64((int64_t)ms->speed));
        md->started = true;
        if (rv_qmp_command(qmp, "blockdev-mirror", m, 0, on_mirror_sent, d, &e) < 0) {
            md->started = false;
            mirror_failed(d, "blockdev-mirror", &e);
            rv_err_clear(&e);
            return;
        }
    }
    all_ready(d);       /* (no disk to copy: at once) */
}

static bool is_ours(const rv_qemu_migstore *ms, const char *id)
{
    for (size_t i = 0; id && i < ms->ndisks; i++) {
        char job[80];
        job_name(ms, ms->disks[i].target, false, job, sizeof(job));
        if (strcmp(job, id) == 0)
            return true;
    }
    return false;
}

static void on_block_jobs(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    qemu_dom *d = opaque;
    rv_qemu_migstore *ms = d->migstore;
    if (d->qmp != qmp || !ms || !ms->source || err || !json_object_is_type(ret, json_type_array))
        return;
    unsigned long long total = 0, done = 0;
    for (size_t i = 0; i < json_object_array_length(ret); i++) {
        json_object *job = json_object_array_get_idx(ret, i), *v;
        if (!json_object_object_get_ex(job, "device", &v) || !is_ours(ms, json_object_get_string(v)))
            continue;
        total += (unsigned long long)rv_qmp_json_int(job, "len", 0);
        done += (unsigned long long)rv_qmp_json_int(job, "offset", 0);
    }
    if (!total)
        return;
    ms->copy_total = total;
    ms->copy_done = done;
    rv_qemu_jobinfo_disk(d, total, done);
}

static void on_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    rv_qemu_migstore *ms = t->data;
    rv_err e = { 0 };
    if (ms->dom->qmp && rv_qmp_command(ms->dom->qmp, "query-block-jobs", NULL, 0, on_block_jobs,
                                       ms->dom, &e) < 0)
        rv_err_clear(&e);
}

/* NBD nodes of a copy that a killed remvirtd left (rv_qemu_migstore_reattach
 * cancelled their mirrors): removed, since QEMU would fail to inactivate
 * them (their server is gone) at the end of the next migration. */
static void on_nodes(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)opaque;
    size_t n = !err && json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *v;
        const char *node = json_object_object_get_ex(json_object_array_get_idx(ret, i), "node-name", &v)
                               ? json_object_get_string(v) : "";
        size_t len = strlen(node);
        if (strncmp(node, "migrate-", 8) == 0 && len > 4 && strcmp(node + len - 4, "-nbd") == 0) {
            RV_WARN("removing the NBD node %s of a storage copy cut off earlier", node);
            rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", node);
        }
    }
}

void rv_qemu_migstore_mirror(qemu_dom *d, rv_qemu_migstore_done_fn next)
{
    rv_qemu_migstore *ms = d->migstore;
    rv_err e = { 0 };
    ms->phase = PH_MIRROR;
    ms->next = next;
    ms->dom = d;
    ev_timer_init(&ms->poll, on_poll, 0.5, 0.5);
    ms->poll.data = ms;
    ev_timer_start(rv_qemu.loop, &ms->poll);
    RV_INFO("domain '%s': copying %zu disk(s) to %s:%d", d->live->name, ms->ndisks, ms->host, ms->port);
    if (d->qmp && rv_qmp_command(d->qmp, "query-named-block-nodes", NULL, 0, on_nodes, NULL, &e) < 0)
        rv_err_clear(&e);
    if (!d->qmp || rv_qmp_command(d->qmp, "query-block", NULL, 0, on_source_blocks, d, &e) < 0)
        mirror_failed(d, "query-block", &e);
    rv_err_clear(&e);
}

int rv_qemu_migstore_abort(qemu_dom *d, rv_err *err)
{
    rv_qemu_migstore *ms = d->migstore;
    if (ms && ms->source && ms->phase == PH_MIRROR) {
        /* libvirtd's words for an abort during the copy (observed; the
         * memory's abort says "job 'migration out' canceled by client") */
        if (!rv_err_is_set(&ms->err))
            rv_err_set(&ms->err, RV_FROM_QEMU, RV_ERR_OPERATION_ABORTED,
                       "operation aborted: migration out: canceled by client");
        mirror_failed(d, "the disk mirror", NULL);
        return 0;
    }
    return rv_qemu_migration_cancel(d, err);
}

/* Each mirror over (or never started): the NBD nodes go, then the answer. */
static void end_when_over(qemu_dom *d)
{
    rv_qemu_migstore *ms = d->migstore;
    for (size_t i = 0; i < ms->ndisks; i++)
        if (ms->disks[i].started && !ms->disks[i].over)
            return;
    for (size_t i = 0; i < ms->ndisks && d->qmp; i++) {
        char nbd[96];
        job_name(ms, ms->disks[i].target, true, nbd, sizeof(nbd));
        rv_qemu_send_quietly(d->qmp, "blockdev-del", "node-name", nbd);
    }
    d->migstore = NULL;
    ev_timer_stop(rv_qemu.loop, &ms->poll);
    bool ok = !rv_err_is_set(&ms->err);
    if (ok && ms->copy_total)       /* (the copy is whole: the job's last figures) */
        rv_qemu_jobinfo_disk(d, ms->copy_total, ms->copy_total);
    rv_qemu_migstore_done_fn next = ms->next;
    ms->next = NULL;
    if (next)
        next(d, ok ? NULL : &ms->err);
    migstore_free(ms);
}

static void on_cancel_sent(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    rv_qemu_migstore *ms = d->migstore;
    if (d->qmp != qmp || !ms || !ms->source || ms->phase != PH_END || !err)
        return;
    /* Refused: no such job (it failed and went already; QEMU answers in
     * order, so the others' events, if any, came before). */
    for (size_t i = 0; i < ms->ndisks; i++)
        ms->disks[i].over = true;
    end_when_over(d);
}

void rv_qemu_migstore_end(qemu_dom *d, const rv_err *why, rv_qemu_migstore_done_fn next)
{
    rv_qemu_migstore *ms = d->migstore;
    if (why && !rv_err_is_set(&ms->err))   /* (the stream's failure, as it was) */
        rv_err_set(&ms->err, why->domain, why->code, "%s", why->message ? why->message : "");
    ms->phase = PH_END;
    ms->next = next;
    bool ok = !rv_err_is_set(&ms->err);
    for (size_t i = 0; i < ms->ndisks; i++) {
        mdisk *md = &ms->disks[i];
        if (!md->started || md->over || !d->qmp)
            continue;
        char job[80];
        job_name(ms, md->target, false, job, sizeof(job));
        json_object *a = json_object_new_object();
        json_object_object_add(a, "device", json_object_new_string(job));
        json_object_object_add(a, "force", json_object_new_boolean(!ok));
        rv_err e = { 0 };
        if (rv_qmp_command(d->qmp, "block-job-cancel", a, 0, on_cancel_sent, d, &e) < 0)
            md->over = true;
        rv_err_clear(&e);
    }
    if (!d->qmp)
        for (size_t i = 0; i < ms->ndisks; i++)
            ms->disks[i].over = true;
    end_when_over(d);
}

/* The BLOCK_JOB and BLOCK_JOB_2 events libvirtd sends for a migration's
 * mirror: a Block Copy (2), ready (3) then completed (0) (observed), or
 * failed (1) or canceled (2). */
static void job_event(qemu_dom *d, const mdisk *md, int status)
{
    rv_dom_ref ref = { 0 };
    const rv_qemu_disk *disk = rv_qemu_disk_find(d->live, md->target);
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_block_job_event(&rv_qemu_driver, &ref, disk ? disk->source : NULL, md->target, 2,
                                  status);
    free(ref.name);
}

void rv_qemu_migstore_event(qemu_dom *d, const char *name, json_object *data)
{
    rv_qemu_migstore *ms = d->migstore;
    json_object *v;
    if (!ms || !ms->source || !data || !json_object_object_get_ex(data, "device", &v))
        return;
    const char *id = json_object_get_string(v);
    mdisk *md = NULL;
    for (size_t i = 0; i < ms->ndisks; i++) {
        char job[80];
        job_name(ms, ms->disks[i].target, false, job, sizeof(job));
        if (strcmp(job, id) == 0)
            md = &ms->disks[i];
    }
    if (!md)
        return;
    if (strcmp(name, "BLOCK_JOB_READY") == 0 && !md->ready) {
        md->ready = true;
        job_event(d, md, 3);
        if (ms->phase == PH_MIRROR)
            all_ready(d);
    } else if ((strcmp(name, "BLOCK_JOB_COMPLETED") == 0 || strcmp(name, "BLOCK_JOB_CANCELLED") == 0) &&
               !md->over) {
        md->over = true;
        job_event(d, md, json_object_object_get_ex(data, "error", &v) ? 1
                         : strcmp(name, "BLOCK_JOB_CANCELLED") == 0 ? 2 : 0);
        if (ms->phase == PH_END) {
            end_when_over(d);
            return;
        }
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "disk '%s': %s", md->target,
                   json_object_object_get_ex(data, "error", &v) ? json_object_get_string(v)
                                                              : "the mirror stopped early");
        RV_WARN("domain '%s': migration: %s", d->live->name, e.message);
        mirror_failed(d, "the disk mirror", &e);
        rv_err_clear(&e);
    }
}

/* ================================================================ reattach */

static void on_leftover_jobs(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)opaque;
    if (err || !json_object_is_type(ret, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(ret); i++) {
        json_object *v;
        const char *id = json_object_object_get_ex(json_object_array_get_idx(ret, i), "device", &v)
                             ? json_object_get_string(v) : "";
        if (strncmp(id, "migrate-", 8) == 0) {
            RV_WARN("a storage copy (%s) cut off by remvirtd's stop: cancelled", id);
            rv_qemu_send_quietly(qmp, "block-job-cancel", "device", id);
        }
    }
}

void rv_qemu_migstore_reattach(rv_qmp *qmp)
{
    rv_err e = { 0 };
    if (rv_qmp_command(qmp, "query-block-jobs", NULL, 0, on_leftover_jobs, NULL, &e) < 0)
        rv_err_clear(&e);
}
