/* The XDR filter of every string in the protocol (rv_nonnull_string, and
 * through it rv_string): rpcgen's xdr_string, except that a decoded
 * string with a NUL byte inside is refused rather than read up to it, so
 * that no procedure of either side ever sees "victim\0../x" as "victim".
 * The generated rv_packet_xdr.c calls it (see Makefile.am). */
#ifndef RV_PROTOCOL_XDR_STRING_H
#define RV_PROTOCOL_XDR_STRING_H

#include <rpc/rpc.h>

bool_t rv_xdr_string(XDR *xdrs, char **sp, u_int maxsize);

/* Whether a string was refused for a NUL byte on this thread since the
 * last call: for the decoder's error message.  Clears it. */
int rv_xdr_string_took_nul(void);

#endif
