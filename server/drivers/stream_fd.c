#include "server/drivers/stream_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>

typedef struct fd_io {
    rv_stream_io base;
    struct ev_loop *loop;
    int fd;
    int hung_up;
    unsigned long long left;    /* bytes that may still pass; with limited */
    int limited;
    /* Sparse files: */
    unsigned long long pos;     /* the read position (at the last skip_hole) */
    unsigned long long data_end;/* where the data at pos ends (a download) */
    unsigned long long hole_end_max;    /* an upload's holes end before it */
    ev_io readable, writable;
    ev_idle hangup;             /* wakes the stream after rv_stream_fd_hangup */
    void (*on_free)(void *opaque);
    void *opaque;
} fd_io;

static void on_ready(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    ev_io_stop(loop, w);
    rv_stream_io_wake(w->data);
}

static void on_hangup(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)revents;
    ev_idle_stop(loop, w);
    rv_stream_io_wake(w->data);
}

static long long seek_failed(rv_err *err);

/* Whether len more bytes of data (with hole: a hole of len) fit in an
 * upload at b: the length left, and a hole's end within the volume. */
static int upload_check(const rv_upload_bounds *b, bool hole, unsigned long long len, rv_err *err)
{
    if (b->limited && len > b->left) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR,
                   "cannot write to stream: No space left on device");
        return -1;
    }
    if (hole && (b->pos > b->hole_end_max || len > b->hole_end_max - b->pos)) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_INVALID_ARG,
                   "invalid argument: a stream hole of %llu bytes at offset %llu goes past "
                   "the end of the volume (%llu bytes)", len, b->pos, b->hole_end_max);
        return -1;
    }
    return 0;
}

int rv_upload_bounds_take(rv_upload_bounds *b, bool hole, unsigned long long len, rv_err *err)
{
    if (upload_check(b, hole, len, err) < 0)
        return -1;
    b->pos += len;
    b->left -= b->limited ? len : 0;
    return 0;
}

int rv_stream_fd_upload_bounds(rv_stream_io *base, rv_upload_bounds *b, rv_err *err)
{
    fd_io *io = (fd_io *)base;
    off_t pos = lseek(io->fd, 0, SEEK_CUR);
    if (pos < 0)
        return (int)seek_failed(err);
    *b = (rv_upload_bounds){ .pos = (unsigned long long)pos, .left = io->left,
                             .hole_end_max = io->hole_end_max, .limited = io->limited };
    return 0;
}

static ssize_t fd_read(rv_stream_io *base, char *buf, size_t len, rv_err *err)
{
    fd_io *io = (fd_io *)base;
    if (io->hung_up)
        return 0;
    if (io->limited && len > io->left)
        len = (size_t)io->left;
    if (io->base.sparse && io->data_end > io->pos && len > io->data_end - io->pos)
        len = (size_t)(io->data_end - io->pos);     /* a hole follows */
    if (len == 0)
        return 0;
    ssize_t n;
    do
        n = read(io->fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n >= 0) {
        io->left -= io->limited ? (unsigned long long)n : 0;
        io->pos += (unsigned long long)n;
        return n;
    }
    if (errno == EAGAIN) {
        ev_io_start(io->loop, &io->readable);
        return RV_STREAM_AGAIN;
    }
    if (errno == EIO)           /* a pty whose other side closed */
        return 0;
    rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR, "cannot read from stream: %s",
               strerror(errno));
    return -1;
}

static ssize_t fd_write(rv_stream_io *base, const char *data, size_t len, rv_err *err)
{
    fd_io *io = (fd_io *)base;
    if (io->hung_up) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_FAILED,
                   "the stream was closed by another session");
        return -1;
    }
    if (upload_check(&(rv_upload_bounds){ .left = io->left, .limited = io->limited }, false,
                     len, err) < 0)
        return -1;
    ssize_t n;
    do
        n = write(io->fd, data, len);
    while (n < 0 && errno == EINTR);
    if (n >= 0) {
        io->left -= io->limited ? (unsigned long long)n : 0;
        return n;
    }
    if (errno == EAGAIN) {
        ev_io_start(io->loop, &io->writable);
        return 0;
    }
    rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR, "cannot write to stream: %s",
               strerror(errno));
    return -1;
}

static long long seek_failed(rv_err *err)
{
    rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR, "unable to seek in stream: %s",
               strerror(errno));
    return -1;
}

/* A sparse download: is there a hole at the read position?  SEEK_DATA
 * finds where the next data starts (ENXIO: none up to the end), SEEK_HOLE
 * where the data at the position ends; a file system without them
 * (EINVAL) has only data. */
