/* Peer-to-peer live migration (PERFORM3_PARAMS with VIR_MIGRATE_PEER2PEER
 * and a destination connection URI): the client makes one call, and this
 * daemon plays the client's part of the managed migration itself, as
 * libvirtd does:
 *   thread  open dconnuri; CONNECT_SUPPORTS_FEATURE MIGRATION_P2P, V3,
 *           PARAMS; PREPARE3_PARAMS there (this domain's BEGIN3 XML and
 *           cookie)                           -> its URI, to the loop
 *   loop    the local PERFORM3 (qemu_migrate.c's MIGRATE_OUT job)
 *                                             -> ended, to the thread
 *   thread  FINISH3_PARAMS there (cancelled if the stream failed); close
 *                                             -> its result, to the loop
 *   loop    the local CONFIRM3: success: this QEMU goes; else cancelled:
 *           the guest runs here again, and the call gets the error.
 * Why a thread: the destination is driven with libremvirt's synchronous
 * client (open with its transports and authentication, the calls), which
 * exists and is tested; driving the same protocol asynchronously on the
 * loop would need a second, loop-side client.  The thread blocks only on
 * the destination and on a condition the loop signals; one runs per
 * peer-to-peer migration under way, and it posts to the loop with an
 * ev_async as the work pool does (server/drivers/work_pool.c: the pool's
 * threads must not wait on peers, so this is not a pool job).  The loop
 * never waits for it, except to join it after its last post.
 * The guest runs on exactly one host whatever fails: the source pauses it
 * only at the end of the stream, and resumes it (CONFIRM3 cancelled)
 * unless the destination's FINISH3 said it runs there.
 * Tunnelled (qemu_migrate_tunnel.c): PREPARE_TUNNEL3_PARAMS (or the
 * plain PREPARE_TUNNEL3) instead of PREPARE3, the loop's PERFORM3 to a
 * socket pair, and the thread, after the prepare, sends what QEMU writes
 * there on the call's stream, then ends the stream before FINISH3.
 * Keepalive on the destination's connection (qemu_keepalive_interval,
 * qemu_keepalive_count: libvirtd's qemu.conf keepalive_*, 5 and 5): a
 * destination that stops answering (its daemon stopped, its link down) is
 * declared dead after about interval * (count + 1) s; the connection's
 * close, whatever its reason, cancels the local migration (as libvirtd's
 * source does when its destination connection dies), so the guest runs on
 * here without a domjobabort.  The PINGs and the reading of the PONGs
 * while the thread waits are libremvirt's built-in event loop's, run in a
 * thread of its own (start_client_loop). */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ev.h>

#include "client/handle.h"
#include "client/conn.h"
#include "client/connect.h"
#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"
#include "transport/transport.h"

RV_LOG_CATEGORY("qemu.migrate");

#define fail(err, ...) rv_err_fail(err, RV_FROM_QEMU, __VA_ARGS__)

/* libvirt's flags this file looks at (virDomainMigrateFlags). */
enum {
    P2P_FLAG = 1u << 1,
    P2P_TUNNELLED = 1u << 2,
    P2P_CHANGE_PROTECTION = 1u << 8,
    P2P_ABORT_ON_ERROR = 1u << 12,
    P2P_NON_SHARED = 3u << 6,   /* NON_SHARED_DISK, NON_SHARED_INC */
    P2P_OFFLINE = 1u << 10,
    P2P_UNDEFINE_SOURCE = 1u << 4,
};
/* libvirt's driver features the source asks the destination about. */
enum { FEATURE_P2P = 4, FEATURE_V3 = 6, FEATURE_PARAMS = 13 };
/* The longest the destination may take to answer one call (a prepare
 * starts a QEMU; a stopped daemon otherwise holds the migration for ever). */
#define ANSWER_TIMEOUT_MS 120000
/* Tunnelled, the migration failed: how long the thread may still be
 * sending to a destination that reads nothing (stopped) before the loop
 * cuts the connection under it. */
#define STUCK_SEND_S 10.

typedef enum {
    P2P_PREPARING,              /* the thread's: open, prepare */
    P2P_PREPARED,               /* posted: uri_out, the stream may start */
    P2P_PERFORMING,             /* the loop's MIGRATE_OUT job */
    P2P_PERFORMED,              /* the thread's again: finish */
    P2P_DONE,                   /* posted; the thread ends */
} p2p_stage;

