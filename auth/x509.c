#include "auth/x509.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/x509.h>

#include "auth/glob.h"
#include "common/log.h"

RV_LOG_CATEGORY("auth.x509");

/* Certificate files are small; a system CA bundle is a few hundred KB. */
#define PEM_FILE_MAX (16 * 1024 * 1024)

static const char *role_name(rv_x509_role role)
{
    return role == RV_X509_SERVER ? "server" : "client";
}

static void oom(rv_err *err)
{
    rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
}

int rv_x509_pem_read(rv_x509_pem *pem, const char *path, const char *what, int optional,
                     rv_err *err)
{
    memset(pem, 0, sizeof(*pem));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (optional && errno == ENOENT)
            return 0;
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot read the %s file %s", what, path);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot read the %s file %s", what, path);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > PEM_FILE_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   "the %s file %s is not a regular file of at most %d bytes",
                   what, path, PEM_FILE_MAX);
        close(fd);
        return -1;
    }
    size_t cap = (size_t)st.st_size;
    unsigned char *buf = malloc(cap + 1);
    pem->path = strdup(path);
    if (!buf || !pem->path) {
        free(buf);
        free(pem->path);
        pem->path = NULL;
        close(fd);
        oom(err);
        return -1;
    }
    size_t len = 0;
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot read the %s file %s", what, path);
            free(buf);
            free(pem->path);
            pem->path = NULL;
            close(fd);
            return -1;
        }
        if (n == 0)
            break;          /* shrank while we read: take what is there */
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    pem->data.data = buf;
    pem->data.size = (unsigned)len;
    return 1;
}

void rv_x509_pem_clear(rv_x509_pem *pem)
{
    free(pem->path);
    free(pem->data.data);
    memset(pem, 0, sizeof(*pem));
}

/* The subject DN as libvirt shows it and tls_allowed_dn_list matches it
 * (gnutls' legacy order, e.g. "C=GB,O=remvirt,CN=client1"); NULL on
 * failure. */
static char *subject_dn(gnutls_x509_crt_t crt)
{
    gnutls_datum_t d = { NULL, 0 };
    if (gnutls_x509_crt_get_dn2(crt, &d) < 0)
        return NULL;
    char *dn = strndup((const char *)d.data, d.size);
    gnutls_free(d.data);
    return dn;
}

static void format_time(time_t t, char *out, size_t size)
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        snprintf(out, size, "%lld", (long long)t);
}

/* subject: "the server's certificate /etc/pki/libvirt/servercert.pem" or
 * the like, to start each message. */
static int check_dates(gnutls_x509_crt_t crt, const char *subject, int code, rv_err *err)
{
    time_t now = time(NULL);
    time_t from = gnutls_x509_crt_get_activation_time(crt);
    time_t until = gnutls_x509_crt_get_expiration_time(crt);
    char when[64];
    if (from == (time_t)-1 || until == (time_t)-1) {
        rv_err_set(err, RV_FROM_RPC, code, "%s has unreadable validity dates", subject);
        return -1;
    }
    if (until < now) {
        format_time(until, when, sizeof(when));
        rv_err_set(err, RV_FROM_RPC, code, "%s has expired (on %s)", subject, when);
        return -1;
    }
    if (from > now) {
        format_time(from, when, sizeof(when));
        rv_err_set(err, RV_FROM_RPC, code, "%s is not yet active (valid from %s)", subject, when);
        return -1;
    }
    return 0;
}

/* Why a chain did not verify, from gnutls' status bits; the most basic
 * cause first (an unknown CA makes the other bits meaningless).  role is
 * the certificate owner's: a client reads that the server's CA is
 * unknown, a server's log that the client's is not one it knows. */
static void report_chain_status(unsigned status, rv_x509_role role, gnutls_x509_crt_t leaf,
                                const char *subject, const char *ca_file, int code, rv_err *err)
{
    if (status & GNUTLS_CERT_SIGNER_NOT_FOUND) {
        rv_err_set(err, RV_FROM_RPC, code, role == RV_X509_SERVER
                       ? "%s is signed by an unknown CA (check the CA file %s)"
                       : "%s is not signed by a known CA (check the CA file %s)",
                   subject, ca_file);
    } else if (status & GNUTLS_CERT_SIGNER_NOT_CA) {
        rv_err_set(err, RV_FROM_RPC, code, "%s is signed by a certificate that is not a CA",
                   subject);
    } else if (status & GNUTLS_CERT_REVOKED) {
        rv_err_set(err, RV_FROM_RPC, code, "%s was revoked by its CA (listed in the CRL)", subject);
    } else if (status & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED)) {
        /* The leaf's own dates give the clearest message; otherwise it is
         * a CA certificate above it. */
        if (check_dates(leaf, subject, code, err) == 0)
            rv_err_set(err, RV_FROM_RPC, code, "%s chains to a CA certificate that %s", subject,
                       (status & GNUTLS_CERT_EXPIRED) ? "has expired" : "is not yet active");
    } else if (status & GNUTLS_CERT_SIGNATURE_FAILURE) {
        rv_err_set(err, RV_FROM_RPC, code, "%s carries a signature that does not verify", subject);
    } else if (status & GNUTLS_CERT_INSECURE_ALGORITHM) {
        rv_err_set(err, RV_FROM_RPC, code, "%s is signed with an insecure algorithm", subject);
    } else {
        gnutls_datum_t text = { NULL, 0 };
        int ok = gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509,
                                                              &text, 0) == 0;
        rv_err_set(err, RV_FROM_RPC, code, "%s is not trusted: %s", subject,
                   ok ? (const char *)text.data : "verification failed");
        gnutls_free(text.data);
    }
}

