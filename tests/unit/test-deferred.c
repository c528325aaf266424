/* Deferred replies: a driver slot that takes its call with
 * rv_driver_defer() is answered when it calls rv_deferred_finish(), with
 * the call's serial, its arguments still readable and its result sent;
 * an error goes out as an error; a client gone meanwhile leaves nothing
 * (run under ASan/valgrind for leaks); calls that answer at once still do;
 * and deferred calls count against max_client_requests: with a limit of
 * 2, the third pipelined call is not even read until one is answered. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ev.h>

#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/drivers/driver.h"
#include "tests/unit/check.h"
#include "transport/frame.h"
#include "transport/socket.h"

static rvs_client *to_flush;

static void on_close(rvs_client *c, void *opaque)
{
    (void)c;
    (void)opaque;
}

static void want_flush(rvs_client *c, void *opaque)
{
    (void)opaque;
    rvs_client_flush_list_push(&to_flush, c);
}

static void on_authenticated(rvs_client *c, void *opaque)
{
    (void)c;
    (void)opaque;
}

static void flush_all(void)
{
    rvs_client *c;
    while ((c = rvs_client_flush_list_pop(&to_flush)))
        if (!rvs_client_is_closing(c))
            rvs_client_flush(c);
}

/* The calls the fake driver took, in order. */
static rv_deferred *taken[16];
static int ntaken;

static int suspend_later(rv_driver_conn *c, const rv_domain_suspend_args *args, rv_err *err)
{
    (void)c;
    (void)args;
    rv_deferred *d = rv_driver_defer(err);
    if (!d)
        return -1;
    CHECK(ntaken < 16);
    taken[ntaken++] = d;
    return RV_DEFERRED;
}

static int lookup_later(rv_driver_conn *c, const rv_domain_lookup_by_name_args *args,
                        rv_domain_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    (void)args;
    (void)ret;
    return suspend_later(c, NULL, err);
}

static int hostname_now(rv_driver_conn *c, rv_connect_get_hostname_ret *ret, rv_err *err)
{
    (void)c;
    (void)err;
    ret->hostname = strdup("right-now");
    return ret->hostname ? 0 : -1;
}

static void close_conn(rv_driver_conn *c)
{
    (void)c;
}

static const rv_driver later_driver = {
    .name = "later",
    .close = close_conn,
    .ops = {
        .domain_suspend = suspend_later,
        .domain_lookup_by_name = lookup_later,
        .connect_get_hostname = hostname_now,
    },
};

static void encode_call(rv_buf *b, int proc, unsigned serial, xdrproc_t args_fn, void *args)
{
    rv_header h = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, proc, RV_CALL, serial, RV_OK };
    rv_err err = { 0 };
    CHECK(rv_frame_encode(b, &h, args_fn, args, &err) == 0);
}

static void send_call(rvs_client *c, int proc, unsigned serial, xdrproc_t args_fn, void *args)
{
    rv_buf b = { 0 };
    encode_call(&b, proc, serial, args_fn, args);
    CHECK(rvs_dispatch_frame(c, rv_buf_head(&b), rv_buf_used(&b)) == 0);
    rv_buf_free(&b);
}

/* The next reply in buf: its header, and its body decoded with ret_fn
 * (or the error into *error). */
static void next_reply(rv_buf *out, rv_header *hdr, xdrproc_t ret_fn, void *ret, rv_error *error)
{
    rv_err err = { 0 };
    CHECK(rv_buf_used(out) >= RV_FRAME_MIN);
    uint32_t len = rv_frame_peek_len(rv_buf_head(out));
    CHECK(len <= rv_buf_used(out));
    CHECK(rv_frame_decode_header(rv_buf_head(out), len, hdr, &err) == 0);
    if (hdr->status == RV_ERROR)
        CHECK(rv_frame_decode_payload(rv_buf_head(out), len, (xdrproc_t)xdr_rv_error, error,
                                      &err) == 0);
    else if (ret_fn)
        CHECK(rv_frame_decode_payload(rv_buf_head(out), len, ret_fn, ret, &err) == 0);
    rv_buf_consume(out, len);
}

