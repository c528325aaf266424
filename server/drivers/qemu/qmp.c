/* The asynchronous QMP client (see qmp.h for the contract).
 *
 * One object per monitor socket.  Every entry from the loop (a watcher or
 * a timer) counts itself in `busy`; rv_qmp_free() inside a callback only
 * marks the object, and the outermost entry frees it on the way out, so no
 * frame ever touches freed memory.  After each callback the loops below
 * check whether the object was closed or freed meanwhile and stop. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qmp.h"
#include "transport/socket.h"

RV_LOG_CATEGORY("drivers.qemu.qmp");

/* Bytes asked of the kernel per read. */
#define READ_CHUNK 65536
/* Pause between connection attempts while QEMU creates its socket. */
#define CONNECT_RETRY_INTERVAL 0.05
/* json-c's nesting bound: QMP replies are shallow, hostile input is not. */
#define JSON_MAX_DEPTH 64
/* How much of a bad message an error quotes. */
#define QUOTE_MAX 80

typedef enum {
    QMP_CONNECTING,     /* rv_qmp_connect_unix(): socket not connected yet */
    QMP_GREETING,       /* connected, waiting for {"QMP": ...} */
    QMP_NEGOTIATING,    /* greeting seen, qmp_capabilities on its way */
    QMP_READY,
    QMP_CLOSED,
} qmp_state;

typedef struct qmp_pending {
    struct qmp_pending *prev, *next;
    rv_qmp *qmp;
    int64_t id;
    char *name;
    rv_qmp_reply_fn reply;
    void *opaque;
    double timeout;
    ev_timer timer;
} qmp_pending;

struct rv_qmp {
    struct ev_loop *loop;
    int fd;
    qmp_state state;
    char *path;                 /* rv_qmp_connect_unix() only */
    size_t max_message;
    double command_timeout;
    double connect_timeout;
    double handshake_timeout;
    ev_tstamp connect_deadline;
    rv_qmp_callbacks cbs;
    void *opaque;

    ev_io reader;
    ev_io writer;               /* also waits for a connect() in progress */
    ev_timer connect_retry;     /* first attempt (deferred) and retries */
    rv_buf in, out;
    size_t scanned;             /* bytes of `in` known to hold no newline */
    json_tokener *tokener;
    json_object *greeting;      /* the "QMP" member, kept for on_ready */

    qmp_pending *head, *tail;   /* in the order sent */
    size_t npending;
    qmp_pending *capabilities;  /* until its reply */
    int64_t next_id;

    /* A descriptor to pass with SCM_RIGHTS on the first byte of a queued
     * command (rv_qmp_command_fd): at most one waits at a time. */
    int out_fd;                 /* -1: none */
    size_t out_fd_at;           /* its command's offset from out's head */

    char *close_message;        /* why it closed, for later commands */
    int busy;
    bool free_requested;
};

static void qmp_destroy(rv_qmp *q);

static void qmp_enter(rv_qmp *q)
{
    q->busy++;
}

static void qmp_leave(rv_qmp *q)
{
    if (--q->busy == 0 && q->free_requested)
        qmp_destroy(q);
}

/* Stop looking at the monitor: after a close or a free nothing may run. */
static bool qmp_gone(const rv_qmp *q)
{
    return q->state == QMP_CLOSED || q->free_requested;
}

/* Peer text made safe to quote in an error or a log line. */
static char *quote_peer(const char *text, size_t len)
{
    return rv_escape_text_dup(text, len > QUOTE_MAX ? QUOTE_MAX : len, 0);
}

/* ---------------------------------------------------------------- pending commands */

static void pending_unlink(rv_qmp *q, qmp_pending *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        q->head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        q->tail = p->prev;
    p->prev = p->next = NULL;
    q->npending--;
    ev_timer_stop(q->loop, &p->timer);
    if (q->capabilities == p)
        q->capabilities = NULL;
}

/* Unlink p, run its reply once, free it. */
static void pending_complete(rv_qmp *q, qmp_pending *p, json_object *ret, const rv_err *err)
{
    pending_unlink(q, p);
    p->reply(q, ret, err, p->opaque);
    free(p->name);
    free(p);
}

static qmp_pending *pending_find(rv_qmp *q, int64_t id)
{
    for (qmp_pending *p = q->head; p; p = p->next)
        if (p->id == id)
            return p;
    return NULL;
}

