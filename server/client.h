/* One connected client: its transport, buffers, identity, state and
 * driver connection, behind functions (the struct is client.c's).  Only
 * the server loop's thread touches it. */
#ifndef RV_SERVER_CLIENT_H
#define RV_SERVER_CLIENT_H

#include <ev.h>
#include <stdbool.h>
#include <time.h>

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
    /* A download (or console) reads on only while the client's unread
     * output is under this (stream_window_bytes; below max_client_output). */
    size_t stream_window;
    /* What its clients hold is counted here (server/budget.h); NULL: not
     * counted (the admin socket's operators). */
    struct rvs_budget *budget;
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

/* A client's state is two phases that change independently, named here
 * and changed only inside client.c, one checked function per phase: a
 * move the tables below do not list is logged as an internal error and
 * closes the client.
 *
 * Authentication: what the client may send and have run.
 *   TLS_HANDSHAKE       only handshake records; nothing is dispatched.
 *                       Output cap 64 KiB; deadline tls_handshake_timeout.
 *   ANONYMOUS           packets of up to 64 KiB; only the procedures not
 *                       "@auth required" run (AUTH_*), the rest are refused.
 *                       Output cap 64 KiB; deadline auth_timeout.
 *   SASL_LAYER_PENDING  authenticated, but nothing more is read or run
 *                       until the last reply is out in clear and the SASL
 *                       layer wraps the transport.  Full output cap.
 *   AUTHENTICATED       packets of up to RV_FRAME_MAX; every procedure
 *                       (the read-only gate apart).  Full output cap.
 * TLS_HANDSHAKE and ANONYMOUS count against max_anonymous_clients.
 * Moves: TLS_HANDSHAKE -> ANONYMOUS (SASL to do) or AUTHENTICATED;
 *        ANONYMOUS -> AUTHENTICATED, or SASL_LAYER_PENDING (SASL chose a
 *        security layer); SASL_LAYER_PENDING -> AUTHENTICATED. */
typedef enum rvs_auth_phase {
    RVS_AUTH_TLS_HANDSHAKE,
    RVS_AUTH_ANONYMOUS,
    RVS_AUTH_SASL_LAYER_PENDING,
    RVS_AUTH_AUTHENTICATED,
} rvs_auth_phase;

/* I/O: whether the client is read from and written to.
 *   phase                reads  dispatches  writes
 *   OPEN                 yes    yes         yes
 *   PAUSED               no     no          yes: until what held it back is
 *                                           out (in-flight limit, output cap,
 *                                           SASL layer pending)
 *   CLOSING_AFTER_FLUSH  no     no          yes: a refusal, then CLOSING
 *   CLOSING              no     no          no: the server frees it once
 *                                           the callbacks have returned
 * Moves: OPEN <-> PAUSED; OPEN or PAUSED -> CLOSING_AFTER_FLUSH;
 *        any but CLOSING -> CLOSING. */
typedef enum rvs_io_phase {
    RVS_IO_OPEN,
    RVS_IO_PAUSED,
    RVS_IO_CLOSING_AFTER_FLUSH,
    RVS_IO_CLOSING,
} rvs_io_phase;

/* Runs one whole frame (len bytes at frame, length word included, already
 * bounds-checked) and appends any reply to rvs_client_output(c).  Returns
 * 0, or -1 when the frame is so broken that the client must close.  The
 * server sets it on each client it accepts; the client calls only it. */
typedef int (*rvs_dispatcher)(rvs_client *c, const char *frame, size_t len, void *opaque);

/* How a new client starts, from the listener it came in on. */
typedef struct rvs_client_start {
    int readonly;
    const char *from;           /* "local" or address:port, for logs */
    int local;                  /* a Unix socket */
    const rv_peer_identity *peer;   /* Unix sockets: who connected; else NULL */
    int tls_handshake;          /* TLS: the handshake comes first */
    int sasl;                   /* must authenticate with SASL before other calls */
    int min_ssf;                /* with sasl: the least security strength */
} rvs_client_start;

/* Takes ownership of tr (not freed on failure); starts reading.  A client
 * with a TLS handshake or SASL to do starts anonymous, with a deadline. */
rvs_client *rvs_client_new(const rvs_client_env *env, rv_transport *tr,
                           const rvs_client_start *how, unsigned long long serial_no);
/* A client with no transport and no watchers, already authenticated, for
 * driving a dispatcher by hand (unit tests, the dispatch fuzzer): its
 * replies pile up in rvs_client_output(). */
rvs_client *rvs_client_new_detached(const rvs_client_env *env, unsigned long long serial_no);

