/* The event loop API.  The registry: nothing registered, an application's
 * own loop.  The built-in poll() loop on real pipes: readiness, disabling
 * and re-enabling, timers, removal from inside callbacks, hangups and
 * errors, a thousand handles in one iteration, and changes made from
 * another thread while the loop sleeps. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "client/remvirt.h"
#include "tests/unit/check.h"

#define R RV_EVENT_HANDLE_READABLE
#define W RV_EVENT_HANDLE_WRITABLE
#define ERR RV_EVENT_HANDLE_ERROR
#define HUP RV_EVENT_HANDLE_HANGUP

static void make_pipe(int fds[2])
{
    CHECK(pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0);
}

static void put_byte(int fd)
{
    CHECK_INT_EQ(write(fd, "x", 1), 1);
}

static void run_once(void)
{
    if (rv_event_run_default_impl() != 0)
        check_fail(__FILE__, __LINE__, "rv_event_run_default_impl: %s", rv_last_error()->message);
}

static void run_times(int n)
{
    for (int i = 0; i < n; i++)
        run_once();
}

static void check_last_error(int code, const char *part)
{
    const rv_error_info *e = rv_last_error();
    CHECK(e != NULL);
    CHECK_INT_EQ(e->code, code);
    CHECK_STR_HAS(e->message, part);
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/* Wait up to 5 s for *counter to reach at least want. */
static bool wait_for(atomic_int *counter, int want)
{
    for (int i = 0; i < 5000; i++) {
        if (atomic_load(counter) >= want)
            return true;
        sleep_ms(1);
    }
    return atomic_load(counter) >= want;
}

/* ---- a handle that records what happens to it ---- */

struct probe {
    int watch;
    int fd;
    int calls;
    int last_events;
    bool drain;                 /* read what is there */
    int remove_watch;           /* remove this handle when called (0: none) */
    int disable_watch;          /* update this handle to 0 when called */
    bool in_callback;
    int frees;
    int first;                  /* tick_order when first called; 0: never */
};

static int tick_order;          /* callbacks so far, over all tickers */

static void probe_cb(int watch, int fd, int events, void *opaque)
{
    struct probe *p = opaque;
    CHECK_INT_EQ(watch, p->watch);
    CHECK_INT_EQ(fd, p->fd);
    CHECK_INT_EQ(p->frees, 0);
    p->in_callback = true;
    p->calls++;
    p->last_events = events;
    if (p->drain) {
        char buf[256];
        while (read(fd, buf, sizeof(buf)) > 0)
            ;
    }
    if (p->remove_watch)
        CHECK_INT_EQ(rv_event_remove_handle(p->remove_watch), 0);
    if (p->disable_watch)
        rv_event_update_handle(p->disable_watch, 0);
    p->in_callback = false;
}

static void probe_free(void *opaque)
{
    struct probe *p = opaque;
    CHECK(!p->in_callback);
    p->frees++;
}

static void add_probe(struct probe *p, int fd, int events)
{
    p->fd = fd;
    p->watch = rv_event_add_handle(fd, events, probe_cb, p, probe_free);
    CHECK(p->watch > 0);
}

/* ---- a timer that counts ---- */

struct ticker {
    int timer;
    int calls;
    int remove_watch;           /* remove this handle when called */
    bool remove_self;
    bool in_callback;
    int frees;
    int first;                  /* tick_order when first called; 0: never */
};

static int tick_order;          /* callbacks so far, over all tickers */

static void ticker_cb(int timer, void *opaque)
{
    struct ticker *t = opaque;
    CHECK_INT_EQ(timer, t->timer);
    CHECK_INT_EQ(t->frees, 0);
    t->in_callback = true;
    t->calls++;
    if (!t->first)
        t->first = ++tick_order;
    if (t->remove_watch)
        CHECK_INT_EQ(rv_event_remove_handle(t->remove_watch), 0);
    if (t->remove_self)
        CHECK_INT_EQ(rv_event_remove_timeout(timer), 0);
    t->in_callback = false;
}

static void ticker_free(void *opaque)
{
    struct ticker *t = opaque;
    CHECK(!t->in_callback);
    t->frees++;
}

