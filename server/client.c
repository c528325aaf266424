#include "server/client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <time.h>
#include <unistd.h>

#include "common/buf_store.h"
#include "common/log.h"
#include "rv_keepalive.h"
#include "server/budget.h"
#include "server/drivers/work_pool.h"
#include "server/stream.h"
#include "transport/frame.h"
#include "transport/sasl.h"
#include "transport/socket.h"
#include "transport/tls.h"

RV_LOG_CATEGORY("server.client");

struct rvs_client {
    const rvs_client_env *env;
    rv_transport *tr;
    rvs_dispatcher dispatch;
    void *dispatch_opaque;
    rvs_auth_phase auth;        /* see the phase tables in client.h */
    rvs_io_phase io;
    ev_io read_watcher;
    ev_io write_watcher;
    ev_timer deadline;          /* drops a client that does not finish its
                                 * TLS handshake or authentication in time */
    ev_timer output_deadline;   /* drops a client that stays at the output cap */
    unsigned long long out_written;     /* bytes written to its socket, in all */
    unsigned long long read_mark;       /* peer_read() when output_deadline last started */
    rv_buf in;                  /* bytes read, not yet dispatched */
    rv_buf out;                 /* encoded replies and events not yet written */
    size_t stream_held;         /* data its streams hold for their endpoints */
    rvs_budget_share mem;       /* where all that is counted (server/budget.h) */
    int inflight;               /* calls whose replies are not all written */
    int npending;               /* of those, calls answered later (deferred) */
    rvs_pending *pending;       /* their list */
    /* Keepalive, once the client asked for it (CONNECT_SUPPORTS_FEATURE 10). */
    ev_timer keepalive;
    ev_tstamp last_heard;       /* when the client last sent anything */
    int pings_unanswered;
    rvs_subscriptions subs;
    struct rvs_stream *streams; /* open data streams (server/stream.c) */
    int read_holds;             /* streams whose endpoint is full */
    unsigned long long serial_no;   /* the server's number for this client, for logs */
    char from[80];              /* "local" or the peer's address:port */
    time_t connected_at;        /* for the admin program's client list */
    rv_peer_identity peer;      /* Unix sockets */
    char *x509_dn;              /* TLS: the verified client certificate's DN */
    char *sasl_user;            /* the SASL user it authenticated as */
    struct rv_sasl *sasl;       /* the SASL exchange under way */
    struct handshake_job *handshake;    /* TLS: its steps' job, until done */
    int min_ssf;                /* the SASL security strength this listener needs */
    unsigned readonly : 1;      /* came in on the read-only socket or opened read-only */
    unsigned local : 1;         /* came in on a Unix socket */
    unsigned tls : 1;           /* came in on a TLS listener */
    unsigned sasl_required : 1; /* its listener wants SASL (after any TLS handshake) */
    unsigned read_wants_write : 1;  /* TLS: a read can go on once the fd is writable */
    unsigned dispatching : 1;       /* inside one of its own calls */
    unsigned flush_queued : 1;      /* on the server's list of clients to write to */
    unsigned yielded : 1;           /* waits on the yield queue with calls buffered */
    unsigned write_yielded : 1;     /* its output waits for the next pass, not the peer */
    /* The hypervisor connection opened by CONNECT_OPEN. */
    const rv_driver *drv;
    rv_driver_conn *drv_conn;
    char *uri;
    /* Procedures refused as unsupported that were logged already: a bit
     * per procedure number, allocated at the first refusal. */
    unsigned char *unsupported_logged;
    rvs_client *prev, *next;    /* the server's list */
    rvs_client *flush_next;     /* the server's list of clients to write to */
    rvs_client *yield_prev, *yield_next;    /* the yield queue (yielded set) */
    struct client_fds *fds;     /* descriptors passed either way; NULL until one is */
};

/* Descriptors passed over a Unix socket (docs/wire-protocol.md, 14).
 * Each comes in with the one carrier byte that follows its CALL_WITH_FDS
 * and waits in `in` until that call is dispatched, which gets them in
 * `call` (what it does not take is closed after it); each a reply sends
 * waits in `out` for its carrier byte to be written.  Allocated at the
 * first descriptor, so that clients that pass none pay nothing. */
struct client_fds {
    int in[RVS_CLIENT_FDS_MAX];
    unsigned nin;
    int call[RVS_CLIENT_FDS_MAX];
    unsigned ncall;
    struct {
        unsigned long long at;  /* its carrier byte's offset in the output stream */
        int fd;
    } out[RVS_CLIENT_FDS_MAX];
    unsigned nout;
    unsigned long long written; /* output bytes written so far */
};

/* Enough for any small call in one read; bigger frames grow the buffer
 * toward their (already checked) length as their bytes come.  Both buffers are given back as soon as
 * they are empty, so a quiet client holds none: at 10,000 idle clients
 * that is the difference between ~0.6 KiB and ~9 KiB each
 * (bench/run-idle-clients.sh).  The last one given back in each
 * direction is kept (spare_in, spare_out) for the next client that needs
 * one: a client calling again and again then neither allocates nor frees
 * them per call (malloc and free were a fifth of the daemon's
 * instructions per GetInfo). */
#define RVS_READ_CHUNK 16384
/* The largest buffer kept as a spare.  A client with a stream open keeps
 * its own buffers (counted in its memory budget) until the stream is
 * done: each of its packets would otherwise map, fault in and unmap a
 * buffer of its size, which doubled the daemon's CPU per MiB uploaded. */
#define RVS_SPARE_MAX 65536
/* The largest packet before authentication (length word included). */
#define RVS_PREAUTH_FRAME_MAX 65536
/* The output cap before authentication: a stranger's replies are a few
 * small AUTH_ answers, so it may make the daemon hold little more. */
#define RVS_PREAUTH_OUTPUT_MAX 65536
/* What a paused client must read of its output for its output deadline
 * to start again: a slow honest reader reads far more in
 * client_output_timeout; a peer that takes a few bytes now and then is
 * not reading. */
#define RVS_OUTPUT_PROGRESS (64 * 1024)

/* Unread output at which a client's further calls wait (calls_output_cap). */
#define RVS_CALLS_OUTPUT_MAX (1u << 20)
/* The external SSF of a Unix socket: nothing outside the host sees it. */
#define RVS_LOCAL_SSF 256
/* What a client costs before any buffer, counted in its memory budget so
 * that connections that send nothing count too: the struct, its
 * transport and the allocator's and libev's share, rounded up. */
#define RVS_CLIENT_BASE_COST (sizeof(struct rvs_client) + 512)

static rv_buf spare_in, spare_out;     /* the loop is one thread */

/* One loop pass serves a client's buffered calls until the pass has run
 * RVS_PASS_BUDGET seconds (wall time since the poll returned, which
 * bounds the loop's CPU time in it), at least one call each time a client
 * is served; the rest of its batch waits on the yield queue, which is
 * served first in the next pass, in the order the clients yielded, so
 * that a client pipelining many calls (or large ones) neither holds the
 * loop for milliseconds nor starves the others.  A client's calls keep
 * their order: it reads nothing more while it waits.  A client whose
 * buffer is empty after a call (a synchronous caller) never looks at the
 * clock.  0.2 ms leaves room under the loop stall detector's 1 ms for
 * the call that crosses it (a 400 KB definition read or written back
 * costs the loop 0.5 to 1 ms, mostly page faults; 0.5 ms let passes
 * reach 1.9 ms in test-client-threads). */
#define RVS_PASS_BUDGET 0.0002

static struct {
    rvs_client *head, *tail;
    ev_check resume;            /* serves the queue in the next pass */
    ev_idle nosleep;            /* while it is not empty: the poll does not wait */
} yield_queue;

/* A TLS handshake's steps run on a work thread (server/drivers/work_pool.h):
 * gnutls' key exchange, signature and the client certificate's checks
 * were the loop's longest passes (up to 77.7 ms of CPU in one).  One
 * step is one non-blocking gnutls call; between steps the loop waits for
 * the socket and keeps the deadline, so a peer that stalls holds no
 * thread.  While a step runs the loop leaves the transport alone (its
 * watchers are stopped); a client closed meanwhile gives the transport
 * to the job, which closes it when the step is back. */
