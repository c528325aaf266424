/* The public API: argument checks, the opening handshake, and the
 * translation between rv_dom handles and the wire's domain triple.  Each
 * call is one generated stub call; errors land in the thread's last
 * error. */
#include "client/remvirt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/auth.h"
#include "client/conn.h"
#include "client/connect.h"
#include "client/event.h"
#include "client/rv_stubs.gen.h"
#include "client/uri.h"
#include "common/log.h"
#include "common/util.h"
#include "rv_remote.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("client.api");

/* Keepalive with an event loop: libvirt's defaults, so a dead server is
 * noticed after about half a minute. */
#define KEEPALIVE_INTERVAL 5
#define KEEPALIVE_COUNT 5

/* The public constants are libvirt's numbers, as are the internal ones. */
#define SAME(pub, internal) _Static_assert((int)(pub) == (int)(internal), #pub)
SAME(RV_ERROR_INTERNAL_ERROR, RV_ERR_INTERNAL_ERROR);
SAME(RV_ERROR_NO_MEMORY, RV_ERR_NO_MEMORY);
SAME(RV_ERROR_NO_SUPPORT, RV_ERR_NO_SUPPORT);
SAME(RV_ERROR_NO_CONNECT, RV_ERR_NO_CONNECT);
SAME(RV_ERROR_INVALID_CONN, RV_ERR_INVALID_CONN);
SAME(RV_ERROR_INVALID_DOMAIN, RV_ERR_INVALID_DOMAIN);
SAME(RV_ERROR_INVALID_ARG, RV_ERR_INVALID_ARG);
SAME(RV_ERROR_OPERATION_FAILED, RV_ERR_OPERATION_FAILED);
SAME(RV_ERROR_XML_ERROR, RV_ERR_XML_ERROR);
SAME(RV_ERROR_DOM_EXIST, RV_ERR_DOM_EXIST);
SAME(RV_ERROR_OPERATION_DENIED, RV_ERR_OPERATION_DENIED);
SAME(RV_ERROR_CONF_SYNTAX, RV_ERR_CONF_SYNTAX);
SAME(RV_ERROR_SYSTEM_ERROR, RV_ERR_SYSTEM_ERROR);
SAME(RV_ERROR_RPC, RV_ERR_RPC);
SAME(RV_ERROR_NO_DOMAIN, RV_ERR_NO_DOMAIN);
SAME(RV_ERROR_AUTH_FAILED, RV_ERR_AUTH_FAILED);
SAME(RV_ERROR_OPERATION_INVALID, RV_ERR_OPERATION_INVALID);
SAME(RV_ERROR_SSH, RV_ERR_SSH);
SAME(RV_ERROR_FROM_DOM, RV_FROM_DOM);
SAME(RV_ERROR_FROM_RPC, RV_FROM_RPC);
SAME(RV_ERROR_FROM_CONF, RV_FROM_CONF);
SAME(RV_ERROR_FROM_TEST, RV_FROM_TEST);
SAME(RV_ERROR_FROM_REMOTE, RV_FROM_REMOTE);
SAME(RV_ERROR_FROM_URI, RV_FROM_URI);
SAME(RV_ERROR_FROM_SSH, RV_FROM_SSH);
SAME(RV_ERROR_LEVEL_ERROR, RV_ERR_LEVEL_ERROR);
SAME(RV_CONNECT_READONLY, RV_CONNECT_RO);
SAME(RV_CONNECT_CLOSE_REASON_ERROR, RV_CLOSE_REASON_ERROR);
SAME(RV_CONNECT_CLOSE_REASON_EOF, RV_CLOSE_REASON_EOF);
SAME(RV_CONNECT_CLOSE_REASON_KEEPALIVE, RV_CLOSE_REASON_KEEPALIVE);
SAME(RV_CONNECT_CLOSE_REASON_CLIENT, RV_CLOSE_REASON_CLIENT);
SAME(RV_DOMAIN_EVENT_ID_LIFECYCLE, RV_DOM_EVENT_ID_LIFECYCLE);
SAME(RV_UUID_BUFLEN, RV_UUID_LEN);
SAME(RV_UUID_STRING_BUFLEN, RV_UUID_STRING_LEN);
_Static_assert(sizeof(((rv_node_info *)0)->model) == RV_NODE_MODEL_LEN + 1, "model size");
_Static_assert(sizeof(((rv_security_model *)0)->model) == RV_SECURITY_MODEL_MAX, "model size");
_Static_assert(sizeof(((rv_security_model *)0)->doi) == RV_SECURITY_DOI_MAX, "doi size");
_Static_assert(sizeof(((rv_security_label *)0)->label) == RV_SECURITY_LABEL_MAX, "label size");

