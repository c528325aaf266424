/* Lifecycle and close callbacks: the public (de)registration calls, and
 * the delivery of the server's MESSAGEs to them in the loop's thread.
 * Every removal of a lifecycle callback goes through
 * unlink_callback_locked(), which leaves one that is running to the
 * loop's thread to free. */
#include "client/callbacks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "common/log.h"
#include "rv_remote.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("client.callbacks");

/* ---- delivery, in the loop's thread ---- */

void rvc_callbacks_report_closed(rv_conn *conn, int reason)
{
    pthread_mutex_lock(&conn->cb_lock);
    rv_connect_close_callback cb = conn->closed_reported ? NULL : conn->close_cb;
    void *opaque = conn->close_opaque;
    conn->closed_reported = 1;
    pthread_mutex_unlock(&conn->cb_lock);
    if (cb)
        cb(conn, reason, opaque);
}

void rvc_callbacks_on_closed(void *opaque, int reason)
{
    rvc_callbacks_report_closed(opaque, reason);
}

/* With cb_lock held: the registered entry the server calls `id`, among the
 * callbacks of one family (RVC_EVENTS_*: the server numbers them apart). */
static lifecycle_callback *find_callback_locked(rv_conn *conn, int id, int family)
{
    lifecycle_callback *e = conn->callbacks;
    while (e && !(e->registered && e->callback_id == id && e->family == family))
        e = e->next;
    return e;
}

/* With cb_lock held: take e off the list.  1: the caller frees it; 0: the
 * loop's thread is running its callback and frees it when that returns.
 * Every path that removes an entry goes through here. */
static int unlink_callback_locked(rv_conn *conn, lifecycle_callback *e)
{
    for (lifecycle_callback **pp = &conn->callbacks; *pp; pp = &(*pp)->next) {
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    }
    e->next = NULL;
    if (conn->delivering != e)
        return 1;
    conn->delivering_retired = 1;
    return 0;
}

/* The registered entry an event for callback_id goes to, marked as being
 * delivered (a deregistration meanwhile retires it instead of freeing
 * it), or NULL: nobody to give it to.  finish_delivery() after the call. */
static lifecycle_callback *start_delivery(rv_conn *conn, int callback_id, int family)
{
    /* No registration ever gets a negative ID (see the registration), so
     * such an event has nobody to wait for. */
    if (callback_id < 0) {
        RV_WARN("ignoring an event for callback ID %d, which cannot exist", callback_id);
        return NULL;
    }
    pthread_mutex_lock(&conn->cb_lock);
    lifecycle_callback *e;
    for (;;) {
        e = find_callback_locked(conn, callback_id, family);
        /* The first event may overtake the registering thread on its way
         * from the reply to noting the callbackID: wait for it.  Only a
         * registration that succeeds with this very ID then matches. */
        if (e || !conn->registering)
            break;
        pthread_cond_wait(&conn->registered, &conn->cb_lock);
    }
    conn->delivering = e;
    conn->delivering_retired = 0;
    pthread_mutex_unlock(&conn->cb_lock);
    if (!e)
        RV_DEBUG("event for callback %d, which is not registered (any more)", callback_id);
    return e;
}

/* The application's callback has returned: free e if it was deregistered
 * while it ran. */
static void finish_delivery(rv_conn *conn, lifecycle_callback *e)
{
    pthread_mutex_lock(&conn->cb_lock);
    int retired = conn->delivering_retired;
    conn->delivering = NULL;
    pthread_mutex_unlock(&conn->cb_lock);
    if (retired) {
        e->next = NULL;
        rvc_free_callbacks(e);
    }
}

static void deliver_lifecycle(rv_conn *conn, rv_domain_event_callback_lifecycle_msg *msg)
{
    lifecycle_callback *e = start_delivery(conn, msg->callbackID, RVC_EVENTS_DOMAIN);
    if (!e)
        return;
    rv_dom *dom = rvc_dom_from_wire(conn, &msg->msg.dom);
    if (dom) {
        e->cb(conn, dom, msg->msg.event, msg->msg.detail, e->opaque);
        rv_domain_free(dom);
    }
    finish_delivery(conn, e);
}

