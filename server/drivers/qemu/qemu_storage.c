/* The QEMU driver's storage pools: directories on the host, each regular
 * file in one a volume (what libvirt's "dir" pools are).  Files:
 *   config_dir/storage/<name>.xml            a persistent pool definition
 *   config_dir/storage/autostart/<name>.xml  a symlink to it
 *   run_dir/storage/<name>.xml               the pool is active
 * the run file written atomically on the loop (a runtime file, as the
 * domains' are), definitions durably by the store helper (qemu_fileq.c).
 *
 * A pool's directory is opened when the pool starts (walked without
 * following a link another user could plant, rv_open_dir_safely) and
 * held until it stops: every volume is reached from that descriptor by
 * its one-component name with O_NOFOLLOW, so whoever can write the
 * directories above cannot redirect a volume operation by swapping the
 * pool's directory or a volume for a link.  Nothing a volume operation
 * opens can block: FIFOs and devices are refused (rv_open_file_at).
 *
 * Nothing here blocks the loop for long.  What is quick on a local
 * directory is done at once: stat, statvfs, mkdir, unlink, ftruncate,
 * fallocate (the Linux call, which fails rather than writing zeros when
 * the file system cannot reserve), and reading a file's first 512 bytes
 * to tell qcow2 from raw when a volume is asked about.  That reads the
 * header itself rather than run `qemu-img info`: one open and read
 * against a process and an asynchronous fan-in, and libvirt reads
 * headers the same way.  Reading the directory (a pool's start and
 * refresh) takes as long as it has files, so it runs in slices of loop
 * time (pool_scan) and the call is answered when it is done; it lists
 * names only, and each volume's header is read when it is first asked
 * about.  What takes as long as the image is big (qemu-img create for
 * qcow2, convert for a clone, resize of a qcow2) runs as a child
 * process watched by the loop, and the call is answered when it exits
 * (a deferred reply).  The child gets the files opened, not their
 * names.  While such a job runs, its pools cannot be stopped, and its
 * volume cannot be deleted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/crash_point.h"
#include "common/safe_open.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_storage.h"
#include "server/drivers/stream_fd.h"
#include "server/drivers/stream_offload.h"
#include "server/drivers/conf/objlist.h"
#include "server/drivers/conf/storage_vols.h"
#include "server/drivers/conf/storage_xml.h"

RV_LOG_CATEGORY("drivers.qemu.storage");

/* What a peer can make the driver hold: pools, volumes in all pools (a
 * start or refresh that finds more fails and says so; a volume is about
 * 400 bytes), jobs running at once, and the part of a failed qemu-img's
 * output kept for the error. */
enum { MAX_POOLS = 256, MAX_VOLS = 262144, MAX_JOBS = 16, ERR_TEXT_MAX = 1024 };

/* How long one slice of a directory scan may hold the loop. */
#define SCAN_SLICE_SECONDS 0.002

typedef struct pool_scan pool_scan;

typedef struct qpool {
    rv_pool_def *def;
    rv_pool_def *next_def;      /* defined while active: used from its stop */
    bool active, persistent, autostart;
    int dir;                    /* the directory while active, else -1 */
    rv_vol_def **vols;
    size_t nvols;
    int jobs;                   /* volume jobs using this pool */
    pool_scan *scan;            /* the directory being read (start, refresh) */
} qpool;

/* A call waiting for a scan; want_pool: its reply carries the pool. */
typedef struct {
    rv_deferred *reply;
    bool want_pool;
} scan_waiter;

struct pool_scan {
    ev_timer slice;
    qpool *pool;
    int dir;                    /* becomes the pool's when the scan ends */
    DIR *entries;
    rv_vol_def **vols;
    size_t nvols, cap;
    bool start;                 /* the pool becomes active when it ends */
    bool announce;              /* a STARTED event then (not a restart's) */
    scan_waiter *waiters;
    size_t nwaiters;
};

typedef enum { JOB_CREATE, JOB_CLONE, JOB_RESIZE, JOB_WIPE } job_kind;

/* The program a job runs: scrub for a wipe, else qemu-img. */
static const char *job_program(job_kind kind)
{
    return kind == JOB_WIPE ? "scrub" : "qemu-img";
}

/* A new volume is made under a hidden name (scans skip names that begin
 * with '.'), then fsynced and renamed to its own when it is whole: the
 * commit point.  A scan removes what a kill left under such a name (scans
 * and jobs never run in one pool at once). */
#define NEW_VOL_PREFIX ".rv-new."

typedef struct vol_job {
    job_kind kind;
    qpool *pool, *src_pool;     /* src_pool: a clone's original's */
    rv_deferred *reply;
    char *path;
    char *name;                 /* the volume's */
    char *tmp;                  /* CREATE, CLONE: the name it is made under */
    int out_fd;                 /* the child's stdout and stderr */
    rv_qemu_sync sync;          /* the commit's rename */
    struct vol_job *next;
} vol_job;

static unsigned int pool_state(const void *obj)
{
    const qpool *p = obj;
    return rv_obj_state(p->active, p->persistent, p->autostart);
}

static const rv_obj_kind pool_kind = RV_POOL_OBJ_KIND(RV_FROM_STORAGE, pool_state);

static struct {
    rv_obj_list pools;          /* of qpool */
    size_t nvols;               /* in all pools */
    vol_job *jobs;
    size_t njobs;
    bool stopping;              /* remvirtd's exit: scans end, state stays */
} st = { .pools = { .max = MAX_POOLS, .kind = &pool_kind } };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_STORAGE, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static int sys_fail(rv_err *err, const char *what, const char *path)
{
    return fail(err, RV_ERR_SYSTEM_ERROR, "cannot %s '%s': %s", what, path, strerror(errno));
}

static void scan_stop(pool_scan *s, const rv_err *why);

static void emit(const qpool *p, int event)
{
    rv_driver_pool_event(&rv_qemu_driver, p->def->name, p->def->uuid, RV_POOL_EVENT_ID_LIFECYCLE,
                         event, 0);
}

/* ================================================================ volumes on disk */

static uint64_t be64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* A qcow2 header (see QEMU's docs/interop/qcow2.txt): magic, version,
 * backing file offset and length, virtual size.  The backing file name
 * is read when it lies within the bytes read. */
static int probe_qcow2(rv_vol_def *v, const unsigned char *h, size_t n)
{
    if (n < 32 || memcmp(h, "QFI\xfb", 4) != 0)
        return 0;
    uint32_t version = be32(h + 4);
    uint64_t boff = be64(h + 8);
    uint32_t blen = be32(h + 16);
    v->capacity = be64(h + 24);
    (void)version;      /* libvirt's scan does not say <compat> either */
    if (!(v->format = strdup("qcow2")))
        return -1;
    if (blen && boff < n && blen <= n - boff) {
        if (!(v->backing_path = strndup((const char *)h + boff, blen)))
            return -1;
        v->backing_perms.mode = v->backing_perms.owner = v->backing_perms.group = -1;
    }
    return 0;
}

/* A volume of p's as a scan lists it: its name, path and key, nothing
 * read from the file yet; NULL when out of memory. */
static rv_vol_def *vol_new(const qpool *p, const char *name)
{
    rv_vol_def *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->type = RV_STORAGE_VOL_FILE;
    v->perms.mode = v->perms.owner = v->perms.group = -1;
    v->backing_perms = v->perms;
    if (asprintf(&v->path, "%s/%s", p->def->target_path, name) < 0)
        v->path = NULL;
    if (!v->path || !(v->name = strdup(name)) || !(v->key = strdup(v->path))) {
        rv_vol_def_free(v);
        return NULL;
    }
    return v;
}

/* The volume that the file name in p's directory is, read from the file;
 * NULL with *skip set when it is no volume (not a regular file, gone),
 * NULL alone when out of memory. */
static rv_vol_def *vol_probe(const qpool *p, const char *name, bool *skip)
{
    *skip = false;
    int fd = rv_open_file_at(p->dir, name, O_RDONLY | O_NOFOLLOW, 0, false, NULL);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        if (fd >= 0)
            close(fd);
        *skip = true;
        return NULL;
    }
    rv_vol_def *v = vol_new(p, name);
    if (!v) {
        close(fd);
        return NULL;
    }
    unsigned char head[512];
    ssize_t n = pread(fd, head, sizeof(head), 0);
    close(fd);
    v->capacity = (unsigned long long)sb.st_size;
    v->allocation = (unsigned long long)sb.st_blocks * 512;
    v->has_allocation = 1;
    v->perms.mode = sb.st_mode & 07777;
    v->perms.owner = sb.st_uid;
    v->perms.group = sb.st_gid;
    v->has_file_info = 1;
    v->physical = (unsigned long long)sb.st_size;
    v->atime[0] = sb.st_atim.tv_sec, v->atime[1] = sb.st_atim.tv_nsec;
    v->mtime[0] = sb.st_mtim.tv_sec, v->mtime[1] = sb.st_mtim.tv_nsec;
    v->ctime[0] = sb.st_ctim.tv_sec, v->ctime[1] = sb.st_ctim.tv_nsec;
    if (probe_qcow2(v, head, n > 0 ? (size_t)n : 0) < 0 || (!v->format && !(v->format = strdup("raw")))) {
        rv_vol_def_free(v);
        return NULL;
    }
    return v;
}

