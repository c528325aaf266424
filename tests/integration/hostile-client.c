/* libremvirt against tests/integration/hostile-server.py, a server that
 * lies; driven by tests/integration/test-hostile-server.sh.
 *
 *   hostile-client SOCKET SCENARIO
 *
 * Opens test+unix:///SCENARIO?socket=SOCKET (the server reads its script
 * from the name), runs the scenario (see hostile-server.py) and checks:
 * what each registration returned and the error it left, that a
 * callback never runs for a registration that failed, and that each
 * free_cb runs exactly as often as it should (once for a registration
 * that succeeded, never for one that failed) by the time
 * rv_connect_close() returns.  The built-in event loop runs in a thread
 * of its own.  Exit status: 0 all checks passed, 1 one failed, 2 usage. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client-report.h"
#include "remvirt.h"

#define WAIT_SECONDS 60         /* a loaded machine, valgrind */
#define BARRIER_ID 7            /* hostile-server.py's */
#define RACE_ROUNDS 200         /* hostile-server.py's */
#define MAX_REGS (RACE_ROUNDS + 4)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

/* One registration's opaque.  They live in a static array so that the
 * counts can be read after the library is done with them. */
typedef struct reg {
    int calls;          /* the lifecycle callback ran with this opaque */
    int frees;          /* free_cb ran with it */
    int failed;         /* the registration returned an error */
    int calls_after_failure;
} reg;

static reg regs[MAX_REGS];
static int nregs;
static int close_reason = -1;

