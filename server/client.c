#include "server/client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "rv_keepalive.h"
#include "server/dispatch.h"
#include "transport/frame.h"
#include "transport/sasl.h"
#include "transport/tls.h"

RV_LOG_CATEGORY("server.client");

/* Enough for any small call in one read; bigger frames grow the buffer to
 * their (already checked) length and shrink back afterwards. */
#define RVS_READ_CHUNK 16384
#define RVS_KEEP_BUF 65536
/* The largest packet before authentication (length word included). */
#define RVS_PREAUTH_FRAME_MAX 65536
/* The output cap before authentication: a stranger's replies are a few
 * small AUTH_ answers, so it may make the daemon hold little more. */
#define RVS_PREAUTH_OUTPUT_MAX 65536

static void on_readable(struct ev_loop *loop, ev_io *w, int revents);
static void on_writable(struct ev_loop *loop, ev_io *w, int revents);

static void handshake_step(rvs_client *c);
static void on_keepalive(struct ev_loop *loop, ev_timer *w, int revents);

/* The deadline for what an anonymous client must do first: its TLS
 * handshake, then (with SASL) its authentication. */
static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_client *c = w->data;
    char name[256];
    rvs_client_name(c, name, sizeof(name));
    if (c->handshaking) {
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
    return !c->authenticated && cap > RVS_PREAUTH_OUTPUT_MAX ? RVS_PREAUTH_OUTPUT_MAX : cap;
}

/* A client that stayed at its output cap for output_timeout: it reads
 * nothing, and what it left unread is held for nobody. */
static void on_output_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_client *c = w->data;
    char name[256];
    RV_WARN("%s: %zu bytes of output left unread for %d s (output cap %zu bytes, "
            "max_client_output_bytes); closing it",
            rvs_client_name(c, name, sizeof(name)), rv_buf_used(&c->out),
            c->env->output_timeout, output_cap(c));
    rvs_client_close(c, "output unread past client_output_timeout");
}

static void start_deadline(rvs_client *c, int seconds)
{
    ev_timer_stop(c->env->loop, &c->deadline);
    ev_timer_set(&c->deadline, seconds, 0.);
    ev_timer_start(c->env->loop, &c->deadline);
}