/* An application's lifecycle callback; the server knows it by callback_id,
 * which means nothing until the server's reply to REGISTER_ANY has been
 * checked and `registered` is set: until then no event reaches it. */
typedef struct lifecycle_callback {
    struct lifecycle_callback *next;
    int registered;
    int callback_id;
    rv_domain_lifecycle_callback cb;
    void *opaque;
    rv_free_callback free_cb;
} lifecycle_callback;

struct rv_conn {
    struct rvc_conn *rpc;       /* NULL once closed */
    char *uri;
    int close_callback;         /* the server took CONNECT_REGISTER_CLOSE_CALLBACK */
    int refs;                   /* the opener's, plus one per rv_dom */
    int with_loop;              /* attached to the application's event loop */
    int keepalive;              /* the server does keepalive */
    int event_callbacks;        /* the server has REGISTER_ANY (316) */
    /* The application's callbacks; cb_lock guards them.  The loop's
     * thread calls them one at a time, never with cb_lock held. */
    pthread_mutex_t cb_lock;
    lifecycle_callback *callbacks;
    lifecycle_callback *delivering; /* the one the loop's thread is running now */
    int delivering_retired;     /* ...and it was deregistered meanwhile: free it after */
    int registering;            /* REGISTER_ANY calls whose reply is not handled yet */
    pthread_cond_t registered;  /* registering dropped */
    rv_connect_close_callback close_cb;
    void *close_opaque;
    rv_free_callback close_free;
    int closed_reported;        /* the close callback has run */
};

struct rv_dom {
    rv_conn *conn;
    char *name;
    unsigned char uuid[RV_UUID_LEN];
    int id;
};

/* ---- the thread's last error ---- */

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static pthread_key_t message_key;   /* frees a thread's message when it exits */
static _Thread_local rv_error_info last_error;
static _Thread_local char *last_message;

static void lib_init(void)
{
    pthread_key_create(&message_key, free);
    /* A library has no main loop to flush a batch: write as we go. */
    rv_log_set_autoflush(1);
    rv_err err = { 0 };
    const char *filters = getenv("REMVIRT_LOG_FILTERS");
    const char *outputs = getenv("REMVIRT_LOG_OUTPUTS");
    if ((filters && rv_log_set_filters(filters, &err) < 0) ||
        (outputs && rv_log_set_outputs(outputs, &err) < 0))
        RV_WARN("ignoring the log settings from the environment: %s", err.message);
    rv_err_clear(&err);
}

void rv_reset_last_error(void)
{
    if (!last_error.code)
        return;
    free(last_message);
    last_message = NULL;
    pthread_setspecific(message_key, NULL);
    memset(&last_error, 0, sizeof(last_error));
}

const rv_error_info *rv_last_error(void)
{
    return last_error.code ? &last_error : NULL;
}

/* Every entry point starts here: a call that succeeds leaves no error. */
static inline void enter(void)
{
    if (__builtin_expect(last_error.code != 0, 0))
        rv_reset_last_error();
}

/* Make err (consumed) the thread's last error. */
static void keep_error(rv_err *err)
{
    pthread_once(&lib_once, lib_init);
    rv_reset_last_error();
    last_error.code = err->code ? err->code : RV_ERR_INTERNAL_ERROR;
    last_error.domain = err->domain;
    last_error.level = err->level ? err->level : RV_ERR_LEVEL_ERROR;
    last_message = err->message;
    err->message = NULL;
    last_error.message = last_message ? last_message : "out of memory describing an error";
    pthread_setspecific(message_key, last_message);
    rv_err_clear(err);
}

void rvc_set_last_error(rv_err *err)
{
    keep_error(err);
}

static int fail(rv_err *err)
{
    keep_error(err);
    return -1;
}

static void *fail_null(rv_err *err)
{
    keep_error(err);
    return NULL;
}

static int report(int domain, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int report(int domain, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, domain, code, fmt, ap);
    va_end(ap);
    return fail(&err);
}

static void *no_memory_null(void)
{
    report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    return NULL;
}

/* ---- handles ---- */

static struct rvc_conn *conn_rpc(rv_conn *conn, const char *func)
{
    enter();
    if (!conn) {
        report(RV_FROM_NONE, RV_ERR_INVALID_CONN, "%s: no connection given", func);
        return NULL;
    }
    if (!conn->rpc) {
        report(RV_FROM_NONE, RV_ERR_INVALID_CONN, "%s: the connection is closed", func);
        return NULL;
    }
    return conn->rpc;
}

static struct rvc_conn *dom_rpc(rv_dom *dom, const char *func)
{
    if (!dom) {
        report(RV_FROM_DOM, RV_ERR_INVALID_DOMAIN, "%s: no domain given", func);
        return NULL;
    }
    return conn_rpc(dom->conn, func);
}

