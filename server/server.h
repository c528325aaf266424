/* remvirtd's one event loop: listeners, the client set and its limits. */
#ifndef RV_SERVER_SERVER_H
#define RV_SERVER_SERVER_H

#include "common/error.h"
#include "server/config.h"

typedef struct rvs_server rvs_server;

/* Opens the listening sockets; nothing runs until rvs_server_run(). */
rvs_server *rvs_server_new(const rvs_config *cfg, rv_err *err);
/* Serves until SIGTERM or SIGINT. */
int rvs_server_run(rvs_server *srv);
/* Closes every client and removes the sockets. */
void rvs_server_free(rvs_server *srv);

#endif
