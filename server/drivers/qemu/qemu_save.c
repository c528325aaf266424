/* Save images: a domain's memory and device state in a file, written by
 * QEMU's migration to a descriptor remvirtd opened, read back by a QEMU
 * started with -incoming.  Nothing here waits: the migration is polled
 * with query-migrate from a timer, and the file's fsync and rename run in
 * a short-lived child process.
 *
 * The image (docs/qemu-driver.md, "Save images"):
 *     0   8 bytes  "RVSAVE01"
 *     8   u32      header length: where QEMU's stream begins (a multiple
 *                  of RV_QEMU_SAVE_DATA_ALIGN)
 *    12   u32      XML length (at most RV_QEMU_SAVE_XML_MAX)
 *    16   u32      flags: bit 0, the domain was running when saved
 *    20   u32      0, or where the definition is now: a record at this
 *                  many RV_QEMU_SAVE_DATA_ALIGN blocks (DOMAIN_SAVE_IMAGE_
 *                  DEFINE_XML wrote it, past QEMU's stream)
 *    24            the domain's live XML, then zeros up to the header length
 * A record: "RVSAVEXM", u32 where QEMU's stream ends (in blocks, rounded
 * up), u32 XML length, u32 flags, u32 0, the XML (u32 big-endian).  A save writes to "<file>.XXXXXX" beside the file and
 * renames it only once QEMU's stream is complete and on disk, so a file
 * under the final name is always whole.
 *
 * A core dump (QJOB_DUMP) goes the same way, without the header: QEMU's
 * migration stream, as libvirtd writes it, or with RV_DUMP_MEMORY_ONLY
 * the guest's memory from dump-guest-memory (ELF or kdump), polled with
 * query-dump.  Both report into the domain's job record (qemu_jobinfo.h);
 * ABORT_JOB cancels the migration, and an aborted or failed save or dump
 * leaves no file and the guest as it was. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "common/safe_open.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.save");

#define SAVE_MAGIC "RVSAVE01"
#define SAVE_RECORD_MAGIC "RVSAVEXM"
#define SAVE_FIXED_HEADER 24
#define RV_QEMU_SAVE_XML_MAX (1024 * 1024)
#define SAVE_FLAG_RUNNING 0x1
/* The name QEMU knows the image's descriptor by (getfd). */
#define SAVE_FD_NAME "remvirt-save"
/* query-migrate's pace. */
#define MIGRATE_POLL 0.05
/* The dump's format (bits 24-31 of a QJOB_DUMP's flags) as QEMU names it. */
static const char *const dump_formats[] = { "elf", "kdump-zlib", "kdump-lzo", "kdump-snappy",
                                            "win-dmp" };
/* Suffix of a managed image in save_dir. */
#define MANAGED_SUFFIX ".save"

typedef struct qemu_save_op {
    bool dump;                  /* a core dump, not a save image */
    unsigned int dump_flags;    /* RV_DUMP_* */
    int fd;
    char *path;                 /* the final name */
    char *tmp_path;             /* written under this name until complete */
    bool was_running;
    bool image_running;         /* the image's word: the guest runs when restored */
    bool stopped_cpus;          /* "stop" sent: "cont" if the save fails */
    bool unlimited;             /* QEMU's bandwidth lifted: the kept one is put back after */
    rv_qemu_sync sync;          /* the store helper's fsync, then rename */
    bool renaming;              /* the rename (the commit point) is asked */
    qemu_dom *dom;
} qemu_save_op;

static void ignore_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    (void)ret;
    (void)err;
    (void)opaque;
}

static const char *dom_name(const qemu_dom *d)
{
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    return def ? def->name : "(gone)";
}

char *rv_qemu_managed_save_path(const char *name)
{
    return rv_qemu_path(rv_qemu.save_dir, name, MANAGED_SUFFIX);
}

bool rv_qemu_has_managed_save(const char *name)
{
    char *path = rv_qemu_managed_save_path(name);
    struct stat st;
    bool yes = path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return yes;
}

void rv_qemu_save_dir_clean(void)
{
    /* A save killed before its rename left "<name>.save.XXXXXX"; a whole
     * image always ends in ".save". */
    DIR *dir = opendir(rv_qemu.save_dir);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || strstr(e->d_name, MANAGED_SUFFIX ".") == NULL ||
            (len > strlen(MANAGED_SUFFIX) &&
             strcmp(e->d_name + len - strlen(MANAGED_SUFFIX), MANAGED_SUFFIX) == 0))
            continue;
        RV_INFO("removing the partial save image %s/%s", rv_qemu.save_dir, e->d_name);
        unlinkat(dirfd(dir), e->d_name, 0);
    }
    closedir(dir);
}

/* ================================================================ reading an image */

static int image_error(rv_err *err, const char *path, const char *why)
{
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
               "operation failed: '%s' is not a usable save image: %s", path, why);
    return -1;
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

/* Where an image's definition is, for a define that replaces it. */
typedef struct image_layout {
    uint32_t record;            /* the record's block, 0: in the header */
    uint32_t stream_end;        /* where QEMU's stream ends, in blocks (rounded up) */
    off_t record_end;           /* the end of the record (0: none) */
} image_layout;