static void free_callbacks(lifecycle_callback *list)
{
    while (list) {
        lifecycle_callback *next = list->next;
        if (list->free_cb)
            list->free_cb(list->opaque);
        free(list);
        list = next;
    }
}

static void conn_unref(rv_conn *conn)
{
    if (__atomic_sub_fetch(&conn->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free_callbacks(conn->callbacks);
        if (conn->close_free)
            conn->close_free(conn->close_opaque);
        pthread_mutex_destroy(&conn->cb_lock);
        pthread_cond_destroy(&conn->registered);
        free(conn->uri);
        free(conn);
    }
}

/* The wire form of dom; it borrows dom's name. */
static rv_nonnull_domain to_wire(const rv_dom *dom)
{
    rv_nonnull_domain w;
    w.name = dom->name;
    memcpy(w.uuid, dom->uuid, RV_UUID_LEN);
    w.id = __atomic_load_n(&dom->id, __ATOMIC_RELAXED);
    return w;
}

/* A handle for a domain the server sent; takes the decoded name. */
static rv_dom *from_wire(rv_conn *conn, rv_nonnull_domain *w)
{
    rv_dom *dom = malloc(sizeof(*dom));
    if (!dom)
        return no_memory_null();
    dom->conn = conn;
    dom->name = w->name;
    w->name = NULL;
    memcpy(dom->uuid, w->uuid, RV_UUID_LEN);
    __atomic_store_n(&dom->id, w->id, __ATOMIC_RELAXED);
    __atomic_add_fetch(&conn->refs, 1, __ATOMIC_RELAXED);
    return dom;
}

void rv_domain_free(rv_dom *dom)
{
    if (!dom)
        return;
    rv_conn *conn = dom->conn;
    free(dom->name);
    free(dom);
    conn_unref(conn);
}

const char *rv_domain_get_name(rv_dom *dom)
{
    enter();
    if (!dom) {
        report(RV_FROM_DOM, RV_ERR_INVALID_DOMAIN, "rv_domain_get_name: no domain given");
        return NULL;
    }
    return dom->name;
}

int rv_domain_get_id(rv_dom *dom)
{
    enter();
    if (!dom)
        return report(RV_FROM_DOM, RV_ERR_INVALID_DOMAIN, "rv_domain_get_id: no domain given");
    return __atomic_load_n(&dom->id, __ATOMIC_RELAXED);
}

int rv_domain_get_uuid(rv_dom *dom, unsigned char uuid[RV_UUID_BUFLEN])
{
    enter();
    if (!dom || !uuid)
        return report(RV_FROM_DOM, dom ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_DOMAIN,
                      "rv_domain_get_uuid: %s", dom ? "no buffer given" : "no domain given");
    memcpy(uuid, dom->uuid, RV_UUID_LEN);
    return 0;
}

int rv_domain_get_uuid_string(rv_dom *dom, char buf[RV_UUID_STRING_BUFLEN])
{
    enter();
    if (!dom || !buf)
        return report(RV_FROM_DOM, dom ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_DOMAIN,
                      "rv_domain_get_uuid_string: %s", dom ? "no buffer given" : "no domain given");
    rv_uuid_format(dom->uuid, buf);
    return 0;
}

/* ---- events and the close callback, in the loop's thread ---- */

/* Run the close callback once (unless it was unregistered). */
static void report_closed(rv_conn *conn, int reason)
{
    pthread_mutex_lock(&conn->cb_lock);
    rv_connect_close_callback cb = conn->closed_reported ? NULL : conn->close_cb;
    void *opaque = conn->close_opaque;
    conn->closed_reported = 1;
    pthread_mutex_unlock(&conn->cb_lock);
    if (cb)
        cb(conn, reason, opaque);
}

static void on_connection_lost(void *opaque, int reason)
{
    report_closed(opaque, reason);
}

/* With cb_lock held: the registered entry the server calls `id`. */
static lifecycle_callback *find_callback_locked(rv_conn *conn, int id)
{
    lifecycle_callback *e = conn->callbacks;
    while (e && !(e->registered && e->callback_id == id))
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

static void deliver_lifecycle(rv_conn *conn, rv_domain_event_callback_lifecycle_msg *msg)
{
    /* No registration ever gets a negative ID (see the registration), so
     * such an event has nobody to wait for. */
    if (msg->callbackID < 0) {
        RV_WARN("ignoring a lifecycle event for callback ID %d, which cannot exist",
                msg->callbackID);
        return;
    }
    pthread_mutex_lock(&conn->cb_lock);
    lifecycle_callback *e;
    for (;;) {
        e = find_callback_locked(conn, msg->callbackID);
        /* The first event may overtake the registering thread on its way
         * from the reply to noting the callbackID: wait for it.  Only a
         * registration that succeeds with this very ID then matches. */
        if (e || !conn->registering)
            break;
        pthread_cond_wait(&conn->registered, &conn->cb_lock);
    }
    /* A deregistration while it runs leaves freeing it to us. */
    conn->delivering = e;
    conn->delivering_retired = 0;
    pthread_mutex_unlock(&conn->cb_lock);
    if (!e) {
        RV_DEBUG("event for callback %d, which is not registered (any more)", msg->callbackID);
        return;
    }
    rv_dom *dom = from_wire(conn, &msg->msg.dom);
    if (dom) {
        e->cb(conn, dom, msg->msg.event, msg->msg.detail, e->opaque);
        rv_domain_free(dom);
    }
    pthread_mutex_lock(&conn->cb_lock);
    int retired = conn->delivering_retired;
    conn->delivering = NULL;
    pthread_mutex_unlock(&conn->cb_lock);
    if (retired) {
        e->next = NULL;
        free_callbacks(e);
    }
}

/* A MESSAGE from the server: decode it and call the application. */
static void on_server_message(void *opaque, const char *frame, size_t len)
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
        __atomic_add_fetch(&conn->refs, 1, __ATOMIC_RELAXED);
        deliver_lifecycle(conn, &msg);
        xdr_free((xdrproc_t)xdr_rv_domain_event_callback_lifecycle_msg, (char *)&msg);
        conn_unref(conn);
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
        report_closed(conn, reason);
    } else {
        RV_DEBUG("ignoring event procedure %d from the server", h.proc);
    }
    return;
bad:
    RV_WARN("ignoring an event the server sent: %s", err.message ? err.message : "?");
    rv_err_clear(&err);
}