static void add_ticker(struct ticker *t, int interval_ms)
{
    t->timer = rv_event_add_timeout(interval_ms, ticker_cb, t, ticker_free);
    CHECK(t->timer > 0);
}

/* Keeps run_once() from sleeping for long when nothing else is due. */
static int tick_timer;

static void tick_cb(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
}

static void start_tick(void)
{
    tick_timer = rv_event_add_timeout(5, tick_cb, NULL, NULL);
    CHECK(tick_timer > 0);
}

static void stop_tick(void)
{
    CHECK_INT_EQ(rv_event_remove_timeout(tick_timer), 0);
}

/* ---- the registry ---- */

static void test_nothing_registered(void)
{
    const char *why = "no event loop registered";
    CHECK_INT_EQ(rv_event_add_handle(0, R, probe_cb, NULL, NULL), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, why);
    CHECK_STR_HAS(rv_last_error()->message, "rv_event_register_default_impl()");
    CHECK_INT_EQ(rv_event_add_timeout(10, tick_cb, NULL, NULL), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, why);
    CHECK_INT_EQ(rv_event_remove_handle(1), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, why);
    CHECK_INT_EQ(rv_event_remove_timeout(1), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, why);
    CHECK_INT_EQ(rv_event_run_default_impl(), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, "call rv_event_register_default_impl() first");
    /* The updates return nothing, so they leave no error behind either. */
    rv_reset_last_error();
    rv_event_update_handle(1, R);
    rv_event_update_timeout(1, 5);
    CHECK(rv_last_error() == NULL);
}

/* What the application's loop below was called with. */
static struct {
    int calls;
    int fd, events, watch, interval, timer;
    void *cb, *opaque, *free_cb;
} app;

static int app_add_handle(int fd, int events, rv_event_handle_callback cb, void *opaque,
                          rv_free_callback free_cb)
{
    app.calls++;
    app.fd = fd;
    app.events = events;
    app.cb = (void *)cb;
    app.opaque = opaque;
    app.free_cb = (void *)free_cb;
    return 41;
}

static void app_update_handle(int watch, int events)
{
    app.calls++;
    app.watch = watch;
    app.events = events;
}

static int app_remove_handle(int watch)
{
    app.calls++;
    app.watch = watch;
    return 0;
}

static int app_add_timeout(int interval_ms, rv_event_timeout_callback cb, void *opaque,
                           rv_free_callback free_cb)
{
    app.calls++;
    app.interval = interval_ms;
    app.cb = (void *)cb;
    app.opaque = opaque;
    app.free_cb = (void *)free_cb;
    return 42;
}

static void app_update_timeout(int timer, int interval_ms)
{
    app.calls++;
    app.timer = timer;
    app.interval = interval_ms;
}

static int app_remove_timeout(int timer)
{
    app.calls++;
    app.timer = timer;
    return -1;
}

static void test_application_loop(void)
{
    /* Incomplete: refused, and nothing is registered. */
    rv_event_register_impl(app_add_handle, app_update_handle, NULL,
                           app_add_timeout, app_update_timeout, app_remove_timeout);
    check_last_error(RV_ERROR_INVALID_ARG, "all six functions");
    CHECK_INT_EQ(rv_event_add_handle(0, R, probe_cb, NULL, NULL), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, "no event loop registered");

    rv_event_register_impl(app_add_handle, app_update_handle, app_remove_handle,
                           app_add_timeout, app_update_timeout, app_remove_timeout);
    CHECK(rv_last_error() == NULL);
    int cookie;
    CHECK_INT_EQ(rv_event_add_handle(7, R | W, probe_cb, &cookie, probe_free), 41);
    CHECK_INT_EQ(app.fd, 7);
    CHECK_INT_EQ(app.events, R | W);
    CHECK(app.cb == (void *)probe_cb && app.opaque == &cookie && app.free_cb == (void *)probe_free);
    rv_event_update_handle(41, W);
    CHECK_INT_EQ(app.watch, 41);
    CHECK_INT_EQ(app.events, W);
    app.watch = 0;
    CHECK_INT_EQ(rv_event_remove_handle(41), 0);
    CHECK_INT_EQ(app.watch, 41);
    CHECK_INT_EQ(rv_event_add_timeout(250, ticker_cb, &cookie, NULL), 42);
    CHECK_INT_EQ(app.interval, 250);
    CHECK(app.cb == (void *)ticker_cb && app.opaque == &cookie && app.free_cb == NULL);
    rv_event_update_timeout(42, -1);
    CHECK_INT_EQ(app.timer, 42);
    CHECK_INT_EQ(app.interval, -1);
    app.timer = 0;
    CHECK_INT_EQ(rv_event_remove_timeout(42), -1);      /* the application's answer */
    CHECK_INT_EQ(app.timer, 42);
    CHECK_INT_EQ(app.calls, 6);

    /* The built-in loop is not running just because some loop is registered. */
    CHECK_INT_EQ(rv_event_run_default_impl(), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, "not set up");
}

