#include "transport/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "auth/x509.h"
#include "common/log.h"

RV_LOG_CATEGORY("transport.tls");

struct rv_tls_context {
    int refs;                       /* the owner's, and one per transport */
    rv_x509_role role;              /* ours */
    int verify_peer;
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t priority;
    char *ca_file;                  /* named when a peer's CA is unknown */
    char **allowed_dns;             /* NULL-terminated globs; NULL: any DN */
};

typedef struct tls_transport {
    rv_transport base;
    rv_tls_context *ctx;
    gnutls_session_t session;
    /* Held around each gnutls call and nothing else; every call is
     * non-blocking once the fd is, so a reader and a writer thread wait on
     * each other for one call at most.  gnutls allows one sending and one
     * receiving thread on a session, but a TLS 1.3 key update makes the
     * receiver send too, so we serialise rather than rely on that. */
    pthread_mutex_t lock;
    int tls_up;                     /* gnutls' handshake finished */
    int established;                /* and the peer was accepted */
    int failed;                     /* the server handshake returned -1 */
    short handshake_wait;           /* poll events each step waits for */
    short read_wait;
    short write_wait;
    /* A send that got GNUTLS_E_AGAIN must be repeated with the same
     * length; the caller may offer more bytes by then. */
    size_t write_pending;
    char *peer_dn;
    /* Read-ahead for gnutls: it asks for a record's header and then its
     * body, two recv() calls per record on its own; one recv() into this
     * buffer serves both (and often the next records too).  Bytes here do
     * not make the fd readable, so pending() counts them. */
    size_t ahead_start, ahead_len;
    unsigned char ahead[4096];
} tls_transport;

static const rv_transport_ops tls_ops;

static void oom(rv_err *err)
{
    rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
}

/* ---------------------------------------------------------------- contexts */

static void context_unref(rv_tls_context *ctx)
{
    if (!ctx || __atomic_sub_fetch(&ctx->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (ctx->cred)
        gnutls_certificate_free_credentials(ctx->cred);
    if (ctx->priority)
        gnutls_priority_deinit(ctx->priority);
    free(ctx->ca_file);
    if (ctx->allowed_dns)
        for (size_t i = 0; ctx->allowed_dns[i]; i++)
            free(ctx->allowed_dns[i]);
    free(ctx->allowed_dns);
    free(ctx);
    gnutls_global_deinit();
}

void rv_tls_context_free(rv_tls_context *ctx)
{
    context_unref(ctx);
}

static int copy_globs(rv_tls_context *ctx, const char *const *globs)
{
    if (!globs)
        return 0;
    size_t n = 0;
    while (globs[n])
        n++;
    ctx->allowed_dns = calloc(n + 1, sizeof(char *));
    if (!ctx->allowed_dns)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(ctx->allowed_dns[i] = strdup(globs[i])))
            return -1;
    return 0;
}

/* A certificate or key file: required on the server; on the client a
 * missing one means "no client certificate" (returns 0). */
static int read_own_file(rv_x509_pem *pem, const char *path, const char *what, int optional,
                         rv_err *err)
{
    if (!path) {
        if (optional)
            return 0;
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "no %s file given", what);
        return -1;
    }
    return rv_x509_pem_read(pem, path, what, optional, err);
}