void rvs_client_set_dispatcher(rvs_client *c, rvs_dispatcher fn, void *opaque);

/* ---- identity, for checks and logs ---- */

/* Who the client is, for logs: "client 7 (uid 0 pid 123)", "client 8
 * (192.0.2.1:4000, DN C=GB,CN=a, SASL user bob)". */
const char *rvs_client_name(rvs_client *c, char *buf, size_t len);
/* True the first time the client calls procedure proc (below
 * RVS_UNSUPPORTED_PROCS) and it is refused as unsupported, so that the
 * refusal is logged once per client: 64 bytes, only for a client that
 * met one. */
#define RVS_UNSUPPORTED_PROCS 512
bool rvs_client_first_unsupported(rvs_client *c, int proc);
unsigned long long rvs_client_serial_no(const rvs_client *c);
/* For the admin program: when it connected, how (a Unix socket, TLS,
 * else plain TCP), "local" or its address:port, the DN of its verified
 * certificate and its SASL user (NULL when there is none). */
time_t rvs_client_connected_at(const rvs_client *c);
int rvs_client_is_local(const rvs_client *c);
int rvs_client_is_tls(const rvs_client *c);
const char *rvs_client_from(const rvs_client *c);
const char *rvs_client_x509_dn(const rvs_client *c);
const char *rvs_client_sasl_user(const rvs_client *c);
/* Unix sockets: SO_PEERCRED at accept time; zeros elsewhere. */
const rv_peer_identity *rvs_client_peer(const rvs_client *c);
int rvs_client_is_readonly(const rvs_client *c);
/* CONNECT_OPEN asked for read-only: there is no way back. */
void rvs_client_make_readonly(rvs_client *c);

/* ---- state (see the phase tables above) ---- */

rvs_auth_phase rvs_client_auth_phase(const rvs_client *c);
/* AUTHENTICATED or SASL_LAYER_PENDING: may run "@auth required" calls. */
int rvs_client_is_authenticated(const rvs_client *c);
/* TLS_HANDSHAKE or ANONYMOUS: counted in max_anonymous_clients. */
int rvs_client_is_anonymous(const rvs_client *c);
int rvs_client_is_closing(const rvs_client *c);

/* ---- SASL, for the AUTH_SASL_ handlers ---- */

/* The exchange under way, or NULL. */
struct rv_sasl *rvs_client_sasl(const rvs_client *c);
/* Replaces (and frees) the exchange under way; s may be NULL. */
void rvs_client_set_sasl(rvs_client *c, struct rv_sasl *s);
/* The strength the transport already gives (TLS, or a local socket):
 * SASL's external SSF. */
int rvs_client_transport_ssf(const rvs_client *c);
/* The SASL strength this client's listener asks for. */
int rvs_client_min_ssf(const rvs_client *c);
const char *const *rvs_client_sasl_allowed_users(const rvs_client *c);
/* SASL finished as `user` (ANONYMOUS -> AUTHENTICATED, or with
 * security_layer -> SASL_LAYER_PENDING, the exchange kept for the layer;
 * without, the exchange is freed).  -1, nothing changed, when out of
 * memory. */
int rvs_client_sasl_done(rvs_client *c, const char *user, int security_layer);

/* ---- the hypervisor connection (CONNECT_OPEN) ---- */

/* NULL before CONNECT_OPEN and after CONNECT_CLOSE. */
rv_driver_conn *rvs_client_driver_conn(const rvs_client *c);
const rv_driver *rvs_client_driver(const rvs_client *c);
const char *rvs_client_uri(const rvs_client *c);
/* Takes ownership of conn (opened by drv) and uri. */
void rvs_client_attach_driver(rvs_client *c, const rv_driver *drv, rv_driver_conn *conn,
                              char *uri);
/* Closes the connection, if any, and drops the event subscriptions that
 * belong to it. */
void rvs_client_detach_driver(rvs_client *c);
rvs_subscriptions *rvs_client_subscriptions(rvs_client *c);

/* ---- output ---- */

/* Where replies are appended (the dispatcher's output). */
rv_buf *rvs_client_output(rvs_client *c);
/* Keep large buffers for reuse on the calling thread (the loop's);
 * 0, or -1 out of memory. */
int rvs_client_keep_spares(void);
/* Free the buffers kept for the next client (at the server's end). */
void rvs_client_free_spares(void);

/* Write what is queued now; arm the write watcher if the socket is full.
 * A client that leaves output unread while one of its memory budgets is
 * past its limit is closed, with the reason logged. */