static void vols_clear(qpool *p)
{
    st.nvols -= p->nvols;
    for (size_t i = 0; i < p->nvols; i++)
        rv_vol_def_free(p->vols[i]);
    free(p->vols);
    p->vols = NULL;
    p->nvols = 0;
}

static rv_vol_def *vol_find(const qpool *p, const char *name, size_t *at)
{
    return rv_vols_find(p->vols, p->nvols, name, at);
}

/* Put v (taken) in p's list, replacing one of the same name. */
static int vol_put(qpool *p, rv_vol_def *v, rv_err *err)
{
    size_t at;
    if (vol_find(p, v->name, &at)) {
        rv_vol_def_free(p->vols[at]);
        p->vols[at] = v;
        return 0;
    }
    if (st.nvols >= MAX_VOLS) {
        rv_vol_def_free(v);
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: the storage pools hold at most %d volumes here", MAX_VOLS);
    }
    rv_vol_def **grown = realloc(p->vols, (p->nvols + 1) * sizeof(*grown));
    if (!grown) {
        rv_vol_def_free(v);
        return oom(err);
    }
    p->vols = grown;
    p->vols[p->nvols++] = v;
    st.nvols++;
    return 0;
}

static void vol_drop(qpool *p, const char *name)
{
    size_t at;
    if (!vol_find(p, name, &at))
        return;
    rv_vol_def_free(p->vols[at]);
    memmove(&p->vols[at], &p->vols[at + 1], (p->nvols - at - 1) * sizeof(p->vols[0]));
    p->nvols--;
    st.nvols--;
}

/* The file system's figures for the pool, and its directory's owner. */
static void pool_update_space(qpool *p)
{
    struct statvfs vfs;
    struct stat sb;
    if (p->dir < 0)
        return;
    if (fstatvfs(p->dir, &vfs) == 0) {
        unsigned long long unit = vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize;
        p->def->capacity = (unsigned long long)vfs.f_blocks * unit;
        p->def->allocation = (unsigned long long)(vfs.f_blocks - vfs.f_bfree) * unit;
        p->def->available = (unsigned long long)vfs.f_bavail * unit;
    }
    if (fstat(p->dir, &sb) == 0) {
        p->def->perms.mode = sb.st_mode & 07777;
        p->def->perms.owner = sb.st_uid;
        p->def->perms.group = sb.st_gid;
    }
}

/* ================================================================ the pool table */

static void pool_free(qpool *p)
{
    vols_clear(p);
    if (p->dir >= 0)
        close(p->dir);
    rv_pool_def_free(p->def);
    rv_pool_def_free(p->next_def);
    free(p);
}

static void pool_free_obj(void *p)
{
    pool_free(p);
}

static qpool *pool_find(const char *name)
{
    return rv_obj_find_name(&st.pools, name);
}

static qpool *pool_add(rv_pool_def *def, rv_err *err)
{
    qpool *p = rv_obj_new(&st.pools, sizeof(*p), def, err);
    if (p)
        p->dir = -1;
    return p;
}

static void pool_remove(qpool *p)
{
    rv_obj_remove(&st.pools, p);
    pool_free(p);
}

/* ================================================================ the definition files
 * (rv_qemu_family) */

static void free_def(void *def)
{
    rv_pool_def_free(def);
}

static void *parse_file(const char *xml, rv_err *err)
{
    rv_pool_def *def = NULL;
    return rv_pool_def_parse(xml, &def, err) < 0 ? NULL : def;
}

static void *load_new(void *def, bool persistent, rv_err *err)
{
    qpool *p = pool_add(def, err);
    if (p) {
        p->persistent = persistent;
        p->active = !persistent;
    }
    return p;
}

/* The run dir's copy of a defined pool: it is active. */
static void load_ran(void *obj, void *def)
{
    ((qpool *)obj)->active = true;
    rv_pool_def_free(def);
}

static rv_qemu_family fam = {
    .files = { .what = "storage pool", .max = RV_STORAGE_XML_MAX, .free = free_def },
    .sub = "storage", .from = RV_FROM_STORAGE, .list = &st.pools, .parse = parse_file,
    .add = load_new, .ran = load_ran,
};

static qpool *get_named(const char *name, rv_err *err)
{
    return rv_obj_get_name(&st.pools, name, err);
}

static qpool *get(const rv_nonnull_storage_pool *w, rv_err *err)
{
    return get_named(w->name, err);
}

static int busy(const qpool *p, rv_err *err);

static int not_active(const qpool *p, rv_err *err)
{
    if (p->scan)
        return busy(p, err);
    return fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: storage pool '%s' is not active", p->def->name);
}

static int still_active(const qpool *p, rv_err *err)
{
    return fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: storage pool '%s' is still active", p->def->name);
}

static int has_jobs(const qpool *p, rv_err *err)
{
    return fail(err, RV_ERR_INTERNAL_ERROR,
                "internal error: pool '%s' has asynchronous jobs running.", p->def->name);
}

static qpool *get_active(const rv_nonnull_storage_pool *w, rv_err *err)
{
    qpool *p = get(w, err);
    if (p && !p->active) {
        not_active(p, err);
        return NULL;
    }
    return p;
}

static int pool_to_wire(const void *p, void *w, rv_err *err)
{
    rv_nonnull_storage_pool *pool = w;
    return rv_obj_put_handle(&st.pools, p, &pool->name, pool->uuid, err);
}

static int vol_to_wire(const qpool *p, const rv_vol_def *v, rv_nonnull_storage_vol *w,
                       rv_err *err)
{
    return rv_vol_put_wire(p->def->name, v, w, RV_FROM_STORAGE, err);
}

/* ================================================================ reading a directory
 * A pool's start and refresh read its directory (every regular file not
 * starting with '.') in slices of at most SCAN_SLICE_SECONDS of loop
 * time each, from a timer of 0 s, so clients are served between slices
 * however many files there are.  The new list replaces the old one only
 * when the whole directory is read, and the calls waiting for it are
 * answered then.  While it runs, the pool's volumes are neither made nor
 * removed (busy()), and a start's pool is not active yet. */

static int too_many_vols(const qpool *p, size_t more, rv_err *err)
{
    return fail(err, RV_ERR_OPERATION_FAILED,
                "operation failed: storage pool '%s' has more than %zu volumes: the storage "
                "pools may hold at most %d volumes in all here", p->def->name, more, MAX_VOLS);
}

