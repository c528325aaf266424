/* An asynchronous QMP (QEMU Machine Protocol) client on the daemon's libev
 * loop.  It never blocks: the socket is non-blocking, output waits in a
 * buffer for the write watcher, input is cut into messages at newlines
 * (QEMU sends one JSON object per line) and one message may not exceed a
 * bound.  JSON is json-c's.
 *
 * Life of a monitor:
 *   rv_qmp_connect_unix() or rv_qmp_new_fd()
 *   -> greeting read, qmp_capabilities sent and answered -> on_ready
 *   -> rv_qmp_command() any number of times, replies matched by "id";
 *      events reach on_event in the order QEMU sent them
 *   -> end of file, an I/O error or a protocol error: every pending command
 *      completes with that error, then on_close runs, once.
 *
 * Commands may be issued at once after creation: they wait behind
 * qmp_capabilities and go out when the greeting has arrived.  No callback
 * ever runs from inside a call the owner makes (rv_qmp_command,
 * rv_qmp_connect_unix, ...), except that rv_qmp_free() completes the
 * pending commands.  rv_qmp_free() may be called from any callback: the
 * object goes away when the callback returns. */
#ifndef RV_SERVER_DRIVERS_QEMU_QMP_H
#define RV_SERVER_DRIVERS_QEMU_QMP_H

#include <stddef.h>
#include <json-c/json.h>

#include "common/error.h"

struct ev_loop;
typedef struct rv_qmp rv_qmp;

/* The default bound on one incoming message (one line). */
#define RV_QMP_DEFAULT_MAX_MESSAGE (16u * 1024 * 1024)
/* Seconds a command may wait for its reply by default. */
#define RV_QMP_DEFAULT_COMMAND_TIMEOUT 30.0

/* A command's completion.  On success err is NULL and ret is the value of
 * "return" (borrowed: json_object_get() it to keep it).  On failure ret is
 * NULL and err says why:
 *   RV_ERR_OPERATION_FAILED   QEMU answered with an error: err->str1 holds
 *                             QMP's error class, the message its "desc";
 *   RV_ERR_OPERATION_TIMEOUT  no reply in time (the monitor stays usable;
 *                             a late reply is dropped);
 *   anything else             the monitor closed or failed (the reason
 *                             on_close is given too). */
typedef void (*rv_qmp_reply_fn)(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque);

typedef struct rv_qmp_callbacks {
    /* Capabilities negotiated; greeting is the "QMP" member of QEMU's
     * greeting (version, capabilities), borrowed.  Optional. */
    void (*on_ready)(rv_qmp *qmp, json_object *greeting, void *opaque);
    /* An event: its name, its "data" (NULL when absent, borrowed) and its
     * timestamp in seconds since the epoch (0 when absent).  Optional. */
    void (*on_event)(rv_qmp *qmp, const char *name, json_object *data,
                     double timestamp, void *opaque);
    /* The monitor is gone; reason is never NULL.  A clean end of file is
     * RV_ERR_OPERATION_FAILED "QEMU monitor closed".  Called once, after
     * every pending command has completed.  Optional. */
    void (*on_close)(rv_qmp *qmp, const rv_err *reason, void *opaque);
} rv_qmp_callbacks;

typedef struct rv_qmp_options {
    size_t max_message;         /* 0: RV_QMP_DEFAULT_MAX_MESSAGE */
    double command_timeout;     /* seconds; 0: RV_QMP_DEFAULT_COMMAND_TIMEOUT */
    /* rv_qmp_connect_unix() retries a socket that is not there yet or
     * refuses (QEMU still starting) for this long; 0: try once. */
    double connect_timeout;
    /* Seconds to wait for the greeting and the capabilities' reply;
     * 0: command_timeout. */
    double handshake_timeout;
} rv_qmp_options;

/* Connect to the monitor socket at path.  Returns the object, or NULL with
 * err set when path cannot be a socket address or memory runs out; a
 * failure to connect comes later through on_close.  opts may be NULL. */
rv_qmp *rv_qmp_connect_unix(struct ev_loop *loop, const char *path, const rv_qmp_options *opts,
                            const rv_qmp_callbacks *cbs, void *opaque, rv_err *err);
/* Speak QMP on a connected stream socket; the object owns fd from now on
 * (closed on failure too). */
rv_qmp *rv_qmp_new_fd(struct ev_loop *loop, int fd, const rv_qmp_options *opts,
                      const rv_qmp_callbacks *cbs, void *opaque, rv_err *err);

/* Queue a command.  args: NULL or a JSON object, owned by the call from now
 * on (released on failure too).  Returns 0 and reply runs later, exactly
 * once; or -1 with err set (the monitor is closed, or no memory) and reply
 * never runs.  timeout: seconds, 0 for the monitor's default. */
int rv_qmp_command(rv_qmp *qmp, const char *name, json_object *args, double timeout,
                   rv_qmp_reply_fn reply, void *opaque, rv_err *err);

/* The same, passing a copy of descriptor fd with the command (SCM_RIGHTS
 * on its first byte), for QMP's getfd and add-fd; fd < 0: none.  One
 * descriptor may wait to be sent at a time (-1 otherwise). */
int rv_qmp_command_fd(rv_qmp *qmp, const char *name, json_object *args, int fd, double timeout,
                      rv_qmp_reply_fn reply, void *opaque, rv_err *err);

/* 1 once capabilities are negotiated and until the monitor closes. */
int rv_qmp_is_ready(const rv_qmp *qmp);
/* 1 once the monitor has closed (on_close has run or is running). */
int rv_qmp_is_closed(const rv_qmp *qmp);
/* Commands sent or queued whose reply has not come yet. */
size_t rv_qmp_pending(const rv_qmp *qmp);

/* Close and free.  Pending commands complete with an error first (their
 * opaque data is never lost); on_close is not called.  Safe inside any of
 * this object's callbacks, and with NULL. */
void rv_qmp_free(rv_qmp *qmp);

/* An integer member of a JSON object (an answer's), or def when absent. */
long long rv_qmp_json_int(json_object *obj, const char *key, long long def);

#endif
