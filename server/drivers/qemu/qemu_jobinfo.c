/* A domain's long job as GET_JOB_INFO, GET_JOB_STATS and ABORT_JOB see
 * it, and JOB_COMPLETED (qemu_jobinfo.h says how a job reports into it).
 * The statistics are named and ordered as libvirtd 9.0 gives them for a
 * save and a dump (seen on the wire): operation, time_elapsed, downtime,
 * setup_time, data_*, memory_*; a memory-only dump has memory_total,
 * _processed and _remaining only.  Times are remvirtd's own clock (ms
 * since the job began); the byte counts are QEMU's. */
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_jobinfo.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("drivers.qemu.jobinfo");

#define fail(err, from, code, ...) rv_err_fail((err), (from), (code), __VA_ARGS__)

int rv_qemu_jobinfo_begin(qemu_dom *d, int operation, const char *name,
                          rv_qemu_job_abort_fn abort, const char *no_abort)
{
    free(d->job_now);
    if (!(d->job_now = calloc(1, sizeof(*d->job_now))))
        return -1;
    rv_qemu_jobinfo *j = d->job_now;
    j->operation = operation;
    j->name = name;
    j->abort = abort;
    j->no_abort = no_abort;
    j->started = ev_time();
    return 0;
}

rv_qemu_jobinfo *rv_qemu_jobinfo_current(qemu_dom *d)
{
    return d->job_now;
}

static unsigned long long get_u64(json_object *obj, const char *key)
{
    json_object *v = NULL;
    if (!obj || !json_object_object_get_ex(obj, key, &v))
        return 0;
    int64_t n = json_object_get_int64(v);
    return n > 0 ? (unsigned long long)n : 0;
}

void rv_qemu_jobinfo_migration(qemu_dom *d, json_object *q)
{
    rv_qemu_jobinfo *j = d->job_now;
    json_object *ram = NULL, *mbps = NULL;
    if (!j || !q || !json_object_object_get_ex(q, "ram", &ram))
        return;
    j->have_migration = true;
    j->setup_ms = get_u64(q, "setup-time");
    /* While it runs QEMU gives its estimate; at the end, what it was. */
    j->downtime_ms = get_u64(q, json_object_object_get_ex(q, "downtime", NULL) ? "downtime"
                                                                               : "expected-downtime");
    j->mem_total = get_u64(ram, "total");
    j->mem_processed = get_u64(ram, "transferred");
    j->mem_remaining = get_u64(ram, "remaining");
    j->mem_constant = get_u64(ram, "duplicate");
    j->mem_normal = get_u64(ram, "normal");
    j->mem_normal_bytes = get_u64(ram, "normal-bytes");
    j->mem_dirty_rate = get_u64(ram, "dirty-pages-rate");
    j->mem_iteration = get_u64(ram, "dirty-sync-count");
    j->mem_postcopy = get_u64(ram, "postcopy-requests");
    j->mem_page_size = get_u64(ram, "page-size");
    /* mbps is megabits per second; libvirt gives bytes per second. */
    j->mem_bps = json_object_object_get_ex(ram, "mbps", &mbps)
                     ? (unsigned long long)(json_object_get_double(mbps) * 125000.0 + 0.5)
                     : 0;
}

/* Progress of the memory (disk false) or the disks: total and processed. */
static void put_progress(qemu_dom *d, bool disk, unsigned long long total,
                         unsigned long long processed)
{
    rv_qemu_jobinfo *j = d->job_now;
    if (!j)
        return;
    unsigned long long left = total > processed ? total - processed : 0;
    if (disk) {
        j->have_disk = true;
        j->disk_total = total, j->disk_processed = processed, j->disk_remaining = left;
    } else {
        j->have_memory = true;
        j->mem_total = total, j->mem_processed = processed, j->mem_remaining = left;
    }
}

void rv_qemu_jobinfo_memory(qemu_dom *d, unsigned long long total, unsigned long long processed)
{
    put_progress(d, false, total, processed);
}