/* One entry of the directory; 0 or -1 with err set. */
static int scan_entry(pool_scan *s, const struct dirent *e, rv_err *err)
{
    if (strncmp(e->d_name, NEW_VOL_PREFIX, strlen(NEW_VOL_PREFIX)) == 0) {
        RV_INFO("pool '%s': removing '%s', a volume whose creation was interrupted",
                s->pool->def->name, e->d_name);
        unlinkat(s->dir, e->d_name, 0);
        return 0;
    }
    if (e->d_name[0] == '.')
        return 0;
    if (e->d_type != DT_REG) {
        struct stat sb;
        if (e->d_type != DT_UNKNOWN ||
            fstatat(s->dir, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
            return 0;
    }
    /* The other pools' volumes and this one's new list (its old one goes). */
    if (st.nvols - (s->start ? 0 : s->pool->nvols) + s->nvols >= MAX_VOLS)
        return too_many_vols(s->pool, s->nvols, err);
    if (s->nvols == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        rv_vol_def **grown = realloc(s->vols, cap * sizeof(*grown));
        if (!grown)
            return oom(err);
        s->vols = grown;
        s->cap = cap;
    }
    if (!(s->vols[s->nvols] = vol_new(s->pool, e->d_name)))
        return oom(err);
    s->nvols++;
    return 0;
}

static void scan_slice(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    pool_scan *s = (pool_scan *)w;
    double until = ev_time() + SCAN_SLICE_SECONDS;
    rv_err err = { 0 };
    for (unsigned n = 1;; n++) {
        errno = 0;
        struct dirent *e = readdir(s->entries);
        if (!e) {
            if (errno)
                sys_fail(&err, "read directory", s->pool->def->target_path);
            break;
        }
        if (scan_entry(s, e, &err) < 0)
            break;
        if (n % 64 == 0 && ev_time() >= until) {
            ev_timer_set(w, 0., 0.);
            ev_timer_start(loop, w);
            return;
        }
    }
    scan_stop(s, err.code ? &err : NULL);
    rv_err_clear(&err);
}

/* Read p's directory again, found anew from its path.  start: p becomes
 * active at the end (announce: with a STARTED event).  The caller then
 * waits (scan_wait) or not (remvirtd's start-up).  0 or -1 with err set. */
static int scan_begin(qpool *p, bool start, bool announce, rv_err *err)
{
    rv_err why = { 0 };
    int dir = rv_open_dir_safely(p->def->target_path, RV_FROM_STORAGE, &why);
    if (dir < 0) {
        fail(err, why.code, "cannot open the directory of storage pool '%s': %s", p->def->name,
             why.message);
        rv_err_clear(&why);
        return -1;
    }
    pool_scan *s = calloc(1, sizeof(*s));
    int list = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!s || list < 0 || !(s->entries = fdopendir(list))) {
        int rc = !s ? oom(err) : sys_fail(err, "open directory", p->def->target_path);
        if (list >= 0)
            close(list);
        close(dir);
        free(s);
        return rc;
    }
    s->pool = p;
    s->dir = dir;
    s->start = start;
    s->announce = announce;
    p->scan = s;
    ev_timer_init(&s->slice, scan_slice, 0., 0.);
    ev_timer_start(rv_qemu.loop, &s->slice);
    return 0;
}

/* The call being served waits for p's scan: RV_DEFERRED, or -1. */
static int scan_wait(qpool *p, bool want_pool, rv_err *err)
{
    pool_scan *s = p->scan;
    scan_waiter *grown = realloc(s->waiters, (s->nwaiters + 1) * sizeof(*grown));
    if (!grown)
        return oom(err);
    s->waiters = grown;
    if (!(s->waiters[s->nwaiters].reply = rv_driver_defer(err)))
        return -1;
    s->waiters[s->nwaiters++].want_pool = want_pool;
    return RV_DEFERRED;
}

/* The scan is over: whole (why NULL) or failed.  Its list becomes the
 * pool's, or the pool is as it was; the waiting calls are answered. */
static void scan_stop(pool_scan *s, const rv_err *why)
{
    qpool *p = s->pool;
    rv_err err = { 0 };
    ev_timer_stop(rv_qemu.loop, &s->slice);
    closedir(s->entries);
    p->scan = NULL;
    if (why)
        rv_err_set(&err, why->domain, why->code, "%s", why->message);
    else if (st.nvols - (s->start ? 0 : p->nvols) + s->nvols > MAX_VOLS)
        too_many_vols(p, s->nvols, &err);
    else if (s->start)
        rv_qemu_family_save_run(&fam, p->def->name, rv_pool_def_format(p->def), &err);
    if (!err.code) {
        vols_clear(p);
        p->vols = s->vols;
        p->nvols = s->nvols;
        st.nvols += s->nvols;
        s->vols = NULL;
        s->nvols = 0;
        if (p->dir >= 0)
            close(p->dir);
        p->dir = s->dir;
        pool_update_space(p);
        if (s->start) {
            p->active = true;
            RV_INFO("storage pool '%s' started (%zu volumes)", p->def->name, p->nvols);
            if (s->announce)
                emit(p, RV_POOL_EVENT_STARTED);
        } else {
            rv_driver_pool_event(&rv_qemu_driver, p->def->name, p->def->uuid,
                                 RV_POOL_EVENT_ID_REFRESH, 0, 0);
        }
    } else {
        close(s->dir);
        RV_WARN("storage pool '%s' %s: %s", p->def->name,
                s->start ? "does not start" : "is not refreshed", err.message);
        if (s->start && !s->nwaiters && !st.stopping)
            /* remvirtd's restart: it stopped */
            rv_qemu_remove_file(fam.run_dir, p->def->name, ".xml");
    }
    for (size_t i = 0; i < s->nvols; i++)
        rv_vol_def_free(s->vols[i]);
    free(s->vols);
    for (size_t i = 0; i < s->nwaiters; i++) {
        rv_err werr = { 0 };
        const rv_err *answer = err.code ? &err : NULL;
        if (!answer && s->waiters[i].want_pool) {
            rv_storage_pool_create_xml_ret *ret = rv_deferred_ret(s->waiters[i].reply);
            if (pool_to_wire(p, &ret->pool, &werr) < 0)
                answer = &werr;
        }
        rv_deferred_finish(s->waiters[i].reply, answer);
        rv_err_clear(&werr);
    }
    free(s->waiters);
    bool gone = err.code && s->start && !p->persistent;
    free(s);
    rv_err_clear(&err);
    if (gone)
        pool_remove(p);
}

/* Nothing may change p's volumes while its directory is read. */
static int busy(const qpool *p, rv_err *err)
{
    if (!p->scan)
        return 0;
    return fail(err, RV_ERR_OPERATION_INVALID, p->scan->start
                ? "Requested operation is not valid: storage pool '%s' is starting up"
                : "Requested operation is not valid: storage pool '%s' is being refreshed",
                p->def->name);
}

/* ================================================================ lifecycle */

/* Make p active (its directory must be there) when its scan ends; the
 * call being served waits for it.  RV_DEFERRED or -1. */
static int pool_start(qpool *p, bool want_pool, rv_err *err)
{
    return scan_begin(p, true, true, err) < 0 ? -1 : scan_wait(p, want_pool, err);
}

/* mkdir -p.  A directory that was there keeps its mode unless the XML
 * gives one: a pool on /tmp must not make /tmp 0711.  The mode and owner
 * are set through the directory opened, not its name. */
static int pool_build(qpool *p, rv_err *err)
{
    struct stat sb;
    bool existed = stat(p->def->target_path, &sb) == 0;
    long mode = p->def->perms.mode >= 0 ? p->def->perms.mode : existed ? -1 : 0711;
    if (rv_qemu_mkdirs(p->def->target_path, err) < 0)
        return -1;
    rv_err why = { 0 };
    int dir = rv_open_dir_safely(p->def->target_path, RV_FROM_STORAGE, &why);
    int rc = 0;
    if (dir < 0)
        rc = fail(err, why.code, "cannot build storage pool '%s': %s", p->def->name, why.message);
    else if (mode >= 0 && fchmod(dir, (mode_t)mode) < 0)
        rc = sys_fail(err, "set permissions of", p->def->target_path);
    else if ((p->def->perms.owner >= 0 || p->def->perms.group >= 0) &&
             fchown(dir, (uid_t)p->def->perms.owner, (gid_t)p->def->perms.group) < 0)
        rc = sys_fail(err, "change the owner of", p->def->target_path);
    rv_err_clear(&why);
    if (dir >= 0)
        close(dir);
    if (rc == 0)
        emit(p, RV_POOL_EVENT_CREATED);
    return rc;
}

/* The storage driver's checks on a new definition, against the pools
 * there are (except the one of the same uuid, which it replaces). */
static int check_new_def(const rv_pool_def *def, rv_err *err)
{
    /* The name becomes a file name, as a domain's does. */
    if (!def->name[0] || def->name[0] == '.' || strchr(def->name, '/'))
        return fail(err, RV_ERR_XML_ERROR, "XML error: invalid storage pool name '%s'", def->name);
    for (const char *c = def->name; *c; c++)
        if ((unsigned char)*c < 0x20)
            return fail(err, RV_ERR_XML_ERROR, "XML error: invalid storage pool name");
    if (def->type != RV_POOL_TYPE_DIR)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: storage pool type '%s' is not supported by "
                    "remvirtd's QEMU driver (only 'dir')", rv_pool_type_name(def->type));
    if (def->target_path[0] != '/')
        return fail(err, RV_ERR_XML_ERROR,
                    "XML error: storage pool target path '%s' must be absolute",
                    def->target_path);
    void *byuuid;
    if (rv_obj_check_clash(&st.pools, def->name, def->uuid, &byuuid, err) < 0)
        return -1;
    for (size_t i = 0; i < st.pools.n; i++) {
        const qpool *p = rv_obj_at(&st.pools, i);
        if (p != byuuid && strcmp(p->def->target_path, def->target_path) == 0)
            return fail(err, RV_ERR_OPERATION_FAILED,
                        "operation failed: Storage source conflict with pool: '%s'", p->def->name);
    }
    return 0;
}

static int parse_pool(const char *xml, rv_pool_def **out, rv_err *err)
{
    if (rv_pool_def_parse(xml, out, err) < 0)
        return -1;
    if (check_new_def(*out, err) < 0) {
        rv_pool_def_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* A define or an undefine, through the family's queue (qemu_fileq.c):
 * checked at its turn, answered once the file is durable (or gone),
 * memory changed then. (rv_qemu_defop) */
static rv_qemu_fileq pool_queue = { .name = "pool", .from = RV_FROM_STORAGE };

static int define_prepare(rv_qemu_fileop *o, rv_err *err)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    rv_pool_def *def;
    if (parse_pool(op->xml, &def, err) < 0)
        return -1;
    op->def = def;
    qpool *p = pool_find(def->name);
    if (p && p->scan && p->scan->start)
        return busy(p, err);
    return rv_qemu_family_define_step(o, &fam, def->name, rv_pool_def_format(def), err);
}

static void define_commit(rv_qemu_fileop *o)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    rv_err err = { 0 };
    rv_pool_def *def = op->def;
    op->def = NULL;
    qpool *p = pool_find(def->name);
    if (p && p->active) {
        /* The running pool keeps its definition (its directory, its
         * volumes) until it stops; the file has the new one. */
        rv_pool_def_free(p->next_def);
        p->next_def = def;
    } else if (p) {
        rv_pool_def_free(p->def);
        p->def = def;
    } else if (!(p = pool_add(def, &err))) {
        RV_ERROR("storage pool '%s' is on disk, but not in memory: %s", def->name, err.message);
        rv_pool_def_free(def);
        rv_err_clear(&err);
        return;
    }
    p->persistent = true;
    RV_INFO("storage pool '%s' defined", p->def->name);
    emit(p, RV_POOL_EVENT_DEFINED);
    rv_storage_pool_define_xml_ret *ret = rv_deferred_ret(o->reply);
    if (pool_to_wire(p, &ret->pool, &err) < 0)
        rv_err_clear(&err);
}

