/*
 * bench/define-load: does writing definitions stall the daemon's loop?
 * One client calls GetInfo on the test driver's domain 'test' in a loop,
 * first alone (idle), then while N other clients each define a QEMU
 * domain of their own over and over (every define is an fsync'd file), in
 * the same run against the same remvirtd.  It prints the GetInfo latency
 * p50/p99/max in microseconds for both, and the defines done meanwhile
 * (the loaded phase lasts at least --seconds, default 5).
 *
 *   bench/define-load --test-uri URI --qemu-uri URI [--calls N] [--clients N]
 *                     [--seconds S]
 *
 * bench/run-define-load.sh runs it against two remvirtd binaries side by
 * side.  Exit status: 0 when every call worked.
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

static int calls = 20000, nclients = 4;
static double seconds = 5;
static atomic_int stop;
static atomic_int defines;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    const rv_error_info *e = rv_last_error();
    fprintf(stderr, "define-load: %s: %s\n", what, e ? e->message : "failed");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats { double p50, p99, max; } stats;

/* GetInfo at least `calls` times and for at least min_seconds (so the
 * defines' rate is over a span worth the name); latencies in us. */
static stats measure(rv_dom *dom, double min_seconds, int *done)
{
    size_t cap = (size_t)calls, n = 0;
    double *lat = malloc(sizeof(double) * cap);
    if (!lat)
        die("out of memory");
    rv_domain_info info;
    double until = now() + min_seconds;
    while (n < (size_t)calls || now() < until) {
        if (n == cap && !(lat = realloc(lat, sizeof(double) * (cap *= 2))))
            die("out of memory");
        double t = now();
        if (rv_domain_get_info(dom, &info) < 0)
            die("GetInfo");
        lat[n++] = (now() - t) * 1e6;
    }
    qsort(lat, n, sizeof(double), cmp_double);
    stats s = { lat[n / 2], lat[(size_t)((double)n * 0.99)], lat[n - 1] };
    free(lat);
    *done = (int)n;
    return s;
}

typedef struct worker {
    pthread_t thread;
    rv_conn *conn;
    int index;
} worker;

/* Define bench-d<index> again and again, its memory changing each time. */
static void *define_loop(void *opaque)
{
    worker *w = opaque;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        char xml[512];
        snprintf(xml, sizeof(xml),
                 "<domain type='qemu'><name>bench-d%d</name>"
                 "<uuid>5d1b0a6e-2f7c-4c38-9d6a-%012d</uuid>"
                 "<memory unit='MiB'>%u</memory><vcpu>1</vcpu>"
                 "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>",
                 w->index, w->index, 64 + i % 64);
        rv_dom *d = rv_domain_define_xml(w->conn, xml);
        if (!d)
            die("define");
        rv_domain_free(d);
        atomic_fetch_add(&defines, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "test-uri", required_argument, NULL, 't' },
        { "qemu-uri", required_argument, NULL, 'q' },
        { "calls", required_argument, NULL, 'n' },
        { "clients", required_argument, NULL, 'c' },
        { "seconds", required_argument, NULL, 's' },
        { NULL, 0, NULL, 0 },
    };
    const char *test_uri = NULL, *qemu_uri = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 't': test_uri = optarg; break;
        case 'q': qemu_uri = optarg; break;
        case 'n': calls = atoi(optarg); break;
        case 'c': nclients = atoi(optarg); break;
        case 's': seconds = atof(optarg); break;
        default: return 2;
        }
    }
    if (!test_uri || !qemu_uri || calls < 100 || nclients < 1 || nclients > MAX_CLIENTS) {
        fprintf(stderr, "usage: define-load --test-uri URI --qemu-uri URI [--calls N>=100] [--seconds S] "
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
        ws[i].index = i + 1;
        if (!(ws[i].conn = rv_connect_open(qemu_uri, 0)))
            die(qemu_uri);
    }

    int idle_n, load_n;
    stats idle = measure(test, 0, &idle_n);
    for (int i = 0; i < nclients; i++)
        pthread_create(&ws[i].thread, NULL, define_loop, &ws[i]);
    double t = now();
    stats load = measure(test, seconds, &load_n);
    double took = now() - t;
    atomic_store(&stop, 1);
    for (int i = 0; i < nclients; i++)
        pthread_join(ws[i].thread, NULL);

    printf("GetInfo latency (us)                   %9s %9s %9s\n", "p50", "p99", "max");
    char what[64];
    snprintf(what, sizeof(what), "idle (%d calls)", idle_n);
    printf("  %-36s %9.1f %9.1f %9.1f\n", what, idle.p50, idle.p99, idle.max);
    snprintf(what, sizeof(what), "%d clients defining (%d calls)", nclients, load_n);
    printf("  %-36s %9.1f %9.1f %9.1f\n", what, load.p50, load.p99, load.max);
    printf("  defines during the loaded run: %d (%.0f/s)\n", atomic_load(&defines),
           atomic_load(&defines) / took);
    for (int i = 0; i < nclients; i++)
        rv_connect_close(ws[i].conn);
    rv_domain_free(test);
    rv_connect_close(reader);
    return 0;
}
