/* Data streams on a client connection (libvirt's STREAM packets): a call
 * that opens one (volume upload and download, a console) gets a stream
 * object bound to the client and to the call's procedure and serial.
 * Data from the client goes to the driver's endpoint without blocking;
 * data to the client is read from the endpoint only while the client's
 * unread output is under the stream window (stream_window_bytes), so a
 * slow reader never makes the daemon hold more.  A sparse stream's holes
 * travel as STREAM_HOLE packets both ways: an upload's go to the
 * endpoint's hole(), a download's come from its skip_hole().  See
 * docs/wire-protocol.md, "Streams". */
#ifndef RV_SERVER_STREAM_H
#define RV_SERVER_STREAM_H

#include <stddef.h>

#include "rv_packet.h"
#include "server/client.h"

struct rvs_call;
typedef struct rvs_stream rvs_stream;

/* At most this many streams open on one connection. */
#define RVS_STREAMS_PER_CLIENT 16
/* The data in one STREAM packet remvirtd sends (libvirt's size), and the
 * most it takes in one from a client. */
#define RVS_STREAM_CHUNK 262120
#define RVS_STREAM_PACKET_MAX (1024 * 1024)

/* Around the driver slot of a call that opens a stream: _begin before
 * it, _end after it with its result.  _end binds the endpoint the slot
 * opened (rv_driver_stream_open, which refuses past
 * RVS_STREAMS_PER_CLIENT) to the call, in call->stream, and returns rc,
 * or -1 with call->err set when the stream cannot be had. */
void rvs_stream_call_begin(struct rvs_call *call);
int rvs_stream_call_end(struct rvs_call *call, int rc);

/* The call's reply is queued: data may flow now. */
void rvs_stream_start(rvs_stream *s);
/* A deferred call that opened s failed after all: s goes (its endpoint
 * freed) before the client ever saw it. */
void rvs_stream_discard(rvs_stream *s);

/* A STREAM or STREAM_HOLE packet from the client (hdr decoded, payload
 * after the header).  Packets for a stream that is not there are dropped,
 * as libvirtd drops them (they can cross an abort). */
void rvs_stream_packet(rvs_client *c, const rv_header *hdr, const char *payload, size_t len);

/* The client's output went down: downloads may read on. */
void rvs_streams_output_room(rvs_client *c);

/* The client is going: free its streams (the endpoints see an abort). */
void rvs_streams_free_all(rvs_client *c);

#endif
