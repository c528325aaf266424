/* Backup jobs on the QEMU driver: DOMAIN_BACKUP_BEGIN and
 * DOMAIN_BACKUP_GET_XML_DESC, full backups of a running domain's disks,
 * one backup a domain, as libvirtd 9.0 runs them (its QMP traffic seen in
 * its log):
 *
 *   push: each disk's target file made (raw: as large as the disk; qcow2:
 *         blockdev-create, a job), blockdev-add'ed, then one transaction
 *         of blockdev-backup sync=full jobs; the backup ends when they all
 *         have concluded.
 *   pull: each disk gets a qcow2 scratch overlay backed by the disk's
 *         node, QEMU's NBD server starts where <server> says, one
 *         transaction of blockdev-backup sync=none into the overlays
 *         (fleecing: the guest's writes copy the old data there first),
 *         and each overlay is exported read-only under the disk's export
 *         name; the backup runs until ABORT_JOB ends it.
 *
 * The backup is the domain's job (qemu_jobinfo.h, operation BACKUP):
 * GET_JOB_INFO, GET_JOB_STATS and ABORT_JOB see it; each disk's end sends
 * BLOCK_JOB and BLOCK_JOB_2 (type BACKUP) and the last one JOB_COMPLETED,
 * as libvirtd sends them.  Jobs run with auto-dismiss off, so that their
 * outcome is read before QEMU forgets it (as qemu_blockjob.c does).
 *
 * Incremental (from a checkpoint): the checkpoint's bitmap (bdisk.bitmap)
 * is merged into a temporary one named backup-DISK, as libvirtd 9.0 names
 * it, in the jobs' transaction: on the disk's node for a push's
 * sync=incremental job (removed at the end), on the scratch node for a
 * pull, whose export carries it (NBD meta context
 * qemu:dirty-bitmap:backup-DISK).  A checkpoint made with the backup
 * (checkpointXML) is the checkpoint code's (rv_qemu_checkpoint_with): its
 * intent written before the begin's first QMP step, its bitmaps added
 * first in the same transaction, its commit before the answer.
 *
 * TLS (<server tls='yes'>): the NBD server uses a tls-creds-x509 object
 * (endpoint server) over qemu_backup_tls_x509_cert_dir, named as libvirtd
 * names it, added before the server starts and deleted after it stops;
 * QEMU's error when the directory lacks its certificates is the begin's.
 *
 * A remvirtd restarted while a backup ran finds its jobs in QEMU and
 * cancels them, as libvirtd does (rv_qemu_backup_resync): the nodes and
 * the NBD server go with them; the files made for it stay. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/safe_open.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"
#include "server/drivers/qemu/qemu_checkpoint.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_jobinfo.h"

RV_LOG_CATEGORY("drivers.qemu.backup");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

enum { REUSE_EXTERNAL = 1 };
enum { T_BACKUP = 5 };                          /* VIR_DOMAIN_BLOCK_JOB_TYPE_BACKUP */
enum { ST_COMPLETED = 0, ST_FAILED = 1, ST_CANCELED = 2 };
#define BACKUP_XML_MAX (1 << 20)
#define TLS_OBJ "objlibvirt_backup_tls0"        /* libvirtd 9.0's id */

/* One disk of the domain, in the domain's order. */
typedef struct bdisk {
    char *name;                 /* vda */
    char *source;               /* its file (the events name it) */
    bool backup;
    char *file;                 /* push: the target; pull: the scratch */
    rv_qemu_disk_format format;
    bool made;                  /* remvirtd created file (it goes on failure; a scratch at the end) */
    char *exportname;           /* pull */
    char *bitmap;               /* incremental: the checkpoint's bitmap (NULL: full) */
    char *incr;                 /* ... the checkpoint */
    char *tmpbitmap;            /* ... the bitmap merged from it for the job (push) or the
                                 * export (pull), named as libvirtd names it */
    bool tmp_added;             /* a push's tmpbitmap is on the disk's node */
    unsigned index;
    char *root;                 /* the disk's node in QEMU */
    rv_qemu_disk_format root_format;
    unsigned long long size;
    char fmt_node[64], file_node[64], create_id[64], job_id[64];
    int added;                  /* nodes QEMU has: 0, 1 (file), 2 (file and format) */
    bool create_failed;
    bool exported;
    int outcome;                /* ST_*, -1 until QEMU says */
    bool concluded;
    unsigned long long len, offset;
} bdisk;

typedef struct backup {
    rv_qemu_live_req live;      /* the begin call; live.reply NULL once answered */
    bool pull, reuse;
    char *transport, *srv_name, *srv_port, *srv_socket;     /* pull's <server> */
    int tls;                    /* <server tls>: -1 absent, 0 no, 1 yes */
    bool tls_added;             /* the server's TLS credentials object is QEMU's */
    char *incremental;          /* the document's <incremental> */
    rv_qemu_chk_op *chk;        /* the checkpoint made with it, its intent written */
    bool chk_waits;             /* ... or still being written */
    json_object *blocks;        /* query-block's answer (the checkpoint's nodes) */
    bdisk *disks;
    size_t ndisks, cur;
    bool server_started, running;   /* nbd-server-start done; the jobs run */
    bool failing;               /* the begin failed after the jobs started: cancelled */
    char why[512];              /* ... with this error */
    int why_code;
    bool ending;
    bool orphan;                /* a remvirtd before this one started it (resync) */
    ev_timer poll;              /* a push's progress, read from query-jobs */
    unsigned gen;               /* names b to a query in flight (b may be gone) */
    struct backup *next;
} backup;

static backup *backups;
static unsigned serial;

/* ================================================================ the definition */

static void bdisk_clear(bdisk *k)
{
    free(k->name);
    free(k->source);
    free(k->file);
    free(k->exportname);
    free(k->bitmap);
    free(k->incr);
    free(k->tmpbitmap);
    free(k->root);
}

static void backup_free(backup *b)
{
    if (!b)
        return;
    for (backup **pp = &backups; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    ev_timer_stop(rv_qemu.loop, &b->poll);
    for (size_t i = 0; i < b->ndisks; i++)
        bdisk_clear(&b->disks[i]);
    free(b->disks);
    free(b->transport);
    free(b->srv_name);
    free(b->srv_port);
    free(b->srv_socket);
    free(b->incremental);
    json_object_put(b->blocks);
    free(b->live.name);
    free(b);
}

static backup *backup_of(const qemu_dom *d)
{
    for (backup *b = backups; b; b = b->next)
        if (b->live.pid == d->pid && d->live && strcmp(b->live.name, d->live->name) == 0)
            return b;
    return NULL;
}

/* libvirtd validates the document against its schema first. */
static int schema_error(rv_err *err, const char *what)
{
    return rv_err_fail(err, RV_FROM_XML, RV_ERR_XML_INVALID_SCHEMA,
                       "XML document failed to validate against schema: Unable to validate doc "
                       "against /usr/share/libvirt/schemas/domainbackup.rng\n%s\n", what);
}

static bool one_of(const char *v, const char *a, const char *b)
{
    return !v || strcmp(v, a) == 0 || (b && strcmp(v, b) == 0);
}

/* The <disk> of the document named name, or NULL. */
static xmlNode *doc_disk(xmlNode *disks, const char *name, int *failed)
{
    for (xmlNode *n = disks ? disks->children : NULL; n; n = n->next) {
        if (!rv_lx_is_plain(n, "disk"))
            continue;
        char *v = rv_lx_attr(n, "name", failed);
        bool same = v && strcmp(v, name) == 0;
        free(v);
        if (same)
            return n;
    }
    return NULL;
}

static char *dup_or(char *v, const char *dflt, int *failed)
{
    if (v || !dflt)
        return v;
    if (!(v = strdup(dflt)))
        *failed = 1;
    return v;
}

/* The checkpoint's bitmap for an incremental backup of a disk
 * (qemu_checkpoint.h), with libvirtd's words when there is no such
 * checkpoint. */
static int checkpoint_bitmap(const qemu_dom *d, const char *checkpoint, const char *disk, char **bitmap,
                             rv_err *err)
{
    *bitmap = NULL;
    const char *found = rv_qemu_checkpoint_bitmap(d, checkpoint, disk, err);
    if (!found && err->code == RV_ERR_NO_DOMAIN_CHECKPOINT) {
        rv_err_clear(err);
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_DOMAIN_CHECKPOINT,
                           "Domain checkpoint not found: Checkpoint '%s' for incremental backup of disk '%s' "
                           "not found", checkpoint, disk);
    }
    if (!found || !(*bitmap = strdup(found)))
        return found ? fail(err, RV_ERR_NO_MEMORY, "out of memory") : -1;
    return 0;
}

