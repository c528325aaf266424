/* A stall detector for the one loop, off unless RV_LOOP_STALL_MS is set
 * in remvirtd's environment (a diagnosis aid, see docs/qemu-driver.md).
 * It times each pass through the callbacks (from the check watcher,
 * right after the poll returns, to the prepare watcher, right before the
 * next poll) and logs a warning for a pass longer than the threshold,
 * with what the thread did meanwhile: its CPU time and its voluntary
 * (it waited in a system call) and involuntary (the scheduler took the
 * CPU away) context switches.  A long pass with little CPU time and
 * involuntary switches is the machine, not remvirtd's code. */
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "common/log.h"
#include "server/loop_stall.h"

RV_LOG_CATEGORY("server.loop");

static struct {
    double threshold;           /* seconds */
    ev_prepare prepare;
    ev_check check;
    struct timespec woke, woke_cpu;
    struct rusage woke_usage;
    unsigned long passes;
} stall;

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void on_check(struct ev_loop *loop, ev_check *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    clock_gettime(CLOCK_MONOTONIC, &stall.woke);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &stall.woke_cpu);
    getrusage(RUSAGE_THREAD, &stall.woke_usage);
    stall.passes++;
}

static void on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    if (stall.passes == 0)
        return;     /* the first pass has no start */
    struct timespec now, cpu;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = since(&stall.woke, &now);
    if (wall < stall.threshold)
        return;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    struct rusage usage;
    getrusage(RUSAGE_THREAD, &usage);
    RV_WARN("loop stall: %.1f ms in one pass of callbacks (pass %lu): %.1f ms on the CPU, "
            "%ld voluntary and %ld involuntary context switches",
            wall * 1e3, stall.passes, since(&stall.woke_cpu, &cpu) * 1e3,
            usage.ru_nvcsw - stall.woke_usage.ru_nvcsw,
            usage.ru_nivcsw - stall.woke_usage.ru_nivcsw);
}

void rvs_loop_stall_watch(struct ev_loop *loop)
{
    const char *text = getenv("RV_LOOP_STALL_MS");
    char *end = NULL;
    double ms = text ? strtod(text, &end) : 0;
    if (!text || end == text || *end || !(ms > 0))
        return;
    stall.threshold = ms / 1e3;
    /* The lowest priority for prepare (runs last before the poll) and the
     * highest for check (first after it): the pass measured whole. */
    ev_prepare_init(&stall.prepare, on_prepare);
    ev_set_priority(&stall.prepare, EV_MINPRI);
    ev_prepare_start(loop, &stall.prepare);
    ev_check_init(&stall.check, on_check);
    ev_set_priority(&stall.check, EV_MAXPRI);
    ev_check_start(loop, &stall.check);
    ev_unref(loop);     /* neither keeps the loop alive */
    ev_unref(loop);
    RV_INFO("loop stall detector: passes over %.1f ms are logged", ms);
}