static uint32_t blocks(off_t bytes)
{
    return (uint32_t)((bytes + RV_QEMU_SAVE_DATA_ALIGN - 1) / RV_QEMU_SAVE_DATA_ALIGN);
}

/* Open path with oflags and read its definition (and, when lay is not
 * NULL, where it is): the descriptor, positioned at QEMU's stream; -1
 * with err set. */
static int image_read(const char *path, int oflags, rv_qemu_domain_def **def, bool *was_running,
                      image_layout *lay, rv_err *err)
{
    /* A client names it: a FIFO or a device must not hold the open. */
    const char *kind;
    int fd = rv_open_file_at(AT_FDCWD, path, oflags, 0, false, &kind);
    if (fd < 0) {
        char why[64];
        if (kind)
            return image_error(err, path, (snprintf(why, sizeof(why), "it is a %s, not a "
                                                    "regular file", kind), why));
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "Failed to open file '%s': %s", path,
                   strerror(errno));
        return -1;
    }
    unsigned char fixed[SAVE_FIXED_HEADER];
    struct stat st;
    char *xml = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        image_error(err, path, "not a regular file");
        goto fail;
    }
    if (pread(fd, fixed, sizeof(fixed), 0) != (ssize_t)sizeof(fixed) ||
        memcmp(fixed, SAVE_MAGIC, 8) != 0) {
        image_error(err, path, "no remvirt header");
        goto fail;
    }
    uint32_t header_len = get_u32(fixed + 8), xml_len = get_u32(fixed + 12);
    uint32_t flags = get_u32(fixed + 16);
    if (xml_len == 0 || xml_len > RV_QEMU_SAVE_XML_MAX ||
        header_len < SAVE_FIXED_HEADER + xml_len || header_len % RV_QEMU_SAVE_DATA_ALIGN ||
        header_len > SAVE_FIXED_HEADER + xml_len + RV_QEMU_SAVE_DATA_ALIGN ||
        st.st_size <= (off_t)header_len) {
        image_error(err, path, "its header is damaged or it has no state");
        goto fail;
    }
    off_t xml_at = SAVE_FIXED_HEADER;
    image_layout l = { .record = get_u32(fixed + 20), .stream_end = blocks(st.st_size) };
    if (l.record) {
        /* A definition replaced since the save: the record it names. */
        unsigned char rec[SAVE_FIXED_HEADER];
        xml_at = (off_t)l.record * RV_QEMU_SAVE_DATA_ALIGN;
        if (pread(fd, rec, sizeof(rec), xml_at) != (ssize_t)sizeof(rec) ||
            memcmp(rec, SAVE_RECORD_MAGIC, 8) != 0) {
            image_error(err, path, "its definition record is damaged");
            goto fail;
        }
        l.stream_end = get_u32(rec + 8);
        xml_len = get_u32(rec + 12);
        flags = get_u32(rec + 16);
        xml_at += SAVE_FIXED_HEADER;
        l.record_end = xml_at + xml_len;
        if (xml_len == 0 || xml_len > RV_QEMU_SAVE_XML_MAX || l.stream_end > l.record ||
            (off_t)l.stream_end * RV_QEMU_SAVE_DATA_ALIGN <= (off_t)header_len) {
            image_error(err, path, "its definition record is damaged");
            goto fail;
        }
    }
    if (!(xml = malloc(xml_len + 1))) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if (pread(fd, xml, xml_len, xml_at) != (ssize_t)xml_len) {
        image_error(err, path, "its header is truncated");
        goto fail;
    }
    xml[xml_len] = '\0';
    if (!(*def = rv_qemu_domain_parse(xml, xml_len, err)))
        goto fail;
    free(xml);
    if (lseek(fd, header_len, SEEK_SET) < 0) {
        rv_qemu_domain_free(*def);
        *def = NULL;
        image_error(err, path, strerror(errno));
        close(fd);
        return -1;
    }
    *was_running = flags & SAVE_FLAG_RUNNING;
    if (lay)
        *lay = l;
    return fd;

fail:
    free(xml);
    close(fd);
    return -1;
}

int rv_qemu_save_image_open(const char *path, rv_qemu_domain_def **def, bool *was_running,
                            rv_err *err)
{
    return image_read(path, O_RDONLY, def, was_running, NULL, err);
}

/* ================================================================ replacing the definition */

/* DOMAIN_SAVE_IMAGE_DEFINE_XML's commit point is one aligned 4-byte write:
 * the new definition goes into a record past QEMU's stream (never over
 * the one in use), fsynced; then the header's word at 20 is pointed at
 * it, fsynced.  A kill at any step leaves the old definition or the new.
 * A record goes right after the stream when it fits before the one in
 * use, else after that one, and the file is cut after the new record
 * once committed: an image holds at most two records. */
typedef struct image_define {
    rv_qemu_sync sync;
    rv_deferred *reply;
    int fd;
    char *path;
    uint32_t record;            /* the new record's block */
    off_t end;                  /* its end */
    bool committed;             /* the header names it (fsync under way) */
} image_define;

