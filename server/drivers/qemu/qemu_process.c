/* QEMU processes and the per-domain jobs that change them, all on the
 * daemon's loop: nothing here waits.  A job begins from the domain's pump
 * (an immediate timer, so a job never begins inside another's completion),
 * waits on QMP replies, the process's exit or a timer, and ends with
 * job_done(), which answers the client's deferred call.
 *
 * A process ends in process_gone(), whatever ended it (destroy, the guest,
 * a crash, a failed start): the monitor is let go, the runtime files are
 * removed, the domain is shut off with the reason chosen when its stop
 * began, and the job that was waiting for it is answered. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/safe_open.h"
#include "common/util.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_link.h"
#include "server/drivers/qemu/qemu_network.h"
#include "server/drivers/qemu/qemu_storage.h"

RV_LOG_CATEGORY("drivers.qemu.process");

/* Destroy: after "quit", SIGTERM at QUIT_WAIT s, SIGKILL at TERM_WAIT s. */
#define QUIT_WAIT 3.0
#define TERM_WAIT 10.0
#define STOP_POLL 0.05
/* How long QEMU may take to open its monitor socket. */
#define MONITOR_CONNECT_TIMEOUT 30.0

static void on_qmp_ready(rv_qmp *qmp, json_object *greeting, void *opaque);
/* The unix channel sockets a start chose (QEMU leaves them when killed). */
static void remove_channel_sockets(const qemu_dom *d)
{
    if (!d->live)
        return;
    char *prefix = rv_qemu_path(rv_qemu.run_dir, d->live->name, ".channel.");
    for (size_t i = 0; prefix && i < d->live->dev.nchannels; i++) {
        const char *path = d->live->dev.channels[i].path;
        if (path && strncmp(path, prefix, strlen(prefix)) == 0)
            unlink(path);
    }
    free(prefix);
}

/* A lifecycle event that goes with no state change of remvirtd's own. */
static void emit_event(qemu_dom *d, int event, int detail)
{
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_lifecycle_event(&rv_qemu_driver, &ref, event, detail);
    free(ref.name);
}

static void on_qmp_event(rv_qmp *qmp, const char *name, json_object *data, double ts,
                         void *opaque);
static void on_qmp_close(rv_qmp *qmp, const rv_err *reason, void *opaque);

static const rv_qmp_callbacks monitor_callbacks = {
    .on_ready = on_qmp_ready,
    .on_event = on_qmp_event,
    .on_close = on_qmp_close,
};

/* For commands whose answer changes nothing (the process's exit or the
 * events that follow say what happened). */
static void ignore_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    (void)ret;
    (void)opaque;
    if (err)
        RV_DEBUG("QEMU command failed: %s", err->message ? err->message : "");
}

static const char *dom_name(const qemu_dom *d)
{
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    return def ? def->name : "(gone)";
}

/* ================================================================ jobs */

static void on_pump(struct ev_loop *loop, ev_timer *w, int revents);

static void pump_soon(qemu_dom *d)
{
    if (!ev_is_active(&d->pump)) {
        ev_timer_init(&d->pump, on_pump, 0., 0.);
        d->pump.data = d;
        ev_timer_start(rv_qemu.loop, &d->pump);
    }
}

/* ================================================================ calls waiting for the monitor */

/* How long a call may wait for a start, a stop or a reconnection to end
 * (libvirtd's calls wait as long for the domain's job). */
#define MONITOR_WAIT 30.0

typedef struct monitor_waiter {
    rv_deferred *reply;
    double deadline;
    struct monitor_waiter *next;
} monitor_waiter;

/* Between two states (starting, stopping, its monitor connecting): a
 * call now would see neither the running guest nor the stopped one. */
static bool in_transition(const qemu_dom *d)
{
    return rv_qemu_dom_active(d) &&
           (d->starting || d->stopping || d->pid <= 0 || !d->qmp || !rv_qmp_is_ready(d->qmp));
}

static void on_monitor_wait_timeout(struct ev_loop *loop, ev_timer *w, int revents);

static void arm_monitor_wait(qemu_dom *d)
{
    ev_timer_stop(rv_qemu.loop, &d->monitor_wait);
    if (!d->monitor_waiters)
        return;
    double next = d->monitor_waiters->deadline;
    for (monitor_waiter *x = d->monitor_waiters; x; x = x->next)
        if (x->deadline < next)
            next = x->deadline;
    double in = next - ev_now(rv_qemu.loop);
    ev_timer_init(&d->monitor_wait, on_monitor_wait_timeout, in > 0 ? in : 0., 0.);
    d->monitor_wait.data = d;
    ev_timer_start(rv_qemu.loop, &d->monitor_wait);
}

int rv_qemu_need_monitor(qemu_dom *d, rv_err *err)
{
    if (!rv_qemu_dom_active(d))
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if (!in_transition(d))
        return 0;
    return rv_qemu_wait_turn(d, err);
}

int rv_qemu_wait_turn(qemu_dom *d, rv_err *err)
{
    monitor_waiter *w = calloc(1, sizeof(*w));
    if (!w)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    if (!(w->reply = rv_driver_defer(err))) {
        free(w);
        return -1;
    }
    w->deadline = ev_now(rv_qemu.loop) + MONITOR_WAIT;
    w->next = d->monitor_waiters;
    d->monitor_waiters = w;
    arm_monitor_wait(d);
    return RV_DEFERRED;
}

static void wake_monitor_waiters(qemu_dom *d);

void rv_qemu_turn_over(qemu_dom *d)
{
    wake_monitor_waiters(d);
}

/* The waiting calls run again once the domain is settled: they find it
 * running with its monitor, or shut off. */
static void wake_monitor_waiters(qemu_dom *d)
{
    if (in_transition(d) || !d->monitor_waiters)
        return;
    monitor_waiter *list = d->monitor_waiters;
    d->monitor_waiters = NULL;
    ev_timer_stop(rv_qemu.loop, &d->monitor_wait);
    while (list) {
        monitor_waiter *w = list;
        list = w->next;
        rv_deferred_rerun(w->reply);
        free(w);
    }
}

/* Those waiting since before now - MONITOR_WAIT (or all, when remvirtd
 * stops: late NULL) get an error. */
static void fail_monitor_waiters(qemu_dom *d, const rv_err *late)
{
    rv_err err = { 0 };
    double now = ev_now(rv_qemu.loop);
    for (monitor_waiter **p = &d->monitor_waiters; *p;) {
        monitor_waiter *w = *p;
        if (late && w->deadline > now) {
            p = &w->next;
            continue;
        }
        *p = w->next;
        if (late)
            rv_deferred_finish(w->reply, late);
        else {
            rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: remvirtd is stopping");
            rv_deferred_finish(w->reply, &err);
            rv_err_clear(&err);
        }
        free(w);
    }
    arm_monitor_wait(d);
}

static void on_monitor_wait_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_dom *d = w->data;
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_TIMEOUT,
               "Timed out during operation: domain '%s' is still %s", dom_name(d),
               d->starting ? "starting" : d->stopping ? "stopping"
                                                      : "connecting to its QEMU monitor");
    fail_monitor_waiters(d, &err);
    rv_err_clear(&err);
}

/* Queue a job; path is the job's own (freed with it).  The job (it
 * begins from the loop, later), or NULL: out of memory, reply answered. */
static qemu_job *job_add(qemu_dom *d, qemu_job_kind kind, unsigned int flags, char *path,
                         rv_deferred *reply, rv_nonnull_domain *ret_dom)
{
    /* A client's job on a domain being migrated: refused (destroy,
     * suspend and the migration's own steps go on, as with libvirtd). */
    rv_err locked = { 0 };
    if (kind == QJOB_SUSPEND && reply && rv_qemu_migrate_suspend(d, reply))
        return NULL;
    if (reply && kind != QJOB_DESTROY && kind != QJOB_SUSPEND && kind != QJOB_MIGRATE_OUT &&
        rv_qemu_migration_locked(d, &locked)) {
        free(path);
        rv_deferred_finish(reply, &locked);
        rv_err_clear(&locked);
        return NULL;
    }
    qemu_job *job = calloc(1, sizeof(*job));
    if (!job) {
        free(path);
        rv_err err = { 0 };
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        if (reply)
            rv_deferred_finish(reply, &err);
        rv_err_clear(&err);
        return NULL;
    }
    job->kind = kind;
    job->flags = flags;
    job->path = path;
    job->reply = reply;
    job->ret_dom = ret_dom;
    *d->jobs_tail = job;
    d->jobs_tail = &job->next;
    pump_soon(d);
    return job;
}

qemu_job *rv_qemu_job_add(qemu_dom *d, qemu_job_kind kind, unsigned int flags, rv_deferred *reply,
                          rv_nonnull_domain *ret_dom)
{
    return job_add(d, kind, flags, NULL, reply, ret_dom);
}