/* Complete every pending command with err, oldest first.  Replies may add
 * nothing (the monitor is closed by now), so the list only shrinks. */
static void pending_fail_all(rv_qmp *q, const rv_err *err)
{
    while (q->head)
        pending_complete(q, q->head, NULL, err);
}

static void on_command_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qmp_pending *p = w->data;
    rv_qmp *q = p->qmp;
    qmp_enter(q);
    RV_WARN("QEMU command '%s' (id %lld) got no reply within %g s", p->name,
            (long long)p->id, p->timeout);
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_TIMEOUT,
               "QEMU command '%s' got no reply from the monitor within %g s", p->name, p->timeout);
    pending_complete(q, p, NULL, &err);
    rv_err_clear(&err);
    qmp_leave(q);
}

/* ---------------------------------------------------------------- closing */

/* No more watching or talking: the watchers stopped, the socket closed. */
static void stop_io(rv_qmp *q)
{
    ev_io_stop(q->loop, &q->reader);
    ev_io_stop(q->loop, &q->writer);
    ev_timer_stop(q->loop, &q->connect_retry);
    if (q->fd >= 0) {
        close(q->fd);
        q->fd = -1;
    }
}

/* The monitor is finished: stop every watcher, fail what is pending, tell
 * the owner once.  reason stays the caller's. */
static void qmp_fail(rv_qmp *q, const rv_err *reason)
{
    if (q->state == QMP_CLOSED)
        return;
    q->state = QMP_CLOSED;
    stop_io(q);
    const char *why = reason->message ? reason->message : "QEMU monitor failed";
    free(q->close_message);
    q->close_message = strdup(why);
    if (q->free_requested)
        RV_DEBUG("QEMU monitor closed: %s", why);
    else
        RV_INFO("QEMU monitor closed: %s", why);
    pending_fail_all(q, reason);
    if (!q->free_requested && q->cbs.on_close)
        q->cbs.on_close(q, reason, q->opaque);
}

#define qmp_failf(q, code, ...) RV_ERR_CALL(qmp_fail, q, RV_FROM_QEMU, code, __VA_ARGS__)

static void qmp_fail_errno(rv_qmp *q, int errnum, const char *what)
{
    rv_err err = { 0 };
    rv_err_set_errno(&err, RV_FROM_QEMU, errnum, "%s", what);
    qmp_fail(q, &err);
    rv_err_clear(&err);
}

/* ---------------------------------------------------------------- output */

static void start_writing(rv_qmp *q)
{
    /* Nothing may precede qmp_capabilities, and it goes out only after the
     * greeting: QEMU refuses input it reads before sending that. */
    if ((q->state == QMP_NEGOTIATING || q->state == QMP_READY) && rv_buf_used(&q->out) > 0)
        ev_io_start(q->loop, &q->writer);
}

/* Send out's first len bytes with out_fd attached as SCM_RIGHTS. */
static ssize_t send_with_fd(rv_qmp *q, size_t len)
{
    ssize_t n = rv_socket_send_fd(q->fd, rv_buf_head(&q->out), len, q->out_fd,
                                  MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
        close(q->out_fd);
        q->out_fd = -1;
    }
    return n;
}

static void flush_output(rv_qmp *q)
{
    while (rv_buf_used(&q->out) > 0) {
        size_t len = rv_buf_used(&q->out);
        ssize_t n;
        if (q->out_fd >= 0 && q->out_fd_at == 0)
            n = send_with_fd(q, len);
        else
            n = send(q->fd, rv_buf_head(&q->out),
                     q->out_fd >= 0 && q->out_fd_at < len ? q->out_fd_at : len,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            qmp_fail_errno(q, errno, "cannot write to the QEMU monitor");
            return;
        }
        rv_buf_consume(&q->out, (size_t)n);
        if (q->out_fd >= 0)
            q->out_fd_at -= (size_t)n;
    }
    ev_io_stop(q->loop, &q->writer);
    rv_buf_shrink(&q->out, 4096);
}

static void finish_connect(rv_qmp *q);

static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    rv_qmp *q = w->data;
    qmp_enter(q);
    if (q->state == QMP_CONNECTING)
        finish_connect(q);
    else
        flush_output(q);
    qmp_leave(q);
}

