/* The QMP client (server/drivers/qemu/qmp.c) on a libev loop:
 *   - against a fake monitor the test plays on a socketpair: ordering
 *     behind the greeting, replies, errors, events split across reads,
 *     timeouts and late replies, garbage, an over-long message, a close in
 *     the middle of a message, freeing from inside callbacks;
 *   - against a real qemu-system-x86_64 (skipped with 77 when it is not
 *     installed): greeting and capabilities, query-status, cont/stop with
 *     RESUME/STOP, an unknown command's error, a large reply (the QMP
 *     schema), 3000 commands in flight at once, system_reset/RESET,
 *     system_powerdown/POWERDOWN, quit with SHUTDOWN and end of file, and
 *     a command after that.
 * Under make check-valgrind and --enable-sanitizers it is the leak and
 * use-after-free check too. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "server/drivers/qemu/qmp.h"
#include "tests/unit/check.h"
#include "tests/unit/spawn.h"

static struct ev_loop *loop;

/* ---------------------------------------------------------------- recording what the client reports */

#define MAX_EVENTS 64

typedef struct recorder {
    bool ready;
    json_object *greeting;
    char *events[MAX_EVENTS];
    json_object *event_data[MAX_EVENTS];
    double event_time[MAX_EVENTS];
    size_t nevents;
    bool closed;
    int close_calls;
    rv_err close_reason;
    bool free_on_close;
} recorder;

static void rec_ready(rv_qmp *q, json_object *greeting, void *opaque)
{
    (void)q;
    recorder *r = opaque;
    CHECK(!r->ready);
    r->ready = true;
    r->greeting = json_object_get(greeting);
}

static void rec_event(rv_qmp *q, const char *name, json_object *data, double timestamp, void *opaque)
{
    (void)q;
    recorder *r = opaque;
    CHECK(r->nevents < MAX_EVENTS);
    r->events[r->nevents] = strdup(name);
    r->event_data[r->nevents] = json_object_get(data);
    r->event_time[r->nevents] = timestamp;
    r->nevents++;
}

static void err_copy(rv_err *dst, const rv_err *src)
{
    rv_err_set(dst, src->domain, src->code, "%s", src->message ? src->message : "");
    dst->str1 = src->str1 ? strdup(src->str1) : NULL;
}

static void rec_close(rv_qmp *q, const rv_err *reason, void *opaque)
{
    recorder *r = opaque;
    CHECK(reason != NULL);
    r->closed = true;
    r->close_calls++;
    err_copy(&r->close_reason, reason);
    CHECK(rv_qmp_is_closed(q));
    if (r->free_on_close)
        rv_qmp_free(q);
}

static const rv_qmp_callbacks rec_callbacks = {
    .on_ready = rec_ready, .on_event = rec_event, .on_close = rec_close,
};

static void rec_clear(recorder *r)
{
    json_object_put(r->greeting);
    for (size_t i = 0; i < r->nevents; i++) {
        free(r->events[i]);
        json_object_put(r->event_data[i]);
    }
    rv_err_clear(&r->close_reason);
    memset(r, 0, sizeof(*r));
}

/* One command's outcome. */
typedef struct reply_box {
    int calls;
    json_object *ret;
    rv_err err;
    rv_qmp *free_me;    /* rv_qmp_free() this from inside the callback */
} reply_box;

static void box_reply(rv_qmp *q, json_object *ret, const rv_err *err, void *opaque)
{
    (void)q;
    reply_box *b = opaque;
    b->calls++;
    CHECK_INT_EQ(b->calls, 1);
    if (err) {
        CHECK(ret == NULL);
        err_copy(&b->err, err);
    } else {
        b->ret = json_object_get(ret);
    }
    if (b->free_me)
        rv_qmp_free(b->free_me);
}

static void box_clear(reply_box *b)
{
    json_object_put(b->ret);
    rv_err_clear(&b->err);
    memset(b, 0, sizeof(*b));
}

/* ---------------------------------------------------------------- running the loop until something happens */

static void on_tick(struct ev_loop *l, ev_timer *w, int revents)
{
    (void)l;
    (void)w;
    (void)revents;
}

/* Run the loop until pred(arg) holds; fail after `seconds`.  A 10 ms tick
 * wakes the loop so that conditions outside it (a fake peer) are seen. */
static void wait_for(bool (*pred)(void *), void *arg, double seconds, const char *what,
                     const char *file, int line)
{
    ev_timer tick;
    ev_timer_init(&tick, on_tick, 0.01, 0.01);
    ev_timer_start(loop, &tick);
    ev_now_update(loop);
    ev_tstamp deadline = ev_now(loop) + seconds;
    while (!pred(arg)) {
        ev_now_update(loop);
        if (ev_now(loop) > deadline) {
            ev_timer_stop(loop, &tick);
            check_fail(file, line, "timed out after %g s waiting for %s", seconds, what);
        }
        ev_run(loop, EVRUN_ONCE);
    }
    ev_timer_stop(loop, &tick);
}
#define WAIT_FOR(pred, arg, seconds) wait_for((pred), (arg), (seconds), #pred, __FILE__, __LINE__)

static bool box_done(void *arg) { return ((reply_box *)arg)->calls > 0; }
static bool rec_is_ready(void *arg) { return ((recorder *)arg)->ready; }
static bool rec_is_closed(void *arg) { return ((recorder *)arg)->closed; }