static rv_tls_context *context_new(rv_x509_role role, const rv_tls_files *files,
                                   const char *priority, int verify_peer, int sanity_check,
                                   const char *const *allowed_dns, rv_err *err)
{
    int rc = gnutls_global_init();
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot initialise gnutls: %s",
                   gnutls_strerror(rc));
        return NULL;
    }
    rv_tls_context *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        gnutls_global_deinit();
        oom(err);
        return NULL;
    }
    ctx->refs = 1;
    ctx->role = role;
    ctx->verify_peer = verify_peer;

    rv_x509_pem ca = { 0 }, crl = { 0 }, cert = { 0 }, key = { 0 };
    int client = role == RV_X509_CLIENT;
    if (read_own_file(&ca, files->ca_file, "CA certificate", 0, err) < 0)
        goto fail;
    if (files->crl_file && rv_x509_pem_read(&crl, files->crl_file, "CRL", 1, err) < 0)
        goto fail;
    int have_cert = read_own_file(&cert, files->cert_file, "certificate", client, err);
    if (have_cert < 0)
        goto fail;
    int have_key = read_own_file(&key, files->key_file, "private key", client, err);
    if (have_key < 0)
        goto fail;
    if (have_cert != have_key) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   have_cert ? "found the certificate %s but not its private key %s"
                             : "found the private key %s but not its certificate %s",
                   have_cert ? files->cert_file : files->key_file,
                   have_cert ? files->key_file : files->cert_file);
        goto fail;
    }
    if (have_cert && sanity_check &&
        rv_x509_check_own(role, &cert, &key, &ca, crl.path ? &crl : NULL, err) < 0)
        goto fail;

    rc = gnutls_certificate_allocate_credentials(&ctx->cred);
    if (rc < 0) {
        ctx->cred = NULL;
        oom(err);
        goto fail;
    }
    rc = gnutls_certificate_set_x509_trust_mem(ctx->cred, &ca.data, GNUTLS_X509_FMT_PEM);
    if (rc <= 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   "the CA certificate file %s holds no usable certificate: %s", ca.path,
                   rc < 0 ? gnutls_strerror(rc) : "none found");
        goto fail;
    }
    if (crl.path) {
        rc = gnutls_certificate_set_x509_crl_mem(ctx->cred, &crl.data, GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot load the CRL file %s: %s",
                       crl.path, gnutls_strerror(rc));
            goto fail;
        }
    }
    if (have_cert) {
        rc = gnutls_certificate_set_x509_key_mem(ctx->cred, &cert.data, &key.data,
                                                 GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                       "cannot use the certificate %s with the private key %s: %s",
                       cert.path, key.path, gnutls_strerror(rc));
            goto fail;
        }
    }
    const char *prio = priority ? priority : "NORMAL";
    const char *bad_at = NULL;
    rc = gnutls_priority_init(&ctx->priority, prio, &bad_at);
    if (rc < 0) {
        ctx->priority = NULL;
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "invalid TLS priority '%s'%s%s%s: %s",
                   prio, bad_at ? " (at '" : "", bad_at ? bad_at : "", bad_at ? "')" : "",
                   gnutls_strerror(rc));
        goto fail;
    }
    if (!(ctx->ca_file = strdup(ca.path)) || copy_globs(ctx, allowed_dns) < 0) {
        oom(err);
        goto fail;
    }
    RV_DEBUG("TLS %s context: CA %s, certificate %s, CRL %s, verify %d, sanity %d",
             client ? "client" : "server", ca.path, have_cert ? cert.path : "(none)",
             crl.path ? crl.path : "(none)", verify_peer, sanity_check);
    rv_x509_pem_clear(&ca);
    rv_x509_pem_clear(&crl);
    rv_x509_pem_clear(&cert);
    rv_x509_pem_clear(&key);
    return ctx;

fail:
    rv_x509_pem_clear(&ca);
    rv_x509_pem_clear(&crl);
    rv_x509_pem_clear(&cert);
    rv_x509_pem_clear(&key);
    context_unref(ctx);
    return NULL;
}

rv_tls_context *rv_tls_server_context_new(const rv_tls_files *files,
                                          const rv_tls_server_policy *policy, rv_err *err)
{
    return context_new(RV_X509_SERVER, files, policy->priority, policy->verify_client,
                       policy->sanity_check, policy->allowed_dns, err);
}

rv_tls_context *rv_tls_client_context_new(const rv_tls_files *files,
                                          const rv_tls_client_policy *policy, rv_err *err)
{
    return context_new(RV_X509_CLIENT, files, policy->priority, policy->verify_server,
                       policy->sanity_check, NULL, err);
}