/* The document read into b, against d's disks, defaults filled in as
 * libvirtd fills them (a file next to the disk's, named after the
 * backup's start time; qcow2; the disk's name as export name). */
static int read_def(backup *b, const qemu_dom *d, const char *xml, rv_err *err)
{
    xmlDoc *doc;
    xmlNode *root = rv_lx_read(xml, BACKUP_XML_MAX, "domainbackup", "domain_backup", RV_FROM_DOMAIN, &doc,
                               err);
    if (!root)
        return -1;
    int failed = 0, rc = -1;
    char *mode = rv_lx_attr(root, "mode", &failed), *incremental = NULL;
    xmlNode *server = rv_lx_plain_child(root, "server"), *disks = rv_lx_plain_child(root, "disks");
    char *v[4] = { NULL, NULL, NULL, NULL };
    if (!one_of(mode, "push", "pull")) {
        schema_error(err, "Invalid attribute mode for element domainbackup");
        goto out;
    }
    b->pull = mode && strcmp(mode, "pull") == 0;
    if (b->pull && !server) {
        schema_error(err, "Invalid attribute mode for element domainbackup");
        goto out;
    }
    xmlNode *inc = rv_lx_plain_child(root, "incremental");
    incremental = inc ? rv_lx_text(inc, &failed) : NULL;
    if (b->pull) {
        v[0] = rv_lx_attr(server, "transport", &failed);
        if (!one_of(v[0], "tcp", "unix")) {
            if (v[0] && strcmp(v[0], "rdma") == 0)
                rv_err_fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                            "unsupported configuration: transport rdma is not supported for NBD server");
            else
                schema_error(err, "Invalid attribute transport for element server");
            goto out;
        }
        b->transport = dup_or(v[0], "tcp", &failed);
        v[0] = NULL;
        b->srv_name = rv_lx_attr(server, "name", &failed);
        b->srv_port = rv_lx_attr(server, "port", &failed);
        b->srv_socket = rv_lx_attr(server, "socket", &failed);
        v[0] = rv_lx_attr(server, "tls", &failed);
        if (!one_of(v[0], "yes", "no")) {
            schema_error(err, "Invalid attribute tls for element server");
            goto out;
        }
        b->tls = v[0] ? strcmp(v[0], "yes") == 0 : -1;
        free(v[0]);
        v[0] = NULL;
        bool is_unix = strcmp(b->transport, "unix") == 0;
        if (is_unix ? !b->srv_socket : !b->srv_name) {
            schema_error(err, is_unix ? "Element server failed to validate attributes"
                                      : "Element server failed to validate attributes");
            goto out;
        }
        if (is_unix && b->srv_socket[0] != '/') {
            rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: backup socket path '%s' must be absolute", b->srv_socket);
            goto out;
        }
        if (!is_unix && !b->srv_port && !(b->srv_port = strdup("10809")))
            failed = 1;
    }
    /* Each disk named must be the domain's. */
    for (xmlNode *n = disks ? disks->children : NULL; n; n = n->next) {
        if (!rv_lx_is_plain(n, "disk"))
            continue;
        char *name = rv_lx_attr(n, "name", &failed);
        if (!name) {
            schema_error(err, "Element disk failed to validate attributes");
            goto out;
        }
        bool known = rv_qemu_disk_find(d->live, name) != NULL;
        if (!known)
            rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: no disk named '%s'", name);
        free(name);
        if (!known)
            goto out;
    }
    /* Disks not named are backed up when none named is (libvirt's rule). */
    bool any_yes = false;
    for (xmlNode *n = disks ? disks->children : NULL; n; n = n->next) {
        if (!rv_lx_is_plain(n, "disk"))
            continue;
        char *bk = rv_lx_attr(n, "backup", &failed);
        any_yes |= !bk || strcmp(bk, "yes") == 0;
        free(bk);
    }
    time_t now = time(NULL);
    if (!(b->disks = calloc(d->live->ndisks ? d->live->ndisks : 1, sizeof(*b->disks)))) {
        failed = 1;
        goto out;
    }
    for (size_t i = 0; i < d->live->ndisks; i++) {
        const rv_qemu_disk *dd = &d->live->disks[i];
        bdisk *k = &b->disks[b->ndisks++];
        k->outcome = -1;
        if (!(k->name = strdup(dd->target)) || (dd->source && !(k->source = strdup(dd->source)))) {
            failed = 1;
            goto out;
        }
        xmlNode *n = doc_disk(disks, dd->target, &failed);
        char *bk = n ? rv_lx_attr(n, "backup", &failed) : NULL;
        if (!one_of(bk, "yes", "no")) {
            free(bk);
            schema_error(err, "Invalid attribute backup for element disk");
            goto out;
        }
        k->backup = n ? !bk || strcmp(bk, "yes") == 0 : !any_yes;
        free(bk);
        if (dd->device == RV_QEMU_DISK_CDROM || dd->readonly || !dd->source)
            k->backup = false;
        if (!k->backup)
            continue;
        v[0] = n ? rv_lx_attr(n, "type", &failed) : NULL;
        v[1] = n ? rv_lx_attr(n, "backupmode", &failed) : NULL;
        v[2] = n ? rv_lx_attr(n, "incremental", &failed) : NULL;
        if (!one_of(v[0], "file", "block") || !one_of(v[1], "full", "incremental")) {
            schema_error(err, "Element disk failed to validate attributes");
            goto out;
        }
        if (v[0] && strcmp(v[0], "block") == 0) {
            rv_err_fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: backup of disk '%s' into a block device", k->name);
            goto out;
        }
        const char *from = v[2] ? v[2] : incremental;
        bool incr = v[1] ? strcmp(v[1], "incremental") == 0 : from != NULL;
        if (incr && (!from || checkpoint_bitmap(d, from, k->name, &k->bitmap, err) < 0)) {
            if (!from)
                rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                            "unsupported configuration: missing or unsupported backupmode of disk '%s'",
                            k->name);
            goto out;
        }
        if (incr) {
            char *eb = b->pull && n ? rv_lx_attr(n, "exportbitmap", &failed) : NULL;
            size_t size = strlen(k->name) + 8;
            if (!eb && (eb = malloc(size)))
                snprintf(eb, size, "backup-%s", k->name);
            k->tmpbitmap = eb;
            if (!eb || !(k->incr = strdup(from)))
                failed = 1;
        }
        for (int j = 0; j < 3; j++) {
            free(v[j]);
            v[j] = NULL;
        }
        xmlNode *store = n ? rv_lx_plain_child(n, b->pull ? "scratch" : "target") : NULL;
        xmlNode *drv = n ? rv_lx_plain_child(n, "driver") : NULL;
        k->file = store ? rv_lx_attr(store, "file", &failed) : NULL;
        v[0] = drv ? rv_lx_attr(drv, "type", &failed) : NULL;
        if (!one_of(v[0], "qcow2", b->pull ? NULL : "raw")) {
            rv_err_fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: %s format '%s' of disk '%s' (%s)",
                        b->pull ? "scratch" : "target", v[0], k->name, b->pull ? "qcow2" : "qcow2 or raw");
            goto out;
        }
        k->format = v[0] && strcmp(v[0], "raw") == 0 ? RV_QEMU_FORMAT_RAW : RV_QEMU_FORMAT_QCOW2;
        free(v[0]);
        v[0] = NULL;
        if (!k->file) {
            size_t size = strlen(dd->source) + 32;
            if ((k->file = malloc(size)))
                snprintf(k->file, size, "%s.%lld", dd->source, (long long)now);
            else
                failed = 1;
        }
        if (b->pull) {
            k->exportname = n ? rv_lx_attr(n, "exportname", &failed) : NULL;
            k->exportname = dup_or(k->exportname, k->name, &failed);
        }
        k->index = ++serial;
    }
    if (incremental && !(b->incremental = strdup(incremental)))
        failed = 1;
    if (failed)
        goto out;
    bool some = false;
    for (size_t i = 0; i < b->ndisks; i++)
        some |= b->disks[i].backup;
    if (!some) {
        rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: no disks selected for backup");
        goto out;
    }
    rc = 0;
