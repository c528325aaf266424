#include "server/stream.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "common/log.h"
#include "rv_remote.h"
#include "server/dispatch.h"
#include "server/drivers/stream_io.h"
#include "transport/frame.h"
#include "transport/stream_hole.h"

RV_LOG_CATEGORY("server.stream");

struct rvs_stream {
    rvs_client *client;
    rv_stream_io *io;           /* NULL once it failed */
    rv_header hdr;              /* the opening call's: program, procedure, serial */
    rvs_stream *next;           /* the client's list */
    rv_buf pending;             /* client data the endpoint has not taken yet */
    size_t charged;             /* what pending counts in the client's budget:
                                 * the size asked, not pending.cap (a buffer
                                 * from the loop's store may be larger) */
    ev_idle more;               /* a download that used its round's budget */
    unsigned started : 1;       /* the call's reply is queued */
    unsigned eof_sent : 1;      /* the end of the data went to the client */
    unsigned failed : 1;        /* an error went to the client; kept until
                                 * its finish or abort, or the next open */
    unsigned pumping : 1;       /* inside pump(): no re-entry from a flush */
    unsigned finish_wanted : 1; /* the client finished with data pending */
    unsigned holding : 1;       /* holds the client's reading */
};

static struct ev_loop *loop_of(rvs_stream *s)
{
    return rvs_client_loop(s->client);
}

/* The endpoint a slot opened during the current call, and its client. */
static rv_stream_io *offered;
static rvs_client *in_stream_call;

static void forget_failed_streams(rvs_client *c);
static size_t count_streams(rvs_client *c);

int rv_driver_stream_open(rv_stream_io *io, rv_err *err)
{
    if (!in_stream_call || offered) {
        io->ops->free(io);
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_INTERNAL_ERROR,
                   "internal error: a stream can only be opened once, by a call that opens one");
        return -1;
    }
    /* Refused here, before the slot changes anything (or defers its
     * answer: a tunnelled migration's prepare). */
    forget_failed_streams(in_stream_call);
    if (count_streams(in_stream_call) >= RVS_STREAMS_PER_CLIENT) {
        io->ops->free(io);
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_INVALID,
                   "too many streams open on this connection (at most %d)", RVS_STREAMS_PER_CLIENT);
        return -1;
    }
    offered = io;
    return 0;
}

void rvs_stream_call_begin(rvs_call *call)
{
    in_stream_call = call->client;
    offered = NULL;
}

/* pump() again from the loop, after the other clients' turn.  (A
 * client without a loop, driven by hand in the unit tests and the
 * fuzzer, pumps only when a call starts the stream.) */
static void more_later(rvs_stream *s)
{
    if (loop_of(s) && !ev_is_active(&s->more))
        ev_idle_start(loop_of(s), &s->more);
}

static void on_more(struct ev_loop *loop, ev_idle *w, int revents);
static void more_later(rvs_stream *s);

static void stream_free(rvs_stream *s);

/* Drop the client's failed streams: their error went out, and libvirt's
 * client sends nothing more on a stream it knows failed (a finish or
 * abort that crossed the error is dropped, unanswered). */
static void forget_failed_streams(rvs_client *c)
{
    for (rvs_stream *s = *rvs_client_streams(c), *next; s; s = next) {
        next = s->next;
        if (s->failed)
            stream_free(s);
    }
}

static size_t count_streams(rvs_client *c)
{
    size_t n = 0;
    for (rvs_stream *s = *rvs_client_streams(c); s; s = s->next)
        n++;
    return n;
}

