/* What the connection's three files share: client/conn.c (calls and the
 * reader role), client/conn_loop.c (the application's event loop: the
 * socket's handle, event queueing and delivery) and client/keepalive.c.
 * Nothing else includes it. */
#ifndef RV_CLIENT_CONN_PRIV_H
#define RV_CLIENT_CONN_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "client/conn.h"
#include "common/error.h"
#include "common/util.h"

/* The reader role: who owns the socket's input (rbuf and the transport's
 * reads).  One holder at a time; it changes only under lock.
 *
 *   state          holder                 takes it (from NONE)      gives it back
 *   READER_NONE    nobody: the loop's     -                         -
 *                  handle listens, if any
 *   READER_CALL    a call waiting for     a waiting call (or         its answer came, or the
 *                  its answer, or         rvc_conn_complete) when    connection failed
 *                  rvc_conn_complete      nobody reads; or handed
 *                                         it by the holder before
 *   READER_WRITER  a flush that met a     wait_writable, if nobody  the socket has room or
 *                  full socket            reads                     failed; what came is delivered
 *   READER_LOOP    the loop's thread      read_from_loop: readable  what had come is delivered
 *                                         or buffered input, and
 *                                         nobody reads
 *
 * Taking it (but for READER_LOOP, whose thread is not polling) stops the
 * loop's handle listening, so the loop does not wake for replies a call
 * reads.  Giving it back (rvc_conn_release_reader_locked) hands it
 * straight to the longest-sleeping waiter (one wakeup, after which that
 * waiter reads until its own answer comes), unless a call still on its
 * way to wait will take it anyway; otherwise the role becomes NONE: a waiting rvc_conn_free (which needs NONE) is
 * woken and the handle listens again, with a dispatch armed for input
 * that will not make the socket readable (a TLS or SASL layer's buffer,
 * whole frames left in rbuf). */
enum reader_state { READER_NONE, READER_CALL, READER_WRITER, READER_LOOP };

/* A MESSAGE from the server on its way to the loop's thread. */
typedef struct queued_message {
    struct queued_message *next;
    size_t len;
    char frame[];
} queued_message;

/* A thread waiting inside the connection: a call for its answer, or
 * rvc_conn_complete for asynchronous answers.  word says where it is:
 * WAITER_RUNNING, WAITER_ASLEEP (set by the sleeper itself),
 * WAITER_POKED (handed the reader role, got_role set, or for a completer:
 * look again) or WAITER_ANSWERED (a call's answer is in: final, and the
 * waker's last write, since the caller may return at once).  A sleeper
 * sleeps on the connection's bell, a futex, with its thread's bit
 * (FUTEX_WAIT_BITSET), so that a reader wakes every caller one batch of
 * replies answered with one FUTEX_WAKE_BITSET, needing no lock the
 * sleepers must take again.  Each wakeup of another thread tends to
 * preempt the waker on a busy CPU; one call for the batch lets the
 * reader finish its batch first. */
enum { WAITER_RUNNING, WAITER_ANSWERED, WAITER_ASLEEP, WAITER_POKED };
typedef struct waiter {
    struct waiter *next;        /* conn->sleepers, while listed (under lock) */
    int word;
    int listed;
    int got_role;               /* handed the reader role (under lock, before the poke) */
    int completer;              /* rvc_conn_complete: poked for every asynchronous answer */
    unsigned bit;               /* its bit on the bell (threads share the 32 bits) */
} waiter;

/* A call between registering its serial and getting its answer.  A
 * synchronous call's lives on the calling thread's stack: whoever
 * delivers the answer fills ret or err, then sets w.word to ANSWERED.
 * An asynchronous call's (rvc_conn_start) is malloc'd, with err pointing
 * at own_err: its answer moves it to conn->completed, where
 * rvc_conn_complete() finds it, runs on_done and frees it. */
typedef struct pending_call {
    struct pending_call *next;  /* conn->pending, oldest first */
    rvc_done_fn on_done;        /* set: an asynchronous call */
    void *done_opaque;
    rv_err own_err;
    unsigned serial;
    int proc;
    xdrproc_t ret_filter;
    void *ret;
    rv_err *err;
    int failed;
    int claimed;                /* off the list: a reader is decoding its answer */
    int arrived;                /* a synchronous call's thread reached await_answer */
    waiter w;
} pending_call;

struct rvc_conn {
    rv_transport *tr;