void rvs_client_flush(rvs_client *c);

/* Queue a packet the client did not ask for (an event, a PING) and return
 * where its copy starts in the output, for the caller to patch; the caller
 * flushes.  A client whose unread output would pass its output cap, or
 * that has output unread and would pass its memory budget, is closed
 * instead, with the reason logged, and NULL returned. */
char *rvs_client_queue_unsolicited(rvs_client *c, const char *frame, size_t len);

/* Unsolicited packets were queued outside the client's own call: write
 * them with its reply if it is in one, else ask the server (env's
 * want_flush, once per batch) to write them before the loop sleeps. */
void rvs_client_flush_soon(rvs_client *c);

/* ---- calls answered later ----
 * A call whose driver must wait (on QEMU) is answered after its handler
 * returned (dispatch.c's deferred replies).  The client keeps such calls
 * on a list, only to count them against max_client_requests until their
 * replies are written, and to let go of them when it is freed: their
 * `client` then becomes NULL and their completion just frees them. */
typedef struct rvs_pending {
    rvs_client *client;
    struct rvs_pending *prev, *next;
} rvs_pending;

void rvs_client_pending_add(rvs_client *c, rvs_pending *p);
/* p's reply is queued (or will never be): it no longer waits. */
void rvs_client_pending_remove(rvs_pending *p);

/* ---- descriptors (Unix sockets: CALL_WITH_FDS, REPLY_WITH_FDS) ---- */

/* The most descriptors one call may carry (libvirt's limit too), and the
 * most a client may have waiting either way. */
#define RVS_CLIENT_FDS_MAX 32
/* Whether c's transport can pass descriptors (a Unix socket). */
int rvs_client_passes_fds(const rvs_client *c);
/* Inside the dispatch of a CALL_WITH_FDS: its descriptors (*n of them);
 * a handler that keeps one sets its slot to -1, the rest are closed when
 * the dispatch returns. */
int *rvs_client_call_fds(rvs_client *c, unsigned *n);
/* Send fd after what is queued now (one carrier byte, the descriptor
 * attached); takes fd on success.  -1 (fd still the caller's) when
 * RVS_CLIENT_FDS_MAX are already waiting or memory runs out. */
int rvs_client_queue_fd(rvs_client *c, int fd);

/* ---- streams (server/stream.c) ---- */

/* The head of the client's list of open streams. */
struct rvs_stream **rvs_client_streams(rvs_client *c);
size_t rvs_client_stream_window(const rvs_client *c);
struct ev_loop *rvs_client_loop(const rvs_client *c);
/* Data a stream of the client holds for an endpoint that has not taken
 * it yet (upload, console input) grew by `more` bytes: counted in the
 * client's memory budget.  -1 if that takes the budget past its limit:
 * the stream should give the data up and fail (a warning is logged). */
int rvs_client_stream_held(rvs_client *c, size_t more);
/* ... or shrank by `less` bytes. */
void rvs_client_stream_released(rvs_client *c, size_t less);
/* A stream whose endpoint cannot take more data yet holds reading from
 * the client (counted); the last release reads on. */
void rvs_client_hold_reading(rvs_client *c);
void rvs_client_release_reading(rvs_client *c);

/* ---- closing ---- */

/* Send what is queued, then close (a refusal the client should read). */
void rvs_client_close_after_flush(rvs_client *c);
/* Stops its watchers and asks the server to close it (idempotent). */
void rvs_client_close(rvs_client *c, const char *why);
/* The bytes it holds (buffers, stream data, its own struct), as last
 * counted in its memory budget. */
size_t rvs_client_memory(const rvs_client *c);
/* Frees everything; only from outside the client's callbacks. */
void rvs_client_free(rvs_client *c);

/* Start PINGing a client that said it answers them (no-op if disabled by
 * keepalive_interval = -1 or already started). */
void rvs_client_start_keepalive(rvs_client *c);

/* ---- the server's lists ---- */

/* The server keeps its clients on lists linked through the clients
 * themselves, so that joining and leaving allocate nothing: the members
 * (connected, or closed and waiting to be freed) and those to flush. */
void rvs_client_list_push(rvs_client **head, rvs_client *c);
void rvs_client_list_unlink(rvs_client **head, rvs_client *c);
rvs_client *rvs_client_list_next(const rvs_client *c);
/* The flush list, fed by env's want_flush: pop returns the next client
 * to write (NULL at the end) and lets it ask again. */
void rvs_client_flush_list_push(rvs_client **head, rvs_client *c);
rvs_client *rvs_client_flush_list_pop(rvs_client **head);

#endif
