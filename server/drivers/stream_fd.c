#include "server/drivers/stream_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

typedef struct fd_io {
    rv_stream_io base;
    struct ev_loop *loop;
    int fd;
    int hung_up;
    unsigned long long left;    /* bytes that may still pass; with limited */
    int limited;
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

static ssize_t fd_read(rv_stream_io *base, char *buf, size_t len, rv_err *err)
{
    fd_io *io = (fd_io *)base;
    if (io->hung_up)
        return 0;
    if (io->limited && len > io->left)
        len = (size_t)io->left;
    if (len == 0)
        return 0;
    ssize_t n;
    do
        n = read(io->fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n >= 0) {
        io->left -= io->limited ? (unsigned long long)n : 0;
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
    if (io->limited && len > io->left) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR,
                   "cannot write to stream: No space left on device");
        return -1;
    }
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

static void fd_free(rv_stream_io *base)
{
    fd_io *io = (fd_io *)base;
    ev_io_stop(io->loop, &io->readable);
    ev_io_stop(io->loop, &io->writable);
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
static const rv_stream_io_ops read_only_ops = { .read = fd_read, .free = fd_free };
static const rv_stream_io_ops write_only_ops = { .write = fd_write, .free = fd_free };

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
