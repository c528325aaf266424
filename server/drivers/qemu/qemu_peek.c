/* DOMAIN_BLOCK_PEEK and DOMAIN_MEMORY_PEEK on the QEMU driver: bytes of a
 * raw disk image, read from its file (a bounded read of a regular file,
 * as the streams do), and bytes of the guest's memory, which QEMU writes
 * to a file in the run directory (memsave, pmemsave) that is then read
 * and removed.  The reads and the removal run on a work thread
 * (server/drivers/work_pool.h), never on the loop. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/safe_open.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/work_pool.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

enum { MEMORY_VIRTUAL = 1, MEMORY_PHYSICAL = 2 };

/* Up to size bytes of path from offset into buf; the count, or -1 with
 * errno.  A FIFO or character device put at the path is refused (EINVAL),
 * never waited on. */
static ssize_t read_at(const char *path, unsigned long long offset, char *buf, size_t size)
{
    int fd = rv_open_file_at(AT_FDCWD, path, O_RDONLY, 0, true, NULL);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0) {
                int e = errno;
                close(fd);
                errno = e;
                return -1;
            }
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    return (ssize_t)got;
}

/* A peek's read (and, for a memory peek, the removal of QEMU's file) on a
 * work thread: a read that misses the page cache waits on the disk, and
 * the loop must not (issue 31). */
typedef struct read_job {
    rv_work work;
    rv_deferred *reply;
    char *path;
    char *disk;                 /* a block peek's disk, for its errors */
    unsigned long long offset;
    size_t size;
    bool remove;                /* QEMU's memsave file: unlink it after */
    char *buf;
    ssize_t got;                /* read_at's */
    int error;                  /* its errno */
} read_job;

static void read_job_run(rv_work *w)
{
    read_job *job = (read_job *)w;
    if (job->reply) {
        job->buf = malloc(job->size ? job->size : 1);
        job->got = job->buf ? read_at(job->path, job->offset, job->buf, job->size) : -1;
        job->error = job->buf ? errno : ENOMEM;
    }
    if (job->remove)
        unlink(job->path);
}

static void read_job_free(read_job *job)
{
    free(job->buf);
    free(job->path);
    free(job->disk);
    free(job);
}

/* A job for reply reading size bytes of path (taken) from offset; without
 * a reply, nothing is read. */
static read_job *read_job_new(rv_deferred *reply, char *path, unsigned long long offset,
                              size_t size, void (*done)(rv_work *))
{
    read_job *job = path ? calloc(1, sizeof(*job)) : NULL;
    if (!job) {
        free(path);
        return NULL;
    }
    job->work.run = read_job_run;
    job->work.done = done;
    job->reply = reply;
    job->path = path;
    job->offset = offset;
    job->size = size;
    return job;
}

static void block_peek_done(rv_work *w)
{
    read_job *job = (read_job *)w;
    rv_domain_block_peek_ret *out = rv_deferred_ret(job->reply);
    if (job->got < 0) {
        rv_qemu_finish_error(job->reply, RV_ERR_SYSTEM_ERROR, "cannot read %s: %s", job->path,
                             strerror(job->error));
    } else if ((size_t)job->got < job->size) {
        rv_qemu_finish_error(job->reply, RV_ERR_INVALID_ARG,
                             "invalid argument: '%s' starting from %llu has only %zd bytes "
                             "available", job->disk, job->offset, job->got);
    } else {
        out->buffer.buffer_val = job->buf;
        out->buffer.buffer_len = (unsigned)job->size;
        job->buf = NULL;
        rv_deferred_finish(job->reply, NULL);
    }
    read_job_free(job);
}