static void on_lifecycle(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    (void)conn;
    (void)dom;
    (void)event;
    (void)detail;
    reg *r = opaque;
    pthread_mutex_lock(&lock);
    r->calls++;
    if (r->failed)
        r->calls_after_failure++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_free(void *opaque)
{
    reg *r = opaque;
    pthread_mutex_lock(&lock);
    r->frees++;
    pthread_mutex_unlock(&lock);
}

static void on_close(rv_conn *conn, int reason, void *opaque)
{
    (void)conn;
    (void)opaque;
    pthread_mutex_lock(&lock);
    close_reason = reason;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static int get(const int *field)
{
    pthread_mutex_lock(&lock);
    int v = *field;
    pthread_mutex_unlock(&lock);
    return v;
}

/* Wait (bounded) until *field == want. */
static void wait_for(const int *field, int want, const char *what)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_SECONDS;
    pthread_mutex_lock(&lock);
    while (*field != want) {
        if (pthread_cond_timedwait(&changed, &lock, &until) == ETIMEDOUT) {
            int got = *field;
            pthread_mutex_unlock(&lock);
            die("%s: %d after %d s, expected %d", what, got, WAIT_SECONDS, want);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the event loop's thread ---- */

static pthread_t loop_thread;
static atomic_int loop_stop;

static void *run_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&loop_stop))
        if (rv_event_run_default_impl() < 0)
            die("rv_event_run_default_impl failed");
    return NULL;
}

static void wake_up(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
}

static void stop_loop(void)
{
    atomic_store(&loop_stop, 1);
    int timer = rv_event_add_timeout(0, wake_up, NULL, NULL);
    if (timer < 0)
        die("rv_event_add_timeout");
    pthread_join(loop_thread, NULL);
    rv_event_remove_timeout(timer);
}

/* ---- registrations ---- */

/* Register a new opaque; returns what the API returned, and its index. */
static int reg_new(rv_conn *conn, int *index)
{
    if (nregs == MAX_REGS)
        die("too many registrations");
    *index = nregs++;
    int id = rv_connect_domain_event_register_lifecycle(conn, NULL, on_lifecycle, &regs[*index],
                                                        on_free);
    if (id < 0) {
        pthread_mutex_lock(&lock);
        regs[*index].failed = 1;
        pthread_mutex_unlock(&lock);
    }
    return id;
}

/* A registration the server must get wrong: -1 and the thread's error
 * has `code` (0: any) and mentions `words` (NULL: anything). */
static void expect_refused(rv_conn *conn, int *index, int code, const char *words,
                           const char *what)
{
    int id = reg_new(conn, index);
    if (id != -1)
        die("%s: the registration returned %d, expected -1", what, id);
    const rv_error_info *e = rv_last_error();
    if (!e)
        die("%s: the registration failed without an error", what);
    if (code && e->code != code)
        die("%s: error code %d (%s), expected %d", what, e->code, e->message, code);
    if (words && !strstr(e->message, words))
        die("%s: the error '%s' does not mention '%s'", what, e->message, words);
    ok("%s: the registration fails with error %d: %s", what, e->code, e->message);
}

/* The last registration: the server's honest one, whose event comes
 * after every other event of the scenario. */
static void barrier(rv_conn *conn, int events, const char *what)
{
    int b;
    int id = reg_new(conn, &b);
    if (id != BARRIER_ID)
        die("%s: the honest registration returned %d, expected %d", what, id, BARRIER_ID);
    wait_for(&regs[b].calls, events, "events for the honest registration");
}

/* After rv_connect_close: each opaque's counts. */
static void check_counts(int index, int calls, int frees, const char *what)
{
    reg *r = &regs[index];
    if (get(&r->calls_after_failure))
        die("%s: the callback ran %d times after its registration failed", what,
            r->calls_after_failure);
    if (get(&r->calls) != calls)
        die("%s: the callback ran %d times, expected %d", what, r->calls, calls);
    if (get(&r->frees) != frees)
        die("%s: free_cb ran %d times, expected %d", what, r->frees, frees);
}

static void close_conn(rv_conn *conn, int closed_by_server)
{
    int rc = rv_connect_close(conn);
    if (rc < 0 && !closed_by_server)
        die("rv_connect_close: %s", rv_last_error() ? rv_last_error()->message : "?");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hostile-client SOCKET SCENARIO\n");
        return 2;
    }
    const char *scenario = argv[2];
    char uri[512];
    snprintf(uri, sizeof(uri), "test+unix:///%s?socket=%s", scenario, argv[1]);

    if (rv_event_register_default_impl() < 0)
        die("rv_event_register_default_impl");
    if (pthread_create(&loop_thread, NULL, run_loop, NULL) != 0)
        die("pthread_create");
    rv_conn *conn = rv_connect_open(uri, 0);
    if (!conn)
        die("cannot open %s: %s", uri, rv_last_error() ? rv_last_error()->message : "?");
    if (rv_connect_register_close_callback(conn, on_close, NULL, NULL) < 0)
        die("rv_connect_register_close_callback");

    int a, b;
    if (strcmp(scenario, "negative-id") == 0) {
        /* The server says -1 and then sends an event for -1. */
        expect_refused(conn, &a, RV_ERROR_RPC, "-1", "callback ID -1");
        barrier(conn, 1, scenario);
        close_conn(conn, 0);
        check_counts(a, 0, 0, "callback ID -1");
        ok("callback ID -1: its callback never ran, its free_cb never ran");
    } else if (strcmp(scenario, "duplicate-id") == 0) {
        /* 5, then 5 again, then an event for 5: only the first has it. */
        int id = reg_new(conn, &a);
        if (id != 5)
            die("first registration returned %d, expected 5", id);
        expect_refused(conn, &b, RV_ERROR_RPC, "5", "callback ID 5 again");
        barrier(conn, 2, scenario);
        close_conn(conn, 0);
        check_counts(a, 1, 1, "the first callback ID 5");
        check_counts(b, 0, 0, "the second callback ID 5");
        ok("callback ID 5 twice: the event went to the first registration only; free_cb "
           "ran once for it and never for the refused one");
    } else if (strcmp(scenario, "event-then-error") == 0) {
        /* An event for -1 while the registration is in flight, then an
         * error reply; the connection goes on. */
        expect_refused(conn, &a, 0, "refused by the hostile server", "error reply");
        barrier(conn, 1, scenario);
        close_conn(conn, 0);
        check_counts(a, 0, 0, "error reply");
        ok("event before an error reply: the callback never ran, nor its free_cb");
    } else if (strcmp(scenario, "event-then-eof") == 0) {
        /* The same, but the server hangs up instead of answering; the
         * close callback comes after every event the server sent. */
        expect_refused(conn, &a, 0, NULL, "end of stream");
        wait_for(&close_reason, RV_CONNECT_CLOSE_REASON_EOF, "close reason");
        close_conn(conn, 1);
        check_counts(a, 0, 0, "end of stream");
        ok("event before the end of stream: the callback never ran, nor its free_cb");
    } else if (strcmp(scenario, "race") == 0) {
        /* Events for -1 and error replies back to back, many times: the
         * loop's thread must never touch a failed registration. */
        for (int i = 0; i < RACE_ROUNDS; i++) {
            int id = reg_new(conn, &a);
            if (id != -1)
                die("race round %d: the registration returned %d, expected -1", i, id);
        }
        barrier(conn, 1, scenario);
        close_conn(conn, 0);
        for (int i = 0; i < RACE_ROUNDS; i++)
            check_counts(i, 0, 0, "race");
        ok("%d registrations failed with an event racing each: no callback ran, no free_cb",
           RACE_ROUNDS);
    } else if (strcmp(scenario, "bad-counts") == 0) {
        /* CONNECTION_CLOSED with reason 99, then a count of -5. */
        int n = rv_connect_num_of_domains(conn);
        const rv_error_info *e = rv_last_error();
        if (n != -1 || !e || e->code != RV_ERROR_RPC || !strstr(e->message, "-5"))
            die("a count of -5: returned %d with error %s", n, e ? e->message : "(none)");
        ok("a count of -5: -1 and error %d: %s", e->code, e->message);
        wait_for(&close_reason, RV_CONNECT_CLOSE_REASON_ERROR, "close reason");
        ok("close reason 99 from the server reaches the application as ERROR (0)");
        close_conn(conn, 0);
    } else if (strcmp(scenario, "bad-messages") == 0) {
        /* An event with status ERROR is no event; of four PINGs only the
         * well-formed one gets a PONG. */
        int id = reg_new(conn, &a);
        if (id != 3)
            die("the registration returned %d, expected 3", id);
        barrier(conn, 1, scenario);
        if (get(&regs[a].calls) != 0)
            die("an event with status ERROR reached the callback");
        ok("an event with status ERROR does not reach the callback");
        int pongs = rv_connect_num_of_domains(conn);
        if (pongs != 1)
            die("%d PONGs for one good PING and three malformed ones, expected 1", pongs);
        ok("only the well-formed PING of four gets a PONG");
        close_conn(conn, 0);
        check_counts(a, 0, 1, "registration 3");
    } else if (strcmp(scenario, "stray-reply") == 0) {
        /* A reply to a serial no call has: the connection is unusable. */
        int n = rv_connect_num_of_domains(conn);
        const rv_error_info *e = rv_last_error();
        if (n != -1 || !e || e->code != RV_ERROR_RPC || !strstr(e->message, "matches no call"))
            die("a stray reply: returned %d with error %s", n, e ? e->message : "(none)");
        ok("a stray reply: the call fails: %s", e->message);
        if (rv_connect_is_alive(conn) != 0)
            die("the connection still counts as alive after a stray reply");
        ok("a stray reply: the connection is closed");
        close_conn(conn, 1);
    } else {
        die("unknown scenario '%s'", scenario);
    }
    stop_loop();
    return 0;
}