/* ---- opening and closing ---- */

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
        if (rvc_conn_attach_loop(conn->rpc, on_server_message, on_connection_lost, conn, err) < 0 ||
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
    pthread_once(&lib_once, lib_init);
    enter();
    if (flags & ~(unsigned int)RV_CONNECT_READONLY) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: unsupported flags %#x", func,
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

    conn = calloc(1, sizeof(*conn));
    if (!conn || !(conn->uri = strdup(uri))) {
        rv_err_set(&err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    conn->refs = 1;
    pthread_mutex_init(&conn->cb_lock, NULL);
    pthread_cond_init(&conn->registered, NULL);
    rv_transport *tr = rvc_transport_open(parsed, flags & RV_CONNECT_READONLY, &err);
    if (!tr || !(conn->rpc = rvc_conn_new(tr, &err)) ||
        handshake(conn, parsed, name, flags, asker, &err) < 0)
        goto fail;
    RV_DEBUG("connected to %s over %s as '%s'", uri, rvc_uri_transport(parsed), name);
    rvc_uri_free(parsed);
    free(name);
    return conn;

fail:
    if (conn) {
        rvc_conn_free(conn->rpc);
        pthread_mutex_destroy(&conn->cb_lock);
        pthread_cond_destroy(&conn->registered);
        free(conn->uri);
        free(conn);
    }
    rvc_uri_free(parsed);
    free(name);
    return fail_null(&err);
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
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
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
    report_closed(conn, RV_CLOSE_REASON_CLIENT);
    conn_unref(conn);
    return rv_err_is_set(&err) ? fail(&err) : 0;
}

/* ---- connection queries ---- */

int rv_connect_is_alive(rv_conn *conn)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    return rpc ? rvc_conn_is_alive(rpc) : -1;
}

/* For calls whose whole answer is one string: hand it to the caller. */
#define STRING_CALL(stub, field)                                   \
    do {                                                           \
        struct rvc_conn *rpc_ = conn_rpc(conn, __func__);          \
        if (!rpc_)                                                 \
            return NULL;                                           \
        rv_##stub##_ret ret_ = { 0 };                              \
        rv_err err_ = { 0 };                                       \
        if (rvc_call_##stub(rpc_, &ret_, &err_) < 0)               \
            return fail_null(&err_);                               \
        return ret_.field;                                         \
    } while (0)

char *rv_connect_get_type(rv_conn *conn)
{
    STRING_CALL(connect_get_type, type);
}

char *rv_connect_get_hostname(rv_conn *conn)
{
    STRING_CALL(connect_get_hostname, hostname);
}

char *rv_connect_get_capabilities(rv_conn *conn)
{
    STRING_CALL(connect_get_capabilities, capabilities);
}

/* Like libvirt's client, the URI the connection was opened with (the
 * server only knows the part it was given). */
char *rv_connect_get_uri(rv_conn *conn)
{
    if (!conn_rpc(conn, __func__))
        return NULL;
    char *uri = strdup(conn->uri);
    return uri ? uri : no_memory_null();
}

int rv_connect_get_version(rv_conn *conn, unsigned long long *hv_ver)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!hv_ver)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_connect_get_version_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_get_version(rpc, &ret, &err) < 0)
        return fail(&err);
    *hv_ver = ret.hv_ver;
    return 0;
}