static rv_domain_suspend_args suspend_args(void)
{
    static char name[] = "guest";
    rv_domain_suspend_args a = { .dom = { .name = name, .id = 3 } };
    return a;
}

static void detached_client(void)
{
    static rvs_client_env env = { .max_client_requests = 1 << 30 };
    env.on_close = on_close;
    env.want_flush = want_flush;
    rvs_client *c = rvs_client_new_detached(&env, 1);
    CHECK(c != NULL);
    rvs_client_attach_driver(c, &later_driver, (rv_driver_conn *)&env, strdup("later:///"));
    rv_buf *out = rvs_client_output(c);
    rv_header hdr;
    rv_error error;

    /* Deferred: nothing yet.  Meanwhile a direct call answers at once. */
    rv_domain_suspend_args sa = suspend_args();
    send_call(c, RV_PROC_DOMAIN_SUSPEND, 10, (xdrproc_t)xdr_rv_domain_suspend_args, &sa);
    CHECK_INT_EQ(ntaken, 1);
    CHECK_INT_EQ((int)rv_buf_used(out), 0);
    send_call(c, RV_PROC_CONNECT_GET_HOSTNAME, 11, NULL, NULL);
    rv_connect_get_hostname_ret host = { 0 };
    next_reply(out, &hdr, (xdrproc_t)xdr_rv_connect_get_hostname_ret, &host, &error);
    CHECK_UINT_EQ(hdr.serial, 11);
    CHECK_STR_EQ(host.hostname, "right-now");
    xdr_free((xdrproc_t)xdr_rv_connect_get_hostname_ret, &host);

    /* The arguments outlive the dispatch that decoded them. */
    char name[] = "looked-up";
    rv_domain_lookup_by_name_args la = { .name = name };
    send_call(c, RV_PROC_DOMAIN_LOOKUP_BY_NAME, 12, (xdrproc_t)xdr_rv_domain_lookup_by_name_args, &la);
    send_call(c, RV_PROC_DOMAIN_SUSPEND, 13, (xdrproc_t)xdr_rv_domain_suspend_args, &sa);
    CHECK_INT_EQ(ntaken, 3);
    CHECK_INT_EQ((int)rv_buf_used(out), 0);

    /* Answered out of order: each with its own serial. */
    const rv_domain_lookup_by_name_args *kept = rv_deferred_args(taken[1]);
    CHECK_STR_EQ(kept->name, "looked-up");
    rv_domain_lookup_by_name_ret *lr = rv_deferred_ret(taken[1]);
    lr->dom.name = strdup(kept->name);
    lr->dom.id = 9;
    rv_deferred_finish(taken[1], NULL);
    rv_domain_lookup_by_name_ret got = { 0 };
    next_reply(out, &hdr, (xdrproc_t)xdr_rv_domain_lookup_by_name_ret, &got, &error);
    CHECK_UINT_EQ(hdr.serial, 12);
    CHECK_INT_EQ(hdr.status, RV_OK);
    CHECK_INT_EQ(hdr.proc, RV_PROC_DOMAIN_LOOKUP_BY_NAME);
    CHECK_STR_EQ(got.dom.name, "looked-up");
    CHECK_INT_EQ(got.dom.id, 9);
    xdr_free((xdrproc_t)xdr_rv_domain_lookup_by_name_ret, &got);

    rv_err failure = { 0 };
    rv_err_set(&failure, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID, "not now");
    rv_deferred_finish(taken[2], &failure);
    rv_err_clear(&failure);
    memset(&error, 0, sizeof(error));
    next_reply(out, &hdr, NULL, NULL, &error);
    CHECK_UINT_EQ(hdr.serial, 13);
    CHECK_INT_EQ(hdr.status, RV_ERROR);
    CHECK_INT_EQ(error.code, RV_ERR_OPERATION_INVALID);
    CHECK_STR_EQ(*error.message, "not now");
    xdr_free((xdrproc_t)xdr_rv_error, &error);

    rv_deferred_finish(taken[0], NULL);
    next_reply(out, &hdr, NULL, NULL, &error);
    CHECK_UINT_EQ(hdr.serial, 10);
    CHECK_INT_EQ(hdr.status, RV_OK);
    CHECK_INT_EQ((int)rv_buf_used(out), 0);

    /* The client goes first: the late answer has nobody to go to. */
    send_call(c, RV_PROC_DOMAIN_SUSPEND, 14, (xdrproc_t)xdr_rv_domain_suspend_args, &sa);
    CHECK_INT_EQ(ntaken, 4);
    rvs_client_free(c);
    to_flush = NULL;
    rv_deferred_finish(taken[3], NULL);
    ntaken = 0;
}