static long long fd_skip_hole(rv_stream_io *base, rv_err *err)
{
    fd_io *io = (fd_io *)base;
    if (io->hung_up || (io->limited && io->left == 0))
        return 0;
    off_t pos = lseek(io->fd, 0, SEEK_CUR);
    if (pos < 0)
        return seek_failed(err);
    io->pos = (unsigned long long)pos;
    if (io->pos < io->data_end)
        return 0;
    off_t data = lseek(io->fd, pos, SEEK_DATA);
    if (data < 0 && errno == EINVAL) {
        io->data_end = UINT64_MAX;
        return lseek(io->fd, pos, SEEK_SET) < 0 ? seek_failed(err) : 0;
    }
    if (data < 0 && errno == ENXIO) {
        struct stat st;
        if (fstat(io->fd, &st) < 0)
            return seek_failed(err);
        if (st.st_size <= pos)
            return lseek(io->fd, pos, SEEK_SET) < 0 ? seek_failed(err) : 0; /* the end */
        data = st.st_size;
    } else if (data < 0) {
        return seek_failed(err);
    }
    if (data == pos) {
        off_t end = lseek(io->fd, pos, SEEK_HOLE);
        if (end < 0 || lseek(io->fd, pos, SEEK_SET) < 0)
            return seek_failed(err);
        io->data_end = (unsigned long long)end;
        return 0;
    }
    unsigned long long len = (unsigned long long)(data - pos);
    if (io->limited && len > io->left)
        len = io->left;
    if (lseek(io->fd, pos + (off_t)len, SEEK_SET) < 0)
        return seek_failed(err);
    io->left -= io->limited ? len : 0;
    io->pos += len;
    return (long long)len;
}

/* A sparse upload's hole: skip it and end the file there, as libvirtd
 * does (data after it comes in later packets and extends the file). */
static int fd_hole(rv_stream_io *base, long long len, rv_err *err)
{
    fd_io *io = (fd_io *)base;
    off_t pos = lseek(io->fd, 0, SEEK_CUR);
    if (pos < 0)
        return (int)seek_failed(err);
    rv_upload_bounds b = { .pos = (unsigned long long)pos, .left = io->left,
                           .hole_end_max = io->hole_end_max, .limited = io->limited };
    if (upload_check(&b, true, (unsigned long long)len, err) < 0)
        return -1;
    off_t end = pos + (off_t)len;
    if (lseek(io->fd, end, SEEK_SET) < 0)
        return (int)seek_failed(err);
    if (ftruncate(io->fd, end) < 0) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR, "unable to truncate stream: %s",
                   strerror(errno));
        return -1;
    }
    io->left -= io->limited ? (unsigned long long)len : 0;
    return 0;
}

void rv_stream_fd_set_sparse(rv_stream_io *base, unsigned long long hole_end_max)
{
    fd_io *io = (fd_io *)base;
    io->base.sparse = 1;
    /* Every end a hole can reach must be an off_t. */
    io->hole_end_max = hole_end_max < INT64_MAX ? hole_end_max : INT64_MAX;
}

static void fd_free(rv_stream_io *base)
{
    fd_io *io = (fd_io *)base;
    /* Only what was started: a file's endpoint, never waited on, is freed
     * by its thread (stream_offload.c), which must not touch the loop. */
    if (ev_is_active(&io->readable) || ev_is_pending(&io->readable))
        ev_io_stop(io->loop, &io->readable);
    if (ev_is_active(&io->writable) || ev_is_pending(&io->writable))
        ev_io_stop(io->loop, &io->writable);
    if (ev_is_active(&io->hangup) || ev_is_pending(&io->hangup))
        ev_idle_stop(io->loop, &io->hangup);
    close(io->fd);
    if (io->on_free)
        io->on_free(io->opaque);
    free(io);
}

void rv_stream_fd_set_length(rv_stream_io *base, unsigned long long length)
{
    fd_io *io = (fd_io *)base;
    io->limited = length > 0;
    io->left = length;
}

void rv_stream_fd_on_free(rv_stream_io *base, void (*fn)(void *opaque), void *opaque)
{
    fd_io *io = (fd_io *)base;
    io->on_free = fn;
    io->opaque = opaque;
}

static const rv_stream_io_ops read_write_ops = { .read = fd_read, .write = fd_write, .free = fd_free };
/* skip_hole and hole only serve sparse endpoints (rv_stream_fd_set_sparse). */
static const rv_stream_io_ops read_only_ops = { .read = fd_read, .skip_hole = fd_skip_hole,
                                                .free = fd_free };
static const rv_stream_io_ops write_only_ops = { .write = fd_write, .hole = fd_hole,
                                                 .free = fd_free };

rv_stream_io *rv_stream_fd_new(struct ev_loop *loop, int fd, int readable, int writable,
                               rv_err *err)
{
    fd_io *io = calloc(1, sizeof(*io));
    int flags = fcntl(fd, F_GETFL);
    if (!io || flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        rv_err_set(err, RV_FROM_STREAMS, io ? RV_ERR_SYSTEM_ERROR : RV_ERR_NO_MEMORY,
                   io ? "cannot make the stream non-blocking: %s" : "out of memory",
                   strerror(errno));
        free(io);
        close(fd);
        return NULL;
    }
    io->base.ops = readable && writable ? &read_write_ops
                   : readable           ? &read_only_ops
                                        : &write_only_ops;
    io->loop = loop;
    io->fd = fd;
    ev_io_init(&io->readable, on_ready, fd, EV_READ);
    ev_io_init(&io->writable, on_ready, fd, EV_WRITE);
    ev_idle_init(&io->hangup, on_hangup);
    io->readable.data = io->writable.data = io->hangup.data = io;
    return &io->base;
}

void rv_stream_fd_hangup(rv_stream_io *base)
{
    fd_io *io = (fd_io *)base;
    io->hung_up = 1;
    ev_io_stop(io->loop, &io->readable);
    ev_io_stop(io->loop, &io->writable);
    ev_idle_start(io->loop, &io->hangup);
}