static void autodestroy_one(void *obj, void *ctx)
{
    qemu_dom *d = obj;
    if (d->autodestroy == ctx) {
        d->autodestroy = NULL;
        RV_INFO("domain '%s': destroyed with the connection that started it", dom_name(d));
        rv_qemu_job_add(d, QJOB_DESTROY, 0, NULL, NULL);
    }
    for (qemu_job *job = d->jobs; job; job = job->next)
        if (job->kind == QJOB_START && job->owner == ctx)
            job->owner = NULL;
}

void rv_qemu_autodestroy(const rv_driver_conn *c)
{
    rv_dom_list_each(&rv_qemu.doms, autodestroy_one, (void *)c);
}

void rv_qemu_agent_job(qemu_dom *d, const rv_qemu_agent_cmd *cmd, const char *args,
                       rv_deferred *reply)
{
    char *copy = args ? strdup(args) : NULL;
    if (args && !copy) {
        rv_qemu_finish_error(reply, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    qemu_job *job = job_add(d, QJOB_AGENT_CALL, 0, copy, reply, NULL);
    if (job)
        job->agent_cmd = cmd;
}

void rv_qemu_job_add_path(qemu_dom *d, qemu_job_kind kind, unsigned int flags, const char *path,
                          rv_deferred *reply)
{
    char *copy = path ? strdup(path) : NULL;
    if (path && !copy) {
        rv_err err = { 0 };
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        rv_deferred_finish(reply, &err);
        rv_err_clear(&err);
        return;
    }
    job_add(d, kind, flags, copy, reply, NULL);
}

/* The head job is over: answer it (success when err is NULL) and let the
 * next one begin. */
static void job_done(qemu_dom *d, const rv_err *err)
{
    qemu_job *job = d->jobs;
    if (!job || !d->job_busy) {
        RV_ERROR("internal error: domain '%s' finished a job it was not running", dom_name(d));
        return;
    }
    d->jobs = job->next;
    if (!d->jobs)
        d->jobs_tail = &d->jobs;
    d->job_busy = false;
    if (job->kind == QJOB_START && !err && (job->flags & RV_DOMAIN_START_AUTODESTROY)) {
        /* Its connection closed while it started: it goes at once. */
        d->autodestroy = job->owner;
        if (!job->owner)
            rv_qemu_job_add(d, QJOB_DESTROY, 0, NULL, NULL);
    }
    if (job->reply) {
        /* Starts answer with the domain as it is now (its id). */
        if (!err && job->ret_dom) {
            rv_dom_ref ref = { 0 };
            if (rv_qemu_dom_ref(d, &ref) == 0)
                rv_dom_ref_to_wire(job->ret_dom, &ref);
        }
        rv_deferred_finish(job->reply, err ? err : rv_err_is_set(&job->fail) ? &job->fail : NULL);
    } else if (err) {
        RV_WARN("domain '%s': %s", dom_name(d), err->message);
    }
    rv_err_clear(&job->fail);
    free(job->path);
    free(job);
    pump_soon(d);
}

void rv_qemu_job_done(qemu_dom *d, const rv_err *err)
{
    job_done(d, err);
}

static void job_fail(qemu_dom *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void job_fail(qemu_dom *d, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, RV_FROM_QEMU, code, fmt, ap);
    va_end(ap);
    job_done(d, &err);
    rv_err_clear(&err);
}

static void job_begin(qemu_dom *d, qemu_job *job);

static void on_pump(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    qemu_dom *d = w->data;
    wake_monitor_waiters(d);
    if (d->job_busy)
        return;
    if (d->jobs) {
        d->job_busy = true;
        job_begin(d, d->jobs);
    } else {
        rv_qemu_dom_forget_if_gone(d);
    }
}

/* ================================================================ the process */

static bool process_exists(const qemu_dom *d)
{
    if (d->pid <= 0)
        return false;
    if (d->our_child)
        return !d->reaped;
    return kill(d->pid, 0) == 0 || errno != ESRCH;
}

/* Whatever a start from a save image had under way ends. */
static void restore_over(qemu_dom *d)
{
    rv_qemu_migration_wait_stop(d);
    d->migrate_done = NULL;
    d->restoring = false;
    d->restore_committed = false;
    rv_qemu_sync_forget(&d->restore_sync);
    rv_qemu_sync_forget(&d->status_sync);
    free(d->restore_managed);
    d->restore_managed = NULL;
}

static void on_runtime_gone(rv_qemu_sync *s, int error)
{
    (void)error;    /* (logged by the store) */
    qemu_dom *d = s->data;
    rv_err err = d->gone_err;
    d->gone_err = (rv_err){ 0 };
    /* (CONFIRM3's: the source's QEMU and files gone, not answered) */
    if (d->jobs && d->jobs->kind == QJOB_DESTROY && (d->jobs->flags & QJOB_MIGRATE_IN))
        rv_crash_point("migrate-confirm", 2);
    job_done(d, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
}

/* name's runtime files go, and the job under way (answer: err, taken) is
 * answered once they are gone: a client that sees the domain off finds
 * none, nor does a remvirtd restarted after the answer. */
static void answer_when_gone(qemu_dom *d, const char *name, bool answer, rv_err *err)
{
    rv_qemu_sync_forget(&d->status_sync);
    d->status_sync.done = on_runtime_gone;
    d->status_sync.data = d;
    if (rv_qemu_remove_runtime(name, answer ? &d->status_sync : NULL) == 0 && answer) {
        d->gone_err = *err;
        *err = (rv_err){ 0 };
        return;
    }
    if (answer)
        job_done(d, rv_err_is_set(err) ? err : NULL);
    rv_err_clear(err);
}

/* The process is gone: everything about it goes, and the domain is off. */
static void process_gone(qemu_dom *d)
{
    ev_timer_stop(rv_qemu.loop, &d->stop_timer);
    rv_qmp *qmp = d->qmp;
    d->qmp = NULL;          /* its callbacks now know they are stale */
    const char *name = dom_name(d);
    bool failed_start = d->starting;
    RV_INFO("domain '%s' (pid %d) has stopped%s", name, (int)d->pid,
            failed_start ? " while starting" : "");
    rv_qemu_save_abandon(d);
    rv_qemu_blockjob_domain_gone(d);
    rv_qemu_backup_domain_gone(d);
    bool agent_done = rv_qemu_agent_abandon(d);
    restore_over(d);
    rv_qemu_migrate_gone(d);
    char *gone_name = strdup(name);    /* (live goes below) */
    remove_channel_sockets(d);
    /* A destroy makes QEMU report a host shutdown, which libvirtd 9.0
     * passes on before "Stopped Destroyed" (but not after the guest's own
     * shutdown).  Sent from here, after the process, so that it cannot be
     * lost to the order in which its exit and its last words are seen. */
    if (!failed_start && d->stop_detail == RV_EVENT_STOPPED_DESTROYED && d->state != RV_DOMAIN_SHUTDOWN)
        emit_event(d, RV_EVENT_SHUTDOWN, RV_EVENT_SHUTDOWN_HOST);
    if (!failed_start)
        rv_qemu_dom_set_state(d, RV_DOMAIN_SHUTOFF, d->stop_reason, RV_EVENT_STOPPED,
                              d->stop_detail);
    else
        rv_qemu_dom_set_state(d, RV_DOMAIN_SHUTOFF, RV_DOMAIN_SHUTOFF_FAILED, -1, 0);

    /* The job waiting for this (if one was under way) is answered now. */
    qemu_job *job = d->job_busy ? d->jobs : NULL;
    rv_err err = { 0 };
    if (failed_start) {
        /* (QEMU's refusal of a command, worded as libvirtd's, is the
         * whole reason: libvirtd adds no log either) */
        static const char qmp_refusal[] = "internal error: unable to execute QEMU command '";
        bool refused = d->start_err.message &&
                       strncmp(d->start_err.message, qmp_refusal, sizeof(qmp_refusal) - 1) == 0;
        char *tail = refused ? NULL : rv_qemu_log_tail(name, d->log_start);
        rv_err_set(&err, d->start_err.domain ? d->start_err.domain : RV_FROM_QEMU,
                   d->start_err.code ? d->start_err.code : RV_ERR_INTERNAL_ERROR, "%s%s%s",
                   d->start_err.message ? d->start_err.message : "QEMU exited while starting",
                   tail && *tail ? ": " : "", tail ? tail : "");
        free(tail);
    } else if (job && job->kind != QJOB_DESTROY && !agent_done &&
               !(job->kind == QJOB_SAVE && d->stop_reason == RV_DOMAIN_SHUTOFF_SAVED) &&
               !(job->kind == QJOB_DUMP && d->stop_reason == RV_DOMAIN_SHUTOFF_CRASHED)) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                   "operation failed: domain is not running");
    }
    rv_err_clear(&d->start_err);
    d->autodestroy = NULL;
    d->starting = false;
    d->stopping = false;
    d->guest_shutdown = false;
    d->fake_reboot = false;
    d->restarting = false;
    d->balloon_kib = 0;
    rv_qemu_thresholds_clear(d);
    d->pid = 0;
    d->start_time = 0;
    rv_qemu_cpu_files_close(d);
    d->id = -1;
    d->reaped = false;
    d->vcpus_unplugged = false;
    d->sent_term = d->sent_kill = false;
    free(d->monitor_path);
    d->monitor_path = NULL;
    /* The name in the messages above came from live: it goes last. */
    answer_when_gone(d, gone_name ? gone_name : "", job != NULL, &err);
    free(gone_name);
    rv_qemu_domain_free(d->live);
    d->live = NULL;
    rv_qmp_free(qmp);
    pump_soon(d);
}

static void on_stop_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    qemu_dom *d = w->data;
    if (!process_exists(d)) {
        process_gone(d);
        return;
    }
    double waited = ev_now(loop) - d->stop_started;
    if (waited >= QUIT_WAIT && !d->sent_term) {
        RV_INFO("domain '%s': sending SIGTERM to pid %d", dom_name(d), (int)d->pid);
        kill(d->pid, SIGTERM);
        d->sent_term = true;
    } else if (waited >= TERM_WAIT && !d->sent_kill) {
        if (d->graceful && d->jobs && d->job_busy && d->jobs->kind == QJOB_DESTROY) {
            /* Graceful: give up rather than kill; the domain runs on. */
            ev_timer_stop(loop, w);
            d->stopping = false;
            d->sent_term = false;
            job_fail(d, RV_ERR_OPERATION_FAILED,
                     "operation failed: failed to terminate process %d with SIGTERM", (int)d->pid);
            return;
        }
        RV_WARN("domain '%s': pid %d ignored SIGTERM: sending SIGKILL", dom_name(d), (int)d->pid);
        kill(d->pid, SIGKILL);
        d->sent_kill = true;
    }
}

