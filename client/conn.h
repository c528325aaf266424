/* Client connection core: one transport shared by any number of threads.
 *
 * A call encodes its frame into the connection's queue, registers its
 * serial, sees the queue written, then waits for its reply: the
 * synchronous call is the asynchronous one plus a wait.  Threads calling
 * at once share writes (a thread that finds a write going, or a reader
 * running, leaves its frame to it).  One waiting thread at a time is the
 * reader: it owns the socket's input, decodes every reply straight into
 * the call that is waiting for it, wakes all the callers a batch of
 * replies answered with one system call, and when its own reply has
 * arrived hands the reader role to another waiting call.  So a lone
 * thread makes one write and (usually) one read per call, and no thread
 * is ever dedicated to the socket. */
#ifndef RV_CLIENT_CONN_H
#define RV_CLIENT_CONN_H

#include <rpc/rpc.h>

#include "common/error.h"
#include "transport/transport.h"

struct rvc_conn;

/* Take ownership of a connected, blocking transport (closed on failure). */
struct rvc_conn *rvc_conn_new(rv_transport *tr, rv_err *err);

/* One call of the remote program.  A void side has a NULL or xdr_void
 * filter (and a NULL object).  ret is zeroed by the caller, and freed by it with
 * xdr_free(ret_filter, ret) after a success.  Returns 0, or -1 with err
 * set: on an ERROR reply to the wire's code, domain and message; if the
 * connection fails, every call waiting on it fails and later calls fail
 * at once with RV_ERR_INVALID_CONN. */
int rvc_conn_call(struct rvc_conn *conn, int proc, xdrproc_t args_filter, void *args,
                  xdrproc_t ret_filter, void *ret, rv_err *err);

/* While ms > 0, a reader that waits ms for the server to send anything,
 * with a call unanswered, fails the connection (RV_ERR_OPERATION_TIMEOUT):
 * for opening, when a server that is stopped (SIGSTOP) or stuck would
 * otherwise keep the caller waiting for ever.  0: no limit (calls may
 * take long; keepalive notices a dead server).  Set it while no call
 * runs. */
void rvc_conn_set_answer_timeout(struct rvc_conn *c, int ms);

/* ---- streams ----
 *
 * A call that opens a data stream (volume upload and download, a
 * console): the stream is bound to the call's procedure and serial, and
 * the server's STREAM packets for it are queued on it by whoever reads
 * (at most RVC_STREAM_QUEUE_MAX bytes unread: past that the stream
 * fails).  Any thread may use a stream, one at a time. */
struct rvc_stream;
#define RVC_STREAM_QUEUE_MAX (16 * 1024 * 1024)
#define RVC_STREAM_AGAIN (-2)

/* The call, with a void result; then *out is its stream.  sparse: the
 * call asked for a sparse stream, on which holes travel both ways. */
int rvc_conn_stream_call(struct rvc_conn *conn, int proc, xdrproc_t args_filter, void *args,
                         int sparse, struct rvc_stream **out, rv_err *err);
/* The same for a call with a result (ret_filter, ret: as rvc_conn_call's). */
int rvc_conn_stream_call_ret(struct rvc_conn *conn, int proc, xdrproc_t args_filter, void *args,
                             xdrproc_t ret_filter, void *ret, int sparse, struct rvc_stream **out,
                             rv_err *err);
/* Send len bytes of data (as many packets as it takes).  0 or -1. */
int rvc_stream_send(struct rvc_stream *s, const char *data, size_t len, rv_err *err);
/* Send a hole of length bytes (a sparse stream only; 0 sends nothing). */
int rvc_stream_send_hole(struct rvc_stream *s, long long length, rv_err *err);
/* Up to len bytes: the count, 0 at the end of the data, -1 on error, or
 * with nonblock RVC_STREAM_AGAIN when nothing has come yet (what the
 * socket holds already is read first).  A hole reads as zeros, or with
 * stop_at_hole ends the count before it; RVC_STREAM_AT_HOLE when it is
 * next (rvc_stream_recv_hole takes it). */
#define RVC_STREAM_AT_HOLE (-3)
ssize_t rvc_stream_recv(struct rvc_stream *s, char *buf, size_t len, int nonblock,
                        int stop_at_hole, rv_err *err);
/* The hole that is next on s: its length, taken off the stream.  -1 when
 * data (or nothing) is next. */
int rvc_stream_recv_hole(struct rvc_stream *s, long long *length, rv_err *err);
/* Finish (abort 0) or abort (1) and wait for the server's answer; a
 * stream the server failed gives its error.  0 or -1. */
