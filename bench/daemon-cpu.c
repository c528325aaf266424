/*
 * bench/daemon-cpu: the daemon's CPU time per call, as libvirt's own client
 * library makes the calls (loaded with dlopen), for several daemons or
 * domains side by side in one run.
 *
 *   daemon-cpu [--calls N] [--rounds R] [--call info|state|stats] [--floor]
 *              [--before CMD] [--after CMD] TARGET [TARGET...]
 *   TARGET = LABEL,URI,DAEMON-PID,DOMAIN
 *
 * --floor adds a last target: a child process with the loop of a daemon
 * and none of its work (epoll_wait, then read the call, then send a
 * canned GetInfo-sized reply), called by this program with raw packets
 * of GetInfo's size: the kernel's share of a call, which no daemon on
 * this machine can go below (a wakeup, a read and a send).
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
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/libvirt_dl.h"

#define MAX_TARGETS 8
#define MAX_ROUNDS 100
#define STATS_GROUPS (1u | 2u | 4u | 8u)   /* state, cpu-total, balloon, vcpu */

/* GetInfo's call (a domain "test" with its UUID) and reply sizes on the
 * wire, length word included. */
#define FLOOR_CALL_SIZE (4 + 24 + 8 + 16 + 4)
#define FLOOR_REPLY_SIZE (4 + 24 + 4 + 8 + 8 + 4 + 8)

typedef struct target {
    char *label, *uri, *domain;
    pid_t pid;
    int floor_fd;               /* the floor's socket; -1 for a libvirt target */
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

/* The floor's server: a loop as a daemon's, with no work in it. */
static void floor_server(int fd) __attribute__((noreturn));
static void floor_server(int fd)
{
    char in[4096], reply[FLOOR_REPLY_SIZE] = { 0, 0, 0, FLOOR_REPLY_SIZE };
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        _exit(1);
    size_t have = 0;
    for (;;) {
        if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR)
            _exit(1);
        ssize_t n = read(fd, in + have, sizeof(in) - have);
        if (n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            _exit(0);
        }
        have += (size_t)n;
        for (; have >= FLOOR_CALL_SIZE; have -= FLOOR_CALL_SIZE)
            if (send(fd, reply, sizeof(reply), MSG_NOSIGNAL) != (ssize_t)sizeof(reply))
                _exit(1);
    }
}

static void floor_start(target *t)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        die("socketpair", strerror(errno));
    pid_t child = fork();
    if (child < 0)
        die("fork", strerror(errno));
    if (child == 0) {
        close(sv[0]);
        floor_server(sv[1]);
    }
    close(sv[1]);
    *t = (target){ .label = "floor (empty loop)", .pid = child, .floor_fd = sv[0] };
}

static void floor_call(target *t)
{
    char call[FLOOR_CALL_SIZE] = { 0, 0, 0, FLOOR_CALL_SIZE }, reply[FLOOR_REPLY_SIZE];
    if (write(t->floor_fd, call, sizeof(call)) != (ssize_t)sizeof(call))
        die("floor", "cannot send");
    for (size_t got = 0; got < sizeof(reply);) {
        ssize_t n = read(t->floor_fd, reply + got, sizeof(reply) - got);
        if (n <= 0)
            die("floor", "the server went away");
        got += (size_t)n;
    }
}

static void one_call(target *t, const char *call)
{
    int rc;
    if (t->floor_fd >= 0) {
        floor_call(t);
        return;
    }
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
    int with_floor = 0;
    static const struct option longopts[] = {
        { "calls", required_argument, NULL, 'n' },
        { "rounds", required_argument, NULL, 'r' },
        { "call", required_argument, NULL, 'c' },
        { "before", required_argument, NULL, 'b' },
        { "after", required_argument, NULL, 'a' },
        { "floor", no_argument, NULL, 'f' },
        { NULL, 0, NULL, 0 },
    };
    for (int opt; (opt = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (opt) {
        case 'n': calls = atol(optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 'c': call = optarg; break;
        case 'b': before = optarg; break;
        case 'a': after = optarg; break;
        case 'f': with_floor = 1; break;
        default:
            fprintf(stderr, "usage: daemon-cpu [--calls N] [--rounds R] [--call info|state|stats] "
                            "[--floor] [--before CMD] [--after CMD] LABEL,URI,DAEMON-PID,DOMAIN...\n");
            return 2;
        }
    }
    int ntargets = argc - optind;
    if (calls < 1 || rounds < 1 || rounds > MAX_ROUNDS || ntargets < 1 ||
        ntargets + with_floor > MAX_TARGETS ||
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
        t[i].floor_fd = -1;
        if (!(t[i].conn = lv.connect_open(t[i].uri)))
            die(t[i].uri, lv.get_last_error_message());
        if (!(t[i].dom = lv.domain_lookup_by_name(t[i].conn, t[i].domain)))
            die(t[i].domain, lv.get_last_error_message());
        for (long k = 0; k < calls / 10 + 1; k++)      /* warm up */
            one_call(&t[i], call);
    }
    if (with_floor) {
        floor_start(&t[ntargets]);
        for (long k = 0; k < calls / 10 + 1; k++)
            one_call(&t[ntargets], call);
        ntargets++;
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
        if (t[i].floor_fd >= 0) {
            close(t[i].floor_fd);
            waitpid(t[i].pid, NULL, 0);
            continue;
        }
        lv.domain_free(t[i].dom);
        lv.connect_close(t[i].conn);
    }
    return 0;
}
