#include "client/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/sasl.h"
#include "client/rv_stubs.gen.h"
#include "common/log.h"
#include "rv_remote.h"
#include "transport/sasl.h"
#include "transport/tls.h"

RV_LOG_CATEGORY("client.auth");

/* libvirt's clients ask plain TCP for DES strength or better. */
#define TCP_MIN_SSF 56
/* A Unix socket or an SSH channel needs no layer; libvirt's client asks
 * for none there (maximum SSF 0).  Telling SASL the stream already gives
 * as much as the most we ask of any layer has that effect, and lets
 * mechanisms that send a password as it is run there, as libvirt's do. */
#define LOCAL_EXTERNAL_SSF 100000
/* Round trips after START before we stop believing the server. */
#define MAX_SASL_STEPS 32

static const char *auth_name(int type)
{
    switch (type) {
    case RV_AUTH_NONE: return "none";
    case RV_AUTH_SASL: return "sasl";
    case RV_AUTH_POLKIT: return "polkit";
    default: return "unknown";
    }
}

static int offered(const rv_auth_type *types, unsigned int ntypes, int type)
{
    for (unsigned int i = 0; i < ntypes; i++)
        if ((int)types[i] == type)
            return 1;
    return 0;
}

/* "none, sasl" for messages. */
static void describe(const rv_auth_type *types, unsigned int ntypes, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned int i = 0; i < ntypes && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", auth_name((int)types[i]));
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* The server's reply, or the credential problem behind a mechanism's
 * failure, which says better than SASL what to do about it. */
static void prefer_problem(const rvc_creds *creds, rv_err *err)
{
    const char *problem = rvc_creds_problem(creds);
    if (problem)
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED, "authentication failed: %s", problem);
}

static rv_transport *wrap_in_sasl(rv_transport *inner, void *opaque, rv_err *err)
{
    return rv_sasl_transport_new(inner, opaque, err);
}

/* libvirt's exchange.  After START the client always takes one more step
 * with what the server sent, even when the server says it is complete:
 * that step checks the server's proof in mechanisms that authenticate
 * both ends.  The exchange ends when both sides are done. */
static int exchange(struct rvc_conn *rpc, rv_sasl *s, const char *wanted, rvc_creds *creds,
                    rv_err *err)
{
    rv_auth_sasl_init_ret init = { 0 };
    if (rvc_call_auth_sasl_init(rpc, &init, err) < 0)
        return -1;
    RV_DEBUG("server's SASL mechanisms: %s", init.mechlist);

    const char *mech;
    rv_sasl_data out;
    int ours = rv_sasl_client_start(s, init.mechlist, wanted, &mech, &out, err);
    if (ours < 0) {
        xdr_free((xdrproc_t)xdr_rv_auth_sasl_init_ret, (char *)&init);
        prefer_problem(creds, err);
        return -1;
    }
    rv_auth_sasl_start_args start = {
        .mech = (char *)mech,
        .nil = out.nil,
        .data = { .data_len = (u_int)out.len, .data_val = (char *)out.data },
    };
    rv_auth_sasl_start_ret reply = { 0 };
    int rc = rvc_call_auth_sasl_start(rpc, &start, &reply, err);
    RV_DEBUG("START %s: %zu bytes out", mech, out.len);
    xdr_free((xdrproc_t)xdr_rv_auth_sasl_init_ret, (char *)&init);
    if (rc < 0)
        return -1;

    for (int steps = 0;; steps++) {
        rv_sasl_data in = {
            .data = reply.data.data_val, .len = reply.data.data_len, .nil = reply.nil != 0,
        };
        int complete = reply.complete != 0;
        ours = rv_sasl_client_step(s, &in, &out, err);
        /* out points into s: reply's buffer is no longer needed. */
        xdr_free((xdrproc_t)xdr_rv_auth_sasl_start_ret, (char *)&reply);
        if (ours < 0) {
            prefer_problem(creds, err);
            return -1;
        }
        if (complete) {
            if (ours == RV_SASL_DONE)
                return 0;
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                       "the server ended the SASL exchange before %s was done on our side",
                       mech);
            return -1;
        }
        if (steps == MAX_SASL_STEPS) {
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                       "the SASL exchange (%s) did not end after %d steps", mech, steps);
            return -1;
        }
        rv_auth_sasl_step_args step = {
            .nil = out.nil,
            .data = { .data_len = (u_int)out.len, .data_val = (char *)out.data },
        };
        /* The step reply has the start reply's shape. */
        rv_auth_sasl_step_ret step_reply = { 0 };
        if (rvc_call_auth_sasl_step(rpc, &step, &step_reply, err) < 0)
            return -1;
        RV_DEBUG("STEP: %zu bytes out, complete %d, %u bytes back", out.len,
                 step_reply.complete, step_reply.data.data_len);
        reply.complete = step_reply.complete;
        reply.nil = step_reply.nil;
        reply.data.data_len = step_reply.data.data_len;
        reply.data.data_val = step_reply.data.data_val;
    }
}

