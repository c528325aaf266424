/* The client half: libremvirt's side of AUTH_SASL_INIT/START/STEP.
 *
 * Credentials reach cyrus through callbacks only (user name, password,
 * realm), never through SASL_INTERACT: the callbacks take what
 * rv_sasl_credentials holds and ask for the rest through creds->ask, so
 * the caller's loop never sees a prompt.  A mechanism that wants some
 * other interaction fails with an error naming it. */
#include "auth/sasl_priv.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

RV_LOG_CATEGORY("auth.sasl.client");

/* A mechanism list from the server, quoted in an error, is cut here. */
#define MECHLIST_QUOTE_MAX 256

static const sasl_callback_t client_callbacks[] = {
    { SASL_CB_LOG, RV_SASL_CB(rv_sasl_log_cb), NULL },
    { SASL_CB_LIST_END, NULL, NULL },
};

static pthread_once_t client_once = PTHREAD_ONCE_INIT;
static int client_init_rc;

static void client_init_once(void)
{
    rv_sasl_common_init();
    /* cyrus reads no config file for a client, so there is no
     * application name to give. */
    client_init_rc = sasl_client_init(client_callbacks);
}

int rv_sasl_client_init(rv_err *err)
{
    pthread_once(&client_once, client_init_once);
    if (client_init_rc != SASL_OK) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "cannot initialise SASL: %s",
                   sasl_errstring(client_init_rc, NULL, NULL));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- callbacks */

static const char *host_name(const rv_sasl *s)
{
    return s->host && *s->host ? s->host : "the server";
}

/* Ask once through creds->ask; the answer is kept for later calls. */
static int ask_for(rv_sasl *s, char **slot, const char *prompt, int echo)
{
    if (!s->ask)
        return -1;
    char *answer = s->ask(s->ask_opaque, prompt, echo);
    if (!answer)
        return -1;
    *slot = answer;
    return 0;
}

static int get_simple(void *context, int id, const char **result, unsigned *len)
{
    rv_sasl *s = context;
    switch (id) {
    case SASL_CB_USER:
        /* No separate authorisation id: the server takes the
         * authentication name (libvirt's clients send none either). */
        *result = "";
        break;
    case SASL_CB_AUTHNAME:
        if (!s->authname) {
            char prompt[300];
            snprintf(prompt, sizeof(prompt), "Username for %s", host_name(s));
            if (ask_for(s, &s->authname, prompt, 1) < 0) {
                s->missing = "user name";
                return SASL_FAIL;
            }
        }
        *result = s->authname;
        break;
    default:
        return SASL_BADPARAM;
    }
    if (len)
        *len = (unsigned)strlen(*result);
    return SASL_OK;
}

static int get_password(sasl_conn_t *conn, void *context, int id, sasl_secret_t **psecret)
{
    (void)conn;
    rv_sasl *s = context;
    if (id != SASL_CB_PASS)
        return SASL_BADPARAM;
    if (!s->password) {
        char prompt[600];
        if (s->authname)
            snprintf(prompt, sizeof(prompt), "Password for %s@%s", s->authname, host_name(s));
        else
            snprintf(prompt, sizeof(prompt), "Password for %s", host_name(s));
        if (ask_for(s, &s->password, prompt, 0) < 0) {
            s->missing = "password";
            return SASL_FAIL;
        }
    }
    /* A fresh secret each time: cyrus may wipe the one it was given. */
    size_t n = strlen(s->password);
    sasl_secret_t *secret = malloc(sizeof(*secret) + n);
    if (!secret)
        return SASL_NOMEM;
    secret->len = n;
    memcpy(secret->data, s->password, n + 1);
    if (s->secret) {
        explicit_bzero(s->secret->data, s->secret->len);
        free(s->secret);
    }
    s->secret = secret;
    *psecret = secret;
    return SASL_OK;
}

/* DIGEST-MD5 asks which realm to log in to; the server lists its own
 * first, which is where its users are. */
static int get_realm(void *context, int id, const char **availrealms, const char **result)
{
    (void)context;
    if (id != SASL_CB_GETREALM)
        return SASL_BADPARAM;
    *result = availrealms && availrealms[0] ? availrealms[0] : "";
    return SASL_OK;
}

/* ---------------------------------------------------------------- sessions */

static char *dup_or_null(const char *text, int *failed)
{
    if (!text)
        return NULL;
    char *copy = strdup(text);
    if (!copy)
        *failed = 1;
    return copy;
}

rv_sasl *rv_sasl_client_new(const char *service, const char *host, const char *local,
                            const char *remote, int external_ssf, int min_ssf,
                            const rv_sasl_credentials *creds, rv_err *err)
{
    if (rv_sasl_client_init(err) < 0)
        return NULL;
    rv_sasl *s = rv_sasl_alloc(0, external_ssf, min_ssf, err);
    if (!s)
        return NULL;
    int failed = 0;
    s->host = dup_or_null(host, &failed);
    if (creds) {
        s->authname = dup_or_null(creds->username, &failed);
        s->password = dup_or_null(creds->password, &failed);
        s->ask = creds->ask;
        s->ask_opaque = creds->opaque;
    }
    if (failed) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    s->callbacks[0] = (sasl_callback_t){ SASL_CB_USER, RV_SASL_CB(get_simple), s };
    s->callbacks[1] = (sasl_callback_t){ SASL_CB_AUTHNAME, RV_SASL_CB(get_simple), s };
    s->callbacks[2] = (sasl_callback_t){ SASL_CB_PASS, RV_SASL_CB(get_password), s };
    s->callbacks[3] = (sasl_callback_t){ SASL_CB_GETREALM, RV_SASL_CB(get_realm), s };
    s->callbacks[4] = (sasl_callback_t){ SASL_CB_LIST_END, NULL, NULL };

    int rc = sasl_client_new(service ? service : RV_SASL_SERVICE, host, local, remote,
                             s->callbacks, 0, &s->conn);
    if (rc != SASL_OK) {
        rv_sasl_error(err, NULL, rc, RV_ERR_AUTH_FAILED, "cannot start a SASL client session");
        s->conn = NULL;
        goto fail;
    }
    if (rv_sasl_set_props(s, err) < 0)
        goto fail;
    return s;

fail:
    rv_sasl_free(s);
    return NULL;
}

