/* What remvirtd takes from a service manager: listening sockets passed by
 * socket activation (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES) and the
 * readiness notifications it sends back (NOTIFY_SOCKET).  Written against
 * the documented environment protocol (sd_listen_fds(3), sd_notify(3))
 * rather than linking libsystemd: two environment variables and one
 * datagram do not need a library, and remvirtd keeps building and
 * running where systemd is absent. */
#ifndef RV_SERVER_SYSTEMD_H
#define RV_SERVER_SYSTEMD_H

#include "common/error.h"

/* The names remvirtd's socket units give their sockets (a socket unit's
 * fds are named after the unit unless it sets FileDescriptorName=). */
#define RVS_SOCKET_RW "remvirtd.socket"
#define RVS_SOCKET_RO "remvirtd-ro.socket"
#define RVS_SOCKET_ADMIN "remvirtd-admin.socket"
#define RVS_SOCKET_TCP "remvirtd-tcp.socket"
#define RVS_SOCKET_TLS "remvirtd-tls.socket"

/* At most this many sockets are taken from the service manager. */
#define RVS_MAX_ACTIVATED 32

/* Reads and removes the variables (children such as QEMU must not see
 * them), once, before anything else opens an fd.  Sockets meant for
 * another process (LISTEN_PID) are ignored.  Returns the number of
 * sockets received, or -1 with err set when the variables are malformed
 * or an fd is not a listening stream socket. */
int rvs_activation_init(rv_err *err);
/* What kind of address a socket unit must listen on. */
typedef enum { RVS_ADDR_UNIX, RVS_ADDR_INET } rvs_addr_kind;
/* The sockets passed under name, moved into fds (at most max); returns
 * how many (0: none passed, the caller creates its own), or -1 with err
 * set when one is not of the kind wanted (a unit listening on the wrong
 * kind of address is a configuration error, not something to serve).
 * A taken fd is the caller's to close. */
int rvs_activation_take(const char *name, rvs_addr_kind kind, int *fds, int max, rv_err *err);
/* Closes the sockets nobody took, with a warning naming each. */
void rvs_activation_close_unclaimed(void);
/* Frees what rvs_activation_init kept (the notify socket). */
void rvs_activation_cleanup(void);

/* Sends state ("READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...") to
 * the service manager when one is listening; never blocks, and a lost
 * notification is only logged. */
void rvs_notify(const char *state);

#endif