void rv_qemu_jobinfo_disk(qemu_dom *d, unsigned long long total, unsigned long long processed)
{
    put_progress(d, true, total, processed);
}

void rv_qemu_jobinfo_cpus_stopped(qemu_dom *d)
{
    if (d->job_now && !d->job_now->cpus_stopped)
        d->job_now->cpus_stopped = ev_time();
}

bool rv_qemu_jobinfo_aborted(qemu_dom *d, rv_err *err)
{
    rv_qemu_jobinfo *j = d->job_now;
    if (!j || !j->aborted)
        return false;
    rv_err_clear(err);
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_ABORTED,
               "operation aborted: job '%s' canceled by client", j->name);
    return true;
}

/* ================================================================ the figures as parameters */

typedef struct job_param {
    const char *name;
    int type;
    unsigned long long value;
    const char *str;            /* RV_TYPED_PARAM_STRING's */
} job_param;

static unsigned long long ms_between(double from, double to)
{
    return to > from ? (unsigned long long)((to - from) * 1000.0) : 0;
}

/* j's statistics in libvirtd's order into out (room for
 * RV_DOMAIN_JOB_STATS_MAX); how many. */
static size_t job_params(const rv_qemu_jobinfo *j, bool completed, job_param *out)
{
    size_t n = 0;
#define PUT(nm, ty, v) (out[n++] = (job_param){ (nm), (ty), (v), NULL })
    double now = completed ? j->ended : ev_time();
    PUT("operation", RV_TYPED_PARAM_INT, (unsigned long long)j->operation);
    PUT("time_elapsed", RV_TYPED_PARAM_ULLONG, ms_between(j->started, now));
    if (j->have_backup) {
        if (j->backup_pull) {
            PUT("disk_temp_used", RV_TYPED_PARAM_ULLONG, j->temp_used);
            PUT("disk_temp_total", RV_TYPED_PARAM_ULLONG, j->temp_total);
        } else {
            PUT("disk_total", RV_TYPED_PARAM_ULLONG, j->disk_total);
            PUT("disk_processed", RV_TYPED_PARAM_ULLONG, j->disk_processed);
            PUT("disk_remaining", RV_TYPED_PARAM_ULLONG, j->disk_remaining);
        }
        if (completed) {
            PUT("success", RV_TYPED_PARAM_BOOLEAN, j->success);
            if (j->errmsg[0])
                out[n++] = (job_param){ "errmsg", RV_TYPED_PARAM_STRING, 0, j->errmsg };
        }
        return n;
    }
    if (j->have_migration) {
        /* Done: the time the guest stood still (ours when the job stopped
         * it, else QEMU's); running: QEMU's estimate. */
        unsigned long long down = completed && j->cpus_stopped ? ms_between(j->cpus_stopped, now)
                                                               : j->downtime_ms;
        PUT("downtime", RV_TYPED_PARAM_ULLONG, down);
        PUT("setup_time", RV_TYPED_PARAM_ULLONG, j->setup_ms);
    }
    if (j->have_migration || j->have_disk) {
        PUT("data_total", RV_TYPED_PARAM_ULLONG, j->mem_total + j->disk_total);
        PUT("data_processed", RV_TYPED_PARAM_ULLONG, j->mem_processed + j->disk_processed);
        PUT("data_remaining", RV_TYPED_PARAM_ULLONG, j->mem_remaining + j->disk_remaining);
    }
    if (j->have_migration || j->have_memory) {
        PUT("memory_total", RV_TYPED_PARAM_ULLONG, j->mem_total);
        PUT("memory_processed", RV_TYPED_PARAM_ULLONG, j->mem_processed);
        PUT("memory_remaining", RV_TYPED_PARAM_ULLONG, j->mem_remaining);
    }
    if (j->have_migration) {
        if (j->mem_bps)
            PUT("memory_bps", RV_TYPED_PARAM_ULLONG, j->mem_bps);
        PUT("memory_constant", RV_TYPED_PARAM_ULLONG, j->mem_constant);
        PUT("memory_normal", RV_TYPED_PARAM_ULLONG, j->mem_normal);
        PUT("memory_normal_bytes", RV_TYPED_PARAM_ULLONG, j->mem_normal_bytes);
        PUT("memory_dirty_rate", RV_TYPED_PARAM_ULLONG, j->mem_dirty_rate);
        PUT("memory_iteration", RV_TYPED_PARAM_ULLONG, j->mem_iteration);
        PUT("memory_postcopy_requests", RV_TYPED_PARAM_ULLONG, j->mem_postcopy);
        PUT("memory_page_size", RV_TYPED_PARAM_ULLONG, j->mem_page_size);
    }
    if (j->have_disk) {
        PUT("disk_total", RV_TYPED_PARAM_ULLONG, j->disk_total);
        PUT("disk_processed", RV_TYPED_PARAM_ULLONG, j->disk_processed);
        PUT("disk_remaining", RV_TYPED_PARAM_ULLONG, j->disk_remaining);
        if (j->disk_bps)
            PUT("disk_bps", RV_TYPED_PARAM_ULLONG, j->disk_bps);
    }
#undef PUT
    return n;
}