int rv_qemu_storage_pool_define_xml(rv_driver_conn *c, const rv_storage_pool_define_xml_args *args,
                                    rv_storage_pool_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    rv_pool_def *def;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0x1, "storagePoolDefineXML", err) < 0 ||
        parse_pool(args->xml, &def, err) < 0)
        return -1;
    /* Refused at once when bad; checked again at its turn. */
    qpool *p = pool_find(def->name);
    rv_pool_def_free(def);
    if (p && p->scan && p->scan->start)
        return busy(p, err);
    return rv_qemu_defop_submit(&pool_queue, args->xml, NULL, free_def, define_prepare,
                                define_commit, err);
}

/* virStoragePoolCreateFlags: build first (1), overwriting (2) or not (4). */
enum { CREATE_WITH_BUILD_ANY = 0x7 };

int rv_qemu_storage_pool_create_xml(rv_driver_conn *c, const rv_storage_pool_create_xml_args *args,
                                    rv_storage_pool_create_xml_ret *ret, rv_err *err)
{
    (void)c;
    rv_pool_def *def;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, CREATE_WITH_BUILD_ANY, "storagePoolCreateXML", err) < 0 ||
        parse_pool(args->xml, &def, err) < 0)
        return -1;
    if (pool_find(def->name)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: storage pool '%s' is already defined; "
             "start it instead", def->name);
        rv_pool_def_free(def);
        return -1;
    }
    (void)ret;
    qpool *p = pool_add(def, err);
    if (!p)
        return rv_pool_def_free(def), -1;
    if ((args->flags & CREATE_WITH_BUILD_ANY) && pool_build(p, err) < 0) {
        pool_remove(p);
        return -1;
    }
    if (scan_begin(p, true, true, err) < 0) {
        pool_remove(p);
        return -1;
    }
    /* Out of memory for the wait: the scan goes on and ends unwatched. */
    return scan_wait(p, true, err);
}

/* The pool for a call that needs it inactive and idle (flags checked as
 * libvirtd's func); else NULL with libvirtd's error: "already active"
 * for a start (starting), else "still active". */
static qpool *get_stopped(const rv_nonnull_storage_pool *w, unsigned int flags,
                          unsigned int known, const char *func, bool starting, rv_err *err)
{
    qpool *p = NULL;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, flags, known, func, err) < 0 ||
        !(p = get(w, err)) || busy(p, err) < 0)
        return NULL;
    if (!p->active)
        return p;
    if (starting)
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: storage pool '%s' is already active", p->def->name);
    else
        still_active(p, err);
    return NULL;
}

int rv_qemu_storage_pool_create(rv_driver_conn *c, const rv_storage_pool_create_args *args,
                                rv_err *err)
{
    (void)c;
    qpool *p = get_stopped(&args->pool, args->flags, CREATE_WITH_BUILD_ANY, "storagePoolCreate",
                           true, err);
    if (!p)
        return -1;
    if ((args->flags & CREATE_WITH_BUILD_ANY) && pool_build(p, err) < 0)
        return -1;
    return pool_start(p, false, err);
}

int rv_qemu_storage_pool_build(rv_driver_conn *c, const rv_storage_pool_build_args *args,
                               rv_err *err)
{
    (void)c;
    /* NO_OVERWRITE (4) and OVERWRITE (8) mean nothing to a directory. */
    qpool *p = get_stopped(&args->pool, args->flags, 0xc, "storagePoolBuild", true, err);
    return p ? pool_build(p, err) : -1;
}

int rv_qemu_storage_pool_destroy(rv_driver_conn *c, const rv_storage_pool_destroy_args *args,
                                 rv_err *err)
{
    (void)c;
    qpool *p = get_active(&args->pool, err);
    if (!p || busy(p, err) < 0)
        return -1;
    if (p->jobs)
        return has_jobs(p, err);
    rv_qemu_remove_file(fam.run_dir, p->def->name, ".xml");
    p->active = false;
    vols_clear(p);
    close(p->dir);
    p->dir = -1;
    if (p->next_def) {
        rv_pool_def_free(p->def);
        p->def = p->next_def;
        p->next_def = NULL;
    }
    RV_INFO("storage pool '%s' stopped", p->def->name);
    emit(p, RV_POOL_EVENT_STOPPED);
    if (!p->persistent)
        pool_remove(p);
    return 0;
}

int rv_qemu_storage_pool_delete(rv_driver_conn *c, const rv_storage_pool_delete_args *args,
                                rv_err *err)
{
    (void)c;
    qpool *p = get_stopped(&args->pool, args->flags, 0, "storagePoolDelete", false, err);
    if (!p)
        return -1;
    char *name = NULL;
    rv_err why = { 0 };
    int parent = rv_open_parent_safely(p->def->target_path, &name, RV_FROM_STORAGE, &why);
    int rc = 0;
    if (parent < 0)
        rc = fail(err, why.code, "failed to remove pool '%s': %s", p->def->target_path,
                  why.message);
    else if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = fail(err, RV_ERR_SYSTEM_ERROR, "failed to remove pool '%s': %s",
                  p->def->target_path, strerror(errno));
    rv_err_clear(&why);
    free(name);
    if (parent >= 0)
        close(parent);
    if (rc == 0)
        emit(p, RV_POOL_EVENT_DELETED);
    return rc;
}

static int undefine_prepare(rv_qemu_fileop *o, rv_err *err)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    qpool *p = rv_qemu_family_get_queued(&fam, op->uuid, err);
    if (!p || busy(p, err) < 0)
        return -1;
    if (p->active)
        return still_active(p, err);
    return rv_qemu_family_undefine_steps(o, &fam, p->def->name, err);
}

static void undefine_commit(rv_qemu_fileop *o)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    qpool *p = rv_obj_find_uuid(&st.pools, op->uuid);
    if (!p)
        return;
    RV_INFO("storage pool '%s' undefined", p->def->name);
    emit(p, RV_POOL_EVENT_UNDEFINED);
    pool_remove(p);
}

int rv_qemu_storage_pool_undefine(rv_driver_conn *c, const rv_storage_pool_undefine_args *args,
                                  rv_err *err)
{
    (void)c;
    qpool *p = get(&args->pool, err);
    if (!p || busy(p, err) < 0)
        return -1;
    if (p->active)
        return still_active(p, err);
    return rv_qemu_defop_submit(&pool_queue, NULL, p->def->uuid, free_def, undefine_prepare,
                                undefine_commit, err);
}

int rv_qemu_storage_pool_refresh(rv_driver_conn *c, const rv_storage_pool_refresh_args *args,
                                 rv_err *err)
{
    (void)c;
    qpool *p;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storagePoolRefresh", err) < 0 ||
        !(p = get_active(&args->pool, err)))
        return -1;
    if (p->scan)        /* a refresh already under way: its end answers this one too */
        return scan_wait(p, false, err);
    if (p->jobs)
        return has_jobs(p, err);
    return scan_begin(p, false, false, err) < 0 ? -1 : scan_wait(p, false, err);
}

RV_OBJ_STATE_SLOTS(rv_qemu_, storage_pool, &st.pools, pool)

int rv_qemu_storage_pool_set_autostart(rv_driver_conn *c,
                                       const rv_storage_pool_set_autostart_args *args, rv_err *err)
{
    (void)c;
    qpool *p = get(&args->pool, err);
    if (!p)
        return -1;
    if (!p->persistent)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: cannot set autostart for transient pool");
    if (rv_qemu_family_set_autostart(&fam, p->def->name, args->autostart != 0, err) < 0)
        return -1;
    p->autostart = args->autostart != 0;
    return 0;
}

/* ================================================================ pool queries */

RV_OBJ_ACTIVE_SLOTS(rv_qemu_, storage_pools, &st.pools, RV_STORAGE_POOL_LIST_MAX)
RV_OBJ_DEFINED_SLOTS(rv_qemu_, storage_pools, &st.pools, RV_STORAGE_POOL_LIST_MAX)

RV_OBJ_LIST_ALL_SLOT(rv_qemu_, storage_pools, &st.pools, 0xfffff, "connectListAllStoragePools",
                     pool_to_wire, pools)

RV_OBJ_LOOKUP_SLOTS(rv_qemu_, storage_pool, &st.pools, pool_to_wire, pool)

int rv_qemu_storage_pool_lookup_by_volume(rv_driver_conn *c,
                                          const rv_storage_pool_lookup_by_volume_args *args,
                                          rv_storage_pool_lookup_by_volume_ret *ret, rv_err *err)
{
    (void)c;
    qpool *p = get_named(args->vol.pool, err);
    return p ? pool_to_wire(p, &ret->pool, err) : -1;
}

int rv_qemu_storage_pool_get_info(rv_driver_conn *c, const rv_storage_pool_get_info_args *args,
                                  rv_storage_pool_get_info_ret *ret, rv_err *err)
{
    (void)c;
    qpool *p = get(&args->pool, err);
    if (!p)
        return -1;
    if (p->active)
        pool_update_space(p);
    ret->state = (u_char)(p->active ? RV_STORAGE_POOL_RUNNING : RV_STORAGE_POOL_INACTIVE);
    ret->capacity = p->active ? p->def->capacity : 0;
    ret->allocation = p->active ? p->def->allocation : 0;
    ret->available = p->active ? p->def->available : 0;
    return 0;
}

