/* The "ext" transport: the protocol over a child process's stdin and
 * stdout (URI ?command=...), e.g. a tunnel the user builds. */
#ifndef RV_TRANSPORT_EXT_H
#define RV_TRANSPORT_EXT_H

#include "common/error.h"
#include "transport/transport.h"

/* Run `command` with /bin/sh -c, its stdin and stdout joined to one end of
 * a socketpair whose other end the transport reads and writes; stderr is
 * left as ours.  Close ends the child's input and reaps it. */
rv_transport *rv_ext_spawn(const char *command, rv_err *err);

#endif
