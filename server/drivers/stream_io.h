/* What a driver gives a data stream (volume upload and download, a
 * console): one endpoint object with a few operations, which remvirtd's
 * stream (server/stream.c) drives from the loop.  None of them may block:
 * an endpoint that cannot go on now says so (RV_STREAM_AGAIN, a short
 * write) and calls rv_stream_io_wake() when it can.  An in-memory volume
 * never has to wait; a file or a pty is an fd with a watcher
 * (stream_fd.c). */
#ifndef RV_SERVER_STREAM_IO_H
#define RV_SERVER_STREAM_IO_H

#include <sys/types.h>

#include "common/error.h"

/* read(): nothing to give now; a wake will follow. */
#define RV_STREAM_AGAIN (-2)

typedef struct rv_stream_io rv_stream_io;

typedef struct rv_stream_io_ops {
    /* Data from the client: take up to len bytes, return how many (fewer,
     * even 0, when full for now: wake later), or -1 with err set.  NULL:
     * the stream only sends. */
    ssize_t (*write)(rv_stream_io *io, const char *data, size_t len, rv_err *err);
    /* Data for the client: up to len bytes into buf; the count, 0 at the
     * end of the data, RV_STREAM_AGAIN, or -1 with err set.  NULL: the
     * stream only receives. */
    ssize_t (*read)(rv_stream_io *io, char *buf, size_t len, rv_err *err);
    /* A hole of len bytes from a sparse upload: 0, 1 when taken but the
     * endpoint is full for now (reading from the client is held until its
     * wake), or -1 with err set.  NULL: holes are refused. */
    int (*hole)(rv_stream_io *io, long long len, rv_err *err);
    /* Before each read of a sparse download: the length of the hole at
     * the read position, now skipped, or 0 when data is there (the next
     * read then stops where that data ends), or -1 with err set.  NULL:
     * the endpoint knows no holes; its zeros go as data. */
    long long (*skip_hole)(rv_stream_io *io, rv_err *err);
    /* The client finished: everything it sent is in.  0, or -1 with err,
     * or RV_STREAM_AGAIN when what it took is not all written yet: a wake
     * follows, and finish is called again. */
    int (*finish)(rv_stream_io *io, rv_err *err);
    /* Free it, finished or not (abort, error, the client went away). */
    void (*free)(rv_stream_io *io);
} rv_stream_io_ops;

struct rv_stream_io {
    const rv_stream_io_ops *ops;
    int sparse;                 /* holes may travel as STREAM_HOLE packets */
    /* Set by remvirtd: the stream this endpoint serves. */
    void *stream;
};

/* Only from inside the slot of a call that opens a stream (upload,
 * download, console), at most once: the stream, once the call's reply is
 * out, runs on io.  io is taken, whatever happens: freed if the call then
 * fails.  -1 with err set if there is no such call. */
int rv_driver_stream_open(rv_stream_io *io, rv_err *err);

/* The endpoint can go on (data to read, room to write) after it said it
 * could not; from the loop, never from inside its own operations. */
void rv_stream_io_wake(rv_stream_io *io);

#endif