out:
    if (failed && rc < 0 && !err->code)
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
    for (int j = 0; j < 4; j++)
        free(v[j]);
    free(mode);
    free(incremental);
    xmlFreeDoc(doc);
    return rc;
}

/* The backup's XML as libvirtd gives it back. */
static char *format_def(const backup *b)
{
    rv_xml_buf buf = { 0 };
    FILE *fp = rv_xml_open(&buf);
    if (!fp)
        return NULL;
    fprintf(fp, "<domainbackup mode='%s'>\n", b->pull ? "pull" : "push");
    if (b->incremental) {
        fputs("  <incremental>", fp);
        rv_xml_put_escaped(fp, b->incremental);
        fputs("</incremental>\n", fp);
    }
    if (b->pull) {
        fputs("  <server transport='", fp);
        rv_xml_put_escaped(fp, b->transport);
        fputc('\'', fp);
        if (b->tls >= 0)
            fprintf(fp, " tls='%s'", b->tls ? "yes" : "no");
        const char *keys[] = { "name", "port", "socket" };
        const char *vals[] = { b->srv_name, b->srv_port, b->srv_socket };
        for (int i = 0; i < 3; i++)
            if (vals[i] && (strcmp(b->transport, "unix") == 0) == (i == 2)) {
                fprintf(fp, " %s='", keys[i]);
                rv_xml_put_escaped(fp, vals[i]);
                fputc('\'', fp);
            }
        fputs("/>\n", fp);
    }
    fputs("  <disks>\n", fp);
    for (size_t i = 0; i < b->ndisks; i++) {
        const bdisk *k = &b->disks[i];
        fputs("    <disk name='", fp);
        rv_xml_put_escaped(fp, k->name);
        if (!k->backup) {
            fputs("' backup='no'/>\n", fp);
            continue;
        }
        fprintf(fp, "' backup='yes' type='file' backupmode='%s'", k->bitmap ? "incremental" : "full");
        if (k->incr) {
            fputs(" incremental='", fp);
            rv_xml_put_escaped(fp, k->incr);
            fputc('\'', fp);
        }
        if (b->pull) {
            fputs(" exportname='", fp);
            rv_xml_put_escaped(fp, k->exportname);
            fputc('\'', fp);
        }
        if (b->pull && k->tmpbitmap) {
            fputs(" exportbitmap='", fp);
            rv_xml_put_escaped(fp, k->tmpbitmap);
            fputc('\'', fp);
        }
        fprintf(fp, " index='%u'>\n", k->index);
        fprintf(fp, "      <driver type='%s'/>\n", k->format == RV_QEMU_FORMAT_RAW ? "raw" : "qcow2");
        fprintf(fp, "      <%s file='", b->pull ? "scratch" : "target");
        rv_xml_put_escaped(fp, k->file);
        fputs("'/>\n    </disk>\n", fp);
    }
    fputs("  </disks>\n</domainbackup>\n", fp);
    return rv_xml_done(fp, &buf.text);
}

/* ================================================================ the end */

static backup *backup_by_gen(void *gen);
static void on_chk_committed(rv_qemu_chk_op *op, void *data, const rv_err *err);
static void merge_actions(const backup *b, const bdisk *k, json_object *actions);

static qemu_dom *dom_of(const backup *b)
{
    qemu_dom *d = rv_qemu_find_name(b->live.name);
    return d && d->pid == b->live.pid && d->qmp ? d : NULL;
}

/* The nodes b added go (format node first), the server with them. */
static void drop_nodes(backup *b, rv_qmp *qmp)
{
    if (!qmp)
        return;
    if (b->server_started)
        rv_qemu_send_quietly(qmp, "nbd-server-stop", NULL, NULL);
    b->server_started = false;
    if (b->tls_added)
        rv_qemu_send_quietly(qmp, "object-del", "id", TLS_OBJ);
    b->tls_added = false;
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (k->added == 2)
            rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", k->fmt_node);
        if (k->added >= 1)
            rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", k->file_node);
        k->added = 0;
        if (k->tmp_added) {
            json_object *a = json_object_new_object();
            json_object_object_add(a, "node", json_object_new_string(k->root));
            json_object_object_add(a, "name", json_object_new_string(k->tmpbitmap));
            rv_qemu_send_quietly_args(qmp, "block-dirty-bitmap-remove", a);
        }
        k->tmp_added = false;
    }
}

/* The files remvirtd made go: all of them (the begin failed: nothing
 * changed), or a pull's scratch files (the backup is over). */
static void unlink_made(backup *b)
{
    for (size_t i = 0; i < b->ndisks; i++)
        if (b->disks[i].made && unlink(b->disks[i].file) < 0 && errno != ENOENT)
            RV_WARN("cannot remove '%s': %s", b->disks[i].file, strerror(errno));
}

/* The checkpoint made with b is not: its operation ends (one whose
 * intent is still being written ends when it is, in on_chk_ready). */
static void drop_checkpoint(backup *b)
{
    if (b->chk && !b->chk_waits) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: the backup did not begin");
        rv_qemu_checkpoint_added(b->chk, &e, NULL, NULL);
        rv_err_clear(&e);
    }
    b->chk = NULL;
}