/* mech is one of list's names (any case; cyrus separates names by
 * anything that cannot be in one). */
static int mech_offered(const char *list, const char *mech)
{
    size_t want = strlen(mech);
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ", \t");
        if (n == want && strncasecmp(p, mech, n) == 0)
            return 1;
        p += n;
        p += strspn(p, ", \t");
    }
    return 0;
}

/* After a cyrus client call: the step's result, or -1 with err. */
static int client_result(rv_sasl *s, int rc, const char *o, unsigned olen,
                         sasl_interact_t *interact, const char *failed_what,
                         rv_sasl_data *out, rv_err *err)
{
    if (rc == SASL_CONTINUE) {
        s->state = RV_SASL_STATE_STEPPING;
        return rv_sasl_set_out(s, o, olen, out, err) < 0 ? -1 : RV_SASL_CONTINUE;
    }
    if (rc == SASL_OK) {
        if (rv_sasl_set_out(s, o, olen, out, err) < 0 || rv_sasl_finish(s, err) < 0) {
            *out = (rv_sasl_data){ NULL, 0, 1 };
            return -1;
        }
        return RV_SASL_DONE;
    }
    if (s->missing) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "no SASL %s was given (URI, auth file) and none could be asked for",
                   s->missing);
    } else if (rc == SASL_INTERACT) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "the SASL mechanism asks for something remvirt cannot supply: %s",
                   interact && interact->prompt ? interact->prompt : "(no prompt given)");
    } else {
        rv_sasl_error(err, s->conn, rc, RV_ERR_AUTH_FAILED, failed_what);
    }
    rv_sasl_fail(s);
    return -1;
}

int rv_sasl_client_start(rv_sasl *s, const char *mechlist, const char *wanted,
                         const char **mech_out, rv_sasl_data *out, rv_err *err)
{
    *mech_out = NULL;
    out->data = NULL;
    out->len = 0;
    out->nil = 1;
    if (s->state != RV_SASL_STATE_NEW) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "the SASL exchange was already started");
        rv_sasl_fail(s);
        return -1;
    }
    if (!mechlist)
        mechlist = "";
    if (wanted && !mech_offered(mechlist, wanted)) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "the server does not offer SASL mechanism '%s' (it offers: %.*s)", wanted,
                   MECHLIST_QUOTE_MAX, *mechlist ? mechlist : "none");
        rv_sasl_fail(s);
        return -1;
    }
    sasl_interact_t *interact = NULL;
    const char *o = NULL, *mech = NULL;
    unsigned olen = 0;
    int rc = sasl_client_start(s->conn, wanted ? wanted : mechlist, &interact, &o, &olen, &mech);
    char what[MECHLIST_QUOTE_MAX + 200];
    const char *layer = s->external_ssf == 0 && s->min_ssf > 0
                            ? "; this connection needs a mechanism with a security layer" : "";
    if (wanted)
        snprintf(what, sizeof(what), "cannot use SASL mechanism '%s'%s", wanted, layer);
    else
        snprintf(what, sizeof(what), "none of the server's SASL mechanisms (%.*s) can be used%s",
                 MECHLIST_QUOTE_MAX, mechlist, layer);
    int result = client_result(s, rc, o, olen, interact, what, out, err);
    if (result >= 0) {
        *mech_out = mech;
        RV_DEBUG("SASL client started %s with %s", mech, host_name(s));
    }
    return result;
}

int rv_sasl_client_step(rv_sasl *s, const rv_sasl_data *in, rv_sasl_data *out, rv_err *err)
{
    out->data = NULL;
    out->len = 0;
    out->nil = 1;
    const char *data;
    unsigned len;
    switch (s->state) {
    case RV_SASL_STATE_STEPPING:
        break;
    case RV_SASL_STATE_DONE:
        /* Our side finished first (the server's complete flag comes
         * later): nothing to do, unless the server sends more. */
        if (!in || in->nil || in->len == 0)
            return RV_SASL_DONE;
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "the server sent more SASL data after the exchange had finished");
        rv_sasl_fail(s);
        return -1;
    case RV_SASL_STATE_NEW:
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "a SASL step came before the start");
        rv_sasl_fail(s);
        return -1;
    case RV_SASL_STATE_FAILED:
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "this SASL exchange already failed");
        return -1;
    }
    if (rv_sasl_check_in(in, &data, &len, err) < 0) {
        rv_sasl_fail(s);
        return -1;
    }
    sasl_interact_t *interact = NULL;
    const char *o = NULL;
    unsigned olen = 0;
    int rc = sasl_client_step(s->conn, data, len, &interact, &o, &olen);
    return client_result(s, rc, o, olen, interact, "SASL authentication failed", out, err);
}