/* ---- the in-flight limit, through a real socket and the loop ---- */

static int dispatch(rvs_client *c, const char *frame, size_t len, void *opaque)
{
    (void)opaque;
    return rvs_dispatch_frame(c, frame, len);
}

static void spin(struct ev_loop *loop)
{
    for (int i = 0; i < 50; i++) {
        ev_run(loop, EVRUN_NOWAIT);
        flush_all();
    }
}

/* Read whole replies from fd until n have come; their serials in order. */
static void read_replies(int fd, rv_buf *in, unsigned first, int n)
{
    for (int got = 0; got < n;) {
        if (rv_buf_used(in) >= 4 && rv_buf_used(in) >= rv_frame_peek_len(rv_buf_head(in))) {
            rv_header hdr;
            rv_error error;
            next_reply(in, &hdr, NULL, NULL, &error);
            CHECK_INT_EQ(hdr.status, RV_OK);
            CHECK_UINT_EQ(hdr.serial, first + (unsigned)got);
            got++;
            continue;
        }
        CHECK(rv_buf_reserve(in, 4096) == 0);
        ssize_t r = read(fd, in->data + in->len, 4096);
        CHECK(r > 0);
        in->len += (size_t)r;
    }
}

static void in_flight_limit(void)
{
    struct ev_loop *loop = ev_default_loop(0);
    static rvs_client_env env = { .max_client_requests = 2 };
    env.loop = loop;
    env.on_close = on_close;
    env.want_flush = want_flush;
    env.on_authenticated = on_authenticated;
    env.max_client_output = 1 << 20;
    env.keepalive_interval = -1;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    rv_err err = { 0 };
    rv_transport *tr = rv_socket_transport_new(sv[0], 1, &err);
    CHECK(tr != NULL);
    rvs_client_start how = { .from = "local", .local = 1 };
    rvs_client *c = rvs_client_new(&env, tr, &how, 2);
    CHECK(c != NULL);
    rvs_client_set_dispatcher(c, dispatch, NULL);
    rvs_client_attach_driver(c, &later_driver, (rv_driver_conn *)&env, strdup("later:///"));

    /* Five calls in one write. */
    rv_buf calls = { 0 };
    rv_domain_suspend_args sa = suspend_args();
    for (unsigned i = 0; i < 5; i++)
        encode_call(&calls, RV_PROC_DOMAIN_SUSPEND, 100 + i, (xdrproc_t)xdr_rv_domain_suspend_args,
                    &sa);
    CHECK(write(sv[1], rv_buf_head(&calls), rv_buf_used(&calls)) == (ssize_t)rv_buf_used(&calls));
    rv_buf_free(&calls);

    spin(loop);
    CHECK_INT_EQ(ntaken, 2);
    rv_buf in = { 0 };
    /* Each answer lets one more in, never more than two waiting. */
    for (int i = 0; i < 5; i++) {
        rv_deferred_finish(taken[i], NULL);
        flush_all();
        read_replies(sv[1], &in, 100 + (unsigned)i, 1);
        spin(loop);
        CHECK_INT_EQ(ntaken, i + 3 < 5 ? i + 3 : 5);
    }
    rv_buf_free(&in);
    rvs_client_close(c, "test over");
    rvs_client_free(c);
    close(sv[1]);
    ev_loop_destroy(loop);
}

int main(void)
{
    detached_client();
    in_flight_limit();
    return 0;
}
