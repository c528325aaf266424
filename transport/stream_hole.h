/* The STREAM_HOLE packet (type 6) of a sparse stream, both ways: its
 * payload is rv_stream_hole {hyper length; unsigned int flags}, 12 bytes,
 * meaning `length` bytes of zeros.  libvirtd sends it with status
 * CONTINUE and flags 0 (observed; docs/wire-protocol.md section 13). */
#ifndef RV_TRANSPORT_STREAM_HOLE_H
#define RV_TRANSPORT_STREAM_HOLE_H

#include <stddef.h>

#include "common/error.h"
#include "common/util.h"
#include "rv_packet.h"

#define RV_STREAM_HOLE_PAYLOAD 12

/* The length of the hole in a STREAM_HOLE packet's payload (len bytes
 * after the header), or -1 with err set (RV_ERR_RPC) when the payload is
 * not exactly one rv_stream_hole, its length is negative or its flags are
 * not 0.  A length of 0 is a hole of nothing, allowed. */
long long rv_stream_hole_decode(const char *payload, size_t len, rv_err *err);

/* Append a STREAM_HOLE frame of `length` bytes (> 0) for the stream of
 * hdr (its prog, vers, proc and serial; type and status are set here). */
int rv_stream_hole_encode(rv_buf *out, const rv_header *hdr, long long length, rv_err *err);

#endif
