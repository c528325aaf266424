#include "client/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "client/event.h"
#include "common/log.h"
#include "common/proc_names.h"
#include "common/util.h"
#include "rv_keepalive.h"
#include "rv_packet.h"
#include "rv_remote.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("client.conn");

/* Buffers start at, and after an unusually large packet shrink back to,
 * this size: every common reply fits, so steady traffic never allocates. */
#define BUF_KEEP 65536

/* Waking a thread on another CPU costs tens of microseconds on virtual
 * machines, more than a whole round trip on one CPU, while a reply from a
 * local daemon usually comes within a few.  So the reader polls briefly
 * (yielding the CPU to the server between looks) before it sleeps in
 * read().  Replies that keep missing the window mean slow calls: then the
 * reader sleeps at once for a while, so waiting for them costs no CPU. */
#define SPIN_DEFAULT_US 30
#define SPIN_MAX_US 10000
#define SPIN_MISSES_TO_BACK_OFF 4
#define SPIN_BACK_OFF_READS 64

/* Events waiting for the application's loop to take them: past this the
 * loop is not running, and the connection fails rather than grow or
 * silently drop events. */
#define MESSAGE_QUEUE_MAX (16u << 20)

/* A MESSAGE from the server on its way to the loop's thread. */
typedef struct queued_message {
    struct queued_message *next;
    size_t len;
    char frame[];
} queued_message;

/* A call between registering its serial and getting its answer.  It lives
 * on the calling thread's stack; whoever delivers the answer fills ret or
 * err, then sets done under conn->lock. */
typedef struct pending_call {
    struct pending_call *next;
    unsigned serial;
    int proc;
    xdrproc_t ret_filter;
    void *ret;
    rv_err *err;
    int failed;
    int done;
    int waiting;            /* asleep on wake: can take the reader role */
    pthread_cond_t wake;    /* answer delivered, or the reader role is free */
} pending_call;

struct rvc_conn {
    rv_transport *tr;

    pthread_mutex_t write_lock;     /* held for the whole of one frame's write */
    rv_buf wbuf;                    /* guarded by write_lock */

    pthread_mutex_t lock;           /* guards the fields below */
    unsigned next_serial;
    pending_call *pending;          /* registered calls without an answer */
    int reader_busy;                /* some call owns the socket's input */
    int failed;
    rv_err failure;                 /* why the connection stopped working */

    rv_buf rbuf;                    /* only the current reader touches it */
    long long spin_window_ns;       /* see spin_for_input(); 0: never spin */
    int spin_misses;                /* reader only */
    int spin_skip;

    int eof;                        /* the server closed the connection */
    long long last_heard_ns;        /* when bytes last came (atomic: the reader writes) */

    /* The application's loop (rvc_conn_attach_loop); guarded by lock.
     * The loop's handle and timers each hold a reference, so the struct
     * outlives rvc_conn_free() until the loop lets go of them. */
    int refs;
    int freed;                      /* rvc_conn_free() ran: no more callbacks */
    int watch;                      /* the socket's handle in the loop, 0: none */
    int listening;                  /* the handle asks for READABLE now */
    int dispatch_timer;             /* runs on_message/on_closed in the loop's thread */
    int dispatch_armed;
    rvc_message_fn on_message;
    rvc_closed_fn on_closed;
    void *cb_opaque;
    queued_message *messages, **messages_tail;
    size_t messages_bytes;
    int close_reason;               /* RV_CLOSE_REASON_*, for on_closed */
    int close_pending;              /* on_closed still to be called */
    int dispatching;                /* the loop's thread is in on_message/on_closed */
    int loop_reading;               /* the loop's thread is the reader: it hands
                                     * out what it queues itself, no timer needed */
    pthread_t dispatcher;
    pthread_cond_t idle;            /* dispatching or the loop's reading ended */
    /* Keepalive (rvc_conn_set_keepalive); the loop's thread only, under lock. */
    int keepalive_timer;
    int keepalive_interval;         /* seconds; 0: off */
    unsigned int keepalive_count;
    unsigned int pings_unanswered;
    long long heard_at_last_ping;
};