typedef struct qemu_p2p {
    ev_async wake;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    rv_deferred *reply;         /* the client's PERFORM3 call */
    /* Set before the thread starts, read-only after: */
    unsigned char uuid[16];
    const char *dconnuri;       /* in reply's arguments */
    const rv_typed_param *params;
    u_int nparams;
    unsigned int flags, dest_flags;
    char *xml, *cookie;         /* BEGIN3's */
    char *stats;                /* PERFORM3's cookie (its figures) for FINISH3; NULL: none */
    u_int stats_len;
    char *name;                 /* the domain's, for FINISH3's destination_name */
    u_int cookie_len;
    /* Tunnelled (qemu_migrate_tunnel.c): a socket pair, QEMU's end passed
     * by the loop, the thread's read and sent on the destination's
     * stream (shut down by the loop when the migration fails); both
     * closed when p goes. */
    bool tunnel;
    int tunnel_qemu, tunnel_ours;
    struct rvc_stream *stream;
    ev_timer stuck;             /* the loop's: the send to cut (STUCK_SEND_S) */
    /* Under lock: */
    struct rvc_conn *rpc;       /* the destination's, open (tunnelled only) */
    bool stream_ended;
    bool cut;                   /* on_stuck cut it */
    bool lost;                  /* the destination's connection closed (on_dest_closed) */
    bool keepalive;             /* the destination answers keepalive (the thread's) */
    int lost_reason;            /* ... RV_CONNECT_CLOSE_REASON_* */
    bool cancelling;            /* the loop's: migrate_cancel sent for it */
    p2p_stage stage;
    bool perform_failed;
    /* The thread's until it posts P2P_DONE: */
    char *uri_out;
    bool plain;                 /* the destination offers no MIGRATION_PARAMS */
    char *dest_cookie;          /* PREPARE3's (a storage copy's NBD port) */
    u_int dest_cookie_len;
    bool prepared, finished;
    bool pump_failed;           /* the tunnel's stream failed first: its error says why */
    bool dest_lost;             /* the connection died under the migration: thread_err says why */
    rv_err thread_err;
    /* The loop's: */
    rv_err perform_err;
} qemu_p2p;

/* ---------------------------------------------------------------- the thread */

/* The library's last error (this thread's) into err. */
static void take_last_error(rv_err *err, const char *what)
{
    const rv_error_info *e = rv_last_error();
    rv_err_set(err, e ? e->domain : RV_FROM_QEMU, e ? e->code : RV_ERR_OPERATION_FAILED, "%s%s",
               e ? "" : what, e ? e->message : "");
    rv_reset_last_error();
}

static void post(qemu_p2p *p, p2p_stage stage)
{
    pthread_mutex_lock(&p->lock);
    p->stage = stage;
    pthread_mutex_unlock(&p->lock);
    ev_async_send(rv_qemu.loop, &p->wake);
}

/* The parameters the steps with plain arguments carry as fields. */
static bool plain_param(const char *name)
{
    static const char *const names[] = { "destination_xml", "destination_name", "migrate_uri",
                                         "bandwidth" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

/* P2P and V3 needed; without PARAMS the plain steps are used (as
 * libvirtd does), if the call's parameters fit in their fields. */
static int check_features(struct rvc_conn *rpc, qemu_p2p *p, rv_err *err)
{
    static const int needed[] = { FEATURE_P2P, FEATURE_V3, FEATURE_PARAMS };
    for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
        rv_connect_supports_feature_args a = { .feature = needed[i] };
        rv_connect_supports_feature_ret r = { 0 };
        if (rvc_conn_call(rpc, RV_PROC_CONNECT_SUPPORTS_FEATURE,
                          (xdrproc_t)xdr_rv_connect_supports_feature_args, &a,
                          (xdrproc_t)xdr_rv_connect_supports_feature_ret, &r, err) < 0)
            return -1;
        if (!r.supported && needed[i] == FEATURE_PARAMS) {
            for (u_int k = 0; k < p->nparams; k++)
                if (!plain_param(p->params[k].field))
                    return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: the "
                                "destination takes no migration parameters, and '%s' has no "
                                "field in its steps", p->params[k].field);
            p->plain = true;
        } else if (!r.supported)
            return fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                        needed[i] == FEATURE_P2P
                            ? "Destination libvirt does not support peer-to-peer migration protocol"
                            : "Destination does not support the version 3 migration protocol");
    }
    return 0;
}

/* The call's parameters for the destination, with destination_xml (this
 * domain's) and, for FINISH3 (uri given), migrate_uri = that URI and a
 * destination_name (as a libvirtd source sends them: docs/wire-protocol.md).
 * A shallow copy: the strings stay the call's and p's. */
