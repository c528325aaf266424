/* remvirtd's one event loop: listeners, the client set and its limits. */
#ifndef RV_SERVER_SERVER_H
#define RV_SERVER_SERVER_H

#include "common/error.h"
#include "server/config.h"

typedef struct rvs_server rvs_server;

/* Opens the listening sockets; nothing runs until rvs_server_run(). */
rvs_server *rvs_server_new(const rvs_config *cfg, rv_err *err);
/* Serves until SIGTERM or SIGINT, or --timeout with no clients; tells a
 * service manager READY=1 before and STOPPING=1 after. */
int rvs_server_run(rvs_server *srv);
/* Closes every client and removes the sockets. */
void rvs_server_free(rvs_server *srv);

/* SIGHUP calls fn on the loop (server/reload.c's rvs_reload, from main),
 * between the RELOADING=1 and READY=1 notifications to a service manager. */
void rvs_server_on_hangup(rvs_server *srv, void (*fn)(rvs_server *srv, void *opaque),
                          void *opaque);
int rvs_server_has_tls(const rvs_server *srv);
/* Every connected client, admin ones included. */
int rvs_server_nclients(const rvs_server *srv);

/* ---- for the admin program ---- */

struct rvs_client;

/* The two sets of clients the admin program calls servers: those of the
 * remote program and those of the admin socket, each with its limits. */
typedef enum { RVS_GROUP_REMOTE, RVS_GROUP_ADMIN } rvs_server_group;

typedef struct rvs_server_limits {
    int max_clients, nclients;
    int max_anonymous, nanonymous;      /* 0 for the admin group */
} rvs_server_limits;

/* The first client of the group (then rvs_client_list_next). */
struct rvs_client *rvs_server_clients(rvs_server *srv, rvs_server_group group);
void rvs_server_get_limits(rvs_server *srv, rvs_server_group group, rvs_server_limits *out);
/* Takes effect at the next accept; nobody connected is dropped. */
void rvs_server_set_limits(rvs_server *srv, rvs_server_group group, int max_clients,
                           int max_anonymous);
/* Re-reads the TLS files for the clients that come next; -1 (the old
 * files kept) when they do not load, or without listen_tls. */
int rvs_server_update_tls(rvs_server *srv, rv_err *err);
/* --timeout at runtime: seconds without clients before exiting, 0 never;
 * the wait starts afresh. */
void rvs_server_set_idle_timeout(rvs_server *srv, int seconds);

#endif