rvs_client *rvs_client_new(const rvs_client_env *env, rv_transport *tr,
                           const rvs_client_start *how, unsigned long long serial_no)
{
    rvs_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->env = env;
    c->tr = tr;
    c->readonly = how->readonly ? 1 : 0;
    c->serial_no = serial_no;
    c->min_ssf = how->min_ssf;
    c->local = how->local ? 1 : 0;
    snprintf(c->from, sizeof(c->from), "%s", how->from);
    /* With auth "none" a client may call anything at once (after its TLS
     * handshake); with SASL only the AUTH_ procedures until it is done. */
    c->authenticated = how->sasl ? 0 : 1;
    c->anonymous = how->sasl || how->tls_handshake;
    ev_io_init(&c->read_watcher, on_readable, tr->fd, EV_READ);
    ev_io_init(&c->write_watcher, on_writable, tr->fd, EV_WRITE);
    c->read_watcher.data = c;
    c->write_watcher.data = c;
    ev_timer_init(&c->deadline, on_deadline, 0., 0.);
    c->deadline.data = c;
    ev_timer_init(&c->output_deadline, on_output_deadline, 0., 0.);
    c->output_deadline.data = c;
    ev_timer_init(&c->keepalive, on_keepalive, 0., 0.);
    c->keepalive.data = c;
    if (how->tls_handshake) {
        /* The client speaks first (its hello); the handshake runs from the
         * watchers, never from here, where the server does not list c yet. */
        c->handshaking = 1;
        start_deadline(c, env->handshake_timeout);
    } else if (!c->authenticated) {
        start_deadline(c, env->auth_timeout);
    }
    ev_io_start(env->loop, &c->read_watcher);
    return c;
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

/* No longer anonymous: off the count, no deadline. */
static void leave_anonymity(rvs_client *c)
{
    ev_timer_stop(c->env->loop, &c->deadline);
    if (c->anonymous) {
        c->anonymous = 0;
        c->env->on_authenticated(c, c->env->opaque);
    }
}

void rvs_client_authenticated(rvs_client *c)
{
    c->authenticated = 1;
    leave_anonymity(c);
}

void rvs_client_close_after_flush(rvs_client *c)
{
    c->close_after_flush = 1;
    /* Nothing more is read; what is queued goes out, then the close. */
    ev_io_stop(c->env->loop, &c->read_watcher);
    c->reading_paused = 1;
}

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

/* Advance the TLS handshake; once it is done and the client's certificate
 * passed, send libvirt's go-ahead byte and start serving packets. */
static void handshake_step(rvs_client *c)
{
    rv_err err = { 0 };
    int rc = rv_tls_server_handshake(c->tr, &err);
    if (rc < 0) {
        RV_WARN("client %llu from %s: TLS handshake failed: %s", c->serial_no, c->from,
                err.message ? err.message : "unknown error");
        rv_err_clear(&err);
        rvs_client_close(c, "TLS handshake failed");
        return;
    }
    if (rc == 0) {
        watch(c, rv_transport_wait_events(c->tr, POLLIN));
        return;
    }
    c->handshaking = 0;
    if (c->authenticated)
        leave_anonymity(c);
    else
        start_deadline(c, c->env->auth_timeout);
    const char *dn = rv_tls_peer_dn(c->tr);
    if (dn && !(c->x509_dn = strdup(dn))) {
        rvs_client_close(c, "out of memory");
        return;
    }
    RV_INFO("client %llu from %s: TLS session up%s%s", c->serial_no, c->from,
            dn ? ", certificate DN " : "", dn ? dn : "");
    if (rv_buf_reserve(&c->out, 1) < 0) {
        rvs_client_close(c, "out of memory");
        return;
    }
    c->out.data[c->out.len++] = 1;
    watch(c, POLLIN);
    rvs_client_flush(c);
    /* Packets that came with the last handshake flight are inside gnutls
     * already and will not make the fd readable. */
    if (!c->closing && rv_transport_pending(c->tr) > 0)
        on_readable(c->env->loop, &c->read_watcher, EV_READ);
}

void rvs_client_close(rvs_client *c, const char *why)
{
    if (c->closing)
        return;
    c->closing = 1;
    char name[256];
    RV_DEBUG("%s closing: %s", rvs_client_name(c, name, sizeof(name)), why);
    ev_io_stop(c->env->loop, &c->read_watcher);
    ev_io_stop(c->env->loop, &c->write_watcher);
    ev_timer_stop(c->env->loop, &c->deadline);
    ev_timer_stop(c->env->loop, &c->output_deadline);
    ev_timer_stop(c->env->loop, &c->keepalive);
    c->env->on_close(c, c->env->opaque);
}

void rvs_client_free(rvs_client *c)
{
    if (c->drv_conn)
        c->drv->close(c->drv_conn);
    free(c->uri);
    free(c->x509_dn);
    free(c->sasl_user);
    rv_sasl_free(c->sasl);
    rvs_events_forget(c);
    rv_transport_close(c->tr);
    rv_buf_free(&c->in);
    rv_buf_free(&c->out);
    free(c);
}

static void pause_reading(rvs_client *c)
{
    if (!c->reading_paused) {
        c->reading_paused = 1;
        ev_io_stop(c->env->loop, &c->read_watcher);
    }
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

/* Whether c's unread output is at its cap after writing what the socket
 * takes; if so, reading stops (so the client makes no more) and the
 * output deadline runs.  -1 if the client was closed. */
static int output_full(rvs_client *c)
{
    if (rv_buf_used(&c->out) < output_cap(c))
        return 0;
    rvs_client_flush(c);
    if (c->closing)
        return -1;
    if (rv_buf_used(&c->out) < output_cap(c))
        return 0;
    pause_reading(c);
    if (!ev_is_active(&c->output_deadline) && c->env->output_timeout > 0) {
        ev_timer_set(&c->output_deadline, c->env->output_timeout, 0.);
        ev_timer_start(c->env->loop, &c->output_deadline);
    }
    return 1;
}

/* Dispatch every whole frame in c->in while the client is under its
 * in-flight limit and its output cap.  Keepalive packets do not count
 * against the in-flight limit (a PING is answered even at it), but their
 * PONGs count against the output cap like everything else.  Returns -1 if
 * the client was closed. */
static int dispatch_buffered(rvs_client *c)
{
    while (!c->closing && !c->close_after_flush) {
        if (c->sasl_layer_next) {
            /* Authentication finished with a security layer: what follows
             * must come through it, so nothing buffered in clear runs. */
            pause_reading(c);
            return 0;
        }
        if (rv_buf_used(&c->in) < 4)
            break;
        uint32_t len = rv_frame_peek_len(rv_buf_head(&c->in));
        rv_err err = { 0 };
        /* Before authentication only small AUTH_ calls make sense; an
         * anonymous client cannot make the daemon buffer megabytes. */
        if (rv_frame_check_len(len, c->authenticated ? RV_FRAME_MAX : RVS_PREAUTH_FRAME_MAX,
                               &err) < 0) {
            RV_WARN("client %llu: %s; closing it", c->serial_no, err.message);
            rvs_client_close(c, err.message ? err.message : "bad packet length");
            rv_err_clear(&err);
            return -1;
        }
        if (rv_buf_used(&c->in) < len) {
            /* Room for the rest of this frame, allocated only now that its
             * length is known to be acceptable. */
            if (rv_buf_reserve(&c->in, len - rv_buf_used(&c->in)) < 0) {
                rvs_client_close(c, "out of memory for an incoming packet");
                return -1;
            }
            return 0;
        }
        int full = output_full(c);
        if (full)
            return full < 0 ? -1 : 0;
        int keepalive = is_keepalive(rv_buf_head(&c->in), len);
        if (!keepalive && c->inflight >= c->env->max_client_requests) {
            /* Replies go out first; what is buffered waits for them. */
            rvs_client_flush(c);
            if (c->closing)
                return -1;
            if (c->inflight >= c->env->max_client_requests) {
                pause_reading(c);
                return 0;
            }
        }
        if (!keepalive)
            c->inflight++;
        c->dispatching = 1;
        int rc = rvs_dispatch_frame(c, rv_buf_head(&c->in), len);
        c->dispatching = 0;
        if (rc < 0) {
            rvs_client_close(c, "unparseable packet");
            return -1;
        }
        rv_buf_consume(&c->in, len);
    }
    return c->closing ? -1 : 0;
}

static void read_some(rvs_client *c)
{
    if (rv_buf_reserve(&c->in, rv_buf_used(&c->in) < 4 ? RVS_READ_CHUNK : 1) < 0) {
        rvs_client_close(c, "out of memory");
        return;
    }
    ssize_t n = rv_transport_read(c->tr, c->in.data + c->in.len, c->in.cap - c->in.len);
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

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_client *c = w->data;
    if (c->handshaking) {
        handshake_step(c);
        return;
    }
    do {
        read_some(c);
        if (c->closing || dispatch_buffered(c) < 0)
            return;
    } while (!c->reading_paused && rv_transport_pending(c->tr) > 0);
    /* Write what this batch produced before the loop sleeps. */
    rvs_client_flush(c);
    if (!c->closing && rv_buf_used(&c->in) == 0)
        rv_buf_shrink(&c->in, RVS_KEEP_BUF);
}

/* The last AUTH_SASL reply is out in clear: from here on every byte goes
 * through the SASL security layer.  Bytes already read came in clear
 * after authentication, which no honest client sends (it waits for that
 * reply): someone on the path appended them, so the client goes.
 * Returns -1 if the client was closed. */
static int start_sasl_layer(rvs_client *c)
{
    rv_err err = { 0 };
    c->sasl_layer_next = 0;
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
    if (c->reading_paused) {
        c->reading_paused = 0;
        ev_io_start(c->env->loop, &c->read_watcher);
    }
    return 0;
}

void rvs_client_flush(rvs_client *c)
{
    while (!c->closing && rv_buf_used(&c->out) > 0) {
        ssize_t n = rv_transport_write(c->tr, rv_buf_head(&c->out), rv_buf_used(&c->out));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                ev_io_start(c->env->loop, &c->write_watcher);
                return;
            }
            rvs_client_close(c, strerror(errno));
            return;
        }
        rv_buf_consume(&c->out, (size_t)n);
    }
    if (c->closing)
        return;
    /* Everything queued is on the wire: no call is in flight any more. */
    c->inflight = 0;
    ev_timer_stop(c->env->loop, &c->output_deadline);
    if (c->close_after_flush) {
        rvs_client_close(c, "refused");
        return;
    }
    if (c->sasl_layer_next && start_sasl_layer(c) < 0)
        return;
    if (!c->read_wants_write)
        ev_io_stop(c->env->loop, &c->write_watcher);
    rv_buf_shrink(&c->out, RVS_KEEP_BUF);
}