typedef struct handshake_job {
    rv_work work;
    rvs_client *client;         /* NULL: closed meanwhile */
    rv_transport *tr;
    int running;                /* a step is with the pool */
    int rc;                     /* rv_tls_server_handshake's */
    rv_err err;
} handshake_job;

static struct client_fds *client_fds(rvs_client *c)
{
    if (!c->fds)
        c->fds = calloc(1, sizeof(*c->fds));
    return c->fds;
}

static void close_fds(int *fds, unsigned *n)
{
    while (*n > 0)
        close(fds[--*n]);
}

/* b is empty: keep it as the spare if there is none, else free it. */
static void give_back(rv_buf *b, rv_buf *spare)
{
    if (rv_buf_used(b) != 0 || !b->data)
        return;
    if (spare->data || b->cap > RVS_SPARE_MAX) {
        rv_buf_shrink(b, 0);
        return;
    }
    *spare = *b;
    spare->start = spare->len = 0;
    memset(b, 0, sizeof(*b));
}

/* b has no memory: take the spare, if any. */
static void take_spare(rv_buf *b, rv_buf *spare)
{
    if (!b->data && spare->data) {
        *b = *spare;
        memset(spare, 0, sizeof(*spare));
    }
}

/* Buffers over RVS_SPARE_MAX go back to the system when they empty; each
 * is its own mapping (main.c), so the next large call maps one again and
 * faults every page of it in: with 400 KB calls that was most of the
 * passes with 1 ms of the loop's CPU in test-client-threads and test-ssh.
 * The loop thread keeps a few of them (common/buf_store.h) for the
 * next large packet or reply, at most RVS_STORE_TOTAL bytes together, the
 * same whoever made them: what peers make the daemon hold rises by no
 * more than that.  8 MiB, not 4: a 1 MB reply's call holds its document
 * (2 MiB, grown from the 1 MiB it outgrew) and the output (1 or 2 MiB)
 * at once, and with 4 MiB the output was a fresh mapping every call. */
#define RVS_STORE_MIN (128 * 1024)
#define RVS_STORE_EACH (4 * 1024 * 1024)
#define RVS_STORE_TOTAL (8 * 1024 * 1024)
#define RVS_STORE_SLOTS 8

int rvs_client_keep_spares(void)
{
    return rv_buf_store_start(RVS_STORE_MIN, RVS_STORE_EACH, RVS_STORE_TOTAL, RVS_STORE_SLOTS);
}

void rvs_client_free_spares(void)
{
    rv_buf_free(&spare_in);
    rv_buf_free(&spare_out);
    rv_buf_store_stop();
}

static void on_readable(struct ev_loop *loop, ev_io *w, int revents);
static void on_writable(struct ev_loop *loop, ev_io *w, int revents);

static void handshake_step(rvs_client *c);
static void on_keepalive(struct ev_loop *loop, ev_timer *w, int revents);

/* ---- the phases (their tables are in client.h) ---- */

static const char *const auth_phase_names[] = {
    [RVS_AUTH_TLS_HANDSHAKE] = "TLS handshake",
    [RVS_AUTH_ANONYMOUS] = "anonymous",
    [RVS_AUTH_SASL_LAYER_PENDING] = "SASL layer pending",
    [RVS_AUTH_AUTHENTICATED] = "authenticated",
};

static const char *const io_phase_names[] = {
    [RVS_IO_OPEN] = "open",
    [RVS_IO_PAUSED] = "paused",
    [RVS_IO_CLOSING_AFTER_FLUSH] = "closing after flush",
    [RVS_IO_CLOSING] = "closing",
};

static int auth_move_allowed(rvs_auth_phase from, rvs_auth_phase to)
{
    switch (from) {
    case RVS_AUTH_TLS_HANDSHAKE:
        return to == RVS_AUTH_ANONYMOUS || to == RVS_AUTH_AUTHENTICATED;
    case RVS_AUTH_ANONYMOUS:
        return to == RVS_AUTH_AUTHENTICATED || to == RVS_AUTH_SASL_LAYER_PENDING;
    case RVS_AUTH_SASL_LAYER_PENDING:
        return to == RVS_AUTH_AUTHENTICATED;
    case RVS_AUTH_AUTHENTICATED:
        break;
    }
    return 0;
}

static int io_move_allowed(rvs_io_phase from, rvs_io_phase to)
{
    switch (from) {
    case RVS_IO_OPEN:
        return to == RVS_IO_PAUSED || to == RVS_IO_CLOSING_AFTER_FLUSH || to == RVS_IO_CLOSING;
    case RVS_IO_PAUSED:
        return to == RVS_IO_OPEN || to == RVS_IO_CLOSING_AFTER_FLUSH || to == RVS_IO_CLOSING;
    case RVS_IO_CLOSING_AFTER_FLUSH:
        return to == RVS_IO_CLOSING;
    case RVS_IO_CLOSING:
        break;
    }
    return 0;
}

/* A bug, not the client's doing; in production the client goes rather
 * than the daemon. */
static void illegal_move(rvs_client *c, const char *phase, const char *from, const char *to)
{
    char name[256];
    RV_ERROR("%s: internal error: its %s phase cannot go from %s to %s; closing it",
             rvs_client_name(c, name, sizeof(name)), phase, from, to);
    rvs_client_close(c, "internal error: illegal state change");
}

/* Inside this file the phase tests are inline: they sit on every call's
 * path, and the exported wrappers below cannot be inlined from a PIC
 * object. */
static inline int phase_is_anonymous(rvs_auth_phase p)
{
    return p == RVS_AUTH_TLS_HANDSHAKE || p == RVS_AUTH_ANONYMOUS;
}

static inline int phase_is_authenticated(rvs_auth_phase p)
{
    return p == RVS_AUTH_AUTHENTICATED || p == RVS_AUTH_SASL_LAYER_PENDING;
}

static void start_deadline(rvs_client *c, int seconds)
{
    ev_timer_stop(c->env->loop, &c->deadline);
    ev_timer_set(&c->deadline, seconds, 0.);
    ev_timer_start(c->env->loop, &c->deadline);
}

/* The one place the authentication phase changes, with what comes with
 * it: the auth deadline, and leaving the anonymous count.  -1 (and the
 * client closed) on a move the table does not list. */
static int set_auth_phase(rvs_client *c, rvs_auth_phase to)
{
    if (!auth_move_allowed(c->auth, to)) {
        illegal_move(c, "authentication", auth_phase_names[c->auth], auth_phase_names[to]);
        return -1;
    }
    int was_anonymous = phase_is_anonymous(c->auth);
    c->auth = to;
    if (to == RVS_AUTH_ANONYMOUS) {
        start_deadline(c, c->env->auth_timeout);
    } else if (was_anonymous) {
        ev_timer_stop(c->env->loop, &c->deadline);
        c->env->on_authenticated(c, c->env->opaque);
    }
    return 0;
}

/* The one place the I/O phase changes.  Outside the TLS handshake (which
 * drives the watchers itself) the read watcher runs exactly while OPEN.
 * -1 (and the client closed) on a move the table does not list. */
static int set_io_phase(rvs_client *c, rvs_io_phase to)
{
    if (!io_move_allowed(c->io, to)) {
        illegal_move(c, "I/O", io_phase_names[c->io], io_phase_names[to]);
        return -1;
    }
    c->io = to;
    if (to == RVS_IO_OPEN)
        ev_io_start(c->env->loop, &c->read_watcher);
    else
        ev_io_stop(c->env->loop, &c->read_watcher);
    return 0;
}

static inline int reading(const rvs_client *c)
{
    return c->io == RVS_IO_OPEN;
}

/* ---- life ---- */

/* The deadline for what an anonymous client must do first: its TLS
 * handshake, then (with SASL) its authentication. */
static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_client *c = w->data;
    char name[256];
    rvs_client_name(c, name, sizeof(name));
    if (c->auth == RVS_AUTH_TLS_HANDSHAKE) {
        RV_WARN("%s: no TLS handshake within %d s; closing it", name,
                c->env->handshake_timeout);
        rvs_client_close(c, "TLS handshake timed out");
    } else {
        RV_WARN("%s: not authenticated within auth_timeout (%d s); closing it", name,
                c->env->auth_timeout);
        rvs_client_close(c, "authentication timed out");
    }
}

