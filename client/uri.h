/* Connection URIs: driver[+transport]://[user@][host][:port]/[path][?params]
 *
 * Params are name=value pairs joined by '&' (or ';'), percent-decoded;
 * '+' stays a '+' so that socket paths need no escaping.  Params the
 * client itself uses (socket, mode, name, and those of the transports to
 * come: no_verify, pkipath, keyfile, ...) never reach the server; any
 * other param is passed on in the name given to CONNECT_OPEN. */
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

/* The Unix socket to connect to: ?socket= or the default for the access
 * mode.  Fails with RV_ERR_NO_SUPPORT for a transport other than unix (not
 * supported yet) and RV_ERR_INVALID_ARG for an unknown transport or bad
 * client param.  Returns malloc'd text or NULL. */
char *rvc_uri_unix_socket(const rvc_uri *uri, int readonly, rv_err *err);

/* The name the server is opened with: driver://path plus the params not
 * meant for the client (re-encoded), or the value of ?name= if given.
 * "test+unix:///default?socket=/s" gives "test:///default".  Returns
 * malloc'd text or NULL with err. */
char *rvc_uri_server_name(const rvc_uri *uri, rv_err *err);

#endif
