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
} rvs_call;

/* The client's driver connection, or NULL with call->err set to
 * libvirt's error when CONNECT_OPEN has not run. */
rv_driver_conn *rvs_call_conn(rvs_call *call);

/* Handle one frame (len bytes at p, length word included, already
 * bounds-checked).  Appends any reply to rvs_client_output(c).  Returns
 * 0, or -1 when the frame is so broken that the connection must close
 * (the contract of an rvs_dispatcher, which the server wraps this in). */
int rvs_dispatch_frame(rvs_client *c, const char *p, size_t len);

/* Check the generated table against the argument scratch space once at
 * start-up; -1 if a procedure's arguments would not fit. */
int rvs_dispatch_init(rv_err *err);

#endif
