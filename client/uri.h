/* Connection URIs: driver[+transport]://[user@][host][:port]/[path][?params]
 *
 * Params are name=value pairs joined by '&' (or ';'), percent-decoded;
 * '+' stays a '+' so that socket paths need no escaping.  Params the
 * client itself uses (socket, mode, name, and the transports' no_verify,
 * pkipath, keyfile, ...) never reach the server; any other param is passed
 * on in the name given to CONNECT_OPEN. */
#ifndef RV_CLIENT_URI_H
#define RV_CLIENT_URI_H

#include <stddef.h>

#include "common/error.h"

/* The daemon's sockets when the URI names none. */
#define RVC_DEFAULT_SOCKET_DIR "/run/remvirt"
#define RVC_DEFAULT_SOCKET RVC_DEFAULT_SOCKET_DIR "/remvirt-sock"
#define RVC_DEFAULT_SOCKET_RO RVC_DEFAULT_SOCKET_DIR "/remvirt-sock-ro"

typedef struct rvc_uri_param {
    char *name;
    char *value;                /* "" when the param has no '=' */
} rvc_uri_param;

typedef struct rvc_uri {
    char *driver;               /* "test" */
    char *transport;            /* as written, NULL when absent */
    char *user;                 /* NULL when absent */
    char *host;                 /* NULL when absent; brackets of [v6] removed */
    int port;                   /* 0 when absent */
    char *path;                 /* decoded; "" when absent */
    rvc_uri_param *params;      /* decoded, in order */
    size_t nparams;
} rvc_uri;

/* Parse text; 0 with *out set, or -1 with err (RV_FROM_URI,
 * RV_ERR_INVALID_ARG) naming what is wrong. */
int rvc_uri_parse(const char *text, rvc_uri **out, rv_err *err);
void rvc_uri_free(rvc_uri *uri);

/* The last value of param `name`, or NULL. */
const char *rvc_uri_param_value(const rvc_uri *uri, const char *name);

/* The transport the URI means: the one written, else "unix" without a
 * host and "tls" with one. */
const char *rvc_uri_transport(const rvc_uri *uri);

/* Where a URI leads and how to get there. */
typedef enum { RVC_UNIX, RVC_TCP, RVC_TLS, RVC_SSH, RVC_EXT } rvc_target_kind;

#define RVC_DEFAULT_TCP_PORT 16509
#define RVC_DEFAULT_TLS_PORT 16514
#define RVC_DEFAULT_SSH_PORT 22
/* The bridge remvirt ships for SSH (server/ssh-helper/). */
#define RVC_SSH_HELPER "remvirt-ssh-helper"

typedef struct rvc_target {
    rvc_target_kind kind;
    char *socket;               /* unix: the socket; ssh: the socket on the remote host */
    char *host, *port;          /* tcp, tls, ssh ("localhost" when the URI has no host) */
    char *command;              /* ssh: run on the remote host; ext: run here */
} rvc_target;

/* Resolve the transport, the daemon's socket (?socket= or the default for
 * the access mode), host and port (with the transport's default), and the
 * command (ssh: built from proxy=auto|netcat|native and netcat=; ext:
 * ?command=).  Fails with RV_ERR_INVALID_ARG for an unknown transport or
 * a bad client param, RV_ERR_NO_SUPPORT for mode=direct. */
int rvc_uri_target(const rvc_uri *uri, int readonly, rvc_target *out, rv_err *err);
void rvc_target_free(rvc_target *t);

/* The name the server is opened with: driver://path plus the params not
 * meant for the client (re-encoded), or the value of ?name= if given.
 * "test+unix:///default?socket=/s" gives "test:///default".  Returns
 * malloc'd text or NULL with err. */
char *rvc_uri_server_name(const rvc_uri *uri, rv_err *err);

#endif
