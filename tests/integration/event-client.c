/* A libremvirt event subscriber driven by tests/integration/test-events-*.sh
 * and test-keepalive-*.sh.
 *
 *   event-client URI watch [DOMAIN]
 *       Subscribe to lifecycle events (of DOMAIN only, if given), print
 *       "ready", then one line per event, "lifecycle NAME EVENT DETAIL"
 *       (the raw numbers), as they arrive.  SIGINT or SIGTERM: deregister,
 *       close and print "events N".  If the connection is lost instead:
 *       print "closed REASON" (the close callback's) and "events N".
 *   event-client URI dereg
 *       Self-checking: deregistering stops a callback's events while other
 *       callbacks, on the same connection and on another one, keep getting
 *       theirs; a callback may deregister itself; free callbacks run.  It
 *       makes the changes itself, on a connection of its own.
 *   event-client URI daemon-stop
 *       Keepalive 1 s x 2, a close callback, print "ready", wait for a line
 *       on stdin (the test stops the daemon meanwhile), then call
 *       rv_domain_get_info and print how it ended and what the close
 *       callback said; the test judges the lines.
 *
 * Every mode runs the built-in event loop in a thread of its own, as an
 * application would.  Exit status: 0 done, 1 a check failed, 2 usage. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client-report.h"
#include "remvirt.h"

/* Long enough for a loaded machine and for valgrind. */
#define WAIT_SECONDS 30

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static void start_loop(void)
{
    if (rv_event_register_default_impl() < 0)
        die("rv_event_register_default_impl");
    if (pthread_create(&loop_thread, NULL, run_loop, NULL) != 0)
        die("pthread_create");
}

static void wake_up(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
}

/* A new timer makes the loop's current iteration return, so it sees the
 * flag; the timer goes once the thread is joined. */
static void stop_loop(void)
{
    atomic_store(&loop_stop, 1);
    int timer = rv_event_add_timeout(0, wake_up, NULL, NULL);
    if (timer < 0)
        die("rv_event_add_timeout");
    pthread_join(loop_thread, NULL);
    if (rv_event_remove_timeout(timer) < 0)
        die("rv_event_remove_timeout");
}

static rv_conn *open_conn(const char *uri)
{
    rv_conn *conn = rv_connect_open(uri, 0);
    if (!conn)
        die("cannot open %s", uri);
    return conn;
}

/* Wait (bounded) until *counter reaches want, under lock. */
static void wait_count_for(const int *counter, int want, const char *what, int seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&lock);
    while (*counter < want) {
        if (pthread_cond_timedwait(&changed, &lock, &until) == ETIMEDOUT) {
            int got = *counter;
            pthread_mutex_unlock(&lock);
            die("%s: %d after %d s, expected %d", what, got, seconds, want);
        }
    }
    pthread_mutex_unlock(&lock);
}

static void wait_count(const int *counter, int want, const char *what)
{
    wait_count_for(counter, want, what, WAIT_SECONDS);
}

static int read_count(const int *counter)
{
    pthread_mutex_lock(&lock);
    int v = *counter;
    pthread_mutex_unlock(&lock);
    return v;
}

/* ---- watch ---- */

static int watch_seen;
static int watch_closed = -1;

static void watch_event(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    (void)conn;
    (void)opaque;
    const char *name = rv_domain_get_name(dom);
    printf("lifecycle %s %d %d\n", name ? name : "(no name)", event, detail);
    fflush(stdout);
    pthread_mutex_lock(&lock);
    watch_seen++;
    pthread_mutex_unlock(&lock);
}

static void watch_close(rv_conn *conn, int reason, void *opaque)
{
    (void)conn;
    (void)opaque;
    pthread_mutex_lock(&lock);
    watch_closed = reason;
    pthread_mutex_unlock(&lock);
}