/* The begin fails before any job ran: answered, and nothing is left. */
__attribute__((format(printf, 3, 4)))
static void fail_begin(backup *b, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->why, sizeof(b->why), fmt, ap);
    va_end(ap);
    qemu_dom *d = dom_of(b);
    drop_nodes(b, d ? d->qmp : NULL);
    unlink_made(b);
    drop_checkpoint(b);
    if (d)
        rv_qemu_jobinfo_end(d, false, false);
    if (b->live.reply)
        rv_qemu_finish_error(b->live.reply, code, "%s", b->why);
    b->live.reply = NULL;
    backup_free(b);
}

/* A QMP answer for b: b while its domain runs and QEMU said yes; else the
 * begin fails with the error (NULL). */
static backup *step_ok(rv_qmp *qmp, const rv_err *qerr, void *opaque)
{
    backup *b = opaque;
    qemu_dom *d = dom_of(b);
    if (!d || d->qmp != qmp) {
        fail_begin(b, RV_ERR_OPERATION_FAILED, "operation failed: the domain stopped");
        return NULL;
    }
    if (qerr) {
        char msg[512];
        int code = rv_qemu_qmp_error_text(qerr, msg, sizeof(msg));
        fail_begin(b, code ? code : RV_ERR_INTERNAL_ERROR, "%s", msg);
        return NULL;
    }
    return b;
}

static bool send_step(backup *b, const char *command, json_object *args, rv_qmp_reply_fn fn)
{
    qemu_dom *d = dom_of(b);
    rv_err e = { 0 };
    if (d && rv_qmp_command(d->qmp, command, args, 0, fn, b, &e) == 0)
        return true;
    fail_begin(b, RV_ERR_OPERATION_FAILED, "operation failed: %s", d ? e.message : "the domain stopped");
    rv_err_clear(&e);
    return false;
}

static void orphan_cleanup(rv_qmp *qmp);

static void put_block_event(qemu_dom *d, const bdisk *k, int status)
{
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_block_job_event(&rv_qemu_driver, &ref, k->source, k->name, T_BACKUP, status);
    rv_dom_ref_clear(&ref);
}

/* Every job concluded: each disk's end told, the nodes dropped, the job
 * over. */
static void all_concluded(qemu_dom *d, backup *b)
{
    bool ok = true, cancelled = false;
    unsigned long long total = 0, done = 0;
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (!k->backup)
            continue;
        int st = k->outcome < 0 ? ST_FAILED : k->outcome;
        ok &= st == ST_COMPLETED;
        cancelled |= st == ST_CANCELED;
        total += k->len;
        done += k->offset;
        if (!b->failing)
            put_block_event(d, k, st);
    }
    drop_nodes(b, d->qmp);
    /* A pull's scratch files go, and a push's targets unless it
     * completed (as libvirtd removes them). */
    if (b->pull || b->failing || !ok)
        unlink_made(b);
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(d);
    if (b->orphan) {
        orphan_cleanup(d->qmp);
    } else if (b->failing) {
        rv_qemu_jobinfo_end(d, false, false);
        if (b->live.reply)
            rv_qemu_finish_error(b->live.reply, b->why_code, "%s", b->why);
        b->live.reply = NULL;
    } else {
        if (j && !b->pull) {
            j->disk_total = total;
            j->disk_processed = done;
            j->disk_remaining = total > done ? total - done : 0;
        }
        /* A pull ends when it is asked to: its cancelled jobs are its
         * success (libvirtd says so with "Operation canceled"). */
        if (j) {
            j->success = b->pull || ok;
            if (cancelled || (j->aborted && !ok))
                snprintf(j->errmsg, sizeof(j->errmsg), "Operation canceled");
            else if (!ok)
                snprintf(j->errmsg, sizeof(j->errmsg), "backup of a disk failed");
            if (!b->pull && !ok)
                j->end_type = cancelled || j->aborted ? RV_DOMAIN_JOB_CANCELLED : RV_DOMAIN_JOB_FAILED;
        }
        RV_INFO("domain '%s': backup over (%s)", b->live.name, ok ? "completed" : "not completed");
        rv_qemu_jobinfo_end(d, true, true);
    }
    backup_free(b);
}

static void on_cancel_sent(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    (void)ret;
    if (err)
        RV_WARN("backup job %s: block-job-cancel: %s", (const char *)opaque, err->message);
    free(opaque);
}

/* Cancel b's jobs that run (an abort, or a begin that failed late). */
static void cancel_jobs(qemu_dom *d, backup *b)
{
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (!k->backup || k->concluded)
            continue;
        json_object *a = json_object_new_object();
        json_object_object_add(a, "device", json_object_new_string(k->job_id));
        json_object_object_add(a, "force", json_object_new_boolean(true));
        rv_err e = { 0 };
        char *id = strdup(k->job_id);
        if (!id || rv_qmp_command(d->qmp, "block-job-cancel", a, 0, on_cancel_sent, id, &e) < 0) {
            RV_WARN("domain '%s': cannot cancel %s: %s", b->live.name, k->job_id,
                    e.message ? e.message : "out of memory");
            free(id);
        }
        rv_err_clear(&e);
    }
}

const char *rv_qemu_backup_job_id(const qemu_dom *d, const char *target)
{
    backup *b = backup_of(d);
    for (size_t i = 0; b && !b->orphan && i < b->ndisks; i++)
        if (b->disks[i].backup && !b->disks[i].concluded && strcmp(b->disks[i].name, target) == 0)
            return b->disks[i].job_id;      /* ("" while the backup is set up) */
    return NULL;
}

int rv_qemu_backup_abort(qemu_dom *d, rv_err *err)
{
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(d);
    if (j && j->operation == RV_DOMAIN_JOB_OPERATION_BACKUP)
        j->aborted = true;
    return j && j->abort ? j->abort(d, err) : fail(err, RV_ERR_OPERATION_INVALID,
                                                    "Requested operation is not valid: no job is active on the domain");
}

static int abort_backup(qemu_dom *d, rv_err *err)
{
    backup *b = backup_of(d);
    if (!b || !b->running)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: no job is active on the domain");
    b->ending = true;
    cancel_jobs(d, b);
    return 0;
}

static void on_created_concluded(backup *b, bdisk *k);

static bool all_done(const backup *b)
{
    bool all = true;
    for (size_t j = 0; j < b->ndisks; j++)
        all &= !b->disks[j].backup || b->disks[j].concluded;
    return all;
}