/* What this client may leave unread before remvirtd stops reading it. */
static size_t output_cap(const rvs_client *c)
{
    size_t cap = c->env->max_client_output;
    return !phase_is_authenticated(c->auth) && cap > RVS_PREAUTH_OUTPUT_MAX
               ? RVS_PREAUTH_OUTPUT_MAX : cap;
}

/* What c's unread output may reach before its buffered calls wait (they
 * run again once it is all on the wire): RVS_CALLS_OUTPUT_MAX, or the cap
 * if lower.  A client pipelining big calls (test-tls: twelve 1 MB
 * replies) otherwise filled its output to the cap, a buffer larger than
 * the loop's store keeps (common/buf_store.c: 4 MiB a buffer), so every
 * reply was encoded into freshly faulted pages, unmapped again once
 * drained, and a peer made the daemon hold the cap.  A client with a stream open keeps
 * the cap: its downloads fill the output to the stream window on their
 * own, and its calls (a PING, the stream's finish) must not wait on them. */
static size_t calls_output_cap(const rvs_client *c)
{
    size_t cap = output_cap(c);
    return !c->streams && cap > RVS_CALLS_OUTPUT_MAX ? RVS_CALLS_OUTPUT_MAX : cap;
}

/* ---- the memory budget ---- */

/* Re-state what c holds after its buffers changed: a few integer
 * operations (server/budget.h), and only a comparison on a call's path,
 * where both buffers are back with the spares by the time it is counted
 * (the spares are the daemon's, not counted while a client borrows one
 * unchanged). */
static inline void charge(rvs_client *c)
{
    size_t now = RVS_CLIENT_BASE_COST + c->in.cap + c->out.cap + c->stream_held;
    if (now != c->mem.held && c->mem.user)
        rvs_budget_hold(&c->mem, now);
}

/* The first of c's budgets that `more` bytes would take past its limit. */
static inline const rvs_budget_bucket *over_budget(const rvs_client *c, size_t more)
{
    return c->mem.user ? rvs_budget_over(&c->mem, more) : NULL;
}

static void close_over_budget(rvs_client *c, const rvs_budget_bucket *b, const char *what)
{
    char name[256], budget[256];
    RV_WARN("%s: %s would take %s past its limit; closing it",
            rvs_client_name(c, name, sizeof(name)), what,
            rvs_budget_describe(&c->mem, b, budget, sizeof(budget)));
    rvs_client_close(c, "memory budget exhausted");
}

/* Whom c's memory counts for: its uid on a Unix socket; on the network
 * its SASL user or certificate DN once authenticated, all the others in
 * one bucket. */
static void budget_name(const rvs_client *c, char *buf, size_t len)
{
    if (c->local)
        snprintf(buf, len, "uid %u", (unsigned)c->peer.uid);
    else if (phase_is_authenticated(c->auth) && c->sasl_user)
        snprintf(buf, len, "SASL user %s", c->sasl_user);
    else if (phase_is_authenticated(c->auth) && c->x509_dn)
        snprintf(buf, len, "certificate DN %s", c->x509_dn);
    else
        snprintf(buf, len, "network clients without an identity");
}

/* Counted anew after c's identity or read-only flag changed.  -1 (and c
 * closed) when out of memory. */
static int budget_rejoin(rvs_client *c)
{
    if (!c->mem.user)
        return 0;
    char name[512];
    budget_name(c, name, sizeof(name));
    if (rvs_budget_join(&c->mem, c->mem.budget, name, c->readonly) < 0) {
        rvs_client_close(c, "out of memory");
        return -1;
    }
    return 0;
}

int rvs_client_stream_held(rvs_client *c, size_t more)
{
    const rvs_budget_bucket *b = over_budget(c, more);
    if (b) {
        char name[256], budget[256];
        RV_WARN("%s: %zu more bytes of stream data would take %s past its limit; failing "
                "the stream", rvs_client_name(c, name, sizeof(name)), more,
                rvs_budget_describe(&c->mem, b, budget, sizeof(budget)));
        return -1;
    }
    c->stream_held += more;
    charge(c);
    return 0;
}

void rvs_client_stream_released(rvs_client *c, size_t less)
{
    c->stream_held -= less;
    charge(c);
}

/* A client that stayed at its output cap (or with calls waiting at
 * calls_output_cap) for output_timeout: it reads nothing, and what it
 * left unread is held for nobody. */
static void on_output_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_client *c = w->data;
    char name[256];
    RV_WARN("%s: %zu bytes of output left unread for %d s (its calls wait from %zu bytes; "
            "output cap %zu bytes, max_client_output_bytes); closing it",
            rvs_client_name(c, name, sizeof(name)), rv_buf_used(&c->out),
            c->env->output_timeout, calls_output_cap(c), output_cap(c));
    rvs_client_close(c, "output unread past client_output_timeout");
}

/* Zeroed, with its watchers set up but not started, fd -1 without a
 * transport. */
static rvs_client *client_alloc(const rvs_client_env *env, rv_transport *tr,
                                unsigned long long serial_no)
{
    rvs_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->env = env;
    c->tr = tr;
    c->serial_no = serial_no;
    c->connected_at = time(NULL);
    int fd = tr ? tr->fd : -1;
    ev_io_init(&c->read_watcher, on_readable, fd, EV_READ);
    ev_io_init(&c->write_watcher, on_writable, fd, EV_WRITE);
    c->read_watcher.data = c;
    c->write_watcher.data = c;
    ev_timer_init(&c->deadline, on_deadline, 0., 0.);
    c->deadline.data = c;
    ev_timer_init(&c->output_deadline, on_output_deadline, 0., 0.);
    c->output_deadline.data = c;
    ev_timer_init(&c->keepalive, on_keepalive, 0., 0.);
    c->keepalive.data = c;
    return c;
}

rvs_client *rvs_client_new(const rvs_client_env *env, rv_transport *tr,
                           const rvs_client_start *how, unsigned long long serial_no)
{
    rvs_client *c = client_alloc(env, tr, serial_no);
    if (!c)
        return NULL;
    c->readonly = how->readonly ? 1 : 0;
    c->min_ssf = how->min_ssf;
    c->local = how->local ? 1 : 0;
    c->tls = how->tls_handshake ? 1 : 0;
    c->sasl_required = how->sasl ? 1 : 0;
    if (how->peer)
        c->peer = *how->peer;
    snprintf(c->from, sizeof(c->from), "%s", how->from);
    c->io = RVS_IO_OPEN;
    /* The client speaks first (a TLS hello); the handshake runs from the
     * watchers, never from here, where the server does not list c yet.
     * With SASL only the AUTH_ procedures run until it is done; with auth
     * "none" a client may call anything at once. */
    c->auth = how->tls_handshake ? RVS_AUTH_TLS_HANDSHAKE
              : how->sasl        ? RVS_AUTH_ANONYMOUS
                                 : RVS_AUTH_AUTHENTICATED;
    if (env->budget) {
        char name[512];
        budget_name(c, name, sizeof(name));
        c->mem.held = RVS_CLIENT_BASE_COST;
        if (rvs_budget_join(&c->mem, env->budget, name, c->readonly) < 0) {
            free(c);
            return NULL;
        }
    }
    if (c->auth != RVS_AUTH_AUTHENTICATED)
        start_deadline(c, how->tls_handshake ? env->handshake_timeout : env->auth_timeout);
    ev_io_start(env->loop, &c->read_watcher);
    return c;
}

rvs_client *rvs_client_new_detached(const rvs_client_env *env, unsigned long long serial_no)
{
    rvs_client *c = client_alloc(env, NULL, serial_no);
    if (!c)
        return NULL;
    snprintf(c->from, sizeof(c->from), "detached");
    c->io = RVS_IO_OPEN;
    c->auth = RVS_AUTH_AUTHENTICATED;
    return c;
}

void rvs_client_set_dispatcher(rvs_client *c, rvs_dispatcher fn, void *opaque)
{
    c->dispatch = fn;
    c->dispatch_opaque = opaque;
}