static rv_typed_param *dest_params(const qemu_p2p *p, bool finishing, u_int *n)
{
    /* (a tunnel has no URI; FINISH3 gets the destination's name all the same) */
    const char *uri = finishing && !p->tunnel ? p->uri_out : NULL;
    rv_typed_param *out = calloc(p->nparams + 3, sizeof(*out));
    if (!out)
        return NULL;
    u_int k = 0;
    bool named = false;
    for (u_int i = 0; i < p->nparams; i++) {
        const char *name = p->params[i].field;
        if (strcmp(name, "destination_xml") == 0 || (finishing && strcmp(name, "migrate_uri") == 0))
            continue;
        named |= strcmp(name, "destination_name") == 0;
        out[k++] = p->params[i];
    }
    if (finishing && !named) {
        out[k].field = (char *)"destination_name";
        out[k].value.type = RV_TYPED_PARAM_STRING;
        out[k++].value.rv_typed_param_value_u.s = p->name;
    }
    out[k].field = (char *)"destination_xml";
    out[k].value.type = RV_TYPED_PARAM_STRING;
    out[k++].value.rv_typed_param_value_u.s = p->xml;
    if (uri) {
        out[k].field = (char *)"migrate_uri";
        out[k].value.type = RV_TYPED_PARAM_STRING;
        out[k++].value.rv_typed_param_value_u.s = (char *)uri;
    }
    *n = k;
    return out;
}

/* A string parameter of the call (NULL: none), for the plain steps. */
static char *given(const qemu_p2p *p, const char *name)
{
    const rv_typed_param *t = rv_tune_param_find(p->params, p->nparams, name);
    return t && t->value.type == RV_TYPED_PARAM_STRING ? t->value.rv_typed_param_value_u.s : NULL;
}

/* PREPARE3 with plain arguments (its result is PREPARE3_PARAMS's, field
 * for field), or tunnelled PREPARE_TUNNEL3 (its stream into p).  The
 * fields point into p. */
static int prepare_plain(struct rvc_conn *rpc, qemu_p2p *p, rv_domain_migrate_prepare3_params_ret *r,
                         rv_err *err)
{
    const rv_typed_param *bw = rv_tune_param_find(p->params, p->nparams, "bandwidth");
    char *uri = given(p, "migrate_uri"), *dname = given(p, "destination_name");
    rv_domain_migrate_prepare3_args a = {
        .cookie_in = { p->cookie_len, p->cookie },
        .uri_in = uri ? &uri : NULL,
        .flags = p->dest_flags,
        .dname = dname ? &dname : NULL,
        .resource = bw ? bw->value.rv_typed_param_value_u.ul : 0,
        .dom_xml = p->xml,
    };
    if (p->tunnel) {
        /* (no URI either way: the stream comes with the answer) */
        rv_domain_migrate_prepare_tunnel3_args t = {
            .cookie_in = { p->cookie_len, p->cookie },
            .flags = p->dest_flags,
            .dname = a.dname,
            .resource = a.resource,
            .dom_xml = p->xml,
        };
        return rv_qemu_migtunnel_prepare_plain(rpc, &t, &p->stream, err);
    }
    rv_domain_migrate_prepare3_ret pr = { 0 };
    if (rvc_conn_call(rpc, RV_PROC_DOMAIN_MIGRATE_PREPARE3,
                      (xdrproc_t)xdr_rv_domain_migrate_prepare3_args, &a,
                      (xdrproc_t)xdr_rv_domain_migrate_prepare3_ret, &pr, err) < 0)
        return -1;
    r->cookie_out.cookie_out_val = pr.cookie_out.cookie_out_val;
    r->cookie_out.cookie_out_len = pr.cookie_out.cookie_out_len;
    r->uri_out = pr.uri_out;
    return 0;
}