    /* Outgoing frames.  A call appends its frame to `queue`; the one
     * thread that is flushing writes it (swapped into `out`) outside the
     * lock, and goes on while others append, so threads calling at once
     * share writes.  A thread that finds a flush going leaves its frame
     * to it, unless the queue is past QUEUE_SOFT_MAX: then it waits for
     * that flush (back-pressure for big writers such as uploads). */
    pthread_mutex_t write_lock;     /* guards queue, flushing, flush_waiters */
    rv_buf queue;
    rv_buf out;                     /* the flusher's alone */
    int flushing;
    int flush_waiters;
    /* The reader is running (not asleep in poll) and sends the queue
     * before it waits: a call that finds it set leaves its frame to it,
     * so calls woken by one batch of replies go out in one write. */
    int collecting;                 /* atomic */
    int left_to_reader;             /* atomic: a frame waits for the reader's flush */
    pthread_cond_t flushed;         /* a flush ended */

    pthread_mutex_t lock;           /* guards the fields below */
    unsigned next_serial;
    pending_call *pending, **pending_tail;  /* registered calls without an answer */
    waiter *sleepers, **sleepers_tail;      /* threads asleep on their word, oldest first */
    struct rvc_stream *streams;     /* open streams (rvc_conn_stream_call) */
    enum reader_state reader;       /* who owns the socket's input (see above) */
    int failed;                     /* set atomically: flush() reads it unlocked */
    rv_err failure;                 /* why the connection stopped working */

    /* Asynchronous calls: the answered ones whose on_done has not run,
     * and how many were started and have not had it run. */
    pending_call *completed, **completed_tail;
    unsigned async_in_flight;

    int bell;                       /* futex the waiters sleep on; bumped at every ring */
    unsigned to_ring;               /* reader only: bits of the waiters it answered, to wake */

    rv_buf rbuf;                    /* only the current reader touches it */
    /* Reader only.  A reader waiting for a frame also writes what calls
     * left to it, and a full socket has it deliver what came meanwhile
     * (wait_writable): frames_taken tells it the head of rbuf moved on
     * under it.  pong_owed: a PING's answer, sent once the PING is off
     * rbuf, since sending it may deliver frames too. */
    unsigned long long frames_taken;
    int pong_owed;
    long long spin_window_ns;       /* see spin_for_input(); 0: never spin */
    int spin_misses;                /* reader only */
    int spin_skip;
    int answer_timeout_ms;          /* see rvc_conn_set_answer_timeout(); 0: none */

    int eof;                        /* the server closed the connection (atomic) */
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
    pthread_t dispatcher;
    pthread_cond_t idle;            /* dispatching or the loop's reading ended */
    /* Keepalive (rvc_conn_set_keepalive); the loop's thread only, under lock. */
    int keepalive_timer;
    int keepalive_interval;         /* seconds; 0: off */
    unsigned int keepalive_count;
    unsigned int pings_unanswered;
    long long heard_at_last_ping;
};

/* ---- conn.c ---- */

/* With lock held: drop one reference (the lock is released either way). */
void rvc_conn_unref_unlock(struct rvc_conn *c);
/* With lock held: the connection is dead (why is consumed), for `reason`
 * (RV_CLOSE_REASON_*; -1: EOF if the server closed it, else ERROR). */
void rvc_conn_fail_locked_because(struct rvc_conn *c, rv_err *why, int reason);
/* With lock held: the reader gives the role back (see the table). */
void rvc_conn_release_reader_locked(struct rvc_conn *c);
/* Whether input is waiting that will not make the socket readable. */
int rvc_conn_input_buffered(struct rvc_conn *c);
/* As the reader: deliver what has arrived without waiting for more. */
void rvc_conn_drain_without_waiting(struct rvc_conn *c);
/* Append a keepalive PING or PONG (RV_KEEPALIVE_PROC_*) and send it,
 * unless a flush is going (that frame already tells the server we are
 * alive).  as_reader: the caller holds the reader role. */
void rvc_conn_send_keepalive(struct rvc_conn *c, int proc, int as_reader);

/* ---- conn_loop.c ---- */

/* With lock held: whether the loop's handle asks for READABLE. */
void rvc_conn_listen_locked(struct rvc_conn *c, int on);
/* With lock held: have the loop's thread deliver what is queued soon. */
void rvc_conn_arm_dispatch_locked(struct rvc_conn *c);
/* As the reader: keep a MESSAGE for the loop's thread.  -1 with why set
 * fails the connection. */
int rvc_conn_queue_message(struct rvc_conn *c, const char *frame, size_t len, rv_err *why);
void rvc_conn_drop_messages(struct rvc_conn *c);
/* rv_free_callback of the loop's handle and timers: drops their reference. */
void rvc_conn_loop_release(void *opaque);
void rvc_conn_detach_loop(struct rvc_conn *c);

static inline long long rvc_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

#endif