static void params_free(rv_typed_param *p, u_int n)
{
    for (u_int i = 0; p && i < n; i++) {
        free(p[i].field);
        if (p[i].value.type == RV_TYPED_PARAM_STRING)
            free(p[i].value.rv_typed_param_value_u.s);
    }
    free(p);
}

/* The typed parameter list of j (NULL with err when memory is short). */
static rv_typed_param *job_typed_params(const rv_qemu_jobinfo *j, bool completed, u_int *len,
                                        rv_err *err)
{
    job_param v[RV_DOMAIN_JOB_STATS_MAX];
    size_t n = job_params(j, completed, v);
    rv_typed_param *p = rv_tune_param_list((int)n, (int)n, len, err);
    if (!p)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (rv_tune_param_name(&p[i], v[i].name, v[i].type, err) < 0) {
            params_free(p, (u_int)n);
            *len = 0;
            return NULL;
        }
        if (v[i].type == RV_TYPED_PARAM_INT || v[i].type == RV_TYPED_PARAM_BOOLEAN)
            p[i].value.rv_typed_param_value_u.i = (int)v[i].value;
        else if (v[i].type == RV_TYPED_PARAM_STRING) {
            if (!(p[i].value.rv_typed_param_value_u.s = strdup(v[i].str))) {
                params_free(p, (u_int)n);
                *len = 0;
                return NULL;
            }
        } else
            p[i].value.rv_typed_param_value_u.ul = v[i].value;
    }
    return p;
}