/* Spin the loop for a while without a condition. */
static bool never(void *arg) { (void)arg; return false; }
static void spin(double seconds)
{
    ev_timer tick;
    ev_timer_init(&tick, on_tick, 0.01, 0.01);
    ev_timer_start(loop, &tick);
    ev_now_update(loop);
    ev_tstamp end = ev_now(loop) + seconds;
    while (!never(NULL) && ev_now(loop) < end) {
        ev_run(loop, EVRUN_ONCE);
        ev_now_update(loop);
    }
    ev_timer_stop(loop, &tick);
}

typedef struct event_wait {
    recorder *rec;
    const char *name;
    size_t from;
    size_t found;
} event_wait;

static bool event_seen(void *arg)
{
    event_wait *w = arg;
    for (size_t i = w->from; i < w->rec->nevents; i++)
        if (strcmp(w->rec->events[i], w->name) == 0) {
            w->found = i;
            return true;
        }
    return false;
}

/* Index of the first event `name` at or after `from`, waiting for it. */
static size_t wait_event(recorder *r, const char *name, size_t from, double seconds)
{
    event_wait w = { r, name, from, 0 };
    wait_for(event_seen, &w, seconds, name, __FILE__, __LINE__);
    return w.found;
}

/* Issue a command and wait for its reply (args owned by the call). */
static void command_wait(rv_qmp *q, const char *name, json_object *args, reply_box *b, double seconds)
{
    rv_err err = { 0 };
    if (rv_qmp_command(q, name, args, 0, box_reply, b, &err) < 0)
        check_fail(__FILE__, __LINE__, "rv_qmp_command(%s): %s", name, err.message);
    WAIT_FOR(box_done, b, seconds);
}

static const char *member_string(json_object *obj, const char *key)
{
    json_object *m = NULL;
    if (!json_object_object_get_ex(obj, key, &m) || !json_object_is_type(m, json_type_string))
        return NULL;
    return json_object_get_string(m);
}

static int member_bool(json_object *obj, const char *key)
{
    json_object *m = NULL;
    if (!json_object_object_get_ex(obj, key, &m) || !json_object_is_type(m, json_type_boolean))
        return -1;
    return json_object_get_boolean(m);
}

/* ---------------------------------------------------------------- a fake monitor */

typedef struct fake {
    int peer;           /* the monitor's end, non-blocking */
    rv_qmp *q;
    recorder rec;
    char buf[65536];    /* what the client wrote, not yet parsed */
    size_t used;
    json_object *next_cmd;
} fake;

static void peer_write(fake *f, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = send(f->peer, text + done, len - done, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            spin(0.01);
            continue;
        }
        CHECK(n > 0);
        done += (size_t)n;
    }
}

/* The client writes one JSON object after another with nothing between
 * them (QEMU needs no separator), so the peer parses a stream. */
static bool peer_has_command(void *arg)
{
    fake *f = arg;
    if (f->next_cmd)
        return true;
    ssize_t n = recv(f->peer, f->buf + f->used, sizeof(f->buf) - 1 - f->used, MSG_DONTWAIT);
    if (n > 0)
        f->used += (size_t)n;
    size_t skip = 0;
    while (skip < f->used && (f->buf[skip] == ' ' || f->buf[skip] == '\r' || f->buf[skip] == '\n'))
        skip++;
    if (skip == f->used)
        return false;
    json_tokener *tok = json_tokener_new();
    json_object *obj = json_tokener_parse_ex(tok, f->buf + skip, (int)(f->used - skip));
    size_t end = skip + json_tokener_get_parse_end(tok);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!obj) {
        if (jerr != json_tokener_continue)
            check_fail(__FILE__, __LINE__, "client wrote something that is not JSON: %.*s",
                       (int)(f->used - skip), f->buf + skip);
        return false;
    }
    memmove(f->buf, f->buf + end, f->used - end);
    f->used -= end;
    f->next_cmd = obj;
    return true;
}

/* The next command the client wrote, parsed; its id in *id. */
static json_object *peer_read_command(fake *f, const char *expected_name, int64_t *id)
{
    WAIT_FOR(peer_has_command, f, 5);
    json_object *cmd = f->next_cmd;
    f->next_cmd = NULL;
    CHECK_STR_EQ(member_string(cmd, "execute"), expected_name);
    json_object *id_obj = NULL;
    CHECK(json_object_object_get_ex(cmd, "id", &id_obj));
    CHECK(json_object_is_type(id_obj, json_type_int));
    *id = json_object_get_int64(id_obj);
    return cmd;
}

static void peer_reply(fake *f, int64_t id, const char *ret_json)
{
    char line[8192];
    snprintf(line, sizeof(line), "{\"return\": %s, \"id\": %lld}\r\n", ret_json, (long long)id);
    peer_write(f, line);
}

static const char greeting_line[] =
    "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 7}, "
    "\"package\": \"fake\"}, \"capabilities\": [\"oob\"]}}\r\n";