/* Serialise {"execute": name, "arguments": args, "id": id} onto out. */
static int queue_command(rv_qmp *q, const char *name, json_object *args, double timeout,
                         rv_qmp_reply_fn reply, void *opaque, qmp_pending **out_p, rv_err *err)
{
    if (args && !json_object_is_type(args, json_type_object)) {
        json_object_put(args);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                   "arguments of QEMU command '%s' must be a JSON object", name);
        return -1;
    }
    qmp_pending *p = calloc(1, sizeof(*p));
    json_object *msg = json_object_new_object();
    char *name_copy = strdup(name);
    if (!p || !msg || !name_copy)
        goto nomem;
    p->id = q->next_id++;
    if (json_object_object_add(msg, "execute", json_object_new_string(name)) < 0)
        goto nomem;
    if (args) {
        if (json_object_object_add(msg, "arguments", args) < 0)
            goto nomem;
        args = NULL;    /* msg owns it now */
    }
    if (json_object_object_add(msg, "id", json_object_new_int64(p->id)) < 0)
        goto nomem;
    size_t len = 0;
    const char *text = json_object_to_json_string_length(
        msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    /* No newline after it: QEMU reads its monitor a byte at a time and
     * acts on the closing brace, so a newline after "quit" would still be
     * unread when it exits, and we would read ECONNRESET, not end of file. */
    if (!text || rv_buf_reserve(&q->out, len) < 0)
        goto nomem;
    memcpy(q->out.data + q->out.len, text, len);
    q->out.len += len;
    json_object_put(msg);

    p->qmp = q;
    p->name = name_copy;
    p->reply = reply;
    p->opaque = opaque;
    p->timeout = timeout > 0 ? timeout : q->command_timeout;
    ev_timer_init(&p->timer, on_command_timeout, p->timeout, 0);
    p->timer.data = p;
    p->prev = q->tail;
    if (q->tail)
        q->tail->next = p;
    else
        q->head = p;
    q->tail = p;
    q->npending++;
    if (out_p)
        *out_p = p;
    RV_DEBUG("queued QEMU command '%s' id %lld", name, (long long)p->id);
    return 0;

nomem:
    json_object_put(args);
    json_object_put(msg);
    free(name_copy);
    free(p);
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory queueing QEMU command '%s'", name);
    return -1;
}

int rv_qmp_command(rv_qmp *q, const char *name, json_object *args, double timeout,
                   rv_qmp_reply_fn reply, void *opaque, rv_err *err)
{
    return rv_qmp_command_fd(q, name, args, -1, timeout, reply, opaque, err);
}

int rv_qmp_command_fd(rv_qmp *q, const char *name, json_object *args, int fd, double timeout,
                      rv_qmp_reply_fn reply, void *opaque, rv_err *err)
{
    if (fd >= 0 && !qmp_gone(q) && q->out_fd >= 0) {
        json_object_put(args);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                   "cannot send QEMU command '%s': another descriptor is on its way", name);
        return -1;
    }
    if (!name || !*name || !reply) {
        json_object_put(args);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG, "a QEMU command needs a name and a reply function");
        return -1;
    }
    if (qmp_gone(q)) {
        json_object_put(args);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                   "cannot send QEMU command '%s': the monitor is closed%s%s", name,
                   q->close_message ? ": " : "", q->close_message ? q->close_message : "");
        return -1;
    }
    qmp_pending *p;
    int dup_fd = -1;
    if (fd >= 0 && (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
        json_object_put(args);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot duplicate a descriptor: %s",
                   strerror(errno));
        return -1;
    }
    size_t at = rv_buf_used(&q->out);
    if (queue_command(q, name, args, timeout, reply, opaque, &p, err) < 0) {
        if (dup_fd >= 0)
            close(dup_fd);
        return -1;
    }
    if (dup_fd >= 0) {
        q->out_fd = dup_fd;
        q->out_fd_at = at;
    }
    ev_timer_start(q->loop, &p->timer);
    /* Written from the loop, not here: the caller may be inside one of our
     * callbacks, and a write error must not call it back from this call. */
    start_writing(q);
    return 0;
}

/* ---------------------------------------------------------------- input */