static int prepare(struct rvc_conn *rpc, qemu_p2p *p, rv_err *err)
{
    rv_domain_migrate_prepare3_params_args a = { 0 };
    rv_domain_migrate_prepare3_params_ret r = { 0 };
    int rc;
    if (p->plain) {
        rc = prepare_plain(rpc, p, &r, err);
        if (p->tunnel)
            return rc;
    } else {
        a.params.params_val = dest_params(p, false, &a.params.params_len);
        if (!a.params.params_val)
            return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
        a.cookie_in.cookie_in_val = p->cookie;
        a.cookie_in.cookie_in_len = p->cookie_len;
        a.flags = p->dest_flags;
        if (p->tunnel) {
            rc = rv_qemu_migtunnel_prepare(rpc, &a, &p->stream, err);
            free(a.params.params_val);
            return rc;
        }
        rc = rvc_conn_call(rpc, RV_PROC_DOMAIN_MIGRATE_PREPARE3_PARAMS,
                           (xdrproc_t)xdr_rv_domain_migrate_prepare3_params_args, &a,
                           (xdrproc_t)xdr_rv_domain_migrate_prepare3_params_ret, &r, err);
        free(a.params.params_val);
    }
    if (rc < 0)
        return -1;
    if (r.uri_out && *r.uri_out)
        p->uri_out = strdup(*r.uri_out);
    p->dest_cookie = r.cookie_out.cookie_out_val;
    p->dest_cookie_len = r.cookie_out.cookie_out_len;
    r.cookie_out.cookie_out_val = NULL;
    r.cookie_out.cookie_out_len = 0;
    xdr_free((xdrproc_t)xdr_rv_domain_migrate_prepare3_params_ret, (char *)&r);
    if (!p->uri_out && !(p->flags & P2P_OFFLINE))     /* (offline: no stream) */
        return fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                    "the destination gave no migration URI");
    return 0;
}

static int finish(struct rvc_conn *rpc, qemu_p2p *p, bool cancelled, rv_err *err)
{
    if (p->plain) {
        /* (the destination's name of the domain: the user's, else its own) */
        char *dname = given(p, "destination_name");
        rv_domain_migrate_finish3_args a = {
            .dname = dname ? dname : p->name,
            .cookie_in = { p->stats_len, p->stats },
            .uri = p->uri_out ? &p->uri_out : NULL,
            .flags = p->dest_flags,
            .cancelled = cancelled,
        };
        rv_domain_migrate_finish3_ret r = { 0 };
        int rc = rvc_conn_call(rpc, RV_PROC_DOMAIN_MIGRATE_FINISH3,
                               (xdrproc_t)xdr_rv_domain_migrate_finish3_args, &a,
                               (xdrproc_t)xdr_rv_domain_migrate_finish3_ret, &r, err);
        if (rc == 0)
            xdr_free((xdrproc_t)xdr_rv_domain_migrate_finish3_ret, (char *)&r);
        return rc;
    }
    rv_domain_migrate_finish3_params_args a = { 0 };
    rv_domain_migrate_finish3_params_ret r = { 0 };
    a.params.params_val = dest_params(p, true, &a.params.params_len);
    if (!a.params.params_val)
        return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    a.flags = p->dest_flags;
    a.cancelled = cancelled;
    a.cookie_in.cookie_in_val = p->stats;
    a.cookie_in.cookie_in_len = p->stats_len;
    int rc = rvc_conn_call(rpc, RV_PROC_DOMAIN_MIGRATE_FINISH3_PARAMS,
                           (xdrproc_t)xdr_rv_domain_migrate_finish3_params_args, &a,
                           (xdrproc_t)xdr_rv_domain_migrate_finish3_params_ret, &r, err);
    free(a.params.params_val);
    if (rc == 0)
        xdr_free((xdrproc_t)xdr_rv_domain_migrate_finish3_params_ret, (char *)&r);
    return rc;
}

/* libremvirt's built-in event loop, for the destinations' keepalive:
 * registered before the first destination connection opens, run by a
 * thread of its own for the daemon's life (it only waits in poll()). */
static pthread_once_t client_loop_once = PTHREAD_ONCE_INIT;
static bool client_loop_runs;

static void *run_client_loop(void *arg)
{
    (void)arg;
    for (;;) {
        if (rv_event_run_default_impl() < 0) {
            const rv_error_info *e = rv_last_error();
            RV_WARN("the destinations' event loop: %s", e && e->message ? e->message : "failed");
            rv_reset_last_error();
            usleep(100000);     /* (not a busy loop if it keeps failing) */
        }
    }
    return NULL;
}

/* (in the first migration's thread: every signal is blocked, so in the
 * loop's thread too) */
static void start_client_loop(void)
{
    pthread_t t;
    pthread_attr_t attr;
    if (rv_event_register_default_impl() < 0) {
        const rv_error_info *e = rv_last_error();
        RV_WARN("no keepalive on migration destinations: %s", e && e->message ? e->message : "");
        rv_reset_last_error();
        return;
    }
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, run_client_loop, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        RV_WARN("no keepalive on migration destinations: cannot start its thread: %s", strerror(rc));
    client_loop_runs = rc == 0;
}

/* The destination's connection closed (the client loop's thread, or the
 * thread's own close, unregistered first): the loop cancels the local
 * migration if it runs. */
static void on_dest_closed(rv_conn *conn, int reason, void *opaque)
{
    (void)conn;
    qemu_p2p *p = opaque;
    pthread_mutex_lock(&p->lock);
    if (!p->lost) {
        p->lost = true;
        p->lost_reason = reason;
    }
    pthread_mutex_unlock(&p->lock);
    ev_async_send(rv_qemu.loop, &p->wake);
}