static image_define *defining;  /* one at a time */

static void define_end(image_define *op, const rv_err *err)
{
    if (op->reply)
        rv_deferred_finish(op->reply, err);
    close(op->fd);
    free(op->path);
    free(op);
    defining = NULL;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t at)
{
    const char *p = buf;
    while (len) {
        ssize_t n = pwrite(fd, p, len, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -1 : (errno = EIO, -1);
        p += n;
        len -= (size_t)n;
        at += n;
    }
    return 0;
}

static void define_fsynced(rv_qemu_sync *s, int error)
{
    image_define *op = s->data;
    rv_err e = { 0 };
    if (error) {
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s",
                   op->path, strerror(error));
        define_end(op, &e);
        rv_err_clear(&e);
        return;
    }
    if (op->committed) {
        rv_crash_point("save-image-define", 3);
        /* A record the header no longer names, after the new one. */
        if (ftruncate(op->fd, op->end) < 0)
            RV_WARN("cannot cut the save image '%s' after its definition: %s", op->path,
                    strerror(errno));
        define_end(op, NULL);
        return;
    }
    rv_crash_point("save-image-define", 2);
    unsigned char word[4];
    put_u32(word, op->record);
    op->committed = true;
    if (pwrite_all(op->fd, word, 4, 20) < 0) {
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s",
                   op->path, strerror(errno));
        define_end(op, &e);
    } else if (rv_qemu_sync_fsync(&op->sync, op->fd, op->path, &e) < 0) {
        define_end(op, &e);
    }
    rv_err_clear(&e);
}

#define fail_conf(err, ...) \
    rv_err_fail((err), RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: " __VA_ARGS__)

/* libvirtd's checks that new describes the domain the image holds. */
static int same_domain(const rv_qemu_domain_def *old, const rv_qemu_domain_def *new, rv_err *err)
{
    char a[RV_UUID_STRING_LEN], b[RV_UUID_STRING_LEN];
    if (strcmp(old->name, new->name) != 0)
        return fail_conf(err, "Target domain name '%s' does not match source '%s'", new->name,
                         old->name);
    if (memcmp(old->uuid, new->uuid, 16) != 0) {
        rv_uuid_format(new->uuid, a);
        rv_uuid_format(old->uuid, b);
        return fail_conf(err, "Target domain uuid %s does not match source %s", a, b);
    }
    if (old->memory_kib != new->memory_kib)
        return fail_conf(err, "Target domain max memory %llu does not match source %llu",
                         new->memory_kib, old->memory_kib);
    if (old->vcpus != new->vcpus)
        return fail_conf(err, "Target domain vCPU max %u does not match source %u", new->vcpus,
                         old->vcpus);
    return 0;
}

int rv_qemu_save_image_define(const char *path, const char *dxml, unsigned int flags, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, RV_DOMAIN_SAVE_RUNNING | RV_DOMAIN_SAVE_PAUSED,
                            "qemuDomainSaveImageDefineXML", err) < 0)
        return -1;
    if ((flags & RV_DOMAIN_SAVE_RUNNING) && (flags & RV_DOMAIN_SAVE_PAUSED)) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                   "Flags 'VIR_DOMAIN_SAVE_RUNNING' and 'VIR_DOMAIN_SAVE_PAUSED' are mutually exclusive");
        return -1;
    }
    if (!dxml) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG, "invalid argument: no domain XML given");
        return -1;
    }
    if (defining) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: another save image definition is being written: retry");
        return -1;
    }
    rv_qemu_domain_def *old = NULL, *new = NULL;
    bool running;
    image_layout lay;
    int fd = image_read(path, O_RDWR, &old, &running, &lay, err);
    if (fd < 0)
        return -1;
    char *xml = NULL;
    image_define *op = NULL;
    if (!(new = rv_qemu_domain_parse(dxml, strlen(dxml), err)) || same_domain(old, new, err) < 0)
        goto fail;
    if (!(xml = rv_qemu_domain_format(new)) || !(op = calloc(1, sizeof(*op))) ||
        !(op->path = strdup(path))) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    size_t xml_len = strlen(xml);
    if (xml_len > RV_QEMU_SAVE_XML_MAX) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                   "internal error: the domain XML is too large to save");
        goto fail;
    }
    if (flags)
        running = flags & RV_DOMAIN_SAVE_RUNNING;
    off_t size = SAVE_FIXED_HEADER + (off_t)xml_len;
    op->record = lay.stream_end;
    if (lay.record && (off_t)lay.stream_end * RV_QEMU_SAVE_DATA_ALIGN + size >
                          (off_t)lay.record * RV_QEMU_SAVE_DATA_ALIGN)
        op->record = blocks(lay.record_end);
    op->end = (off_t)op->record * RV_QEMU_SAVE_DATA_ALIGN + size;
    unsigned char *rec = malloc((size_t)size);
    if (!rec) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    memcpy(rec, SAVE_RECORD_MAGIC, 8);
    put_u32(rec + 8, lay.stream_end);
    put_u32(rec + 12, (uint32_t)xml_len);
    put_u32(rec + 16, running ? SAVE_FLAG_RUNNING : 0);
    put_u32(rec + 20, 0);
    memcpy(rec + SAVE_FIXED_HEADER, xml, xml_len);
    if (!(op->reply = rv_driver_defer(err))) {
        free(rec);
        goto fail;
    }
    rv_crash_point("save-image-define", 1);
    int rc = pwrite_all(fd, rec, (size_t)size, (off_t)op->record * RV_QEMU_SAVE_DATA_ALIGN);
    free(rec);
    op->fd = fd;
    op->sync.done = define_fsynced;
    op->sync.data = op;
    defining = op;
    rv_err e = { 0 };
    if (rc < 0) {
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s",
                   path, strerror(errno));
        define_end(op, &e);
    } else if (rv_qemu_sync_fsync(&op->sync, fd, path, &e) < 0) {
        define_end(op, &e);
    }
    rv_err_clear(&e);
    free(xml);
    rv_qemu_domain_free(old);
    rv_qemu_domain_free(new);
    return RV_DEFERRED;