const char *rvs_client_name(rvs_client *c, char *buf, size_t len)
{
    if (strcmp(c->from, "local") == 0)
        snprintf(buf, len, "client %llu (pid %d uid %u gid %u%s%s)", c->serial_no,
                 (int)c->peer.pid, (unsigned)c->peer.uid, (unsigned)c->peer.gid,
                 c->sasl_user ? ", SASL user " : "", c->sasl_user ? c->sasl_user : "");
    else
        snprintf(buf, len, "client %llu (%s%s%s%s%s)", c->serial_no, c->from,
                 c->x509_dn ? ", DN " : "", c->x509_dn ? c->x509_dn : "",
                 c->sasl_user ? ", SASL user " : "", c->sasl_user ? c->sasl_user : "");
    return buf;
}

/* ---- accessors ---- */

time_t rvs_client_connected_at(const rvs_client *c)
{
    return c->connected_at;
}

int rvs_client_is_local(const rvs_client *c)
{
    return c->local;
}

int rvs_client_is_tls(const rvs_client *c)
{
    return c->tls;
}

const char *rvs_client_from(const rvs_client *c)
{
    return c->from;
}

const char *rvs_client_x509_dn(const rvs_client *c)
{
    return c->x509_dn;
}

const char *rvs_client_sasl_user(const rvs_client *c)
{
    return c->sasl_user;
}

unsigned long long rvs_client_serial_no(const rvs_client *c)
{
    return c->serial_no;
}

const rv_peer_identity *rvs_client_peer(const rvs_client *c)
{
    return &c->peer;
}

int rvs_client_is_readonly(const rvs_client *c)
{
    return c->readonly;
}

void rvs_client_make_readonly(rvs_client *c)
{
    if (c->readonly)
        return;
    c->readonly = 1;
    budget_rejoin(c);
}

rvs_auth_phase rvs_client_auth_phase(const rvs_client *c)
{
    return c->auth;
}

int rvs_client_is_authenticated(const rvs_client *c)
{
    return phase_is_authenticated(c->auth);
}

int rvs_client_is_anonymous(const rvs_client *c)
{
    return phase_is_anonymous(c->auth);
}

int rvs_client_is_closing(const rvs_client *c)
{
    return c->io == RVS_IO_CLOSING;
}

struct rv_sasl *rvs_client_sasl(const rvs_client *c)
{
    return c->sasl;
}

void rvs_client_set_sasl(rvs_client *c, struct rv_sasl *s)
{
    if (c->sasl != s)
        rv_sasl_free(c->sasl);
    c->sasl = s;
}

int rvs_client_transport_ssf(const rvs_client *c)
{
    return c->local ? RVS_LOCAL_SSF : rv_tls_ssf(c->tr);
}

int rvs_client_min_ssf(const rvs_client *c)
{
    return c->min_ssf;
}

const char *const *rvs_client_sasl_allowed_users(const rvs_client *c)
{
    return c->env->sasl_allowed_users;
}

int rvs_client_sasl_done(rvs_client *c, const char *user, int security_layer)
{
    char *copy = strdup(user);
    if (!copy)
        return -1;
    free(c->sasl_user);
    c->sasl_user = copy;
    /* With a layer, the last reply goes out in clear and the exchange
     * becomes the layer; without one it has nothing more to do. */
    if (set_auth_phase(c, security_layer ? RVS_AUTH_SASL_LAYER_PENDING
                                         : RVS_AUTH_AUTHENTICATED) == 0 && !security_layer)
        rvs_client_set_sasl(c, NULL);
    budget_rejoin(c);
    return 0;
}

rv_driver_conn *rvs_client_driver_conn(const rvs_client *c)
{
    return c->drv_conn;
}

const rv_driver *rvs_client_driver(const rvs_client *c)
{
    return c->drv;
}

bool rvs_client_first_unsupported(rvs_client *c, int proc)
{
    if (proc < 0 || proc >= RVS_UNSUPPORTED_PROCS)
        return false;
    if (!c->unsupported_logged && !(c->unsupported_logged = calloc(RVS_UNSUPPORTED_PROCS / 8, 1)))
        return false;
    unsigned char bit = (unsigned char)(1u << (proc % 8));
    if (c->unsupported_logged[proc / 8] & bit)
        return false;
    c->unsupported_logged[proc / 8] |= bit;
    return true;
}

const char *rvs_client_uri(const rvs_client *c)
{
    return c->uri;
}

void rvs_client_attach_driver(rvs_client *c, const rv_driver *drv, rv_driver_conn *conn,
                              char *uri)
{
    c->drv = drv;
    c->drv_conn = conn;
    c->uri = uri;
}

void rvs_client_detach_driver(rvs_client *c)
{
    if (c->drv_conn)
        c->drv->close(c->drv_conn);
    c->drv_conn = NULL;
    c->drv = NULL;
    free(c->uri);
    c->uri = NULL;
    rvs_events_forget(&c->subs);
}

rvs_subscriptions *rvs_client_subscriptions(rvs_client *c)
{
    return &c->subs;
}

rv_buf *rvs_client_output(rvs_client *c)
{
    take_spare(&c->out, &spare_out);
    return &c->out;
}

/* ---- the server's lists ---- */

void rvs_client_list_push(rvs_client **head, rvs_client *c)
{
    c->prev = NULL;
    c->next = *head;
    if (*head)
        (*head)->prev = c;
    *head = c;
}