/* Make the process go: "quit" on the monitor, then SIGTERM, then SIGKILL.
 * reason/detail say why, for the state and the STOPPED event. */
static void begin_stop(qemu_dom *d, int reason, int detail, bool graceful, bool kill_now)
{
    if (!d->stopping) {
        d->stopping = true;
        d->stop_reason = reason;
        d->stop_detail = detail;
        d->graceful = graceful;
        d->stop_started = ev_now(rv_qemu.loop);
        rv_err err = { 0 };
        if (!kill_now && d->qmp && rv_qmp_is_ready(d->qmp))
            rv_qmp_command(d->qmp, "quit", NULL, QUIT_WAIT, ignore_reply, NULL, &err);
        rv_err_clear(&err);
    }
    if (kill_now && d->pid > 0 && !d->sent_kill) {
        kill(d->pid, SIGKILL);
        d->sent_kill = d->sent_term = true;
    }
    if (!ev_is_active(&d->stop_timer)) {
        ev_timer_init(&d->stop_timer, on_stop_timer, 0., STOP_POLL);
        d->stop_timer.data = d;
        ev_timer_start(rv_qemu.loop, &d->stop_timer);
    }
}

void rv_qemu_stop_process(qemu_dom *d, int reason, int detail)
{
    begin_stop(d, reason, detail, false, false);
}

/* A start went wrong: remember why, kill what was started, and answer
 * once it is gone (or now, when nothing was started). */
static void start_failed(qemu_dom *d, const rv_err *why)
{
    if (!rv_err_is_set(&d->start_err))
        rv_err_set(&d->start_err, why->domain, why->code, "%s",
                   why->message ? why->message : "QEMU failed to start");
    if (d->pid > 0) {
        begin_stop(d, RV_DOMAIN_SHUTOFF_FAILED, RV_EVENT_STOPPED_FAILED, false, true);
        return;
    }
    rv_err err = d->start_err;
    d->start_err = (rv_err){ 0 };
    d->starting = false;
    restore_over(d);
    rv_qemu_migtunnel_gone(d);      /* (its pipe: no process to reap) */
    char *name = strdup(dom_name(d));
    rv_qemu_domain_free(d->live);
    d->live = NULL;
    d->id = -1;
    rv_qemu_dom_set_state(d, RV_DOMAIN_SHUTOFF, RV_DOMAIN_SHUTOFF_FAILED, -1, 0);
    answer_when_gone(d, name ? name : "", true, &err);
    free(name);
    rv_err_clear(&err);
}

static bool child_of(const void *obj, const void *pid)
{
    const qemu_dom *d = obj;
    return d->our_child && d->pid == *(const pid_t *)pid && !d->reaped;
}

void rv_qemu_process_exited(pid_t pid, int st)
{
    qemu_dom *d = rv_dom_list_find(&rv_qemu.doms, child_of, &pid);
    if (d) {
        RV_INFO("domain '%s': QEMU (pid %d) %s %d", dom_name(d), (int)d->pid,
                WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        d->reaped = true;
        if (d->starting) {
            rv_err err = { 0 };
            rv_err_set(&err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                       "internal error: QEMU exited while starting up");
            start_failed(d, &err);
            rv_err_clear(&err);
        } else if (!d->stopping) {
            begin_stop(d, d->guest_shutdown ? RV_DOMAIN_SHUTOFF_SHUTDOWN : RV_DOMAIN_SHUTOFF_CRASHED,
                       d->guest_shutdown ? RV_EVENT_STOPPED_SHUTDOWN : RV_EVENT_STOPPED_FAILED,
                       false, false);
        }
        process_gone(d);
    }
}

unsigned long long rv_qemu_dom_memory_kib(const qemu_dom *d)
{
    return d->balloon_kib ? d->balloon_kib : rv_qemu_dom_def(d)->current_memory_kib;
}

/* ================================================================ the monitor */

static qemu_dom *dom_of(rv_qmp *qmp, void *opaque)
{
    qemu_dom *d = opaque;
    /* A reply or close from a monitor the domain has let go of. */
    return d->qmp == qmp ? d : NULL;
}

/* A job's QMP command answered: on success the job's state change, else
 * its error. */
typedef void (*job_step_fn)(qemu_dom *d);

static void status_error(const qemu_dom *d, int error, rv_err *err);

static void on_started_recorded(rv_qemu_sync *s, int error)
{
    qemu_dom *d = s->data;
    if (d->stopping || !d->jobs || d->jobs->kind != QJOB_START)
        return;
    if (error) {
        rv_err e = { 0 };
        status_error(d, error, &e);
        RV_WARN("domain '%s': %s", dom_name(d), e.message);
        rv_err_clear(&e);
    }
    /* (an incoming migration's: its QEMU listens, PREPARE3 not answered) */
    rv_crash_point(d->jobs->flags & QJOB_MIGRATE_IN ? "migrate-prepare" : "start", 1);
    job_done(d, NULL);
}

static void on_started(qemu_dom *d)
{
    d->starting = false;
    bool restored = d->restoring;
    bool paused = restored ? !d->restore_run : d->jobs->flags & RV_DOMAIN_START_PAUSED;
    if (d->jobs->flags & QJOB_MIGRATE_IN) {
        /* It waits for the stream, paused, until FINISH3 (qemu_migrate.c). */
        RV_INFO("domain '%s' waits for its incoming migration (pid %d, id %d)", dom_name(d),
                (int)d->pid, d->id);
        d->agent_unopened = false;
        d->migrate_in = true;
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_MIGRATION, -1, 0);
        emit_event(d, RV_EVENT_STARTED, RV_EVENT_STARTED_MIGRATED);
        paused = true;
        restored = true;
        goto record;
    }
    RV_INFO("domain '%s' %s (pid %d, id %d, %s)", dom_name(d), restored ? "restored" : "started",
            (int)d->pid, d->id,
            rv_qemu.kvm && d->live->accel == RV_QEMU_VIRT_KVM ? "KVM" : "TCG");
    rv_qemu_events_started(d);
    /* (a restored guest has its port open as it was saved) */
    d->agent_unopened = !restored;
    /* libvirtd reports the "cont" that lets the CPUs run first. */
    if (!paused && !restored)
        emit_event(d, RV_EVENT_RESUMED, RV_EVENT_RESUMED_UNPAUSED);
    rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING,
                          restored ? RV_DOMAIN_RUNNING_RESTORED : RV_DOMAIN_RUNNING_BOOTED,
                          RV_EVENT_STARTED,
                          restored ? RV_EVENT_STARTED_RESTORED : RV_EVENT_STARTED_BOOTED);
    if (paused)
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_USER, RV_EVENT_SUSPENDED,
                              restored ? RV_EVENT_SUSPENDED_RESTORED : RV_EVENT_SUSPENDED_PAUSED);