static int watch(const char *uri, const char *domain)
{
    /* Only sigtimedwait() below takes these, in this thread. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    start_loop();

    rv_conn *conn = open_conn(uri);
    if (rv_connect_register_close_callback(conn, watch_close, NULL, NULL) < 0)
        die("rv_connect_register_close_callback");
    rv_dom *dom = NULL;
    if (domain && !(dom = rv_domain_lookup_by_name(conn, domain)))
        die("no domain '%s'", domain);
    int id = rv_connect_domain_event_register_lifecycle(conn, dom, watch_event, NULL, NULL);
    if (id < 0)
        die("rv_connect_domain_event_register_lifecycle");
    rv_domain_free(dom);
    printf("ready\n");
    fflush(stdout);

    int closed;
    for (;;) {
        struct timespec tick = { 0, 100 * 1000000L };
        if (sigtimedwait(&stop_signals, NULL, &tick) > 0) {
            closed = -1;
            break;
        }
        pthread_mutex_lock(&lock);
        closed = watch_closed;
        pthread_mutex_unlock(&lock);
        if (closed >= 0)
            break;
    }
    if (closed >= 0) {
        printf("closed %d\n", closed);
        rv_connect_close(conn);     /* fails: the server is gone; frees conn */
    } else {
        if (rv_connect_domain_event_deregister(conn, id) < 0)
            die("rv_connect_domain_event_deregister");
        if (rv_connect_close(conn) < 0)
            die("rv_connect_close");
    }
    stop_loop();
    printf("events %d\n", read_count(&watch_seen));
    rv_reset_last_error();
    return 0;
}

/* ---- dereg ---- */

typedef struct subscriber {
    const char *label;
    int seen;
    int last_event, last_detail;
    char last_name[64];
    int freed;
    /* For the one that deregisters itself from inside its callback. */
    int deregister_self;
    int id;
    int self_deregistered;      /* 1: rc 0; -1: it failed */
} subscriber;