void rvs_client_list_unlink(rvs_client **head, rvs_client *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        *head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

rvs_client *rvs_client_list_next(const rvs_client *c)
{
    return c->next;
}

void rvs_client_flush_list_push(rvs_client **head, rvs_client *c)
{
    c->flush_next = *head;
    *head = c;
}

rvs_client *rvs_client_flush_list_pop(rvs_client **head)
{
    rvs_client *c = *head;
    if (c) {
        *head = c->flush_next;
        c->flush_next = NULL;
        c->flush_queued = 0;
    }
    return c;
}

void rvs_client_flush_soon(rvs_client *c)
{
    /* A client in the middle of its own call sends with its reply. */
    if (c->dispatching || c->flush_queued || !c->env->want_flush)
        return;         /* (no want_flush: a detached client, flushed by hand) */
    c->flush_queued = 1;
    c->env->want_flush(c, c->env->opaque);
}

/* ---- calls answered later ---- */

void rvs_client_pending_add(rvs_client *c, rvs_pending *p)
{
    p->client = c;
    p->prev = NULL;
    p->next = c->pending;
    if (c->pending)
        c->pending->prev = p;
    c->pending = p;
    c->npending++;
}

void rvs_client_pending_remove(rvs_pending *p)
{
    rvs_client *c = p->client;
    if (!c)
        return;
    if (p->prev)
        p->prev->next = p->next;
    else
        c->pending = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
    p->client = NULL;
    c->npending--;
}

/* ---- streams ---- */

struct rvs_stream **rvs_client_streams(rvs_client *c)
{
    return &c->streams;
}

size_t rvs_client_stream_window(const rvs_client *c)
{
    return c->env->stream_window;
}

struct ev_loop *rvs_client_loop(const rvs_client *c)
{
    return c->env->loop;
}

void rvs_client_hold_reading(rvs_client *c)
{
    c->read_holds++;
}

void rvs_client_release_reading(rvs_client *c)
{
    if (c->read_holds > 0 && --c->read_holds == 0 && c->io == RVS_IO_PAUSED)
        rvs_client_flush(c);     /* resumes reading (see there) */
}

/* ---- closing ---- */

void rvs_client_close_after_flush(rvs_client *c)
{
    /* Nothing more is read; what is queued goes out, then the close. */
    if (c->io == RVS_IO_OPEN || c->io == RVS_IO_PAUSED)
        set_io_phase(c, RVS_IO_CLOSING_AFTER_FLUSH);
}

static void yield_unlink(rvs_client *c)
{
    if (!c->yielded)
        return;
    c->yielded = 0;
    *(c->yield_prev ? &c->yield_prev->yield_next : &yield_queue.head) = c->yield_next;
    *(c->yield_next ? &c->yield_next->yield_prev : &yield_queue.tail) = c->yield_prev;
    c->yield_prev = c->yield_next = NULL;
    if (!yield_queue.head) {
        ev_check_stop(c->env->loop, &yield_queue.resume);
        ev_idle_stop(c->env->loop, &yield_queue.nosleep);
    }
}

void rvs_client_close(rvs_client *c, const char *why)
{
    if (c->io == RVS_IO_CLOSING)
        return;
    yield_unlink(c);
    set_io_phase(c, RVS_IO_CLOSING);
    char name[256];
    RV_INFO("%s closing: %s", rvs_client_name(c, name, sizeof(name)), why);
    ev_io_stop(c->env->loop, &c->write_watcher);
    ev_timer_stop(c->env->loop, &c->deadline);
    ev_timer_stop(c->env->loop, &c->output_deadline);
    ev_timer_stop(c->env->loop, &c->keepalive);
    /* Its buffers go when the server frees it, before the loop sleeps;
     * the budget has them back now, so that the clients served before
     * then are not refused for what a closed one holds. */
    rvs_budget_leave(&c->mem);
    c->env->on_close(c, c->env->opaque);
}

size_t rvs_client_memory(const rvs_client *c)
{
    return c->mem.held;
}

void rvs_client_free(rvs_client *c)
{
    yield_unlink(c);
    /* Calls still waiting finish without anyone to answer. */
    while (c->pending)
        rvs_client_pending_remove(c->pending);
    /* Before the driver connection their endpoints may belong to. */
    rvs_streams_free_all(c);
    rvs_client_detach_driver(c);
    if (c->handshake && c->handshake->running) {
        c->handshake->client = NULL;
        c->tr = NULL;
    } else {
        free(c->handshake);
    }
    free(c->x509_dn);
    free(c->sasl_user);
    free(c->unsupported_logged);
    rv_sasl_free(c->sasl);
    rv_transport_close(c->tr);
    rv_buf_free(&c->in);
    rv_buf_free(&c->out);
    rvs_budget_leave(&c->mem);
    if (c->fds) {
        close_fds(c->fds->in, &c->fds->nin);
        close_fds(c->fds->call, &c->fds->ncall);
        while (c->fds->nout > 0)
            close(c->fds->out[--c->fds->nout].fd);
        free(c->fds);
    }
    free(c);
}

/* ---- descriptors ---- */

int rvs_client_passes_fds(const rvs_client *c)
{
    return rv_transport_passes_fds(c->tr);
}

int *rvs_client_call_fds(rvs_client *c, unsigned *n)
{
    *n = c->fds ? c->fds->ncall : 0;
    return c->fds ? c->fds->call : NULL;
}

int rvs_client_queue_fd(rvs_client *c, int fd)
{
    struct client_fds *q = client_fds(c);
    if (!q || q->nout >= RVS_CLIENT_FDS_MAX || rv_buf_reserve(&c->out, 1) < 0)
        return -1;
    q->out[q->nout].at = q->written + rv_buf_used(&c->out);
    q->out[q->nout++].fd = fd;
    /* The carrier: one byte, as libvirt sends it. */
    c->out.data[c->out.len++] = 0;
    return 0;
}

/* The descriptors one read brought (n of them at fds): kept for the call
 * they follow.  -1 if c was closed: a stranger may not make the daemon
 * hold descriptors, nor anyone more than a call can take. */
static int took_fds(rvs_client *c, const int *fds, size_t n)
{
    struct client_fds *q = client_fds(c);
    const char *why = !phase_is_authenticated(c->auth) ? "descriptors before authentication"
                      : !q                            ? "out of memory for descriptors"
                      : q->nin + n > RVS_CLIENT_FDS_MAX
                          ? "more descriptors than its calls claim"
                          : NULL;
    for (size_t i = 0; i < n; i++) {
        if (why)
            close(fds[i]);
        else
            q->in[q->nin++] = fds[i];
    }
    if (!why)
        return 0;
    char name[256];
    RV_WARN("%s sent %s; closing it", rvs_client_name(c, name, sizeof(name)), why);
    rvs_client_close(c, why);
    return -1;
}

/* A whole CALL_WITH_FDS frame of len bytes heads c->in: its descriptors
 * move to the call's list once their carrier bytes are in too.  1 when
 * the frame may be dispatched (its carriers are then `*carriers` bytes
 * after it), 0 to wait for more, -1 if c was closed. */
static int claim_call_fds(rvs_client *c, uint32_t len, size_t *carriers)
{
    const char *frame = rv_buf_head(&c->in);
    *carriers = 0;
    if (!rvs_client_passes_fds(c))
        return 1;       /* the dispatcher refuses it and closes c */
    if (len < RV_FRAME_MIN + 4) {
        rvs_client_close(c, "a CALL_WITH_FDS without its descriptor count");
        return -1;
    }
    uint32_t n = rv_frame_peek_len(frame + RV_FRAME_MIN);
    if (n > RVS_CLIENT_FDS_MAX) {
        char name[256];
        RV_WARN("%s: a call with %u descriptors (the limit is %d); closing it",
                rvs_client_name(c, name, sizeof(name)), n, RVS_CLIENT_FDS_MAX);
        rvs_client_close(c, "too many descriptors in one call");
        return -1;
    }
    if (rv_buf_used(&c->in) < (size_t)len + n)
        return 0;
    struct client_fds *q = client_fds(c);
    if (n > 0 && (!q || q->nin < n)) {
        rvs_client_close(c, "descriptor carrier bytes without descriptors");
        return -1;
    }
    if (q) {
        close_fds(q->call, &q->ncall);
        memcpy(q->call, q->in, n * sizeof(int));
        memmove(q->in, q->in + n, (q->nin - n) * sizeof(int));
        q->ncall = n;
        q->nin -= n;
    }
    *carriers = n;
    return 1;
}

/* After a frame ran: what its call did not take is closed, and so are
 * descriptors no bytes still waiting can claim (sent with no call). */
static void drop_unclaimed_fds(rvs_client *c)
{
    struct client_fds *q = c->fds;
    if (!q)
        return;
    close_fds(q->call, &q->ncall);
    if (q->nin > 0 && rv_buf_used(&c->in) == 0) {
        char name[256];
        RV_WARN("%s sent %u descriptors with no call to take them; closed them",
                rvs_client_name(c, name, sizeof(name)), q->nin);
        close_fds(q->in, &q->nin);
    }
}

/* ---- I/O ---- */

/* Watch for exactly the events in `want`. */
static void watch(rvs_client *c, short want)
{
    if (want & POLLIN)
        ev_io_start(c->env->loop, &c->read_watcher);
    else
        ev_io_stop(c->env->loop, &c->read_watcher);
    if (want & POLLOUT)
        ev_io_start(c->env->loop, &c->write_watcher);
    else
        ev_io_stop(c->env->loop, &c->write_watcher);
}

static void handshake_run(rv_work *w)
{
    handshake_job *job = (handshake_job *)w;
    job->rc = rv_tls_server_handshake(job->tr, &job->err);
}

static void handshake_done(rv_work *w);

/* Hand the next step of the TLS handshake to a work thread. */
static void handshake_step(rvs_client *c)
{
    if (!c->handshake) {
        if (!(c->handshake = calloc(1, sizeof(*c->handshake)))) {
            rvs_client_close(c, "out of memory");
            return;
        }
        c->handshake->work.run = handshake_run;
        c->handshake->work.done = handshake_done;
        c->handshake->client = c;
        c->handshake->tr = c->tr;
    }
    if (c->handshake->running)
        return;
    watch(c, 0);
    c->handshake->running = 1;
    rv_work_submit(&c->handshake->work);
}

/* Back on the loop after a step: wait for the socket again, or drop the
 * client, or (done, and the client's certificate passed) send libvirt's
 * go-ahead byte and start serving packets. */
static void handshake_done(rv_work *w)
{
    handshake_job *job = (handshake_job *)w;
    rvs_client *c = job->client;
    job->running = 0;
    if (!c) {
        rv_err_clear(&job->err);
        rv_transport_close(job->tr);
        free(job);
        return;
    }
    if (c->io == RVS_IO_CLOSING) {     /* (its free is still to come) */
        rv_err_clear(&job->err);
        return;
    }
    if (job->rc < 0) {
        RV_WARN("client %llu from %s: TLS handshake failed: %s", c->serial_no, c->from,
                job->err.message ? job->err.message : "unknown error");
        rv_err_clear(&job->err);
        rvs_client_close(c, "TLS handshake failed");
        return;
    }
    if (job->rc == 0) {
        watch(c, rv_transport_wait_events(c->tr, POLLIN));
        return;
    }
    free(job);
    c->handshake = NULL;
    if (set_auth_phase(c, c->sasl_required ? RVS_AUTH_ANONYMOUS : RVS_AUTH_AUTHENTICATED) < 0)
        return;
    const char *dn = rv_tls_peer_dn(c->tr);
    if (dn && !(c->x509_dn = strdup(dn))) {
        rvs_client_close(c, "out of memory");
        return;
    }
    RV_INFO("client %llu from %s: TLS session up%s%s", c->serial_no, c->from,
            dn ? ", certificate DN " : "", dn ? dn : "");
    if (budget_rejoin(c) < 0)
        return;
    if (rv_buf_reserve(&c->out, 1) < 0) {
        rvs_client_close(c, "out of memory");
        return;
    }
    c->out.data[c->out.len++] = 1;
    watch(c, POLLIN);
    rvs_client_flush(c);
    /* Packets that came with the last handshake flight are inside gnutls
     * already and will not make the fd readable. */
    if (c->io != RVS_IO_CLOSING && rv_transport_pending(c->tr) > 0)
        on_readable(c->env->loop, &c->read_watcher, EV_READ);
}

static void pause_reading(rvs_client *c)
{
    if (c->io == RVS_IO_OPEN)
        set_io_phase(c, RVS_IO_PAUSED);
}

/* Whether a whole frame belongs to the keepalive program (its header's
 * first word, right after the length word). */
static int is_keepalive(const char *frame, size_t len)
{
    uint32_t prog;
    if (len < RV_FRAME_MIN)
        return 0;
    memcpy(&prog, frame + RV_LEN_WORD_SIZE, sizeof(prog));
    return ntohl(prog) == RV_KEEPALIVE_PROGRAM;
}

/* The bytes of c's output its peer has read, in all: what was written
 * to the socket less what the kernel still holds in its send queue
 * (SIOCOUTQ: not yet read, on a Unix socket; not yet acknowledged, on
 * TCP; over TLS the records' few extra bytes make it a little less).
 * Bytes written into the kernel are not bytes read: a TCP peer that
 * never reads still let several MiB in, in steps, as the kernel grew the
 * socket's buffers, and each step restarted its deadline
 * (test-output-cap, under load). */
static unsigned long long peer_read(const rvs_client *c)
{
    int queued = 0;
    if (c->tr && c->tr->fd >= 0 && ioctl(c->tr->fd, SIOCOUTQ, &queued) < 0)
        queued = 0;
    unsigned long long q = queued > 0 ? (unsigned long long)queued : 0;
    return c->out_written > q ? c->out_written - q : 0;
}

/* (Re)start the time c may stay paused with its output unread. */
static void start_output_deadline(rvs_client *c)
{
    if (c->env->output_timeout <= 0)
        return;
    ev_timer_stop(c->env->loop, &c->output_deadline);
    ev_timer_set(&c->output_deadline, c->env->output_timeout, 0.);
    ev_timer_start(c->env->loop, &c->output_deadline);
    c->read_mark = peer_read(c);
}

/* Whether c's unread output is at what its calls may leave
 * (calls_output_cap) after writing what the socket takes; if so, reading
 * stops (so the client makes no more) and the output deadline runs.  -1
 * if the client was closed. */
static int output_full(rvs_client *c)
{
    if (rv_buf_used(&c->out) < calls_output_cap(c))
        return 0;
    rvs_client_flush(c);
    if (c->io == RVS_IO_CLOSING)
        return -1;
    if (rv_buf_used(&c->out) < calls_output_cap(c))
        return 0;
    pause_reading(c);
    if (!ev_is_active(&c->output_deadline))
        start_output_deadline(c);
    return 1;
}

static void on_resume(struct ev_loop *loop, ev_check *w, int revents);
static void on_nosleep(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)loop, (void)w, (void)revents;
}

