/* A string's XDR filter that refuses embedded NUL bytes (xdr_string.h). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/xdr_string.h"

#include "common/buf_store.h"

/* The longest string encoded straight into the stream's buffer. */
#define RV_XDR_INLINE_MAX 4096

static __thread int took_nul;

int rv_xdr_string_took_nul(void)
{
    int was = took_nul;
    took_nul = 0;
    return was;
}

bool_t rv_xdr_string(XDR *xdrs, char **sp, u_int maxsize)
{
    if (xdrs->x_op == XDR_FREE) {
        /* A large one (a document) into the loop's store, for the next. */
        rv_buf_store_free(*sp);
        *sp = NULL;
        return TRUE;
    }
    if (xdrs->x_op == XDR_ENCODE) {
        /* The length and the padded bytes straight into the stream's
         * buffer when it has room: libtirpc's xdr_string takes three
         * indirect calls and measures the string twice, the most of a
         * reply of many short strings (domain statistics). */
        const char *s = *sp;
        size_t size = s ? strlen(s) : 0;
        size_t pad = (4 - (size & 3)) & 3;
        /* Only short strings: xdr_sizeof's XDR_INLINE allocates what is
         * asked for, and a fresh 400 KB buffer faults in every page as
         * the copy touches it (most of a large reply's cost on the loop).
         * That bound also keeps 4 + size + pad from wrapping in u_int for
         * an unbounded string<> (maxsize ~0). */
        int32_t *buf = s && size <= maxsize && size <= RV_XDR_INLINE_MAX
                           ? XDR_INLINE(xdrs, (u_int)(4 + size + pad))
                           : NULL;
        if (!buf)
            return xdr_string(xdrs, sp, maxsize);
        *buf = (int32_t)htonl((uint32_t)size);
        char *p = (char *)(buf + 1);
        memcpy(p, s, size);
        memset(p + size, 0, pad);
        return TRUE;
    }
    /* As xdr_string decodes: the length, the bytes (padded), a NUL added. */
    u_int size;
    if (!xdr_u_int(xdrs, &size) || size > maxsize)
        return FALSE;
    char *s = *sp;
    bool_t mine = s == NULL;
    if (mine && !(s = rv_buf_store_alloc((size_t)size + 1)))
        return FALSE;
    bool_t ok = xdr_opaque(xdrs, s, size);
    if (ok && memchr(s, '\0', size)) {
        took_nul = 1;
        ok = FALSE;
    }
    if (!ok) {
        if (mine)
            free(s);
        return FALSE;
    }
    s[size] = '\0';
    *sp = s;
    return TRUE;
}
