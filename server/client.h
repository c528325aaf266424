/* One connected client: its transport, buffers, identity and driver
 * connection.  Only the server loop's thread touches it. */
#ifndef RV_SERVER_CLIENT_H
#define RV_SERVER_CLIENT_H

#include <ev.h>

#include "auth/peercred.h"
#include "common/util.h"
#include "server/drivers/driver.h"
#include "transport/transport.h"

typedef struct rvs_client rvs_client;

/* What the client side of the server needs from the server. */
typedef struct rvs_client_env {
    struct ev_loop *loop;
    int max_client_requests;
    int handshake_timeout;      /* seconds for a TLS client to finish its handshake */
    /* Called once when the client must go; the server frees it later,
     * outside the client's own callbacks. */
    void (*on_close)(rvs_client *c, void *opaque);
    void *opaque;
} rvs_client_env;

struct rvs_client {
    const rvs_client_env *env;
    rv_transport *tr;
    ev_io read_watcher;
    ev_io write_watcher;
    ev_timer handshake_timer;   /* TLS: drops a client that never finishes */
    rv_buf in;                  /* bytes read, not yet dispatched */
    rv_buf out;                 /* encoded replies not yet written */
    int inflight;               /* calls whose replies are not all written */
    unsigned long long serial_no;   /* the server's number for this client, for logs */
    char from[80];              /* "local" or the peer's address:port */
    rv_peer_identity peer;      /* Unix sockets */
    char *x509_dn;              /* TLS: the verified client certificate's DN */
    unsigned readonly : 1;      /* came in on the read-only socket or opened read-only */
    unsigned authenticated : 1;
    unsigned closing : 1;
    unsigned reading_paused : 1;
    unsigned handshaking : 1;   /* TLS handshake not finished: no packets yet */
    unsigned read_wants_write : 1;  /* TLS: a read can go on once the fd is writable */
    /* The hypervisor connection opened by CONNECT_OPEN. */
    const rv_driver *drv;
    rv_driver_conn *drv_conn;
    char *uri;
    rvs_client *prev, *next;    /* the server's list */
};

/* Takes ownership of tr (not freed on failure); starts reading, or with
 * tls_handshake, starts the TLS handshake and its timer. */
rvs_client *rvs_client_new(const rvs_client_env *env, rv_transport *tr, int readonly,
                           unsigned long long serial_no, const char *from, int tls_handshake);
/* Stops its watchers and asks the server to close it (idempotent). */
void rvs_client_close(rvs_client *c, const char *why);
/* Frees everything; only from outside the client's callbacks. */
void rvs_client_free(rvs_client *c);

/* Write what is queued in c->out now; arm the write watcher if the socket is full. */
void rvs_client_flush(rvs_client *c);

#endif
