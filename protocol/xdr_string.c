/* A string's XDR filter that refuses embedded NUL bytes (xdr_string.h). */
#include <stdlib.h>
#include <string.h>

#include "protocol/xdr_string.h"

static __thread int took_nul;

int rv_xdr_string_took_nul(void)
{
    int was = took_nul;
    took_nul = 0;
    return was;
}

bool_t rv_xdr_string(XDR *xdrs, char **sp, u_int maxsize)
{
    if (xdrs->x_op != XDR_DECODE)
        return xdr_string(xdrs, sp, maxsize);
    /* As xdr_string decodes: the length, the bytes (padded), a NUL added. */
    u_int size;
    if (!xdr_u_int(xdrs, &size) || size > maxsize)
        return FALSE;
    char *s = *sp;
    bool_t mine = s == NULL;
    if (mine && !(s = malloc((size_t)size + 1)))
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
