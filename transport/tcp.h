/* TCP sockets (IPv4 and IPv6): listening sockets for the daemon and
 * connections for the client; TLS and SSH run over these. */
#ifndef RV_TRANSPORT_TCP_H
#define RV_TRANSPORT_TCP_H

#include <stddef.h>

#include "common/error.h"

/* Listen on port at every address `addr` resolves to; NULL or "" means
 * every local IPv4 and IPv6 address.  Puts up to max non-blocking fds in
 * fds and returns how many, or -1 with err (no fd left open). */
int rv_tcp_listen(const char *addr, const char *port, int backlog, int *fds, int max,
                  rv_err *err);

/* Connect to host:port, trying each address in turn.  Returns a blocking
 * fd, or -1 with err naming the host, the port and the last failure. */
int rv_tcp_connect(const char *host, const char *port, rv_err *err);

/* Send small packets at once: a call must not wait for Nagle's timer. */
void rv_tcp_nodelay(int fd);

/* "address:port" ("[v6]:port") of the peer, or of fd itself when !peer;
 * for logs. */
void rv_tcp_addr_name(int fd, int peer, char *buf, size_t len);

#endif
