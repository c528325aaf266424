/* One connected client: its transport, buffers, identity and driver
 * connection.  Only the server loop's thread touches it. */
#ifndef RV_SERVER_CLIENT_H
#define RV_SERVER_CLIENT_H

#include <ev.h>

#include "auth/peercred.h"
#include "common/util.h"
#include "server/events.h"
#include "server/drivers/driver.h"
#include "transport/transport.h"

typedef struct rvs_client rvs_client;

/* What the client side of the server needs from the server. */
typedef struct rvs_client_env {
    struct ev_loop *loop;
    int max_client_requests;
    int handshake_timeout;      /* seconds for a TLS client to finish its handshake */
    int auth_timeout;           /* seconds for a client to authenticate */
    int keepalive_interval;     /* seconds of silence before a PING; -1: never */
    int keepalive_count;        /* unanswered PINGs before the client is dropped */
    /* Bytes a client may leave unread, whatever they are (replies, errors,
     * PONGs, PINGs, events).  At the cap remvirtd stops reading from it;
     * an event or PING that would pass the cap closes it. */
    size_t max_client_output;
    int output_timeout;         /* seconds a client may stay at the cap before it is closed */
    const char *const *sasl_allowed_users;  /* globs; NULL: any */
    /* Called once when the client must go; the server frees it later,
     * outside the client's own callbacks. */
    void (*on_close)(rvs_client *c, void *opaque);
    /* Called when events were queued for a client outside its own call:
     * the server writes them before the loop next sleeps, after the
     * reply of whoever caused them, one write per client per batch. */
    void (*want_flush)(rvs_client *c, void *opaque);
    /* Called once when a client that started anonymous (TLS handshake or
     * SASL to do) has authenticated. */
    void (*on_authenticated)(rvs_client *c, void *opaque);
    void *opaque;
} rvs_client_env;

struct rvs_client {
    const rvs_client_env *env;
    rv_transport *tr;
    ev_io read_watcher;
    ev_io write_watcher;
    ev_timer deadline;          /* drops a client that does not finish its
                                 * TLS handshake or authentication in time */
    ev_timer output_deadline;   /* drops a client that stays at the output cap */
    rv_buf in;                  /* bytes read, not yet dispatched */
    rv_buf out;                 /* encoded replies and events not yet written */
    int inflight;               /* calls whose replies are not all written */
    /* Keepalive, once the client asked for it (CONNECT_SUPPORTS_FEATURE 10). */
    ev_timer keepalive;
    ev_tstamp last_heard;       /* when the client last sent anything */
    int pings_unanswered;
    /* Event subscriptions, in registration order. */
    rvs_subscription *subs;
    int nsubs, subs_cap;
    int last_callback_id;
    unsigned long long serial_no;   /* the server's number for this client, for logs */
    char from[80];              /* "local" or the peer's address:port */
    rv_peer_identity peer;      /* Unix sockets */
    char *x509_dn;              /* TLS: the verified client certificate's DN */
    char *sasl_user;            /* the SASL user it authenticated as */
    struct rv_sasl *sasl;       /* the SASL exchange under way */
    int min_ssf;                /* the SASL security strength this listener needs */
    unsigned readonly : 1;      /* came in on the read-only socket or opened read-only */
    unsigned authenticated : 1;
    unsigned closing : 1;
    unsigned reading_paused : 1;
    unsigned handshaking : 1;   /* TLS handshake not finished: no packets yet */
    unsigned anonymous : 1;     /* counted in max_anonymous_clients */
    unsigned local : 1;         /* came in on a Unix socket */
    unsigned sasl_layer_next : 1;   /* wrap the transport once the output is out;
                                     * nothing is read or dispatched until then */
    unsigned close_after_flush : 1; /* a refusal is queued: close once it is sent */
    unsigned read_wants_write : 1;  /* TLS: a read can go on once the fd is writable */
    unsigned dispatching : 1;       /* inside one of its own calls */
    unsigned flush_queued : 1;      /* on the server's list of clients to write to */
    /* The hypervisor connection opened by CONNECT_OPEN. */
    const rv_driver *drv;
    rv_driver_conn *drv_conn;
    char *uri;
    rvs_client *prev, *next;    /* the server's list */
    rvs_client *flush_next;     /* the server's list of clients to write to */
};

/* How a new client starts, from the listener it came in on. */
typedef struct rvs_client_start {
    int readonly;
    const char *from;           /* "local" or address:port, for logs */
    int local;                  /* a Unix socket */
    int tls_handshake;          /* TLS: the handshake comes first */
    int sasl;                   /* must authenticate with SASL before other calls */
    int min_ssf;                /* with sasl: the least security strength */
} rvs_client_start;

/* Takes ownership of tr (not freed on failure); starts reading.  A client
 * with a TLS handshake or SASL to do starts anonymous, with a deadline. */
rvs_client *rvs_client_new(const rvs_client_env *env, rv_transport *tr,
                           const rvs_client_start *how, unsigned long long serial_no);

/* Who the client is, for logs: "client 7 (uid 0 pid 123)", "client 8
 * (192.0.2.1:4000, DN C=GB,CN=a, SASL user bob)". */
const char *rvs_client_name(rvs_client *c, char *buf, size_t len);

/* The SASL exchange finished: the client may call anything now. */
void rvs_client_authenticated(rvs_client *c);

/* Send what is queued, then close (a refusal the client should read). */
void rvs_client_close_after_flush(rvs_client *c);
/* Stops its watchers and asks the server to close it (idempotent). */
void rvs_client_close(rvs_client *c, const char *why);
/* Frees everything; only from outside the client's callbacks. */
void rvs_client_free(rvs_client *c);

/* Write what is queued in c->out now; arm the write watcher if the socket is full. */
void rvs_client_flush(rvs_client *c);

/* Queue a packet the client did not ask for (an event, a PING) and return
 * where its copy starts in c->out, for the caller to patch; the caller
 * flushes.  A client whose unread output would pass its output cap is
 * closed instead, with the reason logged, and NULL returned. */
char *rvs_client_queue_unsolicited(rvs_client *c, const char *frame, size_t len);

/* Start PINGing a client that said it answers them (no-op if disabled by
 * keepalive_interval = -1 or already started). */
void rvs_client_start_keepalive(rvs_client *c);

#endif
