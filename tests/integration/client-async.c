/* libremvirt's asynchronous calls on ONE connection.
 *
 *   client-async URI [CALLS]
 *
 * Defines and starts three domains with different memory and vCPUs, then:
 *  - starts CALLS GetInfo calls round-robin over them, at most 64 in
 *    flight, completing with rv_connect_complete(), while a second thread
 *    makes synchronous lookups and GetInfo calls on the same connection;
 *    every callback must get its own domain's figures, and exactly as many
 *    callbacks must run as calls started;
 *  - a GetInfo started on a domain that has been undefined gets its error
 *    (NO_DOMAIN) in the callback, and the connection stays usable;
 *  - a call without a result pointer or callback is refused at once;
 *  - calls started and never completed still get their callbacks, once
 *    each, when the connection closes (answered, since closing sends
 *    what was started first, or failed).
 * Works against remvirtd and libvirtd (test driver); removes its domains.
 * Exit status: 0 all correct, 1 a wrong answer or failed call, 2 usage. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remvirt.h"

#define NDOMS 3
#define WINDOW 64
#define DEFAULT_CALLS 20000

static int failures;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "FAIL: " __VA_ARGS__);        \
            fputc('\n', stderr);                          \
            failures++;                                   \
        }                                                 \
    } while (0)

static const char *last_message(void)
{
    const rv_error_info *e = rv_last_error();
    return e ? e->message : "no error recorded";
}

typedef struct domain {
    char name[64];
    unsigned long long memory_kib;
    unsigned int vcpus;
    rv_dom *dom;
} domain;

static domain doms[NDOMS];

static void remove_domain(rv_conn *conn, const char *name)
{
    rv_dom *dom = rv_domain_lookup_by_name(conn, name);
    if (!dom)
        return;
    if (rv_domain_is_active(dom) == 1)
        rv_domain_destroy(dom, 0);
    rv_domain_undefine(dom, 0);
    rv_domain_free(dom);
}

static rv_dom *define(rv_conn *conn, const char *name, unsigned long long kib, unsigned vcpus)
{
    char xml[1024];
    remove_domain(conn, name);
    snprintf(xml, sizeof(xml),
             "<domain type='test'><name>%s</name><memory>%llu</memory>"
             "<currentMemory>%llu</currentMemory><vcpu>%u</vcpu>"
             "<os><type>hvm</type></os></domain>",
             name, kib, kib, vcpus);
    rv_dom *dom = rv_domain_define_xml(conn, xml);
    if (!dom) {
        fprintf(stderr, "FAIL: define %s: %s\n", name, last_message());
        exit(1);
    }
    return dom;
}

/* One started GetInfo: which domain it asked about, and its answer. */
typedef struct slot {
    int dom;
    rv_domain_info info;
} slot;

static long callbacks_run, answers_right;

static void on_info(void *opaque, const rv_error_info *error)
{
    slot *s = opaque;
    const domain *d = &doms[s->dom];
    callbacks_run++;
    if (error) {
        fprintf(stderr, "FAIL: GetInfo of %s failed: %s\n", d->name, error->message);
        failures++;
    } else if (s->info.state != RV_DOMAIN_RUNNING || s->info.max_mem != d->memory_kib ||
               s->info.nr_virt_cpu != d->vcpus) {
        fprintf(stderr, "FAIL: GetInfo of %s gave state %d, %llu KiB, %u vCPUs; "
                        "expected running, %llu KiB, %u vCPUs\n",
                d->name, s->info.state, s->info.max_mem, s->info.nr_virt_cpu, d->memory_kib,
                d->vcpus);
        failures++;
    } else {
        answers_right++;
    }
    free(s);
}

/* The second thread: synchronous calls while the first has calls in flight. */
static atomic_bool stop_sync;
static long sync_calls;
static int sync_failed;

static void *sync_worker(void *opaque)
{
    rv_conn *conn = opaque;
    while (!atomic_load(&stop_sync)) {
        int i = (int)(sync_calls % NDOMS);
        rv_dom *dom = rv_domain_lookup_by_name(conn, doms[i].name);
        rv_domain_info info;
        if (!dom || rv_domain_get_info(dom, &info) < 0 || info.max_mem != doms[i].memory_kib) {
            fprintf(stderr, "FAIL: synchronous lookup/GetInfo of %s: %s\n", doms[i].name,
                    last_message());
            sync_failed = 1;
            rv_domain_free(dom);
            break;
        }
        rv_domain_free(dom);
        sync_calls++;
    }
    return NULL;
}

