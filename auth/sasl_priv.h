/* What auth/sasl.c, sasl_server.c and sasl_client.c share: the session
 * and the helpers around cyrus' return codes.  Not for other folders. */
#ifndef RV_AUTH_SASL_PRIV_H
#define RV_AUTH_SASL_PRIV_H

#include <sasl/sasl.h>

#include "auth/sasl.h"

/* libvirt's service name: keytabs (libvirt/host@REALM) and sasldb realms
 * set up for libvirtd work unchanged. */
#define RV_SASL_SERVICE "libvirt"

/* The most one START/STEP carries each way (remote_auth_sasl_*'s data). */
#define RV_SASL_DATA_MAX 65536

/* Our largest decoded block, offered to the peer; it bounds what one
 * sasl_decode buffers for us. */
#define RV_SASL_MAX_BUFSIZE 65536

/* cyrus stores every callback as int (*)(void); going through
 * void (*)(void) says the cast is meant (-Wcast-function-type). */
#define RV_SASL_CB(fn) ((int (*)(void))(void (*)(void))(fn))

typedef enum {
    RV_SASL_STATE_NEW,          /* no START yet */
    RV_SASL_STATE_STEPPING,     /* START given, not finished */
    RV_SASL_STATE_DONE,         /* authenticated (our side) */
    RV_SASL_STATE_FAILED,       /* a step failed: nothing more is taken */
} rv_sasl_state;

struct rv_sasl {
    sasl_conn_t *conn;
    int is_server;
    int external_ssf;
    int min_ssf;
    rv_sasl_state state;
    /* Read once DONE. */
    int ssf;
    unsigned max_encode;
    const char *username;       /* cyrus' copy */
    char *mech;                 /* server: the mechanism START asked for */

    /* Client only: the callbacks cyrus keeps a pointer to, and what they
     * hand out (kept until the session is freed). */
    sasl_callback_t callbacks[5];
    char *(*ask)(void *opaque, const char *prompt, int echo);
    void *ask_opaque;
    char *host;                 /* for prompts */
    char *authname;
    char *password;             /* wiped before it is freed */
    sasl_secret_t *secret;      /* the form SASL_CB_PASS hands out */
    const char *missing;        /* a credential that could not be had */
};

/* Real mutexes for cyrus, once per process; both inits call it first. */
void rv_sasl_common_init(void);
/* The log callback both global callback lists carry. */
int rv_sasl_log_cb(void *context, int level, const char *message);

/* A new session with the parts both sides set the same way.  NULL with
 * err on failure. */
rv_sasl *rv_sasl_alloc(int is_server, int external_ssf, int min_ssf, rv_err *err);
/* SASL_SSF_EXTERNAL and the security properties (after sasl_*_new). */
int rv_sasl_set_props(rv_sasl *s, rv_err *err);

/* err = "<what>: <cyrus' detail>"; conn may be NULL (then the code's
 * generic text).  code is the rv_err code to report. */
void rv_sasl_error(rv_err *err, sasl_conn_t *conn, int rc, int code, const char *what);

/* In and out of a step: bounds and the nil flag. */
int rv_sasl_check_in(const rv_sasl_data *in, const char **data, unsigned *len, rv_err *err);
int rv_sasl_set_out(rv_sasl *s, const char *data, unsigned len, rv_sasl_data *out,
                    rv_err *err);

/* The exchange finished on our side: read the SSF, the user name and the
 * largest encode, and check the SSF against min_ssf.  0 or -1 with err. */
int rv_sasl_finish(rv_sasl *s, rv_err *err);
/* After a failed step: no more steps. */
void rv_sasl_fail(rv_sasl *s);

#endif