struct rvc_conn *rvc_conn_new(rv_transport *tr, rv_err *err)
{
    struct rvc_conn *c = calloc(1, sizeof(*c));
    if (!c || rv_buf_reserve(&c->rbuf, BUF_KEEP) < 0 || rv_buf_reserve(&c->wbuf, BUF_KEEP) < 0) {
        if (c) {
            rv_buf_free(&c->rbuf);
            free(c);
        }
        rv_transport_close(tr);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    c->tr = tr;
    c->next_serial = 1;
    /* Non-blocking, so that a writer facing a full socket can read the
     * replies the server is waiting to send (see wait_writable()). */
    int fl = fcntl(tr->fd, F_GETFL);
    if (fl < 0 || fcntl(tr->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot make the connection non-blocking");
        rv_buf_free(&c->rbuf);
        rv_buf_free(&c->wbuf);
        free(c);
        rv_transport_close(tr);
        return NULL;
    }
    /* REMVIRT_SPIN_US sets the window (0: always sleep at once). */
    const char *spin = getenv("REMVIRT_SPIN_US");
    long us = spin && *spin ? strtol(spin, NULL, 10) : SPIN_DEFAULT_US;
    c->spin_window_ns = (us < 0 ? 0 : us > SPIN_MAX_US ? SPIN_MAX_US : us) * 1000LL;
    pthread_mutex_init(&c->write_lock, NULL);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->idle, NULL);
    c->refs = 1;
    c->messages_tail = &c->messages;
    return c;
}

static void drop_messages(struct rvc_conn *c)
{
    while (c->messages) {
        queued_message *m = c->messages;
        c->messages = m->next;
        free(m);
    }
    c->messages_tail = &c->messages;
    c->messages_bytes = 0;
}

static void destroy(struct rvc_conn *c)
{
    if (c->tr)
        rv_transport_close(c->tr);
    drop_messages(c);
    rv_buf_free(&c->rbuf);
    rv_buf_free(&c->wbuf);
    rv_err_clear(&c->failure);
    pthread_mutex_destroy(&c->write_lock);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->idle);
    free(c);
}

/* With lock held: drop one reference (the lock is released either way). */
static void unref_unlock(struct rvc_conn *c)
{
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->lock);
    if (last)
        destroy(c);
}

/* The loop lets go of a handle or timer. */
static void loop_release(void *opaque)
{
    struct rvc_conn *c = opaque;
    pthread_mutex_lock(&c->lock);
    unref_unlock(c);
}

void rvc_conn_free(struct rvc_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->freed = 1;
    c->on_message = NULL;
    c->on_closed = NULL;
    int watch = c->watch, dispatch_timer = c->dispatch_timer;
    int keepalive_timer = c->keepalive_timer;
    c->watch = c->dispatch_timer = c->keepalive_timer = 0;
    /* The server sees the end now; the fd itself closes once the loop
     * has let go of its handle. */
    if (watch && c->tr)
        shutdown(c->tr->fd, SHUT_RDWR);
    pthread_mutex_unlock(&c->lock);
    /* Unlocked: a loop may give the references back from inside these. */
    if (watch)
        rvc_event_remove_handle(watch);
    if (dispatch_timer)
        rvc_event_remove_timeout(dispatch_timer);
    if (keepalive_timer)
        rvc_event_remove_timeout(keepalive_timer);
    pthread_mutex_lock(&c->lock);
    /* A callback running in the loop's thread finishes first, unless it
     * is the one closing the connection; so does the loop's reading (no
     * call can be reading now), and then the transport closes here, not
     * later in the loop's thread, which may outlive the process's
     * libraries at exit. */
    while ((c->dispatching && !pthread_equal(c->dispatcher, pthread_self())) || c->reader_busy)
        pthread_cond_wait(&c->idle, &c->lock);
    if (c->tr) {
        rv_transport_close(c->tr);
        c->tr = NULL;
    }
    unref_unlock(c);
}

int rvc_conn_is_alive(struct rvc_conn *c)
{
    pthread_mutex_lock(&c->lock);
    int alive = !c->failed;
    pthread_mutex_unlock(&c->lock);
    return alive;
}

static const char *proc_label(int proc)
{
    const char *name = rv_proc_name(RV_REMOTE_PROGRAM, proc);
    return name ? name : "unknown procedure";
}

static void copy_err(rv_err *dst, const rv_err *src)
{
    rv_err_set(dst, src->domain, src->code, "%s", src->message ? src->message : "unknown error");
}

static void set_listening_locked(struct rvc_conn *c, int on);
static void arm_dispatch_locked(struct rvc_conn *c);

/* With lock held: the connection is dead (why is consumed), for `reason`
 * (RV_CLOSE_REASON_*; -1: EOF if the server closed it, else ERROR).  Every
 * call still waiting gets the error; shutting the socket down wakes a
 * reader blocked in read(); the loop, if any, hears of it. */
static void fail_locked_because(struct rvc_conn *c, rv_err *why, int reason)
{
    if (!c->failed) {
        RV_DEBUG("connection failed: %s", why->message ? why->message : "?");
        c->failed = 1;
        rv_err_move(&c->failure, why);
        if (c->tr)      /* NULL only after a failed rvc_conn_wrap_transport() */
            shutdown(c->tr->fd, SHUT_RDWR);
        c->close_reason = reason >= 0 ? reason
                          : c->eof ? RV_CLOSE_REASON_EOF : RV_CLOSE_REASON_ERROR;
        set_listening_locked(c, 0);
        if (c->on_closed) {
            c->close_pending = 1;
            arm_dispatch_locked(c);
        }
    }
    rv_err_clear(why);
    for (pending_call *p = c->pending; p; p = p->next) {
        copy_err(p->err, &c->failure);
        p->failed = 1;
        p->done = 1;
        pthread_cond_signal(&p->wake);
    }
    c->pending = NULL;
}

static void fail_locked(struct rvc_conn *c, rv_err *why)
{
    fail_locked_because(c, why, -1);
}