/* ---- the built-in loop ---- */

static void test_bad_arguments(void)
{
    CHECK_INT_EQ(rv_event_add_handle(-1, R, probe_cb, NULL, NULL), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "fd");
    CHECK_INT_EQ(rv_event_add_handle(0, R, NULL, NULL, NULL), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "callback");
    CHECK_INT_EQ(rv_event_add_handle(0, 16, probe_cb, NULL, NULL), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "RV_EVENT_HANDLE_");
    CHECK_INT_EQ(rv_event_add_timeout(-2, tick_cb, NULL, NULL), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "interval");
    CHECK_INT_EQ(rv_event_add_timeout(5, NULL, NULL, NULL), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "callback");
    CHECK_INT_EQ(rv_event_remove_handle(999999), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "no such handle");
    CHECK_INT_EQ(rv_event_remove_timeout(999999), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "no such timer");
}

/* Callbacks fire exactly while the pipe holds data and the handle asks
 * for it; disabling stops them and re-enabling resumes them. */
static void test_readable(void)
{
    int fds[2];
    make_pipe(fds);
    start_tick();
    struct probe p = { .drain = true };
    add_probe(&p, fds[0], R);

    run_times(3);
    CHECK_INT_EQ(p.calls, 0);
    put_byte(fds[1]);
    run_once();
    CHECK_INT_EQ(p.calls, 1);
    CHECK_INT_EQ(p.last_events, R);
    run_times(3);
    CHECK_INT_EQ(p.calls, 1);           /* drained: nothing more to report */

    /* Data left in the pipe: reported on every iteration (level-triggered). */
    p.drain = false;
    put_byte(fds[1]);
    run_times(2);
    CHECK_INT_EQ(p.calls, 3);
    rv_event_update_handle(p.watch, 0);
    run_times(3);
    CHECK_INT_EQ(p.calls, 3);
    /* Asking only for writability of a read end: readable data is no news. */
    rv_event_update_handle(p.watch, W);
    run_times(2);
    CHECK_INT_EQ(p.calls, 3);
    rv_event_update_handle(p.watch, R);
    run_once();
    CHECK_INT_EQ(p.calls, 4);
    CHECK_INT_EQ(p.last_events, R);

    /* Ids are positive and grow. */
    rv_event_update_handle(p.watch, 0);
    struct probe q = { .drain = true };
    add_probe(&q, fds[1], W);
    CHECK(q.watch > p.watch);
    run_once();
    CHECK_INT_EQ(q.calls, 1);
    CHECK_INT_EQ(q.last_events, W);

    CHECK_INT_EQ(rv_event_remove_handle(p.watch), 0);
    CHECK_INT_EQ(rv_event_remove_handle(q.watch), 0);
    CHECK_INT_EQ(p.frees, 0);           /* only once the loop has gone round */
    run_once();
    CHECK_INT_EQ(p.frees, 1);
    CHECK_INT_EQ(q.frees, 1);
    CHECK_INT_EQ(p.calls, 4);
    CHECK_INT_EQ(q.calls, 1);
    CHECK_INT_EQ(rv_event_remove_handle(p.watch), -1);
    check_last_error(RV_ERROR_INVALID_ARG, "no such handle");
    rv_event_update_handle(p.watch, R);     /* unknown now: ignored */
    run_times(2);
    CHECK_INT_EQ(p.calls, 4);
    CHECK_INT_EQ(p.frees, 1);

    stop_tick();
    close(fds[0]);
    close(fds[1]);
}

