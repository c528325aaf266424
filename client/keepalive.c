/* Keepalive on the client side: answering the server's PINGs, and, from
 * the application's event loop, PINGing a quiet server and giving up on
 * a silent one. */
#include "client/conn.h"

#include <poll.h>
#include <pthread.h>

#include "client/conn_priv.h"
#include "client/event.h"
#include "common/log.h"
#include "rv_keepalive.h"
#include "rv_packet.h"
#include "rv_remote.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("client.conn.keepalive");

/* Send a keepalive PING or PONG.  If another thread is in the middle of
 * writing a frame, skip it: that frame already tells the server we are
 * alive, and waiting for the write lock here could deadlock against a
 * writer that waits for us to drain replies. */
void rvc_conn_send_keepalive(struct rvc_conn *c, int proc)
{
    /* The reader calls this: it must not wait for room, since the room
     * comes from the server, which may wait for the reader. */
    struct pollfd pfd = { .fd = c->tr->fd, .events = POLLOUT };
    if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLOUT))
        return;
    if (pthread_mutex_trylock(&c->write_lock) != 0)
        return;
    char frame[RV_KEEPALIVE_FRAME_LEN];
    rv_frame_keepalive(frame, proc);
    rv_err err = { 0 };
    if (rvc_conn_write_all(c, frame, sizeof(frame), &err) < 0)
        RV_DEBUG("cannot send a keepalive %s: %s", proc == RV_KEEPALIVE_PROC_PING ? "ping" : "pong",
                 err.message ? err.message : "?");
    pthread_mutex_unlock(&c->write_lock);
    rv_err_clear(&err);
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
    long long quiet_ms = (rvc_now_ns() - heard) / 1000000;
    if (quiet_ms < c->keepalive_interval * 1000LL - 10) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    if (c->pings_unanswered >= c->keepalive_count) {
        rv_err why = { 0 };
        rv_err_set(&why, RV_FROM_RPC, RV_ERR_RPC,
                   "connection lost: the server did not answer %u keepalive pings in %.1f s",
                   c->pings_unanswered, quiet_ms / 1000.0);
        rvc_conn_fail_locked_because(c, &why, RV_CLOSE_REASON_KEEPALIVE);
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->pings_unanswered++;
    c->heard_at_last_ping = heard;
    pthread_mutex_unlock(&c->lock);
    rvc_conn_send_keepalive(c, RV_KEEPALIVE_PROC_PING);
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
                                                   rvc_conn_loop_release);
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
