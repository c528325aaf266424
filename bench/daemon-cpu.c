/*
 * bench/daemon-cpu: the daemon's CPU time per call, as libvirt's own client
 * library makes the calls (loaded with dlopen), for several daemons or
 * domains side by side in one run.
 *
 *   daemon-cpu [--calls N] [--rounds R] [--call info|state|stats]
 *              [--before CMD] [--after CMD] TARGET [TARGET...]
 *   TARGET = LABEL,URI,DAEMON-PID,DOMAIN
 *
 * Each round makes N calls (GetInfo, GetState, or domstats with the state,
 * cpu-total, balloon and vcpu groups) against each target in turn and
 * reads the daemon's CPU clock (clock_getcpuclockid on its pid) before
 * and after: what the daemon spent serving them, whatever else the
 * machine does meanwhile.  One call at a time from one thread: run it
 * with the daemons and this program on one CPU (taskset) and every call
 * also pays the daemon's wakeup, as a synchronous client does.  Printed
 * per target: microseconds of daemon CPU per call, min/median/max over
 * the rounds, and the median of the per-round ratios to the first
 * target.  A tenth of the calls go first as a warm-up; --before runs a
 * shell command after it and --after one after the last round (callgrind
 * counts between them).  bench/run-daemon-cpu.sh starts the daemons and
 * the domains.
 * Figures, not verdicts: the exit status is 0 whenever every call worked.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "bench/libvirt_dl.h"

#define MAX_TARGETS 8
#define MAX_ROUNDS 100
#define STATS_GROUPS (1u | 2u | 4u | 8u)   /* state, cpu-total, balloon, vcpu */

typedef struct target {
    char *label, *uri, *domain;
    pid_t pid;
    void *conn, *dom;
    double us[MAX_ROUNDS];
} target;

static libvirt_api lv;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "daemon-cpu: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static double cpu_us(pid_t pid)
{
    clockid_t clock;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
        die("cannot read the daemon's CPU clock (has it exited?)", NULL);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void one_call(target *t, const char *call)
{
    int rc;
    if (strcmp(call, "info") == 0) {
        lv_domain_info info;
        rc = lv.domain_get_info(t->dom, &info);
    } else if (strcmp(call, "state") == 0) {
        int state, reason;
        rc = lv.domain_get_state(t->dom, &state, &reason, 0);
    } else {
        void *doms[2] = { t->dom, NULL }, **records = NULL;
        rc = lv.domain_list_get_stats(doms, STATS_GROUPS, &records, 0) == 1 ? 0 : -1;
        if (records)
            lv.stats_record_list_free(records);
    }
    if (rc < 0)
        die(t->label, lv.get_last_error_message());
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    double sorted[MAX_ROUNDS];
    memcpy(sorted, v, (size_t)n * sizeof(*v));
    qsort(sorted, (size_t)n, sizeof(*v), compare_doubles);
    return sorted[n / 2];
}

int main(int argc, char **argv)
{
    long calls = 20000;
    int rounds = 5;
    const char *call = "info", *before = NULL, *after = NULL;
    static const struct option longopts[] = {
        { "calls", required_argument, NULL, 'n' },
        { "rounds", required_argument, NULL, 'r' },
        { "call", required_argument, NULL, 'c' },
        { "before", required_argument, NULL, 'b' },
        { "after", required_argument, NULL, 'a' },
        { NULL, 0, NULL, 0 },
    };
    for (int opt; (opt = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (opt) {
        case 'n': calls = atol(optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 'c': call = optarg; break;
        case 'b': before = optarg; break;
        case 'a': after = optarg; break;
        default:
            fprintf(stderr, "usage: daemon-cpu [--calls N] [--rounds R] [--call info|state|stats] "
                            "[--before CMD] [--after CMD] LABEL,URI,DAEMON-PID,DOMAIN...\n");
            return 2;
        }
    }
    int ntargets = argc - optind;
    if (calls < 1 || rounds < 1 || rounds > MAX_ROUNDS || ntargets < 1 ||
        ntargets > MAX_TARGETS ||
        (strcmp(call, "info") && strcmp(call, "state") && strcmp(call, "stats")))
        die("--calls >= 1, --rounds 1..100, --call info|state|stats, 1..8 targets", NULL);
    if (!libvirt_load(&lv))
        die("libvirt's client library (libvirt.so.0) is not installed", NULL);

    target t[MAX_TARGETS];
    for (int i = 0; i < ntargets; i++) {
        char *spec = argv[optind + i];
        char *pid = NULL;
        t[i].label = strtok(spec, ",");
        t[i].uri = strtok(NULL, ",");
        pid = strtok(NULL, ",");
        t[i].domain = strtok(NULL, ",");
        if (!t[i].domain)
            die("a target is LABEL,URI,DAEMON-PID,DOMAIN", spec);
        t[i].pid = (pid_t)atoi(pid);
        if (!(t[i].conn = lv.connect_open(t[i].uri)))
            die(t[i].uri, lv.get_last_error_message());
        if (!(t[i].dom = lv.domain_lookup_by_name(t[i].conn, t[i].domain)))
            die(t[i].domain, lv.get_last_error_message());
        for (long k = 0; k < calls / 10 + 1; k++)      /* warm up */
            one_call(&t[i], call);
    }
    if (before && system(before) != 0)
        die("--before failed", before);
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < ntargets; i++) {
            double start = cpu_us(t[i].pid);
            for (long k = 0; k < calls; k++)
                one_call(&t[i], call);
            t[i].us[r] = (cpu_us(t[i].pid) - start) / (double)calls;
        }
    }
    if (after && system(after) != 0)
        die("--after failed", after);
    printf("%s: microseconds of daemon CPU per call, min/median/max of %d rounds of %ld calls; "
           "ratio: median of the rounds' ratios to %s\n", call, rounds, calls, t[0].label);
    for (int i = 0; i < ntargets; i++) {
        double ratio[MAX_ROUNDS], lo = t[i].us[0], hi = t[i].us[0];
        for (int r = 0; r < rounds; r++) {
            ratio[r] = t[i].us[r] / t[0].us[r];
            lo = t[i].us[r] < lo ? t[i].us[r] : lo;
            hi = t[i].us[r] > hi ? t[i].us[r] : hi;
        }
        printf("  %-24s %7.2f / %7.2f / %7.2f us   %5.2fx\n", t[i].label, lo,
               median(t[i].us, rounds), hi, median(ratio, rounds));
        lv.domain_free(t[i].dom);
        lv.connect_close(t[i].conn);
    }
    return 0;
}
