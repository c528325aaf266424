/* SASL (cyrus-sasl) authentication, libvirt's flow: AUTH_LIST says SASL,
 * AUTH_SASL_INIT gives the server's mechanisms, AUTH_SASL_START and
 * AUTH_SASL_STEP carry the exchange.  When the mechanism negotiates a
 * security layer (SSF > 0) and the stream is not TLS, every later packet
 * is sasl_encode'd (transport/sasl.h). */
#ifndef RV_AUTH_SASL_H
#define RV_AUTH_SASL_H

#include <stddef.h>

#include "common/error.h"

typedef struct rv_sasl rv_sasl;

/* Step results. */
enum { RV_SASL_CONTINUE = 0, RV_SASL_DONE = 1 };

/* Data in or out of a step: nil tells a NULL buffer from an empty one. */
typedef struct rv_sasl_data {
    const char *data;
    size_t len;
    int nil;
} rv_sasl_data;

/* ---- server (remvirtd); the application name is "remvirtd", so the
 * SASL config is remvirtd.conf in the SASL config path. */
int rv_sasl_server_init(rv_err *err);
/* local/remote: "addr;port" strings for mechanisms that use them (NULL
 * for Unix sockets); external_ssf: the SSF the transport already gives
 * (TLS: its cipher strength; Unix: a large value), min_ssf: the least the
 * session must reach (tcp_min_ssf on plain TCP, else 0). */
rv_sasl *rv_sasl_server_new(const char *local, const char *remote, int external_ssf,
                            int min_ssf, rv_err *err);
/* The mechanisms offered, as "SCRAM-SHA-256,DIGEST-MD5" (malloc'd). */
char *rv_sasl_server_mechlist(rv_sasl *s, rv_err *err);
/* START (with mech) and STEP (mech NULL); *out points into s until the
 * next call.  RV_SASL_DONE once authenticated (the SSF is checked against
 * min_ssf), RV_SASL_CONTINUE for another step, -1 with err
 * (RV_ERR_AUTH_FAILED) on failure. */
int rv_sasl_server_step(rv_sasl *s, const char *mech, const rv_sasl_data *in,
                        rv_sasl_data *out, rv_err *err);
/* After DONE: the authenticated user name (valid while s lives). */
const char *rv_sasl_username(rv_sasl *s);
/* After DONE: the negotiated security strength factor (0: no layer). */
int rv_sasl_ssf(rv_sasl *s);
/* The name the client authenticated as, as far as the mechanism got (for
 * logging a failed attempt); NULL when it never said.  Client-supplied
 * text: may hold any byte, so quote it in logs. */
const char *rv_sasl_attempted_user(rv_sasl *s);

/* ---- client (libremvirt).  cyrus reads no config file for a client, so
 * unlike the server's there is no application name to give. */
typedef struct rv_sasl_credentials {
    const char *username;       /* NULL: ask */
    const char *password;       /* NULL: ask */
    /* Asked when a value is missing; returns malloc'd text or NULL (then
     * the mechanism fails).  echo: 0 for secrets. */
    char *(*ask)(void *opaque, const char *prompt, int echo);
    void *opaque;
} rv_sasl_credentials;

int rv_sasl_client_init(rv_err *err);
/* service NULL: "libvirt".  host: the server's name (DIGEST-MD5's
 * digest-uri, GSSAPI's principal libvirt/host).  creds is copied; its
 * opaque must stay valid while the session lives.  Prompts given to ask:
 * "Username for HOST" (echo 1), "Password for USER@HOST" (echo 0). */
rv_sasl *rv_sasl_client_new(const char *service, const char *host, const char *local,
                            const char *remote, int external_ssf, int min_ssf,
                            const rv_sasl_credentials *creds, rv_err *err);
/* First step: pick a mechanism from mechlist (or only `wanted`, from
 * auth=sasl.MECH); *mech_out points into s. */
int rv_sasl_client_start(rv_sasl *s, const char *mechlist, const char *wanted,
                         const char **mech_out, rv_sasl_data *out, rv_err *err);
/* RV_SASL_DONE means our side is finished; the server's complete flag
 * says whether it agrees.  A step on a finished session with no data
 * returns RV_SASL_DONE again (with data: an error). */
int rv_sasl_client_step(rv_sasl *s, const rv_sasl_data *in, rv_sasl_data *out, rv_err *err);

/* ---- both */
/* The "addr;port" form cyrus takes for local/remote, from a TCP socket
 * (peer: the other end's); malloc'd, or NULL for a non-IP socket. */
char *rv_sasl_addr(int fd, int peer);
/* The security layer, once DONE with an SSF > 0. */
int rv_sasl_encode(rv_sasl *s, const char *in, size_t len, const char **out, size_t *outlen,
                   rv_err *err);
int rv_sasl_decode(rv_sasl *s, const char *in, size_t len, const char **out, size_t *outlen,
                   rv_err *err);
/* The largest plain buffer one encode takes. */
size_t rv_sasl_max_encode(rv_sasl *s);
void rv_sasl_free(rv_sasl *s);

#endif