static void capabilities_done(rv_qmp *q, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    (void)opaque;
    if (err) {
        if (q->state == QMP_GREETING && err->code == RV_ERR_OPERATION_TIMEOUT)
            qmp_failf(q, RV_ERR_OPERATION_TIMEOUT, "QEMU monitor sent no greeting within %g s",
                      q->handshake_timeout);
        else if (q->state != QMP_CLOSED)
            qmp_failf(q, err->code == RV_ERR_OPERATION_TIMEOUT ? RV_ERR_OPERATION_TIMEOUT
                                                               : RV_ERR_OPERATION_FAILED,
                      "QMP capabilities negotiation failed: %s",
                      err->message ? err->message : "unknown error");
        return;
    }
    q->state = QMP_READY;
    RV_DEBUG("QMP capabilities negotiated");
    if (q->cbs.on_ready)
        q->cbs.on_ready(q, q->greeting, q->opaque);
}

static void handle_reply(rv_qmp *q, json_object *msg, json_object *ret, json_object *error)
{
    json_object *id_obj = NULL;
    if (!json_object_object_get_ex(msg, "id", &id_obj) || !json_object_is_type(id_obj, json_type_int)) {
        /* We always send an integer id; QEMU answers a command it could not
         * even parse without one, which means our stream is broken. */
        qmp_failf(q, RV_ERR_INTERNAL_ERROR, "QEMU monitor sent a reply without an integer id");
        return;
    }
    int64_t id = json_object_get_int64(id_obj);
    qmp_pending *p = pending_find(q, id);
    if (!p) {
        /* A reply after its command timed out. */
        RV_WARN("QEMU monitor replied to id %lld, which no command waits for (timed out?)",
                (long long)id);
        return;
    }
    if (!error) {
        pending_complete(q, p, ret, NULL);
        return;
    }
    json_object *cls = NULL, *desc = NULL;
    json_object_object_get_ex(error, "class", &cls);
    json_object_object_get_ex(error, "desc", &desc);
    const char *cls_text = cls && json_object_is_type(cls, json_type_string)
                               ? json_object_get_string(cls) : "GenericError";
    const char *desc_text = desc && json_object_is_type(desc, json_type_string)
                                ? json_object_get_string(desc) : "no description";
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "QEMU command '%s' failed: %s",
               p->name, desc_text);
    err.str1 = strdup(cls_text);
    RV_DEBUG("QEMU command '%s' id %lld failed: %s: %s", p->name, (long long)id, cls_text, desc_text);
    pending_complete(q, p, NULL, &err);
    rv_err_clear(&err);
}

static void handle_event(rv_qmp *q, json_object *msg, json_object *event)
{
    if (!json_object_is_type(event, json_type_string)) {
        qmp_failf(q, RV_ERR_INTERNAL_ERROR, "QEMU monitor sent an event whose name is not a string");
        return;
    }
    const char *name = json_object_get_string(event);
    json_object *data = NULL, *stamp = NULL, *secs = NULL, *usecs = NULL;
    json_object_object_get_ex(msg, "data", &data);
    double timestamp = 0;
    if (json_object_object_get_ex(msg, "timestamp", &stamp) &&
        json_object_object_get_ex(stamp, "seconds", &secs) &&
        json_object_object_get_ex(stamp, "microseconds", &usecs))
        timestamp = (double)json_object_get_int64(secs) + json_object_get_int64(usecs) / 1e6;
    RV_DEBUG("QEMU event %s", name);
    if (q->cbs.on_event)
        q->cbs.on_event(q, name, data, timestamp, q->opaque);
}

