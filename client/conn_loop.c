/* The connection and the application's event loop (rvc_conn_attach_loop):
 * the socket's handle, which reads while no call does, the queue of the
 * server's MESSAGEs, and their delivery, with the connection's end, in
 * the loop's thread. */
#include "client/conn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client/conn_priv.h"
#include "client/event.h"
#include "common/log.h"

RV_LOG_CATEGORY("client.conn.loop");

/* Events waiting for the application's loop to take them: past this the
 * loop is not running, and the connection fails rather than grow or
 * silently drop events. */
#define MESSAGE_QUEUE_MAX (16u << 20)

void rvc_conn_drop_messages(struct rvc_conn *c)
{
    while (c->messages) {
        queued_message *m = c->messages;
        c->messages = m->next;
        free(m);
    }
    c->messages_tail = &c->messages;
    c->messages_bytes = 0;
}

/* The loop lets go of a handle or timer. */
void rvc_conn_loop_release(void *opaque)
{
    struct rvc_conn *c = opaque;
    pthread_mutex_lock(&c->lock);
    rvc_conn_unref_unlock(c);
}

/* rvc_conn_free's first step: on_message and on_closed are never called
 * again, and the loop is asked to let go of the handle and timers. */
void rvc_conn_detach_loop(struct rvc_conn *c)
{
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
}

/* With lock held: the loop's handle listens only while no call reads, so
 * that the loop's thread does not wake for every reply. */
void rvc_conn_listen_locked(struct rvc_conn *c, int on)
{
    if (!c->watch || c->listening == on)
        return;
    rvc_event_update_handle(c->watch, on ? RV_EVENT_HANDLE_READABLE : 0);
    c->listening = on;
}

/* Keep a MESSAGE (an event) for the loop's thread, in arrival order. */
int rvc_conn_queue_message(struct rvc_conn *c, const char *frame, size_t len, rv_err *why)
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
    if (c->reader != READER_LOOP)    /* the loop hands out what it reads itself */
        rvc_conn_arm_dispatch_locked(c);
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* With lock held: have the loop's thread run on_dispatch soon. */
void rvc_conn_arm_dispatch_locked(struct rvc_conn *c)
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
    if (c->freed || c->failed || c->reader != READER_NONE) {
        /* A call reads (it delivers everything), or nothing ever will:
         * stop listening until it is done. */
        rvc_conn_listen_locked(c, 0);
        pthread_mutex_unlock(&c->lock);
        return;
    }
    /* Its handle keeps listening: this thread is not polling meanwhile. */
    c->reader = READER_LOOP;
    pthread_mutex_unlock(&c->lock);
    rvc_conn_drain_without_waiting(c);
    pthread_mutex_lock(&c->lock);
    rvc_conn_release_reader_locked(c);
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
    int look = c->reader == READER_NONE && !c->failed && !c->freed && c->tr &&
               rvc_conn_input_buffered(c);
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
    __atomic_store_n(&c->last_heard_ns, rvc_now_ns(), __ATOMIC_RELAXED);
    c->on_message = on_message;
    c->on_closed = on_closed;
    c->cb_opaque = opaque;
    /* Each registration holds a reference, given back by rvc_conn_loop_release. */
    c->refs += 2;
    c->dispatch_timer = rvc_event_add_timeout(-1, on_dispatch, c, rvc_conn_loop_release);
    c->watch = rvc_event_add_handle(c->tr->fd,
                                    c->reader != READER_NONE ? 0 : RV_EVENT_HANDLE_READABLE,
                                    on_socket_ready, c, rvc_conn_loop_release);
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
    c->listening = c->reader == READER_NONE;
    pthread_mutex_unlock(&c->lock);
    return 0;
}
