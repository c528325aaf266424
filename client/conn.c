/* The connection's calls (see conn.h): encoding, numbering and writing
 * them, and the reader role that reads and matches the answers.  The
 * application's event loop is conn_loop.c's, keepalive's timer
 * keepalive.c's.
 *
 * Every call takes one path: send_call() encodes its frame into the
 * queue and registers it (a synchronous call's record lives on its
 * stack, an asynchronous one's on the heap), flush() writes the queue,
 * and a synchronous call (or a stream's wait) then waits in
 * await_answer(): as the reader when nobody reads, else asleep until
 * the reader hands it its answer or the reader role.  rvc_conn_complete
 * waits the same way for asynchronous answers. */
#include "client/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client/conn_priv.h"
#include "common/log.h"
#include "common/proc_names.h"
#include "common/util.h"
#include "rv_keepalive.h"
#include "rv_packet.h"
#include "rv_remote.h"
#include "transport/frame.h"
#include "transport/stream_hole.h"

RV_LOG_CATEGORY("client.conn");

/* Buffers start at, and after an unusually large packet shrink back to,
 * this size: every common reply fits, so steady traffic never allocates. */
#define BUF_KEEP 65536

/* Past this many queued bytes a thread that finds a flush going waits
 * for it instead of leaving its frame behind, and rvc_conn_start flushes
 * at once: the queue never grows far past it. */
#define QUEUE_SOFT_MAX 65536

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

struct rvc_conn *rvc_conn_new(rv_transport *tr, rv_err *err)
{
    struct rvc_conn *c = calloc(1, sizeof(*c));
    if (!c || rv_buf_reserve(&c->rbuf, BUF_KEEP) < 0 || rv_buf_reserve(&c->queue, BUF_KEEP) < 0 ||
        rv_buf_reserve(&c->out, BUF_KEEP) < 0) {
        if (c) {
            rv_buf_free(&c->rbuf);
            rv_buf_free(&c->queue);
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
        rv_buf_free(&c->queue);
        rv_buf_free(&c->out);
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
    pthread_cond_init(&c->flushed, NULL);
    c->pending_tail = &c->pending;
    c->sleepers_tail = &c->sleepers;
    c->completed_tail = &c->completed;
    c->refs = 1;
    c->messages_tail = &c->messages;
    return c;
}

static void destroy(struct rvc_conn *c)
{
    if (c->tr)
        rv_transport_close(c->tr);
    rvc_conn_drop_messages(c);
    rv_buf_free(&c->rbuf);
    rv_buf_free(&c->queue);
    rv_buf_free(&c->out);
    rv_err_clear(&c->failure);
    pthread_mutex_destroy(&c->write_lock);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->idle);
    pthread_cond_destroy(&c->flushed);
    free(c);
}

/* With lock held: drop one reference (the lock is released either way). */
void rvc_conn_unref_unlock(struct rvc_conn *c)
{
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->lock);
    if (last)
        destroy(c);
}