int rvs_stream_call_end(rvs_call *call, int rc)
{
    rv_stream_io *io = offered;
    in_stream_call = NULL;
    offered = NULL;
    if (rc < 0) {
        if (io)
            io->ops->free(io);
        return rc;
    }
    if (!io) {
        rv_err_set(&call->err, RV_FROM_STREAMS, RV_ERR_INTERNAL_ERROR,
                   "internal error: the driver opened no stream");
        return -1;
    }
    rvs_stream *s = calloc(1, sizeof(*s));
    if (!s) {
        io->ops->free(io);
        rv_err_set(&call->err, RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    s->client = call->client;
    s->io = io;
    io->stream = s;
    s->hdr = (rv_header){ RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, call->proc, RV_STREAM,
                          call->serial, RV_CONTINUE };
    ev_idle_init(&s->more, on_more);
    s->more.data = s;
    rvs_stream **head = rvs_client_streams(call->client);
    s->next = *head;
    *head = s;
    call->stream = s;
    return rc;                  /* (RV_DEFERRED: the stream waits for the answer) */
}


/* Data waiting for the endpoint is counted in the client's memory
 * budget while it is held. */
static void pending_free(rvs_stream *s)
{
    rvs_client_stream_released(s->client, s->charged);
    s->charged = 0;
    rv_buf_free(&s->pending);
}

static void stream_free(rvs_stream *s)
{
    rvs_stream **pp = rvs_client_streams(s->client);
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    if (*pp)
        *pp = s->next;
    if (loop_of(s))
        ev_idle_stop(loop_of(s), &s->more);
    if (s->holding)
        rvs_client_release_reading(s->client);
    if (s->io)
        s->io->ops->free(s->io);
    pending_free(s);
    free(s);
}

/* Queue a STREAM packet with this status and no payload. */
static void queue_empty(rvs_stream *s, int status)
{
    rv_header hdr = s->hdr;
    hdr.status = status;
    rv_err err = { 0 };
    if (rv_frame_encode(rvs_client_output(s->client), &hdr, NULL, NULL, &err) < 0)
        rv_err_clear(&err);     /* out of memory: the client will see it go */
}

/* The stream failed on our side: tell the client (STREAM, status ERROR,
 * the error) and drop the endpoint.  Nothing more is answered on it:
 * libvirt's client takes the error as the answer to a finish or abort
 * that crossed it, and a second answer would break its connection. */
static void fail(rvs_stream *s, const rv_err *err)
{
    RV_DEBUG("client %llu: stream serial %u failed: %s", rvs_client_serial_no(s->client),
             s->hdr.serial, err->message ? err->message : "");
    rvs_queue_error(s->client, &s->hdr, err);
    s->failed = 1;
    if (s->io) {
        s->io->ops->free(s->io);
        s->io = NULL;
    }
    pending_free(s);
    if (loop_of(s))
        ev_idle_stop(loop_of(s), &s->more);
    if (s->holding) {
        s->holding = 0;
        rvs_client_release_reading(s->client);
    }
    rvs_client_flush_soon(s->client);
}

static void fail_with(rvs_stream *s, int code, const char *message)
{
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_STREAMS, code, "%s", message);
    fail(s, &err);
    rv_err_clear(&err);
}


/* ---- to the client (download, console output) ---- */

/* Read from the endpoint into STREAM packets while the client's unread
 * output is under the window, at most a window's worth per round so
 * that one fast download does not hold the loop; the rest of a round
 * comes from an idle watcher, after the other clients. */
static void pump(rvs_stream *s)
{
    if (s->pumping || !s->started || s->eof_sent || s->failed || !s->io->ops->read ||
        rvs_client_is_closing(s->client))
        return;
    rvs_client *c = s->client;
    rv_buf *out = rvs_client_output(c);
    size_t window = rvs_client_stream_window(c), budget = window;
    int again = 0;
    s->pumping = 1;
    while (rv_buf_used(out) < window && budget > 0) {
        /* A hole goes as one small STREAM_HOLE packet, however long it
         * is: only its packet counts against the window and the budget. */
        long long hole = 0;
        if (s->io->sparse && s->io->ops->skip_hole) {
            rv_err err = { 0 };
            size_t at = out->len;
            if ((hole = s->io->ops->skip_hole(s->io, &err)) > 0)
                rv_stream_hole_encode(out, &s->hdr, hole, &err);
            if (rv_err_is_set(&err)) {
                fail(s, &err);
                rv_err_clear(&err);
                break;
            }
            size_t cost = out->len - at;
            budget = cost < budget ? budget - cost : 0;
            if (hole > 0)
                continue;
        }
        if (rv_buf_reserve(out, RV_FRAME_MIN + RVS_STREAM_CHUNK) < 0) {
            fail_with(s, RV_ERR_NO_MEMORY, "out of memory");
            break;
        }
        rv_err err = { 0 };
        char *frame = out->data + out->len;
        ssize_t n = s->io->ops->read(s->io, frame + RV_FRAME_MIN, RVS_STREAM_CHUNK, &err);
        if (n == RV_STREAM_AGAIN) {
            again = 1;
            break;
        }
        if (n < 0) {
            fail(s, &err);
            rv_err_clear(&err);
            break;
        }
        /* The header through the one encoder, then the data after it:
         * libvirt ends the data with an empty CONTINUE packet. */
        size_t at = out->len;
        queue_empty(s, RV_CONTINUE);
        if (out->len != at + RV_FRAME_MIN)
            break;
        uint32_t len = htonl((uint32_t)(RV_FRAME_MIN + n));
        memcpy(out->data + at, &len, sizeof(len));
        out->len += (size_t)n;
        if (n == 0) {
            s->eof_sent = 1;
            break;
        }
        budget = (size_t)n < budget ? budget - (size_t)n : 0;
    }
    /* Written with the reply of the call being served, or before the
     * loop sleeps; that write asks for more (rvs_streams_output_room). */
    rvs_client_flush_soon(c);
    s->pumping = 0;
    if (!again && !s->eof_sent && !s->failed && !rvs_client_is_closing(c) &&
        rv_buf_used(out) < window)
        more_later(s);
}

static void on_more(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)revents;
    rvs_stream *s = w->data;
    ev_idle_stop(loop, w);
    pump(s);
}