/* One message: text[0, len) with the newline and trailing blanks gone. */
static void handle_message(rv_qmp *q, const char *text, size_t len)
{
    json_tokener_reset(q->tokener);
    json_object *msg = json_tokener_parse_ex(q->tokener, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(q->tokener);
    if (!msg || jerr != json_tokener_success || json_tokener_get_parse_end(q->tokener) != len) {
        char *quoted = quote_peer(text, len);
        qmp_failf(q, RV_ERR_INTERNAL_ERROR, "QEMU monitor sent a message that is not JSON (%s): %s",
                  jerr == json_tokener_success ? "text after the value"
                  : jerr == json_tokener_continue ? "incomplete value"
                  : json_tokener_error_desc(jerr),
                  quoted ? quoted : "");
        free(quoted);
        json_object_put(msg);
        return;
    }
    if (!json_object_is_type(msg, json_type_object)) {
        char *quoted = quote_peer(text, len);
        qmp_failf(q, RV_ERR_INTERNAL_ERROR, "QEMU monitor sent a message that is not a JSON object: %s",
                  quoted ? quoted : "");
        free(quoted);
        json_object_put(msg);
        return;
    }

    json_object *member = NULL, *error = NULL;
    if (q->state == QMP_GREETING && json_object_object_get_ex(msg, "event", &member)) {
        /* QEMU can write an event it emitted just as we connected before
         * its greeting (seen with -incoming: MIGRATION): it is not for us. */
        RV_DEBUG("QEMU event %s before the greeting: ignored", json_object_get_string(member));
        json_object_put(msg);
        return;
    }
    if (q->state == QMP_GREETING) {
        if (!json_object_object_get_ex(msg, "QMP", &member) ||
            !json_object_is_type(member, json_type_object)) {
            char *quoted = quote_peer(text, len);
            qmp_failf(q, RV_ERR_INTERNAL_ERROR,
                      "the socket does not speak QMP: its first message is not a greeting: %s",
                      quoted ? quoted : "");
            free(quoted);
        } else {
            q->greeting = json_object_get(member);
            q->state = QMP_NEGOTIATING;
            RV_DEBUG("QMP greeting: %s", json_object_to_json_string_ext(member, JSON_C_TO_STRING_PLAIN));
            start_writing(q);
        }
    } else if (json_object_object_get_ex(msg, "return", &member)) {
        handle_reply(q, msg, member, NULL);
    } else if (json_object_object_get_ex(msg, "error", &error)) {
        handle_reply(q, msg, NULL, error);
    } else if (json_object_object_get_ex(msg, "event", &member)) {
        handle_event(q, msg, member);
    } else {
        char *quoted = quote_peer(text, len);
        qmp_failf(q, RV_ERR_INTERNAL_ERROR, "QEMU monitor sent a message QMP does not define: %s",
                  quoted ? quoted : "");
        free(quoted);
    }
    json_object_put(msg);
}

/* Hand every complete line in `in` to handle_message(). */
static void dispatch_lines(rv_qmp *q)
{
    while (!qmp_gone(q)) {
        size_t used = rv_buf_used(&q->in);
        char *head = rv_buf_head(&q->in);
        char *nl = used > q->scanned ? memchr(head + q->scanned, '\n', used - q->scanned) : NULL;
        size_t len = nl ? (size_t)(nl - head) : used;
        if (len > q->max_message) {
            qmp_failf(q, RV_ERR_INTERNAL_ERROR,
                      "QEMU monitor sent a message over the limit of %zu bytes", q->max_message);
            return;
        }
        if (!nl) {
            q->scanned = used;
            return;
        }
        q->scanned = 0;
        size_t trimmed = len;
        while (trimmed > 0 && (head[trimmed - 1] == '\r' || head[trimmed - 1] == ' ' ||
                               head[trimmed - 1] == '\t'))
            trimmed--;
        /* The buffer does not move while the message is handled: replies
         * may queue output, never input. */
        if (trimmed > 0)
            handle_message(q, head, trimmed);
        if (q->state == QMP_CLOSED)
            return;     /* qmp_fail() left `in` for the destructor */
        rv_buf_consume(&q->in, len + 1);
    }
}

static bool only_blanks(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
            return false;
    return true;
}

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    rv_qmp *q = w->data;
    qmp_enter(q);
    /* Never hold more than one message's bound plus its newline. */
    size_t used = rv_buf_used(&q->in);
    size_t want = q->max_message + 1 - used;
    if (want > READ_CHUNK)
        want = READ_CHUNK;
    if (rv_buf_reserve(&q->in, want) < 0) {
        qmp_failf(q, RV_ERR_NO_MEMORY, "out of memory reading from the QEMU monitor");
        goto out;
    }
    ssize_t n = recv(q->fd, q->in.data + q->in.len, want, MSG_DONTWAIT);
    if (n < 0) {
        if (errno == ECONNRESET)   /* QEMU exited with our input unread */
            qmp_failf(q, RV_ERR_OPERATION_FAILED, "QEMU monitor closed (connection reset)");
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            qmp_fail_errno(q, errno, "cannot read from the QEMU monitor");
        goto out;
    }
    if (n == 0) {
        if (only_blanks(rv_buf_head(&q->in), used))
            qmp_failf(q, RV_ERR_OPERATION_FAILED, "QEMU monitor closed (end of file)");
        else
            qmp_failf(q, RV_ERR_OPERATION_FAILED,
                      "QEMU monitor closed in the middle of a message (%zu bytes without their newline)",
                      used);
        goto out;
    }
    q->in.len += (size_t)n;
    dispatch_lines(q);
out:
    qmp_leave(q);
}