static int import_crts(const rv_x509_pem *pem, const char *what, gnutls_x509_crt_t **list,
                       unsigned *n, rv_err *err)
{
    *list = NULL;
    *n = 0;
    int rc = gnutls_x509_crt_list_import2(list, n, &pem->data, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || *n == 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "the %s file %s holds no usable "
                   "certificate: %s", what, pem->path,
                   rc < 0 ? gnutls_strerror(rc) : "none found");
        *list = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

static void free_crts(gnutls_x509_crt_t *list, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        gnutls_x509_crt_deinit(list[i]);
    gnutls_free(list);
}

static int check_is_ca(gnutls_x509_crt_t crt, const char *ca_file, rv_err *err)
{
    unsigned critical = 0, is_ca = 0;
    int pathlen = 0;
    int rc = gnutls_x509_crt_get_basic_constraints(crt, &critical, &is_ca, &pathlen);
    if (rc >= 0 && is_ca)
        return 0;
    char *dn = subject_dn(crt);
    rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
               "the CA file %s holds '%s', which is not a CA certificate (%s)", ca_file,
               dn ? dn : "?", rc < 0 ? "no basicConstraints" : "basicConstraints CA:FALSE");
    free(dn);
    return -1;
}

static int check_key_matches(gnutls_x509_crt_t crt, const rv_x509_pem *cert,
                             const rv_x509_pem *key, rv_err *err)
{
    gnutls_x509_privkey_t pk;
    if (gnutls_x509_privkey_init(&pk) < 0) {
        oom(err);
        return -1;
    }
    int rc = gnutls_x509_privkey_import2(pk, &key->data, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   "the private key file %s holds no usable key: %s", key->path,
                   gnutls_strerror(rc));
        gnutls_x509_privkey_deinit(pk);
        return -1;
    }
    unsigned char crt_id[64], key_id[64];
    size_t crt_len = sizeof(crt_id), key_len = sizeof(key_id);
    int r1 = gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA256, crt_id, &crt_len);
    int r2 = gnutls_x509_privkey_get_key_id(pk, GNUTLS_KEYID_USE_SHA256, key_id, &key_len);
    gnutls_x509_privkey_deinit(pk);
    if (r1 < 0 || r2 < 0 || crt_len != key_len || memcmp(crt_id, key_id, crt_len) != 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   "the private key %s does not match the certificate %s",
                   key->path, cert->path);
        return -1;
    }
    return 0;
}

/* TLS signs with the key whatever the key exchange, so a key usage that
 * lacks digitalSignature is unusable; keyEncipherment (RSA key exchange)
 * is required as libvirt does: when the extension is critical. */
static int check_key_usage(gnutls_x509_crt_t crt, const char *subject, rv_err *err)
{
    unsigned usage = 0, critical = 0;
    int rc = gnutls_x509_crt_get_key_usage(crt, &usage, &critical);
    if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
        return 0;
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "%s has an unreadable key usage: %s",
                   subject, gnutls_strerror(rc));
        return -1;
    }
    if (!(usage & GNUTLS_KEY_DIGITAL_SIGNATURE)) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   "%s does not permit digital signatures (key usage)", subject);
        return -1;
    }
    if (!(usage & GNUTLS_KEY_KEY_ENCIPHERMENT)) {
        if (critical) {
            rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                       "%s does not permit key encipherment (critical key usage)", subject);
            return -1;
        }
        RV_WARN("%s does not permit key encipherment (key usage)", subject);
    }
    return 0;
}

static int check_purpose(gnutls_x509_crt_t crt, rv_x509_role role, const char *subject,
                         rv_err *err)
{
    /* No extended key usage at all: fit for any purpose. */
    char oid[128];
    size_t oid_size = sizeof(oid);
    if (gnutls_x509_crt_get_key_purpose_oid(crt, 0, oid, &oid_size, NULL) ==
        GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
        return 0;
    const char *want = role == RV_X509_SERVER ? GNUTLS_KP_TLS_WWW_SERVER : GNUTLS_KP_TLS_WWW_CLIENT;
    if (gnutls_x509_crt_check_key_purpose(crt, want, 0))
        return 0;
    rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
               "%s is not meant for a TLS %s (its key purpose lacks TLS WWW %s)", subject,
               role_name(role), role_name(role));
    return -1;
}