void rv_qemu_backup_event(qemu_dom *d, const char *name, json_object *data)
{
    json_object *v = NULL;
    if (!data || !d->live)
        return;
    backup *b = backup_of(d);
    if (!b)
        return;
    bool status_change = strcmp(name, "JOB_STATUS_CHANGE") == 0;
    const char *id = json_object_object_get_ex(data, status_change ? "id" : "device", &v)
                         ? json_object_get_string(v) : NULL;
    const char *status = status_change && json_object_object_get_ex(data, "status", &v)
                             ? json_object_get_string(v) : "";
    for (size_t i = 0; id && i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (status_change && strcmp(id, k->create_id) == 0) {
            if (strcmp(status, "aborting") == 0)
                k->create_failed = true;
            else if (strcmp(status, "concluded") == 0)
                on_created_concluded(b, k);
            return;
        }
        if (strcmp(id, k->job_id) != 0)
            continue;
        if (strcmp(name, "BLOCK_JOB_COMPLETED") == 0) {
            k->outcome = json_object_object_get_ex(data, "error", &v) ? ST_FAILED : ST_COMPLETED;
            if (k->outcome == ST_FAILED)
                RV_WARN("domain '%s': backup of disk '%s' failed: %s", d->live->name, k->name,
                        json_object_get_string(v));
            k->len = (unsigned long long)rv_qmp_json_int(data, "len", 0);
            k->offset = (unsigned long long)rv_qmp_json_int(data, "offset", 0);
        } else if (strcmp(name, "BLOCK_JOB_CANCELLED") == 0) {
            k->outcome = ST_CANCELED;
            k->len = (unsigned long long)rv_qmp_json_int(data, "len", 0);
            k->offset = (unsigned long long)rv_qmp_json_int(data, "offset", 0);
        } else if (status_change && strcmp(status, "concluded") == 0 && !k->concluded) {
            k->concluded = true;
            rv_qemu_send_quietly(d->qmp, "job-dismiss", "id", k->job_id);
            /* (a begin not answered yet, its checkpoint's commit being
             * written, ends the backup once answered: export_next) */
            if (all_done(b) && b->running && (!b->live.reply || b->failing))
                all_concluded(d, b);
        }
        return;
    }
}

/* ================================================================ the begin's steps */

static void prepare_disk(backup *b);

static void on_exported(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque);

/* The next export of a pull, or (a push exports nothing) the answer. */
static void export_next(backup *b)
{
    for (; b->pull && b->cur < b->ndisks; b->cur++) {
        bdisk *k = &b->disks[b->cur];
        if (!k->backup || k->exported)
            continue;
        char id[80];
        snprintf(id, sizeof(id), "bk-nbd-%s", k->fmt_node);
        json_object *a = json_object_new_object();
        json_object_object_add(a, "type", json_object_new_string("nbd"));
        json_object_object_add(a, "id", json_object_new_string(id));
        json_object_object_add(a, "node-name", json_object_new_string(k->fmt_node));
        json_object_object_add(a, "writable", json_object_new_boolean(false));
        json_object_object_add(a, "name", json_object_new_string(k->exportname));
        if (k->tmpbitmap) {
            json_object *l = json_object_new_array();
            json_object_array_add(l, json_object_new_string(k->tmpbitmap));
            json_object_object_add(a, "bitmaps", l);
        }
        k->exported = true;
        send_step(b, "block-export-add", a, on_exported);
        return;
    }
    RV_INFO("domain '%s': %s backup begun", b->live.name, b->pull ? "pull" : "push");
    rv_deferred_finish(b->live.reply, NULL);
    b->live.reply = NULL;
    qemu_dom *d = dom_of(b);
    if (d && all_done(b))
        all_concluded(d, b);        /* (it ended while its checkpoint was committed) */
}

/* A step after the jobs started failed: they are cancelled and the call
 * answered once they have concluded (nothing of the backup is left). */
static void fail_late(backup *b, const rv_err *qerr)
{
    qemu_dom *d = dom_of(b);
    b->failing = true;
    b->why_code = RV_ERR_OPERATION_FAILED;
    snprintf(b->why, sizeof(b->why), "operation failed: the domain stopped");
    if (qerr)
        b->why_code = rv_qemu_qmp_error_text(qerr, b->why, sizeof(b->why));
    if (d)
        cancel_jobs(d, b);
    else
        fail_begin(b, RV_ERR_OPERATION_FAILED, "operation failed: the domain stopped");
}

static void on_exported(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    backup *b = opaque;
    qemu_dom *d = dom_of(b);
    if (!d || d->qmp != qmp || err) {
        fail_late(b, err);
        return;
    }
    export_next(b);
}

#define PROGRESS_POLL 0.25

/* query-jobs: the push's figures so far. */
static void on_progress(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    backup *b = backup_by_gen(opaque);
    qemu_dom *d = b ? dom_of(b) : NULL;
    rv_qemu_jobinfo *j = d && d->qmp == qmp ? rv_qemu_jobinfo_current(d) : NULL;
    if (!j || err || b->failing)
        return;
    unsigned long long total = 0, done = 0;
    size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        for (size_t m = 0; m < n; m++) {
            json_object *e = json_object_array_get_idx(ret, m), *v;
            if (k->backup && json_object_object_get_ex(e, "id", &v) &&
                strcmp(json_object_get_string(v), k->job_id) == 0) {
                k->len = (unsigned long long)rv_qmp_json_int(e, "total-progress", 0);
                k->offset = (unsigned long long)rv_qmp_json_int(e, "current-progress", 0);
            }
        }
        total += k->len;
        done += k->offset;
    }
    if (total) {
        j->disk_total = total;
        j->disk_processed = done;
        j->disk_remaining = total > done ? total - done : 0;
    }
    ev_timer_set(&b->poll, PROGRESS_POLL, 0.);
    ev_timer_start(rv_qemu.loop, &b->poll);
}

static void on_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    backup *b = w->data;
    qemu_dom *d = dom_of(b);
    rv_err e = { 0 };
    if (d && rv_qmp_command(d->qmp, "query-jobs", NULL, 0, on_progress, (void *)(uintptr_t)b->gen, &e) < 0)
        RV_WARN("domain '%s': backup progress: %s", b->live.name, e.message);
    rv_err_clear(&e);
}

static backup *backup_by_gen(void *gen)
{
    backup *b = backups;
    while (b && b->gen != (unsigned)(uintptr_t)gen)
        b = b->next;
    return b;
}

/* The checkpoint made with the backup committed (or not: the backup is
 * undone, its jobs cancelled). */
static void on_chk_committed(rv_qemu_chk_op *op, void *data, const rv_err *err)
{
    (void)op;
    backup *b = backup_by_gen(data);
    if (!b)
        return;
    if (!err) {
        export_next(b);
        return;
    }
    qemu_dom *d = dom_of(b);
    b->failing = true;
    b->why_code = err->code ? err->code : RV_ERR_OPERATION_FAILED;
    snprintf(b->why, sizeof(b->why), "%s", err->message ? err->message : "operation failed");
    if (!d)
        fail_begin(b, b->why_code, "%s", b->why);
    else if (all_done(b))
        all_concluded(d, b);
    else
        cancel_jobs(d, b);
}

static void on_started(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    backup *b = step_ok(qmp, err, opaque);
    if (!b)
        return;
    b->running = true;
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(dom_of(b));
    if (j) {
        j->have_backup = true;
        j->backup_pull = b->pull;
        for (size_t i = 0; i < b->ndisks; i++)
            if (b->disks[i].backup) {
                j->disk_total += b->disks[i].size;
                j->temp_total += b->disks[i].size;
            }
        j->disk_remaining = j->disk_total;
    }
    for (size_t i = 0; i < b->ndisks; i++)
        b->disks[i].tmp_added = !b->pull && b->disks[i].backup && b->disks[i].bitmap;
    if (!b->pull) {
        ev_timer_set(&b->poll, PROGRESS_POLL, 0.);
        ev_timer_start(rv_qemu.loop, &b->poll);
    }
    b->cur = 0;
    if (b->chk) {
        /* The checkpoint's bitmaps are there: its commit, then the rest. */
        rv_qemu_chk_op *op = b->chk;
        b->chk = NULL;
        rv_qemu_checkpoint_added(op, NULL, on_chk_committed, (void *)(uintptr_t)b->gen);
        return;
    }
    export_next(b);
}

