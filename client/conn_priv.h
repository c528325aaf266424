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
 * reads).  One holder at a time; it changes only under lock, and only
 * from READER_NONE to another state and back.
 *
 *   state          holder                 takes it (from NONE)      gives it back (to NONE)
 *   READER_NONE    nobody: the loop's     -                         -
 *                  handle listens, if any
 *   READER_CALL    a call waiting for     rvc_conn_call, after its  its answer came, or the
 *                  its answer             write, if nobody reads    connection failed
 *   READER_WRITER  a call whose write     wait_writable, if nobody  the socket has room or
 *                  met a full socket      reads                     failed; what came is delivered
 *   READER_LOOP    the loop's thread      read_from_loop: readable  what had come is delivered
 *                                         or buffered input, and
 *                                         nobody reads
 *
 * Taking it (but for READER_LOOP, whose thread is not polling) stops the
 * loop's handle listening, so the loop does not wake for replies a call
 * reads.  Giving it back (rvc_conn_release_reader_locked) wakes one
 * sleeping call to take it, wakes a waiting rvc_conn_free (which needs
 * READER_NONE) and has the handle listen again, arming a dispatch for
 * input that will not make the socket readable (a TLS or SASL layer's
 * buffer, whole frames left in rbuf).  A call that finds the role taken
 * sleeps until its answer is delivered or it is woken to take the role. */
enum reader_state { READER_NONE, READER_CALL, READER_WRITER, READER_LOOP };

/* A MESSAGE from the server on its way to the loop's thread. */
typedef struct queued_message {
    struct queued_message *next;
    size_t len;
    char frame[];
} queued_message;

/* A call between registering its serial and getting its answer.  A
 * synchronous call's lives on the calling thread's stack; whoever delivers
 * the answer fills ret or err, then sets done under conn->lock.  An
 * asynchronous call's (rvc_conn_start) is malloc'd, with err pointing at
 * own_err: its answer moves it to conn->completed, where
 * rvc_conn_complete() finds it, runs on_done and frees it. */
typedef struct pending_call {
    struct pending_call *next;
    rvc_done_fn on_done;        /* set: an asynchronous call */
    void *done_opaque;
    rv_err own_err;
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
    struct rvc_stream *streams;     /* open streams (rvc_conn_stream_call) */
    enum reader_state reader;       /* who owns the socket's input (see above) */
    int failed;
    rv_err failure;                 /* why the connection stopped working */

    /* Asynchronous calls: frames not yet written (write_lock), then under
     * lock the answered ones whose on_done has not run, and how many were
     * started and have not had it run. */
    rv_buf abuf;
    pending_call *completed, **completed_tail;
    unsigned async_in_flight;
    pthread_cond_t async_wake;      /* an async call was answered, or the reader role came free */

    rv_buf rbuf;                    /* only the current reader touches it */
    long long spin_window_ns;       /* see spin_for_input(); 0: never spin */
    int spin_misses;                /* reader only */
    int spin_skip;
    int answer_timeout_ms;          /* see rvc_conn_set_answer_timeout(); 0: none */

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
/* Under write_lock: write all n bytes, waiting for room as needed. */
int rvc_conn_write_all(struct rvc_conn *c, const char *p, size_t n, rv_err *err);

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

/* ---- keepalive.c ---- */

/* Send a PING or PONG (RV_KEEPALIVE_PROC_*) if it can go at once. */
void rvc_conn_send_keepalive(struct rvc_conn *c, int proc);

static inline long long rvc_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

#endif