/* ---------------------------------------------------------------- connecting */

/* Connected: wait for the greeting, bounded by the handshake timeout. */
static void connected(rv_qmp *q)
{
    q->state = QMP_GREETING;
    ev_io_init(&q->reader, on_readable, q->fd, EV_READ);
    q->reader.data = q;
    ev_io_init(&q->writer, on_writable, q->fd, EV_WRITE);
    q->writer.data = q;
    ev_io_start(q->loop, &q->reader);
    if (q->capabilities) {
        ev_timer_set(&q->capabilities->timer, q->handshake_timeout, 0);
        ev_timer_start(q->loop, &q->capabilities->timer);
    }
    RV_DEBUG("connected to the QEMU monitor%s%s", q->path ? " at " : "", q->path ? q->path : "");
}

static bool connect_worth_retrying(int errnum)
{
    /* The socket is not there yet, or nobody listens yet, or the backlog
     * is full: QEMU may still be starting. */
    return errnum == ENOENT || errnum == ECONNREFUSED || errnum == EAGAIN;
}

static void connect_failed(rv_qmp *q, int errnum)
{
    if (connect_worth_retrying(errnum) && ev_now(q->loop) < q->connect_deadline) {
        ev_timer_set(&q->connect_retry, CONNECT_RETRY_INTERVAL, 0);
        ev_timer_start(q->loop, &q->connect_retry);
        return;
    }
    rv_err err = { 0 };
    if (q->connect_timeout > 0)
        rv_err_set_errno(&err, RV_FROM_QEMU, errnum,
                         "cannot connect to the QEMU monitor at %s (tried for %g s)",
                         q->path, q->connect_timeout);
    else
        rv_err_set_errno(&err, RV_FROM_QEMU, errnum, "cannot connect to the QEMU monitor at %s", q->path);
    qmp_fail(q, &err);
    rv_err_clear(&err);
}

static void finish_connect(rv_qmp *q)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        soerr = errno;
    ev_io_stop(q->loop, &q->writer);
    if (soerr == 0) {
        connected(q);
        return;
    }
    close(q->fd);
    q->fd = -1;
    connect_failed(q, soerr);
}

static void on_connect_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    rv_qmp *q = w->data;
    qmp_enter(q);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    memcpy(addr.sun_path, q->path, strlen(q->path) + 1);    /* length checked at creation */
    q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (q->fd < 0) {
        qmp_fail_errno(q, errno, "cannot create a socket for the QEMU monitor");
        goto out;
    }
    if (connect(q->fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
        connected(q);
        goto out;
    }
    int errnum = errno;
    if (errnum == EINPROGRESS) {
        ev_io_init(&q->writer, on_writable, q->fd, EV_WRITE);
        q->writer.data = q;
        ev_io_start(q->loop, &q->writer);
        goto out;
    }
    close(q->fd);
    q->fd = -1;
    connect_failed(q, errnum);
out:
    qmp_leave(q);
}

/* ---------------------------------------------------------------- life */

static rv_qmp *qmp_alloc(struct ev_loop *loop, const rv_qmp_options *opts,
                         const rv_qmp_callbacks *cbs, void *opaque, rv_err *err)
{
    rv_qmp *q = calloc(1, sizeof(*q));
    if (!q)
        goto nomem;
    q->loop = loop;
    q->fd = -1;
    q->out_fd = -1;
    q->state = QMP_CONNECTING;
    q->next_id = 1;
    q->max_message = opts && opts->max_message ? opts->max_message : RV_QMP_DEFAULT_MAX_MESSAGE;
    if (q->max_message > INT_MAX - 1)     /* json-c takes an int length */
        q->max_message = INT_MAX - 1;
    q->command_timeout = opts && opts->command_timeout > 0 ? opts->command_timeout
                                                           : RV_QMP_DEFAULT_COMMAND_TIMEOUT;
    q->connect_timeout = opts && opts->connect_timeout > 0 ? opts->connect_timeout : 0;
    q->handshake_timeout = opts && opts->handshake_timeout > 0 ? opts->handshake_timeout
                                                               : q->command_timeout;
    if (cbs)
        q->cbs = *cbs;
    q->opaque = opaque;
    ev_init(&q->reader, on_readable);
    ev_init(&q->writer, on_writable);
    ev_init(&q->connect_retry, on_connect_timer);
    q->connect_retry.data = q;
    q->tokener = json_tokener_new_ex(JSON_MAX_DEPTH);
    if (!q->tokener)
        goto nomem;
    json_tokener_set_flags(q->tokener, JSON_TOKENER_STRICT);
    /* First in the output, whatever the owner queues before the greeting;
     * its timer starts once connected. */
    if (queue_command(q, "qmp_capabilities", NULL, q->handshake_timeout, capabilities_done, NULL,
                      &q->capabilities, err) < 0) {
        json_tokener_free(q->tokener);
        free(q);
        return NULL;
    }
    return q;

nomem:
    free(q);
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory creating a QEMU monitor");
    return NULL;
}