/* Whether this loop pass has used its budget (RVS_PASS_BUDGET). */
static int pass_spent(const rvs_client *c)
{
    return ev_time() - ev_now(c->env->loop) > RVS_PASS_BUDGET;
}

/* c stops reading and waits at the end of the yield queue with what it
 * has buffered. */
static void yield(rvs_client *c)
{
    struct ev_loop *loop = c->env->loop;
    ev_io_stop(loop, &c->read_watcher);
    if (c->yielded)
        return;
    c->yielded = 1;
    c->yield_next = NULL;
    c->yield_prev = yield_queue.tail;
    *(yield_queue.tail ? &yield_queue.tail->yield_next : &yield_queue.head) = c;
    yield_queue.tail = c;
    if (!ev_is_active(&yield_queue.resume)) {
        ev_check_init(&yield_queue.resume, on_resume);
        ev_idle_init(&yield_queue.nosleep, on_nosleep);
        ev_check_start(loop, &yield_queue.resume);
        ev_idle_start(loop, &yield_queue.nosleep);
    }
}

/* Dispatch every whole frame in c->in while the client is under its
 * in-flight limit and its output cap.  Keepalive packets do not count
 * against the in-flight limit (a PING is answered even at it), but their
 * PONGs count against the output cap like everything else.  Returns -1 if
 * the client was closed. */
static int dispatch_buffered(rvs_client *c)
{
    while (reading(c)) {
        if (c->auth == RVS_AUTH_SASL_LAYER_PENDING) {
            /* Authentication finished with a security layer: what follows
             * must come through it, so nothing buffered in clear runs. */
            pause_reading(c);
            return 0;
        }
        if (c->read_holds) {
            /* A stream's endpoint is full: the next packet may be more
             * data for it, so nothing more runs until it drains. */
            pause_reading(c);
            return 0;
        }
        if (rv_buf_used(&c->in) < 4)
            break;
        uint32_t len = rv_frame_peek_len(rv_buf_head(&c->in));
        rv_err err = { 0 };
        /* Before authentication only small AUTH_ calls make sense; an
         * anonymous client cannot make the daemon buffer megabytes. */
        if (rv_frame_check_len(len, c->auth == RVS_AUTH_AUTHENTICATED ? RV_FRAME_MAX
                                                                       : RVS_PREAUTH_FRAME_MAX,
                               &err) < 0) {
            RV_WARN("client %llu: %s; closing it", c->serial_no, err.message);
            rvs_client_close(c, err.message ? err.message : "bad packet length");
            rv_err_clear(&err);
            return -1;
        }
        if (rv_buf_used(&c->in) < len)
            return 0;       /* make_room() grows the buffer as the rest comes */
        int full = output_full(c);
        if (full)
            return full < 0 ? -1 : 0;
        int keepalive = is_keepalive(rv_buf_head(&c->in), len);
        if (!keepalive && c->inflight >= c->env->max_client_requests) {
            /* Replies go out first; what is buffered waits for them. */
            rvs_client_flush(c);
            if (c->io == RVS_IO_CLOSING)
                return -1;
            if (c->inflight >= c->env->max_client_requests) {
                pause_reading(c);
                return 0;
            }
        }
        /* Claimed last: nothing may return between here and dispatch. */
        size_t carriers = 0;
        if (rv_frame_peek_len(rv_buf_head(&c->in) + RV_LEN_WORD_SIZE + 12) == RV_CALL_WITH_FDS) {
            int ready = claim_call_fds(c, len, &carriers);
            if (ready <= 0)
                return ready;
        }
        if (!c->dispatch) {
            RV_ERROR("client %llu: internal error: no dispatcher set; closing it", c->serial_no);
            rvs_client_close(c, "no dispatcher");
            return -1;
        }
        if (!keepalive)
            c->inflight++;
        c->dispatching = 1;
        int rc = c->dispatch(c, rv_buf_head(&c->in), len, c->dispatch_opaque);
        c->dispatching = 0;
        if (rc < 0) {
            rvs_client_close(c, "unparseable packet");
            return -1;
        }
        rv_buf_consume(&c->in, len + carriers);
        drop_unclaimed_fds(c);
        if (rv_buf_used(&c->in) >= 4 && reading(c) && pass_spent(c)) {
            yield(c);
            return 0;
        }
    }
    return c->io == RVS_IO_CLOSING ? -1 : 0;
}

/* Room in c->in for the next read: a chunk while no packet's length is
 * known; then the buffer grows toward that length as its bytes come,
 * doubling, never past it, and only within c's memory budget, so a client
 * that declares 32 MiB and sends little holds little.  -1 if c was closed. */