int rv_qemu_storage_pool_get_xml_desc(rv_driver_conn *c,
                                      const rv_storage_pool_get_xml_desc_args *args,
                                      rv_storage_pool_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qpool *p;
    /* INACTIVE (1): the definition the next start uses. */
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0x1, "storagePoolGetXMLDesc", err) < 0 ||
        !(p = get(&args->pool, err)))
        return -1;
    if (p->active)
        pool_update_space(p);
    const rv_pool_def *def = (args->flags & 0x1) && p->next_def ? p->next_def : p->def;
    if (!(ret->xml = rv_pool_def_format(def)))
        return oom(err);
    return rv_string_result(0, &ret->xml, err);
}

/* ================================================================ volume queries */

/* The volume a handle names, in its active pool. */
static rv_vol_def *get_vol(const rv_nonnull_storage_vol *w, qpool **pool, rv_err *err)
{
    qpool *p = get_named(w->pool, err);
    if (!p)
        return NULL;
    if (!p->active) {
        not_active(p, err);
        return NULL;
    }
    rv_vol_def *v = vol_find(p, w->name, NULL);
    if (!v)
        rv_vol_not_found(RV_FROM_STORAGE, "name", w->name, err);
    if (pool)
        *pool = p;
    return v;
}

RV_VOLS_SLOTS(rv_qemu_, qpool, get_active, get_vol, RV_FROM_STORAGE)

int rv_qemu_storage_pool_list_all_volumes(rv_driver_conn *c,
                                          const rv_storage_pool_list_all_volumes_args *args,
                                          rv_storage_pool_list_all_volumes_ret *ret, rv_err *err)
{
    (void)c;
    qpool *p;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storagePoolListAllVolumes", err) < 0 ||
        !(p = get_active(&args->pool, err)))
        return -1;
    return rv_vols_list_all(p->def->name, p->vols, p->nvols, args->need_results,
                            RV_FROM_STORAGE, ret, err);
}

int rv_qemu_storage_vol_lookup_by_name(rv_driver_conn *c,
                                       const rv_storage_vol_lookup_by_name_args *args,
                                       rv_storage_vol_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    rv_nonnull_storage_vol w = { .pool = args->pool.name, .name = args->name };
    qpool *p;
    rv_vol_def *v = get_vol(&w, &p, err);
    return v ? vol_to_wire(p, v, &ret->vol, err) : -1;
}

/* The volume whose key (by_key) or path is what, in any active pool. */
static int lookup_anywhere(const char *what, bool by_key, rv_nonnull_storage_vol *out, rv_err *err)
{
    for (size_t i = 0; i < st.pools.n; i++) {
        qpool *p = rv_obj_at(&st.pools, i);
        rv_vol_def *v = p->active ? rv_vols_find_by(p->vols, p->nvols, by_key, what) : NULL;
        if (v)
            return vol_to_wire(p, v, out, err);
    }
    return rv_vol_not_found(RV_FROM_STORAGE, by_key ? "key" : "path", what, err);
}

int rv_qemu_storage_vol_lookup_by_key(rv_driver_conn *c,
                                      const rv_storage_vol_lookup_by_key_args *args,
                                      rv_storage_vol_lookup_by_key_ret *ret, rv_err *err)
{
    (void)c;
    return lookup_anywhere(args->key, true, &ret->vol, err);
}

int rv_qemu_storage_vol_lookup_by_path(rv_driver_conn *c,
                                       const rv_storage_vol_lookup_by_path_args *args,
                                       rv_storage_vol_lookup_by_path_ret *ret, rv_err *err)
{
    (void)c;
    return lookup_anywhere(args->path, false, &ret->vol, err);
}

/* A volume's figures change under it (a guest writes): look again. */
static rv_vol_def *get_vol_fresh(const rv_nonnull_storage_vol *w, qpool **pool, rv_err *err)
{
    qpool *p;
    rv_vol_def *v = get_vol(w, &p, err);
    if (!v)
        return NULL;
    bool skip;
    rv_vol_def *now = vol_probe(p, v->name, &skip);
    if (!now) {
        if (!skip)
            oom(err);
        else {
            vol_drop(p, w->name);
            rv_vol_not_found(RV_FROM_STORAGE, "name", w->name, err);
        }
        return NULL;
    }
    if (vol_put(p, now, err) < 0)
        return NULL;
    if (pool)
        *pool = p;
    return now;
}

int rv_qemu_storage_vol_get_info(rv_driver_conn *c, const rv_storage_vol_get_info_args *args,
                                 rv_storage_vol_get_info_ret *ret, rv_err *err)
{
    (void)c;
    rv_vol_def *v = get_vol_fresh(&args->vol, NULL, err);
    if (!v)
        return -1;
    rv_vol_put_info(v, ret);
    return 0;
}

int rv_qemu_storage_vol_get_xml_desc(rv_driver_conn *c,
                                     const rv_storage_vol_get_xml_desc_args *args,
                                     rv_storage_vol_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    rv_vol_def *v;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storageVolGetXMLDesc", err) < 0 ||
        !(v = get_vol_fresh(&args->vol, NULL, err)))
        return -1;
    return rv_vol_put_xml(v, RV_FROM_STORAGE, &ret->xml, err);
}

/* v's file in p's directory, by its name there: never a link, and never
 * anything but a regular file (a FIFO would block the open or the reads). */
static int vol_file(const qpool *p, const rv_vol_def *v, int open_flags, rv_err *err)
{
    const char *kind;
    int fd = rv_open_file_at(p->dir, v->name, open_flags | O_NOFOLLOW, 0, false, &kind);
    if (fd >= 0)
        return fd;
    if (kind)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: volume '%s' is a %s, not a regular file",
                    v->path, kind);
    return sys_fail(err, errno == ELOOP ? "open volume (a symbolic link)" : "open volume",
                    v->path);
}

int rv_qemu_storage_vol_open(const char *pool, const char *vol, int open_flags, rv_err *err)
{
    rv_nonnull_storage_vol w = { .pool = (char *)pool, .name = (char *)vol };
    qpool *p;
    rv_vol_def *v = get_vol(&w, &p, err);
    return v ? vol_file(p, v, open_flags, err) : -1;
}

/* vol-upload / vol-download: the volume's file as a stream endpoint
 * (stream_fd.c), positioned at offset and limited to length bytes (0: to
 * the end of the file for a download, no limit for an upload).  The bytes
 * are the file's, whatever its format, as libvirtd's directory pools do.
 * With the sparse flag the file's holes travel as STREAM_HOLE packets
 * both ways (stream_fd.c); an upload's hole may not end past the file's
 * size when the upload began. */
static int open_transfer(const rv_nonnull_storage_vol *vol, unsigned long long offset,
                         unsigned long long length, unsigned int flags, bool upload,
                         const char *func, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_STORAGE, flags, RV_STORAGE_VOL_STREAM_SPARSE, func, err) < 0)
        return -1;
    if (offset > (unsigned long long)INT64_MAX)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: offset %llu is too large", offset);
    int fd = rv_qemu_storage_vol_open(vol->pool, vol->name, upload ? O_WRONLY : O_RDONLY, err);
    if (fd < 0)
        return -1;
    if (lseek(fd, (off_t)offset, SEEK_SET) < 0) {
        int rc = sys_fail(err, "seek in volume", vol->name);
        close(fd);
        return rc;
    }
    struct stat sb;
    if (fstat(fd, &sb) < 0) {
        int rc = sys_fail(err, "stat volume", vol->name);
        close(fd);
        return rc;
    }
    rv_stream_io *io = rv_stream_fd_new(rv_qemu.loop, fd, !upload, upload, err);
    if (!io)
        return -1;
    if (length)
        rv_stream_fd_set_length(io, length);
    if (flags & RV_STORAGE_VOL_STREAM_SPARSE)
        rv_stream_fd_set_sparse(io, (unsigned long long)sb.st_size);
    /* The file's reads and writes run in a thread: never on the loop. */
    if (!(io = rv_stream_offload(rv_qemu.loop, io, err)))
        return -1;
    return rv_driver_stream_open(io, err);
}

int rv_qemu_storage_vol_upload(rv_driver_conn *c, const rv_storage_vol_upload_args *args,
                               rv_err *err)
{
    (void)c;
    return open_transfer(&args->vol, args->offset, args->length, args->flags, true,
                         "storageVolUpload", err);
}

int rv_qemu_storage_vol_download(rv_driver_conn *c, const rv_storage_vol_download_args *args,
                                 rv_err *err)
{
    (void)c;
    return open_transfer(&args->vol, args->offset, args->length, args->flags, false,
                         "storageVolDownload", err);
}

/* ================================================================ volume jobs */

static vol_job *job_for_path(const char *path)
{
    for (vol_job *j = st.jobs; j; j = j->next)
        if (strcmp(j->path, path) == 0)
            return j;
    return NULL;
}

static void job_free(vol_job *j)
{
    for (vol_job **at = &st.jobs; *at; at = &(*at)->next)
        if (*at == j) {
            *at = j->next;
            st.njobs--;
            break;
        }
    j->pool->jobs--;
    if (j->src_pool)
        j->src_pool->jobs--;
    if (j->out_fd >= 0)
        close(j->out_fd);
    rv_qemu_sync_forget(&j->sync);
    free(j->path);
    free(j->name);
    free(j->tmp);
    free(j);
}

