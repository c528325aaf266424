/*
 * bench/qemu-load: does waiting on QEMU ever stall the daemon's one loop?
 * One client calls GetInfo on the test driver's domain 'test' in a loop,
 * first with nothing else going on (idle), then while 10 other clients
 * each start and destroy a QEMU guest of their own over and over (load),
 * in the same run against the same remvirtd.  It prints the GetInfo
 * latency p50/p99/max for both, and loaded/idle ratios; the target from
 * issue 12 is p99 under load at most 2x idle (PASS/MISS, never the exit
 * status).  It also times starting the 10 guests concurrently and one
 * after the other.
 *
 *   bench/qemu-load --test-uri URI --qemu-uri URI [--calls N] [--clients N]
 *
 * The guests bench-q1..bench-qN must be defined (bench/run-qemu-load.sh
 * does it).  Exit status: 0 when every call worked.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remvirt.h"

#define MAX_CLIENTS 64

static const char *test_uri, *qemu_uri;
static int calls = 20000, nclients = 10;
static atomic_int stop;
static atomic_int cycles;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    const rv_error_info *e = rv_last_error();
    fprintf(stderr, "qemu-load: %s: %s\n", what, e ? e->message : "failed");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats { double p50, p99, max; } stats;

/* GetInfo `calls` times; latencies in microseconds. */
static stats measure(rv_dom *dom)
{
    double *lat = malloc(sizeof(double) * (size_t)calls);
    if (!lat)
        die("out of memory");
    rv_domain_info info;
    for (int i = 0; i < calls; i++) {
        double t = now();
        if (rv_domain_get_info(dom, &info) < 0)
            die("GetInfo");
        lat[i] = (now() - t) * 1e6;
    }
    qsort(lat, (size_t)calls, sizeof(double), cmp_double);
    stats s = { lat[calls / 2], lat[(size_t)(calls * 0.99)], lat[calls - 1] };
    free(lat);
    return s;
}

typedef struct worker {
    pthread_t thread;
    rv_conn *conn;
    rv_dom *dom;
} worker;

static void *start_destroy(void *opaque)
{
    worker *w = opaque;
    while (!atomic_load(&stop)) {
        if (rv_domain_create(w->dom, 0) < 0)
            die("start");
        if (rv_domain_destroy(w->dom, 0) < 0)
            die("destroy");
        atomic_fetch_add(&cycles, 1);
    }
    return NULL;
}

static void *start_once(void *opaque)
{
    worker *w = opaque;
    if (rv_domain_create(w->dom, 0) < 0)
        die("start");
    return NULL;
}

static void destroy_all(worker *ws)
{
    for (int i = 0; i < nclients; i++)
        if (rv_domain_destroy(ws[i].dom, 0) < 0)
            die("destroy");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "test-uri", required_argument, NULL, 't' },
        { "qemu-uri", required_argument, NULL, 'q' },
        { "calls", required_argument, NULL, 'n' },
        { "clients", required_argument, NULL, 'c' },
        { NULL, 0, NULL, 0 },
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 't': test_uri = optarg; break;
        case 'q': qemu_uri = optarg; break;
        case 'n': calls = atoi(optarg); break;
        case 'c': nclients = atoi(optarg); break;
        default: return 2;
        }
    }
    if (!test_uri || !qemu_uri || calls < 100 || nclients < 1 || nclients > MAX_CLIENTS) {
        fprintf(stderr, "usage: qemu-load --test-uri URI --qemu-uri URI [--calls N>=100] "
                        "[--clients 1..%d]\n", MAX_CLIENTS);
        return 2;
    }
    rv_conn *reader = rv_connect_open(test_uri, 0);
    if (!reader)
        die(test_uri);
    rv_dom *test = rv_domain_lookup_by_name(reader, "test");
    if (!test)
        die("lookup test");
    worker ws[MAX_CLIENTS];
    for (int i = 0; i < nclients; i++) {
        char name[32];
        snprintf(name, sizeof(name), "bench-q%d", i + 1);
        if (!(ws[i].conn = rv_connect_open(qemu_uri, 0)))
            die(qemu_uri);
        if (!(ws[i].dom = rv_domain_lookup_by_name(ws[i].conn, name)))
            die(name);
    }

    /* Starting: one after the other, then all at once. */
    double t = now();
    for (int i = 0; i < nclients; i++)
        start_once(&ws[i]);
    double sequential = now() - t;
    destroy_all(ws);
    t = now();
    for (int i = 0; i < nclients; i++)
        pthread_create(&ws[i].thread, NULL, start_once, &ws[i]);
    for (int i = 0; i < nclients; i++)
        pthread_join(ws[i].thread, NULL);
    double concurrent = now() - t;
    destroy_all(ws);

    measure(test);      /* warm-up */
    stats idle = measure(test);
    for (int i = 0; i < nclients; i++)
        pthread_create(&ws[i].thread, NULL, start_destroy, &ws[i]);
    stats load = measure(test);
    atomic_store(&stop, 1);
    for (int i = 0; i < nclients; i++)
        pthread_join(ws[i].thread, NULL);

    printf("GetInfo on test:///default, %d calls each (microseconds)\n", calls);
    printf("  %-36s %9s %9s %9s\n", "", "p50", "p99", "max");
    printf("  %-36s %9.1f %9.1f %9.1f\n", "idle", idle.p50, idle.p99, idle.max);
    char what[64];
    snprintf(what, sizeof(what), "%d clients starting/destroying QEMU", nclients);
    printf("  %-36s %9.1f %9.1f %9.1f\n", what, load.p50, load.p99, load.max);
    printf("  %-36s %9.2f %9.2f %9.2f\n", "ratio load/idle", load.p50 / idle.p50,
           load.p99 / idle.p99, load.max / idle.max);
    printf("  start/destroy cycles during the loaded run: %d\n", atomic_load(&cycles));
    printf("  target p99 load/idle <= 2: %s\n", load.p99 <= 2 * idle.p99 ? "PASS" : "MISS");
    printf("starting %d guests: %.3f s one after the other, %.3f s all at once\n", nclients,
           sequential, concurrent);
    for (int i = 0; i < nclients; i++) {
        rv_domain_free(ws[i].dom);
        rv_connect_close(ws[i].conn);
    }
    rv_domain_free(test);
    rv_connect_close(reader);
    return 0;
}