static void deliver_network(rv_conn *conn, rv_network_event_lifecycle_msg *msg)
{
    lifecycle_callback *e = start_delivery(conn, msg->callbackID, RVC_EVENTS_NETWORK);
    if (!e)
        return;
    rv_net *net = rvc_net_from_wire(conn, &msg->net);
    if (net) {
        e->net_cb(conn, net, msg->event, msg->detail, e->opaque);
        rv_network_free(net);
    }
    finish_delivery(conn, e);
}

/* Both kinds of pool event; refresh says which. */
static void deliver_pool(rv_conn *conn, int callback_id, rv_nonnull_storage_pool *wire,
                         int refresh, int event, int detail)
{
    lifecycle_callback *e = start_delivery(conn, callback_id, RVC_EVENTS_POOL);
    if (!e)
        return;
    rv_pool *pool = rvc_pool_from_wire(conn, wire);
    /* The server numbers lifecycle and refresh callbacks together: a
     * lifecycle event for a refresh callback (or the other way) is its bug. */
    if (pool && refresh && e->refresh_cb)
        e->refresh_cb(conn, pool, e->opaque);
    else if (pool && !refresh && e->pool_cb)
        e->pool_cb(conn, pool, event, detail, e->opaque);
    else if (pool)
        RV_WARN("ignoring a storage pool event of the other kind for callback %d", callback_id);
    rv_storage_pool_free(pool);
    finish_delivery(conn, e);
}

/* A MESSAGE from the server: decode it and call the application. */
void rvc_callbacks_on_message(void *opaque, const char *frame, size_t len)
{
    rv_conn *conn = opaque;
    rv_header h;
    rv_err err = { 0 };
    if (rv_frame_decode_header(frame, len, &h, &err) < 0)
        goto bad;
    if (h.proc == RV_PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE) {
        rv_domain_event_callback_lifecycle_msg msg;
        memset(&msg, 0, sizeof(msg));
        if (rv_frame_decode_payload(frame, len,
                                    (xdrproc_t)xdr_rv_domain_event_callback_lifecycle_msg, &msg,
                                    &err) < 0)
            goto bad;
        /* The callback may close the connection: keep conn until we are done. */
        rvc_handle_ref(conn);
        deliver_lifecycle(conn, &msg);
        xdr_free((xdrproc_t)xdr_rv_domain_event_callback_lifecycle_msg, (char *)&msg);
        rvc_handle_unref(conn);
    } else if (h.proc == RV_PROC_NETWORK_EVENT_LIFECYCLE) {
        rv_network_event_lifecycle_msg msg;
        memset(&msg, 0, sizeof(msg));
        if (rv_frame_decode_payload(frame, len, (xdrproc_t)xdr_rv_network_event_lifecycle_msg,
                                    &msg, &err) < 0)
            goto bad;
        rvc_handle_ref(conn);
        deliver_network(conn, &msg);
        xdr_free((xdrproc_t)xdr_rv_network_event_lifecycle_msg, (char *)&msg);
        rvc_handle_unref(conn);
    } else if (h.proc == RV_PROC_STORAGE_POOL_EVENT_LIFECYCLE) {
        rv_storage_pool_event_lifecycle_msg msg;
        memset(&msg, 0, sizeof(msg));
        if (rv_frame_decode_payload(frame, len,
                                    (xdrproc_t)xdr_rv_storage_pool_event_lifecycle_msg, &msg,
                                    &err) < 0)
            goto bad;
        rvc_handle_ref(conn);
        deliver_pool(conn, msg.callbackID, &msg.pool, 0, msg.event, msg.detail);
        xdr_free((xdrproc_t)xdr_rv_storage_pool_event_lifecycle_msg, (char *)&msg);
        rvc_handle_unref(conn);
    } else if (h.proc == RV_PROC_STORAGE_POOL_EVENT_REFRESH) {
        rv_storage_pool_event_refresh_msg msg;
        memset(&msg, 0, sizeof(msg));
        if (rv_frame_decode_payload(frame, len,
                                    (xdrproc_t)xdr_rv_storage_pool_event_refresh_msg, &msg,
                                    &err) < 0)
            goto bad;
        rvc_handle_ref(conn);
        deliver_pool(conn, msg.callbackID, &msg.pool, 1, 0, 0);
        xdr_free((xdrproc_t)xdr_rv_storage_pool_event_refresh_msg, (char *)&msg);
        rvc_handle_unref(conn);
    } else if (h.proc == RV_PROC_CONNECT_EVENT_CONNECTION_CLOSED) {
        rv_connect_event_connection_closed_msg msg = { 0 };
        if (rv_frame_decode_payload(frame, len,
                                    (xdrproc_t)xdr_rv_connect_event_connection_closed_msg, &msg,
                                    &err) < 0)
            goto bad;
        if (!conn->close_callback) {
            RV_WARN("ignoring CONNECTION_CLOSED: this connection never asked for it");
            return;
        }
        /* The application may index a table by the reason: only the
         * four the API documents reach it. */
        int reason = msg.reason;
        if (reason < RV_CLOSE_REASON_ERROR || reason > RV_CLOSE_REASON_CLIENT) {
            RV_WARN("the server closed the connection with unknown reason %d: "
                    "reporting ERROR", reason);
            reason = RV_CLOSE_REASON_ERROR;
        }
        rvc_callbacks_report_closed(conn, reason);
    } else {
        RV_DEBUG("ignoring event procedure %d from the server", h.proc);
    }
    return;
bad:
    RV_WARN("ignoring an event the server sent: %s", err.message ? err.message : "?");
    rv_err_clear(&err);
}

