/* The application's event loop as libremvirt sees it: the public
 * rv_event_* functions forward to the registered implementation (the
 * application's own, or the built-in poll() loop in event.c). */
#ifndef RV_CLIENT_EVENT_H
#define RV_CLIENT_EVENT_H

#include "client/remvirt.h"

/* 1 once an implementation is registered (connections opened from then
 * on get events and keepalive), else 0. */
int rvc_event_impl_registered(void);

/* The registered loop's functions for libremvirt's own use: as
 * rv_event_*, except that they leave the calling thread's last error
 * alone (a call that succeeds must not change it, and one that fails
 * reports its own error); a failure is logged.  -1 also when no loop is
 * registered. */
int rvc_event_add_handle(int fd, int events, rv_event_handle_callback cb, void *opaque,
                         rv_free_callback free_cb);
void rvc_event_update_handle(int watch, int events);
int rvc_event_remove_handle(int watch);
int rvc_event_add_timeout(int interval_ms, rv_event_timeout_callback cb, void *opaque,
                          rv_free_callback free_cb);
void rvc_event_update_timeout(int timer, int interval_ms);
int rvc_event_remove_timeout(int timer);

#endif
