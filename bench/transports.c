/* GetInfo round trips over each transport, side by side in one run.
 *
 *   transports [--calls N] [--rounds N] [--quick] NAME=URI...
 *
 * Opens one libremvirt connection per URI, then runs the calls in
 * interleaved rounds (every URI once per round, so drift on the machine
 * hits all alike) and prints the median us per call of each and its ratio
 * to the first URI, which should be the Unix socket.  A URI named "tls"
 * is judged against the target (at most 1.5x the first per call) in the
 * output; the exit status is 0 whenever every call worked.
 *
 * A NAME ending in "+loop" is opened after the built-in event loop is
 * registered and running in a thread (events and keepalive on): the
 * price an application with an event loop pays per call. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remvirt.h"

#define MAX_URIS 8
#define MAX_ROUNDS 100
#define TLS_TARGET 1.5

typedef struct target {
    char *name;
    const char *uri;
    rv_conn *conn;
    rv_dom *dom;
    double us[MAX_ROUNDS];
} target;

static void die(const char *what, const char *uri) __attribute__((noreturn));
static void die(const char *what, const char *uri)
{
    const rv_error_info *e = rv_last_error();
    fprintf(stderr, "transports: %s %s: %s\n", what, uri, e ? e->message : strerror(errno));
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, long n)
{
    double sorted[MAX_ROUNDS];
    memcpy(sorted, v, (size_t)n * sizeof(*v));
    qsort(sorted, (size_t)n, sizeof(*sorted), cmp_double);
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static double run(target *t, long calls)
{
    rv_domain_info info;
    double start = now_us();
    for (long i = 0; i < calls; i++)
        if (rv_domain_get_info(t->dom, &info) < 0)
            die("GetInfo over", t->uri);
    return (now_us() - start) / (double)calls;
}

static long number(const char *text, const char *what, long max)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > max) {
        fprintf(stderr, "transports: %s must be a whole number from 1 to %ld\n", what, max);
        exit(2);
    }
    return v;
}

static void *run_loop(void *arg)
{
    (void)arg;
    for (;;)
        if (rv_event_run_default_impl() < 0)
            die("the event loop failed", "");
}

/* Register the built-in loop and run it in a thread (once). */
static void start_event_loop(void)
{
    static int started;
    pthread_t thread;
    if (started)
        return;
    if (rv_event_register_default_impl() < 0 || pthread_create(&thread, NULL, run_loop, NULL))
        die("cannot start the event loop", "");
    pthread_detach(thread);
    started = 1;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "calls", required_argument, NULL, 'c' },
        { "rounds", required_argument, NULL, 'r' },
        { "quick", no_argument, NULL, 'q' },
        { NULL, 0, NULL, 0 },
    };
    long calls = 20000, rounds = 5;
    int quick = 0, opt;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': calls = number(optarg, "--calls", 100000000L); break;
        case 'r': rounds = number(optarg, "--rounds", MAX_ROUNDS); break;
        case 'q': quick = 1; break;
        default:
            fprintf(stderr, "usage: transports [--calls N] [--rounds N] [--quick] NAME=URI...\n");
            return 2;
        }
    }
    if (quick) {
        calls = 200;
        rounds = 1;
    }
    target t[MAX_URIS];
    int n = 0;
    /* Without a loop first: once one is registered every connection uses it. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = optind; i < argc; i++) {
            const char *eq = strchr(argv[i], '=');
            if (!eq || n == MAX_URIS) {
                fprintf(stderr, "transports: expected at most %d NAME=URI, not '%s'\n", MAX_URIS,
                        argv[i]);
                return 2;
            }
            size_t namelen = (size_t)(eq - argv[i]);
            int with_loop = namelen > 5 && strncmp(eq - 5, "+loop", 5) == 0;
            if (with_loop != pass)
                continue;
            if (with_loop)
                start_event_loop();
            t[n] = (target){ .name = strndup(argv[i], namelen), .uri = eq + 1 };
            if (!t[n].name)
                die("out of memory", "");
            if (!(t[n].conn = rv_connect_open(t[n].uri, 0)))
                die("cannot open", t[n].uri);
            if (!(t[n].dom = rv_domain_lookup_by_name(t[n].conn, "test")))
                die("cannot find the domain 'test' over", t[n].uri);
            n++;
        }
    }
    if (n == 0) {
        fprintf(stderr, "transports: no URI given\n");
        return 2;
    }
    for (int i = 0; i < n; i++)
        run(&t[i], calls / 10 + 1);                 /* warm up */
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++)
            t[i].us[r] = run(&t[i], calls);

    double base = median(t[0].us, rounds);
    printf("GetInfo, %ld calls x %ld rounds per transport (median of rounds)\n", calls, rounds);
    printf("%-10s %12s %10s\n", "transport", "us/call", "ratio");
    for (int i = 0; i < n; i++) {
        double m = median(t[i].us, rounds);
        const char *verdict = "";
        if (strcmp(t[i].name, "tls") == 0 && i > 0 && !quick) {
            verdict = m / base <= TLS_TARGET ? "  PASS (target <= 1.5x)" : "  FAIL (target <= 1.5x)";
        }
        printf("%-10s %12.2f %9.2fx%s\n", t[i].name, m, m / base, verdict);
    }
    for (int i = 0; i < n; i++) {
        rv_domain_free(t[i].dom);
        rv_connect_close(t[i].conn);
        free(t[i].name);
    }
    /* Timings are reported, not an exit status: only a failed call is. */
    return 0;
}