/* What the child printed, on one line, at most ERR_TEXT_MAX bytes. */
static void child_output(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t len = strlen(buf);
    while (len && buf[len - 1] == ' ')
        buf[--len] = '\0';
}

static rv_nonnull_storage_vol *job_ret_vol(vol_job *j)
{
    if (j->kind == JOB_CREATE)
        return &((rv_storage_vol_create_xml_ret *)rv_deferred_ret(j->reply))->vol;
    if (j->kind == JOB_CLONE)
        return &((rv_storage_vol_create_xml_from_ret *)rv_deferred_ret(j->reply))->vol;
    return NULL;
}

/* The job's end: the new volume listed and the call answered, or err. */
static void job_end(vol_job *j, rv_err *err)
{
    if (!rv_err_is_set(err)) {
        bool skip;
        rv_vol_def *v = vol_probe(j->pool, j->name, &skip);
        if (!v)
            skip ? rv_vol_not_found(RV_FROM_STORAGE, "name", j->name, err) : oom(err);
        else if (vol_put(j->pool, v, err) == 0 && job_ret_vol(j))
            vol_to_wire(j->pool, v, job_ret_vol(j), err);
        pool_update_space(j->pool);
    }
    if (j->reply)
        rv_deferred_finish(j->reply, rv_err_is_set(err) ? err : NULL);
    job_free(j);
}

static void on_committed(rv_qemu_sync *sync, int error)
{
    vol_job *j = sync->data;
    rv_err err = { 0 };
    if (error) {
        if (error == EEXIST)
            fail(&err, RV_ERR_STORAGE_VOL_EXIST, "storage volume '%s' exists already", j->name);
        else
            fail(&err, RV_ERR_SYSTEM_ERROR, "cannot put the volume '%s' in place: %s", j->path,
                 error > 0 ? strerror(error) : "the store helper died");
        unlinkat(j->pool->dir, j->tmp, 0);
    } else {
        rv_crash_point("vol-create", 2);
        RV_INFO("volume '%s' created", j->path);
    }
    job_end(j, &err);
    rv_err_clear(&err);
}

/* The new volume is whole under its hidden name: the store helper fsyncs
 * it and renames it to its own (the commit point), off the loop. */
static void job_commit(vol_job *j)
{
    rv_crash_point("vol-create", 1);
    rv_err err = { 0 };
    j->sync.done = on_committed;
    j->sync.data = j;
    if (rv_qemu_sync_commit_at(&j->sync, j->pool->dir, j->tmp, j->name, &err) < 0) {
        unlinkat(j->pool->dir, j->tmp, 0);
        job_end(j, &err);
    }
    rv_err_clear(&err);
}

static void job_exited(void *data, int status, const char *why)
{
    vol_job *j = data;
    rv_err err = { 0 };
    bool ok = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    RV_INFO("volume '%s': %s %s", j->path, job_program(j->kind), ok ? "done" : "failed");
    if (ok && j->tmp && j->reply) {
        job_commit(j);
        return;
    }
    if (!ok) {
        char out[ERR_TEXT_MAX];
        if (status < 0)
            snprintf(out, sizeof(out), "%s", why ? why : "");
        else
            child_output(j->out_fd, out, sizeof(out));
        fail(&err, RV_ERR_INTERNAL_ERROR, "internal error: %s failed on '%s' (%s %d): %s",
             job_program(j->kind), j->path, status < 0 ? "not run" : WIFEXITED(status) ? "exit status" : "signal",
             status < 0 ? 0 : WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), out);
    }
    if (j->tmp && (!ok || !j->reply))   /* what qemu-img left (or made for nobody) */
        unlinkat(j->pool->dir, j->tmp, 0);
    job_end(j, &err);
    rv_err_clear(&err);
}

/* The files a job's qemu-img gets: the volume's open file as fd 3 and a
 * clone's original as fd 4, named by these paths (the kernel's link to
 * the open file, not a name in a directory someone else may write). */
#define JOB_FILE "/proc/self/fd/3"
#define JOB_SRC_FILE "/proc/self/fd/4"

/* Run argv (qemu-img ...) for a volume of pool and answer the call when it
 * exits; file (and src, or -1) are passed as JOB_FILE and JOB_SRC_FILE.
 * Takes nothing; the caller answers with RV_DEFERRED on 0. */
/* A job of pool's (a new volume's when tmp: made under that name). */
static vol_job *job_new(job_kind kind, qpool *pool, qpool *src_pool, const char *path,
                        const char *name, const char *tmp, rv_err *err)
{
    if (st.njobs >= MAX_JOBS) {
        fail(err, RV_ERR_OPERATION_FAILED,
             "operation failed: %d volume jobs are running already; try again later", MAX_JOBS);
        return NULL;
    }
    vol_job *j = calloc(1, sizeof(*j));
    if (!j) {
        oom(err);
        return NULL;
    }
    j->kind = kind;
    j->out_fd = memfd_create("qemu-img-output", MFD_CLOEXEC);
    j->path = strdup(path);
    j->name = strdup(name);
    j->tmp = tmp ? strdup(tmp) : NULL;
    j->pool = pool;
    j->src_pool = src_pool;
    pool->jobs++;
    if (src_pool)
        src_pool->jobs++;
    j->next = st.jobs;
    st.jobs = j;
    st.njobs++;
    if (j->out_fd < 0 || !j->path || !j->name || (tmp && !j->tmp)) {
        bool no_fd = j->out_fd < 0;
        job_free(j);
        no_fd ? sys_fail(err, "create a buffer for", "qemu-img") : oom(err);
        return NULL;
    }
    return j;
}

static int job_run(job_kind kind, qpool *pool, qpool *src_pool, const char *path,
                   const char *name, const char *tmp, char *const argv[], int file, int src,
                   rv_err *err)
{
    vol_job *j = job_new(kind, pool, src_pool, path, name, tmp, err);
    if (!j)
        return -1;
    /* Through the spawner helper: the loop does not fork. */
    char *args[16];
    size_t n = 0;
    for (; argv[n] && n < 15; n++)
        args[n] = argv[n];
    args[n] = NULL;
    if (!(args[0] = rv_qemu_find_program(argv[0]))) {
        job_free(j);
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: %s (Debian: %s) is not installed", argv[0],
                    kind == JOB_WIPE ? "scrub" : "qemu-utils");
    }
    int rc = rv_qemu_run(args, j->out_fd, file, src, job_exited, j, err);
    free(args[0]);
    if (rc < 0) {
        job_free(j);
        return -1;
    }
    if (!(j->reply = rv_driver_defer(err))) {
        /* It runs on; its end removes what it made (job_exited). */
        return -1;
    }
    RV_INFO("volume '%s': %s %s", path, argv[0], argv[1]);
    return 0;
}

/* A value for qemu-img's -o: its commas doubled. */
static char *opt_value(const char *s)
{
    char *out = malloc(strlen(s) * 2 + 1), *o = out;
    if (!out)
        return NULL;
    for (; *s; s++) {
        *o++ = *s;
        if (*s == ',')
            *o++ = ',';
    }
    *o = '\0';
    return out;
}

/* `qemu-img create` for a volume of format other than raw. */
static int create_with_qemu_img(qpool *p, const rv_vol_def *v, unsigned int flags, int fd,
                                const char *tmp, rv_err *err)
{
    char *opts = NULL, *bpath = NULL, *size = NULL;
    size_t olen = 0;
    FILE *fp = open_memstream(&opts, &olen);
    if (!fp)
        return oom(err);
    if (v->compat)
        fprintf(fp, "compat=%s,", v->compat);
    if (v->lazy_refcounts)
        fputs("lazy_refcounts=on,", fp);
    if (flags & 0x1)
        fputs("preallocation=metadata,", fp);
    if (v->backing_path && (bpath = opt_value(v->backing_path)))
        fprintf(fp, "backing_file=%s,backing_fmt=%s,", bpath,
                v->backing_format ? v->backing_format : "raw");
    fclose(fp);
    if (opts && olen)
        opts[olen - 1] = '\0';          /* the last comma */
    int rc;
    if (!opts || (v->backing_path && !bpath) || asprintf(&size, "%llu", v->capacity) < 0) {
        size = NULL;
        rc = oom(err);
    } else {
        char *argv[] = { "qemu-img", "create", "-q", "-f", v->format, "-o", opts, JOB_FILE,
                         size, NULL };
        if (!*opts)
            memmove(&argv[5], &argv[7], 3 * sizeof(argv[0]));
        rc = job_run(JOB_CREATE, p, NULL, v->path, v->name, tmp, argv, fd, -1, err);
    }
    free(opts);
    free(bpath);
    free(size);
    return rc;
}

/* A raw file: made at once (fallocate reserves without writing). */
static int create_raw(const rv_vol_def *v, int fd, rv_err *err)
{
    if (ftruncate(fd, (off_t)v->capacity) < 0)
        return sys_fail(err, "set the size of", v->path);
    unsigned long long alloc = v->allocation < v->capacity ? v->allocation : v->capacity;
    if (alloc && fallocate(fd, 0, 0, (off_t)alloc) < 0 && errno != EOPNOTSUPP)
        return sys_fail(err, "allocate space for", v->path);
    return 0;
}

/* Parse a new volume for p and make its file, empty, under a hidden name
 * (*tmp, malloc'd); the name itself must be free, in the directory and
 * among the volumes being made.  *fd the open file. */