/* For the order test: which timer fired, in order. */
static int fired[64];
static int nfired;

static void record_cb(int timer, void *opaque)
{
    (void)opaque;
    if (nfired < (int)(sizeof(fired) / sizeof(fired[0])))
        fired[nfired] = timer;
    nfired++;
}

static void test_timers(void)
{
    /* 0 fires on every iteration, -1 never, and updates switch them. */
    struct ticker every = { 0 }, never = { 0 };
    add_ticker(&every, 0);
    add_ticker(&never, -1);
    run_times(10);
    CHECK_INT_EQ(every.calls, 10);
    CHECK_INT_EQ(never.calls, 0);
    rv_event_update_timeout(never.timer, 0);
    run_once();
    CHECK_INT_EQ(never.calls, 1);
    CHECK_INT_EQ(every.calls, 11);
    rv_event_update_timeout(never.timer, -1);
    run_times(3);
    CHECK_INT_EQ(never.calls, 1);
    CHECK_INT_EQ(every.calls, 14);
    CHECK_INT_EQ(rv_event_remove_timeout(every.timer), 0);
    CHECK_INT_EQ(rv_event_remove_timeout(never.timer), 0);
    CHECK_INT_EQ(every.frees, 0);

    /* Intervals relative to each other: a 10 ms timer fires first, and
     * at least as often as a 40 ms one.  (Only the order is asserted: on
     * a loaded machine one late iteration may find both due.) */
    struct ticker fast = { 0 }, slow = { 0 };
    add_ticker(&fast, 10);
    add_ticker(&slow, 40);
    run_once();
    CHECK_INT_EQ(every.frees, 1);       /* the purge came with the first run */
    CHECK_INT_EQ(never.frees, 1);
    CHECK_INT_EQ(fast.calls, 1);
    while (slow.calls < 3)
        run_once();
    CHECK(fast.first < slow.first);
    if (fast.calls < slow.calls)
        check_fail(__FILE__, __LINE__, "10 ms timer fired %d times while a 40 ms one fired %d",
                   fast.calls, slow.calls);
    CHECK_INT_EQ(rv_event_remove_timeout(fast.timer), 0);
    CHECK_INT_EQ(rv_event_remove_timeout(slow.timer), 0);

    /* An update restarts the interval from now: shortened, the later
     * timer fires first. */
    nfired = 0;
    int later = rv_event_add_timeout(5000, record_cb, NULL, NULL);
    int sooner = rv_event_add_timeout(300, record_cb, NULL, NULL);
    CHECK(later > 0 && sooner > 0);
    rv_event_update_timeout(later, 10);
    while (nfired == 0)
        run_once();
    CHECK_INT_EQ(fired[0], later);
    CHECK_INT_EQ(rv_event_remove_timeout(later), 0);
    CHECK_INT_EQ(rv_event_remove_timeout(sooner), 0);
    CHECK_INT_EQ(nfired, 1);

    /* A timer removing itself is called once and freed after returning. */
    struct ticker once = { .remove_self = true };
    add_ticker(&once, 0);
    start_tick();
    run_times(3);
    stop_tick();
    CHECK_INT_EQ(once.calls, 1);
    CHECK_INT_EQ(once.frees, 1);
    CHECK_INT_EQ(fast.frees, 1);
    CHECK_INT_EQ(slow.frees, 1);
}

/* Removal or disabling from inside callbacks, of the callback's own
 * handle or another one that is ready in the same iteration. */