record:
    restore_over(d);
    /* Answered once the status says it runs: a remvirtd killed before
     * finds "starting up" there and kills the guest, as a start that
     * failed; one killed after reattaches it.  Either way the caller's
     * answer holds. */
    rv_err err = { 0 };
    d->status_sync.done = on_started_recorded;
    d->status_sync.data = d;
    if (rv_qemu_save_status_acked(d, &err) < 0) {
        RV_WARN("domain '%s': %s", dom_name(d), err.message);
        job_done(d, NULL);
    }
    rv_err_clear(&err);
}

void rv_qemu_start_done(qemu_dom *d)
{
    on_started(d);
}

void rv_qemu_start_failed(qemu_dom *d, const rv_err *why)
{
    start_failed(d, why);
}

static void on_job_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = dom_of(qmp, opaque);
    if (!d || !d->job_busy || !d->jobs)
        return;
    qemu_job *job = d->jobs;
    if (err) {
        if (job->kind == QJOB_START) {
            start_failed(d, err);
            return;
        }
        rv_err e = { 0 };
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                   err->message ? err->message : "QEMU refused");
        job_done(d, &e);
        rv_err_clear(&e);
        return;
    }
    switch (job->kind) {
    case QJOB_START:
        on_started(d);
        return;
    case QJOB_SUSPEND:
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_USER, RV_EVENT_SUSPENDED,
                              RV_EVENT_SUSPENDED_PAUSED);
        break;
    case QJOB_RESUME:
        if (job->flags & QJOB_MIGRATE_IN)
            rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_MIGRATION_CANCELED,
                                  RV_EVENT_RESUMED, RV_EVENT_RESUMED_MIGRATED);
        else
            rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_UNPAUSED, RV_EVENT_RESUMED,
                                  RV_EVENT_RESUMED_UNPAUSED);
        break;
    case QJOB_SHUTDOWN:
    case QJOB_REBOOT:
    case QJOB_RESET:
    case QJOB_DESTROY:
    case QJOB_SAVE:
    case QJOB_DUMP:
    case QJOB_AGENT_HOSTNAME:
    case QJOB_AGENT_GET_TIME:
    case QJOB_AGENT_SET_TIME:
    case QJOB_AGENT_CALL:
    case QJOB_MIGRATE_OUT:
        break;
    }
    rv_err e = { 0 };
    if (rv_qemu_save_status(d, &e) < 0)
        RV_WARN("domain '%s': %s", dom_name(d), e.message);
    rv_err_clear(&e);
    job_done(d, NULL);
}

static void job_command(qemu_dom *d, const char *command)
{
    rv_err err = { 0 };
    if (!d->qmp || rv_qmp_command(d->qmp, command, NULL, 0, on_job_reply, d, &err) < 0) {
        if (d->jobs->kind == QJOB_START) {
            if (!rv_err_is_set(&err))
                rv_err_set(&err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR, "no QEMU monitor");
            start_failed(d, &err);
        } else {
            job_fail(d, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                     err.message ? err.message : "no QEMU monitor");
        }
    }
    rv_err_clear(&err);
}

static void on_status(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    qemu_dom *d = dom_of(qmp, opaque);
    json_object *status = NULL;
    if (!d || err || !json_object_object_get_ex(ret, "status", &status))
        return;
    const char *s = json_object_get_string(status);
    bool migrated = strcmp(s, "postmigrate") == 0;
    int saving = rv_qemu_save_marker_take(dom_name(d));
    if (strcmp(s, "inmigrate") == 0 ||
        (strcmp(s, "paused") == 0 && d->state == RV_DOMAIN_PAUSED &&
         d->reason == RV_DOMAIN_PAUSED_MIGRATION)) {
        /* An incoming migration (its stream still coming, or complete but
         * not finished) that this remvirtd can no longer finish: FINISH3
         * is refused and the source keeps the guest, so this QEMU, which
         * never ran it, goes. */
        RV_WARN("domain '%s': its incoming migration was cut off by remvirtd's stop: "
                "it goes", dom_name(d));
        begin_stop(d, RV_DOMAIN_SHUTOFF_FAILED, RV_EVENT_STOPPED_FAILED, false, true);
        return;
    }
    if (saving < 0 && !rv_qemu_has_managed_save(dom_name(d))) {
        /* No save was under way: an outgoing migration may have been (no
         * client can confirm it now).  One still sending is called off
         * (QEMU runs the guest again); one that completed is resumed if
         * QEMU can take its disks back, which it cannot while the
         * destination runs the guest (qemu_migrate_recover.c); else, or
         * without such a disk, it stays paused for the administrator. */
        rv_err e = { 0 };
        bool reclaim = migrated && rv_qemu_migrate_may_reclaim(d);
        if (rv_qemu_migrate_reattach_cancel(qmp, reclaim, &e) < 0)
            RV_WARN("domain '%s': %s", dom_name(d), e.message);
        rv_err_clear(&e);
        rv_qemu_migstore_reattach(qmp);
        rv_qemu_migcaps_reset(qmp);
        if (migrated) {
            RV_WARN("domain '%s': it had migrated when remvirtd stopped: %s", dom_name(d),
                    reclaim ? "resumed unless the destination holds its disks" : "it stays paused");
            rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_MIGRATION, -1, 0);
            if (rv_qemu_save_status(d, &e) < 0)
                RV_WARN("domain '%s': %s", dom_name(d), e.message);
            rv_err_clear(&e);
            return;
        }
    }
    if (migrated || saving >= 0) {
        /* A save was under way when remvirtd stopped.  If it completed
         * (the managed image is there) the guest's state is in it and
         * this process goes; otherwise the partial image is gone
         * (rv_qemu_save_dir_clean) and the guest goes on as before. */
        if (migrated && rv_qemu_has_managed_save(dom_name(d))) {
            RV_INFO("domain '%s': its managed save completed while remvirtd was away",
                    dom_name(d));
            begin_stop(d, RV_DOMAIN_SHUTOFF_SAVED, RV_EVENT_STOPPED_SAVED, false, false);
            return;
        }
        bool run = saving > 0 || (saving < 0 && d->state == RV_DOMAIN_RUNNING);
        RV_INFO("domain '%s': a save was interrupted by remvirtd's stop: %s", dom_name(d),
                run ? "resuming it" : "it stays paused");
        rv_err e = { 0 };
        if (rv_qmp_command(qmp, "migrate_cancel", NULL, 0, ignore_reply, NULL, &e) < 0 ||
            (run && rv_qmp_command(qmp, "cont", NULL, 0, ignore_reply, NULL, &e) < 0))
            RV_WARN("domain '%s': %s", dom_name(d), e.message);
        rv_err_clear(&e);
        if (run)
            rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_SAVE_CANCELED, -1, 0);
        else
            rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_USER, -1, 0);
        if (rv_qemu_save_status(d, &e) < 0)
            RV_WARN("domain '%s': %s", dom_name(d), e.message);
        rv_err_clear(&e);
        return;
    }
    /* What changed while remvirtd was away (nobody was subscribed). */
    if (strcmp(s, "running") == 0 && d->state != RV_DOMAIN_RUNNING)
        rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_UNKNOWN, -1, 0);
    else if (strcmp(s, "running") != 0 && d->state == RV_DOMAIN_RUNNING)
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_UNKNOWN, -1, 0);
}

/* A currentMemory below memory is the balloon's target from the start, as
 * libvirtd sets it: the guest's balloon driver gives the rest back. */
static void set_balloon_target(qemu_dom *d)
{
    const rv_qemu_domain_def *def = d->live;
    if (!def->balloon || def->current_memory_kib >= def->memory_kib)
        return;
    rv_err err = { 0 };
    json_object *args = json_object_new_object();
    if (!args || json_object_object_add(args, "value",
                                        json_object_new_int64((int64_t)(def->current_memory_kib * 1024))) < 0 ||
        rv_qmp_command(d->qmp, "balloon", args, 0, ignore_reply, NULL, &err) < 0)
        RV_WARN("domain '%s': cannot set the balloon: %s", dom_name(d),
                err.message ? err.message : "out of memory");
    rv_err_clear(&err);
}

/* ---- a restore's commit point ----
 * The image is loaded into the new QEMU, paused by -S.  The commit point
 * is the status file that says so (its "restore" line): a remvirtd killed
 * before it kills this QEMU as one still starting, and the image is there
 * as it was; killed after it, the restarted remvirtd reattaches the QEMU
 * and finishes here.  The managed image goes next (durably: a guest that
 * ran must never be restored from it again), and only then does the
 * guest run (cont). */