static void keepalive_on(rv_conn *dconn, qemu_p2p *p)
{
    if (!client_loop_runs)
        return;
    if (rv_connect_register_close_callback(dconn, on_dest_closed, p, NULL) < 0)
        rv_reset_last_error();
    /* (-1: a destination without keepalive; its close still cancels) */
    if (rv_connect_set_keepalive(dconn, rv_qemu.keepalive_interval,
                                 (unsigned int)rv_qemu.keepalive_count) < 0) {
        if (rv_qemu.keepalive_interval > 0)
            RV_INFO("peer-to-peer migration: no keepalive with %s", p->dconnuri);
        rv_reset_last_error();
    } else {
        p->keepalive = rv_qemu.keepalive_interval > 0;
    }
}

static void *drive(void *arg)
{
    qemu_p2p *p = arg;
    pthread_once(&client_loop_once, start_client_loop);
    rv_conn *dconn = rv_connect_open_auth(p->dconnuri, 0, NULL, NULL);
    struct rvc_conn *rpc = dconn ? dconn->rpc : NULL;
    if (!rpc) {
        take_last_error(&p->thread_err, "cannot connect to the destination");
    } else {
        rvc_conn_set_answer_timeout(rpc, ANSWER_TIMEOUT_MS);
        keepalive_on(dconn, p);
        if (p->tunnel) {
            pthread_mutex_lock(&p->lock);
            p->rpc = rpc;
            pthread_mutex_unlock(&p->lock);
        }
        if (check_features(rpc, p, &p->thread_err) == 0 && prepare(rpc, p, &p->thread_err) == 0)
            p->prepared = true;
    }
    if (p->prepared) {
        RV_INFO("peer-to-peer migration: %s prepared it, to %s", p->dconnuri,
                p->tunnel ? "a tunnel" : p->uri_out);
        post(p, P2P_PREPARED);
        /* Tunnelled: QEMU's bytes go on the stream until QEMU closes its
         * end (completed or failed) or the loop shuts ours down. */
        rv_err pe = { 0 };
        bool pumped = !p->tunnel || rv_qemu_migtunnel_pump(p->tunnel_ours, p->stream, &pe) == 0;
        pthread_mutex_lock(&p->lock);
        while (p->stage != P2P_PERFORMED)
            pthread_cond_wait(&p->cond, &p->lock);
        bool cancelled = p->perform_failed;
        pthread_mutex_unlock(&p->lock);
        if (p->tunnel) {
            /* The destination has all of it (finished) before FINISH3,
             * or its QEMU reads the end of a stream cut short.  (A stream
             * that failed after QEMU's last write: cancelled all the same,
             * the destination has not all of it.) */
            cancelled |= !pumped;
            rv_err se = { 0 };
            if (rvc_stream_end(p->stream, cancelled, &se) < 0 && !cancelled) {
                cancelled = true;
                rv_err_move(&p->thread_err, &se);
            }
            if (!pumped && !rv_err_is_set(&p->thread_err))
                rv_err_move(&p->thread_err, &pe);
            p->pump_failed = !pumped;
            rv_err_clear(&se);
            rvc_stream_free(p->stream);
            p->stream = NULL;
            pthread_mutex_lock(&p->lock);
            p->stream_ended = true;
            pthread_mutex_unlock(&p->lock);
        }
        rv_err_clear(&pe);
        /* Cancelled, the destination's answer (an error) tells nothing new. */
        rv_err e = { 0 };
        /* (after a post-copy switch FINISH3 is answered once the whole
         * stream is in, however long that takes: with keepalive, a dead
         * destination is found by it, not by the answer timeout) */
        if (p->keepalive)
            rvc_conn_set_answer_timeout(rpc, 0);
        if (finish(rpc, p, cancelled, &e) == 0 && !cancelled)
            p->finished = true;
        else if (!cancelled)
            rv_err_move(&p->thread_err, &e);
        rv_err_clear(&e);
    }
    pthread_mutex_lock(&p->lock);
    bool cut = p->cut, gone = p->lost;
    int gone_why = p->lost_reason;
    pthread_mutex_unlock(&p->lock);
    /* (the close callback goes before the close, which would call it) */
    if (dconn)
        rv_connect_unregister_close_callback(dconn, on_dest_closed);
    p->dest_lost = gone && (p->prepared && !p->finished);
    if (p->dest_lost && gone_why == RV_CONNECT_CLOSE_REASON_KEEPALIVE) {
        rv_err_clear(&p->thread_err);
        rv_err_set(&p->thread_err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                   "operation failed: the destination %s did not answer keepalive for about "
                   "%d s: connection closed", p->dconnuri,
                   rv_qemu.keepalive_interval * (rv_qemu.keepalive_count + 1));
    } else if (rpc && (rv_err_is_set(&p->thread_err) || p->dest_lost) &&
               !rv_connect_is_alive(dconn)) {
        /* The client's words ("connection closed by the server") would
         * name the wrong server to the caller. */
        rv_err lost = { 0 };
        if (cut)
            rv_err_set(&lost, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: the destination %s took nothing of the migration "
                       "stream for %.0f s after the migration failed: connection cut",
                       p->dconnuri, STUCK_SEND_S);
        else
            rv_err_set(&lost, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: lost the connection to the destination %s: %s",
                       p->dconnuri, p->thread_err.message ? p->thread_err.message : "closed");
        rv_err_move(&p->thread_err, &lost);
    }
    if (p->stream)              /* (prepared nothing, yet a stream: none in fact) */
        rvc_stream_free(p->stream);
    p->stream = NULL;
    pthread_mutex_lock(&p->lock);
    p->rpc = NULL;              /* (the loop no longer cuts it) */
    pthread_mutex_unlock(&p->lock);
    if (dconn)
        rv_connect_close(dconn);
    post(p, P2P_DONE);
    return NULL;
}