static void fail(struct rvc_conn *c, rv_err *why)
{
    pthread_mutex_lock(&c->lock);
    fail_locked(c, why);
    pthread_mutex_unlock(&c->lock);
}

/* With lock held and nobody reading: wake one sleeping call so that it
 * takes the reader role.  A call that is still writing is not asleep and
 * would miss the signal; it looks for the role by itself once it waits. */
static void wake_next_reader_locked(struct rvc_conn *c)
{
    if (c->reader_busy)
        return;
    for (pending_call *p = c->pending; p; p = p->next) {
        if (p->waiting) {
            pthread_cond_signal(&p->wake);
            return;
        }
    }
}

/* With lock held: the loop's handle listens only while no call reads, so
 * that the loop's thread does not wake for every reply. */
static void set_listening_locked(struct rvc_conn *c, int on)
{
    if (!c->watch || c->listening == on)
        return;
    rvc_event_update_handle(c->watch, on ? RV_EVENT_HANDLE_READABLE : 0);
    c->listening = on;
}

/* With lock held: a calling thread becomes the reader. */
static void take_reader_locked(struct rvc_conn *c)
{
    c->reader_busy = 1;
    set_listening_locked(c, 0);
}

/* Input that will not make the socket readable: bytes a TLS or SASL
 * layer holds, or whole frames a call's reader left behind its reply. */
static int input_buffered(struct rvc_conn *c)
{
    size_t used = rv_buf_used(&c->rbuf);
    return rv_transport_pending(c->tr) > 0 ||
           (used >= RV_LEN_WORD_SIZE && used >= rv_frame_peek_len(rv_buf_head(&c->rbuf)));
}

/* With lock held: the reader is done; another call or the loop takes
 * over.  Bytes a TLS or SASL layer already holds do not make the socket
 * readable, so the loop is told to look. */
static void release_reader_locked(struct rvc_conn *c)
{
    c->reader_busy = 0;
    wake_next_reader_locked(c);
    if (c->freed)
        pthread_cond_broadcast(&c->idle);
    if (!c->watch || c->failed || c->freed)
        return;
    set_listening_locked(c, 1);
    if (input_buffered(c))
        arm_dispatch_locked(c);
}

static void unlink_locked(struct rvc_conn *c, pending_call *call)
{
    for (pending_call **pp = &c->pending; *pp; pp = &(*pp)->next) {
        if (*pp == call) {
            *pp = call->next;
            return;
        }
    }
}

static void drain_without_waiting(struct rvc_conn *c);

/* The socket is full.  The server may have stopped reading until its
 * replies are read (max_client_requests), while every other thread queues
 * behind this write; so while nobody else holds the reader role, take it
 * and deliver what has arrived, then wait for room. */
static int wait_writable(struct rvc_conn *c, rv_err *err)
{
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int read_too = !c->reader_busy && !c->failed;
        if (read_too)
            take_reader_locked(c);
        pthread_mutex_unlock(&c->lock);
        short want = rv_transport_wait_events(c->tr, POLLOUT);
        struct pollfd pfd = { .fd = c->tr->fd, .events = want | (read_too ? POLLIN : 0) };
        /* While another thread holds the reader role, look again after a
         * short while instead of sleeping for good: that reader may get
         * its own reply and leave with nobody else reading, and then the
         * server (waiting for its replies to be read) never makes room.
         * Likewise a write that waits for input (SSH: the server's window)
         * may have it taken in by that reader, leaving the fd quiet. */
        int rc = poll(&pfd, 1, read_too ? -1 : 20);
        int saved = errno;
        if (read_too) {
            if (rc > 0 && (pfd.revents & POLLIN))
                drain_without_waiting(c);
            pthread_mutex_lock(&c->lock);
            release_reader_locked(c);
            pthread_mutex_unlock(&c->lock);
        }
        if (rc < 0 && saved != EINTR) {
            rv_err_set_errno(err, RV_FROM_RPC, saved, "cannot wait to send to the server");
            return -1;
        }
        /* Room, an error the next write reports, or time to look again. */
        if (rc == 0 || (rc > 0 && (pfd.revents & (want | POLLERR | POLLHUP | POLLNVAL))))
            return 0;
    }
}

