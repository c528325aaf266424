/* Keepalive on the client side, from the application's event loop:
 * PINGing a quiet server and giving up on a silent one.  (The PING and
 * PONG frames go out through conn.c's queue: rvc_conn_send_keepalive.) */
#include "client/conn.h"

#include <pthread.h>

#include "client/conn_priv.h"
#include "client/event.h"
#include "rv_keepalive.h"
#include "rv_remote.h"

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
    rvc_conn_send_keepalive(c, RV_KEEPALIVE_PROC_PING, 0);
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