int rvc_stream_end(struct rvc_stream *s, int abort, rv_err *err);
/* Forget it (aborted first if it was not ended). */
void rvc_stream_free(struct rvc_stream *s);

/* ---- asynchronous calls ----
 *
 * For many calls in flight from one thread: rvc_conn_start() encodes a
 * call, queues its frame and returns at once; rvc_conn_complete() sends
 * what is queued (one write for many calls) and reads answers until at
 * most max_in_flight started calls are still unanswered, running each
 * answered call's on_done in its own thread, with no lock held.  Whoever
 * reads an answer (this thread, a synchronous call's reader, the loop)
 * decodes it into ret; on_done sees failed = 0 and ret filled, or
 * failed = 1 and err set (then ret may be partly filled: on_done frees
 * it with xdr_free either way).  Calls still unanswered when the
 * connection fails or is freed complete with the error.  A synchronous
 * call on the same connection first sends the queued frames. */
typedef void (*rvc_done_fn)(void *opaque, int failed, rv_err *err);

/* 0, or -1 with err set (the call did not start: on_done will not run). */
int rvc_conn_start(struct rvc_conn *conn, int proc, xdrproc_t args_filter, void *args,
                   xdrproc_t ret_filter, void *ret, rvc_done_fn on_done, void *opaque,
                   rv_err *err);

/* How many on_done callbacks ran.  When the queued frames cannot be sent
 * the connection fails, and every started call completes with why. */
int rvc_conn_complete(struct rvc_conn *conn, unsigned int max_in_flight);

/* ---- the application's event loop (see rv_event_register_impl) ----
 *
 * With a loop, the connection watches its socket from the loop while no
 * call is reading: PINGs are answered, and the server's MESSAGEs (events)
 * are queued as they arrive and handed to on_message in the loop's
 * thread, in order.  When the connection fails, on_closed gets the
 * reason (RV_CLOSE_REASON_*) in the loop's thread, once, after the
 * messages that came before.  Both run without any lock of the
 * connection held and may make calls on it. */
typedef void (*rvc_message_fn)(void *opaque, const char *frame, size_t len);
typedef void (*rvc_closed_fn)(void *opaque, int reason);

/* Attach the connection to the registered loop.  0, or -1 with err (no
 * loop registered, or the loop refused the handle). */
int rvc_conn_attach_loop(struct rvc_conn *conn, rvc_message_fn on_message,
                         rvc_closed_fn on_closed, void *opaque, rv_err *err);

/* Keepalive from the loop (after rvc_conn_attach_loop): when nothing has
 * come from the server for `interval` seconds send a PING, and after
 * `count` PINGs without any sign of life declare the connection dead
 * (every waiting call fails, on_closed gets RV_CLOSE_REASON_KEEPALIVE).
 * interval <= 0 stops it.  0, or -1 with err. */
int rvc_conn_set_keepalive(struct rvc_conn *conn, int interval, unsigned int count, rv_err *err);

/* What the transport's far end said as it went away (an SSH or ext
 * command's stderr or exit status), or NULL. */
const char *rvc_conn_peer_error(struct rvc_conn *conn);

/* The transport under the connection, for what the handshake needs to
 * know of it (its fd, whether it is TLS).  Valid until the next
 * rvc_conn_wrap_transport() or rvc_conn_free(). */
rv_transport *rvc_conn_transport(struct rvc_conn *conn);

/* Put a layer under every later packet (SASL's security layer): the
 * transport becomes wrap(transport).  Only between the handshake's calls,
 * right after the reply that starts the layer: no call in flight, not
 * attached to a loop yet, and nothing read ahead (bytes already read came
 * before the layer; they fail the connection).  wrap owns the old
 * transport from then on, also when it fails, which leaves the
 * connection dead.  0, or -1 with err. */
typedef rv_transport *(*rvc_wrap_fn)(rv_transport *inner, void *opaque, rv_err *err);
int rvc_conn_wrap_transport(struct rvc_conn *conn, rvc_wrap_fn wrap, void *opaque, rv_err *err);

/* Whether the connection still works (0 after EOF or a protocol error). */
int rvc_conn_is_alive(struct rvc_conn *conn);

/* Close the transport and free everything.  No call may be in progress.
 * Once it returns, on_message and on_closed are not running and never
 * will (unless called from inside one of them, which is allowed). */
void rvc_conn_free(struct rvc_conn *conn);

#endif