void rvs_streams_output_room(rvs_client *c)
{
    /* Still at the window: the socket's next room comes back here. */
    if (rv_buf_used(rvs_client_output(c)) >= rvs_client_stream_window(c))
        return;
    for (rvs_stream *s = *rvs_client_streams(c); s; s = s->next)
        if (!s->pumping && !s->eof_sent && s->io && s->io->ops->read)
            more_later(s);
}

void rvs_stream_start(rvs_stream *s)
{
    s->started = 1;
    pump(s);
}

void rvs_stream_discard(rvs_stream *s)
{
    stream_free(s);
}

/* ---- from the client (upload, console input) ---- */

static void finish(rvs_stream *s);

/* Give the endpoint what is pending; 1 when all of it went, 0 when the
 * endpoint is full (reading from the client is held until its wake), -1
 * after a failure.  released: NULL, the client's reading is released at
 * once when all went; else *released is set and the caller releases it
 * when it is done with s (releasing reads what the client sent meanwhile,
 * which may be the finish or abort that frees s). */
static int drain(rvs_stream *s, bool *released)
{
    while (rv_buf_used(&s->pending) > 0) {
        rv_err err = { 0 };
        ssize_t n = s->io->ops->write(s->io, rv_buf_head(&s->pending),
                                      rv_buf_used(&s->pending), &err);
        if (n < 0) {
            fail(s, &err);
            rv_err_clear(&err);
            return -1;
        }
        if (n == 0) {
            if (!s->holding) {
                s->holding = 1;
                rvs_client_hold_reading(s->client);
            }
            return 0;
        }
        rv_buf_consume(&s->pending, (size_t)n);
    }
    pending_free(s);
    if (s->holding) {
        s->holding = 0;
        if (released)
            *released = true;
        else
            rvs_client_release_reading(s->client);
    }
    return 1;
}

