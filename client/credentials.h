/* Who we are to the server's SASL mechanism.  Each credential is looked
 * for in this order:
 *   1. the URI's user (the name only);
 *   2. the auth file (client/authfile.h), service "libvirt", the URI's
 *      host ("localhost" without one): authname, else username, and
 *      password (taken only when the file's name is the one in use);
 *   3. whoever may be asked: the application's callback
 *      (rv_connect_open_auth), or for rv_connect_open the terminal, when
 *      stdin is one and the URI has no no_tty=1.
 * A credential nobody can give makes the mechanism fail, and
 * rvc_creds_problem() says what was missing and where to put it. */
#ifndef RV_CLIENT_CREDENTIALS_H
#define RV_CLIENT_CREDENTIALS_H

#include "auth/sasl.h"
#include "client/remvirt.h"
#include "client/uri.h"
#include "common/error.h"

/* The auth file's service name for libvirtd (and remvirtd) connections. */
#define RVC_AUTH_SERVICE "libvirt"

/* Who may be asked for what is missing. */
typedef struct rvc_asker {
    rv_auth_callback callback;  /* the application's, or NULL */
    void *opaque;
    int tty;                    /* else the terminal, if stdin is one */
} rvc_asker;

typedef struct rvc_creds rvc_creds;

/* Read the auth file (if any) and settle what is known.  NULL with err
 * when the auth file cannot be read or is malformed. */
rvc_creds *rvc_creds_new(const rvc_uri *uri, const rvc_asker *asker, rv_err *err);
/* What rv_sasl_client_new takes; valid while c lives. */
const rv_sasl_credentials *rvc_creds_sasl(rvc_creds *c);
/* Why a credential could not be had, or NULL if none was missing. */
const char *rvc_creds_problem(const rvc_creds *c);
/* Frees c, wiping the password it kept. */
void rvc_creds_free(rvc_creds *c);

#endif