static int authenticate_sasl(struct rvc_conn *rpc, const rvc_uri *uri, const char *wanted,
                             const rvc_asker *asker, rv_err *err)
{
    const char *kind = rvc_uri_transport(uri);
    rv_transport *tr = rvc_conn_transport(rpc);
    int tls_ssf = rv_tls_ssf(tr);
    /* As libvirt: TCP and ext commands are not trusted to keep the
     * stream private; TLS, Unix sockets and SSH are. */
    int exposed = strcmp(kind, "tcp") == 0 || strcmp(kind, "ext") == 0;
    int external_ssf = tls_ssf > 0 ? tls_ssf : exposed ? 0 : LOCAL_EXTERNAL_SSF;
    int min_ssf = exposed ? TCP_MIN_SSF : 0;
    const char *host = uri->host && *uri->host ? uri->host : "localhost";

    if (rv_sasl_client_init(err) < 0)
        return -1;
    rvc_creds *creds = rvc_creds_new(uri, asker, err);
    if (!creds)
        return -1;
    /* NULL for a stream that is not TCP. */
    char *local = rv_sasl_addr(tr->fd, 0);
    char *remote = rv_sasl_addr(tr->fd, 1);
    RV_DEBUG("SASL with %s over %s: external SSF %d, minimum SSF %d", host, kind, external_ssf,
             min_ssf);
    rv_sasl *s = rv_sasl_client_new(RVC_AUTH_SERVICE, host, local, remote, external_ssf, min_ssf,
                                    rvc_creds_sasl(creds), err);
    free(local);
    free(remote);
    int rc = -1;
    if (!s || exchange(rpc, s, wanted, creds, err) < 0)
        goto out;

    int ssf = rv_sasl_ssf(s);
    if (exposed && ssf < TCP_MIN_SSF) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                   "the SASL session's security strength (SSF %d) is below the %d a %s "
                   "connection needs", ssf, TCP_MIN_SSF, kind);
        goto out;
    }
    RV_DEBUG("SASL authentication done: SSF %d", ssf);
    /* The server starts the layer right after its final reply; so do we.
     * Inside TLS neither side adds one. */
    if (ssf > 0 && tls_ssf == 0) {
        rv_sasl *layer = s;
        s = NULL;                   /* the wrapper owns it from here */
        if (rvc_conn_wrap_transport(rpc, wrap_in_sasl, layer, err) < 0)
            goto out;
    }
    rc = 0;
out:
    rv_sasl_free(s);
    rvc_creds_free(creds);
    return rc;
}

int rvc_authenticate(struct rvc_conn *rpc, const rvc_uri *uri, const rv_auth_type *types,
                     unsigned int ntypes, const rvc_asker *asker, rv_err *err)
{
    /* An empty list: the server asks for nothing (old libvirtds). */
    if (ntypes == 0)
        return 0;
    char list[128];
    describe(types, ntypes, list, sizeof(list));

    const char *auth = rvc_uri_param_value(uri, "auth");
    if (auth && *auth) {
        int want;
        const char *mech = NULL;
        if (strcasecmp(auth, "sasl") == 0) {
            want = RV_AUTH_SASL;
        } else if (strncasecmp(auth, "sasl.", 5) == 0 && auth[5]) {
            want = RV_AUTH_SASL;
            mech = auth + 5;
        } else if (strcasecmp(auth, "polkit") == 0) {
            want = RV_AUTH_POLKIT;
        } else {
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                       "unknown authentication type auth=%s (remvirt knows sasl and "
                       "sasl.MECHANISM)", auth);
            return -1;
        }
        if (!offered(types, ntypes, want)) {
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                       "the server does not offer %s authentication, which auth=%s asks for "
                       "(it offers: %s)", auth_name(want), auth, list);
            return -1;
        }
        if (want == RV_AUTH_POLKIT) {
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                       "remvirt does not support polkit authentication");
            return -1;
        }
        return authenticate_sasl(rpc, uri, mech, asker, err);
    }

    if (offered(types, ntypes, RV_AUTH_NONE))
        return 0;
    if (offered(types, ntypes, RV_AUTH_SASL))
        return authenticate_sasl(rpc, uri, NULL, asker, err);
    rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
               "the server requires authentication remvirt does not support (it offers: %s)",
               list);
    return -1;
}
