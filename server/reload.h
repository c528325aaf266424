/* What SIGHUP does: reopen the log files (logrotate), re-read
 * remvirtd.conf's logging keys and the TLS files; no client is dropped. */
#ifndef RV_SERVER_RELOAD_H
#define RV_SERVER_RELOAD_H

#include "server/config.h"
#include "server/server.h"

typedef struct rvs_reload_ctx {
    const char *config_path;    /* NULL: no file, only reopen and TLS */
    rvs_config *applied;        /* the configuration in force; updated */
} rvs_reload_ctx;

/* An rvs_server_on_hangup callback; opaque is an rvs_reload_ctx. */
void rvs_reload(rvs_server *srv, void *opaque);

#endif