static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    rvs_client *c = w->data;
    if (c->handshaking) {
        handshake_step(c);
        return;
    }
    if (c->read_wants_write) {
        c->read_wants_write = 0;
        if (!c->reading_paused) {
            on_readable(loop, &c->read_watcher, EV_READ);
            return;
        }
    }
    rvs_client_flush(c);
    if (!c->closing && rv_buf_used(&c->out) < output_cap(c))
        ev_timer_stop(loop, &c->output_deadline);
    if (c->closing || rv_buf_used(&c->out) > 0 || !c->reading_paused)
        return;
    /* The replies that held reading back are out: catch up on what is
     * buffered, then listen again. */
    c->reading_paused = 0;
    if (dispatch_buffered(c) < 0)
        return;
    if (!c->reading_paused) {
        ev_io_start(loop, &c->read_watcher);
        /* Bytes TLS took in before the pause do not make the fd readable:
         * with nothing more coming, waiting for it would stall the client. */
        if (rv_transport_pending(c->tr) > 0)
            on_readable(loop, &c->read_watcher, EV_READ);
        else
            rvs_client_flush(c);
    }
}

char *rvs_client_queue_unsolicited(rvs_client *c, const char *frame, size_t len)
{
    if (c->closing || c->close_after_flush)
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
    if (rv_buf_reserve(&c->out, len) < 0) {
        rvs_client_close(c, "out of memory queueing an event");
        return NULL;
    }
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
    /* A PING is the bare header: length, program, version, procedure,
     * type MESSAGE, serial 0, status OK. */
    const uint32_t words[] = { RV_FRAME_MIN, RV_KEEPALIVE_PROGRAM, RV_KEEPALIVE_VERSION,
                               RV_KEEPALIVE_PROC_PING, RV_MESSAGE, 0, RV_OK };
    char frame[sizeof(words)];
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        uint32_t be = htonl(words[i]);
        memcpy(frame + 4 * i, &be, 4);
    }
    if (!rvs_client_queue_unsolicited(c, frame, sizeof(frame)))
        return;
    c->pings_unanswered++;
    rvs_client_flush(c);
    if (c->closing)
        return;
    ev_timer_set(w, interval, 0.);
    ev_timer_start(loop, w);
}
