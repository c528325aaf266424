/* A stream endpoint on a file descriptor (a pty, a pipe, a regular file):
 * non-blocking reads and writes, a watcher for when the fd is ready
 * again.  Regular files are always "ready": the stream reads them in
 * bounded rounds of its own. */
#ifndef RV_SERVER_STREAM_FD_H
#define RV_SERVER_STREAM_FD_H

#include <stdbool.h>

#include "server/drivers/stream_io.h"

struct ev_loop;

/* An endpoint on fd (taken: closed with it, or at once on failure),
 * made non-blocking; reads give data for the client when readable,
 * writes take the client's data when writable.  A pty whose other side
 * went away (EIO) reads as the end of the data.  NULL with err set when
 * out of memory. */
rv_stream_io *rv_stream_fd_new(struct ev_loop *loop, int fd, int readable, int writable,
                               rv_err *err);

/* At most length bytes pass (0: no limit): reads end there, a write
 * past it fails as libvirtd's does (no space left on device).  For a
 * file volume opened and positioned at the transfer's offset. */
void rv_stream_fd_set_length(rv_stream_io *io, unsigned long long length);

/* Make a file's endpoint sparse (a VOL_DOWNLOAD or VOL_UPLOAD with the
 * sparse flag): a download sends the file's holes (SEEK_DATA/SEEK_HOLE)
 * as holes; an upload's holes move past their length and truncate the
 * file there, as libvirtd's do (what follows comes in later packets).
 * An upload's hole may not end past hole_end_max (the volume's size), so
 * that a hostile length gets an error, not a file of exabytes. */
void rv_stream_fd_set_sparse(rv_stream_io *io, unsigned long long hole_end_max);

/* Where an upload stands, for checking its data and holes on the loop
 * while a thread writes them (stream_offload.c): the position of the
 * next byte, what may still come (with limited), and where holes must
 * end (a sparse upload's volume size). */
typedef struct rv_upload_bounds {
    unsigned long long pos, left, hole_end_max;
    int limited;
} rv_upload_bounds;

/* An upload endpoint's bounds now, before another thread writes to it;
 * -1 with err set if its position cannot be read. */
int rv_stream_fd_upload_bounds(rv_stream_io *io, rv_upload_bounds *b, rv_err *err);

/* Check that len more bytes (with hole: a hole of len) fit in b and count
 * them; -1 with the error the endpoint's own write or hole would give. */
int rv_upload_bounds_take(rv_upload_bounds *b, bool hole, unsigned long long len, rv_err *err);

/* Call fn(opaque) when io is freed (its owner forgets it). */
void rv_stream_fd_on_free(rv_stream_io *io, void (*fn)(void *opaque), void *opaque);

/* Hang it up from outside (a console taken over by another client): its
 * data ends, writes fail, and the stream is woken to see it. */
void rv_stream_fd_hangup(rv_stream_io *io);

#endif