fail:
    if (op)
        free(op->path);
    free(op);
    free(xml);
    rv_qemu_domain_free(old);
    rv_qemu_domain_free(new);
    close(fd);
    return -1;
}

/* ================================================================ migration progress */

static unsigned long long get_u64(json_object *obj, const char *key)
{
    json_object *v = NULL;
    int64_t n = obj && json_object_object_get_ex(obj, key, &v) ? json_object_get_int64(v) : 0;
    return n > 0 ? (unsigned long long)n : 0;
}

static void on_migrate_status(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque);

/* A memory-only dump is QEMU's dump job (query-dump), not a migration. */
static bool memory_dump(const qemu_dom *d)
{
    return d->save && d->save->dump && (d->save->dump_flags & RV_DUMP_MEMORY_ONLY);
}

static void migration_finished(qemu_dom *d, const rv_err *err)
{
    rv_qemu_migration_wait_stop(d);
    void (*done)(qemu_dom *, const rv_err *) = d->migrate_done;
    d->migrate_done = NULL;
    if (done)
        done(d, err);
}

static void on_migrate_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_dom *d = w->data;
    rv_err err = { 0 };
    if (!d->qmp) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: no QEMU monitor");
        migration_finished(d, &err);
    } else if (rv_qmp_command(d->qmp, memory_dump(d) ? "query-dump" : "query-migrate", NULL, 0,
                              on_migrate_status, d, &err) < 0) {
        migration_finished(d, &err);
    }
    rv_err_clear(&err);
}

static void on_migrate_status(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->migrate_done)
        return;     /* the process or the wait is over */
    if (err) {
        migration_finished(d, err);
        return;
    }
    json_object *status = NULL, *desc = NULL;
    const char *s = json_object_object_get_ex(ret, "status", &status)
                        ? json_object_get_string(status) : "";
    bool dump = memory_dump(d);
    if (dump)
        rv_qemu_jobinfo_memory(d, get_u64(ret, "total"), get_u64(ret, "completed"));
    else
        rv_qemu_jobinfo_migration(d, ret);
    int postcopy = dump ? 0 : rv_qemu_postcopy_status(d, s);
    if (strcmp(s, "completed") == 0 || postcopy > 0) {
        migration_finished(d, NULL);
    } else if (strcmp(s, "failed") == 0 || strcmp(s, "cancelled") == 0 || postcopy < 0) {
        rv_err e = { 0 };
        const char *why = json_object_object_get_ex(ret, "error-desc", &desc)
                              ? json_object_get_string(desc) : NULL;
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s %s: %s",
                   dump ? "memory-only dump" : "migration", s,
                   why && *why ? why : "QEMU gave no reason");
        migration_finished(d, &e);
        rv_err_clear(&e);
    } else {
        ev_timer_set(&d->migrate_poll, MIGRATE_POLL, 0.);
        ev_timer_start(rv_qemu.loop, &d->migrate_poll);
    }
}

void rv_qemu_migration_wait(qemu_dom *d, void (*done)(qemu_dom *d, const rv_err *err))
{
    d->migrate_done = done;
    ev_timer_init(&d->migrate_poll, on_migrate_poll, 0., 0.);
    d->migrate_poll.data = d;
    ev_timer_start(rv_qemu.loop, &d->migrate_poll);
}

void rv_qemu_migration_poke(qemu_dom *d)
{
    if (d->migrate_done && ev_is_active(&d->migrate_poll)) {
        ev_timer_stop(rv_qemu.loop, &d->migrate_poll);
        ev_timer_set(&d->migrate_poll, 0., 0.);
        ev_timer_start(rv_qemu.loop, &d->migrate_poll);
    }
}

void rv_qemu_migration_wait_stop(qemu_dom *d)
{
    ev_timer_stop(rv_qemu.loop, &d->migrate_poll);
}

/* ================================================================ saving */

static char *marker_path(const char *name)
{
    return rv_qemu_path(rv_qemu.run_dir, name, ".saving");
}