/* A client on a socketpair; with greet, the handshake done. */
static void fake_open(fake *f, const rv_qmp_options *opts, bool greet)
{
    memset(f, 0, sizeof(*f));
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    CHECK(fcntl(fds[1], F_SETFL, O_NONBLOCK) == 0);
    f->peer = fds[1];
    rv_err err = { 0 };
    f->q = rv_qmp_new_fd(loop, fds[0], opts, &rec_callbacks, &f->rec, &err);
    CHECK(f->q != NULL);
    if (!greet)
        return;
    peer_write(f, greeting_line);
    int64_t id;
    json_object_put(peer_read_command(f, "qmp_capabilities", &id));
    peer_reply(f, id, "{}");
    WAIT_FOR(rec_is_ready, &f->rec, 5);
}

static void fake_close(fake *f)
{
    rv_qmp_free(f->q);
    json_object_put(f->next_cmd);
    if (f->peer >= 0)
        close(f->peer);
    rec_clear(&f->rec);
}

/* Commands wait behind the greeting, replies and errors come back by id,
 * events arrive whole even when split across reads. */
static void test_fake_basics(void)
{
    fake f;
    fake_open(&f, NULL, false);
    reply_box early = { 0 };
    rv_err err = { 0 };
    CHECK(rv_qmp_command(f.q, "query-status", NULL, 0, box_reply, &early, &err) == 0);
    CHECK_UINT_EQ(rv_qmp_pending(f.q), 1);
    spin(0.05);
    CHECK(!peer_has_command(&f));          /* nothing before the greeting */
    CHECK(!rv_qmp_is_ready(f.q));

    peer_write(&f, greeting_line);
    int64_t caps_id, status_id;
    json_object_put(peer_read_command(&f, "qmp_capabilities", &caps_id));
    json_object_put(peer_read_command(&f, "query-status", &status_id));
    CHECK(status_id != caps_id);
    peer_reply(&f, caps_id, "{}");
    WAIT_FOR(rec_is_ready, &f.rec, 5);
    json_object *version = NULL;
    CHECK(json_object_object_get_ex(f.rec.greeting, "version", &version));
    CHECK(early.calls == 0);

    /* Replies out of order are matched by id; an error carries the class. */
    reply_box with_args = { 0 };
    json_object *args = json_object_new_object();
    json_object_object_add(args, "device", json_object_new_string("x\"y"));
    CHECK(rv_qmp_command(f.q, "eject", args, 0, box_reply, &with_args, &err) == 0);
    int64_t eject_id;
    json_object *cmd = peer_read_command(&f, "eject", &eject_id);
    json_object *sent_args = NULL;
    CHECK(json_object_object_get_ex(cmd, "arguments", &sent_args));
    CHECK_STR_EQ(member_string(sent_args, "device"), "x\"y");
    json_object_put(cmd);
    char line[512];
    snprintf(line, sizeof(line),
             "{\"error\": {\"class\": \"DeviceNotFound\", \"desc\": \"Device 'x\\\"y' not found\"}, "
             "\"id\": %lld}\n", (long long)eject_id);
    peer_write(&f, line);
    peer_reply(&f, status_id, "{\"status\": \"prelaunch\", \"running\": false}");
    WAIT_FOR(box_done, &early, 5);
    WAIT_FOR(box_done, &with_args, 5);
    CHECK(early.ret != NULL);
    CHECK_STR_EQ(member_string(early.ret, "status"), "prelaunch");
    CHECK(with_args.ret == NULL);
    CHECK_INT_EQ(with_args.err.code, RV_ERR_OPERATION_FAILED);
    CHECK_INT_EQ(with_args.err.domain, RV_FROM_QEMU);
    CHECK_STR_EQ(with_args.err.str1, "DeviceNotFound");
    CHECK_STR_HAS(with_args.err.message, "QEMU command 'eject' failed: Device 'x\"y' not found");
    CHECK_UINT_EQ(rv_qmp_pending(f.q), 0);

    /* An event in three writes, with a blank line around it. */
    peer_write(&f, "\r\n{\"event\": \"SHUTDOWN\", \"data\": {\"guest\": true, ");
    spin(0.03);
    peer_write(&f, "\"reason\": \"guest-shutdown\"}, \"timestamp\": {\"seconds\": 1700000000, ");
    spin(0.03);
    peer_write(&f, "\"microseconds\": 500000}}\r\n{\"event\": \"STOP\"}\n");
    size_t i = wait_event(&f.rec, "STOP", 0, 5);
    CHECK_UINT_EQ(i, 1);
    CHECK_STR_EQ(f.rec.events[0], "SHUTDOWN");
    CHECK_INT_EQ(member_bool(f.rec.event_data[0], "guest"), 1);
    CHECK_STR_EQ(member_string(f.rec.event_data[0], "reason"), "guest-shutdown");
    CHECK(f.rec.event_time[0] == 1700000000.5);
    CHECK(f.rec.event_data[1] == NULL);
    CHECK(f.rec.event_time[1] == 0);

    /* Arguments that are not an object are refused at once. */
    CHECK(rv_qmp_command(f.q, "stop", json_object_new_int(3), 0, box_reply, &early, &err) < 0);
    CHECK_INT_EQ(err.code, RV_ERR_INVALID_ARG);
    rv_err_clear(&err);

    CHECK(!f.rec.closed);
    box_clear(&early);
    box_clear(&with_args);
    fake_close(&f);
}

/* A command times out with a clear error, the monitor stays usable and
 * the late reply is dropped. */
