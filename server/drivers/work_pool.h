/* A few threads that run CPU-heavy or disk-bound steps for the loop, so
 * that no loop pass waits on them (issue 31): a TLS handshake's steps
 * (key exchange, signatures, the client certificate's verification), a
 * block peek's read, and libxml2's parse of a call's large document
 * (server/preparse.h).  The loop hands over a job it owns (rv_work
 * embedded in it), a thread runs it, and its `done` then runs on the
 * loop, in the order the jobs finished.
 *
 * A job's `run` touches only what the job owns: client state stays the
 * loop's alone.  Jobs must not wait on a peer (a TLS step is one
 * non-blocking gnutls call; the loop waits for the socket), so a stalled
 * peer never holds a thread.  Submitting never fails and allocates
 * nothing: what bounds the queue is the caller's own limit (TLS:
 * max_anonymous_clients; peeks: max_client_requests per client; a
 * document's parse: one per client, whose reading waits for it). */
#ifndef RV_SERVER_WORK_POOL_H
#define RV_SERVER_WORK_POOL_H

#include <stdbool.h>

#include "common/error.h"

struct ev_loop;

typedef struct rv_work rv_work;
struct rv_work {
    void (*run)(rv_work *w);    /* on a pool thread */
    void (*done)(rv_work *w);   /* then on the loop; may free w */
    rv_work *next;              /* the pool's */
};

/* The default of work_threads in remvirtd.conf, and its bound. */
#define RV_WORK_THREADS_DEFAULT 2
#define RV_WORK_THREADS_MAX 64

/* Start `threads` threads whose jobs finish on loop.  -1 with err set if
 * none could be started (fewer than asked is logged and goes on). */
int rv_work_pool_start(struct ev_loop *loop, int threads, rv_err *err);
/* Whether the pool is started (from the loop). */
bool rv_work_pool_running(void);
/* Queue w (from the loop, after rv_work_pool_start). */
void rv_work_submit(rv_work *w);
/* Run what is queued, join the threads and call the `done` of every job
 * on this (the loop's) thread; then the pool may be started again. */
void rv_work_pool_stop(void);

#endif