int rv_qemu_save_marker_take(const char *name)
{
    char *path = marker_path(name);
    char text[PATH_MAX + 16] = "";
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    int result = -1;
    if (fd >= 0) {
        ssize_t n = read(fd, text, sizeof(text) - 1);
        text[n > 0 ? n : 0] = '\0';
        result = strncmp(text, "running", 7) == 0;
        /* Its second line names the partial file (a save or a dump to a
         * path of the caller's, which rv_qemu_save_dir_clean does not
         * see): it goes; once renamed into place there is none. */
        char *file = strchr(text, '\n');
        if (file && *++file == '/') {
            file[strcspn(file, "\n")] = '\0';
            if (unlink(file) == 0)
                RV_INFO("removed the partial image %s of domain '%s'", file, name);
        }
        close(fd);
        unlink(path);
    }
    free(path);
    return result;
}

/* The marker: whether the guest ran, and the partial file's name.  Written
 * before the guest stops, so that a remvirtd restarted in the middle knows
 * to let it go on and what to remove (on_status in qemu_process.c). */
static int write_marker(qemu_dom *d, const qemu_save_op *op, rv_err *err)
{
    char *marker = marker_path(dom_name(d)), *text = NULL;
    if (!marker || asprintf(&text, "%s\n%s\n", op->was_running ? "running" : "paused", op->tmp_path) < 0) {
        free(marker);
        return -2;
    }
    int rc = rv_qemu_write_file(marker, text, false, err);
    free(text);
    free(marker);
    return rc;
}

/* remove_partial: the unfinished file goes too; the marker goes unless
 * remvirtd is stopping (the next one reads it). */
static void save_op_free(qemu_save_op *op, bool remove_partial, bool keep_marker)
{
    char *marker = keep_marker ? NULL : marker_path(dom_name(op->dom));
    if (marker)
        unlink(marker);
    free(marker);
    if (op->fd >= 0)
        close(op->fd);
    if (remove_partial && op->tmp_path)
        unlink(op->tmp_path);
    free(op->tmp_path);
    free(op->path);
    free(op);
}

/* A failed job's answer, once the guest runs again (so that its state
 * says why: running (save canceled), as libvirtd's does). */
typedef struct fail_answer {
    qemu_dom *d;
    rv_err err;
} fail_answer;

static void on_resumed_after_fail(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    (void)err;
    fail_answer *a = opaque;
    qemu_dom *d = a->d;
    if (d->qmp == qmp && d->job_busy && d->jobs &&
        (d->jobs->kind == QJOB_SAVE || d->jobs->kind == QJOB_DUMP))
        rv_qemu_job_done(d, &a->err);
    rv_err_clear(&a->err);
    free(a);
}

/* The save failed: the partial file goes, a guest that ran runs again. */
static void save_failed(qemu_dom *d, const rv_err *why)
{
    qemu_save_op *op = d->save;
    d->save = NULL;
    rv_qemu_migration_wait_stop(d);
    rv_err aborted = { 0 };
    if (rv_qemu_jobinfo_aborted(d, &aborted))
        why = &aborted;
    rv_qemu_jobinfo_end(d, false, false);
    RV_WARN("domain '%s': %s to '%s' failed: %s", dom_name(d), op->dump ? "dump" : "save",
            op->path, why->message ? why->message : "");
    if (op->unlimited)
        rv_qemu_migtune_put_bandwidth(d);
    fail_answer *a = NULL;
    if (op->stopped_cpus && op->was_running && d->qmp && (a = calloc(1, sizeof(*a)))) {
        rv_err e = { 0 };
        a->d = d;
        rv_err_set(&a->err, why->domain, why->code, "%s", why->message ? why->message : "");
        if (rv_qmp_command(d->qmp, "cont", NULL, 0, on_resumed_after_fail, a, &e) < 0) {
            RV_WARN("domain '%s': cannot resume after the failed save: %s", dom_name(d),
                    e.message ? e.message : "");
            rv_err_clear(&a->err);
            free(a);
            a = NULL;
        }
        rv_err_clear(&e);
    }
    save_op_free(op, true, false);
    if (!a)
        rv_qemu_job_done(d, why);
    rv_err_clear(&aborted);
}

static void save_failf(qemu_dom *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void save_failf(qemu_dom *d, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, RV_FROM_QEMU, code, fmt, ap);
    va_end(ap);
    save_failed(d, &err);
    rv_err_clear(&err);
}

/* A save whose QEMU went away while the store helper had its file: the
 * op lives on alone until the helper answers. */
static void on_abandoned_done(rv_qemu_sync *s, int error)
{
    qemu_save_op *op = s->data;
    if (op->renaming) {
        if (error)
            RV_ERROR("the save image '%s' of a domain whose QEMU went away could not be put in "
                     "place: %s", op->path, error > 0 ? strerror(error) : "the store helper died");
        save_op_free(op, false, true);
        return;
    }
    /* After the fsync: the partial file goes, off the loop. */
    char *tmp = op->tmp_path;
    op->tmp_path = NULL;
    rv_err err = { 0 };
    op->renaming = true;    /* (so that this runs once) */
    int rc = tmp ? rv_qemu_sync_remove(&op->sync, tmp, &err) : -1;
    rv_err_clear(&err);
    free(tmp);
    if (rc < 0)
        save_op_free(op, false, true);
}

