/* From a whole frame to the queued reply: header checks, the program and
 * procedure tables, access checks, argument decoding, the handler. */
#ifndef RV_SERVER_DISPATCH_H
#define RV_SERVER_DISPATCH_H

#include <stddef.h>

#include "common/error.h"
#include "server/client.h"

/* What a handler sees of the call it serves. */
typedef struct rvs_call {
    rvs_client *client;
    rv_err err;                 /* set by a failing handler */
    int proc;                   /* the call's procedure and serial */
    unsigned serial;
    struct rvs_stream *stream;  /* a stream the call opened (server/stream.c) */
} rvs_call;

/* Queue an error packet answering hdr: a REPLY, or for a STREAM packet a
 * STREAM with status ERROR (the stream's failure). */
void rvs_queue_error(rvs_client *c, const rv_header *hdr, const rv_err *err);

/* The client's driver connection, or NULL with call->err set to
 * libvirt's error when CONNECT_OPEN has not run. */
rv_driver_conn *rvs_call_conn(rvs_call *call);

/* The client a deferred call (rv_driver_defer) answers, or NULL when it
 * has gone. */
rvs_client *rvs_deferred_client(struct rv_deferred *d);

/* Serve the running call (from inside its handler, at most once) as the
 * remote program's procedure `as`, whose result is encoded exactly as the
 * call's own: as's handler runs on args (as's argument struct, XDR-owned:
 * taken, whatever happens) and answers the call itself, now or later
 * (a deferred reply keeps as's arguments).  The handler then returns what
 * this returns, 0, and the dispatcher sends nothing more.  For an older
 * procedure whose arguments translate into a newer one's
 * (server/migrate_v3.c). */
int rvs_call_as(rvs_call *call, int as, void *args);
/* Handle one frame (len bytes at p, length word included, already
 * bounds-checked).  Appends any reply to rvs_client_output(c).  Returns
 * 0, or -1 when the frame is so broken that the connection must close
 * (the contract of an rvs_dispatcher, which the server wraps this in). */
int rvs_dispatch_frame(rvs_client *c, const char *p, size_t len);

/* Check the generated table against the argument scratch space once at
 * start-up; -1 if a procedure's arguments would not fit. */
int rvs_dispatch_init(rv_err *err);

/* A program the dispatcher serves: its number and version and its
 * generated procedure table.  The remote program is rvs_dispatch_frame's;
 * a socket that serves another one (the admin socket) passes its own. */
struct rvs_proc;
typedef struct rvs_program {
    unsigned number;
    unsigned version;
    const struct rvs_proc *procs;       /* indexed by procedure number */
    const int *nprocs;
    /* A procedure of libvirt's it lacks is refused as its driver's
     * NO_SUPPORT after the open-connection check (the remote program),
     * or at once (a program the daemon serves itself). */
    int driver_first;
} rvs_program;

/* rvs_dispatch_frame for program prog; any other program (keepalive
 * apart) is refused with an RPC error, the connection kept. */
int rvs_dispatch_frame_program(rvs_client *c, const char *p, size_t len,
                               const rvs_program *prog);
/* rvs_dispatch_init for another program's table. */
int rvs_dispatch_check_program(const rvs_program *prog, rv_err *err);

#endif