int rv_connect_get_lib_version(rv_conn *conn, unsigned long long *lib_ver)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!lib_ver)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_connect_get_lib_version_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_get_lib_version(rpc, &ret, &err) < 0)
        return fail(&err);
    *lib_ver = ret.lib_ver;
    return 0;
}

unsigned long long rv_get_lib_version(void)
{
    return RV_LIB_VERSION_NUMBER;
}

/* ---- host ---- */

/* Copy a counted char array that may or may not end in a NUL. */
static void copy_counted(char *dst, size_t size, const char *src, u_int len)
{
    size_t n = strnlen(src ? src : "", src ? len : 0);
    if (n > size - 1)
        n = size - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

int rv_node_get_info(rv_conn *conn, rv_node_info *info)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!info)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_node_get_info_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_info(rpc, &ret, &err) < 0)
        return fail(&err);
    copy_counted(info->model, sizeof(info->model), ret.model, sizeof(ret.model));
    info->memory = ret.memory;
    info->cpus = (unsigned int)ret.cpus;
    info->mhz = (unsigned int)ret.mhz;
    info->nodes = (unsigned int)ret.nodes;
    info->sockets = (unsigned int)ret.sockets;
    info->cores = (unsigned int)ret.cores;
    info->threads = (unsigned int)ret.threads;
    return 0;
}

int rv_node_get_security_model(rv_conn *conn, rv_security_model *model)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!model)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_node_get_security_model_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_security_model(rpc, &ret, &err) < 0)
        return fail(&err);
    copy_counted(model->model, sizeof(model->model), ret.model.model_val, ret.model.model_len);
    copy_counted(model->doi, sizeof(model->doi), ret.doi.doi_val, ret.doi.doi_len);
    xdr_free((xdrproc_t)xdr_rv_node_get_security_model_ret, (char *)&ret);
    return 0;
}

/* ---- lists and lookups ---- */

int rv_connect_num_of_domains(rv_conn *conn)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_connect_num_of_domains_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_num_of_domains(rpc, &ret, &err) < 0)
        return fail(&err);
    /* A negative count would read as our own failure, with no error set. */
    if (ret.num < 0)
        return report(RV_FROM_RPC, RV_ERR_RPC, "%s: the server counts %d domains", __func__,
                      ret.num);
    return ret.num;
}

int rv_connect_list_all_domains(rv_conn *conn, rv_dom ***doms, unsigned int flags)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (doms)
        *doms = NULL;
    rv_connect_list_all_domains_args args = { .need_results = doms != NULL, .flags = flags };
    rv_connect_list_all_domains_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_domains(rpc, &args, &ret, &err) < 0)
        return fail(&err);

    int count = (int)ret.ret;
    if (doms) {
        u_int n = ret.domains.domains_len;      /* at most RV_DOMAIN_LIST_MAX */
        rv_dom **list = calloc(n + 1, sizeof(*list));
        for (u_int i = 0; list && i < n; i++) {
            if (!(list[i] = from_wire(conn, &ret.domains.domains_val[i]))) {
                while (i > 0)
                    rv_domain_free(list[--i]);
                free(list);
                list = NULL;
            }
        }
        if (!list) {
            xdr_free((xdrproc_t)xdr_rv_connect_list_all_domains_ret, (char *)&ret);
            no_memory_null();
            return -1;
        }
        *doms = list;
        count = (int)n;
    } else if (ret.ret > RV_DOMAIN_LIST_MAX) {
        xdr_free((xdrproc_t)xdr_rv_connect_list_all_domains_ret, (char *)&ret);
        return report(RV_FROM_RPC, RV_ERR_RPC, "the server counts %u domains, more than the %d allowed",
                      ret.ret, RV_DOMAIN_LIST_MAX);
    }
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_domains_ret, (char *)&ret);
    return count;
}

/* For calls answering { D dom }: wrap it as a new handle. */
#define DOMAIN_CALL(stub)                                          \
    do {                                                           \
        rv_##stub##_ret ret_;                                      \
        memset(&ret_, 0, sizeof(ret_));                            \
        rv_err err_ = { 0 };                                       \
        if (rvc_call_##stub(rpc, &args, &ret_, &err_) < 0)         \
            return fail_null(&err_);                               \
        rv_dom *dom_ = from_wire(conn, &ret_.dom);                 \
        xdr_free((xdrproc_t)xdr_rv_##stub##_ret, (char *)&ret_);   \
        return dom_;                                               \
    } while (0)

rv_dom *rv_domain_lookup_by_name(rv_conn *conn, const char *name)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!name) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no name given", __func__);
        return NULL;
    }
    rv_domain_lookup_by_name_args args = { .name = (char *)name };
    DOMAIN_CALL(domain_lookup_by_name);
}