/* A dump is in place: what its flags ask for after it.  libvirtd keeps
 * no figures of a memory-only dump, nor sends JOB_COMPLETED for it. */
static void on_dump_resumed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque);

static void dump_done(qemu_dom *d)
{
    qemu_save_op *op = d->save;
    d->save = NULL;
    RV_INFO("domain '%s' dumped to '%s'", dom_name(d), op->path);
    bool memory_only = op->dump_flags & RV_DUMP_MEMORY_ONLY;
    rv_qemu_jobinfo_end(d, !memory_only, !memory_only);
    unsigned int flags = op->dump_flags;
    bool resume = op->stopped_cpus && op->was_running;
    if (op->unlimited && !(op->dump_flags & RV_DUMP_CRASH))
        rv_qemu_migtune_put_bandwidth(d);
    save_op_free(op, false, false);
    if (flags & RV_DUMP_CRASH) {
        rv_qemu_stop_process(d, RV_DOMAIN_SHUTOFF_CRASHED, RV_EVENT_STOPPED_CRASHED);
        return;
    }
    rv_err err = { 0 };
    int rc = 0;
    if (flags & RV_DUMP_RESET)
        rc = rv_qmp_command(d->qmp, "system_reset", NULL, 0, resume ? ignore_reply : on_dump_resumed,
                            d, &err);
    if (rc == 0 && resume)
        rc = rv_qmp_command(d->qmp, "cont", NULL, 0, on_dump_resumed, d, &err);
    else if (rc == 0 && !(flags & RV_DUMP_RESET))
        rv_qemu_job_done(d, NULL);
    if (rc < 0)
        rv_qemu_job_done(d, &err);
    rv_err_clear(&err);
}

static void on_dump_resumed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->job_busy || !d->jobs || d->jobs->kind != QJOB_DUMP)
        return;
    rv_err e = { 0 };
    if (err)
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   err->message ? err->message : "QEMU refused");
    rv_qemu_job_done(d, err ? &e : NULL);
    rv_err_clear(&e);
}

static void on_renamed(rv_qemu_sync *s, int error)
{
    qemu_save_op *op = s->data;
    qemu_dom *d = op->dom;
    op->renaming = false;
    if (error != 0) {
        save_failf(d, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s", op->path,
                   error > 0 ? strerror(error) : "the store helper died");
        return;
    }
    if (op->dump) {
        rv_crash_point("dump", 4);
        dump_done(d);
        return;
    }
    rv_crash_point("save", 4);
    /* The commit point is behind: the image is whole under its name, the
     * guest's state is there, so the process goes, as after a shutdown. */
    RV_INFO("domain '%s' saved to '%s'", dom_name(d), op->path);
    rv_qemu_jobinfo_end(d, true, true);
    d->save = NULL;
    /* The marker stays until the process is gone (process_gone removes
     * it): a remvirtd killed meanwhile knows the QEMU's end was the save's. */
    save_op_free(op, false, true);
    rv_qemu_stop_process(d, RV_DOMAIN_SHUTOFF_SAVED, RV_EVENT_STOPPED_SAVED);
}

static void on_fsynced(rv_qemu_sync *s, int error)
{
    qemu_save_op *op = s->data;
    qemu_dom *d = op->dom;
    rv_err e = { 0 };
    if (error != 0) {
        save_failf(d, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s", op->path,
                   error > 0 ? strerror(error) : "the store helper died");
        return;
    }
    if (rv_qemu_jobinfo_current(d) && rv_qemu_jobinfo_current(d)->aborted) {
        save_failf(d, RV_ERR_OPERATION_ABORTED, "operation aborted");    /* (reworded there) */
        return;
    }
    rv_crash_point(op->dump ? "dump" : "save", 3);
    op->sync.done = on_renamed;
    op->renaming = true;
    if (rv_qemu_sync_rename(&op->sync, op->tmp_path, op->path, &e) < 0) {
        op->renaming = false;
        save_failed(d, &e);
    }
    rv_err_clear(&e);
}

/* QEMU's stream is complete: the store helper (qemu_sync.c) fsyncs the
 * image, then renames it to its name (the commit point); the loop does
 * not wait on the disk. */
static void save_migrated(qemu_dom *d, const rv_err *err)
{
    qemu_save_op *op = d->save;
    if (!op)
        return;
    if (err) {
        /* QEMU 7.2 says nothing of why its stream could not be written:
         * a file system without room is the usual reason. */
        struct statvfs fs;
        if (fstatvfs(op->fd, &fs) == 0 && fs.f_bavail * fs.f_frsize < 1024 * 1024) {
            save_failf(d, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s (%s)",
                       op->path, strerror(ENOSPC), err->message ? err->message : "");
            return;
        }
        save_failed(d, err);
        return;
    }
    rv_crash_point(op->dump ? "dump" : "save", 2);
    op->sync.done = on_fsynced;
    op->sync.data = op;
    rv_err e = { 0 };
    if (rv_qemu_sync_fsync(&op->sync, op->fd, op->tmp_path, &e) < 0) {
        save_failed(d, &e);
        rv_err_clear(&e);
    }
}

