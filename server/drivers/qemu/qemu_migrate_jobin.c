/* The job records of a migration beyond the source's own (qemu_jobinfo.c),
 * as libvirtd 9.0 keeps them (observed side by side, docs/qemu-driver.md):
 *   - the source's PERFORM3 answers a cookie with <statistics>, the
 *     completed job's figures (started, stopped and sent as ms since the
 *     epoch; the rest named as the job's typed parameters), which the
 *     client passes to the destination's FINISH3;
 *   - the destination has an incoming job from PREPARE3 to FINISH3:
 *     GET_JOB_INFO and GET_JOB_STATS refuse it ("migration statistics are
 *     available only on the source host"); once FINISH3 succeeded, the
 *     completed record (`domjobinfo --completed`) is Incoming migration
 *     with the source's figures (its own times when the source sent none),
 *     Time elapsed from the source's start and Total downtime from the
 *     source's stop to the resume here.  No JOB_COMPLETED event there, as
 *     libvirtd sends none on the destination; ABORT_JOB says there is no
 *     job, as libvirtd's does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "server/drivers/conf/xml_read.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_jobinfo.h"

/* The figures, in the cookie's order (libvirtd's, observed). */
#define STAT_FIELDS(X)                                                                             \
    X(memory_total, mem_total)                                                                     \
    X(memory_processed, mem_processed)                                                             \
    X(memory_remaining, mem_remaining)                                                             \
    X(memory_bps, mem_bps)                                                                         \
    X(memory_constant, mem_constant)                                                               \
    X(memory_normal, mem_normal)                                                                   \
    X(memory_normal_bytes, mem_normal_bytes)                                                       \
    X(memory_dirty_rate, mem_dirty_rate)                                                           \
    X(memory_iteration, mem_iteration)                                                             \
    X(memory_postcopy_requests, mem_postcopy)                                                      \
    X(memory_page_size, mem_page_size)                                                             \
    X(disk_total, disk_total)                                                                      \
    X(disk_processed, disk_processed)                                                              \
    X(disk_remaining, disk_remaining)                                                              \
    X(disk_bps, disk_bps)

static unsigned long long epoch_ms(double t)
{
    return t > 0 ? (unsigned long long)(t * 1000.0) : 0;
}

static unsigned long long ms_between(double from, double to)
{
    return from > 0 && to > from ? (unsigned long long)((to - from) * 1000.0) : 0;
}

int rv_qemu_migrate_stats_cookie(qemu_dom *d, char **val, u_int *len, rv_err *err)
{
    const rv_qemu_jobinfo *j = d->job_last;
    char *base = NULL;
    u_int blen = 0;
    if (!j || !j->have_migration)
        return 0;
    if (rv_qemu_migrate_cookie(d->live, false, 0, &base, &blen, err) < 0)
        return -1;
    const char *tail = strstr(base, "</qemu-migration>");
    char *stats = NULL;
    size_t slen = 0;
    FILE *f = open_memstream(&stats, &slen);
    if (!f || !tail) {
        if (f)
            fclose(f);
        free(stats);
        free(base);
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "%s", "out of memory");
    }
    unsigned long long down = j->cpus_stopped ? ms_between(j->cpus_stopped, j->ended) : j->downtime_ms;
    fprintf(f, "%.*s  <statistics>\n", (int)(tail - base), base);
    fprintf(f, "    <started>%llu</started>\n", epoch_ms(j->started));
    fprintf(f, "    <stopped>%llu</stopped>\n", epoch_ms(j->cpus_stopped));
    fprintf(f, "    <sent>%llu</sent>\n", epoch_ms(j->ended));
    fprintf(f, "    <time_elapsed>%llu</time_elapsed>\n", ms_between(j->started, j->ended));
    fprintf(f, "    <downtime>%llu</downtime>\n", down);
    fprintf(f, "    <setup_time>%llu</setup_time>\n", j->setup_ms);
#define PUT(el, field) fprintf(f, "    <" #el ">%llu</" #el ">\n", j->field);
    STAT_FIELDS(PUT)
#undef PUT
    fprintf(f, "  </statistics>\n%s", tail);
    bool ok = fclose(f) == 0;
    free(base);
    if (!ok) {
        free(stats);
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "%s", "out of memory");
    }
    *val = stats;
    *len = (u_int)slen + 1;     /* (its NUL counted, as libvirt's) */
    return 0;
}

void rv_qemu_migrate_in_begin(qemu_dom *d)
{
    /* (out of memory: no record; the migration goes on) */
    /* (domjobabort: libvirtd's answer there, observed) */
    rv_qemu_jobinfo_begin(d, RV_DOMAIN_JOB_OPERATION_MIGRATION_IN, "migration in", NULL,
                          "no job is active on the domain");
}

bool rv_qemu_migrate_in_refused(const qemu_dom *d, rv_err *err)
{
    const rv_qemu_jobinfo *j = d->job_now;
    if (!j || j->operation != RV_DOMAIN_JOB_OPERATION_MIGRATION_IN)
        return false;
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_UNSUPPORTED,
               "Operation not supported: %s",
               "migration statistics are available only on the source host");
    return true;
}

void rv_qemu_migrate_in_gone(qemu_dom *d)
{
    if (d->job_now && d->job_now->operation == RV_DOMAIN_JOB_OPERATION_MIGRATION_IN)
        rv_qemu_jobinfo_end(d, false, false);
}

/* One unsigned number of <statistics>; false when absent or bad. */
static bool stat_u64(const xmlNode *stats, const char *name, unsigned long long *out)
{
    xmlNode *n = rv_lx_plain_child(stats, name);
    int failed = 0;
    char *text = n ? rv_lx_text(n, &failed) : NULL;
    char *end = NULL;
    unsigned long long v = text ? strtoull(text, &end, 10) : 0;
    bool ok = text && end != text && *end == '\0';
    free(text);
    if (ok)
        *out = v;
    return ok;
}

void rv_qemu_migrate_in_done(qemu_dom *d, const char *cookie, u_int len)
{
    rv_qemu_jobinfo *j = d->job_now;
    if (!j || j->operation != RV_DOMAIN_JOB_OPERATION_MIGRATION_IN)
        return;
    xmlDoc *doc;
    xmlNode *root = rv_qemu_migrate_cookie_read(cookie, len, &doc);
    xmlNode *stats = root ? rv_lx_plain_child(root, "statistics") : NULL;
    unsigned long long started = 0, stopped = 0, v = 0;
    if (stats) {
        /* The source's clock: the times span both hosts, as libvirtd's. */
        if (stat_u64(stats, "started", &started) && started)
            j->started = (double)started / 1000.0;
        if (stat_u64(stats, "stopped", &stopped) && stopped)
            j->cpus_stopped = (double)stopped / 1000.0;
        j->have_migration = true;
        if (stat_u64(stats, "setup_time", &v))
            j->setup_ms = v;
        if (stat_u64(stats, "downtime", &v))
            j->downtime_ms = v;
#define GET(el, field)                                                                             \
    if (stat_u64(stats, #el, &v))                                                                  \
        j->field = v;
        STAT_FIELDS(GET)
#undef GET
    }
    rv_lx_free(doc);
    rv_qemu_jobinfo_end(d, true, false);
}
