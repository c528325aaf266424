/* The test driver's volume upload and download.  libvirt's test driver
 * refuses both (NO_SUPPORT); remvirt's keeps what is uploaded in memory
 * so that the streams can be tried end to end without a real pool: a
 * volume's content is its bytes written so far, zeros after them up to
 * its capacity.  What a peer can make it hold is bounded: nothing past a
 * volume's capacity, at most TEST_VOL_CONTENT_MAX per volume and
 * TEST_CONTENT_TOTAL_MAX in all.  A transfer holds a reference to the
 * content, so a volume deleted under it is harmless.  A sparse upload's
 * holes skip; a sparse download gets libvirtd's test driver's answer. */
#include <stdlib.h>
#include <string.h>

#include "rv_remote.h"
#include "server/drivers/stream_io.h"
#include "server/drivers/conf/storage_xml.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_storage.h"

#define TEST_VOL_CONTENT_MAX (64ULL << 20)
#define TEST_CONTENT_TOTAL_MAX (256ULL << 20)

struct rv_vol_content {
    int refs;
    char *bytes;
    size_t len;                 /* bytes written (the rest reads as zeros) */
    size_t cap;
};

static size_t content_total;    /* bytes allocated for all volumes */

void rv_vol_content_unref(struct rv_vol_content *content)
{
    if (!content || --content->refs > 0)
        return;
    content_total -= content->cap;
    free(content->bytes);
    free(content);
}

/* One transfer: [pos, end) of the volume. */
typedef struct vol_io {
    rv_stream_io base;
    struct rv_vol_content *content;
    unsigned long long pos, end;
} vol_io;

static int no_space(rv_err *err)
{
    rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR,
               "cannot write to stream: No space left on device");
    return -1;
}

/* Room for bytes up to `upto` in c, within the bounds. */
static int grow(struct rv_vol_content *c, unsigned long long upto, rv_err *err)
{
    if (upto <= c->cap)
        return 0;
    if (upto > TEST_VOL_CONTENT_MAX) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_FAILED,
                   "operation failed: the test driver keeps at most %llu MiB of a volume's data",
                   TEST_VOL_CONTENT_MAX >> 20);
        return -1;
    }
    size_t cap = c->cap ? c->cap : 65536;
    while (cap < upto)
        cap *= 2;
    if (cap > TEST_VOL_CONTENT_MAX)
        cap = TEST_VOL_CONTENT_MAX;
    if (content_total - c->cap + cap > TEST_CONTENT_TOTAL_MAX) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_FAILED,
                   "operation failed: the test driver keeps at most %llu MiB of volume data",
                   TEST_CONTENT_TOTAL_MAX >> 20);
        return -1;
    }
    char *bytes = realloc(c->bytes, cap);
    if (!bytes) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    content_total = content_total - c->cap + cap;
    c->bytes = bytes;
    c->cap = cap;
    return 0;
}

/* Put n bytes at the transfer's position. */
static int put(vol_io *io, const char *data, size_t n, rv_err *err)
{
    if (n > io->end - io->pos)
        return no_space(err);
    struct rv_vol_content *c = io->content;
    unsigned long long to = io->pos + n;
    if (grow(c, to, err) < 0)
        return -1;
    if (io->pos > c->len)
        memset(c->bytes + c->len, 0, io->pos - c->len);
    memcpy(c->bytes + io->pos, data, n);
    if (to > c->len)
        c->len = to;
    io->pos = to;
    return 0;
}

static ssize_t vol_write(rv_stream_io *base, const char *data, size_t len, rv_err *err)
{
    return put((vol_io *)base, data, len, err) < 0 ? -1 : (ssize_t)len;
}

/* As libvirtd's file volumes: a hole skips ahead and leaves what the
 * volume held there (zeros where nothing was written). */
static int vol_hole(rv_stream_io *base, long long len, rv_err *err)
{
    vol_io *io = (vol_io *)base;
    if ((unsigned long long)len > io->end - io->pos)
        return no_space(err);
    io->pos += (unsigned long long)len;
    return 0;
}

