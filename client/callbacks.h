/* The application's callbacks on a connection (lifecycle events and the
 * close callback): registering them, and delivering to them what the
 * server sends.  Delivery runs in the event loop's thread. */
#ifndef RV_CLIENT_CALLBACKS_H
#define RV_CLIENT_CALLBACKS_H

#include <stddef.h>

#include "client/remvirt.h"

/* For rvc_conn_attach_loop: a MESSAGE from the server (opaque is the
 * rv_conn), and the connection's end with its RV_CLOSE_REASON_*. */
void rvc_callbacks_on_message(void *opaque, const char *frame, size_t len);
void rvc_callbacks_on_closed(void *opaque, int reason);

/* Run the close callback with reason, unless it already ran (or none is
 * registered). */
void rvc_callbacks_report_closed(rv_conn *conn, int reason);

#endif