/* ---------------------------------------------------------------- the loop */

static void p2p_free(qemu_p2p *p)
{
    ev_async_stop(rv_qemu.loop, &p->wake);
    ev_timer_stop(rv_qemu.loop, &p->stuck);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p->xml);
    free(p->cookie);
    free(p->stats);
    free(p->name);
    free(p->uri_out);
    free(p->dest_cookie);
    if (p->tunnel_qemu >= 0)
        close(p->tunnel_qemu);
    if (p->tunnel_ours >= 0)
        close(p->tunnel_ours);
    rv_err_clear(&p->thread_err);
    rv_err_clear(&p->perform_err);
    free(p);
}

/* The domain the migration is of, while it still is (running, unless
 * only its definition moves). */
static qemu_dom *p2p_dom(const qemu_p2p *p)
{
    qemu_dom *d = rv_qemu_find_uuid(p->uuid);
    return d && d->p2p == p && ((p->flags & P2P_OFFLINE) || rv_qemu_dom_active(d)) ? d : NULL;
}

/* The migration failed long ago, and the thread still sends on the
 * tunnel's stream (a destination that reads nothing, its daemon stopped):
 * its connection is shut down under it, so that its send fails.  (The
 * socket stays open until the thread, under the lock, forgets it.) */
static void on_stuck(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_p2p *p = (qemu_p2p *)((char *)w - offsetof(qemu_p2p, stuck));
    pthread_mutex_lock(&p->lock);
    if (p->rpc && !p->stream_ended) {
        RV_WARN("tunnelled migration to %s: the destination took nothing for %.0f s after the "
                "migration failed: its connection is cut", p->dconnuri, STUCK_SEND_S);
        shutdown(rvc_conn_transport(p->rpc)->fd, SHUT_RDWR);
        p->cut = true;
    }
    pthread_mutex_unlock(&p->lock);
}