void rvc_conn_free(struct rvc_conn *c)
{
    if (!c)
        return;
    /* Asynchronous calls still unanswered complete with an error, so
     * their on_done can free what they hold. */
    pthread_mutex_lock(&c->lock);
    int async = c->async_in_flight > 0;
    if (async && !c->failed) {
        rv_err why = { 0 };
        rv_err_set(&why, RV_FROM_RPC, RV_ERR_INVALID_CONN,
                   "the connection was closed before the call was answered");
        rvc_conn_fail_locked_because(c, &why, RV_CLOSE_REASON_CLIENT);
    }
    pthread_mutex_unlock(&c->lock);
    if (async)
        rvc_conn_complete(c, 0);
    rvc_conn_detach_loop(c);
    pthread_mutex_lock(&c->lock);
    /* A callback running in the loop's thread finishes first, unless it
     * is the one closing the connection; so does the loop's reading (no
     * call can be reading now), and then the transport closes here, not
     * later in the loop's thread, which may outlive the process's
     * libraries at exit. */
    while ((c->dispatching && !pthread_equal(c->dispatcher, pthread_self())) ||
           c->reader != READER_NONE)
        pthread_cond_wait(&c->idle, &c->lock);
    if (c->tr) {
        rv_transport_close(c->tr);
        c->tr = NULL;
    }
    rvc_conn_unref_unlock(c);
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

static void connection_unusable(struct rvc_conn *c, rv_err *err)
{
    rv_err_set(err, RV_FROM_RPC, RV_ERR_INVALID_CONN, "the connection is no longer usable: %s",
               c->failure.message ? c->failure.message : "unknown error");
}

/* ---- waiters ---- */

/* This thread's bit on a bell: threads take the 32 bits in turn, and
 * two sharing one only wake each other now and then for nothing. */
static unsigned thread_bit(void)
{
    static unsigned next;
    static __thread unsigned bit;
    if (!bit)
        bit = 1u << (__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 32);
    return bit;
}

/* Wake the sleepers whose bits are in mask. */
static void ring(struct rvc_conn *c, unsigned mask)
{
    if (!mask)
        return;
    __atomic_fetch_add(&c->bell, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &c->bell, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, mask);
}

/* Set w's word to `to`; if it sleeps, its bit goes to *mask, for ring().
 * The exchange is the last touch of w: once it shows ANSWERED the
 * waiter may return and its stack be reused. */
static void wake_waiter(waiter *w, int to, unsigned *mask)
{
    unsigned bit = w->bit;
    if (__atomic_exchange_n(&w->word, to, __ATOMIC_SEQ_CST) == WAITER_ASLEEP)
        *mask |= bit;
}

/* Sleep until poked or answered; a poke is consumed.  The bell's value
 * is read before the word, and ring() bumps it after setting the word,
 * so a wakeup between the two makes the wait return at once. */
static void sleep_waiter(struct rvc_conn *c, waiter *w)
{
    int v = WAITER_RUNNING;
    if (__atomic_compare_exchange_n(&w->word, &v, WAITER_ASLEEP, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
        for (;;) {
            int bell = __atomic_load_n(&c->bell, __ATOMIC_SEQ_CST);
            if ((v = __atomic_load_n(&w->word, __ATOMIC_SEQ_CST)) != WAITER_ASLEEP)
                break;
            syscall(SYS_futex, &c->bell, FUTEX_WAIT_BITSET_PRIVATE, bell, NULL, NULL, w->bit);
        }
    }
    if (v == WAITER_POKED)  /* fails only if answered meanwhile, which stays */
        __atomic_compare_exchange_n(&w->word, &v, WAITER_RUNNING, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
}

static int answered(pending_call *p)
{
    return __atomic_load_n(&p->w.word, __ATOMIC_SEQ_CST) == WAITER_ANSWERED;
}

static void list_sleeper_locked(struct rvc_conn *c, waiter *w)
{
    w->next = NULL;
    w->listed = 1;
    *c->sleepers_tail = w;
    c->sleepers_tail = &w->next;
}

static void unlist_sleeper_locked(struct rvc_conn *c, waiter *w)
{
    if (!w->listed)
        return;
    for (waiter **pp = &c->sleepers; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            if (!*pp)
                c->sleepers_tail = pp;
            break;
        }
    }
    w->listed = 0;
}

/* Its waiter's bit is set here, before any reader can see it: a waker
 * reads the bit, and must not miss a sleeper for one set later. */
static void link_pending_locked(struct rvc_conn *c, pending_call *p)
{
    p->w.bit = thread_bit();
    p->next = NULL;
    *c->pending_tail = p;
    c->pending_tail = &p->next;
}

static void unlink_locked(struct rvc_conn *c, pending_call *call)
{
    for (pending_call **pp = &c->pending; *pp; pp = &(*pp)->next) {
        if (*pp == call) {
            *pp = call->next;
            if (!*pp)
                c->pending_tail = pp;
            return;
        }
    }
}

/* With lock held: an asynchronous call's answer (or failure) is in; its
 * on_done runs in the next rvc_conn_complete(), which is told (its bit
 * goes to *mask). */
static void queue_completed_locked(struct rvc_conn *c, pending_call *p, unsigned *mask)
{
    p->next = NULL;
    *c->completed_tail = p;
    c->completed_tail = &p->next;
    for (waiter **pp = &c->sleepers; *pp;) {
        waiter *w = *pp;
        if (!w->completer) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (!*pp)
            c->sleepers_tail = pp;
        w->listed = 0;
        wake_waiter(w, WAITER_POKED, mask);
    }
}

/* With lock held: p, off the pending list, has its answer (or failure);
 * who to wake goes to *mask. */
static void answer_locked(struct rvc_conn *c, pending_call *p, unsigned *mask)
{
    if (p->on_done) {
        queue_completed_locked(c, p, mask);
        return;
    }
    unlist_sleeper_locked(c, &p->w);
    wake_waiter(&p->w, WAITER_ANSWERED, mask);
}

/* With lock held: the connection is dead (why is consumed), for `reason`
 * (RV_CLOSE_REASON_*; -1: EOF if the server closed it, else ERROR).  Every
 * call still waiting gets the error; shutting the socket down wakes a
 * reader blocked in read(); the loop, if any, hears of it. */
void rvc_conn_fail_locked_because(struct rvc_conn *c, rv_err *why, int reason)
{
    if (!c->failed) {
        RV_DEBUG("connection failed: %s", why->message ? why->message : "?");
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);  /* flush() looks unlocked */
        rv_err_move(&c->failure, why);
        if (c->tr)      /* NULL only after a failed rvc_conn_wrap_transport() */
            shutdown(c->tr->fd, SHUT_RDWR);
        int eof = __atomic_load_n(&c->eof, __ATOMIC_RELAXED);
        c->close_reason = reason >= 0 ? reason : eof ? RV_CLOSE_REASON_EOF : RV_CLOSE_REASON_ERROR;
        rvc_conn_listen_locked(c, 0);
        if (c->on_closed) {
            c->close_pending = 1;
            rvc_conn_arm_dispatch_locked(c);
        }
    }
    rv_err_clear(why);
    pending_call *list = c->pending;
    c->pending = NULL;
    c->pending_tail = &c->pending;
    unsigned mask = 0;
    for (pending_call *p = list, *next; p; p = next) {
        next = p->next;
        copy_err(p->err, &c->failure);
        p->failed = 1;
        answer_locked(c, p, &mask);
    }
    ring(c, mask);
}

static void fail_locked(struct rvc_conn *c, rv_err *why)
{
    rvc_conn_fail_locked_because(c, why, -1);
}

static void fail(struct rvc_conn *c, rv_err *why)
{
    pthread_mutex_lock(&c->lock);
    fail_locked(c, why);
    pthread_mutex_unlock(&c->lock);
}

/* With lock held and the role free: a calling thread becomes the reader
 * (READER_CALL or READER_WRITER). */
static void take_reader_locked(struct rvc_conn *c, enum reader_state who)
{
    c->reader = who;
    rvc_conn_listen_locked(c, 0);
}

/* Input that will not make the socket readable: bytes a TLS or SASL
 * layer holds, or whole frames a call's reader left behind its reply. */
int rvc_conn_input_buffered(struct rvc_conn *c)
{
    size_t used = rv_buf_used(&c->rbuf);
    return rv_transport_pending(c->tr) > 0 ||
           (used >= RV_LEN_WORD_SIZE && used >= rv_frame_peek_len(rv_buf_head(&c->rbuf)));
}

/* With lock held: whether a synchronous call has not reached
 * await_answer yet.  Unanswered (nobody reads until it does), it will
 * get there and take the reader role itself. */
static int call_arriving_locked(struct rvc_conn *c)
{
    for (pending_call *p = c->pending; p; p = p->next)
        if (!p->on_done && !p->arrived)
            return 1;
    return 0;
}

/* With lock held: the reader is done.  The longest sleeper takes over
 * at once, unless a call on its way to wait will (saving a wakeup);
 * with neither, the loop does.  Bytes a TLS or SASL layer already holds
 * do not make the socket readable, so the loop is told to look. */
void rvc_conn_release_reader_locked(struct rvc_conn *c)
{
    waiter *w = c->failed ? NULL : c->sleepers;
    if (w && !call_arriving_locked(c)) {
        unlist_sleeper_locked(c, w);
        w->got_role = 1;
        c->reader = READER_CALL;
        rvc_conn_listen_locked(c, 0);
        unsigned mask = 0;
        wake_waiter(w, WAITER_POKED, &mask);
        ring(c, mask);
        return;
    }
    c->reader = READER_NONE;
    if (c->freed)
        pthread_cond_broadcast(&c->idle);
    if (!c->watch || c->failed || c->freed)
        return;
    rvc_conn_listen_locked(c, 1);
    if (rvc_conn_input_buffered(c))
        rvc_conn_arm_dispatch_locked(c);
}

/* ---- writing ---- */

void rvc_conn_drain_without_waiting(struct rvc_conn *c);

/* The socket is full.  The server may have stopped reading until its
 * replies are read (max_client_requests), while every other call waits
 * behind this flush; so read while waiting for room: as the reader
 * already (as_reader), or taking the role while nobody holds it. */
static int wait_writable(struct rvc_conn *c, int as_reader, rv_err *err)
{
    for (;;) {
        int read_too = as_reader;
        if (!as_reader) {
            pthread_mutex_lock(&c->lock);
            read_too = c->reader == READER_NONE && !c->failed;
            if (read_too)
                take_reader_locked(c, READER_WRITER);
            pthread_mutex_unlock(&c->lock);
        }
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
                rvc_conn_drain_without_waiting(c);
            if (!as_reader) {
                pthread_mutex_lock(&c->lock);
                rvc_conn_release_reader_locked(c);
                pthread_mutex_unlock(&c->lock);
            }
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

static int write_all(struct rvc_conn *c, const char *p, size_t n, int as_reader, rv_err *err)
{
    while (n > 0) {
        ssize_t w = rv_transport_write(c->tr, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                if (wait_writable(c, as_reader, err) < 0)
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

/* With write_lock held (released on return): see that the queue is
 * written.  A flush going on takes it along, unless the queue is past
 * QUEUE_SOFT_MAX: then wait for that flush, and flush what is left.
 * Otherwise this thread flushes until the queue is empty, writing each
 * batch outside the lock while other threads append the next.  A write
 * that fails fails the connection (and every call with it).  -1 when the
 * connection has failed. */
static int flush(struct rvc_conn *c, int as_reader)
{
    while (c->flushing) {
        if (rv_buf_used(&c->queue) <= QUEUE_SOFT_MAX || as_reader) {
            pthread_mutex_unlock(&c->write_lock);
            return 0;
        }
        c->flush_waiters++;
        pthread_cond_wait(&c->flushed, &c->write_lock);
        c->flush_waiters--;
    }
    int rc = 0;
    if (rv_buf_used(&c->queue) == 0) {
        pthread_mutex_unlock(&c->write_lock);
        return rc;
    }
    c->flushing = 1;
    __atomic_store_n(&c->left_to_reader, 0, __ATOMIC_RELAXED);
    while (rv_buf_used(&c->queue) > 0) {
        rv_buf batch = c->queue;
        c->queue = c->out;
        c->out = batch;
        pthread_mutex_unlock(&c->write_lock);
        /* Dead: its calls have failed already. */
        int dead = __atomic_load_n(&c->failed, __ATOMIC_RELAXED);
        rv_err why = { 0 };
        if (dead || write_all(c, rv_buf_head(&c->out), rv_buf_used(&c->out), as_reader, &why) < 0) {
            if (!dead)
                fail(c, &why);
            rc = -1;
        }
        c->out.start = c->out.len = 0;
        if (c->out.cap > BUF_KEEP)
            rv_buf_shrink(&c->out, BUF_KEEP);
        pthread_mutex_lock(&c->write_lock);
        if (rc < 0)
            c->queue.start = c->queue.len = 0;  /* they failed with the connection */
    }
    c->flushing = 0;
    if (c->flush_waiters)
        pthread_cond_broadcast(&c->flushed);
    pthread_mutex_unlock(&c->write_lock);
    return rc;
}

void rvc_conn_send_keepalive(struct rvc_conn *c, int proc, int as_reader)
{
    /* The reader calls this for a PONG: it must not wait long for room,
     * since the room comes from the server, which may wait for it. */
    struct pollfd pfd = { .fd = c->tr->fd, .events = POLLOUT };
    if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLOUT))
        return;
    pthread_mutex_lock(&c->write_lock);
    if (c->flushing || rv_buf_reserve(&c->queue, RV_KEEPALIVE_FRAME_LEN) < 0) {
        pthread_mutex_unlock(&c->write_lock);
        return;
    }
    rv_frame_keepalive(c->queue.data + c->queue.len, proc);
    c->queue.len += RV_KEEPALIVE_FRAME_LEN;
    if (flush(c, as_reader) < 0)
        RV_DEBUG("cannot send a keepalive %s", proc == RV_KEEPALIVE_PROC_PING ? "ping" : "pong");
}

static void stream_link_locked(struct rvc_conn *c, struct rvc_stream *s, unsigned serial,
                               int proc);

/* The one way a call goes out: its frame is encoded into the queue and
 * the call registered under a new serial (with its stream, if any, bound
 * to it), then the queue is flushed (an asynchronous call's only once
 * it is long: rvc_conn_complete sends the rest).  Encode first, register
 * second: a call is known to the reader only once its frame is whole, so
 * no reply (even a forged early one) can reach a call that then fails to
 * encode and returns.  0, or -1 with err set (the call did not start). */
static int send_call(struct rvc_conn *c, pending_call *p, xdrproc_t args_filter, void *args,
                     struct rvc_stream *stream, rv_err *err)
{
    rv_header h = {
        .prog = RV_REMOTE_PROGRAM, .vers = RV_REMOTE_VERSION,
        .proc = p->proc, .type = RV_CALL, .serial = 0, .status = RV_OK,
    };
    pthread_mutex_lock(&c->write_lock);
    size_t at = c->queue.len;
    if (rv_frame_encode(&c->queue, &h, args_filter, args, err) < 0) {
        c->queue.len = at;
        pthread_mutex_unlock(&c->write_lock);
        return -1;
    }
    pthread_mutex_lock(&c->lock);
    if (c->failed) {
        connection_unusable(c, err);
        pthread_mutex_unlock(&c->lock);
        c->queue.len = at;
        pthread_mutex_unlock(&c->write_lock);
        return -1;
    }
    /* Numbered under write_lock, so serials reach the wire in order. */
    p->serial = c->next_serial++;
    link_pending_locked(c, p);
    if (stream)
        stream_link_locked(c, stream, p->serial, p->proc);
    if (p->on_done)
        c->async_in_flight++;
    pthread_mutex_unlock(&c->lock);
    rv_frame_set_serial(c->queue.data + at, p->serial);
    RV_DEBUG("%s %s serial %u", p->on_done ? "start" : "call", proc_label(p->proc), p->serial);
    if (rv_buf_used(&c->queue) < QUEUE_SOFT_MAX) {
        /* Left to a running reader: it sees left_to_reader after it
         * stops collecting, or this thread sees that it stopped (both
         * store, then load: one of the two flushes). */
        int leave = p->on_done != NULL;
        if (!leave) {
            __atomic_store_n(&c->left_to_reader, 1, __ATOMIC_SEQ_CST);
            leave = __atomic_load_n(&c->collecting, __ATOMIC_SEQ_CST);
        }
        if (leave) {
            pthread_mutex_unlock(&c->write_lock);
            return 0;
        }
    }
    flush(c, 0);        /* a failure answers the call */
    return 0;
}

/* ---- reading ---- */

/* As the reader: wake the callers it answered (see waiter). */
static void ring_answered(struct rvc_conn *c)
{
    unsigned mask = c->to_ring;
    c->to_ring = 0;
    ring(c, mask);
}

/* As the reader: send the frames calls left to it. */
static void flush_collected(struct rvc_conn *c)
{
    if (!__atomic_load_n(&c->left_to_reader, __ATOMIC_SEQ_CST))
        return;
    pthread_mutex_lock(&c->write_lock);
    flush(c, 1);
}

/* As the reader: start or stop collecting (see struct rvc_conn); what
 * was left to it goes out before it stops. */
static void set_collecting(struct rvc_conn *c, int on)
{
    __atomic_store_n(&c->collecting, on, __ATOMIC_SEQ_CST);
    if (!on)
        flush_collected(c);
}

static long long elapsed_ns(const struct timespec *from)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - from->tv_sec) * 1000000000LL + (now.tv_nsec - from->tv_nsec);
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
            __atomic_store_n(&c->eof, 1, __ATOMIC_RELAXED);     /* fail() may read it */
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

/* Before sleeping, look for input (a read, not a poll: when it has come
 * that is the one syscall it costs) until the spin window ends; 1 if
 * bytes came or frames were delivered under it (see fill()), 0 if
 * neither, -1 as read_available. */
static int spin_for_input(struct rvc_conn *c, rv_err *why)
{
    unsigned long long taken = c->frames_taken;
    if (c->spin_window_ns == 0)
        return 0;
    if (c->spin_skip > 0) {
        c->spin_skip--;
        return 0;
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        flush_collected(c);
        if (c->frames_taken != taken)
            return 1;
        int got = read_available(c, why, NULL);
        if (got != 0) {
            c->spin_misses = 0;
            return got;
        }
        sched_yield();
    } while (elapsed_ns(&start) < c->spin_window_ns);
    if (++c->spin_misses >= SPIN_MISSES_TO_BACK_OFF) {
        c->spin_misses = 0;
        c->spin_skip = SPIN_BACK_OFF_READS;
    }
    return 0;
}

/* Read more bytes into rbuf, wanting at least `need`, waiting for them;
 * take whatever else is there so that back-to-back replies cost one read.
 * Returns at once, reading nothing, when frames were delivered under it
 * (writing what calls left to it into a full socket: wait_writable):
 * the answer waited for may be among them, and sleeping in poll() would
 * keep it from its caller until the server's next frame, which may wait
 * for that caller (test-client-reader-race's withheld). */
static int fill(struct rvc_conn *c, size_t need, rv_err *why)
{
    if (rv_buf_reserve(&c->rbuf, need) < 0) {
        rv_err_set(why, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory reading a reply");
        return -1;
    }
    unsigned long long taken = c->frames_taken;
    ring_answered(c);
    flush_collected(c);
    if (c->frames_taken != taken)
        return 0;
    int got = spin_for_input(c, why);
    for (;;) {
        if (got == 0)
            got = read_available(c, why, NULL);
        if (got != 0)
            return got < 0 ? -1 : 0;
        struct pollfd pfd = { .fd = c->tr->fd,
                              .events = rv_transport_wait_events(c->tr, POLLIN) };
        int timeout = c->answer_timeout_ms > 0 ? c->answer_timeout_ms : -1;
        /* Asleep, it sends nothing: calls send their own frames. */
        set_collecting(c, 0);
        if (c->frames_taken != taken) {
            set_collecting(c, 1);
            return 0;
        }
        int rc = poll(&pfd, 1, timeout);
        int saved = errno;
        set_collecting(c, 1);
        if (rc < 0 && saved != EINTR) {
            rv_err_set_errno(why, RV_FROM_RPC, saved, "cannot wait for the server");
            return -1;
        }
        if (rc == 0) {
            rv_err_set(why, RV_FROM_RPC, RV_ERR_OPERATION_TIMEOUT,
                       "Timed out during operation: the server sent no answer within %g s "
                       "(is it stopped or stuck?)", timeout / 1000.0);
            return -1;
        }
    }
}

void rvc_conn_set_answer_timeout(struct rvc_conn *c, int ms)
{
    c->answer_timeout_ms = ms;
}

/* Make rbuf's head one whole frame: 1 with its length (length word
 * included) in *frame_len, checked before any room is made.  0 when,
 * while it waited, frames were delivered under it (fill flushes, and a
 * full socket delivers what came: wait_writable) and no whole frame is
 * at the head: the caller looks again at what it waits for.  The head is
 * looked at anew after every fill: the frame whose length it read may be
 * gone (a define's 60-byte reply was decoded with the length of the
 * 400 KB document before it: test-client-threads). */
static int read_frame(struct rvc_conn *c, size_t *frame_len, rv_err *why)
{
    rv_buf *b = &c->rbuf;
    unsigned long long taken = c->frames_taken;
    for (;;) {
        size_t used = rv_buf_used(b), need = RV_LEN_WORD_SIZE - used;
        if (used >= RV_LEN_WORD_SIZE) {
            uint32_t len = rv_frame_peek_len(rv_buf_head(b));
            if (rv_frame_check_len(len, RV_FRAME_MAX, why) < 0)
                return -1;
            if (used >= len) {
                *frame_len = len;
                return 1;
            }
            need = len - used;
        }
        if (c->frames_taken != taken)
            return 0;
        if (fill(c, need, why) < 0)
            return -1;
    }
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

static int stream_frame(struct rvc_conn *c, pending_call *me, const rv_header *h,
                        const char *frame, size_t len);

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
                c->pong_owed = 1;
            else if (h.proc != RV_KEEPALIVE_PROC_PONG)
                RV_DEBUG("ignoring keepalive procedure %d", h.proc);
        } else if (h.prog == RV_REMOTE_PROGRAM && h.vers == RV_REMOTE_VERSION) {
            if (rvc_conn_queue_message(c, frame, len, why) < 0)
                return FRAME_FATAL;
        } else {
            RV_DEBUG("ignoring message: program %#x procedure %d", h.prog, h.proc);
        }
        return FRAME_NEXT;
    }
    if (h.prog == RV_REMOTE_PROGRAM && h.vers == RV_REMOTE_VERSION &&
        (h.type == RV_STREAM || h.type == RV_STREAM_HOLE))
        return stream_frame(c, me, &h, frame, len);
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

    /* Claimed: off the lists, so nobody else touches it and its waiter
     * only waits for the word; decoded unlocked. */
    pthread_mutex_lock(&c->lock);
    pending_call *p = c->pending;
    while (p && p->serial != h.serial)
        p = p->next;
    if (p && p->proc == h.proc) {
        unlink_locked(c, p);
        unlist_sleeper_locked(c, &p->w);
        p->claimed = 1;
    }
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
    decode_answer(p, &h, frame, len);
    if (p->on_done) {
        pthread_mutex_lock(&c->lock);
        queue_completed_locked(c, p, &c->to_ring);
        pthread_mutex_unlock(&c->lock);
        return FRAME_NEXT;
    }
    wake_waiter(&p->w, WAITER_ANSWERED, &c->to_ring);
    return p == me ? FRAME_MINE : FRAME_NEXT;
}

/* As the reader: handle rbuf's head frame (len bytes), take it off rbuf,
 * then answer it if it was a PING.  handle_frame's result. */
static int take_frame(struct rvc_conn *c, pending_call *me, size_t len, rv_err *why)
{
    int r = handle_frame(c, me, len, why);
    if (r == FRAME_FATAL)
        return r;
    rv_buf_consume(&c->rbuf, len);
    c->frames_taken++;
    if (c->pong_owed) {
        c->pong_owed = 0;
        rvc_conn_send_keepalive(c, RV_KEEPALIVE_PROC_PONG, 1);
    }
    return r;
}

/* As the reader: deliver the whole frames already in rbuf, reading
 * nothing.  -1 (why set) when one is fatal. */
static int deliver_buffered(struct rvc_conn *c, rv_err *why)
{
    for (;;) {
        rv_buf *b = &c->rbuf;
        size_t used = rv_buf_used(b);
        if (used < RV_LEN_WORD_SIZE)
            return 0;
        uint32_t len = rv_frame_peek_len(rv_buf_head(b));
        if (rv_frame_check_len(len, RV_FRAME_MAX, why) < 0)
            return -1;
        if (used < len)
            return 0;
        if (take_frame(c, NULL, len, why) == FRAME_FATAL)
            return -1;
    }
}

/* The reader role: deliver every frame that arrives until our own answer
 * has come (then the frames that came with it), or the connection fails
 * (which also answers us). */
static void read_until_answered(struct rvc_conn *c, pending_call *me)
{
    rv_err why = { 0 };
    set_collecting(c, 1);
    while (!answered(me)) {
        size_t len;
        int got = read_frame(c, &len, &why);
        if (got < 0)
            goto failed;
        if (got > 0 && take_frame(c, me, len, &why) == FRAME_FATAL)
            goto failed;
        if (c->rbuf.cap > BUF_KEEP)
            rv_buf_shrink(&c->rbuf, BUF_KEEP);
    }
    /* Those frames' callers are asleep: waking them now spares handing
     * the role to one of them just to do it. */
    if (deliver_buffered(c, &why) == 0) {
        ring_answered(c);
        set_collecting(c, 0);
        return;
    }
failed:
    ring_answered(c);
    fail(c, &why);
    set_collecting(c, 0);
}

/* Wait for a registered call's answer (me on c->pending): as the reader
 * when nobody reads, else asleep until the reader hands over the answer
 * or the reader role. */
static void await_answer(struct rvc_conn *c, pending_call *me)
{
    for (;;) {
        if (answered(me))
            return;
        pthread_mutex_lock(&c->lock);
        me->arrived = 1;
        int reader = c->reader == READER_NONE;
        if (reader)
            take_reader_locked(c, READER_CALL);
        else if (!me->claimed)
            list_sleeper_locked(c, &me->w);
        pthread_mutex_unlock(&c->lock);
        if (!reader) {
            sleep_waiter(c, &me->w);
            reader = me->w.got_role;
            me->w.got_role = 0;
        }
        if (reader) {
            read_until_answered(c, me);
            pthread_mutex_lock(&c->lock);
            rvc_conn_release_reader_locked(c);
            pthread_mutex_unlock(&c->lock);
            return;
        }
    }
}

/* rvc_conn_call; a stream, when given, is bound to the call's serial as
 * the call is registered, so that no data that follows the reply is lost. */
static int call_common(struct rvc_conn *c, int proc, xdrproc_t args_filter, void *args,
                       xdrproc_t ret_filter, void *ret, struct rvc_stream *stream, rv_err *err)
{
    pending_call me = { .proc = proc, .ret_filter = ret_filter, .ret = ret, .err = err };
    if (send_call(c, &me, args_filter, args, stream, err) < 0)
        return -1;
    await_answer(c, &me);
    return me.failed ? -1 : 0;
}

int rvc_conn_call(struct rvc_conn *c, int proc, xdrproc_t args_filter, void *args,
                  xdrproc_t ret_filter, void *ret, rv_err *err)
{
    return call_common(c, proc, args_filter, args, ret_filter, ret, NULL, err);
}

int rvc_conn_start(struct rvc_conn *c, int proc, xdrproc_t args_filter, void *args,
                   xdrproc_t ret_filter, void *ret, rvc_done_fn on_done, void *opaque,
                   rv_err *err)
{
    pending_call *p = calloc(1, sizeof(*p));
    if (!p) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    *p = (pending_call){ .proc = proc, .ret_filter = ret_filter, .ret = ret,
                         .on_done = on_done, .done_opaque = opaque };
    p->err = &p->own_err;
    if (send_call(c, p, args_filter, args, NULL, err) < 0) {
        free(p);
        return -1;
    }
    return 0;
}

/* As the reader: wait for one frame and deliver it, then whatever else
 * has arrived. */
static void read_answers(struct rvc_conn *c)
{
    rv_err why = { 0 };
    size_t len;
    set_collecting(c, 1);
    int got = read_frame(c, &len, &why);
    if (got < 0 || (got > 0 && take_frame(c, NULL, len, &why) == FRAME_FATAL))
        fail(c, &why);
    else
        rvc_conn_drain_without_waiting(c);
    set_collecting(c, 0);
}

int rvc_conn_complete(struct rvc_conn *c, unsigned int max_in_flight)
{
    pthread_mutex_lock(&c->write_lock);
    flush(c, 0);            /* a failure completes the calls */

    int ran = 0;
    waiter me = { .completer = 1, .bit = thread_bit() };
    pthread_mutex_lock(&c->lock);
    for (;;) {
        if (c->completed) {
            pending_call *list = c->completed;
            c->completed = NULL;
            c->completed_tail = &c->completed;
            pthread_mutex_unlock(&c->lock);
            unsigned n = 0;
            for (pending_call *p = list, *next; p; p = next, n++) {
                next = p->next;
                p->on_done(p->done_opaque, p->failed, &p->own_err);
                rv_err_clear(&p->own_err);
                free(p);
            }
            ran += (int)n;
            pthread_mutex_lock(&c->lock);
            c->async_in_flight -= n;
            continue;
        }
        if (c->async_in_flight <= max_in_flight)
            break;
        int reader = c->reader == READER_NONE;
        if (reader) {
            take_reader_locked(c, READER_CALL);
        } else {
            /* Another thread reads: it hands our answers, or the role, over. */
            list_sleeper_locked(c, &me);
            pthread_mutex_unlock(&c->lock);
            sleep_waiter(c, &me);
            pthread_mutex_lock(&c->lock);
            unlist_sleeper_locked(c, &me);
            reader = me.got_role;
            me.got_role = 0;
        }
        if (reader) {
            pthread_mutex_unlock(&c->lock);
            read_answers(c);
            pthread_mutex_lock(&c->lock);
            rvc_conn_release_reader_locked(c);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return ran;
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
    if (c->pending || c->reader != READER_NONE || c->watch || c->flushing ||
        rv_buf_used(&c->queue) > 0) {
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

/* As the reader, deliver whatever has arrived without waiting for more:
 * frames already buffered, then anything the socket has.  A frame that
 * is only partly here stays in rbuf for the next reader. */
void rvc_conn_drain_without_waiting(struct rvc_conn *c)
{
    rv_err why = { 0 };
    int drained = 0;
    while (deliver_buffered(c, &why) == 0) {
        /* A short read emptied the socket: asking again would only get
         * EAGAIN (one wasted syscall per event on every connection). */
        if (drained)
            goto done;
        /* At most part of a frame is left, its length checked. */
        rv_buf *b = &c->rbuf;
        size_t used = rv_buf_used(b);
        size_t want = used >= RV_LEN_WORD_SIZE ? rv_frame_peek_len(rv_buf_head(b)) - used : 1;
        if (rv_buf_reserve(b, want) < 0) {
            rv_err_set(&why, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory reading a reply");
            break;
        }
        int got = read_available(c, &why, &drained);
        if (got == 0)
            goto done;
        if (got < 0)
            break;
    }
    ring_answered(c);
    fail(c, &why);
    return;
done:
    ring_answered(c);
}

/* ---- streams ---- */

/* Data the server sent on a stream, not read yet: bytes, or on a sparse
 * stream a hole (len 0, hole its length still unread). */
typedef struct stream_chunk {
    struct stream_chunk *next;
    size_t len, off;
    long long hole;
    char data[];
} stream_chunk;

struct rvc_stream {
    struct rvc_conn *conn;
    struct rvc_stream *next;        /* conn->streams */
    unsigned serial;
    int proc;
    int sparse;                     /* holes may travel both ways */
    /* Under conn->lock: */
    stream_chunk *head, **tail;
    size_t queued;
    int eof;                        /* the server's data ended */
    int failed;                     /* the server failed it: err says why */
    rv_err err;
    int ending;                     /* we finished or aborted it */
    int answered;                   /* the server answered that */
    int linked;                     /* on conn->streams */
    pending_call *waiter;           /* a thread waiting for it */
};

static void stream_link_locked(struct rvc_conn *c, struct rvc_stream *s, unsigned serial,
                               int proc)
{
    s->serial = serial;
    s->proc = proc;
    s->next = c->streams;
    c->streams = s;
    s->linked = 1;
}

static void stream_unlink_locked(struct rvc_conn *c, struct rvc_stream *s)
{
    for (struct rvc_stream **pp = &c->streams; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    s->linked = 0;
}

/* What a waiter on s waits for: data (or its end, or a failure) to
 * receive, or the answer to our finish or abort. */
static int stream_ready_locked(const struct rvc_stream *s)
{
    if (s->failed)
        return 1;
    return s->ending ? s->answered : s->head != NULL || s->eof;
}

static void stream_fail_locked(struct rvc_stream *s, int code, const char *msg)
{
    if (s->failed)
        return;
    s->failed = 1;
    rv_err_set(&s->err, RV_FROM_STREAMS, code, "%s", msg);
}

/* Queue n bytes of data, or a hole of `hole` bytes, on s; a hole counts
 * as the size of its record against the queue's bound. */
static void queue_chunk_locked(struct rvc_stream *s, const char *data, size_t n, long long hole)
{
    size_t cost = hole > 0 ? sizeof(stream_chunk) : n;
    stream_chunk *ch = NULL;
    if (s->queued + cost > RVC_STREAM_QUEUE_MAX)
        stream_fail_locked(s, RV_ERR_OPERATION_FAILED,
                           "more than 16 MiB of stream data came without being read");
    else if (!(ch = malloc(sizeof(*ch) + n)))
        stream_fail_locked(s, RV_ERR_NO_MEMORY, "out of memory");
    if (!ch)
        return;
    ch->next = NULL;
    ch->len = n;
    ch->off = 0;
    ch->hole = hole;
    if (n)
        memcpy(ch->data, data, n);
    *s->tail = ch;
    s->tail = &ch->next;
    s->queued += cost;
}

/* A STREAM or STREAM_HOLE packet: queued on its stream, whose waiter (if
 * it now has what it waits for) is answered.  Packets for a stream we no
 * longer have are dropped: they can cross our abort. */
static int stream_frame(struct rvc_conn *c, pending_call *me, const rv_header *h,
                        const char *frame, size_t len)
{
    const char *payload = frame + RV_FRAME_MIN;
    size_t n = len - RV_FRAME_MIN;
    rv_error e;
    int have_error = 0;
    long long hole = -1;
    rv_err bad_hole = { 0 };
    if (h->type == RV_STREAM_HOLE)
        hole = rv_stream_hole_decode(payload, n, &bad_hole);
    if (h->type == RV_STREAM && h->status == RV_ERROR) {
        /* Decoded outside the lock; an undecodable one is still an error. */
        memset(&e, 0, sizeof(e));
        have_error = rv_frame_decode_payload(frame, len, (xdrproc_t)xdr_rv_error, &e, NULL) == 0;
    }
    pthread_mutex_lock(&c->lock);
    struct rvc_stream *s = c->streams;
    while (s && (s->serial != h->serial || s->proc != h->proc))
        s = s->next;
    if (!s) {
        RV_DEBUG("dropping a stream packet for serial %u: no such stream", h->serial);
    } else if (h->type == RV_STREAM_HOLE) {
        if (!s->sparse)
            stream_fail_locked(s, RV_ERR_RPC,
                               "the server sent a hole on a stream that is not sparse");
        else if (hole < 0)
            stream_fail_locked(s, RV_ERR_RPC,
                               bad_hole.message ? bad_hole.message : "malformed stream hole");
        else if (hole > 0 && !s->ending && !s->failed)
            queue_chunk_locked(s, NULL, 0, hole);
    } else if (h->status == RV_ERROR) {
        if (!s->failed) {
            s->failed = 1;
            const char *msg = have_error && e.message && **e.message ? *e.message : "stream failed";
            rv_err_set(&s->err, have_error ? e.domain : RV_FROM_STREAMS,
                       have_error && e.code ? e.code : RV_ERR_RPC, "%s", msg);
        }
    } else if (h->status == RV_OK) {
        if (s->ending)
            s->answered = 1;
        else
            s->eof = 1;
    } else if (n == 0) {
        s->eof = 1;                 /* an empty CONTINUE ends the data */
    } else if (!s->ending && !s->failed) {
        queue_chunk_locked(s, payload, n, 0);
    }
    int mine = 0;
    /* A waiter whose REPLY came (claimed) or that failed with the
     * connection has its answer already. */
    if (s && s->waiter && !s->waiter->claimed && !answered(s->waiter) &&
        stream_ready_locked(s)) {
        pending_call *w = s->waiter;
        s->waiter = NULL;
        unlink_locked(c, w);
        mine = w == me;
        answer_locked(c, w, &c->to_ring);   /* the last touch of w: see wake_waiter */
    }
    pthread_mutex_unlock(&c->lock);
    if (have_error)
        xdr_free((xdrproc_t)xdr_rv_error, (char *)&e);
    rv_err_clear(&bad_hole);
    return mine ? FRAME_MINE : FRAME_NEXT;
}

int rvc_conn_stream_call(struct rvc_conn *c, int proc, xdrproc_t args_filter, void *args,
                         int sparse, struct rvc_stream **out, rv_err *err)
{
    return rvc_conn_stream_call_ret(c, proc, args_filter, args, NULL, NULL, sparse, out, err);
}

int rvc_conn_stream_call_ret(struct rvc_conn *c, int proc, xdrproc_t args_filter, void *args,
                             xdrproc_t ret_filter, void *ret, int sparse, struct rvc_stream **out,
                             rv_err *err)
{
    struct rvc_stream *s = calloc(1, sizeof(*s));
    if (!s) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    s->conn = c;
    s->sparse = sparse;
    s->tail = &s->head;
    if (call_common(c, proc, args_filter, args, ret_filter, ret, s, err) < 0) {
        /* Refused: the server has no stream to end. */
        pthread_mutex_lock(&c->lock);
        if (s->linked)
            stream_unlink_locked(c, s);
        pthread_mutex_unlock(&c->lock);
        rvc_stream_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* Wait until s is ready (stream_ready_locked): as the reader, or asleep
 * while another thread reads.  With nonblock, only what has arrived is
 * read; RVC_STREAM_AGAIN if that was not enough.  A REPLY with the
 * stream's serial (libvirtd answers a failed finish so) fails it. */
static int stream_wait(struct rvc_stream *s, int nonblock, rv_err *err)
{
    struct rvc_conn *c = s->conn;
    pthread_mutex_lock(&c->lock);
    if (nonblock && !stream_ready_locked(s) && !c->failed && c->reader == READER_NONE) {
        take_reader_locked(c, READER_CALL);
        pthread_mutex_unlock(&c->lock);
        rvc_conn_drain_without_waiting(c);
        pthread_mutex_lock(&c->lock);
        rvc_conn_release_reader_locked(c);
    }
    if (stream_ready_locked(s)) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    if (c->failed) {
        connection_unusable(c, err);
        pthread_mutex_unlock(&c->lock);
        return -1;
    }
    if (nonblock) {
        pthread_mutex_unlock(&c->lock);
        return RVC_STREAM_AGAIN;
    }
    rv_err answer = { 0 };
    pending_call me = { .proc = s->proc, .serial = s->serial, .err = &answer };
    link_pending_locked(c, &me);
    s->waiter = &me;
    pthread_mutex_unlock(&c->lock);
    await_answer(c, &me);
    pthread_mutex_lock(&c->lock);
    s->waiter = NULL;
    int rc = 0;
    if (me.failed) {
        if (c->failed) {
            copy_err(err, &answer);
            rc = -1;
        } else if (!s->failed) {
            s->failed = 1;      /* a REPLY with the error */
            copy_err(&s->err, &answer);
        }
    } else if (!stream_ready_locked(s)) {
        s->answered = s->eof = 1;   /* an empty REPLY */
    }
    pthread_mutex_unlock(&c->lock);
    rv_err_clear(&answer);
    return rc;
}

/* Write one STREAM packet with this status and data, or (hole > 0) one
 * STREAM_HOLE packet of that length. */
static int stream_write(struct rvc_stream *s, int status, const char *data, size_t len,
                        long long hole, rv_err *err)
{
    struct rvc_conn *c = s->conn;
    rv_header h = {
        .prog = RV_REMOTE_PROGRAM, .vers = RV_REMOTE_VERSION, .proc = s->proc,
        .type = RV_STREAM, .serial = s->serial, .status = status,
    };
    pthread_mutex_lock(&c->write_lock);
    rv_buf *q = &c->queue;
    size_t at = q->len;
    if ((hole > 0 ? rv_stream_hole_encode(q, &h, hole, err)
                  : rv_frame_encode(q, &h, NULL, NULL, err)) < 0 ||
        rv_buf_reserve(q, len) < 0) {
        q->len = at;
        pthread_mutex_unlock(&c->write_lock);
        if (!rv_err_is_set(err))
            rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (len)
        memcpy(q->data + q->len, data, len);
    q->len += len;
    uint32_t be = htonl((uint32_t)(q->len - at));
    memcpy(q->data + at, &be, sizeof(be));
    if (flush(c, 0) == 0)
        return 0;
    pthread_mutex_lock(&c->lock);
    copy_err(err, &c->failure);
    pthread_mutex_unlock(&c->lock);
    return -1;
}

/* The most data in one packet: libvirt's size. */
#define STREAM_CHUNK 262120

int rvc_stream_send(struct rvc_stream *s, const char *data, size_t len, rv_err *err)
{
    pthread_mutex_lock(&s->conn->lock);
    int failed = s->failed;
    if (failed)
        copy_err(err, &s->err);
    pthread_mutex_unlock(&s->conn->lock);
    if (failed)
        return -1;
    while (len > 0) {
        size_t n = len < STREAM_CHUNK ? len : STREAM_CHUNK;
        if (stream_write(s, RV_CONTINUE, data, n, 0, err) < 0)
            return -1;
        data += n;
        len -= n;
    }
    return 0;
}

int rvc_stream_send_hole(struct rvc_stream *s, long long length, rv_err *err)
{
    if (!s->sparse) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_INVALID,
                   "the stream is not sparse: it cannot carry holes");
        return -1;
    }
    if (length < 0) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_INVALID_ARG,
                   "a hole's length must not be negative (%lld)", length);
        return -1;
    }
    pthread_mutex_lock(&s->conn->lock);
    int failed = s->failed;
    if (failed)
        copy_err(err, &s->err);
    pthread_mutex_unlock(&s->conn->lock);
    if (failed)
        return -1;
    return length > 0 ? stream_write(s, RV_CONTINUE, NULL, 0, length, err) : 0;
}

ssize_t rvc_stream_recv(struct rvc_stream *s, char *buf, size_t len, int nonblock,
                        int stop_at_hole, rv_err *err)
{
    int rc = stream_wait(s, nonblock, err);
    if (rc != 0)
        return rc;
    struct rvc_conn *c = s->conn;
    pthread_mutex_lock(&c->lock);
    size_t got = 0;
    int at_hole = 0;
    while (s->head && got < len) {
        stream_chunk *ch = s->head;
        if (ch->hole > 0) {
            if (stop_at_hole) {
                at_hole = got == 0;
                break;
            }
            /* Read as zeros, as libvirt's client does without the flag. */
            size_t n = (unsigned long long)ch->hole < len - got ? (size_t)ch->hole : len - got;
            memset(buf + got, 0, n);
            got += n;
            if ((ch->hole -= (long long)n) > 0)
                continue;
            s->queued -= sizeof(stream_chunk);
        } else {
            size_t n = ch->len - ch->off < len - got ? ch->len - ch->off : len - got;
            memcpy(buf + got, ch->data + ch->off, n);
            ch->off += n;
            got += n;
            s->queued -= n;
        }
        if (ch->hole <= 0 && ch->off == ch->len) {
            s->head = ch->next;
            if (!s->head)
                s->tail = &s->head;
            free(ch);
        }
    }
    ssize_t ret = at_hole ? RVC_STREAM_AT_HOLE : (ssize_t)got;
    if (got == 0 && !at_hole && s->failed) {
        copy_err(err, &s->err);
        ret = -1;
    }
    pthread_mutex_unlock(&c->lock);
    return ret;
}

int rvc_stream_recv_hole(struct rvc_stream *s, long long *length, rv_err *err)
{
    struct rvc_conn *c = s->conn;
    pthread_mutex_lock(&c->lock);
    stream_chunk *ch = s->head;
    int rc = 0;
    if (ch && ch->hole > 0) {
        *length = ch->hole;
        s->head = ch->next;
        if (!s->head)
            s->tail = &s->head;
        s->queued -= sizeof(stream_chunk);
        free(ch);
    } else {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_INVALID,
                   "there is no hole at the stream's position (receive up to it first)");
        rc = -1;
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int rvc_stream_end(struct rvc_stream *s, int abort, rv_err *err)
{
    struct rvc_conn *c = s->conn;
    pthread_mutex_lock(&c->lock);
    int failed = s->failed, ended = s->ending;
    if (failed && !abort)
        copy_err(err, &s->err);
    s->ending = 1;
    pthread_mutex_unlock(&c->lock);
    if (ended)
        return 0;
    if (failed)     /* the server's error was the stream's last word: */
        return abort ? 0 : -1;      /* nothing more goes out on it */
    if (stream_write(s, abort ? RV_ERROR : RV_OK, NULL, 0, 0, err) < 0 || stream_wait(s, 0, err) < 0)
        return -1;
    pthread_mutex_lock(&c->lock);
    failed = s->failed;
    if (failed && !abort)
        copy_err(err, &s->err);
    pthread_mutex_unlock(&c->lock);
    return failed && !abort ? -1 : 0;
}

void rvc_stream_free(struct rvc_stream *s)
{
    if (!s)
        return;
    struct rvc_conn *c = s->conn;
    pthread_mutex_lock(&c->lock);
    int ended = s->ending || !s->linked;
    pthread_mutex_unlock(&c->lock);
    if (!ended) {
        rv_err ignored = { 0 };
        rvc_stream_end(s, 1, &ignored);
        rv_err_clear(&ignored);
    }
    pthread_mutex_lock(&c->lock);
    if (s->linked)
        stream_unlink_locked(c, s);
    pthread_mutex_unlock(&c->lock);
    while (s->head) {
        stream_chunk *ch = s->head;
        s->head = ch->next;
        free(ch);
    }
    rv_err_clear(&s->err);
    free(s);
}
