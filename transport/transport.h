/* One connection's byte stream, whatever carries it (Unix, TCP, TLS, SSH,
 * a child process).  The server loop and the client only ever call these. */
#ifndef RV_TRANSPORT_TRANSPORT_H
#define RV_TRANSPORT_TRANSPORT_H

#include <stddef.h>
#include <poll.h>
#include <sys/types.h>

typedef struct rv_transport rv_transport;

typedef struct rv_transport_ops {
    const char *name;                   /* "unix", "tcp", "tls", "ssh" */
    /* Like read(2)/write(2): bytes moved, 0 at EOF (read), or -1 with
     * errno (EAGAIN when a non-blocking transport would block). */
    ssize_t (*read)(rv_transport *t, void *buf, size_t len);
    ssize_t (*write)(rv_transport *t, const void *buf, size_t len);
    /* Bytes already decoded inside the transport (TLS records) that a
     * read returns without the fd becoming readable; NULL means none. */
    size_t (*pending)(rv_transport *t);
    /* After read (POLLIN) or write (POLLOUT) failed with EAGAIN: the poll
     * events fd must show before that operation can go on.  A TLS read can
     * need to write and an SSH write can need to read; NULL means the
     * operation's own direction. */
    short (*wait_events)(rv_transport *t, short op);
    /* What the far end said as it went away, for the error after EOF
     * (an SSH command's stderr, a child's exit status); NULL: nothing. */
    const char *(*peer_error)(rv_transport *t);
    /* Descriptor passing (SCM_RIGHTS), on Unix sockets only; NULL on
     * every other transport.  read_fds is read that also stores in fds
     * (at most max) the descriptors that came with the bytes, their count
     * in *nfds; more than max is -1 with EMSGSIZE, none of them kept.
     * write_fd is write with one descriptor attached to the bytes. */
    ssize_t (*read_fds)(rv_transport *t, void *buf, size_t len, int *fds, size_t max,
                        size_t *nfds);
    ssize_t (*write_fd)(rv_transport *t, const void *buf, size_t len, int fd);
    /* Close the fd and free t. */
    void (*close)(rv_transport *t);
} rv_transport_ops;

struct rv_transport {
    const rv_transport_ops *ops;
    int fd;                             /* what the event loop watches */
};

static inline ssize_t rv_transport_read(rv_transport *t, void *buf, size_t len)
{ return t->ops->read(t, buf, len); }
static inline ssize_t rv_transport_write(rv_transport *t, const void *buf, size_t len)
{ return t->ops->write(t, buf, len); }
static inline size_t rv_transport_pending(rv_transport *t)
{ return t->ops->pending ? t->ops->pending(t) : 0; }
static inline short rv_transport_wait_events(rv_transport *t, short op)
{ return t->ops->wait_events ? t->ops->wait_events(t, op) : op; }
static inline const char *rv_transport_peer_error(rv_transport *t)
{ return t->ops->peer_error ? t->ops->peer_error(t) : NULL; }
static inline int rv_transport_passes_fds(const rv_transport *t)
{ return t && t->ops->read_fds && t->ops->write_fd; }
static inline void rv_transport_close(rv_transport *t)
{ if (t) t->ops->close(t); }

#endif
