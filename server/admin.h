/* The admin program (libvirt's, 0x06900690): served on remvirt-admin-sock
 * only, by the handlers in server/admin_procs.c. */
#ifndef RV_SERVER_ADMIN_H
#define RV_SERVER_ADMIN_H

#include <stddef.h>

#include "common/error.h"
#include "server/client.h"
#include "server/server.h"

/* The dispatcher of admin-socket clients (an rvs_dispatcher): the admin
 * program and keepalive; the remote program is refused there. */
int rvs_admin_dispatch(rvs_client *c, const char *frame, size_t len, void *opaque);

/* Checks the admin procedure table once at start-up. */
int rvs_admin_init(rv_err *err);

/* The server whose clients and limits the handlers see (one per daemon);
 * NULL when it goes. */
void rvs_admin_set_server(rvs_server *srv);
rvs_server *rvs_admin_server(void);

#endif