static void restore_done(qemu_dom *d)
{
    d->restore_committed = false;
    if (d->starting) {
        on_started(d);
        return;
    }
    /* Finished after a restart: no job waits for it. */
    RV_INFO("domain '%s': its restore, interrupted by remvirtd's stop, is finished", dom_name(d));
    if (d->restore_run)
        rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_RESTORED, RV_EVENT_STARTED,
                              RV_EVENT_STARTED_RESTORED);
    else
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_USER, RV_EVENT_SUSPENDED,
                              RV_EVENT_SUSPENDED_RESTORED);
    restore_over(d);
    rv_err err = { 0 };
    if (rv_qemu_save_status(d, &err) < 0)
        RV_WARN("domain '%s': %s", dom_name(d), err.message);
    rv_err_clear(&err);
}

static void on_restore_cont(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    qemu_dom *d = dom_of(qmp, opaque);
    if (!d || !d->restore_committed)
        return;
    if (err) {
        /* The image may be gone: the guest is kept, paused. */
        RV_WARN("domain '%s': restored, but QEMU would not let it run: %s", dom_name(d),
                err->message ? err->message : "");
        d->restore_run = false;
    }
    restore_done(d);
}

static void restore_run(qemu_dom *d)
{
    rv_crash_point("restore", 4);
    rv_err err = { 0 };
    if (!d->restore_run)
        restore_done(d);
    else if (!d->qmp || rv_qmp_command(d->qmp, "cont", NULL, 0, on_restore_cont, d, &err) < 0)
        on_restore_cont(d->qmp, NULL, &err, d);
    rv_err_clear(&err);
}

/* The restore goes back to before its commit: this QEMU goes, the image
 * (still there) stays. */
static void restore_undo(qemu_dom *d, const rv_err *why)
{
    d->restore_committed = false;
    if (d->starting) {
        start_failed(d, why);
        return;
    }
    RV_WARN("domain '%s': cannot finish its restore: %s", dom_name(d), why->message);
    begin_stop(d, RV_DOMAIN_SHUTOFF_SAVED, RV_EVENT_STOPPED_SAVED, false, true);
}

static void on_restore_image_removed(rv_qemu_sync *s, int error)
{
    qemu_dom *d = s->data;
    rv_crash_point("restore", 3);
    if (error) {
        rv_err err = { 0 };
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot remove the managed save image '%s': %s", d->restore_managed,
                   error > 0 ? strerror(error) : "the store helper died");
        restore_undo(d, &err);
        rv_err_clear(&err);
        return;
    }
    restore_run(d);
}

/* After the commit: the managed image goes, then the guest runs. */
static void restore_finish(qemu_dom *d)
{
    rv_crash_point("restore", 2);
    if (!d->restore_managed) {
        restore_run(d);
        return;
    }
    rv_err err = { 0 };
    d->restore_sync.done = on_restore_image_removed;
    d->restore_sync.data = d;
    if (rv_qemu_sync_remove(&d->restore_sync, d->restore_managed, &err) < 0)
        restore_undo(d, &err);
    rv_err_clear(&err);
}

/* A status write that a start waited for failed (the store's answer). */
static void status_error(const qemu_dom *d, int error, rv_err *err)
{
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot write the status of '%s': %s",
               dom_name(d), error < 0 ? "the store helper died"
                            : error == ECANCELED ? "its live XML could not be written"
                                                 : strerror(error));
}

/* The status with its restore line is in place: the commit point. */
static void on_restore_committed(rv_qemu_sync *s, int error)
{
    qemu_dom *d = s->data;
    if (d->stopping || !d->restore_committed)
        return;
    if (error) {
        rv_err e = { 0 };
        status_error(d, error, &e);
        d->restore_committed = false;
        start_failed(d, &e);
        rv_err_clear(&e);
        return;
    }
    restore_finish(d);
}

static void on_incoming_done(qemu_dom *d, const rv_err *err)
{
    if (err) {
        start_failed(d, err);
        return;
    }
    rv_crash_point("restore", 1);
    rv_err e = { 0 };
    d->restore_committed = true;
    d->status_sync.done = on_restore_committed;
    d->status_sync.data = d;
    if (rv_qemu_save_status_acked(d, &e) < 0) {
        d->restore_committed = false;
        start_failed(d, &e);
        rv_err_clear(&e);
    }
}

/* An interface defined with <link state='down'/> starts down, as on
 * libvirtd: set before the CPUs run (QEMU answers in order). */
static void set_link_states(qemu_dom *d)
{
    for (size_t i = 0; i < d->live->ninterfaces; i++)
        if (d->live->interfaces[i].link == 2 && d->live->interfaces[i].alias)
            rv_qemu_set_link_quietly(d->qmp, d->live->interfaces[i].alias, false);
}

static void on_qmp_ready(rv_qmp *qmp, json_object *greeting, void *opaque)
{
    (void)greeting;
    qemu_dom *d = dom_of(qmp, opaque);
    if (!d)
        return;
    rv_err err = { 0 };
    if (d->starting && (d->jobs->flags & QJOB_MIGRATE_IN)) {
        /* The state comes over the network: listen for it. */
        rv_qemu_migrate_incoming(d);
    } else if (d->starting && d->restoring) {
        /* The state comes from the image: wait for it all to arrive. */
        rv_qemu_migration_wait(d, on_incoming_done);
    } else if (d->restore_committed) {
        /* Reattached after a kill past a restore's commit point. */
        restore_finish(d);
    } else if (d->starting) {
        /* Paused by -S until now: let it run, or leave it paused. */
        /* Until the guest's balloon driver acts it has all its memory. */
        d->balloon_kib = d->live->balloon ? d->live->memory_kib : 0;
        set_balloon_target(d);
        rv_qemu_pin_apply(d);
        set_link_states(d);
        if (d->jobs->flags & RV_DOMAIN_START_PAUSED)
            on_started(d);
        else
            job_command(d, "cont");
    } else {
        /* Reattached: what changed while remvirtd was away (the state,
         * its block jobs), then the calls that waited for the monitor. */
        if (rv_qmp_command(qmp, "query-status", NULL, 0, on_status, d, &err) < 0)
            RV_WARN("domain '%s': %s", dom_name(d), err.message);
        rv_qemu_blockjob_resync(d);
        rv_qemu_backup_resync(d);
        pump_soon(d);
    }
    rv_err_clear(&err);
}

static void on_qmp_close(rv_qmp *qmp, const rv_err *reason, void *opaque)
{
    qemu_dom *d = dom_of(qmp, opaque);
    if (!d)
        return;
    RV_DEBUG("domain '%s': monitor closed: %s", dom_name(d), reason->message);
    if (d->starting) {
        start_failed(d, reason);
        return;
    }
    /* The monitor goes with the process; without it the process is of no
     * use, so it goes too (as libvirtd does). */
    begin_stop(d, d->guest_shutdown ? RV_DOMAIN_SHUTOFF_SHUTDOWN : RV_DOMAIN_SHUTOFF_CRASHED,
               d->guest_shutdown ? RV_EVENT_STOPPED_SHUTDOWN : RV_EVENT_STOPPED_FAILED, false,
               false);
    if (!d->sent_term && d->pid > 0) {
        kill(d->pid, SIGTERM);
        d->sent_term = true;
    }
}

static void after_guest_action(qemu_dom *d, int action, int reason, int detail)
{
    if (action == RV_QEMU_ACTION_DESTROY) {
        begin_stop(d, reason, detail, false, false);
    } else if (action == RV_QEMU_ACTION_RESTART && d->qmp) {
        /* A reboot in place: reset and let it run. */
        rv_err err = { 0 };
        if (rv_qmp_command(d->qmp, "system_reset", NULL, 0, ignore_reply, NULL, &err) < 0 ||
            rv_qmp_command(d->qmp, "cont", NULL, 0, ignore_reply, NULL, &err) < 0)
            RV_WARN("domain '%s': cannot restart: %s", dom_name(d), err.message);
        rv_err_clear(&err);
        d->guest_shutdown = false;
        /* Running again when QEMU says RESUME (after the STOP that its
         * power-off made under -no-shutdown). */
        d->restarting = true;
    }
}