/* ---------------------------------------------------------------- client file locations */

static char *path_join(const char *dir, const char *name)
{
    char *p;
    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* $HOME/.pki/libvirt, or NULL (no home, or out of memory). */
static char *user_pki_dir(void)
{
    const char *home = getenv("HOME");
    char *dir = NULL;
    if (home && *home)
        return path_join(home, ".pki/libvirt");
    long size = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t len = size > 0 ? (size_t)size : 16384;
    char *buf = malloc(len);
    struct passwd pw, *found = NULL;
    if (buf && getpwuid_r(geteuid(), &pw, buf, len, &found) == 0 && found && found->pw_dir)
        dir = path_join(found->pw_dir, ".pki/libvirt");
    free(buf);
    return dir;
}

int rv_tls_client_files(const char *pkipath, rv_tls_files *out, rv_err *err)
{
    char *ca = NULL, *cert = NULL, *key = NULL, *crl = NULL;
    memset(out, 0, sizeof(*out));
    if (pkipath) {
        ca = path_join(pkipath, "cacert.pem");
        cert = path_join(pkipath, "clientcert.pem");
        key = path_join(pkipath, "clientkey.pem");
        crl = path_join(pkipath, "cacrl.pem");
    } else {
        /* Like libvirt: a non-root user's own files where they exist (the
         * certificate and key as a pair), the system's otherwise. */
        char *user = geteuid() != 0 ? user_pki_dir() : NULL;
        if (user) {
            ca = path_join(user, "cacert.pem");
            cert = path_join(user, "clientcert.pem");
            key = path_join(user, "clientkey.pem");
            crl = path_join(user, "cacrl.pem");
            free(user);
            if (ca && !file_exists(ca)) {
                free(ca);
                ca = strdup(RV_TLS_DEFAULT_CA_FILE);
            }
            if (cert && key && !(file_exists(cert) && file_exists(key))) {
                free(cert);
                free(key);
                cert = strdup(RV_TLS_DEFAULT_CLIENT_CERT);
                key = strdup(RV_TLS_DEFAULT_CLIENT_KEY);
            }
            if (crl && !file_exists(crl)) {
                free(crl);
                crl = strdup(RV_TLS_DEFAULT_CRL_FILE);
            }
        } else {
            ca = strdup(RV_TLS_DEFAULT_CA_FILE);
            cert = strdup(RV_TLS_DEFAULT_CLIENT_CERT);
            key = strdup(RV_TLS_DEFAULT_CLIENT_KEY);
            crl = strdup(RV_TLS_DEFAULT_CRL_FILE);
        }
    }
    if (!ca || !cert || !key || !crl) {
        free(ca);
        free(cert);
        free(key);
        free(crl);
        oom(err);
        return -1;
    }
    out->ca_file = ca;
    out->cert_file = cert;
    out->key_file = key;
    out->crl_file = crl;
    return 0;
}

void rv_tls_files_free(rv_tls_files *files)
{
    free((char *)files->ca_file);
    free((char *)files->cert_file);
    free((char *)files->key_file);
    free((char *)files->crl_file);
    memset(files, 0, sizeof(*files));
}

/* ---------------------------------------------------------------- the transport */

/* gnutls' pull function: serve from the read-ahead, refilling it with one
 * recv() when empty.  Called with tt->lock held (from gnutls calls). */
static ssize_t pull_ahead(gnutls_transport_ptr_t ptr, void *data, size_t size)
{
    tls_transport *tt = ptr;
    if (tt->ahead_len == 0) {
        /* A large read goes straight to gnutls' buffer. */
        if (size >= sizeof(tt->ahead))
            return recv(tt->base.fd, data, size, 0);
        ssize_t n = recv(tt->base.fd, tt->ahead, sizeof(tt->ahead), 0);
        if (n <= 0)
            return n;
        tt->ahead_start = 0;
        tt->ahead_len = (size_t)n;
    }
    size_t n = size < tt->ahead_len ? size : tt->ahead_len;
    memcpy(data, tt->ahead + tt->ahead_start, n);
    tt->ahead_start += n;
    tt->ahead_len -= n;
    return (ssize_t)n;
}

/* gnutls' push function: a record (header and body) in one sendmsg();
 * MSG_NOSIGNAL, so a peer that went away is an error, not SIGPIPE. */
static ssize_t push_vec(gnutls_transport_ptr_t ptr, const giovec_t *iov, int iovcnt)
{
    tls_transport *tt = ptr;
    struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
    return sendmsg(tt->base.fd, &msg, MSG_NOSIGNAL);
}

/* gnutls may wait for input with a timeout (its handshake timer); bytes
 * already read ahead count as input. */
static int pull_ahead_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
    tls_transport *tt = ptr;
    if (tt->ahead_len > 0)
        return 1;
    struct pollfd pfd = { .fd = tt->base.fd, .events = POLLIN };
    return poll(&pfd, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

static short gnutls_wants(gnutls_session_t s)
{
    return gnutls_record_get_direction(s) ? POLLOUT : POLLIN;
}

/* After gnutls_record_recv: a signal, a warning alert, or a renegotiation
 * request (declined by ignoring it) was dealt with; receive again. */
static int recv_goes_on(ssize_t rc)
{
    return rc == GNUTLS_E_INTERRUPTED || rc == GNUTLS_E_WARNING_ALERT_RECEIVED ||
           rc == GNUTLS_E_REHANDSHAKE;
}

static ssize_t tls_read(rv_transport *t, void *buf, size_t len)
{
    tls_transport *tt = (tls_transport *)t;
    if (!tt->established) {
        errno = ENOTCONN;
        return -1;
    }
    if (len == 0)
        return 0;
    pthread_mutex_lock(&tt->lock);
    ssize_t rc;
    while (recv_goes_on(rc = gnutls_record_recv(tt->session, buf, len)))
        RV_DEBUG("fd %d: read goes on after: %s", t->fd, gnutls_strerror((int)rc));
    if (rc == GNUTLS_E_AGAIN)
        tt->read_wait = gnutls_wants(tt->session);
    pthread_mutex_unlock(&tt->lock);

    if (rc >= 0)
        return rc;
    if (rc == GNUTLS_E_AGAIN) {
        errno = EAGAIN;
        return -1;
    }
    if (rc == GNUTLS_E_PREMATURE_TERMINATION) {
        RV_DEBUG("fd %d: the peer closed without a TLS close_notify", t->fd);
        return 0;
    }
    RV_DEBUG("fd %d: TLS read failed: %s", t->fd, gnutls_strerror((int)rc));
    errno = EIO;
    return -1;
}

static ssize_t tls_write(rv_transport *t, const void *buf, size_t len)
{
    tls_transport *tt = (tls_transport *)t;
    if (!tt->established) {
        errno = ENOTCONN;
        return -1;
    }
    pthread_mutex_lock(&tt->lock);
    size_t n = len;
    if (tt->write_pending) {
        if (len < tt->write_pending) {
            RV_DEBUG("fd %d: a retried write offers %zu bytes, fewer than the %zu pending",
                     t->fd, len, tt->write_pending);
            pthread_mutex_unlock(&tt->lock);
            errno = EINVAL;
            return -1;
        }
        n = tt->write_pending;
    } else if (len == 0) {
        /* gnutls would take (buf, 0) for "retry the pending send". */
        pthread_mutex_unlock(&tt->lock);
        return 0;
    }
    ssize_t rc;
    do
        rc = gnutls_record_send(tt->session, buf, n);
    while (rc == GNUTLS_E_INTERRUPTED);
    if (rc == GNUTLS_E_AGAIN) {
        tt->write_pending = n;
        tt->write_wait = gnutls_wants(tt->session);
    } else {
        tt->write_pending = 0;
    }
    pthread_mutex_unlock(&tt->lock);

    if (rc >= 0)
        return rc;
    if (rc == GNUTLS_E_AGAIN) {
        errno = EAGAIN;
        return -1;
    }
    RV_DEBUG("fd %d: TLS write failed: %s", t->fd, gnutls_strerror((int)rc));
    errno = EIO;
    return -1;
}

static size_t tls_pending(rv_transport *t)
{
    tls_transport *tt = (tls_transport *)t;
    if (!tt->established)
        return 0;
    pthread_mutex_lock(&tt->lock);
    /* A read consumes the read-ahead into gnutls even when it holds only
     * part of a record, so counting it never makes a caller spin. */
    size_t n = gnutls_record_check_pending(tt->session) + tt->ahead_len;
    pthread_mutex_unlock(&tt->lock);
    return n;
}

static short tls_wait_events(rv_transport *t, short op)
{
    tls_transport *tt = (tls_transport *)t;
    pthread_mutex_lock(&tt->lock);
    short events = !tt->established ? tt->handshake_wait
                 : (op & POLLOUT) ? tt->write_wait : tt->read_wait;
    pthread_mutex_unlock(&tt->lock);
    return events;
}

static void tls_close(rv_transport *t)
{
    tls_transport *tt = (tls_transport *)t;
    if (tt->session) {
        if (tt->tls_up) {
            /* Best effort, and never a wait: the fd goes away next. */
            int fl = fcntl(t->fd, F_GETFL);
            if (fl >= 0 && !(fl & O_NONBLOCK))
                fcntl(t->fd, F_SETFL, fl | O_NONBLOCK);
            int rc = gnutls_bye(tt->session, GNUTLS_SHUT_WR);
            if (rc < 0)
                RV_DEBUG("fd %d: no TLS close_notify sent: %s", t->fd, gnutls_strerror(rc));
        }
        gnutls_deinit(tt->session);
    }
    close(t->fd);
    pthread_mutex_destroy(&tt->lock);
    free(tt->peer_dn);
    context_unref(tt->ctx);
    free(tt);
}

static const rv_transport_ops tls_ops = {
    .name = "tls",
    .read = tls_read,
    .write = tls_write,
    .pending = tls_pending,
    .wait_events = tls_wait_events,
    .peer_error = NULL,
    .close = tls_close,
};

/* A session on fd for ctx's side; fd is closed on failure. */
static tls_transport *transport_new(rv_tls_context *ctx, rv_x509_role want, int fd, rv_err *err)
{
    if (ctx->role != want) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR, "a TLS %s context used for a %s",
                   ctx->role == RV_X509_SERVER ? "server" : "client",
                   want == RV_X509_SERVER ? "server" : "client");
        close(fd);
        return NULL;
    }
    tls_transport *tt = calloc(1, sizeof(*tt));
    if (!tt) {
        oom(err);
        close(fd);
        return NULL;
    }
    tt->base.ops = &tls_ops;
    tt->base.fd = fd;
    pthread_mutex_init(&tt->lock, NULL);
    tt->handshake_wait = POLLIN;        /* the server waits for ClientHello */
    tt->read_wait = POLLIN;
    tt->write_wait = POLLOUT;
    __atomic_add_fetch(&ctx->refs, 1, __ATOMIC_RELAXED);
    tt->ctx = ctx;

    /* GNUTLS_NO_SIGNAL: a peer that went away is an error, not SIGPIPE. */
    unsigned flags = (want == RV_X509_SERVER ? GNUTLS_SERVER : GNUTLS_CLIENT) | GNUTLS_NO_SIGNAL;
    int rc = gnutls_init(&tt->session, flags);
    if (rc < 0)
        tt->session = NULL;
    if (rc >= 0)
        rc = gnutls_priority_set(tt->session, ctx->priority);
    if (rc >= 0)
        rc = gnutls_credentials_set(tt->session, GNUTLS_CRD_CERTIFICATE, ctx->cred);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot set up a TLS session: %s",
                   gnutls_strerror(rc));
        tls_close(&tt->base);
        return NULL;
    }
    /* Request, not require: a client without one gets our own error
     * ("sent no certificate") rather than a bare handshake failure.  Not
     * naming our CAs in the request makes a gnutls client send the
     * certificate it has even from another CA (it would send none), so
     * the log names the real cause. */
    if (want == RV_X509_SERVER) {
        gnutls_certificate_server_set_request(tt->session, GNUTLS_CERT_REQUEST);
        gnutls_certificate_send_x509_rdn_sequence(tt->session, 1);
    }
    /* Sends go straight to the fd; receives through the read-ahead. */
    gnutls_transport_set_ptr(tt->session, tt);
    gnutls_transport_set_vec_push_function(tt->session, push_vec);
    gnutls_transport_set_pull_function(tt->session, pull_ahead);
    gnutls_transport_set_pull_timeout_function(tt->session, pull_ahead_timeout);
    return tt;
}