static void test_fake_timeout(void)
{
    fake f;
    rv_qmp_options opts = { .command_timeout = 0.2 };
    fake_open(&f, &opts, true);
    reply_box slow = { 0 }, next = { 0 };
    rv_err err = { 0 };
    CHECK(rv_qmp_command(f.q, "query-status", NULL, 0, box_reply, &slow, &err) == 0);
    int64_t slow_id, next_id;
    json_object_put(peer_read_command(&f, "query-status", &slow_id));
    WAIT_FOR(box_done, &slow, 5);
    CHECK_INT_EQ(slow.err.code, RV_ERR_OPERATION_TIMEOUT);
    CHECK_STR_HAS(slow.err.message, "'query-status' got no reply from the monitor within 0.2 s");
    CHECK(rv_qmp_is_ready(f.q));

    CHECK(rv_qmp_command(f.q, "query-kvm", NULL, 5, box_reply, &next, &err) == 0);
    json_object_put(peer_read_command(&f, "query-kvm", &next_id));
    peer_reply(&f, slow_id, "{}");      /* late: dropped */
    peer_reply(&f, next_id, "{\"enabled\": false, \"present\": true}");
    WAIT_FOR(box_done, &next, 5);
    CHECK(next.ret != NULL);
    CHECK_INT_EQ(member_bool(next.ret, "present"), 1);
    CHECK(!f.rec.closed);
    box_clear(&slow);
    box_clear(&next);
    fake_close(&f);
}

/* A monitor that misbehaves is dropped: the pending command and on_close
 * both get the reason, once. */
static void expect_dropped(const char *input, const rv_qmp_options *opts, bool greet,
                           int code, const char *reason_part, bool close_peer)
{
    fake f;
    fake_open(&f, opts, greet);
    reply_box pending = { 0 };
    rv_err err = { 0 };
    CHECK(rv_qmp_command(f.q, "query-status", NULL, 0, box_reply, &pending, &err) == 0);
    if (greet) {
        int64_t id;
        json_object_put(peer_read_command(&f, "query-status", &id));
    }
    peer_write(&f, input);
    if (close_peer) {
        close(f.peer);
        f.peer = -1;
    }
    WAIT_FOR(rec_is_closed, &f.rec, 5);
    CHECK_INT_EQ(f.rec.close_calls, 1);
    CHECK_INT_EQ(f.rec.close_reason.code, code);
    CHECK_STR_HAS(f.rec.close_reason.message, reason_part);
    CHECK_INT_EQ(pending.calls, 1);
    CHECK_INT_EQ(pending.err.code, code);
    CHECK_STR_HAS(pending.err.message, reason_part);
    CHECK(!rv_qmp_is_ready(f.q));

    /* A command after the close fails at once, and says why. */
    reply_box after = { 0 };
    CHECK(rv_qmp_command(f.q, "cont", json_object_new_object(), 0, box_reply, &after, &err) < 0);
    CHECK_INT_EQ(err.code, RV_ERR_OPERATION_INVALID);
    CHECK_STR_HAS(err.message, "the monitor is closed");
    CHECK_STR_HAS(err.message, reason_part);
    spin(0.02);
    CHECK_INT_EQ(after.calls, 0);
    rv_err_clear(&err);
    box_clear(&pending);
    fake_close(&f);
}

static void test_fake_bad_input(void)
{
    expect_dropped("this is not json\n", NULL, true, RV_ERR_INTERNAL_ERROR,
                   "sent a message that is not JSON", false);
    expect_dropped("{\"return\": {}} trailing\n", NULL, true, RV_ERR_INTERNAL_ERROR,
                   "is not JSON (unexpected character): {\"return\": {}} trailing", false);
    expect_dropped("[1, 2]\n", NULL, true, RV_ERR_INTERNAL_ERROR, "not a JSON object", false);
    expect_dropped("{\"hello\": 1}\n", NULL, true, RV_ERR_INTERNAL_ERROR, "QMP does not define", false);
    expect_dropped("{\"return\": {}}\n", NULL, true, RV_ERR_INTERNAL_ERROR, "without an integer id", false);
    /* Control characters in a quoted message are escaped. */
    expect_dropped("\x1b[2Jnot json\n", NULL, true, RV_ERR_INTERNAL_ERROR, "\\x1b[2Jnot json", false);
    /* Something else on the socket. */
    expect_dropped("{\"return\": {}, \"id\": 1}\n", NULL, false, RV_ERR_INTERNAL_ERROR,
                   "does not speak QMP", false);
    expect_dropped("SSH-2.0-OpenSSH_9.2\r\n", NULL, false, RV_ERR_INTERNAL_ERROR, "not JSON", false);

    /* Over the bound, with or without the newline ever coming. */
    rv_qmp_options small = { .max_message = 4096 };
    char *big = malloc(6001);
    CHECK(big != NULL);
    memset(big, 'x', 6000);
    big[6000] = '\0';
    expect_dropped(big, &small, true, RV_ERR_INTERNAL_ERROR, "over the limit of 4096 bytes", false);
    big[5000] = '\n';
    expect_dropped(big, &small, true, RV_ERR_INTERNAL_ERROR, "over the limit of 4096 bytes", false);
    free(big);

    /* End of file: in the middle of a message, and clean. */
    expect_dropped("{\"return\": {}, \"i", NULL, true, RV_ERR_OPERATION_FAILED,
                   "closed in the middle of a message (17 bytes", true);
    expect_dropped("", NULL, true, RV_ERR_OPERATION_FAILED, "QEMU monitor closed (end of file)", true);
    expect_dropped("", NULL, false, RV_ERR_OPERATION_FAILED, "QEMU monitor closed (end of file)", true);
}

