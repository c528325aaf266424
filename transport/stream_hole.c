#include "transport/stream_hole.h"

#include "rv_remote.h"
#include "transport/frame.h"

long long rv_stream_hole_decode(const char *payload, size_t len, rv_err *err)
{
    rv_stream_hole h = { 0 };
    XDR xdr;
    xdrmem_create(&xdr, (char *)payload, (u_int)len, XDR_DECODE);
    int ok = len == RV_STREAM_HOLE_PAYLOAD && xdr_rv_stream_hole(&xdr, &h) &&
             xdr_getpos(&xdr) == len;
    xdr_destroy(&xdr);
    if (!ok || h.length < 0 || h.flags != 0) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_RPC,
                   "malformed stream hole (its payload must be a length of 0 or more and "
                   "flags 0, 12 bytes)");
        return -1;
    }
    return h.length;
}

int rv_stream_hole_encode(rv_buf *out, const rv_header *hdr, long long length, rv_err *err)
{
    rv_header h = *hdr;
    h.type = RV_STREAM_HOLE;
    h.status = RV_CONTINUE;
    rv_stream_hole payload = { .length = length, .flags = 0 };
    return rv_frame_encode(out, &h, (xdrproc_t)xdr_rv_stream_hole, &payload, err);
}
