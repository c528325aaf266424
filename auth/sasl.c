/* The parts of the cyrus-sasl glue both sides share: process-wide set-up,
 * errors, the end of an exchange, and the security layer's calls. */
#include "auth/sasl_priv.h"

#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"

RV_LOG_CATEGORY("auth.sasl");

static void oom(rv_err *err)
{
    rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
}

/* ---------------------------------------------------------------- process set-up */

/* cyrus' own mutex functions do nothing; plugins (GSSAPI) and
 * sasl_dispose rely on real ones once several threads use SASL. */
static void *mutex_alloc(void)
{
    pthread_mutex_t *m = malloc(sizeof(*m));
    if (m && pthread_mutex_init(m, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

static int mutex_lock(void *m)
{
    return pthread_mutex_lock(m) == 0 ? SASL_OK : SASL_FAIL;
}

static int mutex_unlock(void *m)
{
    return pthread_mutex_unlock(m) == 0 ? SASL_OK : SASL_FAIL;
}

static void mutex_free(void *m)
{
    if (m) {
        pthread_mutex_destroy(m);
        free(m);
    }
}

static pthread_once_t common_once = PTHREAD_ONCE_INIT;

static void common_init_once(void)
{
    sasl_set_mutex(mutex_alloc, mutex_lock, mutex_unlock, mutex_free);
}

void rv_sasl_common_init(void)
{
    pthread_once(&common_once, common_init_once);
}

int rv_sasl_log_cb(void *context, int level, const char *message)
{
    (void)context;
    switch (level) {
    case SASL_LOG_NONE:
    case SASL_LOG_PASS:         /* may carry a password: never logged */
        break;
    case SASL_LOG_ERR:
    case SASL_LOG_FAIL:
    case SASL_LOG_WARN:
        /* One client's failed login is cyrus' ERR; a warning for us. */
        RV_WARN("cyrus-sasl: %s", message);
        break;
    case SASL_LOG_NOTE:
        RV_INFO("cyrus-sasl: %s", message);
        break;
    default:
        RV_DEBUG("cyrus-sasl: %s", message);
        break;
    }
    return SASL_OK;
}

/* ---------------------------------------------------------------- errors */

void rv_sasl_error(rv_err *err, sasl_conn_t *conn, int rc, int code, const char *what)
{
    if (rc == SASL_NOMEM) {
        oom(err);
        return;
    }
    /* sasl_errdetail names the code and adds what the mechanism said;
     * without a connection only the code's text is known. */
    const char *detail = conn ? sasl_errdetail(conn) : sasl_errstring(rc, NULL, NULL);
    rv_err_set(err, RV_FROM_RPC, code, "%s: %s", what,
               detail && *detail ? detail : sasl_errstring(rc, NULL, NULL));
}

/* ---------------------------------------------------------------- sessions */

rv_sasl *rv_sasl_alloc(int is_server, int external_ssf, int min_ssf, rv_err *err)
{
    if (external_ssf < 0 || min_ssf < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "invalid SASL strengths: external SSF %d, minimum SSF %d", external_ssf,
                   min_ssf);
        return NULL;
    }
    rv_sasl *s = calloc(1, sizeof(*s));
    if (!s) {
        oom(err);
        return NULL;
    }
    s->is_server = is_server;
    s->external_ssf = external_ssf;
    s->min_ssf = min_ssf;
    s->state = RV_SASL_STATE_NEW;
    return s;
}

int rv_sasl_set_props(rv_sasl *s, rv_err *err)
{
    sasl_ssf_t external = (sasl_ssf_t)s->external_ssf;
    int rc = sasl_setprop(s->conn, SASL_SSF_EXTERNAL, &external);
    if (rc != SASL_OK) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_INTERNAL_ERROR,
                      "cannot tell SASL the transport's security strength");
        return -1;
    }
    sasl_security_properties_t props = {
        .min_ssf = (sasl_ssf_t)s->min_ssf,
        /* Any strength the mechanism offers: a layer costs little. */
        .max_ssf = 100000,
        .maxbufsize = RV_SASL_MAX_BUFSIZE,
        /* A password sent in the clear is fine only inside TLS or over a
         * Unix socket, which is what an external SSF says. */
        .security_flags = SASL_SEC_NOANONYMOUS | (s->external_ssf > 0 ? 0 : SASL_SEC_NOPLAINTEXT),
        .property_names = NULL,
        .property_values = NULL,
    };
    rc = sasl_setprop(s->conn, SASL_SEC_PROPS, &props);
    if (rc != SASL_OK) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_INTERNAL_ERROR,
                      "cannot set the SASL security properties");
        return -1;
    }
    return 0;
}

int rv_sasl_check_in(const rv_sasl_data *in, const char **data, unsigned *len, rv_err *err)
{
    if (!in || in->nil) {
        *data = NULL;
        *len = 0;
        return 0;
    }
    if (in->len > RV_SASL_DATA_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                   "SASL data of %zu bytes is over the limit of %d", in->len, RV_SASL_DATA_MAX);
        return -1;
    }
    /* Empty but not nil: cyrus tells the two apart by the pointer. */
    *data = in->data ? in->data : "";
    *len = (unsigned)in->len;
    return 0;
}

int rv_sasl_set_out(rv_sasl *s, const char *data, unsigned len, rv_sasl_data *out, rv_err *err)
{
    if (len > RV_SASL_DATA_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "the SASL mechanism produced %u bytes, more than one step carries (%d)",
                   len, RV_SASL_DATA_MAX);
        rv_sasl_fail(s);
        return -1;
    }
    out->data = data;
    out->len = data ? len : 0;
    out->nil = data == NULL;
    return 0;
}

