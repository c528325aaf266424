/* The QEMU guest agent: shutdown, reboot, the host name and the clock
 * through it.
 *
 * One short connection per job to the host side of the guest's
 * org.qemu.guest_agent.0 channel (a unix socket QEMU listens on).  The
 * agent speaks JSON lines.  First guest-sync-delimited with a random id:
 * the agent answers it after a 0xFF byte, so whatever an earlier client
 * left unread (or half a line) is skipped up to our answer.  Then the
 * command.  guest-shutdown is not answered when it works: the guest goes
 * away (the socket closes, or QEMU exits), or, for a reboot, nothing is
 * heard; a short wait without an error counts as success, as in libvirtd.
 * A guest that has not opened its end of the channel since it booted is
 * "not connected" at once, as libvirtd says (it waits for no answer).
 * A query (guest-get-host-name) waits for its answer.
 * Every wait has a timeout; a reply is bounded (AGENT_MAX_REPLY).  A
 * shutdown or reboot asked in both modes (--mode acpi,agent) that fails
 * here, whatever the reason, presses the ACPI power button instead, as
 * libvirtd does. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>
#include <json-c/json.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.agent");

#define AGENT_CHANNEL_NAME "org.qemu.guest_agent.0"
/* The longest reply line the agent may send. */
#define AGENT_MAX_REPLY 65536
/* How long the agent has to answer the sync and a command. */
#define AGENT_TIMEOUT 5.0
/* After guest-shutdown: no word in this time means it is under way. */
#define AGENT_SHUTDOWN_WAIT 2.0

typedef enum { AGENT_SYNC, AGENT_COMMAND } agent_phase;

struct qemu_agent_op {
    qemu_dom *d;
    int fd;
    ev_io io;
    ev_timer timer;
    /* The sync again each second until it is answered: a guest's agent
     * that had the port closed (between two connections) may not have
     * seen the first one. */
    ev_timer resync;
    agent_phase phase;
    long long sync_id;
    const char *command;        /* after the sync */
    const char *mode;           /* guest-shutdown's: "powerdown" or "reboot"; NULL: a query */
    bool silent;                /* success is silence (guest-shutdown, guest-suspend-*) */
    const rv_qemu_agent_cmd *cmd;       /* a call's command (rv_qemu_agent_call) */
    /* What the call's command asked to run next (rv_qemu_agent_then). */
    const rv_qemu_agent_cmd *then_cmd;
    json_object *then_args;
    json_object *args;          /* a query's arguments, or NULL */
    /* A query's answer into the job's reply (then op_finish or op_fail). */
    void (*finish)(qemu_agent_op *op, json_object *ret);
    bool acpi_fallback;         /* a failure is not the job's end: ACPI next */
    char *out;                  /* what is left to write */
    size_t out_len, out_off;
    char *in;                   /* the reply line so far */
    size_t in_len;
};

static const char *agent_path(const rv_qemu_domain_def *def)
{
    for (size_t i = 0; def && i < def->dev.nchannels; i++) {
        const rv_qemu_channel *ch = &def->dev.channels[i];
        if (ch->type == RV_QEMU_CHANNEL_UNIX && strcmp(ch->name, AGENT_CHANNEL_NAME) == 0)
            return ch->path;
    }
    return NULL;
}

bool rv_qemu_agent_configured(const rv_qemu_domain_def *def)
{
    for (size_t i = 0; def && i < def->dev.nchannels; i++)
        if (def->dev.channels[i].type == RV_QEMU_CHANNEL_UNIX &&
            strcmp(def->dev.channels[i].name, AGENT_CHANNEL_NAME) == 0)
            return true;
    return false;
}

static void op_free(qemu_agent_op *op)
{
    ev_io_stop(rv_qemu.loop, &op->io);
    ev_timer_stop(rv_qemu.loop, &op->timer);
    ev_timer_stop(rv_qemu.loop, &op->resync);
    if (op->fd >= 0)
        close(op->fd);
    free(op->out);
    free(op->in);
    json_object_put(op->args);
    json_object_put(op->then_args);
    op->d->agent = NULL;
    free(op);
}