static int write_all(struct rvc_conn *c, const char *p, size_t n, rv_err *err)
{
    while (n > 0) {
        ssize_t w = rv_transport_write(c->tr, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                if (wait_writable(c, err) < 0)
                    return -1;
                continue;
            }
            /* A command that has already exited shows here first (EPIPE)
             * when it goes before the first call is written. */
            int saved = errno;
            const char *said = rv_transport_peer_error(c->tr);
            rv_err_set_errno(err, RV_FROM_RPC, saved, "cannot send to the server%s%s%s",
                             said ? " (" : "", said ? said : "", said ? ")" : "");
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Send a keepalive PING or PONG.  If another thread is in the middle of
 * writing a frame, skip it: that frame already tells the server we are
 * alive, and waiting for the write lock here could deadlock against a
 * writer that waits for us to drain replies. */
static void send_keepalive(struct rvc_conn *c, int proc)
{
    /* The reader calls this: it must not wait for room, since the room
     * comes from the server, which may wait for the reader. */
    struct pollfd pfd = { .fd = c->tr->fd, .events = POLLOUT };
    if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLOUT))
        return;
    if (pthread_mutex_trylock(&c->write_lock) != 0)
        return;
    rv_header h = {
        .prog = RV_KEEPALIVE_PROGRAM, .vers = RV_KEEPALIVE_VERSION,
        .proc = proc, .type = RV_MESSAGE, .serial = 0, .status = RV_OK,
    };
    rv_err err = { 0 };
    c->wbuf.start = c->wbuf.len = 0;
    if (rv_frame_encode(&c->wbuf, &h, NULL, NULL, &err) < 0 ||
        write_all(c, c->wbuf.data, c->wbuf.len, &err) < 0)
        RV_DEBUG("cannot send a keepalive %s: %s", proc == RV_KEEPALIVE_PROC_PING ? "ping" : "pong",
                 err.message ? err.message : "?");
    pthread_mutex_unlock(&c->write_lock);
    rv_err_clear(&err);
}

static long long elapsed_ns(const struct timespec *from)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - from->tv_sec) * 1000000000LL + (now.tv_nsec - from->tv_nsec);
}