static void add_action(json_object *actions, const char *type, json_object *data)
{
    json_object *act = json_object_new_object();
    json_object_object_add(act, "type", json_object_new_string(type));
    json_object_object_add(act, "data", data);
    json_object_array_add(actions, act);
}

/* An incremental disk's bitmap for the job (a push's, on the disk's node)
 * or the export (a pull's, on the scratch node): the checkpoint's merged
 * into a new one, as libvirtd does (every checkpoint's bitmap being
 * enabled, the checkpoint's alone is merged, whatever came after it). */
static void merge_actions(const backup *b, const bdisk *k, json_object *actions)
{
    const char *node = b->pull ? k->fmt_node : k->root;
    json_object *data = json_object_new_object(), *from = json_object_new_object(),
                *list = json_object_new_array();
    json_object_object_add(data, "node", json_object_new_string(node));
    json_object_object_add(data, "name", json_object_new_string(k->tmpbitmap));
    json_object_object_add(data, "persistent", json_object_new_boolean(false));
    json_object_object_add(data, "disabled", json_object_new_boolean(true));
    add_action(actions, "block-dirty-bitmap-add", data);
    data = json_object_new_object();
    json_object_object_add(data, "node", json_object_new_string(node));
    json_object_object_add(data, "target", json_object_new_string(k->tmpbitmap));
    json_object_object_add(from, "node", json_object_new_string(k->root));
    json_object_object_add(from, "name", json_object_new_string(k->bitmap));
    json_object_array_add(list, from);
    json_object_object_add(data, "bitmaps", list);
    add_action(actions, "block-dirty-bitmap-merge", data);
}

/* Every disk ready (and a pull's server): the jobs, in one transaction. */
static void start_jobs(backup *b)
{
    json_object *actions = json_object_new_array();
    rv_err e = { 0 };
    qemu_dom *d = dom_of(b);
    if (b->chk && (!d || rv_qemu_checkpoint_actions(b->chk, d->qmp, b->blocks, actions, &e) < 0)) {
        if (!d)
            rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: the domain stopped");
        json_object_put(actions);
        fail_begin(b, e.code, "%s", e.message);
        rv_err_clear(&e);
        return;
    }
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (!k->backup)
            continue;
        if (k->bitmap)
            merge_actions(b, k, actions);
        snprintf(k->job_id, sizeof(k->job_id), "backup-%s-%u", k->name, ++serial);
        json_object *data = json_object_new_object(), *act = json_object_new_object();
        json_object_object_add(data, "device", json_object_new_string(k->root));
        json_object_object_add(data, "job-id", json_object_new_string(k->job_id));
        json_object_object_add(data, "target", json_object_new_string(k->fmt_node));
        json_object_object_add(data, "sync", json_object_new_string(b->pull ? "none" : k->bitmap ? "incremental"
                                                                                              : "full"));
        if (k->bitmap && !b->pull)
            json_object_object_add(data, "bitmap", json_object_new_string(k->tmpbitmap));
        json_object_object_add(data, "auto-finalize", json_object_new_boolean(true));
        json_object_object_add(data, "auto-dismiss", json_object_new_boolean(false));
        json_object_object_add(act, "type", json_object_new_string("blockdev-backup"));
        json_object_object_add(act, "data", data);
        json_object_array_add(actions, act);
    }
    json_object *a = json_object_new_object();
    json_object_object_add(a, "actions", actions);
    send_step(b, "transaction", a, on_started);
}

static void on_server(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    backup *b = step_ok(qmp, err, opaque);
    if (!b)
        return;
    b->server_started = true;
    start_jobs(b);
}

static void start_server(backup *b)
{
    json_object *addr = json_object_new_object(), *data = json_object_new_object();
    bool is_unix = strcmp(b->transport, "unix") == 0;
    json_object_object_add(addr, "type", json_object_new_string(is_unix ? "unix" : "inet"));
    if (is_unix) {
        json_object_object_add(data, "path", json_object_new_string(b->srv_socket));
    } else {
        json_object_object_add(data, "host", json_object_new_string(b->srv_name));
        json_object_object_add(data, "port", json_object_new_string(b->srv_port));
    }
    json_object_object_add(addr, "data", data);
    json_object *a = json_object_new_object();
    json_object_object_add(a, "addr", addr);
    if (b->tls == 1)
        json_object_object_add(a, "tls-creds", json_object_new_string(TLS_OBJ));
    send_step(b, "nbd-server-start", a, on_server);
}

static void on_tls_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    backup *b = step_ok(qmp, err, opaque);
    if (!b)
        return;
    b->tls_added = true;
    start_server(b);
}

/* The server's TLS credentials, as libvirtd gives them (QEMU reads the
 * directory here, and says when its certificates are missing). */
static void start_tls_or_server(backup *b)
{
    if (b->tls != 1) {
        start_server(b);
        return;
    }
    json_object *a = json_object_new_object();
    json_object_object_add(a, "qom-type", json_object_new_string("tls-creds-x509"));
    json_object_object_add(a, "id", json_object_new_string(TLS_OBJ));
    json_object_object_add(a, "dir", json_object_new_string(rv_qemu.backup_tls_dir));
    json_object_object_add(a, "endpoint", json_object_new_string("server"));
    json_object_object_add(a, "verify-peer", json_object_new_boolean(rv_qemu.backup_tls_verify));
    send_step(b, "object-add", a, on_tls_added);
}

static void on_format_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    backup *b = step_ok(qmp, err, opaque);
    if (!b)
        return;
    b->disks[b->cur].added = 2;
    b->cur++;
    prepare_disk(b);
}

static void add_format(backup *b, bdisk *k)
{
    if (k->create_failed) {
        fail_begin(b, RV_ERR_OPERATION_FAILED, "operation failed: QEMU could not format '%s'", k->file);
        return;
    }
    json_object *a = json_object_new_object();
    json_object_object_add(a, "node-name", json_object_new_string(k->fmt_node));
    json_object_object_add(a, "read-only", json_object_new_boolean(false));
    json_object_object_add(a, "driver", json_object_new_string(k->format == RV_QEMU_FORMAT_RAW ? "raw" : "qcow2"));
    json_object_object_add(a, "file", json_object_new_string(k->file_node));
    /* A pull's scratch lies over the disk, as an incremental push's
     * target does (it reads as the whole disk); a full push's target
     * stands alone. */
    if (k->format == RV_QEMU_FORMAT_QCOW2)
        json_object_object_add(a, "backing", b->pull || k->bitmap ? json_object_new_string(k->root) : NULL);
    send_step(b, "blockdev-add", a, on_format_added);
}

static void on_created_concluded(backup *b, bdisk *k)
{
    qemu_dom *d = dom_of(b);
    rv_qemu_send_quietly(d ? d->qmp : NULL, "job-dismiss", "id", k->create_id);
    k->create_id[0] = '\0';
    add_format(b, k);
}