static void on_qmp_event(rv_qmp *qmp, const char *name, json_object *data, double ts,
                         void *opaque)
{
    (void)ts;
    qemu_dom *d = dom_of(qmp, opaque);
    if (!d || d->starting)
        return;
    RV_DEBUG("domain '%s': QMP event %s", dom_name(d), name);
    bool suspending = d->job_busy && d->jobs->kind == QJOB_SUSPEND;
    bool resuming = d->job_busy && d->jobs->kind == QJOB_RESUME;
    bool saving = d->job_busy && d->jobs->kind == QJOB_SAVE;
    bool dumping = d->job_busy && d->jobs->kind == QJOB_DUMP;
    bool migrating = d->job_busy && d->jobs->kind == QJOB_MIGRATE_OUT;
    /* (CONFIRM3 cancelled resumes a guest its migration left paused) */
    bool unmigrating = resuming && (d->jobs->flags & QJOB_MIGRATE_IN);
    if (strcmp(name, "STOP") == 0 && rv_qemu_postcopy_stop(d)) {
        /* (paused (post-copy): qemu_migrate_postcopy.c) */
    } else if (migrating && strcmp(name, "STOP") == 0 && d->state == RV_DOMAIN_RUNNING) {
        rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_MIGRATION, RV_EVENT_SUSPENDED,
                              RV_EVENT_SUSPENDED_MIGRATED);
    } else if ((migrating || unmigrating) && strcmp(name, "RESUME") == 0 &&
               d->state == RV_DOMAIN_PAUSED) {
        rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_MIGRATION_CANCELED,
                              RV_EVENT_RESUMED, RV_EVENT_RESUMED_MIGRATED);
    } else if (d->migrate_in && strcmp(name, "RESUME") == 0 && d->state == RV_DOMAIN_PAUSED) {
        /* FINISH3's cont (qemu_migrate.c says the same on its answer). */
        if (!rv_qemu_postcopy_resume(d))
            rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_MIGRATED,
                                  RV_EVENT_RESUMED, RV_EVENT_RESUMED_MIGRATED);
    } else if (d->restarting && strcmp(name, "RESUME") == 0) {
        d->restarting = false;
        rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_BOOTED, -1, 0);
    } else if (strcmp(name, "STOP") == 0) {
        if (d->state == RV_DOMAIN_RUNNING) {
            rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED,
                                  suspending ? RV_DOMAIN_PAUSED_USER
                                  : saving   ? RV_DOMAIN_PAUSED_SAVE
                                  : dumping  ? RV_DOMAIN_PAUSED_DUMP
                                             : RV_DOMAIN_PAUSED_UNKNOWN,
                                  RV_EVENT_SUSPENDED, RV_EVENT_SUSPENDED_PAUSED);
        }
    } else if (strcmp(name, "RESUME") == 0) {
        if (d->state == RV_DOMAIN_PAUSED)
            rv_qemu_dom_set_state(d, RV_DOMAIN_RUNNING,
                                  resuming || dumping ? RV_DOMAIN_RUNNING_UNPAUSED
                                  : saving ? RV_DOMAIN_RUNNING_SAVE_CANCELED
                                           : RV_DOMAIN_RUNNING_UNKNOWN,
                                  RV_EVENT_RESUMED, RV_EVENT_RESUMED_UNPAUSED);
    } else if (strcmp(name, "SHUTDOWN") == 0 && !d->stopping) {
        /* (While remvirtd stops it, the SHUTDOWN that "quit" causes is
         * reported when the process is gone: process_gone().) */
        json_object *guest = NULL, *why = NULL;
        bool by_guest = data && json_object_object_get_ex(data, "guest", &guest) &&
                        json_object_get_boolean(guest);
        bool reset = data && json_object_object_get_ex(data, "reason", &why) &&
                     strcmp(json_object_get_string(why), "guest-reset") == 0;
        d->guest_shutdown = true;
        rv_qemu_dom_set_state(d, RV_DOMAIN_SHUTDOWN, RV_DOMAIN_SHUTDOWN_USER, RV_EVENT_SHUTDOWN,
                              by_guest ? RV_EVENT_SHUTDOWN_GUEST : RV_EVENT_SHUTDOWN_HOST);
        /* With -no-shutdown QEMU waits: the definition says what next
         * (a reset under -no-reboot is on_reboot's). */
        int action = reset ? d->live->on_reboot : d->live->on_poweroff;
        if (d->fake_reboot && !reset)
            action = RV_QEMU_ACTION_RESTART;
        d->fake_reboot = false;
        after_guest_action(d, action, RV_DOMAIN_SHUTOFF_SHUTDOWN, RV_EVENT_STOPPED_SHUTDOWN);
    } else if (strcmp(name, "BALLOON_CHANGE") == 0) {
        json_object *actual = NULL;
        if (data && json_object_object_get_ex(data, "actual", &actual))
            d->balloon_kib = (unsigned long long)json_object_get_int64(actual) / 1024;
    } else if (strcmp(name, "MIGRATION") == 0) {
        /* (with the "events" capability, which migrations turn on) */
        rv_qemu_postcopy_event(d, data);
        rv_qemu_migration_poke(d);
    } else if (strcmp(name, "MIGRATION_PASS") == 0) {
        rv_qemu_migrate_pass_event(d, data);
    } else if (strcmp(name, "GUEST_PANICKED") == 0) {
        rv_qemu_dom_set_state(d, RV_DOMAIN_CRASHED, RV_DOMAIN_CRASHED_PANICKED, RV_EVENT_CRASHED,
                              RV_EVENT_CRASHED_PANICKED);
        after_guest_action(d, d->live->on_crash, RV_DOMAIN_SHUTOFF_CRASHED,
                           RV_EVENT_STOPPED_CRASHED);
    }
    rv_qemu_events_qmp(d, name, data);
    /* Hotplug (qemu_hotplug.c): a device the guest let go, or would not. */
    json_object *dev = NULL, *info = NULL, *source = NULL, *status = NULL;
    if (strcmp(name, "DEVICE_DELETED") == 0 && data && json_object_object_get_ex(data, "device", &dev))
        rv_qemu_hotplug_device_deleted(d, json_object_get_string(dev));
    else if (strcmp(name, "DEVICE_UNPLUG_GUEST_ERROR") == 0 && data &&
             json_object_object_get_ex(data, "device", &dev))
        rv_qemu_hotplug_unplug_failed(d, json_object_get_string(dev));
    else if (strcmp(name, "ACPI_DEVICE_OST") == 0 && data && json_object_object_get_ex(data, "info", &info) &&
             json_object_object_get_ex(info, "device", &dev) && json_object_object_get_ex(info, "source", &source) &&
             json_object_object_get_ex(info, "status", &status)) {
        /* An eject request (source 3) the guest failed (status 1-0x7f;
         * 0x80 and above: still under way). */
        int st = json_object_get_int(status);
        if (json_object_get_int(source) == 3 && st > 0 && st < 0x80)
            rv_qemu_hotplug_unplug_failed(d, json_object_get_string(dev));
    }
    if (strncmp(name, "BLOCK_JOB_", 10) == 0 || strcmp(name, "JOB_STATUS_CHANGE") == 0) {
        rv_qemu_blockjob_event(d, name, data);
        rv_qemu_backup_event(d, name, data);
        if (d->migstore && strncmp(name, "BLOCK_JOB_", 10) == 0)
            rv_qemu_migstore_event(d, name, data);
    }
    /* RESET and POWERDOWN change no lifecycle state; a reset (the
     * guest's, system_reset's or a fake reboot's) is a REBOOT event, as
     * libvirtd sends it. */
    if (strcmp(name, "RESET") == 0) {
        rv_dom_ref ref = { 0 };
        if (rv_qemu_dom_ref(d, &ref) == 0)
            rv_driver_domain_event(&rv_qemu_driver, &ref, RV_DOMAIN_EVENT_ID_REBOOT);
        free(ref.name);
    }
}

/* ================================================================ starting */

/* A copy of def through its XML (the one deep copy there is). */
static rv_qemu_domain_def *copy_def(const rv_qemu_domain_def *def, rv_err *err)
{
    char *xml = rv_qemu_domain_format(def);
    if (!xml) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    rv_qemu_domain_def *copy = rv_qemu_domain_parse(xml, strlen(xml), err);
    free(xml);
    return copy;
}

/* What QEMU would stumble on, found before anything is started. */
static int check_start(const rv_qemu_domain_def *def, rv_err *err)
{
    if (access(rv_qemu.binary, X_OK) < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                   "internal error: Cannot find QEMU binary %s: %s", rv_qemu.binary,
                   strerror(errno));
        return -1;
    }
    for (int i = 0; i < RV_TUNE_PERF_EVENTS; i++)
        if (def->perf[i] > 0 && rv_qemu_perf_check(rv_tune_perf_names[i], err) < 0)
            return -1;
    if (def->emulator && strcmp(def->emulator, rv_qemu.binary) != 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported configuration: emulator '%s' is not this remvirtd's QEMU binary '%s'",
                   def->emulator, rv_qemu.binary);
        return -1;
    }
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *disk = &def->disks[i];
        if (!disk->source)
            continue;
        /* Without blocking on a FIFO or a device the definition names; a
         * disk is a regular file or a block device. */
        const char *kind;
        int fd = rv_open_file_at(AT_FDCWD, disk->source, disk->readonly ? O_RDONLY : O_RDWR, 0,
                                 true, &kind);
        if (fd < 0) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                       "Cannot access storage file '%s' (disk %s): %s%s", disk->source,
                       disk->target, kind ? "it is a " : strerror(errno),
                       kind ? kind : "");
            return -1;
        }
        close(fd);
    }
    return 0;
}

