/* The calling thread's last error, the one rv_last_error() shows.  Only
 * public entry points touch it: each clears it on the way in
 * (rvc_enter) and sets it on the way out of a failure.  Everything
 * below them reports through an rv_err, so an internal call can never
 * leave an error behind a call that succeeded. */
#ifndef RV_CLIENT_LAST_ERROR_H
#define RV_CLIENT_LAST_ERROR_H

#include "common/error.h"

/* Once per process, before the first connection or error: the log
 * settings from $REMVIRT_LOG_FILTERS and $REMVIRT_LOG_OUTPUTS. */
void rvc_init_once(void);

/* Every public entry point starts here: a call that succeeds leaves no
 * error. */
void rvc_enter(void);

/* Make err (consumed) the calling thread's last error. */
void rvc_set_last_error(rv_err *err);

/* The same, returning what a failing entry point returns. */
int rvc_fail(rv_err *err);
void *rvc_fail_null(rv_err *err);

/* Set the last error from a format; -1. */
int rvc_report(int domain, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Set "out of memory" as the last error; NULL. */
void *rvc_no_memory_null(void);

#endif