static void performed(qemu_p2p *p, const rv_err *err)
{
    pthread_mutex_lock(&p->lock);
    p->stage = P2P_PERFORMED;
    if (err) {
        p->perform_failed = true;
        if (p->tunnel_ours >= 0) {  /* (the thread stops reading, QEMU writing) */
            shutdown(p->tunnel_ours, SHUT_RDWR);
            ev_timer_start(rv_qemu.loop, &p->stuck);
        }
        rv_err_set(&p->perform_err, err->domain, err->code, "%s", err->message ? err->message : "");
    }
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void rv_qemu_migrate_p2p_performed(qemu_dom *d, const rv_err *err)
{
    qemu_p2p *p = d->p2p;
    pthread_mutex_lock(&p->lock);
    bool performing = p->stage == P2P_PERFORMING;
    pthread_mutex_unlock(&p->lock);
    rv_err e = { 0 };
    if (performing && !err && rv_qemu_migrate_stats_cookie(d, &p->stats, &p->stats_len, &e) < 0)
        rv_err_clear(&e);     /* (FINISH3 without the figures) */
    if (performing)
        performed(p, err);
    else
        d->p2p = NULL;          /* its QEMU went meanwhile: the migration sees it */
}

static void confirm(qemu_p2p *p)
{
    qemu_dom *d = p2p_dom(p);
    rv_err e = { 0 };
    if (p->finished && !d) {
        /* The guest runs there; the source's QEMU, its stream complete,
         * went meanwhile (destroyed): nothing is left to confirm. */
        RV_INFO("peer-to-peer migration to %s completed, the source gone already", p->dconnuri);
        rv_deferred_finish(p->reply, NULL);
        return;
    }
    if (!p->prepared || !d) {
        /* Nothing began here (or the guest went): nothing to undo. */
        if (rv_err_is_set(&p->perform_err))
            rv_err_move(&p->thread_err, &p->perform_err);
        if (!rv_err_is_set(&p->thread_err))
            rv_err_set(&p->thread_err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: %s", "the domain went away during its migration");
        if (d)
            d->p2p = NULL;
        rv_deferred_finish(p->reply, &p->thread_err);
        return;
    }
    d->p2p = NULL;
    /* (QEMU's broken pipe after the tunnel's stream failed says less) */
    const rv_err *why = rv_err_is_set(&p->perform_err) && !p->pump_failed && !p->dest_lost
                            ? &p->perform_err
                            : &p->thread_err;
    if (p->flags & P2P_OFFLINE) {
        /* The definition is there now: with UNDEFINE_SOURCE it goes from
         * here (a guest running here runs on, transient), as CONFIRM3. */
        if (p->finished && (p->flags & P2P_UNDEFINE_SOURCE) && d->def) {
            if (rv_qemu_def_remove(d, 0, p->reply, &e) < 0)
                rv_deferred_finish(p->reply, &e);
        } else {
            rv_deferred_finish(p->reply, p->finished ? NULL : why);
        }
        rv_err_clear(&e);
        return;
    }
    if (p->finished)
        RV_INFO("domain '%s': peer-to-peer migration to %s completed", d->live->name, p->dconnuri);
    else
        RV_WARN("domain '%s': peer-to-peer migration to %s failed: %s", d->live->name,
                p->dconnuri, why->message ? why->message : "");
    if (rv_qemu_migrate_confirm(d, p->flags, !p->finished, p->reply, p->finished ? NULL : why,
                                &e) < 0)
        rv_deferred_finish(p->reply, &e);
    rv_err_clear(&e);
}

static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_p2p *p = (qemu_p2p *)w;
    pthread_mutex_lock(&p->lock);
    p2p_stage stage = p->stage;
    bool lost = p->lost;
    pthread_mutex_unlock(&p->lock);
    if (stage == P2P_PREPARED && (p->flags & P2P_OFFLINE)) {
        performed(p, NULL);     /* (no stream: FINISH3 defines it there) */
    } else if (stage == P2P_PREPARED && lost) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   "lost the connection to the destination");
        performed(p, &e);       /* (nothing sent: the stream would go nowhere) */
        rv_err_clear(&e);
    } else if (stage == P2P_PERFORMING && lost && !p->cancelling) {
        /* The destination's connection died (keepalive, EOF) while the
         * stream goes: FINISH3 cannot be called, so the stream stops now
         * (the job then fails, and the guest runs on here). */
        qemu_dom *d = p2p_dom(p);
        rv_err e = { 0 };
        p->cancelling = true;
        if (d) {
            RV_WARN("domain '%s': the connection to %s closed during its migration: cancelled",
                    d->live->name, p->dconnuri);
            if (rv_qemu_migration_cancel(d, &e) < 0)
                RV_WARN("%s", e.message ? e.message : "");
        }
        rv_err_clear(&e);
    } else if (stage == P2P_PREPARED) {
        qemu_dom *d = p2p_dom(p);
        rv_err e = { 0 };
        /* Non-shared disks: mirrored to the destination's NBD server
         * (its port in PREPARE3's cookie) before the stream, as in the
         * managed migration. */
        const rv_typed_param *bw = rv_tune_param_find(p->params, p->nparams, "bandwidth");
        unsigned long long mib = bw ? bw->value.rv_typed_param_value_u.ul : 0;
        if (!d || rv_qemu_migrate_out_check(d, p->params, p->nparams, &e) < 0 ||
            ((p->flags & P2P_NON_SHARED) &&
             rv_qemu_migstore_perform(d, p->flags, p->params, p->nparams, p->uri_out, p->dest_cookie,
                                      p->dest_cookie_len, mib ? mib : d->migtune.max_bandwidth,
                                      &e) < 0)) {
            if (!rv_err_is_set(&e))
                rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                           "the domain went away during its migration");
            performed(p, &e);
        } else {
            const char *uri = p->uri_out;
            int fd = p->tunnel_qemu;
            p->tunnel_qemu = -1;
            if (p->tunnel && rv_qemu_migtunnel_pass_out(d, fd, &uri, &e) < 0) {
                performed(p, &e);
            } else {
                pthread_mutex_lock(&p->lock);
                p->stage = P2P_PERFORMING;
                pthread_mutex_unlock(&p->lock);
                rv_qemu_migrate_out(d, p->params, p->nparams, p->flags, uri, NULL);
            }
        }
        rv_err_clear(&e);
    } else if (stage == P2P_DONE) {
        /* Its last post: the thread is returning. */
        pthread_join(p->thread, NULL);
        confirm(p);
        p2p_free(p);
    }
}