static void report_handshake_failure(tls_transport *tt, int rc, const char *peer, rv_err *err)
{
    const char *alert = NULL;
    if (rc == GNUTLS_E_FATAL_ALERT_RECEIVED)
        alert = gnutls_alert_get_name(gnutls_alert_get(tt->session));
    rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "TLS handshake with the %s failed: %s%s%s%s",
               peer, gnutls_strerror(rc), alert ? " (" : "", alert ? alert : "", alert ? ")" : "");
}

rv_transport *rv_tls_server_new(rv_tls_context *ctx, int fd, rv_err *err)
{
    tls_transport *tt = transport_new(ctx, RV_X509_SERVER, fd, err);
    return tt ? &tt->base : NULL;
}

int rv_tls_server_handshake(rv_transport *t, rv_err *err)
{
    if (t->ops != &tls_ops) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR, "not a TLS transport");
        return -1;
    }
    tls_transport *tt = (tls_transport *)t;
    if (tt->established)
        return 1;
    if (tt->failed) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "the TLS handshake already failed");
        return -1;
    }
    /* The loop thread alone uses the session until established, but
     * wait_events takes the lock; so do we, for handshake_wait. */
    pthread_mutex_lock(&tt->lock);
    int rc;
    do
        rc = gnutls_handshake(tt->session);
    while (rc < 0 && rc != GNUTLS_E_AGAIN && !gnutls_error_is_fatal(rc));
    if (rc == GNUTLS_E_AGAIN)
        tt->handshake_wait = gnutls_wants(tt->session);
    pthread_mutex_unlock(&tt->lock);
    if (rc == GNUTLS_E_AGAIN)
        return 0;
    if (rc < 0) {
        report_handshake_failure(tt, rc, "client", err);
        tt->failed = 1;
        return -1;
    }
    tt->tls_up = 1;
    if (tt->ctx->verify_peer) {
        rv_x509_peer_rules rules = {
            .role = RV_X509_CLIENT,
            .ca_file = tt->ctx->ca_file,
            .hostname = NULL,
            .allowed_dns = (const char *const *)tt->ctx->allowed_dns,
        };
        if (rv_x509_verify_peer(tt->session, &rules, &tt->peer_dn, err) < 0) {
            tt->failed = 1;
            return -1;
        }
    }
    RV_DEBUG("fd %d: TLS handshake done (%s), client %s", t->fd,
             gnutls_protocol_get_name(gnutls_protocol_get_version(tt->session)),
             tt->peer_dn ? tt->peer_dn : "not verified");
    tt->established = 1;
    return 1;
}