rv_dom *rv_domain_lookup_by_id(rv_conn *conn, int id)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (id < 0) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: id %d is negative", __func__, id);
        return NULL;
    }
    rv_domain_lookup_by_id_args args = { .id = id };
    DOMAIN_CALL(domain_lookup_by_id);
}

rv_dom *rv_domain_lookup_by_uuid(rv_conn *conn, const unsigned char uuid[16])
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!uuid) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no uuid given", __func__);
        return NULL;
    }
    rv_domain_lookup_by_uuid_args args;
    memcpy(args.uuid, uuid, RV_UUID_LEN);
    DOMAIN_CALL(domain_lookup_by_uuid);
}

rv_dom *rv_domain_lookup_by_uuid_string(rv_conn *conn, const char *uuid)
{
    unsigned char raw[RV_UUID_LEN];
    if (!conn_rpc(conn, __func__))
        return NULL;
    if (!uuid || rv_uuid_parse(uuid, raw) < 0) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: '%s' is not a UUID", __func__,
               uuid ? uuid : "(null)");
        return NULL;
    }
    return rv_domain_lookup_by_uuid(conn, raw);
}

rv_dom *rv_domain_define_xml(rv_conn *conn, const char *xml)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!xml) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no XML given", __func__);
        return NULL;
    }
    rv_domain_define_xml_args args = { .xml = (char *)xml };
    DOMAIN_CALL(domain_define_xml);
}

rv_dom *rv_domain_create_xml(rv_conn *conn, const char *xml, unsigned int flags)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!xml) {
        report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no XML given", __func__);
        return NULL;
    }
    rv_domain_create_xml_args args = { .xml_desc = (char *)xml, .flags = flags };
    DOMAIN_CALL(domain_create_xml);
}

/* ---- lifecycle ---- */

/* For calls taking { D dom [, flags] } and answering nothing. */
#define VOID_DOMAIN_CALL(stub, ...)                                \
    do {                                                           \
        struct rvc_conn *rpc_ = dom_rpc(dom, __func__);            \
        if (!rpc_)                                                 \
            return -1;                                             \
        rv_##stub##_args args_ = { .dom = to_wire(dom), __VA_ARGS__ }; \
        rv_err err_ = { 0 };                                       \
        if (rvc_call_##stub(rpc_, &args_, &err_) < 0)              \
            return fail(&err_);                                    \
    } while (0)

int rv_domain_create(rv_dom *dom, unsigned int flags)
{
    struct rvc_conn *rpc = dom_rpc(dom, __func__);
    if (!rpc)
        return -1;
    rv_domain_create_with_flags_args args = { .dom = to_wire(dom), .flags = flags };
    rv_domain_create_with_flags_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_domain_create_with_flags(rpc, &args, &ret, &err) < 0)
        return fail(&err);
    __atomic_store_n(&dom->id, ret.dom.id, __ATOMIC_RELAXED);
    xdr_free((xdrproc_t)xdr_rv_domain_create_with_flags_ret, (char *)&ret);
    return 0;
}

int rv_domain_undefine(rv_dom *dom, unsigned int flags)
{
    VOID_DOMAIN_CALL(domain_undefine_flags, .flags = flags);
    return 0;
}

/* Flags 0 uses the original procedure, as libvirt's client does. */
int rv_domain_shutdown(rv_dom *dom, unsigned int flags)
{
    if (flags)
        VOID_DOMAIN_CALL(domain_shutdown_flags, .flags = flags);
    else
        VOID_DOMAIN_CALL(domain_shutdown);
    return 0;
}

int rv_domain_destroy(rv_dom *dom, unsigned int flags)
{
    if (flags)
        VOID_DOMAIN_CALL(domain_destroy_flags, .flags = flags);
    else
        VOID_DOMAIN_CALL(domain_destroy);
    __atomic_store_n(&dom->id, -1, __ATOMIC_RELAXED);
    return 0;
}

int rv_domain_suspend(rv_dom *dom)
{
    VOID_DOMAIN_CALL(domain_suspend);
    return 0;
}

int rv_domain_resume(rv_dom *dom)
{
    VOID_DOMAIN_CALL(domain_resume);
    return 0;
}

int rv_domain_reboot(rv_dom *dom, unsigned int flags)
{
    VOID_DOMAIN_CALL(domain_reboot, .flags = flags);
    return 0;
}

/* ---- queries ---- */