static void test_changes_from_callbacks(void)
{
    int a[2], b[2];
    make_pipe(a);
    make_pipe(b);
    put_byte(a[1]);
    put_byte(b[1]);
    start_tick();

    /* Its own handle: called once although data stays, freed after. */
    struct probe self = { 0 };
    add_probe(&self, a[0], R);
    self.remove_watch = self.watch;
    run_once();
    CHECK_INT_EQ(self.calls, 1);
    CHECK_INT_EQ(self.frees, 1);
    run_times(2);
    CHECK_INT_EQ(self.calls, 1);
    CHECK_INT_EQ(self.frees, 1);

    /* Another ready handle, dispatched later in the same iteration. */
    struct probe first = { 0 }, second = { 0 };
    add_probe(&first, a[0], R);
    add_probe(&second, b[0], R);
    first.remove_watch = second.watch;
    run_once();
    CHECK_INT_EQ(first.calls, 1);
    CHECK_INT_EQ(second.calls, 0);
    CHECK_INT_EQ(second.frees, 1);
    first.remove_watch = 0;
    run_once();
    CHECK_INT_EQ(first.calls, 2);
    CHECK_INT_EQ(second.calls, 0);

    /* Disabled by an earlier callback of the same iteration: skipped. */
    struct probe third = { 0 };
    add_probe(&third, b[0], R);
    first.disable_watch = third.watch;
    run_once();
    CHECK_INT_EQ(first.calls, 3);
    CHECK_INT_EQ(third.calls, 0);
    first.disable_watch = 0;
    rv_event_update_handle(third.watch, R);
    run_once();
    CHECK_INT_EQ(third.calls, 1);

    /* Timers run before handles: a timer removing a ready handle. */
    struct ticker remover = { .remove_watch = third.watch, .remove_self = true };
    add_ticker(&remover, 0);
    run_once();
    CHECK_INT_EQ(remover.calls, 1);
    CHECK_INT_EQ(third.calls, 1);
    CHECK_INT_EQ(third.frees, 1);
    CHECK_INT_EQ(remover.frees, 1);

    CHECK_INT_EQ(rv_event_remove_handle(first.watch), 0);
    run_once();
    CHECK_INT_EQ(first.frees, 1);
    CHECK_INT_EQ(first.calls, 5);
    stop_tick();
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
}

/* A callback adding many handles grows the arrays mid-dispatch; the
 * handles after it still get their own callback and opaque. */
static struct probe added[100];

static void adder_cb(int watch, int fd, int events, void *opaque)
{
    (void)watch;
    (void)events;
    int target = *(int *)opaque;
    char c;
    CHECK_INT_EQ(read(fd, &c, 1), 1);
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
        add_probe(&added[i], target, R);
}

static void test_add_from_callback(void)
{
    int a[2], b[2];
    make_pipe(a);
    make_pipe(b);
    put_byte(a[1]);
    put_byte(b[1]);
    int target = b[0];
    int adder = rv_event_add_handle(a[0], R, adder_cb, &target, NULL);
    CHECK(adder > 0);
    struct probe later = { 0 };
    add_probe(&later, b[0], R);
    run_once();
    CHECK_INT_EQ(later.calls, 1);
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
        CHECK_INT_EQ(added[i].calls, 0);    /* added after the poll */
    run_once();
    CHECK_INT_EQ(later.calls, 2);
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++) {
        CHECK_INT_EQ(added[i].calls, 1);
        CHECK_INT_EQ(rv_event_remove_handle(added[i].watch), 0);
    }
    CHECK_INT_EQ(rv_event_remove_handle(adder), 0);
    CHECK_INT_EQ(rv_event_remove_handle(later.watch), 0);
    start_tick();
    run_once();
    stop_tick();
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
        CHECK_INT_EQ(added[i].frees, 1);
    CHECK_INT_EQ(later.frees, 1);
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
}