static void on_create_sent(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    /* The job runs: its JOB_STATUS_CHANGE "concluded" goes on. */
    step_ok(qmp, err, opaque);
}

static void on_file_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    backup *b = step_ok(qmp, err, opaque);
    if (!b)
        return;
    bdisk *k = &b->disks[b->cur];
    k->added = 1;
    if (b->reuse || k->format == RV_QEMU_FORMAT_RAW) {
        add_format(b, k);
        return;
    }
    snprintf(k->create_id, sizeof(k->create_id), "bk-create-%s-%u", k->name, ++serial);
    json_object *o = json_object_new_object(), *a = json_object_new_object();
    json_object_object_add(o, "driver", json_object_new_string("qcow2"));
    json_object_object_add(o, "file", json_object_new_string(k->file_node));
    json_object_object_add(o, "size", json_object_new_int64((int64_t)k->size));
    if (b->pull || k->bitmap) {
        json_object_object_add(o, "backing-file", json_object_new_string(k->source));
        json_object_object_add(o, "backing-fmt",
                               json_object_new_string(k->root_format == RV_QEMU_FORMAT_RAW ? "raw" : "qcow2"));
    }
    json_object_object_add(a, "job-id", json_object_new_string(k->create_id));
    json_object_object_add(a, "options", o);
    send_step(b, "blockdev-create", a, on_create_sent);
}

/* The next disk's file into QEMU, or (all there) the server and the jobs. */
static void prepare_disk(backup *b)
{
    while (b->cur < b->ndisks && !b->disks[b->cur].backup)
        b->cur++;
    if (b->cur == b->ndisks) {
        if (b->pull)
            start_tls_or_server(b);
        else
            start_jobs(b);
        return;
    }
    bdisk *k = &b->disks[b->cur];
    if (k->made && k->format == RV_QEMU_FORMAT_RAW) {
        /* (through the safe opener again: a link swapped in since the
         * file was made is not followed to another file) */
        const char *kind = NULL;
        int fd = rv_open_file_at(AT_FDCWD, k->file, O_WRONLY, 0, false, &kind);
        int rc = fd < 0 ? -1 : ftruncate(fd, (off_t)k->size);
        int saved = errno;
        if (fd >= 0)
            close(fd);
        if (rc < 0) {
            fail_begin(b, RV_ERR_SYSTEM_ERROR, "cannot create file '%s': %s", k->file, strerror(saved));
            return;
        }
    }
    unsigned n = ++serial;
    snprintf(k->fmt_node, sizeof(k->fmt_node), "bk-fmt-%s-%u", k->name, n);
    snprintf(k->file_node, sizeof(k->file_node), "bk-file-%s-%u", k->name, n);
    json_object *a = json_object_new_object();
    json_object_object_add(a, "driver", json_object_new_string("file"));
    json_object_object_add(a, "filename", json_object_new_string(k->file));
    json_object_object_add(a, "node-name", json_object_new_string(k->file_node));
    json_object_object_add(a, "auto-read-only", json_object_new_boolean(true));
    json_object_object_add(a, "discard", json_object_new_string("unmap"));
    send_step(b, "blockdev-add", a, on_file_added);
}

/* query-block: each disk's node, size and format. */
static void on_blocks(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    backup *b = step_ok(qmp, err, opaque);
    if (!b)
        return;
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (!k->backup)
            continue;
        json_object *e = rv_qemu_block_entry(ret, k->name), *in = NULL, *img = NULL, *v;
        if (!e || !json_object_object_get_ex(e, "inserted", &in) ||
            !json_object_object_get_ex(in, "node-name", &v) || !(k->root = strdup(json_object_get_string(v)))) {
            fail_begin(b, RV_ERR_INTERNAL_ERROR, "internal error: QEMU did not describe disk '%s'", k->name);
            return;
        }
        if (k->bitmap && rv_qemu_bitmap_count(e, k->bitmap) < 0) {
            fail_begin(b, RV_ERR_CHECKPOINT_INCONSISTENT, "checkpoint inconsistent: missing or broken bitmap "
                       "'%s' for disk '%s'", k->bitmap, k->name);
            return;
        }
        json_object_object_get_ex(in, "image", &img);
        k->size = (unsigned long long)rv_qmp_json_int(img, "virtual-size", 0);
        const char *f = img && json_object_object_get_ex(img, "format", &v) ? json_object_get_string(v) : "";
        k->root_format = strcmp(f, "qcow2") == 0 ? RV_QEMU_FORMAT_QCOW2 : RV_QEMU_FORMAT_RAW;
    }
    b->blocks = json_object_get(ret);
    b->cur = 0;
    prepare_disk(b);
}

/* The intent of the checkpoint made with the backup is written (or not:
 * the begin fails). */
static void on_chk_ready(rv_qemu_chk_op *op, void *data, const rv_err *err)
{
    backup *b = backup_by_gen(data);
    if (b)
        b->chk_waits = false;
    if (err) {
        if (b) {
            b->chk = NULL;
            fail_begin(b, err->code, "%s", err->message);
        }
        return;
    }
    if (!b) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: the domain stopped");
        rv_qemu_checkpoint_added(op, &e, NULL, NULL);
        rv_err_clear(&e);
        return;
    }
    send_step(b, "query-block", NULL, on_blocks);
}

/* The stores exist (REUSE_EXTERNAL) or are made now, empty and new (a
 * file there already is refused, as libvirtd refuses it). */
static int make_stores(backup *b, rv_err *err)
{
    for (size_t i = 0; i < b->ndisks; i++) {
        bdisk *k = &b->disks[i];
        if (!k->backup)
            continue;
        struct stat st;
        bool exists = stat(k->file, &st) == 0;
        if (b->reuse && !exists)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: missing store '%s' for backup of '%s'",
                        k->file, k->name);
        if (!b->reuse && exists)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: store '%s' for backup of '%s' exists",
                        k->file, k->name);
        if (b->reuse)
            continue;
        const char *kind = NULL;
        int fd = rv_open_file_at(AT_FDCWD, k->file, O_WRONLY | O_CREAT | O_EXCL, 0600, false, &kind);
        if (fd < 0)
            return fail(err, RV_ERR_SYSTEM_ERROR, "cannot create file '%s': %s", k->file, strerror(errno));
        close(fd);
        k->made = true;
    }
    return 0;
}