static void on_save_step(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->save || !err)
        return;
    save_failf(d, RV_ERR_OPERATION_FAILED, "operation failed: %s",
               err->message ? err->message : "QEMU refused");
}

static void on_migrate_started(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = opaque;
    if (d->qmp != qmp || !d->save)
        return;
    if (err) {
        if (memory_dump(d)) {
            save_failf(d, RV_ERR_OPERATION_FAILED, "operation failed: memory-only dump failed: %s",
                       err->message ? err->message : "QEMU refused");
            return;
        }
        on_save_step(qmp, ret, err, opaque);
        return;
    }
    rv_qemu_jobinfo *j = rv_qemu_jobinfo_current(d);
    if (j && j->aborted && rv_qemu_migration_cancel(d, NULL) < 0)
        return;
    rv_qemu_migration_wait(d, save_migrated);
}

/* ABORT_JOB: QEMU cancels the migration; the poll sees "cancelled" and
 * the save fails (save_failed says it was aborted).  Before the migration
 * has begun, on_migrate_started cancels it; after its end, on_fsynced
 * drops the file. */
int rv_qemu_migration_cancel(qemu_dom *d, rv_err *err)
{
    rv_err e = { 0 };
    if (d->qmp && rv_qmp_command(d->qmp, "migrate_cancel", NULL, 0, ignore_reply, NULL, &e) < 0) {
        if (err)
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                       e.message ? e.message : "no QEMU monitor");
        rv_err_clear(&e);
        return -1;
    }
    return 0;
}

/* Write the header: the fixed part and the XML, zeros to the stream. */
static int write_header(qemu_save_op *op, const char *xml, rv_err *err)
{
    size_t xml_len = strlen(xml);
    if (xml_len == 0 || xml_len > RV_QEMU_SAVE_XML_MAX) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR, "internal error: the domain XML is too large to save");
        return -1;
    }
    size_t header_len = (SAVE_FIXED_HEADER + xml_len + RV_QEMU_SAVE_DATA_ALIGN - 1) /
                        RV_QEMU_SAVE_DATA_ALIGN * RV_QEMU_SAVE_DATA_ALIGN;
    unsigned char *buf = calloc(1, header_len);
    if (!buf) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    memcpy(buf, SAVE_MAGIC, 8);
    put_u32(buf + 8, (uint32_t)header_len);
    put_u32(buf + 12, (uint32_t)xml_len);
    put_u32(buf + 16, op->image_running ? SAVE_FLAG_RUNNING : 0);
    memcpy(buf + SAVE_FIXED_HEADER, xml, xml_len);
    size_t done = 0;
    while (done < header_len) {
        ssize_t n = write(op->fd, buf + done, header_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot write the save image '%s': %s",
                       op->path, n < 0 ? strerror(errno) : "short write");
            free(buf);
            return -1;
        }
        done += (size_t)n;
    }
    free(buf);
    return 0;
}

/* A save's header, then its marker.  0; -1 with err; -2: no memory. */
static int save_header_and_marker(qemu_dom *d, qemu_save_op *op, rv_err *err)
{
    char *xml = rv_qemu_domain_format(d->live);
    if (!xml)
        return -2;
    int rc = write_header(op, xml, err);
    free(xml);
    if (rc < 0)
        return -1;
    return write_marker(d, op, err);
}

