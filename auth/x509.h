/* libvirt's x509 policy, for both ends of a TLS session: what our own
 * certificate must be before we use it (the sanity check), and what we
 * accept from the peer after a handshake (chain, dates, revocation, then
 * the server's host name or the client's DN).  transport/tls.c does the
 * session plumbing and calls these. */
#ifndef RV_AUTH_X509_H
#define RV_AUTH_X509_H

#include <gnutls/gnutls.h>

#include "common/error.h"

/* Whose certificate it is: sets the key purpose wanted and the wording. */
typedef enum rv_x509_role { RV_X509_SERVER, RV_X509_CLIENT } rv_x509_role;

/* A PEM file as read: its path, for messages, and its bytes. */
typedef struct rv_x509_pem {
    char *path;
    gnutls_datum_t data;
} rv_x509_pem;

/* Read `path`; `what` names it in errors ("CA certificate", ...).
 * Returns 1, 0 if `optional` and the file does not exist (pem stays
 * empty), or -1 with err naming the file and the errno text. */
int rv_x509_pem_read(rv_x509_pem *pem, const char *path, const char *what, int optional,
                     rv_err *err);
void rv_x509_pem_clear(rv_x509_pem *pem);

/* Check our own certificate before it is used: every certificate in the
 * CA file is a CA (basicConstraints) and in date; the first certificate in
 * `cert` matches `key`, is in date, permits digital signatures (and key
 * encipherment, where its key usage is critical), has role's TLS purpose
 * if it lists purposes, and chains to the CA file (and is not revoked by
 * `crl`, which may be NULL).  The error names the file and the reason. */
int rv_x509_check_own(rv_x509_role role, const rv_x509_pem *cert, const rv_x509_pem *key,
                      const rv_x509_pem *ca, const rv_x509_pem *crl, rv_err *err);

/* What the peer's certificate must satisfy. */
typedef struct rv_x509_peer_rules {
    rv_x509_role role;                  /* the peer's role */
    const char *ca_file;                /* named when the peer's CA is unknown */
    const char *hostname;               /* a server's name (SAN or CN); NULL: unchecked */
    const char *const *allowed_dns;     /* DN globs (NULL-terminated); NULL: any DN */
} rv_x509_peer_rules;

/* After a handshake: the peer's chain against the session's trusted CAs
 * and CRLs (signature, dates, revocation), then its host name or DN.
 * Returns 0 and, if dn is not NULL, the peer's DN in *dn (malloc'd), or -1
 * with err (RV_ERR_AUTH_FAILED) naming the cause. */
int rv_x509_verify_peer(gnutls_session_t session, const rv_x509_peer_rules *rules, char **dn,
                        rv_err *err);


#endif