int rv_qemu_domain_backup_begin(rv_driver_conn *c, const rv_domain_backup_begin_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, REUSE_EXTERNAL, "qemuBackupBegin", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get_running(&args->dom, err);
    if (!d)
        return -1;
    if (backup_of(d) || rv_qemu_jobinfo_current(d))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: another job is active on the domain");
    backup *b = calloc(1, sizeof(*b));
    if (!b)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    b->reuse = args->flags & REUSE_EXTERNAL;
    ev_timer_init(&b->poll, on_poll, 0., 0.);
    b->poll.data = b;
    b->gen = ++serial;
    if (read_def(b, d, args->backup_xml, err) < 0 || make_stores(b, err) < 0) {
        unlink_made(b);
        backup_free(b);
        return -1;
    }
    for (size_t i = 0; i < b->ndisks; i++)
        if (b->disks[i].backup && rv_qemu_blockjob_busy(d, b->disks[i].name)) {
            unlink_made(b);
            fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: disk '%s' has an active "
                 "block job", b->disks[i].name);
            backup_free(b);
            return -1;
        }
    /* From here the call is deferred: the request is the backup. */
    rv_qemu_live_req *r = rv_qemu_live_req_new(sizeof(*r), d, err);
    if (!r) {
        unlink_made(b);
        backup_free(b);
        return -1;
    }
    b->live = *r;
    free(r);
    b->next = backups;
    backups = b;
    if (rv_qemu_jobinfo_begin(d, RV_DOMAIN_JOB_OPERATION_BACKUP, "backup job", abort_backup, NULL) < 0) {
        fail_begin(b, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    /* A checkpoint with it: its intent is written first (on_chk_ready). */
    if (args->checkpoint_xml && (*args->checkpoint_xml)[0]) {
        rv_err e = { 0 };
        b->chk_waits = true;
        if (!(b->chk = rv_qemu_checkpoint_with(d, *args->checkpoint_xml, on_chk_ready,
                                               (void *)(uintptr_t)b->gen, &e))) {
            b->chk_waits = false;
            fail_begin(b, e.code, "%s", e.message);
            rv_err_clear(&e);
        }
        return RV_DEFERRED;
    }
    send_step(b, "query-block", NULL, on_blocks);
    return RV_DEFERRED;
}

int rv_qemu_domain_backup_get_xml_desc(rv_driver_conn *c, const rv_domain_backup_get_xml_desc_args *args,
                                       rv_domain_backup_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainBackupGetXMLDesc", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get_running(&args->dom, err);
    if (!d)
        return -1;
    backup *b = backup_of(d);
    if (!b || b->failing)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_DOMAIN_BACKUP,
                           "Domain backup job id not found: no domain backup job present");
    if (!(ret->xml = format_def(b)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

/* ================================================================ the domain's end, a restart */

void rv_qemu_backup_domain_gone(qemu_dom *d)
{
    for (backup *b = backups, *next; b; b = next) {
        next = b->next;
        if (b->live.pid != d->pid || !d->live || strcmp(b->live.name, d->live->name) != 0)
            continue;
        if (b->pull || !b->running)
            unlink_made(b);
        drop_checkpoint(b);
        if (!b->orphan)
            rv_qemu_jobinfo_end(d, false, false);
        if (b->live.reply)
            rv_qemu_finish_error(b->live.reply, RV_ERR_OPERATION_FAILED, "operation failed: the domain stopped");
        b->live.reply = NULL;
        backup_free(b);
    }
}

/* A backup a remvirtd before this one started: its jobs are cancelled
 * (an orphan backup follows them to their end), then every node it added
 * goes, and with them the NBD server. */
/* A push's temporary bitmaps on a disk's node (not persistent, named
 * backup-DISK) go with the backup that left them. */
static void drop_temporary_bitmaps(rv_qmp *qmp, json_object *node, const char *name)
{
    json_object *list, *v;
    if (!json_object_object_get_ex(node, "dirty-bitmaps", &list) || !json_object_is_type(list, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *bm = json_object_array_get_idx(list, i);
        const char *bname = json_object_object_get_ex(bm, "name", &v) ? json_object_get_string(v) : "";
        bool persistent = json_object_object_get_ex(bm, "persistent", &v) && json_object_get_boolean(v);
        if (persistent || strncmp(bname, "backup-", 7) != 0)
            continue;
        json_object *a = json_object_new_object();
        json_object_object_add(a, "node", json_object_new_string(name));
        json_object_object_add(a, "name", json_object_new_string(bname));
        rv_qemu_send_quietly_args(qmp, "block-dirty-bitmap-remove", a);
    }
}

static void on_orphan_nodes(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)opaque;
    size_t n = !err && json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    /* The server first (its exports hold the scratch nodes), and only
     * when a backup's nodes are there (an incoming migration's NBD server
     * is not a backup's); then format nodes before the file nodes under
     * them. */
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < n; i++) {
            json_object *v, *node = json_object_array_get_idx(ret, i);
            const char *name = json_object_object_get_ex(node, "node-name", &v)
                                   ? json_object_get_string(v) : "";
            if (pass == 2)
                drop_temporary_bitmaps(qmp, node, name);
            if (strncmp(name, pass == 2 ? "bk-file-" : "bk-fmt-", pass == 2 ? 8 : 7) != 0)
                continue;
            if (pass == 0) {
                rv_qemu_send_quietly(qmp, "nbd-server-stop", NULL, NULL);
                rv_qemu_send_quietly(qmp, "object-del", "id", TLS_OBJ);     /* a TLS server's, if any */
                break;
            }
            rv_qemu_send_quietly(qmp, "blockdev-del", "node-name", name);
        }
}

static void orphan_cleanup(rv_qmp *qmp)
{
    rv_err e = { 0 };
    json_object *a = json_object_new_object();
    json_object_object_add(a, "flat", json_object_new_boolean(true));
    if (rv_qmp_command(qmp, "query-named-block-nodes", a, 0, on_orphan_nodes, NULL, &e) < 0)
        RV_WARN("backup clean-up: %s", e.message);
    rv_err_clear(&e);
}

static void on_orphan_jobs(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    backup *b = opaque;
    qemu_dom *d = dom_of(b);
    size_t n = !err && json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    if (!d || d->qmp != qmp || err || backup_of(d) != b) {
        backup_free(b);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(ret, i), *v;
        const char *id = json_object_object_get_ex(e, "id", &v) ? json_object_get_string(v) : "";
        const char *st = json_object_object_get_ex(e, "status", &v) ? json_object_get_string(v) : "";
        if (strncmp(id, "backup-", 7) != 0)
            continue;
        bdisk *more = realloc(b->disks, (b->ndisks + 1) * sizeof(*more));
        if (!more)
            break;
        b->disks = more;
        bdisk *k = &b->disks[b->ndisks++];
        memset(k, 0, sizeof(*k));
        k->backup = true;
        k->outcome = -1;
        snprintf(k->job_id, sizeof(k->job_id), "%s", id);
        RV_INFO("domain '%s': backup job %s left by a remvirtd before: cancelled", b->live.name, id);
        if (strcmp(st, "concluded") == 0) {
            k->concluded = true;
            rv_qemu_send_quietly(qmp, "job-dismiss", "id", id);
        }
    }
    bool all = true;
    for (size_t i = 0; i < b->ndisks; i++)
        all &= b->disks[i].concluded;
    if (all) {
        orphan_cleanup(qmp);
        backup_free(b);
        return;
    }
    b->running = b->failing = true;
    cancel_jobs(d, b);
}

void rv_qemu_backup_resync(qemu_dom *d)
{
    backup *b = calloc(1, sizeof(*b));
    rv_err e = { 0 };
    if (!b || !(b->live.name = strdup(d->live->name))) {
        free(b);
        return;
    }
    b->live.pid = d->pid;
    b->live.qmp = d->qmp;
    b->orphan = true;
    ev_timer_init(&b->poll, on_poll, 0., 0.);
    b->gen = ++serial;
    b->next = backups;
    backups = b;
    if (rv_qmp_command(d->qmp, "query-jobs", NULL, 0, on_orphan_jobs, b, &e) < 0) {
        RV_WARN("domain '%s': cannot look for backup jobs: %s", d->live->name, e.message);
        backup_free(b);
    }
    rv_err_clear(&e);
}