/* A monitor that never greets, or never answers qmp_capabilities, or
 * refuses it, is dropped after the handshake timeout. */
static void test_fake_handshake(void)
{
    rv_qmp_options quick = { .handshake_timeout = 0.2 };
    fake f;
    fake_open(&f, &quick, false);
    WAIT_FOR(rec_is_closed, &f.rec, 5);
    CHECK_INT_EQ(f.rec.close_reason.code, RV_ERR_OPERATION_TIMEOUT);
    CHECK_STR_EQ(f.rec.close_reason.message, "QEMU monitor sent no greeting within 0.2 s");
    CHECK(!f.rec.ready);
    fake_close(&f);

    fake_open(&f, &quick, false);
    peer_write(&f, greeting_line);
    int64_t id;
    json_object_put(peer_read_command(&f, "qmp_capabilities", &id));
    WAIT_FOR(rec_is_closed, &f.rec, 5);
    CHECK_INT_EQ(f.rec.close_reason.code, RV_ERR_OPERATION_TIMEOUT);
    CHECK_STR_HAS(f.rec.close_reason.message, "QMP capabilities negotiation failed: "
                  "QEMU command 'qmp_capabilities' got no reply from the monitor within 0.2 s");
    fake_close(&f);

    fake_open(&f, NULL, false);
    peer_write(&f, greeting_line);
    json_object_put(peer_read_command(&f, "qmp_capabilities", &id));
    char line[256];
    snprintf(line, sizeof(line), "{\"error\": {\"class\": \"GenericError\", \"desc\": \"no\"}, "
             "\"id\": %lld}\n", (long long)id);
    peer_write(&f, line);
    WAIT_FOR(rec_is_closed, &f.rec, 5);
    CHECK_INT_EQ(f.rec.close_reason.code, RV_ERR_OPERATION_FAILED);
    CHECK_STR_EQ(f.rec.close_reason.message,
                 "QMP capabilities negotiation failed: QEMU command 'qmp_capabilities' failed: no");
    CHECK(!f.rec.ready);
    fake_close(&f);
}

/* An event QEMU wrote before its greeting (it does, racing a new
 * connection, with -incoming) is skipped; the greeting still counts. */
static void test_fake_event_before_greeting(void)
{
    fake f;
    fake_open(&f, NULL, false);
    peer_write(&f, "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"MIGRATION\", "
                   "\"data\": {\"status\": \"setup\"}}\r\n");
    peer_write(&f, greeting_line);
    int64_t id;
    json_object_put(peer_read_command(&f, "qmp_capabilities", &id));
    peer_reply(&f, id, "{}");
    WAIT_FOR(rec_is_ready, &f.rec, 5);
    CHECK(!f.rec.closed);
    fake_close(&f);
}

/* The peer's next bytes with their SCM_RIGHTS descriptor, if any. */
typedef struct fd_box {
    fake *f;
    int fd;
} fd_box;

static bool peer_got_fd(void *arg)
{
    fd_box *b = arg;
    fake *f = b->f;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = { f->buf + f->used, sizeof(f->buf) - 1 - f->used };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                          .msg_controllen = sizeof(control.buf) };
    ssize_t n = recvmsg(f->peer, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n <= 0)
        return false;
    f->used += (size_t)n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&b->fd, CMSG_DATA(c), sizeof(int));
    return b->fd >= 0;
}

/* rv_qmp_command_fd: the descriptor arrives with the command's bytes,
 * after the commands queued before it; a second one may not wait beside
 * the first. */
static void test_fake_fd_passing(void)
{
    fake f;
    fake_open(&f, NULL, true);
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    reply_box first = { 0 }, second = { 0 }, refused = { 0 };
    rv_err err = { 0 };
    CHECK(rv_qmp_command(f.q, "stop", NULL, 0, box_reply, &first, &err) == 0);
    json_object *args = json_object_new_object();
    json_object_object_add(args, "fdname", json_object_new_string("x"));
    CHECK(rv_qmp_command_fd(f.q, "getfd", args, pipefd[1], 0, box_reply, &second, &err) == 0);
    CHECK(rv_qmp_command_fd(f.q, "getfd", NULL, pipefd[1], 0, box_reply, &refused, &err) < 0);
    CHECK_STR_HAS(err.message, "another descriptor is on its way");
    rv_err_clear(&err);
    close(pipefd[1]);   /* the client sends its own copy */
    fd_box box = { &f, -1 };
    WAIT_FOR(peer_got_fd, &box, 5);
    int64_t id;
    json_object_put(peer_read_command(&f, "stop", &id));
    json_object_put(peer_read_command(&f, "getfd", &id));
    /* The received descriptor is the pipe's write end. */
    CHECK(write(box.fd, "k", 1) == 1);
    char c = 0;
    CHECK(read(pipefd[0], &c, 1) == 1 && c == 'k');
    close(box.fd);
    close(pipefd[0]);
    fake_close(&f);
    CHECK_INT_EQ(refused.calls, 0);
    box_clear(&first);
    box_clear(&second);
}

