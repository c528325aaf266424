#include "transport/socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static ssize_t socket_read(rv_transport *t, void *buf, size_t len)
{
    return read(t->fd, buf, len);
}

static ssize_t socket_write(rv_transport *t, const void *buf, size_t len)
{
    /* MSG_NOSIGNAL: a peer that went away is an EPIPE, not a signal. */
    return send(t->fd, buf, len, MSG_NOSIGNAL);
}

static void socket_close(rv_transport *t)
{
    close(t->fd);
    free(t);
}

static const rv_transport_ops socket_ops = {
    .name = "socket",
    .read = socket_read,
    .write = socket_write,
    .close = socket_close,
};

int rv_socket_set_nonblock(int fd, rv_err *err)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot make fd %d non-blocking", fd);
        return -1;
    }
    return 0;
}

rv_transport *rv_socket_transport_new(int fd, int nonblock, rv_err *err)
{
    if (nonblock && rv_socket_set_nonblock(fd, err) < 0)
        return NULL;
    rv_transport *t = malloc(sizeof(*t));
    if (!t) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    t->ops = &socket_ops;
    t->fd = fd;
    return t;
}