static rv_vol_def *new_vol(qpool *p, const char *xml, int *fd, char **tmp, rv_err *err)
{
    rv_vol_def *v;
    struct stat sb;
    *tmp = NULL;
    if (rv_vol_def_parse(xml, RV_POOL_TYPE_DIR, &v, err) < 0)
        return NULL;
    if (strchr(v->name, '/') || strcmp(v->name, ".") == 0 || strcmp(v->name, "..") == 0)
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: volume name '%s' cannot contain '/'",
             v->name);
    else if (vol_find(p, v->name, NULL))
        fail(err, RV_ERR_STORAGE_VOL_EXIST, "storage volume '%s' exists already", v->name);
    else if (v->type != RV_STORAGE_VOL_FILE)
        fail(err, RV_ERR_OPERATION_UNSUPPORTED,
             "Operation not supported: a directory pool holds file volumes only");
    else if (asprintf(&v->path, "%s/%s", p->def->target_path, v->name) < 0)
        v->path = NULL, oom(err);
    else if (!(v->key = strdup(v->path)) || asprintf(tmp, NEW_VOL_PREFIX "%s", v->name) < 0)
        *tmp = NULL, oom(err);
    else if (job_for_path(v->path) ||
             fstatat(p->dir, v->name, &sb, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
        fail(err, RV_ERR_STORAGE_VOL_EXIST, "storage volume '%s' exists already", v->name);
    else if ((*fd = openat(p->dir, *tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                           (mode_t)(v->perms.mode >= 0 ? v->perms.mode : 0600))) < 0) {
        if (errno == EEXIST)
            fail(err, RV_ERR_STORAGE_VOL_EXIST, "storage volume '%s' exists already", v->name);
        else
            sys_fail(err, "create", v->path);
    } else
        return v;
    free(*tmp);
    *tmp = NULL;
    rv_vol_def_free(v);
    return NULL;
}

int rv_qemu_storage_vol_create_xml(rv_driver_conn *c, const rv_storage_vol_create_xml_args *args,
                                   rv_storage_vol_create_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    qpool *p;
    rv_vol_def *v;
    int fd = -1;
    char *tmp = NULL;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0x1, "storageVolCreateXML", err) < 0 ||
        !(p = get_active(&args->pool, err)) || busy(p, err) < 0 ||
        !(v = new_vol(p, args->xml, &fd, &tmp, err)))
        return -1;
    int rc;
    if (strcmp(v->format, "raw") != 0) {
        rc = create_with_qemu_img(p, v, args->flags, fd, tmp, err);
    } else {
        /* Made at once (fallocate reserves without writing); then the
         * commit, off the loop, as a job without a process. */
        vol_job *j = NULL;
        rc = create_raw(v, fd, err) < 0 ||
                     !(j = job_new(JOB_CREATE, p, NULL, v->path, v->name, tmp, err)) ||
                     !(j->reply = rv_driver_defer(err)) ? -1 : 0;
        if (rc == 0)
            job_commit(j);
        else if (j)
            job_free(j);
    }
    close(fd);
    if (rc < 0)
        unlinkat(p->dir, tmp, 0);
    free(tmp);
    rv_vol_def_free(v);
    return rc < 0 ? -1 : RV_DEFERRED;
}

/* The volume a job may change: not one being made; read afresh. */
static rv_vol_def *get_vol_idle(const rv_nonnull_storage_vol *w, qpool **pool, rv_err *err)
{
    rv_vol_def *v = get_vol(w, pool, err);
    if (v && job_for_path(v->path)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: volume '%s' is still being built", v->name);
        return NULL;
    }
    return v ? get_vol_fresh(w, pool, err) : NULL;
}

int rv_qemu_storage_resolve(rv_qemu_domain_def *def, rv_err *err)
{
    for (size_t i = 0; i < def->ndisks; i++) {
        rv_qemu_disk *d = &def->disks[i];
        if (!d->pool)
            continue;
        rv_nonnull_storage_vol w = { .pool = d->pool, .name = d->volume };
        rv_vol_def *v = get_vol_idle(&w, NULL, err);
        if (!v)
            return -1;
        char *path = strdup(v->path);
        if (!path)
            return oom(err);
        free(d->source);
        d->source = path;
    }
    return 0;
}

int rv_qemu_storage_vol_create_xml_from(rv_driver_conn *c,
                                        const rv_storage_vol_create_xml_from_args *args,
                                        rv_storage_vol_create_xml_from_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qpool *p, *src_pool;
    rv_vol_def *src, *v;
    int fd = -1;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storageVolCreateXMLFrom", err) < 0 ||
        !(p = get_active(&args->pool, err)) || busy(p, err) < 0 ||
        !(src = get_vol_idle(&args->clonevol, &src_pool, err)))
        return -1;
    int src_fd = vol_file(src_pool, src, O_RDONLY, err);
    if (src_fd < 0)
        return -1;
    char *tmp = NULL;
    if (!(v = new_vol(p, args->xml, &fd, &tmp, err))) {
        close(src_fd);
        return -1;
    }
    char *argv[] = { "qemu-img", "convert", "-q", "-f", src->format, "-O", v->format,
                     JOB_SRC_FILE, JOB_FILE, NULL };
    int rc = job_run(JOB_CLONE, p, src_pool, v->path, v->name, tmp, argv, fd, src_fd, err);
    close(fd);
    close(src_fd);
    if (rc < 0)
        unlinkat(p->dir, tmp, 0);
    free(tmp);
    rv_vol_def_free(v);
    return rc < 0 ? -1 : RV_DEFERRED;
}

int rv_qemu_storage_vol_delete(rv_driver_conn *c, const rv_storage_vol_delete_args *args,
                               rv_err *err)
{
    (void)c;
    qpool *p;
    rv_vol_def *v;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storageVolDelete", err) < 0 ||
        !(v = get_vol_idle(&args->vol, &p, err)) || busy(p, err) < 0)
        return -1;
    if (unlinkat(p->dir, v->name, 0) < 0 && errno != ENOENT)
        return sys_fail(err, "remove file", v->path);
    RV_INFO("volume '%s' deleted from pool '%s'", v->name, p->def->name);
    vol_drop(p, args->vol.name);
    pool_update_space(p);
    return 0;
}

/* A volume's file was changed in place through fd (closed here): its
 * figures and the pool's are read again.  rc is the change's result. */
static int vol_changed(qpool *p, const char *name, int fd, int rc, rv_err *err)
{
    close(fd);
    bool skip;
    rv_vol_def *now = vol_probe(p, name, &skip);
    if (now)
        vol_put(p, now, err);
    pool_update_space(p);
    return rc;
}

/* virStorageVolResizeFlags */
enum { RESIZE_ALLOCATE = 1, RESIZE_DELTA = 2, RESIZE_SHRINK = 4 };

int rv_qemu_storage_vol_resize(rv_driver_conn *c, const rv_storage_vol_resize_args *args,
                               rv_err *err)
{
    (void)c;
    qpool *p;
    rv_vol_def *v;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0x7, "storageVolResize", err) < 0 ||
        !(v = get_vol_idle(&args->vol, &p, err)))
        return -1;
    unsigned long long cap = args->capacity;
    if (args->flags & RESIZE_DELTA)
        cap = args->flags & RESIZE_SHRINK ? (cap > v->capacity ? 0 : v->capacity - cap)
                                          : v->capacity + cap;
    if (cap < v->allocation)    /* libvirt's first check, shrink flag or not */
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: can't shrink capacity below existing allocation");
    if (cap < v->capacity && !(args->flags & RESIZE_SHRINK))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Can't shrink capacity below "
                    "current capacity unless shrink flag explicitly specified");
    if (cap > v->capacity && (args->flags & RESIZE_ALLOCATE) &&
        cap - v->capacity > p->def->available)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: Not enough space left in storage pool");
    if (strcmp(v->format, "raw") != 0) {
        char size[32];
        snprintf(size, sizeof(size), "%llu", cap);
        char *argv[] = { "qemu-img", "resize", "-q", "-f", v->format, JOB_FILE, size, NULL,
                         NULL };
        if (cap < v->capacity) {        /* qemu-img wants --shrink before the file */
            memmove(&argv[6], &argv[5], 2 * sizeof(argv[0]));
            argv[5] = "--shrink";
        }
        int fd = vol_file(p, v, O_RDONLY, err);
        if (fd < 0)
            return -1;
        int rc = job_run(JOB_RESIZE, p, NULL, v->path, v->name, NULL, argv, fd, -1, err);
        close(fd);
        return rc < 0 ? -1 : RV_DEFERRED;
    }
    int fd = vol_file(p, v, O_WRONLY, err);
    if (fd < 0)
        return -1;
    int rc = 0;
    if (ftruncate(fd, (off_t)cap) < 0)
        rc = sys_fail(err, "resize", v->path);
    else if ((args->flags & RESIZE_ALLOCATE) && cap > v->capacity &&
             fallocate(fd, 0, (off_t)v->capacity, (off_t)(cap - v->capacity)) < 0 &&
             errno != EOPNOTSUPP)
        rc = sys_fail(err, "allocate space for", v->path);
    return vol_changed(p, args->vol.name, fd, rc, err);
}

/* libvirt's wiping algorithms: zero, the patterns scrub writes (by its
 * names), and trim, which no local file pool does. */