/* ---- registration ---- */

/* The server's half of a registration, for one family of events: the
 * REGISTER_ANY call, and the ID its reply names. */
typedef int (*register_call)(struct rvc_conn *rpc, void *args, int *callback_id, rv_err *err);

static int call_domain_register(struct rvc_conn *rpc, void *args, int *callback_id, rv_err *err)
{
    rv_connect_domain_event_callback_register_any_ret ret = { 0 };
    int rc = rvc_call_connect_domain_event_callback_register_any(rpc, args, &ret, err);
    *callback_id = ret.callbackID;
    return rc;
}

static int call_network_register(struct rvc_conn *rpc, void *args, int *callback_id, rv_err *err)
{
    rv_connect_network_event_register_any_ret ret = { 0 };
    int rc = rvc_call_connect_network_event_register_any(rpc, args, &ret, err);
    *callback_id = ret.callbackID;
    return rc;
}

static int call_pool_register(struct rvc_conn *rpc, void *args, int *callback_id, rv_err *err)
{
    rv_connect_storage_pool_event_register_any_ret ret = { 0 };
    int rc = rvc_call_connect_storage_pool_event_register_any(rpc, args, &ret, err);
    *callback_id = ret.callbackID;
    return rc;
}

/* Register e (its family, callback and opaque set, malloc'd; freed here on
 * failure) through call: the one path for every family, so the checks
 * on the server's answer are made once.  The callback ID, or -1 with
 * nothing kept and free_cb never called (the caller keeps opaque). */
static int register_callback(rv_conn *conn, struct rvc_conn *rpc, lifecycle_callback *e,
                             register_call call, void *args, rv_free_callback free_cb,
                             const char *func)
{
    int id = -1;
    rv_err err = { 0 };
    /* Listed before the call: the first event may come before its reply. */
    pthread_mutex_lock(&conn->cb_lock);
    e->callback_id = -1;
    e->next = conn->callbacks;
    conn->callbacks = e;
    conn->registering++;
    pthread_mutex_unlock(&conn->cb_lock);
    int rc = call(rpc, args, &id, &err);
    pthread_mutex_lock(&conn->cb_lock);
    conn->registering--;
    /* The server chose the ID: a negative one would read as our failure,
     * a duplicate would share events with (and deregister) another. */
    if (rc == 0 && id < 0) {
        rv_err_set(&err, RV_FROM_RPC, RV_ERR_RPC,
                   "%s: the server answered with callback ID %d, which is negative", func, id);
        rc = -1;
    } else if (rc == 0 && find_callback_locked(conn, id, e->family)) {
        rv_err_set(&err, RV_FROM_RPC, RV_ERR_RPC,
                   "%s: the server answered with callback ID %d, which this connection "
                   "already has", func, id);
        rc = -1;
    }
    if (rc < 0) {
        /* Never delivered to (not registered), but the rule holds for
         * every removal.  free_cb is not set yet: the caller keeps opaque. */
        int ours = unlink_callback_locked(conn, e);
        pthread_cond_broadcast(&conn->registered);
        pthread_mutex_unlock(&conn->cb_lock);
        if (ours)
            free(e);
        return rvc_fail(&err);
    }
    e->callback_id = id;
    e->free_cb = free_cb;
    e->registered = 1;
    pthread_cond_broadcast(&conn->registered);
    pthread_mutex_unlock(&conn->cb_lock);
    return id;
}