const char *rv_tls_peer_dn(rv_transport *t)
{
    if (!t || t->ops != &tls_ops)
        return NULL;
    tls_transport *tt = (tls_transport *)t;
    return tt->established ? tt->peer_dn : NULL;
}

int rv_tls_ssf(rv_transport *t)
{
    if (!t || t->ops != &tls_ops || !((tls_transport *)t)->established)
        return 0;
    tls_transport *tt = (tls_transport *)t;
    return (int)gnutls_cipher_get_key_size(gnutls_cipher_get(tt->session)) * 8;
}

/* The client's fd is normally blocking here; if the caller made it
 * non-blocking, wait as gnutls asks. */
static void wait_for_fd(tls_transport *tt)
{
    struct pollfd pfd = { .fd = tt->base.fd, .events = gnutls_wants(tt->session) };
    while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
        ;
}

static int is_ip_address(const char *name)
{
    unsigned char addr[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
}

/* libvirt's server sends the byte 1 once it accepts our certificate and
 * simply closes the connection when it does not. */
static int wait_for_acceptance(tls_transport *tt, rv_err *err)
{
    unsigned char byte = 0;
    ssize_t rc;
    for (;;) {
        rc = gnutls_record_recv(tt->session, &byte, 1);
        if (rc == GNUTLS_E_AGAIN)
            wait_for_fd(tt);
        else if (!recv_goes_on(rc))
            break;
    }
    if (rc == 1 && byte == 1)
        return 0;
    if (rc == 1)
        RV_DEBUG("the server sent %u instead of 1 after the handshake", byte);
    else if (rc < 0)
        RV_DEBUG("reading the server's verdict: %s", gnutls_strerror((int)rc));
    rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
               "the server refused our certificate (not signed by its CA, expired, or DN not allowed)");
    return -1;
}