rv_qmp *rv_qmp_connect_unix(struct ev_loop *loop, const char *path, const rv_qmp_options *opts,
                            const rv_qmp_callbacks *cbs, void *opaque, rv_err *err)
{
    struct sockaddr_un addr;
    if (!path || !*path || strlen(path) >= sizeof(addr.sun_path)) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                   "QEMU monitor socket path '%s' is empty or longer than %zu bytes",
                   path ? path : "", sizeof(addr.sun_path) - 1);
        return NULL;
    }
    rv_qmp *q = qmp_alloc(loop, opts, cbs, opaque, err);
    if (!q)
        return NULL;
    q->path = strdup(path);
    if (!q->path) {
        rv_qmp_free(q);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory creating a QEMU monitor");
        return NULL;
    }
    q->connect_deadline = ev_now(loop) + q->connect_timeout;
    /* The first attempt runs from the loop too, so a refusal reaches the
     * owner through on_close rather than from inside this call. */
    ev_timer_set(&q->connect_retry, 0, 0);
    ev_timer_start(loop, &q->connect_retry);
    return q;
}

rv_qmp *rv_qmp_new_fd(struct ev_loop *loop, int fd, const rv_qmp_options *opts,
                      const rv_qmp_callbacks *cbs, void *opaque, rv_err *err)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        rv_err_set_errno(err, RV_FROM_QEMU, errno, "cannot make the QEMU monitor socket non-blocking");
        close(fd);
        return NULL;
    }
    rv_qmp *q = qmp_alloc(loop, opts, cbs, opaque, err);
    if (!q) {
        close(fd);
        return NULL;
    }
    q->fd = fd;
    connected(q);
    return q;
}

int rv_qmp_is_ready(const rv_qmp *q)
{
    return q->state == QMP_READY && !q->free_requested;
}

int rv_qmp_is_closed(const rv_qmp *q)
{
    return q->state == QMP_CLOSED;
}

size_t rv_qmp_pending(const rv_qmp *q)
{
    /* qmp_capabilities is ours, not the owner's. */
    return q->npending - (q->capabilities ? 1 : 0);
}

static void qmp_destroy(rv_qmp *q)
{
    q->busy++;  /* replies below may call rv_qmp_free() again: ignored */
    stop_io(q);
    if (q->out_fd >= 0) {
        close(q->out_fd);
        q->out_fd = -1;
    }
    q->state = QMP_CLOSED;
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_ABORTED,
               "QEMU monitor connection closed by its owner");
    pending_fail_all(q, &err);
    rv_err_clear(&err);
    rv_buf_free(&q->in);
    rv_buf_free(&q->out);
    if (q->tokener)
        json_tokener_free(q->tokener);
    json_object_put(q->greeting);
    free(q->close_message);
    free(q->path);
    free(q);
}

void rv_qmp_free(rv_qmp *q)
{
    if (!q || q->free_requested)
        return;
    q->free_requested = true;
    if (q->busy == 0)
        qmp_destroy(q);
    else {
        /* Inside one of our callbacks: nothing more from the socket. */
        ev_io_stop(q->loop, &q->reader);
        ev_io_stop(q->loop, &q->writer);
        ev_timer_stop(q->loop, &q->connect_retry);
    }
}

long long rv_qmp_json_int(json_object *obj, const char *key, long long def)
{
    json_object *v = NULL;
    if (!obj || !json_object_object_get_ex(obj, key, &v) || !v)
        return def;
    return json_object_get_int64(v);
}
