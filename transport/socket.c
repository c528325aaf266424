#include "transport/socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
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

/* recvmsg with room for RV_TRANSPORT_FDS_MAX descriptors: the kernel
 * hands over the descriptors of at most one sendmsg per call, and closes
 * those that do not fit (MSG_CTRUNC), so a peer that sends too many is
 * told apart here and none of its descriptors stays open. */
static ssize_t unix_read_fds(rv_transport *t, void *buf, size_t len, int *fds, size_t max,
                             size_t *nfds)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int) * RV_TRANSPORT_FDS_MAX)];
    } ctl;
    if (max > RV_TRANSPORT_FDS_MAX)
        max = RV_TRANSPORT_FDS_MAX;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes,
                        .msg_controllen = max ? CMSG_SPACE(sizeof(int) * max) : 0 };
    *nfds = 0;
    ssize_t n = recvmsg(t->fd, &m, MSG_CMSG_CLOEXEC);
    if (n < 0)
        return -1;
    bool too_many = (m.msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
            if (*nfds < max)
                fds[(*nfds)++] = fd;
            else {
                close(fd);
                too_many = true;
            }
        }
    }
    if (too_many) {
        while (*nfds > 0)
            close(fds[--*nfds]);
        errno = EMSGSIZE;
        return -1;
    }
    return n;
}

static ssize_t unix_write_fd(rv_transport *t, const void *buf, size_t len, int fd)
{
    return rv_socket_send_fd(t->fd, buf, len, fd, MSG_NOSIGNAL);
}

ssize_t rv_socket_send_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes,
                        .msg_controllen = sizeof(ctl.bytes) };
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(int));
    return sendmsg(sock, &m, flags);
}

static const rv_transport_ops unix_ops = {
    .name = "unix",
    .read = socket_read,
    .write = socket_write,
    .read_fds = unix_read_fds,
    .write_fd = unix_write_fd,
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

static rv_transport *transport_new(const rv_transport_ops *ops, int fd, int nonblock,
                                   rv_err *err)
{
    if (nonblock && rv_socket_set_nonblock(fd, err) < 0)
        return NULL;
    rv_transport *t = malloc(sizeof(*t));
    if (!t) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    t->ops = ops;
    t->fd = fd;
    return t;
}

rv_transport *rv_socket_transport_new(int fd, int nonblock, rv_err *err)
{
    return transport_new(&socket_ops, fd, nonblock, err);
}

rv_transport *rv_unix_transport_new(int fd, int nonblock, rv_err *err)
{
    return transport_new(&unix_ops, fd, nonblock, err);
}
