/* Opening a connection (the URI, the transport, the handshake libvirt's
 * own client makes), closing it, and the calls about the connection
 * itself rather than the server's objects: alive, keepalive. */
#include "client/remvirt.h"

#include <stdlib.h>

#include "client/auth.h"
#include "client/callbacks.h"
#include "client/conn.h"
#include "client/connect.h"
#include "client/event.h"
#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "client/uri.h"
#include "common/log.h"
#include "rv_remote.h"

RV_LOG_CATEGORY("client.open");

/* Keepalive with an event loop: libvirt's defaults, so a dead server is
 * noticed after about half a minute. */
#define KEEPALIVE_INTERVAL 5
#define KEEPALIVE_COUNT 5

/* How long opening waits for each answer of the server before it gives
 * up (REMVIRT_OPEN_TIMEOUT seconds; 0: for ever): a healthy server
 * answers the handshake within milliseconds. */
#define OPEN_TIMEOUT_S 30

static int open_timeout_ms(void)
{
    const char *env = getenv("REMVIRT_OPEN_TIMEOUT");
    char *end = NULL;
    long s = env && *env ? strtol(env, &end, 10) : OPEN_TIMEOUT_S;
    if (env && *env && (*end || s < 0 || s > 86400)) {
        RV_WARN("ignoring REMVIRT_OPEN_TIMEOUT='%s' (seconds, 0 to 86400)", env);
        s = OPEN_TIMEOUT_S;
    }
    return (int)s * 1000;
}

static int supports_feature(struct rvc_conn *rpc, int feature, int *supported, rv_err *err)
{
    rv_connect_supports_feature_args args = { .feature = feature };
    rv_connect_supports_feature_ret ret = { 0 };
    if (rvc_call_connect_supports_feature(rpc, &args, &ret, err) < 0)
        return -1;
    *supported = ret.supported != 0;
    return 0;
}

/* The same calls, in the same order, as libvirt's own client makes. */
static int handshake(rv_conn *conn, const rvc_uri *uri, const char *name, unsigned int flags,
                     const rvc_asker *asker, rv_err *err)
{
    rv_auth_list_ret auth = { { 0, NULL } };
    if (rvc_call_auth_list(conn->rpc, &auth, err) < 0) {
        /* A server at its client limit closes new connections at once;
         * say so rather than leave a bare "connection reset" (unless a
         * tunnel's command already told why it went away). */
        if ((err->code == RV_ERR_SYSTEM_ERROR || err->code == RV_ERR_RPC) &&
            !rvc_conn_peer_error(conn->rpc)) {
            char *why = err->message;
            err->message = NULL;
            rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                       "the server closed the connection before answering (it may be at a "
                       "client limit, max_clients or max_anonymous_clients; see its log): %s",
                       why ? why : "");
            free(why);
        }
        return -1;
    }
    int authenticated = rvc_authenticate(conn->rpc, uri, auth.types.types_val,
                                         auth.types.types_len, asker, err);
    xdr_free((xdrproc_t)xdr_rv_auth_list_ret, (char *)&auth);
    if (authenticated < 0)
        return -1;

    /* Once told that we do keepalive, the server PINGs an idle client and
     * drops it if nothing answers: only the event loop answers while no
     * call runs, so without one we do not ask (as libvirt's client). */
    int keepalive = 0, event_callback, close_callback;
    if (rvc_event_impl_registered() &&
        supports_feature(conn->rpc, RV_FEATURE_PROGRAM_KEEPALIVE, &keepalive, err) < 0)
        return -1;

    rv_connect_open_args open_args = { .name = (char **)&name, .flags = 0 };
    if (flags & RV_CONNECT_READONLY)
        open_args.flags |= RV_CONNECT_RO;
    if (rvc_call_connect_open(conn->rpc, &open_args, err) < 0)
        return -1;

    if (supports_feature(conn->rpc, RV_FEATURE_REMOTE_EVENT_CALLBACK, &event_callback, err) < 0 ||
        supports_feature(conn->rpc, RV_FEATURE_REMOTE_CLOSE_CALLBACK, &close_callback, err) < 0)
        return -1;
    if (close_callback) {
        if (rvc_call_connect_register_close_callback(conn->rpc, err) < 0)
            return -1;
        conn->close_callback = 1;
    }
    conn->keepalive = keepalive;
    conn->event_callbacks = event_callback;
    if (rvc_event_impl_registered()) {
        if (rvc_conn_attach_loop(conn->rpc, rvc_callbacks_on_message, rvc_callbacks_on_closed,
                                 conn, err) < 0 ||
            (keepalive &&
             rvc_conn_set_keepalive(conn->rpc, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT, err) < 0))
            return -1;
        conn->with_loop = 1;
    }
    RV_DEBUG("opened '%s': keepalive %d, event callbacks %d, close callback %d",
             name, keepalive, event_callback, close_callback);
    return 0;
}