int rv_sasl_finish(rv_sasl *s, rv_err *err)
{
    const void *value;
    int rc = sasl_getprop(s->conn, SASL_SSF, &value);
    if (rc != SASL_OK) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_AUTH_FAILED,
                      "cannot read the negotiated SASL security strength");
        goto fail;
    }
    s->ssf = (int)*(const sasl_ssf_t *)value;
    /* cyrus already refuses mechanisms too weak for min_ssf; this is the
     * check that counts, whatever a plugin did. */
    if (s->external_ssf == 0 && s->ssf < s->min_ssf) {
        if (s->is_server)
            rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                       "the negotiated security strength (SSF %d) is below tcp_min_ssf (%d)",
                       s->ssf, s->min_ssf);
        else
            rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                       "the negotiated security strength (SSF %d) is below the %d this "
                       "connection needs", s->ssf, s->min_ssf);
        goto fail;
    }
    rc = sasl_getprop(s->conn, SASL_MAXOUTBUF, &value);
    if (rc != SASL_OK) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_AUTH_FAILED,
                      "cannot read the SASL security layer's buffer size");
        goto fail;
    }
    s->max_encode = *(const unsigned *)value;
    if (s->ssf > 0 && s->max_encode == 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "the SASL security layer takes no data (buffer size 0)");
        goto fail;
    }
    /* The server must know who logged in; a client may not be told. */
    rc = sasl_getprop(s->conn, SASL_USERNAME, &value);
    if (rc == SASL_OK && value) {
        s->username = value;
    } else if (s->is_server) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "the SASL mechanism finished without a user name");
        goto fail;
    }
    s->state = RV_SASL_STATE_DONE;
    RV_DEBUG("SASL %s done: user %s, SSF %d (external %d), largest encode %u",
             s->is_server ? "server" : "client", s->username ? s->username : "(not given)",
             s->ssf, s->external_ssf, s->max_encode);
    return 0;

fail:
    rv_sasl_fail(s);
    return -1;
}

void rv_sasl_fail(rv_sasl *s)
{
    s->state = RV_SASL_STATE_FAILED;
}

const char *rv_sasl_username(rv_sasl *s)
{
    return s && s->state == RV_SASL_STATE_DONE ? s->username : NULL;
}

int rv_sasl_ssf(rv_sasl *s)
{
    return s && s->state == RV_SASL_STATE_DONE ? s->ssf : 0;
}

const char *rv_sasl_attempted_user(rv_sasl *s)
{
    if (!s || !s->conn)
        return NULL;
    const void *value = NULL;
    /* The authentication id the mechanism took from the client; once
     * done, the canonical user name. */
    if (sasl_getprop(s->conn, SASL_AUTHUSER, &value) == SASL_OK && value && *(const char *)value)
        return value;
    if (sasl_getprop(s->conn, SASL_USERNAME, &value) == SASL_OK && value && *(const char *)value)
        return value;
    return NULL;
}

char *rv_sasl_addr(int fd, int peer)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    int rc = peer ? getpeername(fd, (struct sockaddr *)&ss, &len)
                  : getsockname(fd, (struct sockaddr *)&ss, &len);
    if (rc < 0 || (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
        return NULL;
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return NULL;
    char *out;
    return asprintf(&out, "%s;%s", host, port) < 0 ? NULL : out;
}

/* ---------------------------------------------------------------- the security layer */

static int layer_ready(rv_sasl *s, const char *what, rv_err *err)
{
    if (s->state != RV_SASL_STATE_DONE || s->ssf == 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "cannot %s: no SASL security layer was negotiated", what);
        return -1;
    }
    return 0;
}

int rv_sasl_encode(rv_sasl *s, const char *in, size_t len, const char **out, size_t *outlen,
                   rv_err *err)
{
    if (layer_ready(s, "encode", err) < 0)
        return -1;
    if (len > s->max_encode) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "cannot encode %zu bytes at once: the SASL layer takes at most %u", len,
                   s->max_encode);
        return -1;
    }
    if (len == 0) {
        *out = in;
        *outlen = 0;
        return 0;
    }
    const char *o;
    unsigned ol;
    int rc = sasl_encode(s->conn, in, (unsigned)len, &o, &ol);
    if (rc != SASL_OK) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_RPC, "SASL encoding failed");
        return -1;
    }
    *out = o;
    *outlen = ol;
    return 0;
}

int rv_sasl_decode(rv_sasl *s, const char *in, size_t len, const char **out, size_t *outlen,
                   rv_err *err)
{
    if (layer_ready(s, "decode", err) < 0)
        return -1;
    if (len > UINT_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "cannot decode %zu bytes at once", len);
        return -1;
    }
    if (len == 0) {
        *out = in;
        *outlen = 0;
        return 0;
    }
    const char *o;
    unsigned ol;
    int rc = sasl_decode(s->conn, in, (unsigned)len, &o, &ol);
    if (rc != SASL_OK) {
        rv_sasl_error(err, s->conn, rc, RV_ERR_RPC,
                      "SASL decoding failed (data damaged or not from our peer)");
        return -1;
    }
    /* A partial block gives nothing yet; cyrus keeps it for the next call. */
    *out = o ? o : "";
    *outlen = o ? ol : 0;
    return 0;
}

size_t rv_sasl_max_encode(rv_sasl *s)
{
    return s && s->state == RV_SASL_STATE_DONE ? s->max_encode : 0;
}

void rv_sasl_free(rv_sasl *s)
{
    if (!s)
        return;
    if (s->conn)
        sasl_dispose(&s->conn);
    free(s->mech);
    free(s->host);
    free(s->authname);
    if (s->password) {
        explicit_bzero(s->password, strlen(s->password));
        free(s->password);
    }
    if (s->secret) {
        explicit_bzero(s->secret->data, s->secret->len);
        free(s->secret);
    }
    free(s);
}