/* The op ends and answers its job (err NULL: success). */
static void op_finish(qemu_agent_op *op, const rv_err *err)
{
    qemu_dom *d = op->d;
    op_free(op);
    rv_qemu_job_done(d, err);
}

static void op_fail(qemu_agent_op *op, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void op_fail(qemu_agent_op *op, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, RV_FROM_QEMU, code, fmt, ap);
    va_end(ap);
    RV_INFO("domain '%s': %s%s", op->d->live ? op->d->live->name : "?", err.message,
            op->acpi_fallback ? "; the ACPI power button instead" : "");
    if (op->acpi_fallback) {
        qemu_dom *d = op->d;
        bool reboot = strcmp(op->mode, "reboot") == 0;
        op_free(op);
        rv_qemu_power_acpi(d, reboot);
    } else {
        op_finish(op, &err);
    }
    rv_err_clear(&err);
}

static void op_unresponsive(qemu_agent_op *op, const char *why)
{
    op_fail(op, RV_ERR_AGENT_UNRESPONSIVE, "Guest agent is not responding: %s", why);
}

/* Queue one JSON line to write; the watcher sends it. */
static int op_send(qemu_agent_op *op, json_object *msg)
{
    const char *text =
        json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    if (!buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\n';
    free(op->out);
    op->out = buf;
    op->out_len = len + 1;
    op->out_off = 0;
    ev_io_stop(rv_qemu.loop, &op->io);
    ev_io_set(&op->io, op->fd, EV_READ | EV_WRITE);
    ev_io_start(rv_qemu.loop, &op->io);
    return 0;
}

static void op_timeout_in(qemu_agent_op *op, double seconds)
{
    ev_timer_stop(rv_qemu.loop, &op->timer);
    ev_timer_set(&op->timer, seconds, 0);
    ev_timer_start(rv_qemu.loop, &op->timer);
}

/* The wait for an answer the domain's response timeout allows (none
 * when it says wait forever). */
static void op_timeout(qemu_agent_op *op)
{
    int t = op->d->agent_timeout;
    ev_timer_stop(rv_qemu.loop, &op->timer);
    if (t == RV_QEMU_AGENT_TIMEOUT_BLOCK)
        return;
    op_timeout_in(op, t == RV_QEMU_AGENT_TIMEOUT_DEFAULT ? AGENT_TIMEOUT : t);
}

/* Send {"execute": command, "arguments": args} (args taken; NULL:
 * none); false when the op has ended (failed). */
static bool send_execute(qemu_agent_op *op, const char *command, json_object *args)
{
    json_object *msg = json_object_new_object();
    int rc = msg ? json_object_object_add(msg, "execute", json_object_new_string(command)) : -1;
    if (rc == 0 && args && (rc = json_object_object_add(msg, "arguments", args)) == 0)
        args = NULL;
    if (rc == 0)
        rc = op_send(op, msg);
    json_object_put(args);
    json_object_put(msg);
    if (rc < 0) {
        op_fail(op, RV_ERR_NO_MEMORY, "out of memory");
        return false;
    }
    return true;
}

/* false when the op has ended (failed). */
static bool send_command(qemu_agent_op *op)
{
    json_object *args = NULL;
    if (op->mode) {
        if ((args = json_object_new_object()))
            json_object_object_add(args, "mode", json_object_new_string(op->mode));
    } else if (op->args) {
        args = json_object_get(op->args);
    }
    if (op->mode && !args) {
        op_fail(op, RV_ERR_NO_MEMORY, "out of memory");
        return false;
    }
    if (!send_execute(op, op->command, args))
        return false;
    op->phase = AGENT_COMMAND;
    ev_timer_stop(rv_qemu.loop, &op->resync);
    if (op->silent)
        op_timeout_in(op, AGENT_SHUTDOWN_WAIT);
    else
        op_timeout(op);
    return true;
}

/* guest-get-host-name's answer into the job's reply. */
static void finish_hostname(qemu_agent_op *op, json_object *ret)
{
    json_object *name = NULL;
    if (!json_object_is_type(ret, json_type_object) ||
        !json_object_object_get_ex(ret, "host-name", &name) ||
        !json_object_is_type(name, json_type_string)) {
        op_fail(op, RV_ERR_INTERNAL_ERROR,
                "internal error: malformed return value of guest-get-host-name");
        return;
    }
    rv_deferred *reply = op->d->jobs ? op->d->jobs->reply : NULL;
    rv_domain_get_hostname_ret *out = reply ? rv_deferred_ret(reply) : NULL;
    if (out && !(out->hostname = strdup(json_object_get_string(name)))) {
        op_fail(op, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    op_finish(op, NULL);
}

/* One reply line; false when the op has ended. */
static bool on_line(qemu_agent_op *op, const char *line, size_t len)
{
    json_tokener *tok = json_tokener_new_ex(16);
    json_object *msg = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL;
    json_tokener_free(tok);
    if (!msg || !json_object_is_type(msg, json_type_object)) {
        json_object_put(msg);
        return true;    /* not ours (stale output): skip it */
    }
    json_object *ret = NULL, *error = NULL;
    bool has_ret = json_object_object_get_ex(msg, "return", &ret);
    bool has_error = json_object_object_get_ex(msg, "error", &error);
    bool alive = true;
    if (op->phase == AGENT_SYNC) {
        if (has_ret && json_object_is_type(ret, json_type_int) &&
            json_object_get_int64(ret) == op->sync_id)
            alive = send_command(op);
    } else if (has_ret && json_object_is_type(ret, json_type_int) &&
               json_object_get_int64(ret) == op->sync_id) {
        /* a repeated sync's answer, after the first: not the command's */
    } else if (has_error) {
        json_object *desc = NULL, *cls = NULL;
        json_object_object_get_ex(error, "desc", &desc);
        if (op->cmd && op->cmd->missing_ok && json_object_object_get_ex(error, "class", &cls) &&
            strcmp(json_object_get_string(cls), "CommandNotFound") == 0) {
            op->finish(op, NULL);
            json_object_put(msg);
            return false;
        }
        op_fail(op, RV_ERR_INTERNAL_ERROR,
                "internal error: unable to execute QEMU agent command '%s': %s", op->command,
                desc ? json_object_get_string(desc) : "unknown error");
        alive = false;
    } else if (has_ret) {
        if (op->silent)
            op_finish(op, NULL);
        else
            op->finish(op, ret);
        alive = false;
    }
    json_object_put(msg);
    return alive;
}

static void on_readable(qemu_agent_op *op)
{
    char chunk[4096];
    ssize_t n = read(op->fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* The guest's side went away: after guest-shutdown that is it
         * doing what was asked. */
        if (op->phase == AGENT_COMMAND && op->silent)
            op_finish(op, NULL);
        else
            op_unresponsive(op, "QEMU guest agent is not connected");
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)chunk[i];
        if (c == 0xFF) {        /* the sync's delimiter: anything before is stale */
            op->in_len = 0;
        } else if (c == '\n') {
            if (!on_line(op, op->in, op->in_len))
                return;
            op->in_len = 0;
        } else if (op->in_len == AGENT_MAX_REPLY) {
            op_fail(op, RV_ERR_INTERNAL_ERROR,
                    "internal error: guest agent reply longer than %d bytes", AGENT_MAX_REPLY);
            return;
        } else {
            op->in[op->in_len++] = (char)c;
        }
    }
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    qemu_agent_op *op = w->data;
    if (revents & EV_WRITE) {
        /* MSG_NOSIGNAL: a guest gone away is an error here, not a SIGPIPE. */
        ssize_t n = send(op->fd, op->out + op->out_off, op->out_len - op->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            if (op->phase == AGENT_COMMAND && op->silent)
                op_finish(op, NULL);
            else
                op_unresponsive(op, "QEMU guest agent is not connected");
            return;
        }
        if (n > 0 && (op->out_off += (size_t)n) == op->out_len) {
            ev_io_stop(rv_qemu.loop, &op->io);
            ev_io_set(&op->io, op->fd, EV_READ);
            ev_io_start(rv_qemu.loop, &op->io);
        }
    }
    if (revents & EV_READ)
        on_readable(op);
}

/* guest-sync-delimited with the op's id; false when the op has ended. */
static bool send_sync(qemu_agent_op *op)
{
    json_object *args = json_object_new_object();
    if (!args) {
        op_fail(op, RV_ERR_NO_MEMORY, "out of memory");
        return false;
    }
    json_object_object_add(args, "id", json_object_new_int64(op->sync_id));
    return send_execute(op, "guest-sync-delimited", args);
}

static void on_resync(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_agent_op *op = w->data;
    if (op->phase == AGENT_SYNC && op->out_off == op->out_len)
        send_sync(op);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_agent_op *op = w->data;
    if (op->phase == AGENT_COMMAND && op->silent)
        op_finish(op, NULL);    /* no error in time: the guest is at it */
    else
        op_unresponsive(op, "Guest agent not available for now");
}

/* Begin the exchange: mode NULL for the query command (with cmd_args,
 * taken, and its finisher), else guest-shutdown with that mode (and
 * acpi_fallback: a failure presses the power button instead). */
static void agent_begin(qemu_dom *d, const char *command, const char *mode, bool acpi_fallback,
                        json_object *cmd_args, void (*finish)(qemu_agent_op *op, json_object *ret))
{
    rv_err err = { 0 };
    const char *path = agent_path(d->live);
    qemu_agent_op *op = calloc(1, sizeof *op);
    if (!op || !(op->in = malloc(AGENT_MAX_REPLY))) {
        free(op);
        json_object_put(cmd_args);
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        rv_qemu_job_done(d, &err);
        rv_err_clear(&err);
        return;
    }
    op->d = d;
    op->fd = -1;
    op->command = command;
    op->mode = mode;
    op->silent = mode != NULL;
    op->args = cmd_args;
    op->finish = finish;
    op->acpi_fallback = acpi_fallback;
    d->agent = op;
    ev_io_init(&op->io, on_io, -1, EV_READ);
    op->io.data = op;
    ev_timer_init(&op->timer, on_timer, AGENT_TIMEOUT, 0);
    op->timer.data = op;
    ev_timer_init(&op->resync, on_resync, 1.0, 1.0);
    op->resync.data = op;

    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (!path || strlen(path) >= sizeof addr.sun_path) {
        op_fail(op, RV_ERR_ARGUMENT_UNSUPPORTED,
                "argument unsupported: QEMU guest agent is not configured");
        return;
    }
    if (d->agent_unopened) {
        op_unresponsive(op, "QEMU guest agent is not connected");
        return;
    }
    strcpy(addr.sun_path, path);
    op->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* QEMU listens already: the connect is immediate (EAGAIN: its
     * backlog is full, another client holds the agent). */
    if (op->fd < 0 ||
        (connect(op->fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS)) {
        op_unresponsive(op, "QEMU guest agent is not connected");
        return;
    }
    unsigned int rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned int)random();
    op->sync_id = (long long)(rnd & 0x7fffffff) + 1;
    op->phase = AGENT_SYNC;
    if (send_sync(op)) {
        op_timeout(op);
        ev_timer_start(rv_qemu.loop, &op->resync);
    }
}

bool rv_qemu_agent_abandon(qemu_dom *d)
{
    qemu_agent_op *op = d->agent;
    if (!op)
        return false;
    bool sent = op->phase == AGENT_COMMAND && op->silent;
    op_free(op);
    return sent;
}

void rv_qemu_agent_power(qemu_dom *d, bool reboot, bool acpi_fallback)
{
    agent_begin(d, "guest-shutdown", reboot ? "reboot" : "powerdown", acpi_fallback, NULL, NULL);
}

void rv_qemu_agent_hostname(qemu_dom *d)
{
    agent_begin(d, "guest-get-host-name", NULL, false, NULL, finish_hostname);
}

/* guest-get-time's answer (nanoseconds since the epoch) into the reply. */
static void finish_get_time(qemu_agent_op *op, json_object *ret)
{
    if (!json_object_is_type(ret, json_type_int)) {
        op_fail(op, RV_ERR_INTERNAL_ERROR,
                "internal error: malformed return value of guest-get-time");
        return;
    }
    long long ns = json_object_get_int64(ret);
    rv_deferred *reply = op->d->jobs ? op->d->jobs->reply : NULL;
    rv_domain_get_time_ret *out = reply ? rv_deferred_ret(reply) : NULL;
    if (out) {
        /* Floor division: a clock before 1970 keeps nseconds in range. */
        out->seconds = ns / 1000000000 - (ns % 1000000000 < 0);
        out->nseconds = (unsigned int)(ns - out->seconds * 1000000000LL);
    }
    op_finish(op, NULL);
}

static void finish_set_time(qemu_agent_op *op, json_object *ret)
{
    (void)ret;
    op_finish(op, NULL);
}

void rv_qemu_agent_get_time(qemu_dom *d)
{
    agent_begin(d, "guest-get-time", NULL, false, NULL, finish_get_time);
}

void rv_qemu_agent_set_time(qemu_dom *d, const char *ns)
{
    json_object *args = NULL;
    if (ns && (args = json_object_new_object()))
        json_object_object_add(args, "time", json_object_new_int64(strtoll(ns, NULL, 10)));
    if (ns && !args) {
        rv_err err = { 0 };
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        rv_qemu_job_done(d, &err);
        rv_err_clear(&err);
        return;
    }
    agent_begin(d, "guest-set-time", NULL, false, args, finish_set_time);
}

/* ================================================================ calls */

/* A call's command answered: its finisher fills the call's result, or
 * names the next command of the same call (rv_qemu_agent_then). */
static void finish_call(qemu_agent_op *op, json_object *ret)
{
    rv_err err = { 0 };
    qemu_dom *d = op->d;
    rv_deferred *reply = d->jobs ? d->jobs->reply : NULL;
    if (op->cmd->finish && op->cmd->finish(d, ret, reply ? rv_deferred_ret(reply) : NULL, &err) < 0) {
        op_finish(op, &err);
        rv_err_clear(&err);
        return;
    }
    const rv_qemu_agent_cmd *next = op->then_cmd;
    json_object *next_args = op->then_args;
    op->then_args = NULL;
    op_free(op);
    if (next)
        rv_qemu_agent_call_json(d, next, next_args);
    else
        rv_qemu_job_done(d, NULL);
}

void rv_qemu_agent_then(qemu_dom *d, const rv_qemu_agent_cmd *cmd, json_object *args)
{
    qemu_agent_op *op = d->agent;
    json_object_put(op->then_args);
    op->then_cmd = cmd;
    op->then_args = args;
}

void rv_qemu_agent_call_json(qemu_dom *d, const rv_qemu_agent_cmd *cmd, json_object *args)
{
    agent_begin(d, cmd->command, NULL, false, args, finish_call);
    if (d->agent) {
        d->agent->cmd = cmd;
        d->agent->silent = cmd->silent;
    }
}

void rv_qemu_agent_call(qemu_dom *d, const rv_qemu_agent_cmd *cmd, const char *args_json)
{
    json_object *args = NULL;
    if (args_json && !(args = json_tokener_parse(args_json))) {
        rv_err err = { 0 };
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                   "internal error: bad arguments for %s", cmd->command);
        rv_qemu_job_done(d, &err);
        rv_err_clear(&err);
        return;
    }
    rv_qemu_agent_call_json(d, cmd, args);
}