static int start_info(int which)
{
    slot *s = calloc(1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    s->dom = which;
    if (rv_domain_get_info_start(doms[which].dom, &s->info, on_info, s) < 0) {
        fprintf(stderr, "FAIL: starting GetInfo of %s: %s\n", doms[which].name, last_message());
        free(s);
        failures++;
        return -1;
    }
    return 0;
}

typedef struct outcome {
    int calls;
    int errors;
    int last_code;
} outcome;

static void on_outcome(void *opaque, const rv_error_info *error)
{
    outcome *o = opaque;
    o->calls++;
    if (error) {
        o->errors++;
        o->last_code = error->code;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: client-async URI [CALLS]\n");
        return 2;
    }
    long calls = argc == 3 ? atol(argv[2]) : DEFAULT_CALLS;
    rv_conn *conn = rv_connect_open(argv[1], 0);
    if (!conn) {
        fprintf(stderr, "FAIL: open %s: %s\n", argv[1], last_message());
        return 1;
    }
    for (int i = 0; i < NDOMS; i++) {
        domain *d = &doms[i];
        snprintf(d->name, sizeof(d->name), "rv-async-%d", i);
        d->memory_kib = 262144ULL * (unsigned long long)(i + 1);
        d->vcpus = (unsigned)i + 1;
        d->dom = define(conn, d->name, d->memory_kib, d->vcpus);
        if (rv_domain_create(d->dom, 0) < 0) {
            fprintf(stderr, "FAIL: start %s: %s\n", d->name, last_message());
            return 1;
        }
    }

    /* Many in flight, with synchronous calls alongside. */
    pthread_t tid;
    if (pthread_create(&tid, NULL, sync_worker, conn) != 0)
        return 1;
    long started = 0;
    while (started < calls && !failures) {
        while (started < calls && started - callbacks_run < WINDOW && !failures)
            if (start_info((int)(started++ % NDOMS)) < 0)
                break;
        if (rv_connect_complete(conn, WINDOW / 2) < 0) {
            fprintf(stderr, "FAIL: complete: %s\n", last_message());
            failures++;
        }
    }
    CHECK(rv_connect_complete(conn, 0) >= 0, "the last complete: %s", last_message());
    atomic_store(&stop_sync, true);
    pthread_join(tid, NULL);
    CHECK(!sync_failed, "synchronous calls beside the asynchronous ones");
    CHECK(callbacks_run == started, "%ld callbacks ran for %ld calls started", callbacks_run,
          started);
    CHECK(answers_right == calls, "%ld of %ld answers were right", answers_right, calls);
    printf("%ld asynchronous GetInfo calls answered right, %ld synchronous calls beside them\n",
           answers_right, sync_calls);

    /* An error reaches its callback; the connection goes on. */
    rv_dom *gone = define(conn, "rv-async-gone", 131072, 1);
    CHECK(rv_domain_undefine(gone, 0) == 0, "undefine: %s", last_message());
    rv_domain_info info;
    outcome o = { 0 };
    CHECK(rv_domain_get_info_start(gone, &info, on_outcome, &o) == 0, "start on a stale domain");
    CHECK(rv_connect_complete(conn, 0) == 1, "one callback for the stale domain");
    CHECK(o.calls == 1 && o.errors == 1 && o.last_code == RV_ERROR_NO_DOMAIN,
          "the stale domain's GetInfo failed with NO_DOMAIN (calls %d, errors %d, code %d)",
          o.calls, o.errors, o.last_code);
    rv_domain_free(gone);
    CHECK(rv_domain_get_info(doms[0].dom, &info) == 0 && info.max_mem == doms[0].memory_kib,
          "a call after the failed one: %s", last_message());

    /* Refused at once, no callback. */
    o = (outcome){ 0 };
    CHECK(rv_domain_get_info_start(doms[0].dom, NULL, on_outcome, &o) < 0 && rv_last_error() &&
              rv_last_error()->code == RV_ERROR_INVALID_ARG,
          "no result pointer is INVALID_ARG");
    CHECK(rv_domain_get_info_start(doms[0].dom, &info, NULL, &o) < 0,
          "no callback is refused");
    CHECK(rv_connect_complete(conn, 0) == 0 && o.calls == 0, "no callback ran for refused calls");

    for (int i = 0; i < NDOMS; i++) {
        rv_domain_destroy(doms[i].dom, 0);
        rv_domain_undefine(doms[i].dom, 0);
        rv_domain_free(doms[i].dom);
    }

    /* Started, never completed, then the connection closes. */
    rv_dom *test = rv_domain_lookup_by_name(conn, "test");
    CHECK(test != NULL, "lookup test: %s", last_message());
    o = (outcome){ 0 };
    rv_domain_info infos[50];
    for (int i = 0; test && i < 50; i++)
        CHECK(rv_domain_get_info_start(test, &infos[i], on_outcome, &o) == 0, "start %d", i);
    rv_domain_free(test);
    rv_connect_close(conn);
    CHECK(o.calls == 50, "closing with 50 calls started ran %d callbacks (%d with an error)",
          o.calls, o.errors);

    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("all asynchronous checks passed\n");
    return 0;
}