/* Declares ret and makes the call; the caller reads ret afterwards. */
#define QUERY_DOMAIN_CALL(stub, ...)                               \
    struct rvc_conn *rpc_ = dom_rpc(dom, __func__);                \
    if (!rpc_)                                                     \
        return -1;                                                 \
    rv_##stub##_args args_ = { .dom = to_wire(dom), __VA_ARGS__ }; \
    rv_##stub##_ret ret;                                           \
    memset(&ret, 0, sizeof(ret));                                  \
    rv_err err_ = { 0 };                                           \
    if (rvc_call_##stub(rpc_, &args_, &ret, &err_) < 0)            \
        return fail(&err_)

static int no_result_pointer(const char *func)
{
    return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", func);
}

int rv_domain_get_info(rv_dom *dom, rv_domain_info *info)
{
    if (dom && !info)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_info);
    info->state = ret.state;
    info->max_mem = ret.maxMem;
    info->memory = ret.memory;
    info->nr_virt_cpu = ret.nrVirtCpu;
    info->cpu_time = ret.cpuTime;
    return 0;
}

int rv_domain_get_state(rv_dom *dom, int *state, int *reason, unsigned int flags)
{
    if (dom && !state)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_state, .flags = flags);
    *state = ret.state;
    if (reason)
        *reason = ret.reason;
    return 0;
}

char *rv_domain_get_xml_desc(rv_dom *dom, unsigned int flags)
{
    struct rvc_conn *rpc = dom_rpc(dom, __func__);
    if (!rpc)
        return NULL;
    rv_domain_get_xml_desc_args args = { .dom = to_wire(dom), .flags = flags };
    rv_domain_get_xml_desc_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_domain_get_xml_desc(rpc, &args, &ret, &err) < 0)
        return fail_null(&err);
    return ret.xml;
}

char *rv_domain_get_os_type(rv_dom *dom)
{
    struct rvc_conn *rpc = dom_rpc(dom, __func__);
    if (!rpc)
        return NULL;
    rv_domain_get_os_type_args args = { .dom = to_wire(dom) };
    rv_domain_get_os_type_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_domain_get_os_type(rpc, &args, &ret, &err) < 0)
        return fail_null(&err);
    return ret.type;
}

int rv_domain_get_autostart(rv_dom *dom, int *autostart)
{
    if (dom && !autostart)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_autostart);
    *autostart = ret.autostart != 0;
    return 0;
}

int rv_domain_is_active(rv_dom *dom)
{
    QUERY_DOMAIN_CALL(domain_is_active);
    return ret.active != 0;
}

int rv_domain_is_persistent(rv_dom *dom)
{
    QUERY_DOMAIN_CALL(domain_is_persistent);
    return ret.persistent != 0;
}

int rv_domain_has_managed_save_image(rv_dom *dom, unsigned int flags)
{
    QUERY_DOMAIN_CALL(domain_has_managed_save_image, .flags = flags);
    return ret.result != 0;
}

int rv_domain_get_security_label(rv_dom *dom, rv_security_label *label)
{
    if (dom && !label)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_security_label);
    copy_counted(label->label, sizeof(label->label), ret.label.label_val, ret.label.label_len);
    label->enforcing = ret.enforcing;
    xdr_free((xdrproc_t)xdr_rv_domain_get_security_label_ret, (char *)&ret);
    return 0;
}

int rv_domain_get_messages(rv_dom *dom, char ***msgs, unsigned int flags)
{
    if (dom && !msgs)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_messages, .flags = flags);
    u_int n = ret.msgs.msgs_len;                /* at most RV_DOMAIN_MESSAGES_MAX */
    char **list = calloc(n + 1, sizeof(*list));
    if (!list) {
        xdr_free((xdrproc_t)xdr_rv_domain_get_messages_ret, (char *)&ret);
        no_memory_null();
        return -1;
    }
    for (u_int i = 0; i < n; i++) {
        list[i] = ret.msgs.msgs_val[i];
        ret.msgs.msgs_val[i] = NULL;
    }
    /* The strings now belong to list: this frees only the array. */
    xdr_free((xdrproc_t)xdr_rv_domain_get_messages_ret, (char *)&ret);
    *msgs = list;
    return (int)n;
}

/* ---- events and the close callback: registration ---- */

static int need_loop(rv_conn *conn, const char *func)
{
    if (conn->with_loop)
        return 0;
    return report(RV_FROM_RPC, RV_ERR_NO_SUPPORT,
                  "%s: the connection has no event loop: register one "
                  "(rv_event_register_default_impl) before opening it", func);
}

