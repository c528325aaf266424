/* The record of a domain's long job (save, managed save, core dump,
 * backup; block copy can report into it too): what it is, since when, how far it got,
 * and the figures of the last one that completed.  GET_JOB_INFO,
 * GET_JOB_STATS and ABORT_JOB read and act on it (qemu_jobinfo.c); the
 * code that runs a job reports into it:
 *
 *     rv_qemu_jobinfo_begin(d, RV_DOMAIN_JOB_OPERATION_SAVE, abort_fn, "domain save");
 *     ... rv_qemu_jobinfo_migration(d, query_migrate_reply);   (each poll)
 *     ... rv_qemu_jobinfo_cpus_stopped(d);    (the guest stops: downtime from here)
 *     rv_qemu_jobinfo_end(d, true, true);     (completed: kept, JOB_COMPLETED sent)
 *
 * A job that fails or is aborted ends with rv_qemu_jobinfo_end(d, false,
 * false): nothing is kept, as libvirtd keeps nothing of a cancelled save. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_JOBINFO_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_JOBINFO_H

#include <stdbool.h>

#include <json-c/json.h>

#include "server/drivers/driver.h"

struct qemu_dom;

/* Call the job off: 0 once asked (it ends later, through the job's own
 * failure path), or -1 with err. */
typedef int (*rv_qemu_job_abort_fn)(struct qemu_dom *d, rv_err *err);

typedef struct rv_qemu_jobinfo {
    int operation;              /* RV_DOMAIN_JOB_OPERATION_* */
    const char *name;           /* in the abort error: "job 'domain save' canceled" */
    rv_qemu_job_abort_fn abort; /* NULL: cannot be aborted (why: no_abort) */
    const char *no_abort;
    bool aborted;               /* ABORT_JOB asked: the job's failure says so */
    bool io_error;              /* an outgoing migration with ABORT_ON_ERROR cancelled
                                 * for the guest's I/O error: its failure says so */
    double started, ended, cpus_stopped;    /* ev_time(); 0: not yet */
    /* Figures, in bytes unless named otherwise; each group is reported
     * when its "have" is set. */
    bool have_migration;        /* query-migrate's: memory_* and the times */
    unsigned long long mem_total, mem_processed, mem_remaining, mem_bps, mem_constant,
        mem_normal, mem_normal_bytes, mem_dirty_rate, mem_iteration, mem_postcopy,
        mem_page_size, setup_ms, downtime_ms;
    bool have_memory;           /* memory total/processed/remaining only (a memory dump) */
    bool have_disk;             /* disk_* (block copy) */
    unsigned long long disk_total, disk_processed, disk_remaining, disk_bps;
    /* A backup (qemu_backup.c) reports as libvirtd's: a push its disk_*
     * without data_*, a pull its scratch space (disk_temp_*), and once
     * over success and errmsg. */
    bool have_backup, backup_pull, success;
    unsigned long long temp_used, temp_total;
    char errmsg[128];           /* "": none */
    int end_type;               /* what a completed record's type says (0: COMPLETED; a
                                 * cancelled or failed push: CANCELLED, FAILED) */
} rv_qemu_jobinfo;

/* A job begins on running d (name: for the abort error; abort NULL with
 * no_abort: why it cannot be aborted).  -1 when memory is short (the job
 * then runs unrecorded). */
int rv_qemu_jobinfo_begin(struct qemu_dom *d, int operation, const char *name,
                          rv_qemu_job_abort_fn abort, const char *no_abort);
/* The current job, or NULL. */
rv_qemu_jobinfo *rv_qemu_jobinfo_current(struct qemu_dom *d);
/* Progress from a query-migrate reply (its "ram" and times). */
void rv_qemu_jobinfo_migration(struct qemu_dom *d, json_object *query_migrate);
/* Progress in memory bytes (query-dump) or in disk bytes (block jobs). */
void rv_qemu_jobinfo_memory(struct qemu_dom *d, unsigned long long total,
                            unsigned long long processed);
void rv_qemu_jobinfo_disk(struct qemu_dom *d, unsigned long long total,
                          unsigned long long processed);
/* The job stopped the guest's CPUs now: its downtime counts from here. */
void rv_qemu_jobinfo_cpus_stopped(struct qemu_dom *d);
/* If the current job was aborted, err becomes libvirt's "operation
 * aborted: job '...' canceled by client"; true then. */
bool rv_qemu_jobinfo_aborted(struct qemu_dom *d, rv_err *err);
/* The job is over.  completed: its figures become the last completed
 * job's, and with event JOB_COMPLETED goes out with them. */
void rv_qemu_jobinfo_end(struct qemu_dom *d, bool completed, bool event);
/* The domain goes: its records too. */
void rv_qemu_jobinfo_free(struct qemu_dom *d);

#endif