void rv_qemu_jobinfo_end(qemu_dom *d, bool completed, bool event)
{
    rv_qemu_jobinfo *j = d->job_now;
    d->job_now = NULL;
    if (!j)
        return;
    if (!completed) {
        free(j);
        return;
    }
    j->ended = ev_time();
    free(d->job_last);
    d->job_last = j;
    if (!event)
        return;
    rv_err err = { 0 };
    rv_dom_ref ref = { 0 };
    u_int n = 0;
    rv_typed_param *p = job_typed_params(j, true, &n, &err);
    if (p && rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_job_completed_event(&rv_qemu_driver, &ref, p, n);
    else
        RV_WARN("domain '%s': no job-completed event: out of memory", ref.name ? ref.name : "?");
    rv_dom_ref_clear(&ref);
    params_free(p, n);
    rv_err_clear(&err);
}

void rv_qemu_jobinfo_free(qemu_dom *d)
{
    free(d->job_now);
    free(d->job_last);
    d->job_now = d->job_last = NULL;
}

/* ================================================================ the calls */

/* libvirtd refuses these on a domain that does not run in the domain
 * error domain (VIR_FROM_DOMAIN), not the driver's. */
static qemu_dom *get_running(const rv_nonnull_domain *wire, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get_running(wire, err);
    if (!d && err->code == RV_ERR_OPERATION_INVALID)
        err->domain = RV_FROM_DOMAIN;
    return d;
}

int rv_qemu_domain_get_job_info(rv_driver_conn *c, const rv_domain_get_job_info_args *args,
                                rv_domain_get_job_info_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = get_running(&args->dom, err);
    if (!d || rv_qemu_migrate_in_refused(d, err))
        return -1;
    const rv_qemu_jobinfo *j = d->job_now;
    memset(ret, 0, sizeof(*ret));
    if (!j)
        return 0;
    ret->type = RV_DOMAIN_JOB_UNBOUNDED;
    ret->timeElapsed = ms_between(j->started, ev_time());
    ret->memTotal = j->mem_total;
    ret->memProcessed = j->mem_processed;
    ret->memRemaining = j->mem_remaining;
    ret->fileTotal = j->disk_total;
    ret->fileProcessed = j->disk_processed;
    ret->fileRemaining = j->disk_remaining;
    ret->dataTotal = ret->memTotal + ret->fileTotal;
    ret->dataProcessed = ret->memProcessed + ret->fileProcessed;
    ret->dataRemaining = ret->memRemaining + ret->fileRemaining;
    return 0;
}

int rv_qemu_domain_get_job_stats(rv_driver_conn *c, const rv_domain_get_job_stats_args *args,
                                 rv_domain_get_job_stats_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            RV_DOMAIN_JOB_STATS_COMPLETED | RV_DOMAIN_JOB_STATS_KEEP_COMPLETED,
                            "qemuDomainGetJobStats", err) < 0)
        return -1;
    bool completed = args->flags & RV_DOMAIN_JOB_STATS_COMPLETED;
    /* The last completed job's figures outlive the process (a save's). */
    qemu_dom *d = completed ? rv_qemu_dom_get(&args->dom, err) : get_running(&args->dom, err);
    if (!d || (!completed && rv_qemu_migrate_in_refused(d, err)))
        return -1;
    const rv_qemu_jobinfo *j = completed ? d->job_last : d->job_now;
    ret->type = !j ? RV_DOMAIN_JOB_NONE
                : completed ? (j->end_type ? j->end_type : RV_DOMAIN_JOB_COMPLETED)
                            : RV_DOMAIN_JOB_UNBOUNDED;
    if (!j)
        return 0;
    if (!(ret->params.params_val = job_typed_params(j, completed, &ret->params.params_len, err)))
        return -1;
    if (completed && !(args->flags & RV_DOMAIN_JOB_STATS_KEEP_COMPLETED)) {
        free(d->job_last);
        d->job_last = NULL;
    }
    return 0;
}

static int abort_job(const rv_nonnull_domain *wire, unsigned int flags, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, RV_DOMAIN_ABORT_JOB_POSTCOPY,
                            "qemuDomainAbortJobFlags", err) < 0)
        return -1;
    qemu_dom *d = get_running(wire, err);
    if (!d)
        return -1;
    if (flags & RV_DOMAIN_ABORT_JOB_POSTCOPY)
        return fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: current job is not outgoing migration "
                    "in post-copy mode");
    rv_qemu_jobinfo *j = d->job_now;
    if (!j)
        return fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: no job is active on the domain");
    if (!j->abort)
        return fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: %s", j->no_abort);
    if (j->aborted)
        return 0;
    j->aborted = true;
    RV_INFO("domain: aborting the job '%s'", j->name);
    if (j->abort(d, err) < 0) {
        j->aborted = false;
        return -1;
    }
    return 0;
}

int rv_qemu_domain_abort_job(rv_driver_conn *c, const rv_domain_abort_job_args *args,
                             rv_err *err)
{
    (void)c;
    return abort_job(&args->dom, 0, err);
}

int rv_qemu_domain_abort_job_flags(rv_driver_conn *c, const rv_domain_abort_job_flags_args *args,
                                   rv_err *err)
{
    (void)c;
    return abort_job(&args->dom, args->flags, err);
}