/* A message just under the bound passes. */
static void test_fake_large_message(void)
{
    fake f;
    rv_qmp_options small = { .max_message = 4096 };
    fake_open(&f, &small, true);
    reply_box box = { 0 };
    rv_err err = { 0 };
    CHECK(rv_qmp_command(f.q, "human-monitor-command", NULL, 0, box_reply, &box, &err) == 0);
    int64_t id;
    json_object_put(peer_read_command(&f, "human-monitor-command", &id));
    char ret[4001];
    ret[0] = '"';
    memset(ret + 1, 'y', 3998);
    ret[3999] = '"';
    ret[4000] = '\0';
    peer_reply(&f, id, ret);    /* 4000 + 11 + id bytes, under 4096 */
    WAIT_FOR(box_done, &box, 5);
    CHECK(box.ret != NULL);
    CHECK_UINT_EQ(strlen(json_object_get_string(box.ret)), 3998);
    box_clear(&box);
    fake_close(&f);
}

/* rv_qmp_free() from inside a reply, with more replies and an event in the
 * same read: the rest complete as aborted, no event arrives, nothing is
 * touched after the free (valgrind and ASan would say). */
static void test_fake_free_in_callback(void)
{
    fake f;
    fake_open(&f, NULL, true);
    reply_box first = { 0 }, second = { 0 };
    rv_err err = { 0 };
    CHECK(rv_qmp_command(f.q, "stop", NULL, 0, box_reply, &first, &err) == 0);
    CHECK(rv_qmp_command(f.q, "cont", NULL, 0, box_reply, &second, &err) == 0);
    int64_t id1, id2;
    json_object_put(peer_read_command(&f, "stop", &id1));
    json_object_put(peer_read_command(&f, "cont", &id2));
    first.free_me = f.q;
    char line[256];
    snprintf(line, sizeof(line),
             "{\"return\": {}, \"id\": %lld}\n{\"event\": \"RESUME\"}\n{\"return\": {}, \"id\": %lld}\n",
             (long long)id1, (long long)id2);
    peer_write(&f, line);
    WAIT_FOR(box_done, &first, 5);
    CHECK(first.ret != NULL);
    CHECK_INT_EQ(second.calls, 1);
    CHECK_INT_EQ(second.err.code, RV_ERR_OPERATION_ABORTED);
    CHECK_STR_HAS(second.err.message, "closed by its owner");
    CHECK_UINT_EQ(f.rec.nevents, 0);
    CHECK(!f.rec.closed);
    spin(0.05);
    f.q = NULL;     /* freed by the callback */
    box_clear(&first);
    box_clear(&second);
    fake_close(&f);

    /* From on_close, with a command pending. */
    fake_open(&f, NULL, true);
    f.rec.free_on_close = true;
    CHECK(rv_qmp_command(f.q, "stop", NULL, 0, box_reply, &first, &err) == 0);
    close(f.peer);
    f.peer = -1;
    WAIT_FOR(rec_is_closed, &f.rec, 5);
    CHECK_INT_EQ(first.calls, 1);
    CHECK_INT_EQ(first.err.code, RV_ERR_OPERATION_FAILED);
    f.q = NULL;
    box_clear(&first);
    fake_close(&f);

    /* Free with commands pending: each completes once, as aborted. */
    fake_open(&f, NULL, false);
    CHECK(rv_qmp_command(f.q, "stop", NULL, 0, box_reply, &first, &err) == 0);
    rv_qmp_free(f.q);
    f.q = NULL;
    CHECK_INT_EQ(first.calls, 1);
    CHECK_INT_EQ(first.err.code, RV_ERR_OPERATION_ABORTED);
    box_clear(&first);
    fake_close(&f);
}

/* Connecting to a socket that never appears fails after the retry time. */
static void test_connect_missing(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/no-such-monitor.sock", dir);
    recorder rec = { 0 };
    rv_qmp_options opts = { .connect_timeout = 0.2 };
    rv_err err = { 0 };
    rv_qmp *q = rv_qmp_connect_unix(loop, path, &opts, &rec_callbacks, &rec, &err);
    CHECK(q != NULL);
    CHECK(!rec.closed);     /* never from inside the call */
    WAIT_FOR(rec_is_closed, &rec, 5);
    CHECK_INT_EQ(rec.close_reason.code, RV_ERR_SYSTEM_ERROR);
    CHECK_STR_HAS(rec.close_reason.message, path);
    CHECK_STR_HAS(rec.close_reason.message, "tried for 0.2 s");
    CHECK_STR_HAS(rec.close_reason.message, "No such file or directory");
    rv_qmp_free(q);
    rec_clear(&rec);

    char long_path[200];
    memset(long_path, 'a', sizeof(long_path) - 1);
    long_path[sizeof(long_path) - 1] = '\0';
    CHECK(rv_qmp_connect_unix(loop, long_path, NULL, &rec_callbacks, &rec, &err) == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_INVALID_ARG);
    rv_err_clear(&err);
}

/* ---------------------------------------------------------------- a real QEMU */