static void spin_for_input(struct rvc_conn *c)
{
    if (c->spin_window_ns == 0)
        return;
    if (c->spin_skip > 0) {
        c->spin_skip--;
        return;
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct pollfd pfd = { .fd = c->tr->fd, .events = POLLIN };
    do {
        if (rv_transport_pending(c->tr) > 0 || poll(&pfd, 1, 0) != 0) {
            c->spin_misses = 0;
            return;
        }
        sched_yield();
    } while (elapsed_ns(&start) < c->spin_window_ns);
    if (++c->spin_misses >= SPIN_MISSES_TO_BACK_OFF) {
        c->spin_misses = 0;
        c->spin_skip = SPIN_BACK_OFF_READS;
    }
}

/* Read what the socket has into rbuf: 1 if bytes came, 0 if none were
 * there, -1 at end of file or on an error (why says which).  *drained,
 * if given, says whether the read took less than it could: the socket
 * (and the transport's own buffer) had nothing more. */
static int read_available(struct rvc_conn *c, rv_err *why, int *drained)
{
    rv_buf *b = &c->rbuf;
    for (;;) {
        size_t room = b->cap - b->len;
        ssize_t n = rv_transport_read(c->tr, b->data + b->len, room);
        if (n > 0) {
            b->len += (size_t)n;
            if (drained)
                *drained = (size_t)n < room && rv_transport_pending(c->tr) == 0;
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            __atomic_store_n(&c->last_heard_ns, now.tv_sec * 1000000000LL + now.tv_nsec,
                             __ATOMIC_RELAXED);
            return 1;
        }
        if (n == 0) {
            c->eof = 1;
            const char *said = rv_transport_peer_error(c->tr);
            rv_err_set(why, RV_FROM_RPC, RV_ERR_RPC, "connection closed by the server%s%s",
                       said ? ": " : "", said ? said : "");
            return -1;
        }
        if (errno == EAGAIN)
            return 0;
        if (errno != EINTR) {
            int saved = errno;
            const char *said = rv_transport_peer_error(c->tr);
            rv_err_set_errno(why, RV_FROM_RPC, saved, "cannot read from the server%s%s%s",
                             said ? " (" : "", said ? said : "", said ? ")" : "");
            return -1;
        }
    }
}


/* Read more bytes into rbuf, wanting at least `need`, waiting for them;
 * take whatever else is there so that back-to-back replies cost one read. */
static int fill(struct rvc_conn *c, size_t need, rv_err *why)
{
    if (rv_buf_reserve(&c->rbuf, need) < 0) {
        rv_err_set(why, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory reading a reply");
        return -1;
    }
    spin_for_input(c);
    for (;;) {
        int got = read_available(c, why, NULL);
        if (got != 0)
            return got < 0 ? -1 : 0;
        struct pollfd pfd = { .fd = c->tr->fd,
                              .events = rv_transport_wait_events(c->tr, POLLIN) };
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
            rv_err_set_errno(why, RV_FROM_RPC, errno, "cannot wait for the server");
            return -1;
        }
    }
}

/* Make rbuf's head one whole frame; its length (length word included)
 * goes to *frame_len.  The length is checked before any room is made. */
static int read_frame(struct rvc_conn *c, size_t *frame_len, rv_err *why)
{
    rv_buf *b = &c->rbuf;
    while (rv_buf_used(b) < RV_LEN_WORD_SIZE)
        if (fill(c, RV_LEN_WORD_SIZE - rv_buf_used(b), why) < 0)
            return -1;
    uint32_t len = rv_frame_peek_len(rv_buf_head(b));
    if (rv_frame_check_len(len, RV_FRAME_MAX, why) < 0)
        return -1;
    while (rv_buf_used(b) < len)
        if (fill(c, len - rv_buf_used(b), why) < 0)
            return -1;
    *frame_len = len;
    return 0;
}

/* Fill the call's ret (status OK) or err (status ERROR) from the frame.
 * A payload that does not decode fails this call only: the framing is
 * intact, so the connection stays usable. */
static void decode_answer(pending_call *p, const rv_header *h, const char *frame, size_t len)
{
    if (h->status == RV_OK) {
        if (p->ret_filter) {
            rv_err why = { 0 };
            if (rv_frame_decode_payload(frame, len, p->ret_filter, p->ret, &why) < 0) {
                rv_err_set(p->err, RV_FROM_RPC, RV_ERR_RPC, "bad reply to %s: %s",
                           proc_label(h->proc), why.message ? why.message : "?");
                rv_err_clear(&why);
                p->failed = 1;
            }
        } else if (len != RV_FRAME_MIN) {
            rv_err_set(p->err, RV_FROM_RPC, RV_ERR_RPC,
                       "bad reply to %s: %zu bytes where none were expected",
                       proc_label(h->proc), len - RV_FRAME_MIN);
            p->failed = 1;
        }
        return;
    }
    rv_error e;
    memset(&e, 0, sizeof(e));
    p->failed = 1;
    if (rv_frame_decode_payload(frame, len, (xdrproc_t)xdr_rv_error, &e, p->err) < 0)
        return;
    const char *msg = e.message && **e.message ? *e.message : "unknown error";
    /* An error reply must carry an error: code 0 would read as success. */
    rv_err_set(p->err, e.domain, e.code != RV_ERR_OK ? e.code : RV_ERR_INTERNAL_ERROR, "%s", msg);
    if (e.level == RV_ERR_LEVEL_WARNING)
        p->err->level = e.level;
    if (e.str1 && (p->err->str1 = strdup(*e.str1)) == NULL)
        RV_DEBUG("out of memory copying an error detail");
    xdr_free((xdrproc_t)xdr_rv_error, (char *)&e);
}

enum { FRAME_NEXT, FRAME_MINE, FRAME_FATAL };

/* Keep a MESSAGE (an event) for the loop's thread, in arrival order. */
static int queue_message(struct rvc_conn *c, const char *frame, size_t len, rv_err *why)
{
    pthread_mutex_lock(&c->lock);
    if (!c->on_message) {
        pthread_mutex_unlock(&c->lock);
        RV_DEBUG("no event loop: dropping a message of %zu bytes", len);
        return 0;
    }
    if (c->messages_bytes + len > MESSAGE_QUEUE_MAX) {
        pthread_mutex_unlock(&c->lock);
        rv_err_set(why, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "%u MiB of events are waiting for the application's event loop, which "
                   "does not seem to run", MESSAGE_QUEUE_MAX >> 20);
        return -1;
    }
    queued_message *m = malloc(sizeof(*m) + len);
    if (!m) {
        pthread_mutex_unlock(&c->lock);
        rv_err_set(why, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory queueing an event");
        return -1;
    }
    m->next = NULL;
    m->len = len;
    memcpy(m->frame, frame, len);
    *c->messages_tail = m;
    c->messages_tail = &m->next;
    c->messages_bytes += len;
    if (!c->loop_reading)
        arm_dispatch_locked(c);
    pthread_mutex_unlock(&c->lock);
    return 0;
}

static int handle_frame(struct rvc_conn *c, pending_call *me, size_t len, rv_err *why)
{
    const char *frame = rv_buf_head(&c->rbuf);
    rv_header h;
    if (rv_frame_decode_header(frame, len, &h, why) < 0)
        return FRAME_FATAL;

    if (h.type == RV_MESSAGE) {
        /* Framing is intact, so a malformed MESSAGE costs only itself:
         * ignored, not answered, not handed to the application. */
        if (h.status != RV_OK) {
            RV_WARN("ignoring a message from the server with status %d (program %#x "
                    "procedure %d)", (int)h.status, h.prog, h.proc);
        } else if (h.prog == RV_KEEPALIVE_PROGRAM) {
            if (h.vers != RV_KEEPALIVE_VERSION || len != RV_FRAME_MIN)
                RV_WARN("ignoring a keepalive message of version %u with %zu payload bytes",
                        h.vers, len - RV_FRAME_MIN);
            else if (h.proc == RV_KEEPALIVE_PROC_PING)
                send_keepalive(c, RV_KEEPALIVE_PROC_PONG);
            else if (h.proc != RV_KEEPALIVE_PROC_PONG)
                RV_DEBUG("ignoring keepalive procedure %d", h.proc);
        } else if (h.prog == RV_REMOTE_PROGRAM && h.vers == RV_REMOTE_VERSION) {
            if (queue_message(c, frame, len, why) < 0)
                return FRAME_FATAL;
        } else {
            RV_DEBUG("ignoring message: program %#x procedure %d", h.prog, h.proc);
        }
        return FRAME_NEXT;
    }
    if (h.prog != RV_REMOTE_PROGRAM || h.vers != RV_REMOTE_VERSION || h.type != RV_REPLY) {
        rv_err_set(why, RV_FROM_RPC, RV_ERR_RPC,
                   "unexpected packet from the server: program %#x version %u type %d",
                   h.prog, h.vers, (int)h.type);
        return FRAME_FATAL;
    }
    if (h.status != RV_OK && h.status != RV_ERROR) {
        rv_err_set(why, RV_FROM_RPC, RV_ERR_RPC, "reply with serial %u has unexpected status %d",
                   h.serial, (int)h.status);
        return FRAME_FATAL;
    }

    pthread_mutex_lock(&c->lock);
    pending_call *p = c->pending;
    while (p && p->serial != h.serial)
        p = p->next;
    if (p && p->proc == h.proc)
        unlink_locked(c, p);
    pthread_mutex_unlock(&c->lock);
    if (!p) {
        rv_err_set(why, RV_FROM_RPC, RV_ERR_RPC,
                   "reply with serial %u matches no call in progress", h.serial);
        return FRAME_FATAL;
    }
    if (p->proc != h.proc) {
        rv_err_set(why, RV_FROM_RPC, RV_ERR_RPC,
                   "reply with serial %u is for procedure %d, but that call was procedure %d",
                   h.serial, h.proc, p->proc);
        return FRAME_FATAL;
    }

    /* p is off the list, so nobody else touches it: decode unlocked. */
    decode_answer(p, &h, frame, len);
    if (p == me) {
        me->done = 1;
        return FRAME_MINE;
    }
    pthread_mutex_lock(&c->lock);
    p->done = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&c->lock);
    return FRAME_NEXT;
}

/* The reader role: deliver every frame that arrives until our own answer
 * has come, or the connection fails (which also answers us). */
static void read_until_answered(struct rvc_conn *c, pending_call *me)
{
    rv_err why = { 0 };
    for (;;) {
        size_t len;
        if (read_frame(c, &len, &why) < 0)
            break;
        int r = handle_frame(c, me, len, &why);
        if (r == FRAME_FATAL)
            break;
        rv_buf_consume(&c->rbuf, len);
        if (c->rbuf.cap > BUF_KEEP)
            rv_buf_shrink(&c->rbuf, BUF_KEEP);
        if (r == FRAME_MINE)
            return;
    }
    fail(c, &why);
}

static void connection_unusable(struct rvc_conn *c, rv_err *err)
{
    rv_err_set(err, RV_FROM_RPC, RV_ERR_INVALID_CONN, "the connection is no longer usable: %s",
               c->failure.message ? c->failure.message : "unknown error");
}

int rvc_conn_call(struct rvc_conn *c, int proc, xdrproc_t args_filter, void *args,
                  xdrproc_t ret_filter, void *ret, rv_err *err)
{
    pending_call me = {
        .proc = proc, .ret_filter = ret_filter, .ret = ret, .err = err,
    };
    rv_header h = {
        .prog = RV_REMOTE_PROGRAM, .vers = RV_REMOTE_VERSION,
        .proc = proc, .type = RV_CALL, .serial = 0, .status = RV_OK,
    };

    /* Encode first, register second: a call is known to the reader only
     * once its frame is whole, so no reply (even a forged early one) can
     * reach a call that then fails to encode and returns. */
    pthread_mutex_lock(&c->write_lock);
    c->wbuf.start = c->wbuf.len = 0;
    if (rv_frame_encode(&c->wbuf, &h, args_filter, args, err) < 0) {
        pthread_mutex_unlock(&c->write_lock);
        return -1;
    }
    pthread_mutex_lock(&c->lock);
    if (c->failed) {
        connection_unusable(c, err);
        pthread_mutex_unlock(&c->lock);
        pthread_mutex_unlock(&c->write_lock);
        return -1;
    }
    pthread_cond_init(&me.wake, NULL);
    /* Numbered under write_lock, so serials reach the wire in order. */
    me.serial = c->next_serial++;
    me.next = c->pending;
    c->pending = &me;
    pthread_mutex_unlock(&c->lock);
    rv_frame_set_serial(c->wbuf.data, me.serial);

    RV_DEBUG("call %s serial %u", proc_label(proc), me.serial);
    rv_err why = { 0 };
    int sent = write_all(c, c->wbuf.data, c->wbuf.len, &why) == 0;
    if (c->wbuf.cap > BUF_KEEP) {
        c->wbuf.start = c->wbuf.len = 0;
        rv_buf_shrink(&c->wbuf, BUF_KEEP);
    }
    pthread_mutex_unlock(&c->write_lock);

    pthread_mutex_lock(&c->lock);
    if (!sent)
        fail_locked(c, &why);       /* answers us too, unless already answered */
    while (!me.done) {
        if (!c->reader_busy) {
            take_reader_locked(c);
            pthread_mutex_unlock(&c->lock);
            read_until_answered(c, &me);
            pthread_mutex_lock(&c->lock);
            release_reader_locked(c);
            break;
        }
        me.waiting = 1;
        pthread_cond_wait(&me.wake, &c->lock);
        me.waiting = 0;
    }
    pthread_mutex_unlock(&c->lock);
    rv_err_clear(&why);
    pthread_cond_destroy(&me.wake);
    return me.failed ? -1 : 0;
}

const char *rvc_conn_peer_error(struct rvc_conn *c)
{
    return c->tr ? rv_transport_peer_error(c->tr) : NULL;
}

rv_transport *rvc_conn_transport(struct rvc_conn *c)
{
    return c->tr;
}

int rvc_conn_wrap_transport(struct rvc_conn *c, rvc_wrap_fn wrap, void *opaque, rv_err *err)
{
    int rc = -1;
    pthread_mutex_lock(&c->write_lock);
    pthread_mutex_lock(&c->lock);
    if (c->failed) {
        connection_unusable(c, err);
        goto out;
    }
    if (c->pending || c->reader_busy || c->watch) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "cannot change the transport while the connection is in use");
        goto out;
    }
    size_t early = rv_buf_used(&c->rbuf) + rv_transport_pending(c->tr);
    if (early > 0) {
        rv_err why = { 0 };
        rv_err_set(&why, RV_FROM_RPC, RV_ERR_RPC,
                   "the server sent %zu bytes before the SASL security layer began", early);
        copy_err(err, &why);
        fail_locked(c, &why);
        goto out;
    }
    rv_transport *layered = wrap(c->tr, opaque, err);
    if (!layered) {
        /* The old transport is gone with the wrapper: nothing may touch
         * its fd again, so fail without shutting it down. */
        c->tr = NULL;
        rv_err why = { 0 };
        copy_err(&why, err);
        fail_locked(c, &why);
        goto out;
    }
    c->tr = layered;
    RV_DEBUG("every later packet goes through the %s transport", layered->ops->name);
    rc = 0;
