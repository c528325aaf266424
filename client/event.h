/* The application's event loop as libremvirt sees it: the public
 * rv_event_* functions forward to the registered implementation (the
 * application's own, or the built-in poll() loop in event.c). */
#ifndef RV_CLIENT_EVENT_H
#define RV_CLIENT_EVENT_H

#include "client/remvirt.h"
#include "common/error.h"

/* 1 once an implementation is registered (connections opened from then
 * on get events and keepalive), else 0. */
int rvc_event_impl_registered(void);

#endif