static pid_t qemu_pid = -1;
static char tmpdir[] = "/tmp/rv-test-qmp.XXXXXX";
static bool tmpdir_made;

static void cleanup(void)
{
    if (qemu_pid > 0) {
        kill(qemu_pid, SIGKILL);
        waitpid(qemu_pid, NULL, 0);
        qemu_pid = -1;
    }
    if (tmpdir_made) {
        char path[600];
        const char *names[] = { "qmp.sock", "qemu.log" };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
            unlink(path);
        }
        rmdir(tmpdir);
        tmpdir_made = false;
    }
}

static void show_qemu_log(void)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/qemu.log", tmpdir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    char line[512];
    while (fgets(line, sizeof(line), fp))
        fprintf(stderr, "qemu: %s", line);
    fclose(fp);
}

static void start_qemu(const char *qemu, const char *sock)
{
    char qmp_arg[700], log_path[600];
    snprintf(qmp_arg, sizeof(qmp_arg), "unix:%s,server=on,wait=off", sock);
    snprintf(log_path, sizeof(log_path), "%s/qemu.log", tmpdir);
    char *const argv[] = { (char *)qemu, "-machine", "q35,accel=kvm:tcg", "-nodefaults",
                           "-no-user-config", "-display", "none", "-m", "64", "-S",
                           "-qmp", qmp_arg, NULL };
    qemu_pid = spawn_logged(argv, log_path);
    CHECK(qemu_pid >= 0);
}

