/* remvirtd's one event loop: listeners, the client set and its limits. */
#ifndef RV_SERVER_SERVER_H
#define RV_SERVER_SERVER_H

#include "common/error.h"
#include "server/config.h"

typedef struct rvs_server rvs_server;

/* Opens the listening sockets; nothing runs until rvs_server_run(). */
rvs_server *rvs_server_new(const rvs_config *cfg, rv_err *err);
/* What SIGHUP does (re-read the configuration), between the RELOADING=1
 * and READY=1 notifications. */
typedef void (*rvs_reload_fn)(void *opaque);
void rvs_server_set_reload(rvs_server *srv, rvs_reload_fn fn, void *opaque);
/* Serves until SIGTERM or SIGINT, or --timeout with no clients; tells a
 * service manager READY=1 before and STOPPING=1 after. */
int rvs_server_run(rvs_server *srv);
/* Closes every client and removes the sockets. */
void rvs_server_free(rvs_server *srv);

#endif