/* The server's half of a deregistration, for one family. */
typedef int (*deregister_call)(struct rvc_conn *rpc, int callback_id, rv_err *err);

static int call_domain_deregister(struct rvc_conn *rpc, int callback_id, rv_err *err)
{
    rv_connect_domain_event_callback_deregister_any_args args = { .callbackID = callback_id };
    return rvc_call_connect_domain_event_callback_deregister_any(rpc, &args, err);
}

static int call_network_deregister(struct rvc_conn *rpc, int callback_id, rv_err *err)
{
    rv_connect_network_event_deregister_any_args args = { .callbackID = callback_id };
    return rvc_call_connect_network_event_deregister_any(rpc, &args, err);
}

static int call_pool_deregister(struct rvc_conn *rpc, int callback_id, rv_err *err)
{
    rv_connect_storage_pool_event_deregister_any_args args = { .callbackID = callback_id };
    return rvc_call_connect_storage_pool_event_deregister_any(rpc, &args, err);
}

static const char *const family_words[] = { "", "network ", "storage pool " };

static int deregister_callback(rv_conn *conn, int callback_id, int family, deregister_call call,
                               const char *func)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, func);
    if (!rpc)
        return -1;
    pthread_mutex_lock(&conn->cb_lock);
    /* Only a registered entry: one still in flight belongs to its caller. */
    lifecycle_callback *e = find_callback_locked(conn, callback_id, family);
    int ours = e && unlink_callback_locked(conn, e);
    pthread_mutex_unlock(&conn->cb_lock);
    if (ours)
        rvc_free_callbacks(e);
    if (!e)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no %sevent callback has id %d",
                          func, family_words[family], callback_id);
    rv_err err = { 0 };
    if (call(rpc, callback_id, &err) < 0)
        return rvc_fail(&err);
    return 0;
}

int rv_connect_domain_event_register_lifecycle(rv_conn *conn, rv_dom *dom,
                                               rv_domain_lifecycle_callback cb, void *opaque,
                                               rv_free_callback free_cb)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc || rvc_handle_need_loop(conn, __func__) < 0)
        return -1;
    if (!cb)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no callback given", __func__);
    if (dom && dom->conn != conn)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: the domain belongs to another connection", __func__);
    if (!conn->event_callbacks)
        return rvc_report(RV_FROM_RPC, RV_ERR_NO_SUPPORT,
                          "%s: the server does not support event callbacks", __func__);
    lifecycle_callback *e = calloc(1, sizeof(*e));
    if (!e)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    e->family = RVC_EVENTS_DOMAIN;
    e->cb = cb;
    e->opaque = opaque;
    rv_nonnull_domain wire;
    if (dom)
        wire = rvc_dom_to_wire(dom);
    rv_connect_domain_event_callback_register_any_args args = {
        .eventID = RV_DOMAIN_EVENT_ID_LIFECYCLE, .dom = dom ? &wire : NULL,
    };
    return register_callback(conn, rpc, e, call_domain_register, &args, free_cb, __func__);
}

int rv_connect_domain_event_deregister(rv_conn *conn, int callback_id)
{
    return deregister_callback(conn, callback_id, RVC_EVENTS_DOMAIN, call_domain_deregister,
                               __func__);
}

int rv_connect_network_event_register_lifecycle(rv_conn *conn, rv_net *net,
                                                rv_network_lifecycle_callback cb, void *opaque,
                                                rv_free_callback free_cb)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc || rvc_handle_need_loop(conn, __func__) < 0)
        return -1;
    if (!cb)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no callback given", __func__);
    if (net && rvc_net_rpc(net, __func__) != rpc)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: the network belongs to another connection", __func__);
    lifecycle_callback *e = calloc(1, sizeof(*e));
    if (!e)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    e->family = RVC_EVENTS_NETWORK;
    e->net_cb = cb;
    e->opaque = opaque;
    rv_nonnull_network wire;
    if (net)
        wire = rvc_net_to_wire(net);
    rv_connect_network_event_register_any_args args = {
        .eventID = RV_NETWORK_EVENT_ID_LIFECYCLE, .net = net ? &wire : NULL,
    };
    return register_callback(conn, rpc, e, call_network_register, &args, free_cb, __func__);
}