static ssize_t vol_read(rv_stream_io *base, char *buf, size_t len, rv_err *err)
{
    (void)err;
    vol_io *io = (vol_io *)base;
    if (len > io->end - io->pos)
        len = (size_t)(io->end - io->pos);
    struct rv_vol_content *c = io->content;
    size_t from_data = io->pos < c->len ? (size_t)(c->len - io->pos) : 0;
    if (from_data > len)
        from_data = len;
    if (from_data)
        memcpy(buf, c->bytes + io->pos, from_data);
    memset(buf + from_data, 0, len - from_data);
    io->pos += len;
    return (ssize_t)len;
}

static void vol_free(rv_stream_io *base)
{
    vol_io *io = (vol_io *)base;
    rv_vol_content_unref(io->content);
    free(io);
}

static const rv_stream_io_ops upload_ops = {
    .write = vol_write,
    .hole = vol_hole,
    .free = vol_free,
};

static const rv_stream_io_ops download_ops = {
    .read = vol_read,
    .free = vol_free,
};

/* A transfer of [offset, offset+length) (length 0: to the capacity). */
static int open_transfer(const rv_nonnull_storage_vol *w, unsigned long long offset,
                         unsigned long long length, unsigned int flags, const char *func,
                         const rv_stream_io_ops *ops, rv_err *err)
{
    if (flags & ~(unsigned)RV_STORAGE_VOL_STREAM_SPARSE) {
        rv_err_set(err, RV_FROM_STORAGE, RV_ERR_INVALID_ARG,
                   "unsupported flags (0x%x) in function %s",
                   flags & ~(unsigned)RV_STORAGE_VOL_STREAM_SPARSE, func);
        return -1;
    }
    rv_vol_def *v = test_storage_find_vol(w, err);
    if (!v)
        return -1;
    if (offset > v->capacity || (length && length > v->capacity - offset)) {
        rv_err_set(err, RV_FROM_STORAGE, RV_ERR_INVALID_ARG,
                   "invalid argument: offset %llu and length %llu go past the volume's "
                   "capacity of %llu bytes", offset, length, v->capacity);
        return -1;
    }
    if (!v->content) {
        if (!(v->content = calloc(1, sizeof(*v->content)))) {
            rv_err_set(err, RV_FROM_STORAGE, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        v->content->refs = 1;
    }
    vol_io *io = calloc(1, sizeof(*io));
    if (!io) {
        rv_err_set(err, RV_FROM_STORAGE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    io->base.ops = ops;
    io->base.sparse = (flags & RV_STORAGE_VOL_STREAM_SPARSE) != 0;
    io->content = v->content;
    io->content->refs++;
    io->pos = offset;
    io->end = length ? offset + length : v->capacity;
    return rv_driver_stream_open(&io->base, err);
}

int test_storage_vol_upload(rv_driver_conn *c, const rv_storage_vol_upload_args *args,
                            rv_err *err)
{
    (void)c;
    return open_transfer(&args->vol, args->offset, args->length, args->flags,
                         "testStorageVolUpload", &upload_ops, err);
}

int test_storage_vol_download(rv_driver_conn *c, const rv_storage_vol_download_args *args,
                              rv_err *err)
{
    (void)c;
    /* libvirt's test driver has no downloads at all; remvirt's sends its
     * in-memory bytes, but not sparse: that gets libvirtd's answer. */
    if (args->flags & RV_STORAGE_VOL_STREAM_SPARSE) {
        rv_err_set(err, RV_FROM_STORAGE, RV_ERR_NO_SUPPORT,
                   "this function is not supported by the connection driver: "
                   "virStorageVolDownload");
        return -1;
    }
    return open_transfer(&args->vol, args->offset, args->length, args->flags,
                         "testStorageVolDownload", &download_ops, err);
}