enum { WIPE_ZERO = 0, WIPE_TRIM = 9, WIPE_ALGORITHMS = 10 };
static const char *const scrub_patterns[WIPE_TRIM] = {
    [1] = "nnsa", "dod", "bsi", "gutmann", "schneier", "pfitzner7", "pfitzner33", "random",
};

/* STORAGE_VOL_WIPE(_PATTERN): zero by cutting the file to nothing and
 * back (its blocks freed, it reads as zeros), a pattern by scrub, run off
 * the loop as a volume job (answered when it exits). */
static int vol_wipe(const rv_nonnull_storage_vol *wire, unsigned int algorithm, rv_err *err)
{
    qpool *p;
    rv_vol_def *v;
    if (!(v = get_vol_idle(wire, &p, err)))
        return -1;
    if (strcmp(v->format, "raw") != 0)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: wiping a volume of format '%s' (only raw)",
                    v->format);
    if (algorithm == WIPE_TRIM)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: 'trim' algorithm not supported");
    if (algorithm != WIPE_ZERO) {
        char *scrub = rv_qemu_find_program("scrub");
        if (!scrub)     /* libvirtd's words (Debian's package scrub) */
            return rv_err_fail(err, RV_FROM_NONE, RV_ERR_SYSTEM_ERROR,
                               "Cannot find 'scrub' in path: No such file or directory");
        free(scrub);
        char *argv[] = { "scrub", "-f", "-p", (char *)scrub_patterns[algorithm], JOB_FILE, NULL };
        int fd = vol_file(p, v, O_WRONLY, err);
        if (fd < 0)
            return -1;
        int rc = job_run(JOB_WIPE, p, NULL, v->path, v->name, NULL, argv, fd, -1, err);
        close(fd);
        return rc < 0 ? -1 : RV_DEFERRED;
    }
    int fd = vol_file(p, v, O_WRONLY, err);
    if (fd < 0)
        return -1;
    int rc = 0;
    if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)v->capacity) < 0)
        rc = sys_fail(err, "wipe", v->path);
    return vol_changed(p, wire->name, fd, rc, err);
}

int rv_qemu_storage_vol_wipe(rv_driver_conn *c, const rv_storage_vol_wipe_args *args, rv_err *err)
{
    (void)c;
    /* (libvirtd names the function it hands the call to.) */
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storageVolWipePattern", err) < 0)
        return -1;
    return vol_wipe(&args->vol, WIPE_ZERO, err);
}

int rv_qemu_storage_vol_wipe_pattern(rv_driver_conn *c,
                                     const rv_storage_vol_wipe_pattern_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, 0, "storageVolWipePattern", err) < 0)
        return -1;
    if (args->algorithm >= WIPE_ALGORITHMS)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: wiping algorithm %d not supported",
                    (int)args->algorithm);
    return vol_wipe(&args->vol, args->algorithm, err);
}

/* ================================================================ start-up and exit */

void rv_qemu_storage_init(void)
{
    if (rv_qemu_family_load(&fam) < 0)
        return;
    for (size_t i = 0; i < st.pools.n;) {
        qpool *p = rv_obj_at(&st.pools, i);
        size_t before = st.pools.n;
        p->autostart = p->persistent && rv_qemu_family_autostart(&fam, p->def->name);
        /* A pool that ran before (its run file) is active again once its
         * directory is read; meanwhile it is starting up. */
        rv_err err = { 0 };
        bool ran = p->active;
        p->active = false;
        if (ran && scan_begin(p, true, false, &err) < 0) {
            RV_WARN("storage pool '%s' cannot be read, so it is stopped: %s", p->def->name,
                    err.message);
            rv_qemu_remove_file(fam.run_dir, p->def->name, ".xml");
            if (!p->persistent)
                pool_remove(p);
        } else if (!ran && p->autostart && scan_begin(p, true, true, &err) < 0) {
            RV_WARN("storage pool '%s' does not autostart: %s", p->def->name, err.message);
        }
        rv_err_clear(&err);
        i += st.pools.n == before;      /* unless p was removed */
    }
    RV_INFO("QEMU driver: %zu storage pools in %s", st.pools.n, fam.config_dir);
}

void rv_qemu_storage_cleanup(void)
{
    rv_qemu_fileq_release(&pool_queue);
    rv_err err = { 0 };
    fail(&err, RV_ERR_OPERATION_FAILED, "operation failed: remvirtd is stopping");
    while (st.jobs) {
        vol_job *j = st.jobs;
        /* (The spawner's cleanup came first: no exit is reported now.) */
        rv_qemu_sync_forget(&j->sync);
        if (j->reply)
            rv_deferred_finish(j->reply, &err);
        job_free(j);
    }
    st.stopping = true;
    for (size_t i = 0; i < st.pools.n;) {
        qpool *p = rv_obj_at(&st.pools, i);
        if (p->scan) {
            scan_stop(p->scan, &err);   /* may remove p */
            i = 0;
        } else {
            i++;
        }
    }
    rv_err_clear(&err);
    rv_obj_clear(&st.pools, pool_free_obj);
    rv_qemu_family_free(&fam);
    memset(&st, 0, sizeof(st));
    st.pools = (rv_obj_list){ .max = MAX_POOLS, .kind = &pool_kind };
}

/* GET_PHYSICAL (1): the allocation is the file's size on the host
 * (<physical>), as libvirtd gives it for a file volume. */
int rv_qemu_storage_vol_get_info_flags(rv_driver_conn *c,
                                       const rv_storage_vol_get_info_flags_args *args,
                                       rv_storage_vol_get_info_flags_ret *ret, rv_err *err)
{
    (void)c;
    const unsigned int physical = 1;
    if (rv_qemu_check_flags(RV_FROM_STORAGE, args->flags, physical, "storageVolGetInfoFlags",
                            err) < 0)
        return -1;
    rv_vol_def *v = get_vol_fresh(&args->vol, NULL, err);
    if (!v)
        return -1;
    rv_storage_vol_get_info_ret info;
    rv_vol_put_info(v, &info);
    ret->type = info.type;
    ret->capacity = info.capacity;
    ret->allocation = info.allocation;
    if ((args->flags & physical) && v->has_file_info)
        ret->allocation = v->physical;
    return 0;
}

/* An active pool whose target is path. */
int rv_qemu_storage_pool_lookup_by_target_path(rv_driver_conn *c,
                                               const rv_storage_pool_lookup_by_target_path_args *args,
                                               rv_storage_pool_lookup_by_target_path_ret *ret,
                                               rv_err *err)
{
    (void)c;
    char *clean = strdup(args->path);
    if (!clean)
        return rv_err_fail(err, RV_FROM_STORAGE, RV_ERR_NO_MEMORY, "out of memory");
    /* As libvirt: doubled slashes and one at the end dropped; a leading
     * "//" (another root to POSIX, unlike "///") kept. */
    const char *in = args->path;
    char *out = clean;
    if (in[0] == '/' && in[1] == '/' && in[2] != '/')
        *out++ = *in++;
    char *start = out;
    for (; *in; in++)
        if (!(*in == '/' && out > start && out[-1] == '/'))
            *out++ = *in;
    if (out - clean > 1 && out > start + 1 && out[-1] == '/')
        out--;
    *out = '\0';
    for (size_t i = 0; i < st.pools.n; i++) {
        qpool *p = rv_obj_at(&st.pools, i);
        if (p->active && p->def->target_path && strcmp(p->def->target_path, clean) == 0) {
            free(clean);
            return pool_to_wire(p, &ret->pool, err);
        }
    }
    rv_err_set(err, RV_FROM_STORAGE, RV_ERR_NO_STORAGE_POOL,
               "Storage pool not found: no storage pool with matching target path '%s'",
               args->path);
    free(clean);
    return -1;
}

/* CONNECT_FIND_STORAGE_POOL_SOURCES.  The driver's pools are directories,
 * which have no sources to discover; libvirtd's discovering types (netfs,
 * iscsi, gluster: a host's exports; logical: the host's volume groups)
 * are refused after the argument check libvirtd makes first. */
int rv_qemu_connect_find_storage_pool_sources(rv_driver_conn *c,
                                              const rv_connect_find_storage_pool_sources_args *args,
                                              rv_connect_find_storage_pool_sources_ret *ret,
                                              rv_err *err)
{
    static const char *const by_host[] = { "netfs", "iscsi", "gluster", NULL };
    (void)c, (void)ret;
    if (!rv_pool_type_known(args->type))
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: unknown storage pool type %s",
                    args->type);
    bool host_needed = false;
    for (size_t i = 0; by_host[i]; i++)
        host_needed |= strcmp(args->type, by_host[i]) == 0;
    if (host_needed || strcmp(args->type, "logical") == 0) {
        char *host = NULL;
        if (args->srcSpec && rv_pool_source_spec_host(*args->srcSpec, &host, err) < 0)
            return -1;
        bool named = host != NULL;
        free(host);
        if (host_needed && !named)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: hostname must be specified for %s sources",
                        args->type);
        return fail(err, RV_ERR_NO_SUPPORT, "this function is not supported by the connection driver: "
                    "remvirtd does not discover %s pool sources", args->type);
    }
    return fail(err, RV_ERR_NO_SUPPORT, "this function is not supported by the connection driver: "
                "pool type '%s' does not support source discovery", args->type);
}