static int make_room(rvs_client *c)
{
    rv_buf *in = &c->in;
    if (in->len < in->cap)
        return 0;
    size_t used = rv_buf_used(in), cap = RVS_READ_CHUNK;
    if (used >= 4) {
        /* dispatch_buffered() checked this length after the last read. */
        size_t frame = rv_frame_peek_len(rv_buf_head(in));
        cap = used >= frame          ? used + RVS_READ_CHUNK
              : used * 2 < cap       ? cap
              : used * 2 < frame     ? used * 2
                                     : frame;
    }
    if (cap <= in->cap) {
        rv_buf_reserve(in, cap - used);     /* only compacts: cannot fail */
        return 0;
    }
    const rvs_budget_bucket *b = over_budget(c, cap - in->cap);
    if (b) {
        char what[128];
        if (used >= 4)
            snprintf(what, sizeof(what), "reading on into its %u-byte packet (%zu bytes in)",
                     rv_frame_peek_len(rv_buf_head(in)), used);
        else
            snprintf(what, sizeof(what), "reading its next packet");
        close_over_budget(c, b, what);
        return -1;
    }
    if (rv_buf_resize(in, cap) < 0) {
        rvs_client_close(c, "out of memory for an incoming packet");
        return -1;
    }
    charge(c);
    return 0;
}

static void read_some(rvs_client *c)
{
    /* The spare is counted once the batch ends (serve_readable), or when
     * it grows (make_room). */
    take_spare(&c->in, &spare_in);
    if (make_room(c) < 0)
        return;
    ssize_t n;
    if (rvs_client_passes_fds(c)) {
        /* recvmsg: a plain read would drop the descriptors (the kernel
         * closes them) and leave their calls waiting for them. */
        int fds[RV_TRANSPORT_FDS_MAX];
        size_t nfds = 0;
        n = c->tr->ops->read_fds(c->tr, c->in.data + c->in.len, c->in.cap - c->in.len, fds,
                                 RV_TRANSPORT_FDS_MAX, &nfds);
        if (n < 0 && errno == EMSGSIZE) {
            char name[256];
            RV_WARN("%s sent more than %d descriptors at once; closing it",
                    rvs_client_name(c, name, sizeof(name)), RV_TRANSPORT_FDS_MAX);
            rvs_client_close(c, "too many descriptors at once");
            return;
        }
        if (nfds > 0 && took_fds(c, fds, nfds) < 0)
            return;
    } else {
        n = rv_transport_read(c->tr, c->in.data + c->in.len, c->in.cap - c->in.len);
    }
    if (n == 0) {
        rvs_client_close(c, rv_buf_used(&c->in) ? "end of file inside a packet"
                                                : "end of file");
        return;
    }
    if (n < 0) {
        if (errno == EAGAIN && (rv_transport_wait_events(c->tr, POLLIN) & POLLOUT)) {
            /* TLS must send something before it can read on. */
            c->read_wants_write = 1;
            ev_io_start(c->env->loop, &c->write_watcher);
        } else if (errno != EAGAIN && errno != EINTR) {
            rvs_client_close(c, strerror(errno));
        }
        return;
    }
    c->in.len += (size_t)n;
    /* Any byte from the client shows it is alive: no ev_timer call on
     * this path, the keepalive timer looks at the time when it fires. */
    c->last_heard = ev_now(c->env->loop);
    c->pings_unanswered = 0;
}

static void serve_readable(rvs_client *c)
{
    if (c->auth == RVS_AUTH_TLS_HANDSHAKE) {
        handshake_step(c);
        return;
    }
    for (;;) {
        read_some(c);
        if (c->io == RVS_IO_CLOSING || dispatch_buffered(c) < 0)
            return;
        if (!reading(c) || c->yielded || rv_transport_pending(c->tr) == 0)
            break;
        /* Calls TLS or SASL holds already count against the pass's budget
         * like those in c->in: twelve pipelined 1 MB GET_XML_DESC over
         * TLS ran in one pass (test-tls).  The yield queue's turn reads
         * them on. */
        if (pass_spent(c)) {
            yield(c);
            break;
        }
    }
    /* An empty input buffer goes back first, so that the flush's count of
     * what c holds (write_out) is the one this batch needs. */
    if (!c->streams)
        give_back(&c->in, &spare_in);
    /* Write what this batch produced before the loop sleeps.  A client
     * that leaves it unread while a budget is past its limit goes there
     * (within one batch its output cap bounds it). */
    rvs_client_flush(c);
}

static const char *describe_for_log(const void *c, char *buf, size_t len)
{
    return rvs_client_name((rvs_client *)c, buf, len);
}

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_client *c = w->data;
    /* What is logged while serving it names it (structured outputs). */
    rv_log_set_client(c, c->serial_no, describe_for_log);
    serve_readable(c);
    rv_log_set_client(NULL, 0, NULL);
}

/* The first callback of a loop pass after clients yielded (a check
 * watcher runs before the pass's I/O callbacks of its priority): the
 * clients that were waiting longest go first; one that uses up the pass
 * again goes back to the end of the queue. */
static void on_resume(struct ev_loop *loop, ev_check *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    rvs_client *last = yield_queue.tail;
    rvs_client *c;
    do {
        c = yield_queue.head;
        if (!c)
            return;
        yield_unlink(c);
        rv_log_set_client(c, c->serial_no, describe_for_log);
        if (reading(c))
            ev_io_start(loop, &c->read_watcher);
        if (dispatch_buffered(c) == 0) {
            if (!c->yielded && reading(c) && rv_transport_pending(c->tr) > 0)
                serve_readable(c);
            else
                rvs_client_flush(c);
        }
        rv_log_set_client(NULL, 0, NULL);
    } while (c != last && !pass_spent(c));
}

/* The last AUTH_SASL reply is out in clear: from here on every byte goes
 * through the SASL security layer.  Bytes already read came in clear
 * after authentication, which no honest client sends (it waits for that
 * reply): someone on the path appended them, so the client goes.
 * Returns -1 if the client was closed. */
static int start_sasl_layer(rvs_client *c)
{
    rv_err err = { 0 };
    if (set_auth_phase(c, RVS_AUTH_AUTHENTICATED) < 0)
        return -1;
    /* The layer owns both from here, and frees them if it fails. */
    rv_transport *wrapped = rv_sasl_transport_new(c->tr, c->sasl, &err);
    c->tr = NULL;
    c->sasl = NULL;
    if (!wrapped) {
        RV_WARN("client %llu: cannot start the SASL security layer: %s", c->serial_no,
                err.message ? err.message : "unknown error");
        rv_err_clear(&err);
        rvs_client_close(c, "no SASL security layer");
        return -1;
    }
    c->tr = wrapped;
    if (rv_buf_used(&c->in) > 0) {
        char name[256];
        RV_WARN("%s: %zu bytes came in clear after SASL authentication finished with a "
                "security layer (injected by someone on the path?); closing it",
                rvs_client_name(c, name, sizeof(name)), rv_buf_used(&c->in));
        rvs_client_close(c, "clear-text data after the SASL layer was negotiated");
        return -1;
    }
    if (c->io == RVS_IO_PAUSED)
        set_io_phase(c, RVS_IO_OPEN);
    return 0;
}

/* Write what is queued; 1 once everything is on the wire, 0 while the
 * socket is full or the pass has used its budget (the write watcher then
 * finishes), -1 if c was closed. */
