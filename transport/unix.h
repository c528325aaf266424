/* Unix sockets: listening sockets for the daemon, connections for the
 * client (the connected stream is transport/socket.h's). */
#ifndef RV_TRANSPORT_UNIX_H
#define RV_TRANSPORT_UNIX_H

#include <sys/types.h>

#include "common/error.h"
#include "transport/transport.h"

/* Create, bind and listen on path with the given mode (a stale socket file
 * is replaced).  Returns the non-blocking listening fd or -1. */
int rv_unix_listen(const char *path, mode_t mode, int backlog, rv_err *err);
/* Connect to path; the transport is blocking. */
rv_transport *rv_unix_connect(const char *path, rv_err *err);

#endif