int rv_qemu_domain_block_peek(rv_driver_conn *c, const rv_domain_block_peek_args *args,
                              rv_domain_block_peek_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainBlockPeek", err) < 0)
        return -1;
    if (args->size > RV_DOMAIN_BLOCK_PEEK_BUFFER_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "size > maximum buffer size");
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    const rv_qemu_disk *disk = rv_qemu_disk_by_name(rv_qemu_dom_def(d), args->path);
    if (!disk || !disk->source)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk '%s' not found in domain",
                    args->path);
    if (disk->format != RV_QEMU_FORMAT_RAW)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: peeking is only supported for disk with 'raw' "
                    "format not 'qcow2'");
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    read_job *job = read_job_new(reply, strdup(disk->source), args->offset, args->size,
                                 block_peek_done);
    if (!job || !(job->disk = strdup(args->path))) {
        if (job)
            read_job_free(job);
        rv_qemu_finish_error(reply, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    rv_work_submit(&job->work);
    return RV_DEFERRED;
}

static void memory_peek_done(rv_work *w)
{
    read_job *job = (read_job *)w;
    rv_domain_memory_peek_ret *out = rv_deferred_ret(job->reply);
    if (job->got == (ssize_t)job->size) {
        out->buffer.buffer_val = job->buf;
        out->buffer.buffer_len = (unsigned)job->size;
        job->buf = NULL;
        rv_deferred_finish(job->reply, NULL);
    } else {
        rv_qemu_finish_error(job->reply, RV_ERR_SYSTEM_ERROR,
                             "failed to read temporary file %s", job->path);
    }
    read_job_free(job);
}

static void removed_done(rv_work *w)
{
    read_job_free((read_job *)w);
}

typedef struct peek_req {
    rv_qemu_live_req live;
    char *path;
} peek_req;

static void on_saved(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    peek_req *req = opaque;
    /* Read QEMU's file and remove it, or (the guest went or QEMU failed)
     * only remove whatever it left. */
    rv_deferred *reply = rv_qemu_live_req_alive(&req->live, qmp, err) ? req->live.reply : NULL;
    size_t size = reply ? ((const rv_domain_memory_peek_args *)rv_deferred_args(reply))->size : 0;
    read_job *job = read_job_new(reply, req->path, 0, size,
                                 reply ? memory_peek_done : removed_done);
    if (job) {
        job->remove = true;
        rv_work_submit(&job->work);
    } else if (reply) {
        rv_qemu_finish_error(reply, RV_ERR_NO_MEMORY, "out of memory");
    }
    free(req->live.name);
    free(req);
}

int rv_qemu_domain_memory_peek(rv_driver_conn *c, const rv_domain_memory_peek_args *args,
                               rv_domain_memory_peek_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, MEMORY_VIRTUAL | MEMORY_PHYSICAL,
                            "qemuDomainMemoryPeek", err) < 0)
        return -1;
    if (args->size > RV_DOMAIN_MEMORY_PEEK_BUFFER_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "size > maximum buffer size");
    if (args->flags != MEMORY_VIRTUAL && args->flags != MEMORY_PHYSICAL)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: flags parameter must be "
                    "VIR_MEMORY_VIRTUAL or VIR_MEMORY_PHYSICAL");
    if (!(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    if ((rc = rv_qemu_need_monitor(d, err)) != 0)
        return rc;
    unsigned int rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
        rnd = (unsigned int)random();
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".memsave-%08x", rnd);
    json_object *a = json_object_new_object();
    peek_req *req = a ? rv_qemu_live_req_new(sizeof(*req), d, err) : NULL;
    if (!req || !(req->path = rv_qemu_path(rv_qemu.run_dir, d->live->name, suffix))) {
        json_object_put(a);
        if (req) {
            rv_qemu_finish_error(req->live.reply, RV_ERR_NO_MEMORY, "out of memory");
            free(req->live.name);
            free(req);
            return RV_DEFERRED;
        }
        return a ? -1 : fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    json_object_object_add(a, "val", json_object_new_int64((int64_t)args->offset));
    json_object_object_add(a, "size", json_object_new_int64(args->size));
    json_object_object_add(a, "filename", json_object_new_string(req->path));
    if (!rv_qemu_send_for(d, req->live.reply, args->flags == MEMORY_VIRTUAL ? "memsave" : "pmemsave",
                          a, on_saved, req)) {
        free(req->path);
        free(req->live.name);
        free(req);
    }
    return RV_DEFERRED;
}