static void test_real_qemu(const char *qemu)
{
    char sock[600];
    snprintf(sock, sizeof(sock), "%s/qmp.sock", tmpdir);
    start_qemu(qemu, sock);

    recorder rec = { 0 };
    rv_qmp_options opts = { .connect_timeout = 30, .command_timeout = 30 };
    rv_err err = { 0 };
    rv_qmp *q = rv_qmp_connect_unix(loop, sock, &opts, &rec_callbacks, &rec, &err);
    CHECK(q != NULL);

    /* Issued before the handshake: goes out after qmp_capabilities. */
    reply_box status = { 0 };
    CHECK(rv_qmp_command(q, "query-status", NULL, 0, box_reply, &status, &err) == 0);
    WAIT_FOR(rec_is_ready, &rec, 30);
    if (rec.closed) {
        show_qemu_log();
        check_fail(__FILE__, __LINE__, "monitor closed: %s", rec.close_reason.message);
    }
    json_object *version = NULL, *qemu_version = NULL, *major = NULL, *caps = NULL;
    CHECK(json_object_object_get_ex(rec.greeting, "version", &version));
    CHECK(json_object_object_get_ex(version, "qemu", &qemu_version));
    CHECK(json_object_object_get_ex(qemu_version, "major", &major));
    CHECK(json_object_get_int(major) >= 2);
    CHECK(json_object_object_get_ex(rec.greeting, "capabilities", &caps));
    CHECK(json_object_is_type(caps, json_type_array));

    WAIT_FOR(box_done, &status, 30);
    CHECK(status.ret != NULL);
    const char *state = member_string(status.ret, "status");
    CHECK(state && (strcmp(state, "prelaunch") == 0 || strcmp(state, "paused") == 0));
    CHECK_INT_EQ(member_bool(status.ret, "running"), 0);
    box_clear(&status);

    /* cont: RESUME, running. */
    reply_box box = { 0 };
    command_wait(q, "cont", NULL, &box, 30);
    CHECK(box.ret != NULL);
    box_clear(&box);
    size_t seen = wait_event(&rec, "RESUME", 0, 30) + 1;
    command_wait(q, "query-status", NULL, &box, 30);
    CHECK_STR_EQ(member_string(box.ret, "status"), "running");
    CHECK_INT_EQ(member_bool(box.ret, "running"), 1);
    box_clear(&box);

    /* stop: STOP, paused. */
    command_wait(q, "stop", NULL, &box, 30);
    CHECK(box.ret != NULL);
    box_clear(&box);
    seen = wait_event(&rec, "STOP", seen, 30) + 1;
    command_wait(q, "query-status", NULL, &box, 30);
    CHECK_STR_EQ(member_string(box.ret, "status"), "paused");
    box_clear(&box);

    /* QEMU's own errors: class and description. */
    command_wait(q, "no-such-command", NULL, &box, 30);
    CHECK(box.ret == NULL);
    CHECK_INT_EQ(box.err.code, RV_ERR_OPERATION_FAILED);
    CHECK_STR_EQ(box.err.str1, "CommandNotFound");
    CHECK_STR_HAS(box.err.message, "QEMU command 'no-such-command' failed: ");
    CHECK_STR_HAS(box.err.message, "no-such-command");
    box_clear(&box);
    json_object *bad_args = json_object_new_object();
    json_object_object_add(bad_args, "no-such-argument", json_object_new_int(1));
    command_wait(q, "stop", bad_args, &box, 30);
    CHECK_STR_EQ(box.err.str1, "GenericError");
    CHECK_STR_HAS(box.err.message, "no-such-argument");
    box_clear(&box);

    /* Arguments reach QEMU. */
    json_object *hmp = json_object_new_object();
    json_object_object_add(hmp, "command-line", json_object_new_string("info status"));
    command_wait(q, "human-monitor-command", hmp, &box, 30);
    CHECK(box.ret != NULL);
    CHECK_STR_HAS(json_object_get_string(box.ret), "paused");
    box_clear(&box);

    /* A large reply (the schema, hundreds of KiB) arrives over many reads. */
    command_wait(q, "query-qmp-schema", NULL, &box, 60);
    CHECK(box.ret != NULL);
    CHECK(json_object_is_type(box.ret, json_type_array));
    CHECK(json_object_array_length(box.ret) > 100);
    CHECK(strlen(json_object_to_json_string_ext(box.ret, JSON_C_TO_STRING_PLAIN)) > 64 * 1024);
    box_clear(&box);

    /* Many commands in flight at once: output queued past what the socket
     * takes, replies matched in order. */
    enum { IN_FLIGHT = 3000 };
    reply_box *many = calloc(IN_FLIGHT, sizeof(*many));
    CHECK(many != NULL);
    for (size_t k = 0; k < IN_FLIGHT; k++) {
        json_object *hmp_args = json_object_new_object();
        char line[64];
        snprintf(line, sizeof(line), "print/d %zu", k);
        json_object_object_add(hmp_args, "command-line", json_object_new_string(line));
        CHECK(rv_qmp_command(q, "human-monitor-command", hmp_args, 0, box_reply, &many[k], &err) == 0);
    }
    CHECK_UINT_EQ(rv_qmp_pending(q), IN_FLIGHT);
    WAIT_FOR(box_done, &many[IN_FLIGHT - 1], 60);
    for (size_t k = 0; k < IN_FLIGHT; k++) {
        char expected[64];
        snprintf(expected, sizeof(expected), "%zu\r\n", k);
        CHECK_INT_EQ(many[k].calls, 1);
        CHECK_STR_EQ(json_object_get_string(many[k].ret), expected);
        box_clear(&many[k]);
    }
    free(many);
    CHECK_UINT_EQ(rv_qmp_pending(q), 0);

    /* system_reset: RESET from the host. */
    command_wait(q, "cont", NULL, &box, 30);
    box_clear(&box);
    seen = wait_event(&rec, "RESUME", seen, 30) + 1;
    command_wait(q, "system_reset", NULL, &box, 30);
    CHECK(box.ret != NULL);
    box_clear(&box);
    size_t reset = wait_event(&rec, "RESET", seen, 30);
    CHECK_INT_EQ(member_bool(rec.event_data[reset], "guest"), 0);
    CHECK(rec.event_time[reset] > 1e9);
    seen = reset + 1;

    /* system_powerdown: POWERDOWN (the firmware does not act on it). */
    command_wait(q, "system_powerdown", NULL, &box, 30);
    CHECK(box.ret != NULL);
    box_clear(&box);
    seen = wait_event(&rec, "POWERDOWN", seen, 30) + 1;

    /* quit: SHUTDOWN from the host, then end of file.  The reply may be
     * lost to the close, so only its single completion is checked. */
    CHECK(rv_qmp_command(q, "quit", NULL, 0, box_reply, &box, &err) == 0);
    size_t shutdown = wait_event(&rec, "SHUTDOWN", seen, 30);
    CHECK_INT_EQ(member_bool(rec.event_data[shutdown], "guest"), 0);
    CHECK_STR_EQ(member_string(rec.event_data[shutdown], "reason"), "host-qmp-quit");
    WAIT_FOR(rec_is_closed, &rec, 30);
    CHECK_INT_EQ(box.calls, 1);
    box_clear(&box);
    CHECK_INT_EQ(rec.close_calls, 1);
    CHECK_INT_EQ(rec.close_reason.code, RV_ERR_OPERATION_FAILED);
    CHECK_STR_EQ(rec.close_reason.message, "QEMU monitor closed (end of file)");

    CHECK(rv_qmp_command(q, "query-status", NULL, 0, box_reply, &box, &err) < 0);
    CHECK_INT_EQ(err.code, RV_ERR_OPERATION_INVALID);
    CHECK_STR_HAS(err.message, "cannot send QEMU command 'query-status': the monitor is closed");
    rv_err_clear(&err);
    CHECK_INT_EQ(box.calls, 0);

    int wstatus;
    CHECK(waitpid(qemu_pid, &wstatus, 0) == qemu_pid);
    qemu_pid = -1;
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        show_qemu_log();
        check_fail(__FILE__, __LINE__, "QEMU did not exit with 0 after quit (status 0x%x)", wstatus);
    }
    rv_qmp_free(q);
    rec_clear(&rec);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    loop = ev_default_loop(0);
    CHECK(loop != NULL);
    CHECK(mkdtemp(tmpdir) != NULL);
    tmpdir_made = true;
    atexit(cleanup);

    test_fake_basics();
    test_fake_timeout();
    test_fake_bad_input();
    test_fake_handshake();
    test_fake_event_before_greeting();
    test_fake_fd_passing();
    test_fake_large_message();
    test_fake_free_in_callback();
    test_connect_missing(tmpdir);

    const char *qemu = find_qemu();
    if (!qemu) {
        fprintf(stderr, "SKIP: qemu-system-x86_64 not found (Debian package qemu-system-x86); "
                        "the fake-monitor checks passed\n");
        return CHECK_SKIP;
    }
    test_real_qemu(qemu);
    ev_loop_destroy(loop);
    return 0;
}