int rv_qemu_migrate_p2p(rv_driver_conn *c, const rv_domain_migrate_perform3_params_args *args,
                        rv_err *err)
{
    (void)c;
    static const char func[] = "qemuDomainMigratePerform3Params";
    /* The daemon's connections never ask on a terminal (set before any
     * thread opens one). */
    rvc_never_prompt = 1;
    if (rv_qemu_migrate_check_flags(args->flags, func, err) < 0 ||
        rv_qemu_migcaps_parse(args->flags, args->params.params_val, args->params.params_len, false,
                              NULL, err) < 0)
        return -1;
    if (!args->dconnuri || !*args->dconnuri || !**args->dconnuri)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "peer-to-peer migration needs the destination's connection URI");
    const rv_typed_param *params = args->params.params_val;
    u_int n = args->params.params_len;
    bool offline = args->flags & P2P_OFFLINE;
    qemu_dom *d = rv_qemu_migrate_source(&args->dom, offline, err);
    if (!d || (!offline && rv_qemu_migrate_out_check(d, params, n, err) < 0))
        return -1;
    const rv_typed_param *dxml = rv_tune_param_find(params, n, "destination_xml");
    if (dxml && dxml->value.type != RV_TYPED_PARAM_STRING)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s", "destination_xml must be a string");
    qemu_p2p *p = calloc(1, sizeof(*p));
    if (!p)
        return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    p->tunnel_qemu = p->tunnel_ours = -1;
    if (args->flags & P2P_TUNNELLED) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
            free(p);
            return fail(err, RV_ERR_SYSTEM_ERROR, "cannot make the migration's tunnel: %s",
                        strerror(errno));
        }
        p->tunnel = true;
        p->tunnel_qemu = sv[0];
        p->tunnel_ours = sv[1];
    }
    if (rv_qemu_migrate_begin(d, offline, dxml ? dxml->value.rv_typed_param_value_u.s : NULL, &p->xml,
                              &p->cookie, &p->cookie_len, err) < 0) {
        if (p->tunnel) {
            close(p->tunnel_qemu);
            close(p->tunnel_ours);
        }
        free(p);
        return -1;
    }
    if (!(p->name = strdup(rv_qemu_dom_def(d)->name)) || !(p->reply = rv_driver_defer(err))) {
        if (!p->name)
            fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
        free(p->name);
        free(p->xml);
        free(p->cookie);
        if (p->tunnel) {
            close(p->tunnel_qemu);
            close(p->tunnel_ours);
        }
        free(p);
        return -1;
    }
    /* From here on the reply's copy of the arguments is the one used. */
    const rv_domain_migrate_perform3_params_args *kept = rv_deferred_args(p->reply);
    memcpy(p->uuid, rv_qemu_dom_def(d)->uuid, sizeof(p->uuid));
    p->dconnuri = *kept->dconnuri;
    p->params = kept->params.params_val;
    p->nparams = kept->params.params_len;
    /* One job already: change protection is moot (libvirtd drops it too),
     * and abort-on-error is the source's business. */
    p->flags = args->flags & ~P2P_CHANGE_PROTECTION;
    p->dest_flags = p->flags & ~P2P_ABORT_ON_ERROR;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    ev_async_init(&p->wake, on_wake);
    ev_timer_init(&p->stuck, on_stuck, STUCK_SEND_S, 0.);
    ev_async_start(rv_qemu.loop, &p->wake);
    /* Signals stay the loop's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&p->thread, NULL, drive, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot start the migration's thread: %s",
                   strerror(rc));
        rv_deferred_finish(p->reply, &e);
        rv_err_clear(&e);
        p2p_free(p);
        return RV_DEFERRED;
    }
    d->p2p = p;
    RV_INFO("domain '%s': peer-to-peer migration to %s%s", p->name, p->dconnuri,
            offline ? " (its definition only)" : "");
    return RV_DEFERRED;
}
