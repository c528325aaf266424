/* Many threads on ONE libremvirt connection to a server that answers out
 * of order (shuffle-server.py): every reply must reach its own caller.
 *
 *   client-concurrency SOCKET shuffle|close
 *
 * shuffle: THREADS threads each make ITERATIONS rounds of a lookup by
 * name (its own names; every seventh one that the server refuses, whose
 * error must name it) and a GetInfo whose answer the server derives from
 * the domain's id; meanwhile one more thread keeps ASYNC_WINDOW
 * asynchronous GetInfo calls in flight on the same connection.  A reply
 * delivered to the wrong caller shows as a wrong name, id or info; a lost
 * one as a hang (alarm).
 * close: the same threads call until the server hangs up with calls
 * waiting (after CLOSE_AFTER calls): each must get an error rather than
 * hang, and a call after that must fail at once as an unusable
 * connection.
 * Exit status: 0 all correct, 1 a wrong answer, lost or hung call, 2 usage. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remvirt.h"

#define THREADS 16
#define ITERATIONS 400
#define ASYNC_WINDOW 32
#define ASYNC_CALLS 4000
#define CLOSE_AFTER 3000        /* shuffle-server.py's CLOSE_AFTER */

static rv_conn *conn;
static atomic_int failures;

static void failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failed(const char *fmt, ...)
{
    const rv_error_info *e = rv_last_error();
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "client-concurrency: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s%s\n", e ? ": " : "", e ? e->message : "");
    atomic_fetch_add(&failures, 1);
}

/* shuffle-server.py's id for a name. */
static unsigned long long domain_id(const char *name)
{
    unsigned long long sum = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        sum += *p;
    return strlen(name) * 1000 + sum;
}

/* One round: 0 right, -1 wrong (said), 1 the connection failed (a
 * failed call on a connection that is no longer alive). */
static int one_round(int thread, int i)
{
    char name[64];
    int refused = i % 7 == 3;
    snprintf(name, sizeof(name), "%st%d-i%d", refused ? "err-" : "", thread, i);
    rv_dom *dom = rv_domain_lookup_by_name(conn, name);
    if (refused) {
        char want[96], got[512];
        snprintf(want, sizeof(want), "no domain %s", name);
        const rv_error_info *e = rv_last_error();
        snprintf(got, sizeof(got), "%s", e ? e->message : "");
        if (dom || !e) {
            failed("lookup of %s (round %d) succeeded where the server refuses it", name, i);
            return -1;
        }
        if (!rv_connect_is_alive(conn))     /* (a call: the last error is gone) */
            return 1;
        if (!strstr(got, want)) {
            failed("lookup of %s (round %d) got another call's error (%s)", name, i, got);
            return -1;
        }
        return 0;
    }
    if (!dom) {
        if (!rv_connect_is_alive(conn))
            return 1;
        failed("lookup of %s (round %d) failed", name, i);
        return -1;
    }
    int rc = 0;
    rv_domain_info info;
    unsigned long long id = domain_id(name);
    if (strcmp(rv_domain_get_name(dom), name) != 0 || (unsigned long long)rv_domain_get_id(dom) != id) {
        failed("lookup of %s (round %d) got another call's domain", name, i);
        rc = -1;
    } else if (rv_domain_get_info(dom, &info) < 0) {
        rc = rv_connect_is_alive(conn) ? -1 : 1;
        if (rc < 0)
            failed("GetInfo of %s (round %d) failed", name, i);
    } else if (info.max_mem != id || info.memory != id + 1 || info.cpu_time != id * 7) {
        failed("GetInfo of %s (round %d) got another call's answer", name, i);
        rc = -1;
    }
    rv_domain_free(dom);
    return rc;
}

typedef struct worker {
    pthread_t tid;
    int index;
    int close_scenario;
    int ended;                  /* close: the connection failed under it */
} worker;

static void *worker_main(void *opaque)
{
    worker *w = opaque;
    for (int i = 0; w->close_scenario || i < ITERATIONS; i++) {
        int rc = one_round(w->index, i);
        if (rc < 0)
            return NULL;
        if (rc > 0) {
            if (!w->close_scenario)
                failed("thread %d: the connection failed", w->index);
            w->ended = 1;
            return NULL;
        }
    }
    return NULL;
}