int rv_x509_check_own(rv_x509_role role, const rv_x509_pem *cert, const rv_x509_pem *key,
                      const rv_x509_pem *ca, const rv_x509_pem *crl, rv_err *err)
{
    gnutls_x509_crt_t *cas = NULL, *chain = NULL;
    unsigned ncas = 0, nchain = 0;
    gnutls_x509_trust_list_t trust = NULL;
    char *subject = NULL;
    int ret = -1;

    if (import_crts(ca, "CA certificate", &cas, &ncas, err) < 0)
        goto out;
    for (unsigned i = 0; i < ncas; i++) {
        char *dn = subject_dn(cas[i]);
        char *ca_subject = NULL;
        if (asprintf(&ca_subject, "the CA certificate '%s' in %s", dn ? dn : "?", ca->path) < 0)
            ca_subject = NULL;
        free(dn);
        if (!ca_subject) {
            oom(err);
            goto out;
        }
        int bad = check_is_ca(cas[i], ca->path, err) < 0 ||
                  check_dates(cas[i], ca_subject, RV_ERR_SYSTEM_ERROR, err) < 0;
        free(ca_subject);
        if (bad)
            goto out;
    }

    if (import_crts(cert, "certificate", &chain, &nchain, err) < 0)
        goto out;
    if (asprintf(&subject, "the %s's certificate %s", role_name(role), cert->path) < 0) {
        subject = NULL;
        oom(err);
        goto out;
    }
    if (check_key_matches(chain[0], cert, key, err) < 0 ||
        check_dates(chain[0], subject, RV_ERR_SYSTEM_ERROR, err) < 0 ||
        check_key_usage(chain[0], subject, err) < 0 ||
        check_purpose(chain[0], role, subject, err) < 0)
        goto out;

    /* The trust list parses the files itself: ownership stays simple. */
    int rc = gnutls_x509_trust_list_init(&trust, 0);
    if (rc < 0) {
        trust = NULL;
        oom(err);
        goto out;
    }
    rc = gnutls_x509_trust_list_add_trust_mem(trust, &ca->data, crl ? &crl->data : NULL,
                                              GNUTLS_X509_FMT_PEM, 0, 0);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot load the CA file %s%s%s: %s",
                   ca->path, crl ? " or the CRL file " : "", crl ? crl->path : "",
                   gnutls_strerror(rc));
        goto out;
    }
    unsigned status = 0;
    rc = gnutls_x509_trust_list_verify_crt2(trust, chain, nchain, NULL, 0, 0, &status, NULL);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot verify %s: %s", subject,
                   gnutls_strerror(rc));
        goto out;
    }
    if (status != 0) {
        report_chain_status(status, role, chain[0], subject, ca->path, RV_ERR_SYSTEM_ERROR,
                            err);
        goto out;
    }
    RV_DEBUG("%s passed the sanity check", subject);
    ret = 0;
out:
    if (trust)
        gnutls_x509_trust_list_deinit(trust, 1);
    free_crts(cas, ncas);
    free_crts(chain, nchain);
    free(subject);
    return ret;
}

int rv_x509_verify_peer(gnutls_session_t session, const rv_x509_peer_rules *rules, char **dn_out,
                        rv_err *err)
{
    const char *who = role_name(rules->role);
    char subject[32];
    snprintf(subject, sizeof(subject), "the %s's certificate", who);

    unsigned n = 0;
    const gnutls_datum_t *peer = gnutls_certificate_get_peers(session, &n);
    if (!peer || n == 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "the %s sent no certificate", who);
        return -1;
    }
    gnutls_x509_crt_t leaf;
    if (gnutls_x509_crt_init(&leaf) < 0) {
        oom(err);
        return -1;
    }
    char *dn = NULL;
    int ret = -1;
    int rc = gnutls_x509_crt_import(leaf, &peer[0], GNUTLS_X509_FMT_DER);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "cannot parse %s: %s", subject,
                   gnutls_strerror(rc));
        goto out;
    }
    /* The chain against the credentials' CAs and CRLs, with dates. */
    unsigned status = 0;
    rc = gnutls_certificate_verify_peers2(session, &status);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "cannot verify %s: %s", subject,
                   gnutls_strerror(rc));
        goto out;
    }
    if (status != 0) {
        report_chain_status(status, rules->role, leaf, subject, rules->ca_file,
                            RV_ERR_AUTH_FAILED, err);
        goto out;
    }
    /* SAN DNS and IP entries, or the CN when there are none. */
    if (rules->hostname && !gnutls_x509_crt_check_hostname(leaf, rules->hostname)) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "%s does not match the host name '%s'", subject, rules->hostname);
        goto out;
    }
    dn = subject_dn(leaf);
    if (!dn) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED, "cannot read the DN of %s", subject);
        goto out;
    }
    if (!rv_glob_list_match(rules->allowed_dns, dn)) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_AUTH_FAILED,
                   "%s DN '%s' is not in tls_allowed_dn_list", who, dn);
        goto out;
    }
    RV_DEBUG("verified the %s's certificate: %s", who, dn);
    if (dn_out) {
        *dn_out = dn;
        dn = NULL;
    }
    ret = 0;
out:
    free(dn);
    gnutls_x509_crt_deinit(leaf);
    return ret;
}