void rv_qemu_save_begin(qemu_dom *d)
{
    qemu_job *job = d->jobs;
    rv_err err = { 0 };
    bool dump = job->kind == QJOB_DUMP;
    if (!dump && !job->path && !d->def) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: cannot do managed save for transient domain");
        rv_qemu_job_done(d, &err);
        rv_err_clear(&err);
        return;
    }
    qemu_save_op *op = calloc(1, sizeof(*op));
    if (!op)
        goto nomem;
    op->fd = -1;
    op->dom = d;
    op->dump = dump;
    op->dump_flags = dump ? job->flags & 0xffffffu : 0;
    op->was_running = d->state == RV_DOMAIN_RUNNING;
    op->image_running = job->flags & RV_DOMAIN_SAVE_RUNNING   ? true
                        : job->flags & RV_DOMAIN_SAVE_PAUSED ? false
                                                             : op->was_running;
    op->path = job->path ? strdup(job->path) : rv_qemu_managed_save_path(dom_name(d));
    if (!op->path || asprintf(&op->tmp_path, "%s.XXXXXX", op->path) < 0) {
        op->tmp_path = NULL;
        goto nomem;
    }
    if (!job->path && rv_qemu_mkdirs(rv_qemu.save_dir, &err) < 0)
        goto fail;
    /* mkostemp: a new file (O_EXCL), mode 0600. */
    if ((op->fd = mkostemp(op->tmp_path, O_CLOEXEC)) < 0) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "Failed to create file '%s': %s",
                   op->path, strerror(errno));
        free(op->tmp_path);
        op->tmp_path = NULL;    /* nothing was created */
        goto fail;
    }
    int rc = dump ? write_marker(d, op, &err) : save_header_and_marker(d, op, &err);
    if (rc == -2)
        goto nomem;
    if (rc < 0)
        goto fail;
    d->save = op;
    RV_INFO("domain '%s': %s to '%s'", dom_name(d), dump ? "dumping" : "saving", op->path);
    bool memory_only = op->dump_flags & RV_DUMP_MEMORY_ONLY;
    if (dump)
        rv_qemu_jobinfo_begin(d, RV_DOMAIN_JOB_OPERATION_DUMP, "domain core dump",
                              memory_only ? NULL : rv_qemu_migration_cancel, "cannot abort memory-only dump");
    else
        rv_qemu_jobinfo_begin(d, RV_DOMAIN_JOB_OPERATION_SAVE, "domain save", rv_qemu_migration_cancel, NULL);
    rv_crash_point(dump ? "dump" : "save", 1);

    /* The CPUs stop first (the image is the state at one instant), then
     * QEMU gets the descriptor and migrates into it. */
    json_object *getfd = json_object_new_object(), *migrate = json_object_new_object();
    if (getfd)
        json_object_object_add(getfd, "fdname", json_object_new_string(SAVE_FD_NAME));
    if (migrate && memory_only) {
        unsigned int format = job->flags >> 24;
        json_object_object_add(migrate, "paging", json_object_new_boolean(0));
        json_object_object_add(migrate, "protocol", json_object_new_string("fd:" SAVE_FD_NAME));
        json_object_object_add(migrate, "detach", json_object_new_boolean(1));
        json_object_object_add(migrate, "format", json_object_new_string(dump_formats[format]));
    } else if (migrate) {
        json_object_object_add(migrate, "uri", json_object_new_string("fd:" SAVE_FD_NAME));
    }
    if (!getfd || !migrate) {
        json_object_put(getfd);
        json_object_put(migrate);
        save_failf(d, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    /* (Each command owns its arguments from the call on, even when it fails.) */
    op->stopped_cpus = op->was_running && !(op->dump_flags & RV_DUMP_LIVE);
    rc = op->stopped_cpus ? rv_qmp_command(d->qmp, "stop", NULL, 0, on_save_step, d, &err) : 0;
    if (op->stopped_cpus)
        rv_qemu_jobinfo_cpus_stopped(d);
    /* A file takes the stream as fast as QEMU gives it (libvirtd's
     * rule): the bandwidth is lifted, and the kept one put back after. */
    if (rc == 0 && !memory_only) {
        json_object *unlimited = rv_qemu_migtune_bandwidth_args(RV_QEMU_MIG_BANDWIDTH_MAX);
        rc = unlimited ? rv_qmp_command(d->qmp, "migrate-set-parameters", unlimited, 0, on_save_step,
                                        d, &err)
                       : rv_err_fail(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        op->unlimited = rc == 0;
    }
    if (rc < 0)
        json_object_put(getfd);
    else
        rc = rv_qmp_command_fd(d->qmp, "getfd", getfd, op->fd, 0, on_save_step, d, &err);
    if (rc < 0)
        json_object_put(migrate);
    else
        rc = rv_qmp_command(d->qmp, memory_only ? "dump-guest-memory" : "migrate", migrate, 0,
                            on_migrate_started, d, &err);
    if (rc < 0)
        save_failed(d, &err);
    rv_err_clear(&err);
    return;

nomem:
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
fail:
    if (op)
        save_op_free(op, true, false);
    rv_qemu_job_done(d, &err);
    rv_err_clear(&err);
}

void rv_qemu_save_abandon(qemu_dom *d)
{
    qemu_save_op *op = d->save;
    if (!op)
        return;
    d->save = NULL;
    rv_qemu_migration_wait_stop(d);
    rv_qemu_jobinfo_end(d, false, false);
    if (rv_qemu_sync_busy(&op->sync)) {
        /* The stream was complete and the helper has the file.  Past the
         * commit point (the rename asked) the save stands: the domain is
         * shut off (saved) and the call succeeds; before it the file goes
         * once the helper is done with it and the call fails. */
        if (op->renaming && !op->dump) {
            d->stop_reason = RV_DOMAIN_SHUTOFF_SAVED;
            d->stop_detail = RV_EVENT_STOPPED_SAVED;
        }
        char *marker = marker_path(dom_name(d));
        if (marker)
            unlink(marker);
        free(marker);
        op->dom = NULL;
        op->sync.done = on_abandoned_done;
        return;
    }
    save_op_free(op, true, false);
}

void rv_qemu_save_release(qemu_dom *d)
{
    qemu_save_op *op = d->save;
    rv_qemu_migration_wait_stop(d);
    if (!op)
        return;
    d->save = NULL;
    rv_qemu_sync_forget(&op->sync);
    /* QEMU goes on writing: the next remvirtd sorts it out (on_status). */
    save_op_free(op, false, true);
}