int rv_connect_domain_event_register_lifecycle(rv_conn *conn, rv_dom *dom,
                                               rv_domain_lifecycle_callback cb, void *opaque,
                                               rv_free_callback free_cb)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc || need_loop(conn, __func__) < 0)
        return -1;
    if (!cb)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no callback given", __func__);
    if (dom && dom->conn != conn)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                      "%s: the domain belongs to another connection", __func__);
    if (!conn->event_callbacks)
        return report(RV_FROM_RPC, RV_ERR_NO_SUPPORT,
                      "%s: the server does not support event callbacks", __func__);
    lifecycle_callback *e = calloc(1, sizeof(*e));
    if (!e)
        return report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    rv_nonnull_domain wire;
    if (dom)
        wire = to_wire(dom);
    rv_connect_domain_event_callback_register_any_args args = {
        .eventID = RV_DOMAIN_EVENT_ID_LIFECYCLE, .dom = dom ? &wire : NULL,
    };
    rv_connect_domain_event_callback_register_any_ret ret = { 0 };
    rv_err err = { 0 };
    /* Listed before the call: the first event may come before its reply. */
    pthread_mutex_lock(&conn->cb_lock);
    e->callback_id = -1;
    e->cb = cb;
    e->opaque = opaque;
    e->next = conn->callbacks;
    conn->callbacks = e;
    conn->registering++;
    pthread_mutex_unlock(&conn->cb_lock);
    int rc = rvc_call_connect_domain_event_callback_register_any(rpc, &args, &ret, &err);
    pthread_mutex_lock(&conn->cb_lock);
    conn->registering--;
    /* The server chose the ID: a negative one would read as our failure,
     * a duplicate would share events with (and deregister) another. */
    if (rc == 0 && ret.callbackID < 0) {
        rv_err_set(&err, RV_FROM_RPC, RV_ERR_RPC,
                   "%s: the server answered with callback ID %d, which is negative",
                   __func__, ret.callbackID);
        rc = -1;
    } else if (rc == 0 && find_callback_locked(conn, ret.callbackID)) {
        rv_err_set(&err, RV_FROM_RPC, RV_ERR_RPC,
                   "%s: the server answered with callback ID %d, which this connection "
                   "already has", __func__, ret.callbackID);
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
        return fail(&err);
    }
    e->callback_id = ret.callbackID;
    e->free_cb = free_cb;
    e->registered = 1;
    pthread_cond_broadcast(&conn->registered);
    pthread_mutex_unlock(&conn->cb_lock);
    return ret.callbackID;
}

int rv_connect_domain_event_deregister(rv_conn *conn, int callback_id)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc)
        return -1;
    pthread_mutex_lock(&conn->cb_lock);
    /* Only a registered entry: one still in flight belongs to its caller. */
    lifecycle_callback *e = find_callback_locked(conn, callback_id);
    int ours = e && unlink_callback_locked(conn, e);
    pthread_mutex_unlock(&conn->cb_lock);
    if (ours)
        free_callbacks(e);
    if (!e)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                      "%s: no event callback has id %d", __func__, callback_id);
    rv_connect_domain_event_callback_deregister_any_args args = { .callbackID = callback_id };
    rv_err err = { 0 };
    if (rvc_call_connect_domain_event_callback_deregister_any(rpc, &args, &err) < 0)
        return fail(&err);
    return 0;
}

int rv_connect_register_close_callback(rv_conn *conn, rv_connect_close_callback cb,
                                       void *opaque, rv_free_callback free_cb)
{
    if (!conn_rpc(conn, __func__))
        return -1;
    if (!cb)
        return report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no callback given", __func__);
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
        return report(RV_FROM_NONE, RV_ERR_OPERATION_INVALID,
                      "%s: a close callback is already registered", __func__);
    return 0;
}

int rv_connect_unregister_close_callback(rv_conn *conn, rv_connect_close_callback cb)
{
    if (!conn_rpc(conn, __func__))
        return -1;
    pthread_mutex_lock(&conn->cb_lock);
    int mine = cb && conn->close_cb == cb;
    if (mine)
        conn->close_cb = NULL;  /* its free_cb runs with the connection's end */
    pthread_mutex_unlock(&conn->cb_lock);
    if (!mine)
        return report(RV_FROM_NONE, RV_ERR_OPERATION_INVALID,
                      "%s: that close callback is not registered", __func__);
    return 0;
}

int rv_connect_set_keepalive(rv_conn *conn, int interval, unsigned int count)
{
    struct rvc_conn *rpc = conn_rpc(conn, __func__);
    if (!rpc || need_loop(conn, __func__) < 0)
        return -1;
    if (!conn->keepalive && interval > 0)
        return report(RV_FROM_RPC, RV_ERR_NO_SUPPORT,
                      "%s: the server does not support keepalive", __func__);
    rv_err err = { 0 };
    if (rvc_conn_set_keepalive(rpc, interval, count, &err) < 0)
        return fail(&err);
    return 0;
}
