/* libremvirt's data streams (remvirt.h): the public face of the
 * connection's streams (client/conn.c). */
#include <stdlib.h>
#include <string.h>

#include "client/conn.h"
#include "client/handle.h"
#include "client/last_error.h"
#include "client/remvirt.h"
#include "rv_remote.h"

/* The public codes are the connection's. */
_Static_assert(RV_STREAM_AGAIN == RVC_STREAM_AGAIN, "RV_STREAM_AGAIN");
_Static_assert(RV_STREAM_AT_HOLE == RVC_STREAM_AT_HOLE, "RV_STREAM_AT_HOLE");

struct rv_stream {
    rv_conn *conn;
    unsigned int flags;
    struct rvc_stream *wire;    /* NULL until a call opened it */
};

rv_stream *rv_stream_new(rv_conn *conn, unsigned int flags)
{
    if (!rvc_handle_rpc(conn, __func__))
        return NULL;
    if (flags & ~(unsigned)RV_STREAM_NONBLOCK) {
        rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: unknown flags 0x%x", __func__, flags);
        return NULL;
    }
    rv_stream *st = calloc(1, sizeof(*st));
    if (!st) {
        rvc_report(RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    st->conn = conn;
    st->flags = flags;
    return st;
}

/* The open stream, or NULL with the last error set. */
static struct rvc_stream *opened(rv_stream *st, const char *func)
{
    if (!st) {
        rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: no stream given", func);
        return NULL;
    }
    if (!rvc_handle_rpc(st->conn, func))
        return NULL;
    if (!st->wire)
        rvc_report(RV_FROM_STREAMS, RV_ERR_OPERATION_INVALID,
                   "%s: the stream is not open (no upload, download or console on it)", func);
    return st->wire;
}

/* The call that opens st: it must not be open already. */
static int open_on(rv_stream *st, struct rvc_conn *rpc, int proc, xdrproc_t args_filter,
                   void *args, int sparse, const char *func)
{
    if (!st)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: no stream given", func);
    if (st->wire)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_OPERATION_INVALID,
                          "%s: the stream is open already", func);
    rv_err err = { 0 };
    if (rvc_conn_stream_call(rpc, proc, args_filter, args, sparse, &st->wire, &err) < 0)
        return rvc_fail(&err);
    return 0;
}

int rv_stream_send(rv_stream *st, const char *data, size_t n)
{
    struct rvc_stream *s = opened(st, __func__);
    if (!s)
        return -1;
    if (!data && n)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: no data given", __func__);
    rv_err err = { 0 };
    return rvc_stream_send(s, data, n, &err) < 0 ? rvc_fail(&err) : 0;
}

int rv_stream_send_hole(rv_stream *st, long long length, unsigned int flags)
{
    struct rvc_stream *s = opened(st, __func__);
    if (!s)
        return -1;
    if (flags)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: unknown flags 0x%x", __func__,
                          flags);
    rv_err err = { 0 };
    return rvc_stream_send_hole(s, length, &err) < 0 ? rvc_fail(&err) : 0;
}

int rv_stream_recv_flags(rv_stream *st, char *data, size_t n, unsigned int flags)
{
    struct rvc_stream *s = opened(st, __func__);
    if (!s)
        return -1;
    if (!data)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: no buffer given", __func__);
    if (flags & ~(unsigned)RV_STREAM_RECV_STOP_AT_HOLE)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: unknown flags 0x%x", __func__,
                          flags);
    if (n > 1 << 30)
        n = 1 << 30;            /* the count must fit the int returned */
    rv_err err = { 0 };
    ssize_t got = rvc_stream_recv(s, data, n, (st->flags & RV_STREAM_NONBLOCK) != 0,
                                  (flags & RV_STREAM_RECV_STOP_AT_HOLE) != 0, &err);
    if (got == -1)
        return rvc_fail(&err);
    return (int)got;            /* RVC_STREAM_AGAIN and _AT_HOLE are the public values */
}

int rv_stream_recv(rv_stream *st, char *data, size_t n)
{
    return rv_stream_recv_flags(st, data, n, 0);
}

int rv_stream_recv_hole(rv_stream *st, long long *length, unsigned int flags)
{
    struct rvc_stream *s = opened(st, __func__);
    if (!s)
        return -1;
    if (!length)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: no length given", __func__);
    if (flags)
        return rvc_report(RV_FROM_STREAMS, RV_ERR_INVALID_ARG, "%s: unknown flags 0x%x", __func__,
                          flags);
    rv_err err = { 0 };
    return rvc_stream_recv_hole(s, length, &err) < 0 ? rvc_fail(&err) : 0;
}

static int end(rv_stream *st, int abort, const char *func)
{
    struct rvc_stream *s = opened(st, func);
    if (!s)
        return -1;
    rv_err err = { 0 };
    return rvc_stream_end(s, abort, &err) < 0 ? rvc_fail(&err) : 0;
}

int rv_stream_finish(rv_stream *st)
{
    return end(st, 0, __func__);
}

int rv_stream_abort(rv_stream *st)
{
    return end(st, 1, __func__);
}

int rv_stream_fd(rv_stream *st)
{
    struct rvc_conn *rpc = st ? rvc_handle_rpc(st->conn, __func__) : NULL;
    if (!rpc)
        return -1;
    rv_transport *tr = rvc_conn_transport(rpc);
    return tr ? tr->fd : -1;
}

void rv_stream_free(rv_stream *st)
{
    if (!st)
        return;
    rvc_stream_free(st->wire);
    free(st);
}

int rv_storage_vol_upload(rv_vol *vol, rv_stream *st, unsigned long long offset,
                          unsigned long long length, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_vol_rpc(vol, __func__);
    if (!rpc)
        return -1;
    rv_storage_vol_upload_args args = { .vol = rvc_vol_to_wire(vol), .offset = offset,
                                        .length = length, .flags = flags };
    return open_on(st, rpc, RV_PROC_STORAGE_VOL_UPLOAD,
                   (xdrproc_t)xdr_rv_storage_vol_upload_args, &args,
                   (flags & RV_STORAGE_VOL_STREAM_SPARSE) != 0, __func__);
}

int rv_storage_vol_download(rv_vol *vol, rv_stream *st, unsigned long long offset,
                            unsigned long long length, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_vol_rpc(vol, __func__);
    if (!rpc)
        return -1;
    rv_storage_vol_download_args args = { .vol = rvc_vol_to_wire(vol), .offset = offset,
                                          .length = length, .flags = flags };
    return open_on(st, rpc, RV_PROC_STORAGE_VOL_DOWNLOAD,
                   (xdrproc_t)xdr_rv_storage_vol_download_args, &args,
                   (flags & RV_STORAGE_VOL_STREAM_SPARSE) != 0, __func__);
}

int rv_domain_open_console(rv_dom *dom, const char *dev_name, rv_stream *st,
                           unsigned int flags)
{
    struct rvc_conn *rpc = rvc_dom_rpc(dom, __func__);
    if (!rpc)
        return -1;
    char *name = (char *)dev_name;
    rv_domain_open_console_args args = { .dom = rvc_dom_to_wire(dom),
                                         .dev_name = dev_name ? &name : NULL, .flags = flags };
    return open_on(st, rpc, RV_PROC_DOMAIN_OPEN_CONSOLE,
                   (xdrproc_t)xdr_rv_domain_open_console_args, &args, 0, __func__);
}