static void test_hangup_and_error(void)
{
    int fds[2];

    /* The writer closes: the reader sees a hangup. */
    make_pipe(fds);
    struct probe reader = { 0 };
    add_probe(&reader, fds[0], R);
    close(fds[1]);
    run_once();
    CHECK_INT_EQ(reader.calls, 1);
    CHECK(reader.last_events & HUP);
    CHECK_INT_EQ(rv_event_remove_handle(reader.watch), 0);

    /* The reader closes: the writer sees an error. */
    int fds2[2];
    make_pipe(fds2);
    struct probe writer = { 0 };
    add_probe(&writer, fds2[1], W);
    close(fds2[0]);
    run_once();
    CHECK_INT_EQ(writer.calls, 1);
    CHECK(writer.last_events & ERR);
    CHECK_INT_EQ(rv_event_remove_handle(writer.watch), 0);
    CHECK_INT_EQ(reader.frees, 1);

    /* An fd closed under a handle: an error, not a silent spin. */
    int stale_fd = dup(fds[0]);
    CHECK(stale_fd >= 0);
    struct probe stale = { 0 };
    add_probe(&stale, stale_fd, R);
    close(stale_fd);
    run_once();
    CHECK_INT_EQ(stale.calls, 1);
    CHECK_INT_EQ(stale.last_events, ERR);
    CHECK_INT_EQ(rv_event_remove_handle(stale.watch), 0);
    start_tick();
    run_once();
    stop_tick();
    CHECK_INT_EQ(writer.frees, 1);
    CHECK_INT_EQ(stale.frees, 1);
    close(fds[0]);
    close(fds2[1]);
}

/* The loop cannot be entered again from one of its callbacks. */
static int reentry_result;
static char reentry_message[256];

static void reenter_cb(int timer, void *opaque)
{
    (void)opaque;
    reentry_result = rv_event_run_default_impl();
    snprintf(reentry_message, sizeof(reentry_message), "%s",
             rv_last_error() ? rv_last_error()->message : "");
    CHECK_INT_EQ(rv_event_remove_timeout(timer), 0);
}

static void test_reentry(void)
{
    CHECK(rv_event_add_timeout(0, reenter_cb, NULL, NULL) > 0);
    run_once();
    CHECK_INT_EQ(reentry_result, -1);
    CHECK_STR_HAS(reentry_message, "already running");
}

/* A thousand pipes, all ready at once: one iteration serves them all. */
#define MANY 1000

static void test_many_handles(void)
{
    struct rlimit lim;
    CHECK(getrlimit(RLIMIT_NOFILE, &lim) == 0);
    if (lim.rlim_cur < 2 * MANY + 64) {
        lim.rlim_cur = lim.rlim_max < 2 * MANY + 64 ? lim.rlim_max : 2 * MANY + 64;
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur < 2 * MANY + 64) {
            fprintf(stderr, "test_many_handles skipped: cannot have %d open files\n",
                    2 * MANY + 64);
            return;
        }
    }

    static int rd[MANY], wr[MANY];
    static struct probe probes[MANY];
    for (int i = 0; i < MANY; i++) {
        int fds[2];
        make_pipe(fds);
        rd[i] = fds[0];
        wr[i] = fds[1];
        put_byte(wr[i]);
        probes[i] = (struct probe){ .drain = true };
        add_probe(&probes[i], rd[i], R);
        CHECK(i == 0 || probes[i].watch > probes[i - 1].watch);
    }
    start_tick();
    run_once();
    for (int i = 0; i < MANY; i++)
        CHECK_INT_EQ(probes[i].calls, 1);
    run_times(2);
    for (int i = 0; i < MANY; i++)
        CHECK_INT_EQ(probes[i].calls, 1);

    /* Every other one removed, then data for all: only the rest fire. */
    for (int i = 0; i < MANY; i += 2)
        CHECK_INT_EQ(rv_event_remove_handle(probes[i].watch), 0);
    for (int i = 0; i < MANY; i++)
        put_byte(wr[i]);
    run_once();
    for (int i = 0; i < MANY; i++) {
        CHECK_INT_EQ(probes[i].calls, i % 2 ? 2 : 1);
        CHECK_INT_EQ(probes[i].frees, i % 2 ? 0 : 1);
    }
    for (int i = 1; i < MANY; i += 2)
        CHECK_INT_EQ(rv_event_remove_handle(probes[i].watch), 0);
    run_once();
    stop_tick();
    for (int i = 0; i < MANY; i++) {
        CHECK_INT_EQ(probes[i].frees, 1);
        close(rd[i]);
        close(wr[i]);
    }
}

/* ---- changes from another thread while the loop sleeps ---- */

