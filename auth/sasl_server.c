/* The server half: remvirtd's side of AUTH_SASL_INIT/START/STEP. */
#include "auth/sasl_priv.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

RV_LOG_CATEGORY("auth.sasl.server");

/* Where remvirtd.conf (the SASL application config) is looked for: the
 * installed one first, then the system's.  $SASL_CONF_PATH, when set,
 * replaces the list (cyrus reads it itself; tests point it at a temp dir). */
#ifndef RV_SASL_CONF_DIR
#define RV_SASL_CONF_DIR "/etc/sasl2"
#endif
static char conf_search_path[] = RV_SASL_CONF_DIR ":/etc/sasl2:/etc/sasl";

static const sasl_callback_t server_callbacks[] = {
    { SASL_CB_LOG, RV_SASL_CB(rv_sasl_log_cb), NULL },
    { SASL_CB_LIST_END, NULL, NULL },
};

static pthread_once_t server_once = PTHREAD_ONCE_INIT;
static int server_init_rc;

static void server_init_once(void)
{
    rv_sasl_common_init();
    const char *env = secure_getenv("SASL_CONF_PATH");
    if (env && *env) {
        RV_DEBUG("SASL config: remvirtd.conf in $SASL_CONF_PATH %s", env);
    } else {
        sasl_set_path(SASL_PATH_TYPE_CONFIG, conf_search_path);
        RV_DEBUG("SASL config: remvirtd.conf in %s", conf_search_path);
    }
    server_init_rc = sasl_server_init(server_callbacks, "remvirtd");
}

int rv_sasl_server_init(rv_err *err)
{
    pthread_once(&server_once, server_init_once);
    if (server_init_rc != SASL_OK) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "cannot initialise SASL for remvirtd (check remvirtd.conf in the SASL "
                   "config path): %s", sasl_errstring(server_init_rc, NULL, NULL));
        return -1;
    }
    return 0;
}

rv_sasl *rv_sasl_server_new(const char *local, const char *remote, int external_ssf,
                            int min_ssf, rv_err *err)
{
    if (rv_sasl_server_init(err) < 0)
        return NULL;
    rv_sasl *s = rv_sasl_alloc(1, external_ssf, min_ssf, err);
    if (!s)
        return NULL;
    /* NULL FQDN and realm: the host's name for both, as libvirtd, so
     * users made with a plain `saslpasswd2 -a remvirtd NAME` are found.
     * SASL_SUCCESS_DATA: the last reply may carry the mechanism's final
     * message along with complete = 1, as libvirt's clients expect. */
    int rc = sasl_server_new(RV_SASL_SERVICE, NULL, NULL, local, remote, NULL,
                             SASL_SUCCESS_DATA, &s->conn);
    if (rc != SASL_OK) {
        rv_sasl_error(err, NULL, rc, RV_ERR_AUTH_FAILED, "cannot start a SASL server session");
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

char *rv_sasl_server_mechlist(rv_sasl *s, rv_err *err)
{
    const char *list = NULL;
    unsigned len = 0;
    int count = 0;
    int rc = sasl_listmech(s->conn, NULL, "", ",", "", &list, &len, &count);
    if (rc != SASL_OK && rc != SASL_NOMECH) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_AUTH_FAILED, "cannot list the SASL mechanisms");
        return NULL;
    }
    if (rc == SASL_NOMECH || count == 0 || !list || len == 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "no SASL mechanism can be offered on this connection (see mech_list in "
                   "the remvirtd SASL config, the installed plugins%s)",
                   s->external_ssf == 0 && s->min_ssf > 0
                       ? ", and tcp_min_ssf: only mechanisms with a security layer qualify"
                       : "");
        return NULL;
    }
    char *copy = strndup(list, len);
    if (!copy)
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
    return copy;
}

/* What cyrus takes as a mechanism name; anything else is refused before
 * it reaches cyrus or a log line. */
static int valid_mech_name(const char *mech)
{
    size_t n = strlen(mech);
    if (n == 0 || n > SASL_MECHNAMEMAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = mech[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

static int misuse(rv_sasl *s, const char *what, rv_err *err)
{
    rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "%s", what);
    rv_sasl_fail(s);
    return -1;
}

int rv_sasl_server_step(rv_sasl *s, const char *mech, const rv_sasl_data *in,
                        rv_sasl_data *out, rv_err *err)
{
    out->data = NULL;
    out->len = 0;
    out->nil = 1;
    switch (s->state) {
    case RV_SASL_STATE_FAILED:
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "this SASL authentication already failed");
        return -1;
    case RV_SASL_STATE_DONE:
        return misuse(s, "the SASL authentication is already complete", err);
    case RV_SASL_STATE_NEW:
        if (!mech)
            return misuse(s, "a SASL step came before the SASL start", err);
        break;
    case RV_SASL_STATE_STEPPING:
        if (mech)
            return misuse(s, "the SASL authentication was already started", err);
        break;
    }

    const char *data;
    unsigned len;
    if (rv_sasl_check_in(in, &data, &len, err) < 0) {
        rv_sasl_fail(s);
        return -1;
    }
    const char *o = NULL;
    unsigned olen = 0;
    int rc;
    if (mech) {
        if (!valid_mech_name(mech))
            return misuse(s, "the client asked for an invalid SASL mechanism name", err);
        free(s->mech);
        if (!(s->mech = strdup(mech))) {
            rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
            rv_sasl_fail(s);
            return -1;
        }
        rc = sasl_server_start(s->conn, mech, data, len, &o, &olen);
    } else {
        rc = sasl_server_step(s->conn, data, len, &o, &olen);
    }

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
    if (mech && (rc == SASL_NOMECH || rc == SASL_TOOWEAK)) {
        char what[256];
        snprintf(what, sizeof(what), "SASL mechanism '%s' is not available on this connection%s",
                 mech, s->external_ssf == 0 && s->min_ssf > 0
                           ? " (not offered, or without the security layer tcp_min_ssf needs)"
                           : " (not offered)");
        rv_sasl_error(err, s->conn, rc, RV_ERR_AUTH_FAILED, what);
    } else {
        rv_sasl_error(err, s->conn, rc, RV_ERR_AUTH_FAILED, "authentication failed");
    }
    RV_DEBUG("SASL %s with %s failed (cyrus %d)", mech ? "start" : "step",
             s->mech ? s->mech : "?", rc);
    rv_sasl_fail(s);
    return -1;
}
