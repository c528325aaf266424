/* TLS transport (gnutls) for both sides, with libvirt's x509 policy:
 * the server checks its own certificate at start, verifies each client's
 * certificate and DN, and then sends the byte 1; the client verifies the
 * server's chain and name and waits for that byte. */
#ifndef RV_TRANSPORT_TLS_H
#define RV_TRANSPORT_TLS_H

#include "common/error.h"
#include "transport/transport.h"

/* Where the certificates are.  crl_file may be NULL or name a file that
 * does not exist (then no CRL is used).  On the client, cert_file and
 * key_file may both be missing files: then no client certificate is sent. */
typedef struct rv_tls_files {
    const char *ca_file;
    const char *cert_file;
    const char *key_file;
    const char *crl_file;
} rv_tls_files;

/* libvirt's default locations. */
#define RV_TLS_DEFAULT_CA_FILE "/etc/pki/CA/cacert.pem"
#define RV_TLS_DEFAULT_CRL_FILE "/etc/pki/CA/cacrl.pem"
#define RV_TLS_DEFAULT_SERVER_CERT "/etc/pki/libvirt/servercert.pem"
#define RV_TLS_DEFAULT_SERVER_KEY "/etc/pki/libvirt/private/serverkey.pem"
#define RV_TLS_DEFAULT_CLIENT_CERT "/etc/pki/libvirt/clientcert.pem"
#define RV_TLS_DEFAULT_CLIENT_KEY "/etc/pki/libvirt/private/clientkey.pem"

typedef struct rv_tls_server_policy {
    const char *priority;       /* gnutls priority string; NULL: "NORMAL" */
    int verify_client;          /* 0: tls_no_verify_certificate = 1 */
    const char *const *allowed_dns;  /* NULL-terminated globs; NULL: any DN */
    int sanity_check;           /* 0: tls_no_sanity_certificate = 1 */
} rv_tls_server_policy;

typedef struct rv_tls_client_policy {
    const char *priority;       /* NULL: "NORMAL" */
    int verify_server;          /* 0: no_verify=1 (skips chain and name checks) */
    int sanity_check;           /* check our own certificate first; 0: no_sanity=1 */
} rv_tls_client_policy;

typedef struct rv_tls_context rv_tls_context;

/* Load the files and (with sanity_check) check the server's own
 * certificate: dates, key usage, TLS-server purpose, chain to the CA.  A
 * failure names the file and the reason. */
rv_tls_context *rv_tls_server_context_new(const rv_tls_files *files,
                                          const rv_tls_server_policy *policy, rv_err *err);
/* The client's files: under pkipath (cacert.pem, clientcert.pem,
 * clientkey.pem, cacrl.pem, as libvirt), else the defaults above for root
 * and $HOME/.pki/libvirt/ for other users.  Strings in *out are malloc'd;
 * free them with rv_tls_files_free. */
int rv_tls_client_files(const char *pkipath, rv_tls_files *out, rv_err *err);
void rv_tls_files_free(rv_tls_files *files);
rv_tls_context *rv_tls_client_context_new(const rv_tls_files *files,
                                          const rv_tls_client_policy *policy, rv_err *err);
/* Transports made from ctx hold a reference of their own: free it as soon
 * as no more transports are to be made. */
void rv_tls_context_free(rv_tls_context *ctx);

/* Transports made here are non-blocking once their fd has O_NONBLOCK
 * (read/write fail with EAGAIN; see wait_events), and then one thread may
 * read while another writes.  A write that failed with EAGAIN may be
 * retried with a longer buffer that starts with the same bytes (not a
 * shorter one: EINVAL). */

/* Server side: wrap an accepted non-blocking fd (owned by the transport
 * from now on, even on failure).  Then call rv_tls_server_handshake from
 * the loop until it returns 1 or -1. */
rv_transport *rv_tls_server_new(rv_tls_context *ctx, int fd, rv_err *err);
/* One non-blocking step: 0 = wait for rv_transport_wait_events(t, POLLIN)
 * and call again; 1 = handshake done, client certificate verified and DN
 * allowed (the caller now sends the byte 1); -1 = failed, err names why
 * (unknown CA, expired, DN not allowed, ...). */
int rv_tls_server_handshake(rv_transport *t, rv_err *err);
/* The verified peer's DN, as tls_allowed_dn_list matches it (on the
 * server the client's; valid until close), or NULL when not verified. */
const char *rv_tls_peer_dn(rv_transport *t);
/* The key size of an established session's cipher in bits (what SASL
 * counts as its external SSF); 0 for a transport that is not TLS. */
int rv_tls_ssf(rv_transport *t);

/* Client side: a connected blocking fd (owned from now on, even on
 * failure); handshakes, verifies the server for `hostname` (SAN or CN;
 * an IPv6 address bare or in brackets; NULL or "" skips the name check),
 * waits for the server's byte 1 and returns the transport. */
rv_transport *rv_tls_client_connect(rv_tls_context *ctx, int fd, const char *hostname,
                                    rv_err *err);

#endif