/* Open the log and write this run's header: the time and command line. */
static int open_log(qemu_dom *d, char **argv, rv_err *err)
{
    char *path = rv_qemu_path(rv_qemu.run_dir, d->live->name, ".log");
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    if (fd < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot open the log '%s': %s",
                   path ? path : d->live->name, strerror(errno));
        free(path);
        return -1;
    }
    free(path);
    char when[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime_r(&now, &tm));
    dprintf(fd, "%s: starting up\n", when);
    for (char **a = argv; *a; a++)
        dprintf(fd, "%s%s", *a, a[1] ? " " : "\n");
    if (rv_qemu_def_tainted(d->live)) {
        /* libvirtd's words, in the domain's log and its own. */
        dprintf(fd, "%s: Domain id=%d is tainted: custom-argv\n", when, d->id);
        char uuid[RV_UUID_STRING_LEN];
        rv_uuid_format(d->live->uuid, uuid);
        RV_WARN("Domain id=%d name='%s' uuid=%s is tainted: custom-argv", d->id, d->live->name, uuid);
    }
    d->log_start = lseek(fd, 0, SEEK_END);
    return fd;
}

/* A graphics port another domain of ours has, or anyone has bound, is
 * not free.  The live definitions hold the ports, so a stop frees them. */
typedef struct port_query {
    const qemu_dom *self;
    int port;
} port_query;

static bool has_port(const void *obj, const void *ctx)
{
    const qemu_dom *o = obj;
    const port_query *q = ctx;
    return o != q->self && o->live &&
           ((o->live->graphics.present && o->live->graphics.port == q->port) ||
            (o->live->spice.present && o->live->spice.port == q->port));
}

static bool graphics_port_free(int port, void *opaque)
{
    port_query q = { opaque, port };
    if (rv_dom_list_find(&rv_qemu.doms, has_port, &q))
        return false;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    bool ok = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
    close(fd);
    return ok;
}

/* The live definition's ports and channel sockets, before the command line. */
static int prepare_live(qemu_dom *d, rv_err *err)
{
    char *prefix = rv_qemu_path(rv_qemu.run_dir, d->live->name, "");
    if (!prefix) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (rv_qemu_def_live_cpu(d->live) < 0) {
        free(prefix);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int rc = rv_qemu_devices_prepare_live(d->live, prefix, graphics_port_free, d, err);
    free(prefix);
    return rc;
}

/* A start from a save image: the file a restore names (job->path), else
 * the domain's managed image when there is one (FORCE_BOOT discards it).
 * The image's definition becomes the live one.  Returns 0 with *fd set
 * (-1: a plain boot), or -1 with err set. */
static int open_restore_image(qemu_dom *d, const qemu_job *job, int *fd, rv_err *err)
{
    char *managed = NULL;
    const char *image = job->path;
    if (job->flags & QJOB_MIGRATE_IN)
        return 0;   /* the state comes over the network */
    if (!image && d->def) {
        if (!(managed = rv_qemu_managed_save_path(d->def->name))) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        if (access(managed, F_OK) < 0) {
            free(managed);
            return 0;
        }
        image = managed;
    }
    if (!image)
        return 0;
    rv_qemu_domain_def *def = NULL;
    bool was_running = false;
    *fd = rv_qemu_save_image_open(image, &def, &was_running, err);
    if (*fd < 0) {
        free(managed);
        return -1;
    }
    if (strcmp(def->name, d->live->name) != 0 || memcmp(def->uuid, d->live->uuid, 16) != 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: the save image '%s' is of domain '%s', not this one",
                   image, def->name);
        rv_qemu_domain_free(def);
        close(*fd);
        *fd = -1;
        free(managed);
        return -1;
    }
    RV_INFO("domain '%s': restoring from '%s'", def->name, image);
    rv_qemu_domain_free(d->live);
    d->live = def;
    d->restoring = true;
    d->restore_run = (job->flags & RV_DOMAIN_START_PAUSED) ? false
                     : (job->flags & QJOB_RESTORE_RUNNING) ? true
                                                           : was_running;
    d->restore_managed = managed;
    return 0;
}

static void on_spawned(void *data, pid_t pid, const char *why);
static void on_spawn_status(rv_qemu_sync *s, int error);

/* As root, remvirtd makes the taps of bridged interfaces itself (so it
 * knows their names: stats, domiflist); unprivileged, QEMU's bridge
 * helper does.  *taps: remvirtd's descriptors per interface (NULL: no
 * tap of ours); each interface's tap_fd the number QEMU gets it as. */
static int open_taps(rv_qemu_domain_def *live, int **taps, rv_err *err)
{
    bool any = false;
    for (size_t i = 0; i < live->ninterfaces; i++)
        any |= live->interfaces[i].type != RV_QEMU_NET_USER;
    if (!rv_qemu.privileged || !any)
        return 0;
    if (!(*taps = rv_qemu_domain_taps_open(live, err)))
        return -1;
    int at = 4;     /* after -incoming's 3, as spawn() places them */
    for (size_t i = 0; i < live->ninterfaces; i++)
        live->interfaces[i].tap_fd = (*taps)[i] >= 0 ? at++ : 0;
    return 0;
}

static void begin_start(qemu_dom *d);

static void on_force_boot_removed(rv_qemu_sync *s, int error)
{
    qemu_dom *d = s->data;
    if (error) {
        job_fail(d, RV_ERR_SYSTEM_ERROR, "cannot remove the managed save image of '%s': %s",
                 dom_name(d), error > 0 ? strerror(error) : "the store helper died");
        return;
    }
    begin_start(d);
}

/* FORCE_BOOT: the managed image goes (durably, off the loop) before the
 * guest boots afresh, never after: true when that is under way. */
static bool force_boot_discard(qemu_dom *d)
{
    if (!(d->jobs->flags & RV_DOMAIN_START_FORCE_BOOT) || d->jobs->path || !d->def ||
        !rv_qemu_has_managed_save(d->def->name))
        return false;
    char *image = rv_qemu_managed_save_path(d->def->name);
    rv_err err = { 0 };
    d->restore_sync.done = on_force_boot_removed;
    d->restore_sync.data = d;
    RV_INFO("domain '%s': boots afresh, its managed save image removed", d->def->name);
    if (!image || rv_qemu_sync_remove(&d->restore_sync, image, &err) < 0) {
        job_fail(d, RV_ERR_SYSTEM_ERROR, "%s", err.message ? err.message : "out of memory");
        rv_err_clear(&err);
    }
    free(image);
    return true;
}

static void begin_start(qemu_dom *d)
{
    rv_err err = { 0 };
    if (rv_qemu_dom_active(d)) {
        job_fail(d, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: domain is already running");
        return;
    }
    if (!rv_qemu_dom_visible(d)) {
        /* Undefined while the start waited its turn. */
        job_fail(d, RV_ERR_NO_DOMAIN, "Domain not found: the domain was undefined");
        return;
    }
    if (force_boot_discard(d))
        return;
    /* A transient domain (create_xml) brought its live definition. */
    if (!d->live && !(d->live = copy_def(d->def, &err))) {
        job_done(d, &err);
        rv_err_clear(&err);
        return;
    }
    int incoming_fd = -1;
    if (open_restore_image(d, d->jobs, &incoming_fd, &err) < 0) {
        start_failed(d, &err);
        rv_err_clear(&err);
        return;
    }
    d->starting = true;
    d->id = rv_qemu.next_id++;
    free(d->monitor_path);
    d->monitor_path = rv_qemu_path(rv_qemu.run_dir, d->live->name, ".qmp");
    char **argv = NULL;
    int log_fd = -1;
    bool spawn_asked = false;
    int *taps = NULL;
    rv_qemu_command_opts opts = { rv_qemu.binary, d->monitor_path, rv_qemu.kvm,
                                  incoming_fd >= 0 ? "fd:3"
                                  : (d->jobs->flags & QJOB_MIGRATE_IN) ? "defer" : NULL };
    if (!d->monitor_path) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    } else if (strlen(d->monitor_path) >= 108) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                   "internal error: the monitor socket path '%s' is too long for a Unix socket",
                   d->monitor_path);
    } else if (rv_qemu_network_resolve(d->live, &err) == 0 && rv_qemu_storage_resolve(d->live, &err) == 0 &&
               check_start(d->live, &err) == 0 &&
               rv_qemu_mkdirs(rv_qemu.run_dir, &err) == 0 && prepare_live(d, &err) == 0 &&
               open_taps(d->live, &taps, &err) == 0 &&
               (argv = rv_qemu_build_argv(d->live, &opts, &err)) &&
               (log_fd = open_log(d, argv, &err)) >= 0) {
        unlink(d->monitor_path);
        /* The helper forks it (qemu_spawner.c); on_spawned goes on. */
        spawn_asked = rv_qemu_spawn(argv, log_fd, incoming_fd, taps,
                                    taps ? d->live->ninterfaces : 0, on_spawned, d, &err) == 0;
    }
    rv_qemu_argv_free(argv);
    /* The helper holds copies of the taps now (or they go, with ours the
     * last reference). */
    rv_qemu_domain_taps_close(taps, d->live->ninterfaces);
    if (log_fd >= 0)
        close(log_fd);
    if (incoming_fd >= 0)
        close(incoming_fd);
    if (!spawn_asked) {
        start_failed(d, &err);
        rv_err_clear(&err);
    }
}