static void sub_event(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    subscriber *s = opaque;
    const char *name = rv_domain_get_name(dom);
    int self_rc = 0;
    /* No lock held over a library call: it may take its time. */
    if (s->deregister_self && read_count(&s->seen) == 0) {
        int id;
        pthread_mutex_lock(&lock);
        id = s->id;
        pthread_mutex_unlock(&lock);
        self_rc = rv_connect_domain_event_deregister(conn, id) == 0 ? 1 : -1;
    }
    pthread_mutex_lock(&lock);
    s->seen++;
    s->last_event = event;
    s->last_detail = detail;
    snprintf(s->last_name, sizeof(s->last_name), "%s", name ? name : "(no name)");
    if (self_rc)
        s->self_deregistered = self_rc;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void sub_free(void *opaque)
{
    subscriber *s = opaque;
    pthread_mutex_lock(&lock);
    s->freed++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static int subscribe(rv_conn *conn, subscriber *s)
{
    /* No change is made while callbacks are being registered, so none
     * can run before s->id is set. */
    int id = rv_connect_domain_event_register_lifecycle(conn, NULL, sub_event, s, sub_free);
    pthread_mutex_lock(&lock);
    s->id = id;
    pthread_mutex_unlock(&lock);
    if (id < 0)
        die("registering %s", s->label);
    return id;
}

/* s's latest event must be domain 'test' with (event, detail), its total
 * seen. */
static void expect_last(subscriber *s, int seen, int event, int detail)
{
    pthread_mutex_lock(&lock);
    int ok_now = s->seen == seen && s->last_event == event && s->last_detail == detail &&
                 strcmp(s->last_name, "test") == 0;
    int got_seen = s->seen, got_event = s->last_event, got_detail = s->last_detail;
    char name[64];
    snprintf(name, sizeof(name), "%s", s->last_name);
    pthread_mutex_unlock(&lock);
    if (!ok_now)
        die("%s: %d events, last %s %d/%d; expected %d, last test %d/%d", s->label, got_seen,
            name, got_event, got_detail, seen, event, detail);
}

static void expect_seen(subscriber *s, int seen, const char *why)
{
    int got = read_count(&s->seen);
    if (got != seen)
        die("%s has %d events, expected %d (%s)", s->label, got, seen, why);
}

static void change(rv_dom *dom, int suspend)
{
    if ((suspend ? rv_domain_suspend(dom) : rv_domain_resume(dom)) < 0)
        die("%s of domain test", suspend ? "suspend" : "resume");
}

static int dereg(const char *uri)
{
    start_loop();
    rv_conn *sub_conn = open_conn(uri), *other_conn = open_conn(uri), *chg_conn = open_conn(uri);
    rv_dom *test = rv_domain_lookup_by_name(chg_conn, "test");
    if (!test)
        die("lookup of domain test");

    subscriber a = { .label = "A" }, b = { .label = "B" }, c = { .label = "C (other conn)" },
               self = { .label = "S (deregisters itself)", .deregister_self = 1 },
               d = { .label = "D (registered after the others left)" };
    int id_a = subscribe(sub_conn, &a);
    int id_b = subscribe(sub_conn, &b);
    int id_self = subscribe(sub_conn, &self);
    subscribe(other_conn, &c);
    if (id_a == id_b || id_a == id_self || id_b == id_self)
        die("callback ids on one connection are not distinct: %d %d %d", id_a, id_b, id_self);
    ok("three callbacks on one connection, ids %d %d %d", id_a, id_b, id_self);

    change(test, 1);    /* SUSPENDED (3) PAUSED (0) */
    wait_count(&a.seen, 1, "A's events");
    wait_count(&b.seen, 1, "B's events");
    wait_count(&c.seen, 1, "C's events");
    wait_count(&self.seen, 1, "S's events");
    expect_last(&a, 1, RV_DOMAIN_EVENT_SUSPENDED, 0);
    expect_last(&b, 1, RV_DOMAIN_EVENT_SUSPENDED, 0);
    expect_last(&c, 1, RV_DOMAIN_EVENT_SUSPENDED, 0);
    expect_last(&self, 1, RV_DOMAIN_EVENT_SUSPENDED, 0);
    ok("every callback got 'test' suspended (3/0)");
    if (read_count(&self.self_deregistered) != 1)
        die("S could not deregister itself from inside its callback");
    ok("a callback deregistered itself from inside the callback");

    if (rv_connect_domain_event_deregister(sub_conn, id_a) != 0)
        die("deregistering A");
    ok("A deregistered");
    if (rv_connect_domain_event_deregister(sub_conn, id_a) != -1 || !rv_last_error())
        die("deregistering A twice did not fail with an error");
    ok("deregistering A again fails: %s", rv_last_error()->message);
    if (rv_connect_domain_event_deregister(sub_conn, 987654) != -1 || !rv_last_error())
        die("deregistering an unknown callback id did not fail with an error");
    ok("deregistering an unknown id fails: %s", rv_last_error()->message);

    /* B and C show that the events went out; A's, had the server still
     * sent them, would have come on sub_conn ahead of B's. */
    change(test, 0);    /* RESUMED (4) UNPAUSED (0) */
    wait_count(&b.seen, 2, "B's events");
    wait_count(&c.seen, 2, "C's events");
    change(test, 1);
    wait_count(&b.seen, 3, "B's events");
    wait_count(&c.seen, 3, "C's events");
    expect_last(&b, 3, RV_DOMAIN_EVENT_SUSPENDED, 0);
    expect_last(&c, 3, RV_DOMAIN_EVENT_SUSPENDED, 0);
    expect_seen(&a, 1, "deregistered before two more changes");
    expect_seen(&self, 1, "deregistered itself");
    ok("after two more changes B and C have 3 events, A and S still 1");

    if (rv_connect_domain_event_deregister(sub_conn, id_b) != 0)
        die("deregistering B");
    change(test, 0);
    wait_count(&c.seen, 4, "C's events");
    expect_last(&c, 4, RV_DOMAIN_EVENT_RESUMED, 0);
    /* Another change, so that anything B still had coming has come. */
    change(test, 1);
    wait_count(&c.seen, 5, "C's events");
    expect_seen(&b, 3, "deregistered before two more changes");
    expect_seen(&a, 1, "deregistered");
    ok("B deregistered: C got two more events, B none");

    int id_d = subscribe(sub_conn, &d);
    change(test, 0);
    wait_count(&d.seen, 1, "D's events");
    wait_count(&c.seen, 6, "C's events");
    expect_last(&d, 1, RV_DOMAIN_EVENT_RESUMED, 0);
    expect_seen(&a, 1, "deregistered");
    expect_seen(&b, 3, "deregistered");
    ok("registering again (id %d) on the same connection gets events again", id_d);

    /* remvirt.h: free_cb "runs when the callback is deregistered or the
     * connection is closed and freed"; these were deregistered long ago
     * (S from inside its own callback) on a connection still open. */
    wait_count_for(&a.freed, 1, "A's free callback after its deregistration", 5);
    wait_count_for(&b.freed, 1, "B's free callback after its deregistration", 5);
    wait_count_for(&self.freed, 1, "S's free callback after its deregistration", 5);
    if (read_count(&d.freed) != 0)
        die("D's free callback ran while D is registered");
    ok("the deregistered callbacks' free callbacks ran, D's did not");

    if (rv_connect_close(sub_conn) < 0)
        die("closing the subscribing connection");
    wait_count(&d.freed, 1, "D's free callback once its connection closed");
    int freed_a = read_count(&a.freed), freed_b = read_count(&b.freed),
        freed_self = read_count(&self.freed);
    if (freed_a != 1 || freed_b != 1 || freed_self != 1)
        die("free callbacks of A, B, S ran %d/%d/%d times, expected once each", freed_a, freed_b,
            freed_self);
    ok("closing the connection ran D's free callback; each free callback ran once");

    rv_domain_free(test);
    if (rv_connect_close(other_conn) < 0 || rv_connect_close(chg_conn) < 0)
        die("closing the connections");
    wait_count(&c.freed, 1, "C's free callback");
    stop_loop();
    rv_reset_last_error();
    return 0;
}

/* ---- daemon-stop ---- */

static int stop_closed = -1;
static double stop_closed_at;

static void stop_close(rv_conn *conn, int reason, void *opaque)
{
    (void)conn;
    (void)opaque;
    pthread_mutex_lock(&lock);
    stop_closed = reason;
    stop_closed_at = now_seconds();
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static int daemon_stop(const char *uri)
{
    start_loop();
    rv_conn *conn = open_conn(uri);
    if (rv_connect_set_keepalive(conn, 1, 2) < 0)
        die("rv_connect_set_keepalive(1, 2)");
    if (rv_connect_register_close_callback(conn, stop_close, NULL, NULL) < 0)
        die("rv_connect_register_close_callback");
    rv_dom *dom = rv_domain_lookup_by_name(conn, "test");
    if (!dom)
        die("lookup of domain test");
    printf("ready\n");
    fflush(stdout);

    char line[64];
    if (!fgets(line, sizeof(line), stdin))
        die("stdin closed before the go-ahead");

    double start = now_seconds();
    rv_domain_info info;
    int rc = rv_domain_get_info(dom, &info);
    double took = now_seconds() - start;
    const rv_error_info *e = rv_last_error();
    printf("get_info: rc %d after %.1f s; error %d: %s\n", rc, took, e ? e->code : 0,
           e ? e->message : "(none)");

    /* The close callback comes from the loop's thread, maybe later. */
    pthread_mutex_lock(&lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_SECONDS;
    while (stop_closed < 0 && pthread_cond_timedwait(&changed, &lock, &until) != ETIMEDOUT) {
    }
    int reason = stop_closed;
    double closed_after = stop_closed_at - start;
    pthread_mutex_unlock(&lock);
    if (reason >= 0)
        printf("close callback: reason %d after %.1f s\n", reason, closed_after);
    else
        printf("close callback: not called within %d s\n", WAIT_SECONDS);
    printf("alive: %d\n", rv_connect_is_alive(conn));

    /* Once the connection is known dead, a call fails at once. */
    start = now_seconds();
    rc = rv_connect_num_of_domains(conn);
    took = now_seconds() - start;
    e = rv_last_error();
    printf("num_of_domains: rc %d after %.1f s; error %d\n", rc, took, e ? e->code : 0);

    rv_domain_free(dom);
    rv_connect_close(conn);     /* the goodbye cannot succeed; frees conn */
    stop_loop();
    rv_reset_last_error();
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[2], "dereg") == 0)
        return dereg(argv[1]);
    if (argc == 3 && strcmp(argv[2], "daemon-stop") == 0)
        return daemon_stop(argv[1]);
    if ((argc == 3 || argc == 4) && strcmp(argv[2], "watch") == 0)
        return watch(argv[1], argc == 4 ? argv[3] : NULL);
    fprintf(stderr, "usage: event-client URI watch [DOMAIN] | dereg | daemon-stop\n");
    return 2;
}
