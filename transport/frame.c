#include "transport/frame.h"

#include <string.h>

#include "protocol/xdr_string.h"
#include "rv_keepalive.h"

static void put_u32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

void rv_frame_set_serial(char *p, uint32_t serial)
{
    put_u32(p + RV_LEN_WORD_SIZE + 16, serial);
}

uint32_t rv_frame_peek_len(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

int rv_frame_check_len(uint32_t len, uint32_t max, rv_err *err)
{
    if (len < RV_FRAME_MIN) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                   "packet length %u is shorter than the %d-byte minimum", len, RV_FRAME_MIN);
        return -1;
    }
    if (len > max) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                   "packet length %u exceeds the maximum of %u", len, max);
        return -1;
    }
    return 0;
}

static void put_header(char *p, const rv_header *hdr)
{
    put_u32(p, hdr->prog);
    put_u32(p + 4, hdr->vers);
    put_u32(p + 8, (uint32_t)hdr->proc);
    put_u32(p + 12, (uint32_t)hdr->type);
    put_u32(p + 16, hdr->serial);
    put_u32(p + 20, (uint32_t)hdr->status);
}

void rv_frame_keepalive(char frame[RV_KEEPALIVE_FRAME_LEN], int proc)
{
    const rv_header hdr = { RV_KEEPALIVE_PROGRAM, RV_KEEPALIVE_VERSION, proc, RV_MESSAGE, 0,
                            RV_OK };
    put_u32(frame, RV_KEEPALIVE_FRAME_LEN);
    put_header(frame + RV_LEN_WORD_SIZE, &hdr);
}

/* Encode into the room after out->len; the frame's length, or 0 if the
 * payload did not fit in `room` bytes or is not encodable. */
static size_t encode_in_place(rv_buf *out, size_t room, const rv_header *hdr, xdrproc_t fn,
                              void *payload)
{
    char *base = out->data + out->len;
    put_header(base + RV_LEN_WORD_SIZE, hdr);
    size_t len = RV_FRAME_MIN;
    if (fn) {
        XDR xdr;
        xdrmem_create(&xdr, base + RV_FRAME_MIN, (u_int)(room - RV_FRAME_MIN), XDR_ENCODE);
        int ok = fn(&xdr, payload, 0);
        len += xdr_getpos(&xdr);
        xdr_destroy(&xdr);
        if (!ok)
            return 0;
    }
    put_u32(base, (uint32_t)len);
    return len;
}

int rv_frame_encode(rv_buf *out, const rv_header *hdr, xdrproc_t fn, void *payload,
                    rv_err *err)
{
    /* Try in the room there is: almost every frame fits the first time. */
    if (rv_buf_reserve(out, 256) < 0)
        goto no_memory;
    size_t room = out->cap - out->len;
    if (room > RV_FRAME_MAX)
        room = RV_FRAME_MAX;
    size_t len = encode_in_place(out, room, hdr, fn, payload);
    if (len == 0) {
        /* Too big for the room, or not encodable at all (a value over its
         * bound): measure once to tell which, then encode once more. */
        unsigned long need = RV_FRAME_MIN + (fn ? xdr_sizeof(fn, payload) : 0);
        if (need <= room || need > RV_FRAME_MAX) {
            if (need > RV_FRAME_MAX)
                rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                           "the reply to procedure %d would be %lu bytes, over the %u-byte "
                           "packet limit", hdr->proc, need, (unsigned)RV_FRAME_MAX);
            else
                rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                           "cannot encode the payload of procedure %d: a value is out of bounds",
                           hdr->proc);
            return -1;
        }
        if (rv_buf_reserve(out, need) < 0)
            goto no_memory;
        len = encode_in_place(out, need, hdr, fn, payload);
        if (len == 0) {
            rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                       "cannot encode the payload of procedure %d", hdr->proc);
            return -1;
        }
    }
    out->len += len;
    return 0;

no_memory:
    rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory encoding a packet");
    return -1;
}

int rv_frame_decode_header(const char *p, size_t len, rv_header *hdr, rv_err *err)
{
    if (len < RV_FRAME_MIN) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "packet of %zu bytes has no whole header", len);
        return -1;
    }
    p += RV_LEN_WORD_SIZE;
    hdr->prog = rv_frame_peek_len(p);
    hdr->vers = rv_frame_peek_len(p + 4);
    hdr->proc = (int)rv_frame_peek_len(p + 8);
    hdr->type = (rv_msg_type)rv_frame_peek_len(p + 12);
    hdr->serial = rv_frame_peek_len(p + 16);
    hdr->status = (rv_msg_status)rv_frame_peek_len(p + 20);
    return 0;
}

int rv_frame_decode_payload(const char *p, size_t len, xdrproc_t fn, void *obj, rv_err *err)
{
    if (len < RV_FRAME_MIN) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "packet of %zu bytes has no whole header", len);
        return -1;
    }
    XDR xdr;
    xdrmem_create(&xdr, (char *)p + RV_FRAME_MIN, (u_int)(len - RV_FRAME_MIN), XDR_DECODE);
    rv_xdr_string_took_nul();
    int ok = fn(&xdr, obj, 0);
    size_t used = xdr_getpos(&xdr);
    xdr_destroy(&xdr);
    if (!ok || used != len - RV_FRAME_MIN) {
        xdr_free(fn, obj);
        if (!ok && rv_xdr_string_took_nul())
            rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                       "cannot decode the payload (%zu bytes): a string holds a NUL byte",
                       len - RV_FRAME_MIN);
        else if (!ok)
            rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "cannot decode the payload (%zu bytes)",
                       len - RV_FRAME_MIN);
        else
            rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                       "payload has %zu trailing bytes", len - RV_FRAME_MIN - used);
        return -1;
    }
    return 0;
}