static int write_out(rvs_client *c)
{
    c->write_yielded = 0;
    while (c->io != RVS_IO_CLOSING && rv_buf_used(&c->out) > 0) {
        ssize_t n;
        struct client_fds *q = c->fds;
        if (q && q->nout > 0 && q->out[0].at == q->written) {
            /* A descriptor's carrier byte: sent alone with it. */
            n = c->tr->ops->write_fd(c->tr, rv_buf_head(&c->out), 1, q->out[0].fd);
            if (n > 0) {
                close(q->out[0].fd);
                memmove(q->out, q->out + 1, --q->nout * sizeof(q->out[0]));
            }
        } else {
            size_t len = rv_buf_used(&c->out);
            if (q && q->nout > 0 && q->out[0].at - q->written < len)
                len = (size_t)(q->out[0].at - q->written);  /* up to the next carrier */
            n = rv_transport_write(c->tr, rv_buf_head(&c->out), len);
        }
        if (n > 0 && q)
            q->written += (unsigned long long)n;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                ev_io_start(c->env->loop, &c->write_watcher);
                charge(c);      /* for what was queued since */
                return 0;
            }
            rvs_client_close(c, strerror(errno));
            return -1;
        }
        rv_buf_consume(&c->out, (size_t)n);
        c->out_written += (unsigned long long)n;
        /* A large output (a megabyte document, many replies) goes out
         * over several passes, RVS_PASS_BUDGET's worth in each, the rest
         * when the write watcher fires in the next: over TLS each 16 KiB
         * record is encrypted and sent on the loop, and a megabyte of them
         * held it for 3 to 5 ms (test-tls). */
        if (rv_buf_used(&c->out) > 0 && pass_spent(c)) {
            c->write_yielded = 1;
            ev_io_start(c->env->loop, &c->write_watcher);
            charge(c);
            return 0;
        }
    }
    if (c->io == RVS_IO_CLOSING)
        return -1;
    /* Everything queued is on the wire: only the calls answered later are
     * still in flight. */
    c->inflight = c->npending;
    ev_timer_stop(c->env->loop, &c->output_deadline);
    if (c->io == RVS_IO_CLOSING_AFTER_FLUSH) {
        rvs_client_close(c, "refused");
        return -1;
    }
    if (c->auth == RVS_AUTH_SASL_LAYER_PENDING && start_sasl_layer(c) < 0)
        return -1;
    if (!c->read_wants_write)
        ev_io_stop(c->env->loop, &c->write_watcher);
    if (!c->streams)
        give_back(&c->out, &spare_out);
    charge(c);
    return 1;
}

/* Whether the calls still unanswered (deferred) keep c at its limit. */
static inline int pending_at_limit(const rvs_client *c)
{
    return c->npending >= c->env->max_client_requests;
}

void rvs_client_flush(rvs_client *c)
{
    int written = write_out(c);
    /* Output it leaves unread while a budget is past its limit is memory
     * the others cannot have: the client that made it goes. */
    const rvs_budget_bucket *b;
    if (written == 0 && !c->write_yielded && (b = over_budget(c, 0))) {
        char what[96];
        snprintf(what, sizeof(what), "%zu bytes of output it leaves unread",
                 rv_buf_used(&c->out));
        close_over_budget(c, b, what);
        return;
    }
    /* Room in the output: downloads read on (they do not come back here
     * while they fill it). */
    if (written >= 0 && c->streams)
        rvs_streams_output_room(c);
    if (written <= 0 || c->io != RVS_IO_PAUSED || c->dispatching || pending_at_limit(c) ||
        c->read_holds)
        return;
    /* The replies that held reading back are out, whoever wrote them (the
     * write watcher, the batch before the loop sleeps, an event's flush):
     * catch up on what is buffered, then listen again.  Resuming only in
     * the write watcher left a client paused for good when another flush
     * wrote its last bytes.  A round that reaches the in-flight limit
     * pauses again; if its replies go out at once, the next round follows. */
    do {
        if (set_io_phase(c, RVS_IO_OPEN) < 0)
            return;
        /* A pass that spent its budget writing the output out leaves the
         * calls waiting to the next (the yield queue's turn): a 1 MB reply
         * made after 0.2 ms of TLS records held the loop 1.5 ms. */
        if ((rv_buf_used(&c->in) > 0 || rv_transport_pending(c->tr) > 0) && pass_spent(c)) {
            yield(c);
            return;
        }
        if (dispatch_buffered(c) < 0)
            return;
    } while (write_out(c) > 0 && c->io == RVS_IO_PAUSED && !pending_at_limit(c) &&
             !c->read_holds);
    /* Bytes TLS took in before the pause do not make the fd readable:
     * with nothing more coming, waiting for it would stall the client. */
    if (reading(c) && !c->yielded && rv_transport_pending(c->tr) > 0)
        on_readable(c->env->loop, &c->read_watcher, EV_READ);
}

static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    rvs_client *c = w->data;
    if (c->auth == RVS_AUTH_TLS_HANDSHAKE) {
        handshake_step(c);
        return;
    }
    if (c->read_wants_write) {
        c->read_wants_write = 0;
        if (reading(c)) {
            on_readable(loop, &c->read_watcher, EV_READ);
            return;
        }
    }
    rvs_client_flush(c);
    if (c->io == RVS_IO_CLOSING || !ev_is_active(&c->output_deadline))
        return;
    /* A paused client's deadline stops only once all its output is
     * written (write_out): stopped when it fell under the cap, a client
     * whose socket took a few bytes and then nothing stayed paused for
     * good.  It starts again when the peer has taken RVS_OUTPUT_PROGRESS
     * since it started: reading slowly is reading. */
    if (c->io == RVS_IO_PAUSED) {
        if (peer_read(c) >= c->read_mark + RVS_OUTPUT_PROGRESS)
            start_output_deadline(c);
    } else if (rv_buf_used(&c->out) < calls_output_cap(c)) {
        ev_timer_stop(loop, &c->output_deadline);
    }
}

char *rvs_client_queue_unsolicited(rvs_client *c, const char *frame, size_t len)
{
    if (c->io == RVS_IO_CLOSING || c->io == RVS_IO_CLOSING_AFTER_FLUSH)
        return NULL;
    /* Reading stops at the cap, but events and PINGs come anyway: one
     * that does not fit means the client has stopped reading. */
    size_t unread = rv_buf_used(&c->out);
    if (unread + len > output_cap(c)) {
        char name[256];
        RV_WARN("%s: %zu bytes of output are waiting unread and the next event or ping "
                "would pass its output cap (%zu bytes, max_client_output_bytes); closing it",
                rvs_client_name(c, name, sizeof(name)), unread, output_cap(c));
        rvs_client_close(c, "output queue over max_client_output_bytes");
        return NULL;
    }
    /* Like the cap, the memory budget stops a client that does not read,
     * not one that has read all it was sent. */
    const rvs_budget_bucket *b;
    if (unread > 0 && (b = over_budget(c, len))) {
        char what[96];
        snprintf(what, sizeof(what), "an event or ping after %zu bytes of output left unread",
                 unread);
        close_over_budget(c, b, what);
        return NULL;
    }
    if (rv_buf_reserve(&c->out, len) < 0) {
        rvs_client_close(c, "out of memory queueing an event");
        return NULL;
    }
    charge(c);
    char *copy = c->out.data + c->out.len;
    memcpy(copy, frame, len);
    c->out.len += len;
    return copy;
}

/* ---- keepalive ---- */

void rvs_client_start_keepalive(rvs_client *c)
{
    if (c->env->keepalive_interval <= 0 || ev_is_active(&c->keepalive))
        return;
    c->last_heard = ev_now(c->env->loop);
    c->pings_unanswered = 0;
    ev_timer_set(&c->keepalive, c->env->keepalive_interval, 0.);
    ev_timer_start(c->env->loop, &c->keepalive);
}

/* Fires every keepalive_interval while the client is quiet: PING it, or
 * after keepalive_count unanswered PINGs give it up. */
static void on_keepalive(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    rvs_client *c = w->data;
    ev_tstamp interval = c->env->keepalive_interval;
    ev_tstamp quiet = ev_now(loop) - c->last_heard;
    if (quiet < interval - 0.01) {
        /* Heard from it meanwhile: look again one interval after that. */
        ev_timer_set(w, interval - quiet, 0.);
        ev_timer_start(loop, w);
        return;
    }
    if (c->pings_unanswered >= c->env->keepalive_count) {
        char name[256];
        RV_WARN("%s: no sign of life for %.0f s (%d keepalive pings unanswered); closing it",
                rvs_client_name(c, name, sizeof(name)), quiet, c->pings_unanswered);
        rvs_client_close(c, "keepalive timeout");
        return;
    }
    char ping[RV_KEEPALIVE_FRAME_LEN];
    rv_frame_keepalive(ping, RV_KEEPALIVE_PROC_PING);
    if (!rvs_client_queue_unsolicited(c, ping, sizeof(ping)))
        return;
    c->pings_unanswered++;
    rvs_client_flush(c);
    if (c->io == RVS_IO_CLOSING)
        return;
    ev_timer_set(w, interval, 0.);
    ev_timer_start(loop, w);
}
