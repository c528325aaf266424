/* The plain stream-socket transport: what Unix and TCP connections (and a
 * child process's socketpair) share once they are connected. */
#ifndef RV_TRANSPORT_SOCKET_H
#define RV_TRANSPORT_SOCKET_H

#include "common/error.h"
#include "transport/transport.h"

/* Wrap a connected fd (made non-blocking if nonblock); on failure the fd
 * is left open for the caller. */
rv_transport *rv_socket_transport_new(int fd, int nonblock, rv_err *err);

/* The same for a connected Unix socket, which can also pass descriptors
 * (rv_transport_passes_fds). */
rv_transport *rv_unix_transport_new(int fd, int nonblock, rv_err *err);

/* The most descriptors one read_fds takes in (its control buffer). */
#define RV_TRANSPORT_FDS_MAX 32

/* sendmsg of len bytes at buf on sock with descriptor fd attached
 * (SCM_RIGHTS); flags as sendmsg's. */
ssize_t rv_socket_send_fd(int sock, const void *buf, size_t len, int fd, int flags);

/* Set O_NONBLOCK on fd. */
int rv_socket_set_nonblock(int fd, rv_err *err);

#endif
