/*
 * bench/churn: connection churn.  --threads clients (default 16) each run
 * connect, open, one GetInfo, close, again and again, until --cycles
 * cycles are done in all; cycles per second for remvirtd through
 * libremvirt and for libvirtd through libvirt's client library, side by
 * side in one run.  Given a daemon's pid, it also shows its open file
 * descriptors and resident memory before, and after the churn once the
 * daemon has seen every close: both should come back to where they were.
 *
 *   churn --remvirt-sock PATH [--remvirt-pid PID]
 *         [--libvirt-sock PATH [--libvirt-pid PID]] [--cycles N] [--threads N]
 *
 * Figures, not verdicts: the exit status is 0 whenever every cycle worked.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remvirt.h"
#include "bench/libvirt_dl.h"

#define MAX_THREADS 256

static libvirt_api lv;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One cycle: 0, or -1 after saying what failed. */
typedef int (*cycle_fn)(const char *uri);

static int remvirt_cycle(const char *uri)
{
    rv_conn *c = rv_connect_open(uri, 0);
    rv_dom *d = c ? rv_domain_lookup_by_name(c, "test") : NULL;
    rv_domain_info info;
    int rc = d && rv_domain_get_info(d, &info) == 0 ? 0 : -1;
    if (rc < 0) {
        const rv_error_info *e = rv_last_error();
        fprintf(stderr, "churn: remvirt: %s\n", e ? e->message : "failed");
    }
    if (d)
        rv_domain_free(d);
    if (c && rv_connect_close(c) < 0)
        rc = -1;
    return rc;
}

static int libvirt_cycle(const char *uri)
{
    void *c = lv.connect_open(uri);
    void *d = c ? lv.domain_lookup_by_name(c, "test") : NULL;
    lv_domain_info info;
    int rc = d && lv.domain_get_info(d, &info) == 0 ? 0 : -1;
    if (rc < 0)
        fprintf(stderr, "churn: libvirt: %s\n", lv.get_last_error_message());
    if (d)
        lv.domain_free(d);
    if (c && lv.connect_close(c) < 0)
        rc = -1;
    return rc;
}

typedef struct churn_run {
    cycle_fn cycle;
    const char *uri;
    atomic_long left;
    atomic_int failed;
} churn_run;

static void *churn_thread(void *opaque)
{
    churn_run *r = opaque;
    while (atomic_fetch_sub(&r->left, 1) > 0 && !atomic_load(&r->failed))
        if (r->cycle(r->uri) < 0)
            atomic_store(&r->failed, 1);
    return NULL;
}

static int count_fds(long pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static long rss_kib(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

typedef struct result {
    double per_second;
    int fds_before, fds_after;
    long rss_before, rss_after;
} result;

static int run(cycle_fn cycle, const char *sock, long pid, long cycles, int threads,
               result *out)
{
    char uri[512];
    snprintf(uri, sizeof(uri), "test+unix:///default?socket=%s", sock);
    /* A warm-up, so that the figures after the churn compare with a daemon
     * whose allocator has seen clients come and go. */
    for (int i = 0; i < 200; i++)
        if (cycle(uri) < 0)
            return -1;
    usleep(200000);
    out->fds_before = pid ? count_fds(pid) : -1;
    out->rss_before = pid ? rss_kib(pid) : -1;
    churn_run r = { .cycle = cycle, .uri = uri };
    atomic_init(&r.left, cycles);
    pthread_t tid[MAX_THREADS];
    double start = now_seconds();
    for (int i = 0; i < threads; i++)
        if (pthread_create(&tid[i], NULL, churn_thread, &r) != 0)
            return -1;
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    out->per_second = (double)cycles / (now_seconds() - start);
    if (atomic_load(&r.failed))
        return -1;
    /* The daemon sees the last closes a moment later. */
    for (int i = 0; pid && i < 50 && count_fds(pid) > out->fds_before; i++)
        usleep(100000);
    out->fds_after = pid ? count_fds(pid) : -1;
    out->rss_after = pid ? rss_kib(pid) : -1;
    return 0;
}

static void print_row(const char *name, const result *r)
{
    printf("  %-9s %10.0f", name, r->per_second);
    if (r->fds_before >= 0)
        printf("  %6d -> %-6d  %7ld -> %-7ld", r->fds_before, r->fds_after, r->rss_before,
               r->rss_after);
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *remvirt_sock = NULL, *libvirt_sock = NULL;
    long remvirt_pid = 0, libvirt_pid = 0, cycles = 100000;
    int threads = 16;
    static const struct option longopts[] = {
        { "remvirt-sock", required_argument, NULL, 'r' },
        { "remvirt-pid", required_argument, NULL, 'R' },
        { "libvirt-sock", required_argument, NULL, 'l' },
        { "libvirt-pid", required_argument, NULL, 'L' },
        { "cycles", required_argument, NULL, 'c' },
        { "threads", required_argument, NULL, 't' },
        { NULL, 0, NULL, 0 },
    };
    for (int opt; (opt = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (opt) {
        case 'r': remvirt_sock = optarg; break;
        case 'R': remvirt_pid = atol(optarg); break;
        case 'l': libvirt_sock = optarg; break;
        case 'L': libvirt_pid = atol(optarg); break;
        case 'c': cycles = atol(optarg); break;
        case 't': threads = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: churn --remvirt-sock PATH [--remvirt-pid PID] "
                            "[--libvirt-sock PATH [--libvirt-pid PID]] [--cycles N] "
                            "[--threads N]\n");
            return 2;
        }
    }
    if (!remvirt_sock || cycles < 1 || threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "churn: --remvirt-sock is required; --cycles >= 1, --threads 1..%d\n",
                MAX_THREADS);
        return 2;
    }
    if (libvirt_sock && !libvirt_load(&lv)) {
        fprintf(stderr, "churn: libvirt's client library (libvirt.so.0) is not installed\n");
        return 1;
    }
    result rv = { 0 }, lvr = { 0 };
    if (run(remvirt_cycle, remvirt_sock, remvirt_pid, cycles, threads, &rv) < 0)
        return 1;
    if (libvirt_sock && run(libvirt_cycle, libvirt_sock, libvirt_pid, cycles, threads, &lvr) < 0)
        return 1;
    printf("%ld connect-open-GetInfo-close cycles by %d clients\n", cycles, threads);
    printf("  %-9s %10s  %-16s  %-18s\n", "server", "cycles/s", "daemon fds", "daemon RSS KiB");
    print_row("remvirtd", &rv);
    if (libvirt_sock) {
        print_row("libvirtd", &lvr);
        printf("  remvirtd/libvirtd: %.1fx the cycles per second\n",
               rv.per_second / lvr.per_second);
    }
    return 0;
}