static rv_conn *open_with(const char *func, const char *uri, unsigned int flags,
                          const rvc_asker *asker)
{
    rvc_init_once();
    rvc_enter();
    if (flags & ~(unsigned int)RV_CONNECT_READONLY) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: unsupported flags %#x", func,
                   flags & ~(unsigned int)RV_CONNECT_READONLY);
        return NULL;
    }
    if (!uri || !*uri)
        uri = getenv("REMVIRT_DEFAULT_URI");
    if (!uri || !*uri)
        uri = "test:///default";

    rv_err err = { 0 };
    rvc_uri *parsed = NULL;
    char *name = NULL;
    rv_conn *conn = NULL;
    if (rvc_uri_parse(uri, &parsed, &err) < 0 || !(name = rvc_uri_server_name(parsed, &err)))
        goto fail;

    if (!(conn = rvc_handle_new(uri))) {
        rv_err_set(&err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    rv_transport *tr = rvc_transport_open(parsed, flags & RV_CONNECT_READONLY, &err);
    if (!tr || !(conn->rpc = rvc_conn_new(tr, &err)))
        goto fail;
    rvc_conn_set_answer_timeout(conn->rpc, open_timeout_ms());
    if (handshake(conn, parsed, name, flags, asker, &err) < 0)
        goto fail;
    rvc_conn_set_answer_timeout(conn->rpc, 0);
    RV_DEBUG("connected to %s over %s as '%s'", uri, rvc_uri_transport(parsed), name);
    rvc_uri_free(parsed);
    free(name);
    return conn;

fail:
    if (conn) {
        rvc_conn_free(conn->rpc);
        rvc_handle_unref(conn);     /* the only reference: nothing was registered */
    }
    rvc_uri_free(parsed);
    free(name);
    return rvc_fail_null(&err);
}

rv_conn *rv_connect_open(const char *uri, unsigned int flags)
{
    const rvc_asker terminal = { .callback = NULL, .opaque = NULL, .tty = 1 };
    return open_with(__func__, uri, flags, &terminal);
}

rv_conn *rv_connect_open_auth(const char *uri, unsigned int flags, rv_auth_callback callback,
                              void *opaque)
{
    const rvc_asker application = { .callback = callback, .opaque = opaque, .tty = 0 };
    return open_with(__func__, uri, flags, &application);
}

int rv_connect_close(rv_conn *conn)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_err err = { 0 };
    /* Say goodbye only while the connection works: a dead one has nobody
     * to listen, and its error is already known. */
    if (rvc_conn_is_alive(rpc)) {
        if (conn->close_callback)
            rvc_call_connect_unregister_close_callback(rpc, &err);
        if (!rv_err_is_set(&err))
            rvc_call_connect_close(rpc, &err);
    }
    rvc_conn_free(rpc);
    conn->rpc = NULL;
    rvc_callbacks_report_closed(conn, RV_CLOSE_REASON_CLIENT);
    rvc_handle_unref(conn);
    return rv_err_is_set(&err) ? rvc_fail(&err) : 0;
}

int rv_connect_is_alive(rv_conn *conn)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    return rpc ? rvc_conn_is_alive(rpc) : -1;
}

int rv_connect_set_keepalive(rv_conn *conn, int interval, unsigned int count)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc || rvc_handle_need_loop(conn, __func__) < 0)
        return -1;
    if (!conn->keepalive && interval > 0)
        return rvc_report(RV_FROM_RPC, RV_ERR_NO_SUPPORT,
                          "%s: the server does not support keepalive", __func__);
    rv_err err = { 0 };
    if (rvc_conn_set_keepalive(rpc, interval, count, &err) < 0)
        return rvc_fail(&err);
    return 0;
}

unsigned long long rv_get_lib_version(void)
{
    return RV_LIB_VERSION_NUMBER;
}