static void data(rvs_stream *s, const char *payload, size_t len)
{
    if (!s->io->ops->write) {
        fail_with(s, RV_ERR_RPC, "this stream only sends data: the client may not write to it");
        return;
    }
    if (len > RVS_STREAM_PACKET_MAX) {
        fail_with(s, RV_ERR_RPC, "stream packet too long (at most 1 MiB of data)");
        return;
    }
    /* Copied only if the endpoint does not take it all at once. */
    size_t done = 0;
    while (rv_buf_used(&s->pending) == 0 && done < len) {
        rv_err err = { 0 };
        ssize_t n = s->io->ops->write(s->io, payload + done, len - done, &err);
        if (n < 0) {
            fail(s, &err);
            rv_err_clear(&err);
            return;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    if (done == len)
        return;
    size_t want = rv_buf_used(&s->pending) + len - done;
    if (want > s->charged) {
        if (rvs_client_stream_held(s->client, want - s->charged) < 0) {
            fail_with(s, RV_ERR_NO_MEMORY,
                      "remvirtd's memory budget for this client is exhausted (see its log)");
            return;
        }
        s->charged = want;
    }
    if (want <= s->pending.cap) {
        rv_buf_reserve(&s->pending, len - done);     /* only compacts: cannot fail */
    } else if (rv_buf_resize(&s->pending, want) < 0) {
        fail_with(s, RV_ERR_NO_MEMORY, "out of memory");     /* (released by the fail) */
        return;
    }
    memcpy(s->pending.data + s->pending.len, payload + done, len - done);
    s->pending.len += len - done;
    drain(s, NULL);
}

static void hole(rvs_stream *s, const char *payload, size_t len)
{
    if (!s->io->sparse || !s->io->ops->hole) {
        fail_with(s, RV_ERR_RPC, "Unexpected stream hole");
        return;
    }
    if (rv_buf_used(&s->pending) > 0) {
        /* Reading is held while data waits for the endpoint. */
        fail_with(s, RV_ERR_INTERNAL_ERROR,
                  "internal error: a stream hole came before the data ahead of it was written");
        return;
    }
    rv_err err = { 0 };
    long long length = rv_stream_hole_decode(payload, len, &err);
    int rc = length < 0 ? -1 : s->io->ops->hole(s->io, length, &err);
    if (rc < 0) {
        fail(s, &err);
        rv_err_clear(&err);
    } else if (rc > 0 && !s->holding) {
        /* Taken, but the endpoint is full: a flood of holes waits too. */
        s->holding = 1;
        rvs_client_hold_reading(s->client);
    }
}

/* The client finished: the endpoint commits, and the client gets an
 * empty STREAM OK (or the error). */
static void finish(rvs_stream *s)
{
    rv_err err = { 0 };
    int rc = s->io->ops->finish ? s->io->ops->finish(s->io, &err) : 0;
    if (rc == RV_STREAM_AGAIN) {
        s->finish_wanted = 1;   /* again at the endpoint's wake */
        return;
    }
    if (rc < 0) {
        rvs_queue_error(s->client, &s->hdr, &err);
        rv_err_clear(&err);
    } else {
        queue_empty(s, RV_OK);
    }
    rvs_client_flush_soon(s->client);
    stream_free(s);
}

void rvs_stream_packet(rvs_client *c, const rv_header *hdr, const char *payload, size_t len)
{
    rvs_stream *s = *rvs_client_streams(c);
    while (s && (s->hdr.serial != hdr->serial || s->hdr.proc != hdr->proc))
        s = s->next;
    if (!s || !s->started) {
        RV_DEBUG("client %llu: stream packet for serial %u proc %d: no such stream; dropped",
                 rvs_client_serial_no(c), hdr->serial, hdr->proc);
        return;
    }
    if (s->failed) {
        /* Data crossing our error is dropped; a finish or abort ends the
         * stream without an answer (the error was it). */
        if (hdr->type == RV_STREAM && hdr->status != RV_CONTINUE)
            stream_free(s);
        return;
    }
    if (hdr->type == RV_STREAM_HOLE) {
        hole(s, payload, len);
        return;
    }
    switch (hdr->status) {
    case RV_CONTINUE:
        data(s, payload, len);
        break;
    case RV_OK:
        if (rv_buf_used(&s->pending) > 0)
            s->finish_wanted = 1;       /* after the endpoint took it all */
        else
            finish(s);
        break;
    case RV_ERROR:
        /* The client aborts: libvirtd answers with an empty STREAM OK. */
        RV_DEBUG("client %llu: stream serial %u aborted by the client", rvs_client_serial_no(c),
                 s->hdr.serial);
        queue_empty(s, RV_OK);
        rvs_client_flush_soon(c);
        stream_free(s);
        break;
    default:
        fail_with(s, RV_ERR_RPC, "stream packet with an unknown status");
        break;
    }
}

void rv_stream_io_wake(rv_stream_io *io)
{
    rvs_stream *s = io->stream;
    if (!s || s->failed)
        return;
    rvs_client *c = s->client;
    bool release = false;       /* last: what it reads may free s */
    if (rv_buf_used(&s->pending) > 0) {
        int drained = drain(s, &release);
        if (drained == 1 && s->finish_wanted)
            finish(s);
        else if (drained >= 0)  /* (failed: s may be gone) */
            pump(s);
    } else {
        if (s->holding) {       /* held by a hole (see hole()) */
            s->holding = 0;
            release = true;
        }
        if (s->finish_wanted)
            finish(s);
        else
            pump(s);
    }
    if (release)
        rvs_client_release_reading(c);
}

void rvs_streams_free_all(rvs_client *c)
{
    rvs_stream **head = rvs_client_streams(c);
    while (*head) {
        rvs_stream *s = *head;
        s->holding = 0;         /* the client goes: nothing to release */
        stream_free(s);
    }
}