static atomic_bool loop_stop;
static atomic_int loop_iterations;
static atomic_int remote_calls, remote_frees, remote_timer_calls;

static void *loop_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&loop_stop)) {
        run_once();
        atomic_fetch_add(&loop_iterations, 1);
    }
    return NULL;
}

static void remote_cb(int watch, int fd, int events, void *opaque)
{
    (void)watch;
    (void)opaque;
    CHECK_INT_EQ(events, R);
    char buf[64];
    CHECK(read(fd, buf, sizeof(buf)) > 0);
    atomic_fetch_add(&remote_calls, 1);
}

static void remote_free(void *opaque)
{
    CHECK(opaque == &remote_calls);
    atomic_fetch_add(&remote_frees, 1);
}

static void remote_timer_cb(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
    atomic_fetch_add(&remote_timer_calls, 1);
}

static void stop_cb(int timer, void *opaque)
{
    (void)opaque;
    CHECK_INT_EQ(rv_event_remove_timeout(timer), 0);
}

/* The loop has nothing to wake it by itself: it sleeps in poll(). */
static void check_loop_asleep(void)
{
    sleep_ms(30);
    int before = atomic_load(&loop_iterations);
    sleep_ms(50);
    CHECK_INT_EQ(atomic_load(&loop_iterations), before);
}

static void test_other_thread(void)
{
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, loop_thread, NULL) == 0);
    check_loop_asleep();

    /* Not a second runner at the same time. */
    CHECK_INT_EQ(rv_event_run_default_impl(), -1);
    check_last_error(RV_ERROR_OPERATION_INVALID, "already running");

    /* A new handle on a ready pipe is served at once. */
    int fds[2];
    make_pipe(fds);
    put_byte(fds[1]);
    int watch = rv_event_add_handle(fds[0], R, remote_cb, &remote_calls, remote_free);
    CHECK(watch > 0);
    CHECK(wait_for(&remote_calls, 1));
    check_loop_asleep();

    /* Disabled, data does not reach the callback ... */
    rv_event_update_handle(watch, 0);
    put_byte(fds[1]);
    sleep_ms(50);
    CHECK_INT_EQ(atomic_load(&remote_calls), 1);
    check_loop_asleep();
    /* ... and enabled again, the sleeping loop takes it up. */
    rv_event_update_handle(watch, R);
    CHECK(wait_for(&remote_calls, 2));

    /* Removed: the free callback comes without waiting for other activity. */
    check_loop_asleep();
    CHECK_INT_EQ(rv_event_remove_handle(watch), 0);
    CHECK(wait_for(&remote_frees, 1));
    CHECK_INT_EQ(atomic_load(&remote_calls), 2);

    /* A timer shortened from 10 s to 1 ms fires at once. */
    int timer = rv_event_add_timeout(10000, remote_timer_cb, NULL, NULL);
    CHECK(timer > 0);
    check_loop_asleep();
    rv_event_update_timeout(timer, 1);
    CHECK(wait_for(&remote_timer_calls, 1));
    /* Disabled: once a firing under way is over, no more. */
    rv_event_update_timeout(timer, -1);
    check_loop_asleep();
    int calls = atomic_load(&remote_timer_calls);
    check_loop_asleep();
    CHECK_INT_EQ(atomic_load(&remote_timer_calls), calls);
    CHECK_INT_EQ(rv_event_remove_timeout(timer), 0);

    atomic_store(&loop_stop, true);
    CHECK(rv_event_add_timeout(0, stop_cb, NULL, NULL) > 0);
    CHECK(pthread_join(thread, NULL) == 0);
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    alarm(120);     /* a loop that never wakes fails the test instead of hanging it */

    test_nothing_registered();
    test_application_loop();

    CHECK_INT_EQ(rv_event_register_default_impl(), 0);
    CHECK_INT_EQ(rv_event_register_default_impl(), 0);
    CHECK(rv_last_error() == NULL);

    test_bad_arguments();
    test_readable();
    test_timers();
    test_changes_from_callbacks();
    test_add_from_callback();
    test_hangup_and_error();
    test_reentry();
    test_many_handles();
    test_other_thread();
    return 0;
}