rv_transport *rv_tls_client_connect(rv_tls_context *ctx, int fd, const char *hostname,
                                    rv_err *err)
{
    tls_transport *tt = transport_new(ctx, RV_X509_CLIENT, fd, err);
    if (!tt)
        return NULL;
    /* "[::1]" as a URI writes it; certificates hold the bare address. */
    char *name = NULL;
    if (hostname) {
        size_t len = strlen(hostname);
        name = len >= 2 && hostname[0] == '[' && hostname[len - 1] == ']'
                   ? strndup(hostname + 1, len - 2) : strdup(hostname);
        if (!name) {
            oom(err);
            goto fail;
        }
        /* Server Name Indication carries DNS names only. */
        if (*name && !is_ip_address(name))
            gnutls_server_name_set(tt->session, GNUTLS_NAME_DNS, name, strlen(name));
    }

    int rc;
    for (;;) {
        rc = gnutls_handshake(tt->session);
        if (rc == GNUTLS_E_AGAIN)
            wait_for_fd(tt);
        else if (rc == 0 || gnutls_error_is_fatal(rc))
            break;
    }
    if (rc < 0) {
        report_handshake_failure(tt, rc, "server", err);
        goto fail;
    }
    tt->tls_up = 1;
    if (ctx->verify_peer) {
        rv_x509_peer_rules rules = {
            .role = RV_X509_SERVER,
            .ca_file = ctx->ca_file,
            .hostname = name && *name ? name : NULL,
            .allowed_dns = NULL,
        };
        if (rv_x509_verify_peer(tt->session, &rules, &tt->peer_dn, err) < 0)
            goto fail;
    }
    if (wait_for_acceptance(tt, err) < 0)
        goto fail;
    RV_DEBUG("fd %d: TLS session with %s up (%s), server %s", fd, name ? name : "(no name)",
             gnutls_protocol_get_name(gnutls_protocol_get_version(tt->session)),
             tt->peer_dn ? tt->peer_dn : "not verified");
    free(name);
    tt->established = 1;
    return &tt->base;

fail:
    free(name);
    tls_close(&tt->base);
    return NULL;
}
