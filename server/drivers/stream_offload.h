/* A file's stream endpoint served by a thread of its own, so that the
 * loop never waits on the disk nor copies a volume's data into the page
 * cache itself (issue 31: a volume upload's writes were the loop's
 * longest passes, and on a slow disk each one could wait).
 *
 * The loop only moves bytes between the stream and a bounded queue; the
 * thread runs the inner endpoint's blocking operations (a regular file's
 * endpoint from stream_fd.c, whose reads and writes never say "again").
 * An upload's data and holes are written in order; a failed write is
 * reported by the next write or by the finish, which waits until all of
 * it is on the file.  A download is read ahead up to the bound.
 *
 * The daemon's only other threads are none: the thread touches nothing
 * but its endpoint and the queue, and wakes the loop with an ev_async. */
#ifndef RV_SERVER_STREAM_OFFLOAD_H
#define RV_SERVER_STREAM_OFFLOAD_H

#include "server/drivers/stream_io.h"

struct ev_loop;

/* At most this many endpoints have a thread at once; past it an open
 * fails with a clear error (each holds up to two queue bounds of data). */
#define RV_STREAM_OFFLOAD_MAX 64

/* inner (taken: freed by the thread, or at once on failure) served by a
 * thread.  inner must be a regular file's endpoint from stream_fd.c (an
 * upload's length and hole bounds are checked on the loop, so that what
 * passes them is refused at once, as the endpoint refuses it): its
 * operations may
 * block but never return RV_STREAM_AGAIN, and its free must be safe off
 * the loop (no on_free callback).  NULL with err set when out of memory,
 * out of threads, or at RV_STREAM_OFFLOAD_MAX. */
rv_stream_io *rv_stream_offload(struct ev_loop *loop, rv_stream_io *inner, rv_err *err);

#endif
