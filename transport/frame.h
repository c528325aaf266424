/* Message framing: u32 length word (counts itself), 24-byte header,
 * XDR payload.  Lengths are checked before anything is allocated. */
#ifndef RV_TRANSPORT_FRAME_H
#define RV_TRANSPORT_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <rpc/rpc.h>

#include "common/error.h"
#include "common/util.h"
#include "rv_packet.h"

#define RV_FRAME_MIN (RV_LEN_WORD_SIZE + RV_HEADER_SIZE)        /* 28 */
#define RV_FRAME_MAX (RV_PACKET_MAX + RV_LEN_WORD_SIZE)

/* The length word at p (4 bytes, big-endian). */
uint32_t rv_frame_peek_len(const char *p);
/* 0 if a frame of `len` bytes (length word included) is acceptable with
 * `max` as the largest allowed; else -1 and err says why. */
int rv_frame_check_len(uint32_t len, uint32_t max, rv_err *err);

/* Append one whole frame to out: header, then payload encoded by fn
 * (fn NULL: no payload).  Fails with RV_ERR_RPC if the payload does not
 * encode or the frame would exceed RV_FRAME_MAX. */
int rv_frame_encode(rv_buf *out, const rv_header *hdr, xdrproc_t fn, void *payload,
                    rv_err *err);

/* A keepalive PING or PONG (proc RV_KEEPALIVE_PROC_*), the one encoding
 * both sides send: the bare header (type MESSAGE, serial 0, status OK)
 * and no payload.  Fixed-size, so a caller needs no buffer or error path. */
#define RV_KEEPALIVE_FRAME_LEN RV_FRAME_MIN
void rv_frame_keepalive(char frame[RV_KEEPALIVE_FRAME_LEN], int proc);

/* Overwrite the serial of the frame starting at p (length word first). */
void rv_frame_set_serial(char *p, uint32_t serial);

/* Decode the header of a whole frame (len bytes from p, length word
 * included). */
int rv_frame_decode_header(const char *p, size_t len, rv_header *hdr, rv_err *err);
/* Decode the payload of a whole frame into obj (zeroed by the caller);
 * every payload byte must be consumed.  On failure obj is freed. */
int rv_frame_decode_payload(const char *p, size_t len, xdrproc_t fn, void *obj, rv_err *err);

#endif