int rv_connect_network_event_deregister(rv_conn *conn, int callback_id)
{
    return deregister_callback(conn, callback_id, RVC_EVENTS_NETWORK, call_network_deregister,
                               __func__);
}

/* A pool callback of either kind: cb or refresh_cb (the other NULL). */
static int register_pool(rv_conn *conn, rv_pool *pool, rv_storage_pool_lifecycle_callback cb,
                         rv_storage_pool_refresh_callback refresh_cb, void *opaque,
                         rv_free_callback free_cb, const char *func)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, func);
    if (!rpc || rvc_handle_need_loop(conn, func) < 0)
        return -1;
    if (!cb && !refresh_cb)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no callback given", func);
    if (pool && rvc_pool_rpc(pool, func) != rpc)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: the storage pool belongs to another connection", func);
    lifecycle_callback *e = calloc(1, sizeof(*e));
    if (!e)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    e->family = RVC_EVENTS_POOL;
    e->pool_cb = cb;
    e->refresh_cb = refresh_cb;
    e->opaque = opaque;
    rv_nonnull_storage_pool wire;
    if (pool)
        wire = rvc_pool_to_wire(pool);
    rv_connect_storage_pool_event_register_any_args args = {
        .eventID = cb ? RV_STORAGE_POOL_EVENT_ID_LIFECYCLE : RV_STORAGE_POOL_EVENT_ID_REFRESH,
        .pool = pool ? &wire : NULL,
    };
    return register_callback(conn, rpc, e, call_pool_register, &args, free_cb, func);
}

int rv_connect_storage_pool_event_register_lifecycle(rv_conn *conn, rv_pool *pool,
                                                     rv_storage_pool_lifecycle_callback cb,
                                                     void *opaque, rv_free_callback free_cb)
{
    return register_pool(conn, pool, cb, NULL, opaque, free_cb, __func__);
}

int rv_connect_storage_pool_event_register_refresh(rv_conn *conn, rv_pool *pool,
                                                   rv_storage_pool_refresh_callback cb,
                                                   void *opaque, rv_free_callback free_cb)
{
    return register_pool(conn, pool, NULL, cb, opaque, free_cb, __func__);
}

int rv_connect_storage_pool_event_deregister(rv_conn *conn, int callback_id)
{
    return deregister_callback(conn, callback_id, RVC_EVENTS_POOL, call_pool_deregister,
                               __func__);
}

int rv_connect_register_close_callback(rv_conn *conn, rv_connect_close_callback cb,
                                       void *opaque, rv_free_callback free_cb)
{
    if (!rvc_handle_rpc(conn, __func__))
        return -1;
    if (!cb)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no callback given", __func__);
    pthread_mutex_lock(&conn->cb_lock);
    int taken = conn->close_cb != NULL;
    if (!taken) {
        if (conn->close_free)   /* an earlier, unregistered one */
            conn->close_free(conn->close_opaque);
        conn->close_cb = cb;
        conn->close_opaque = opaque;
        conn->close_free = free_cb;
    }
    pthread_mutex_unlock(&conn->cb_lock);
    if (taken)
        return rvc_report(RV_FROM_NONE, RV_ERR_OPERATION_INVALID,
                          "%s: a close callback is already registered", __func__);
    return 0;
}

int rv_connect_unregister_close_callback(rv_conn *conn, rv_connect_close_callback cb)
{
    if (!rvc_handle_rpc(conn, __func__))
        return -1;
    pthread_mutex_lock(&conn->cb_lock);
    int mine = cb && conn->close_cb == cb;
    if (mine)
        conn->close_cb = NULL;  /* its free_cb runs with the connection's end */
    pthread_mutex_unlock(&conn->cb_lock);
    if (!mine)
        return rvc_report(RV_FROM_NONE, RV_ERR_OPERATION_INVALID,
                          "%s: that close callback is not registered", __func__);
    return 0;
}