/* The asynchronous thread: its calls' answers come shuffled among the
 * synchronous ones'; each must land in its own info. */
typedef struct async_call {
    rv_domain_info info;
    unsigned long long id;
    int done;
} async_call;

static atomic_long async_answered;

static void on_async_done(void *opaque, const rv_error_info *error)
{
    async_call *a = opaque;
    if (error)
        failed("an asynchronous GetInfo failed");
    else if (a->info.max_mem != a->id || a->info.memory != a->id + 1)
        failed("an asynchronous GetInfo of id %llu got another call's answer", a->id);
    a->done = 1;
    atomic_fetch_add(&async_answered, 1);
}

static void *async_main(void *opaque)
{
    (void)opaque;
    static async_call calls[ASYNC_WINDOW];
    rv_dom *doms[ASYNC_WINDOW];
    for (int k = 0; k < ASYNC_WINDOW; k++) {
        char name[32];
        snprintf(name, sizeof(name), "async-%d", k);
        if (!(doms[k] = rv_domain_lookup_by_name(conn, name))) {
            failed("lookup of %s failed", name);
            return NULL;
        }
        calls[k].id = domain_id(name);
        calls[k].done = 1;
    }
    for (long started = 0; started < ASYNC_CALLS;) {
        for (int k = 0; k < ASYNC_WINDOW && started < ASYNC_CALLS; k++) {
            if (!calls[k].done)
                continue;
            calls[k].done = 0;
            memset(&calls[k].info, 0, sizeof(calls[k].info));
            if (rv_domain_get_info_start(doms[k], &calls[k].info, on_async_done, &calls[k]) < 0) {
                failed("cannot start asynchronous GetInfo %ld", started);
                return NULL;
            }
            started++;
        }
        if (rv_connect_complete(conn, ASYNC_WINDOW / 2) < 0) {
            failed("rv_connect_complete failed after %ld started", started);
            return NULL;
        }
    }
    if (rv_connect_complete(conn, 0) < 0)
        failed("the last rv_connect_complete failed");
    for (int k = 0; k < ASYNC_WINDOW; k++)
        rv_domain_free(doms[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "shuffle") != 0 && strcmp(argv[2], "close") != 0)) {
        fprintf(stderr, "usage: client-concurrency SOCKET shuffle|close\n");
        return 2;
    }
    int close_scenario = strcmp(argv[2], "close") == 0;
    /* A lost reply hangs a thread: fail instead (valgrind is slow). */
    alarm(getenv("RV_VALGRIND") && *getenv("RV_VALGRIND") ? 1200 : 120);
    char uri[512];
    snprintf(uri, sizeof(uri), "test+unix:///%s?socket=%s", argv[2], argv[1]);
    if (!(conn = rv_connect_open(uri, 0))) {
        failed("cannot open %s", uri);
        return 1;
    }
    worker w[THREADS];
    pthread_t async_tid;
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){ .index = i, .close_scenario = close_scenario };
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "client-concurrency: pthread_create failed\n");
            return 1;
        }
    }
    if (!close_scenario && pthread_create(&async_tid, NULL, async_main, NULL) != 0) {
        fprintf(stderr, "client-concurrency: pthread_create failed\n");
        return 1;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(w[i].tid, NULL);
    if (!close_scenario) {
        pthread_join(async_tid, NULL);
        if (atomic_load(&async_answered) != ASYNC_CALLS)
            failed("%ld asynchronous calls answered, not %d", atomic_load(&async_answered), ASYNC_CALLS);
    } else {
        for (int i = 0; i < THREADS; i++)
            if (!w[i].ended)
                failed("thread %d did not see the connection fail", i);
        /* Dead now: a call fails at once, as an unusable connection. */
        rv_dom *dom = rv_domain_lookup_by_name(conn, "after");
        const rv_error_info *e = rv_last_error();
        if (dom || !e || e->code != RV_ERROR_INVALID_CONN)
            failed("a call after the close %s(code %d)", dom ? "succeeded " : "",
                   e ? e->code : 0);
    }
    rv_connect_close(conn);
    int n = atomic_load(&failures);
    if (n == 0)
        printf("ok   %s: %d threads on one connection%s\n", argv[2], THREADS,
               close_scenario ? ", every waiting call failed when the server hung up"
                              : ", replies shuffled, each reached its caller");
    return n ? 1 : 0;
}