/* The helper has forked QEMU's process, which waits: record its pid
 * (on disk too: a remvirtd killed from here on finds it), then let it
 * run and connect to its monitor. */
static void on_spawned(void *data, pid_t pid, const char *why)
{
    qemu_dom *d = data;
    rv_err err = { 0 };
    if (pid < 0) {
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot start QEMU: %s", why);
        start_failed(d, &err);
        rv_err_clear(&err);
        return;
    }
    d->pid = pid;
    d->start_time = rv_qemu_proc_start_time(pid);
    d->our_child = true;
    d->reaped = false;
    rv_qemu_dom_set_state(d, RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_STARTING_UP, -1, 0);
    /* QEMU may exec only once its status is in place (crash-safety
     * rule 2): the store helper's answer lets it go. */
    d->status_sync.done = on_spawn_status;
    d->status_sync.data = d;
    if (rv_qemu_save_status_acked(d, &err) < 0) {
        start_failed(d, &err);  /* (kills the waiting child) */
        rv_err_clear(&err);
    }
}

static void on_spawn_status(rv_qemu_sync *s, int error)
{
    qemu_dom *d = s->data;
    rv_err err = { 0 };
    if (d->stopping || !d->starting)
        return;
    if (error) {
        status_error(d, error, &err);
        start_failed(d, &err);  /* (kills the waiting child) */
        rv_err_clear(&err);
        return;
    }
    pid_t pid = d->pid;
    rv_qemu_spawn_go(pid, true);
    rv_qmp_options qopts = { .connect_timeout = MONITOR_CONNECT_TIMEOUT };
    d->qmp = rv_qmp_connect_unix(rv_qemu.loop, d->monitor_path, &qopts, &monitor_callbacks, d,
                                 &err);
    if (!d->qmp)
        start_failed(d, &err);
    rv_err_clear(&err);
}

void rv_qemu_reattach(qemu_dom *d)
{
    rv_err err = { 0 };
    d->our_child = false;
    /* The live XML names a volume disk's pool and volume, not its file. */
    if (rv_qemu_storage_resolve(d->live, &err) < 0)
        RV_WARN("domain '%s': %s", dom_name(d), err.message);
    rv_err_clear(&err);
    d->monitor_path = rv_qemu_path(rv_qemu.run_dir, d->live->name, ".qmp");
    rv_qmp_options qopts = { .connect_timeout = 5 };
    d->qmp = d->monitor_path ? rv_qmp_connect_unix(rv_qemu.loop, d->monitor_path, &qopts,
                                                   &monitor_callbacks, d, &err)
                             : NULL;
    if (!d->qmp) {
        RV_WARN("domain '%s': cannot reconnect to its monitor: %s", dom_name(d),
                err.message ? err.message : "out of memory");
        begin_stop(d, RV_DOMAIN_SHUTOFF_UNKNOWN, RV_EVENT_STOPPED_FAILED, false, false);
        kill(d->pid, SIGTERM);
        d->sent_term = true;
    }
    rv_err_clear(&err);
}

/* ================================================================ the jobs' beginnings */

static void job_begin(qemu_dom *d, qemu_job *job)
{
    if (job->kind == QJOB_START) {
        begin_start(d);
        return;
    }
    /* A destroy of a guest already on its way out (it shut down) waits
     * for the end with it; anything else needs a guest that runs on. */
    if (!rv_qemu_dom_active(d) || (d->stopping && job->kind != QJOB_DESTROY)) {
        job_fail(d, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: domain is not running");
        return;
    }
    switch (job->kind) {
    case QJOB_START:
        break;
    case QJOB_DESTROY:
        if (job->flags & QJOB_MIGRATE_IN)
            begin_stop(d, RV_DOMAIN_SHUTOFF_MIGRATED, RV_EVENT_STOPPED_MIGRATED, false, false);
        else
            begin_stop(d, RV_DOMAIN_SHUTOFF_DESTROYED, RV_EVENT_STOPPED_DESTROYED,
                       job->flags & RV_DOMAIN_DESTROY_GRACEFUL, false);
        break;
    case QJOB_SUSPEND:
        if (d->state == RV_DOMAIN_PAUSED)
            job_done(d, NULL);
        else
            job_command(d, "stop");
        break;
    case QJOB_RESUME:
        /* libvirtd refuses it too (VIR_ERR_OPERATION_INVALID). */
        if (d->state == RV_DOMAIN_RUNNING)
            job_fail(d, RV_ERR_OPERATION_INVALID,
                     "Requested operation is not valid: domain is already running");
        else
            job_command(d, "cont");
        break;
    case QJOB_SHUTDOWN:
    case QJOB_REBOOT:
        /* The agent when asked; with ACPI asked too, ACPI when the agent
         * fails (qemu_agent.c calls back), as libvirtd does. */
    {
        bool reboot = job->kind == QJOB_REBOOT;
        unsigned int agent = reboot ? RV_DOMAIN_REBOOT_GUEST_AGENT : RV_DOMAIN_SHUTDOWN_GUEST_AGENT;
        unsigned int acpi = reboot ? RV_DOMAIN_REBOOT_ACPI_POWER_BTN : RV_DOMAIN_SHUTDOWN_ACPI_POWER_BTN;
        if (job->flags & agent) {
            d->fake_reboot = false;     /* the guest reboots itself */
            rv_qemu_agent_power(d, reboot, job->flags & acpi);
            break;
        }
        rv_qemu_power_acpi(d, reboot);
        break;
    }
    case QJOB_RESET:
        job_command(d, "system_reset");
        break;
    case QJOB_SAVE:
    case QJOB_DUMP:
        rv_qemu_save_begin(d);
        break;
    case QJOB_AGENT_HOSTNAME:
        rv_qemu_agent_hostname(d);
        break;
    case QJOB_AGENT_GET_TIME:
        rv_qemu_agent_get_time(d);
        break;
    case QJOB_AGENT_SET_TIME:
        rv_qemu_agent_set_time(d, job->path);
        break;
    case QJOB_AGENT_CALL:
        rv_qemu_agent_call(d, job->agent_cmd, job->path);
        break;
    case QJOB_MIGRATE_OUT:
        rv_qemu_migrate_perform(d);
        break;
    }
}

void rv_qemu_power_acpi(qemu_dom *d, bool reboot)
{
    /* A shutdown is meant: an earlier reboot the guest ignored is off.  A
     * reboot is libvirtd's "fake reboot": the power button, and the
     * guest's power-off then becomes a reset in the same process. */
    d->fake_reboot = reboot;
    job_command(d, "system_powerdown");
}

void rv_qemu_release(qemu_dom *d)
{
    ev_timer_stop(rv_qemu.loop, &d->pump);
    ev_timer_stop(rv_qemu.loop, &d->stop_timer);
    fail_monitor_waiters(d, NULL);
    rv_qemu_save_release(d);
    rv_qemu_sync_forget(&d->restore_sync);
    rv_qemu_sync_forget(&d->status_sync);
    rv_err_clear(&d->gone_err);
    rv_qemu_agent_abandon(d);
    rv_qemu_def_writes_release(d);
    rv_qemu_postcopy_gone(d);
    rv_qmp *qmp = d->qmp;
    d->qmp = NULL;
    rv_qmp_free(qmp);
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED, "operation failed: remvirtd is stopping");
    while (d->jobs) {
        qemu_job *job = d->jobs;
        d->jobs = job->next;
        if (job->reply)
            rv_deferred_finish(job->reply, &err);
        rv_err_clear(&job->fail);
        free(job->path);
        free(job);
    }
    d->jobs_tail = &d->jobs;
    rv_err_clear(&err);
}