out:
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&c->write_lock);
    return rc;
}

/* ---- the application's event loop ---- */

/* As the reader, deliver whatever has arrived without waiting for more:
 * frames already buffered, then anything the socket has.  A frame that
 * is only partly here stays in rbuf for the next reader. */
static void drain_without_waiting(struct rvc_conn *c)
{
    rv_err why = { 0 };
    int drained = 0;
    for (;;) {
        rv_buf *b = &c->rbuf;
        size_t used = rv_buf_used(b), want = 1;
        if (used >= RV_LEN_WORD_SIZE) {
            uint32_t len = rv_frame_peek_len(rv_buf_head(b));
            if (rv_frame_check_len(len, RV_FRAME_MAX, &why) < 0)
                break;
            if (used >= len) {
                if (handle_frame(c, NULL, len, &why) == FRAME_FATAL)
                    break;
                rv_buf_consume(b, len);
                continue;
            }
            want = len - used;
        }
        /* A short read emptied the socket: asking again would only get
         * EAGAIN (one wasted syscall per event on every connection). */
        if (drained)
            return;
        if (rv_buf_reserve(b, want) < 0) {
            rv_err_set(&why, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory reading a reply");
            break;
        }
        int got = read_available(c, &why, &drained);
        if (got == 0)
            return;
        if (got < 0)
            break;
    }
    fail(c, &why);
}


/* With lock held: have the loop's thread run on_dispatch soon. */
static void arm_dispatch_locked(struct rvc_conn *c)
{
    if (c->dispatch_timer && !c->dispatch_armed) {
        rvc_event_update_timeout(c->dispatch_timer, 0);
        c->dispatch_armed = 1;
    }
}

/* In the loop's thread, while no call reads: deliver what has come. */
static void read_from_loop(struct rvc_conn *c)
{
    pthread_mutex_lock(&c->lock);
    if (c->freed || c->failed || c->reader_busy) {
        /* A call reads (it delivers everything), or nothing ever will:
         * stop listening until it is done. */
        set_listening_locked(c, 0);
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->reader_busy = 1;
    c->loop_reading = 1;
    pthread_mutex_unlock(&c->lock);
    drain_without_waiting(c);
    pthread_mutex_lock(&c->lock);
    c->loop_reading = 0;
    release_reader_locked(c);
    pthread_mutex_unlock(&c->lock);
}

static void deliver_queued(struct rvc_conn *c);

/* Events read here go to the application in this same iteration. */
static void on_socket_ready(int watch, int fd, int events, void *opaque)
{
    (void)watch;
    (void)fd;
    (void)events;
    read_from_loop(opaque);
    deliver_queued(opaque);
}

/* Messages a calling thread queued, a closing, or bytes a TLS or SASL
 * layer held back after a call. */
static void on_dispatch(int timer, void *opaque)
{
    struct rvc_conn *c = opaque;
    (void)timer;
    pthread_mutex_lock(&c->lock);
    if (c->dispatch_armed) {
        rvc_event_update_timeout(c->dispatch_timer, -1);
        c->dispatch_armed = 0;
    }
    int look = !c->reader_busy && !c->failed && !c->freed && c->tr && input_buffered(c);
    pthread_mutex_unlock(&c->lock);
    if (look)
        read_from_loop(c);
    deliver_queued(c);
}

/* Hand the queued messages, then the closing, to the application. */
static void deliver_queued(struct rvc_conn *c)
{
    pthread_mutex_lock(&c->lock);
    if (!c->messages && !c->close_pending) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->dispatching = 1;
    c->dispatcher = pthread_self();
    while (c->on_message && c->messages) {
        queued_message *m = c->messages;
        c->messages = m->next;
        if (!c->messages)
            c->messages_tail = &c->messages;
        c->messages_bytes -= m->len;
        rvc_message_fn fn = c->on_message;
        void *arg = c->cb_opaque;
        pthread_mutex_unlock(&c->lock);
        fn(arg, m->frame, m->len);
        free(m);
        pthread_mutex_lock(&c->lock);
    }
    if (c->on_closed && c->close_pending) {
        c->close_pending = 0;
        rvc_closed_fn fn = c->on_closed;
        void *arg = c->cb_opaque;
        int reason = c->close_reason;
        pthread_mutex_unlock(&c->lock);
        fn(arg, reason);
        pthread_mutex_lock(&c->lock);
    }
    c->dispatching = 0;
    pthread_cond_broadcast(&c->idle);
    pthread_mutex_unlock(&c->lock);
}

static long long now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Every interval: PING a quiet server, give up on a silent one. */
static void on_keepalive_tick(int timer, void *opaque)
{
    struct rvc_conn *c = opaque;
    (void)timer;
    pthread_mutex_lock(&c->lock);
    if (c->freed || c->failed || c->keepalive_interval <= 0) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    long long heard = __atomic_load_n(&c->last_heard_ns, __ATOMIC_RELAXED);
    if (heard != c->heard_at_last_ping)
        c->pings_unanswered = 0;
    long long quiet_ms = (now_ns() - heard) / 1000000;
    if (quiet_ms < c->keepalive_interval * 1000LL - 10) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    if (c->pings_unanswered >= c->keepalive_count) {
        rv_err why = { 0 };
        rv_err_set(&why, RV_FROM_RPC, RV_ERR_RPC,
                   "connection lost: the server did not answer %u keepalive pings in %.1f s",
                   c->pings_unanswered, quiet_ms / 1000.0);
        fail_locked_because(c, &why, RV_CLOSE_REASON_KEEPALIVE);
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->pings_unanswered++;
    c->heard_at_last_ping = heard;
    pthread_mutex_unlock(&c->lock);
    send_keepalive(c, RV_KEEPALIVE_PROC_PING);
}

int rvc_conn_attach_loop(struct rvc_conn *c, rvc_message_fn on_message, rvc_closed_fn on_closed,
                         void *opaque, rv_err *err)
{
    if (!rvc_event_impl_registered()) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "no event loop registered: call rv_event_register_default_impl() or "
                   "rv_event_register_impl() before opening the connection");
        return -1;
    }
    pthread_mutex_lock(&c->lock);
    if (c->watch) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    __atomic_store_n(&c->last_heard_ns, now_ns(), __ATOMIC_RELAXED);
    c->on_message = on_message;
    c->on_closed = on_closed;
    c->cb_opaque = opaque;
    /* Each registration holds a reference, given back by loop_release. */
    c->refs += 2;
    c->dispatch_timer = rvc_event_add_timeout(-1, on_dispatch, c, loop_release);
    c->watch = rvc_event_add_handle(c->tr->fd, c->reader_busy ? 0 : RV_EVENT_HANDLE_READABLE,
                                   on_socket_ready, c, loop_release);
    if (c->dispatch_timer <= 0 || c->watch <= 0) {
        int timer = c->dispatch_timer, watch = c->watch;
        c->refs -= (timer <= 0) + (watch <= 0);
        c->dispatch_timer = c->watch = 0;
        c->on_message = NULL;
        c->on_closed = NULL;
        pthread_mutex_unlock(&c->lock);
        if (timer > 0)
            rvc_event_remove_timeout(timer);
        if (watch > 0)
            rvc_event_remove_handle(watch);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "the event loop refused the connection's handle or timer");
        return -1;
    }
    c->listening = !c->reader_busy;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int rvc_conn_set_keepalive(struct rvc_conn *c, int interval, unsigned int count, rv_err *err)
{
    pthread_mutex_lock(&c->lock);
    if (!c->watch) {
        pthread_mutex_unlock(&c->lock);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "keepalive needs an event loop: register one before opening the connection");
        return -1;
    }
    c->keepalive_interval = interval > 0 ? interval : 0;
    c->keepalive_count = count;
    c->pings_unanswered = 0;
    int rc = 0;
    if (interval <= 0) {
        if (c->keepalive_timer)
            rvc_event_update_timeout(c->keepalive_timer, -1);
    } else if (c->keepalive_timer) {
        rvc_event_update_timeout(c->keepalive_timer, interval * 1000);
    } else {
        c->refs++;
        c->keepalive_timer = rvc_event_add_timeout(interval * 1000, on_keepalive_tick, c,
                                                  loop_release);
        if (c->keepalive_timer <= 0) {
            c->keepalive_timer = 0;
            c->refs--;
            rc = -1;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (rc < 0)
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "the event loop refused the keepalive timer");
    return rc;
}
