/* The application's event loop: which implementation the rv_event_*
 * functions forward to, and the built-in one, a poll() loop.
 *
 * Built-in loop.  One mutex guards the handle and timer arrays; the
 * callbacks run without it, so they may add, update or remove anything,
 * themselves included.  Entries keep their index for the whole of an
 * iteration: removal only marks an entry deleted, and the loop thread
 * purges the marked ones (and calls their free callbacks) after the
 * dispatch.  Ids only grow and new entries are appended, so both arrays
 * stay sorted by id and a lookup is a binary search.  A change made while
 * the loop sleeps in poll() writes a byte to a pipe the loop also polls,
 * but only if it could make the loop wake earlier or watch more. */
#include "client/event.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/last_error.h"
#include "common/log.h"

RV_LOG_CATEGORY("client.event");

#define HANDLE_EVENT_MASK (RV_EVENT_HANDLE_READABLE | RV_EVENT_HANDLE_WRITABLE | \
                           RV_EVENT_HANDLE_ERROR | RV_EVENT_HANDLE_HANGUP)

/* ---- the registry ---- */

struct event_impl {
    rv_event_add_handle_func add_handle;
    rv_event_update_handle_func update_handle;
    rv_event_remove_handle_func remove_handle;
    rv_event_add_timeout_func add_timeout;
    rv_event_update_timeout_func update_timeout;
    rv_event_remove_timeout_func remove_timeout;
};

enum impl_kind { IMPL_NONE, IMPL_BUILTIN, IMPL_APPLICATION };

/* Connections read the registration from any thread; a copy taken under
 * the lock stays consistent even if the application registers again. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static enum impl_kind registered_kind;
static struct event_impl registered;    /* the application's functions */

static void set_registered(enum impl_kind kind, const struct event_impl *impl)
{
    pthread_mutex_lock(&registry_lock);
    registered_kind = kind;
    if (impl)
        registered = *impl;
    pthread_mutex_unlock(&registry_lock);
}

/* Which loop is registered; an application's functions go to *impl. */
static enum impl_kind get_registered(struct event_impl *impl)
{
    pthread_mutex_lock(&registry_lock);
    enum impl_kind kind = registered_kind;
    *impl = registered;
    pthread_mutex_unlock(&registry_lock);
    return kind;
}

int rvc_event_impl_registered(void)
{
    struct event_impl impl;
    return get_registered(&impl) != IMPL_NONE;
}

/* Set err from message; -1 for the caller to return. */
static int fail(rv_err *err, int code, const char *message)
{
    rv_err_set(err, RV_FROM_NONE, code, "%s", message);
    return -1;
}

static int no_loop_registered(rv_err *err)
{
    return fail(err, RV_ERR_OPERATION_INVALID,
                "no event loop registered: call rv_event_register_default_impl() "
                "or rv_event_register_impl() first");
}

/* ---- the built-in loop's state ---- */

/* What handles and timers share, first in both, so that lookup and
 * purge serve both arrays. */
struct entry {
    int id;
    bool deleted;
    void *opaque;
    rv_free_callback free_cb;
};

struct watch {
    struct entry e;
    int fd;
    int events;                 /* RV_EVENT_HANDLE_* waited for; 0: disabled */
    rv_event_handle_callback cb;
};

struct timer {
    struct entry e;
    int interval_ms;            /* -1 disabled, 0 every iteration */
    long long due_ms;           /* on the monotonic clock */
    rv_event_timeout_callback cb;
};

struct pending_free {
    rv_free_callback free_cb;
    void *opaque;
};

static struct {
    pthread_mutex_t lock;
    bool initialized;
    int wake_read_fd, wake_write_fd;
    bool wake_pending;          /* a wakeup byte is written and not drained yet */
    bool running;               /* a thread is inside rv_event_run_default_impl */
    bool polling;               /* ... and in poll(), with the set built from the arrays */
    long long poll_deadline_ms; /* when that poll() returns by itself; -1 never */

    struct watch *watches;
    size_t n_watches, cap_watches, deleted_watches;
    int last_watch_id;
    struct timer *timers;
    size_t n_timers, cap_timers, deleted_timers;
    int last_timer_id;

    /* The loop thread's alone, kept from one iteration to the next so that
     * a steady loop allocates nothing: the poll set (slot 0 is the wakeup
     * pipe), the watch index of each slot, and the purged entries' free
     * callbacks waiting to run outside the lock. */
    struct pollfd *pollfds;
    size_t *poll_watch;
    size_t cap_poll;
    struct pending_free *frees;
    size_t cap_frees;
} loop = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake_read_fd = -1, .wake_write_fd = -1 };

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Make room for one more element in *array (capacity *cap, n used). */
static int grow(void **array, size_t *cap, size_t n, size_t elem_size)
{
    if (n < *cap)
        return 0;
    size_t new_cap = *cap ? *cap * 2 : 16;
    void *p = reallocarray(*array, new_cap, elem_size);
    if (!p)
        return -1;
    *array = p;
    *cap = new_cap;
    return 0;
}

static struct entry *entry_at(void *array, size_t elem_size, size_t i)
{
    return (struct entry *)((char *)array + i * elem_size);
}

/* Index of the live entry with this id, or -1: a binary search, since
 * ids only grow and entries are appended. */
static long find_entry(void *array, size_t n, size_t elem_size, int id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entry_at(array, elem_size, mid)->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n)
        return -1;
    const struct entry *e = entry_at(array, elem_size, lo);
    return e->id == id && !e->deleted ? (long)lo : -1;
}

static long find_watch(int id)
{
    return find_entry(loop.watches, loop.n_watches, sizeof(*loop.watches), id);
}

static long find_timer(int id)
{
    return find_entry(loop.timers, loop.n_timers, sizeof(*loop.timers), id);
}

/* Called with the lock held once a change needs the sleeping loop to
 * rebuild its poll set; true if the caller must write the wakeup byte
 * (after unlocking).  The loop thread itself never polls while it runs
 * callbacks, so its own changes never get here with polling set. */
static bool need_wakeup_locked(void)
{
    if (!loop.polling || loop.wake_pending)
        return false;
    loop.wake_pending = true;
    return true;
}

static void wake_loop(void)
{
    static const char byte = 'w';
    /* At most one byte is ever in the pipe (wake_pending), so it cannot
     * be full; EINTR is the only failure worth a retry. */
    while (write(loop.wake_write_fd, &byte, 1) < 0 && errno == EINTR)
        ;
}

static void drain_wakeup(void)
{
    char buf[16];
    while (read(loop.wake_read_fd, buf, sizeof(buf)) > 0)
        ;
    pthread_mutex_lock(&loop.lock);
    /* Cleared only after the drain: a writer that saw the flag still set
     * made its change before this point, so the next poll set has it. */
    loop.wake_pending = false;
    pthread_mutex_unlock(&loop.lock);
}

/* ---- the built-in loop's six functions ---- */

static int builtin_add_handle(int fd, int events, rv_event_handle_callback cb, void *opaque,
                              rv_free_callback free_cb, rv_err *err)
{
    if (fd < 0)
        return fail(err, RV_ERR_INVALID_ARG, "rv_event_add_handle: fd must not be negative");
    if (!cb)
        return fail(err, RV_ERR_INVALID_ARG, "rv_event_add_handle: the callback must not be NULL");
    if (events & ~HANDLE_EVENT_MASK)
        return fail(err, RV_ERR_INVALID_ARG,
                    "rv_event_add_handle: events may only hold RV_EVENT_HANDLE_* bits");

    pthread_mutex_lock(&loop.lock);
    if (loop.last_watch_id == INT_MAX) {
        pthread_mutex_unlock(&loop.lock);
        return fail(err, RV_ERR_INTERNAL_ERROR, "rv_event_add_handle: out of handle ids");
    }
    if (grow((void **)&loop.watches, &loop.cap_watches, loop.n_watches,
             sizeof(*loop.watches)) < 0) {
        pthread_mutex_unlock(&loop.lock);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    int id = ++loop.last_watch_id;
    loop.watches[loop.n_watches++] = (struct watch){
        .e = { .id = id, .opaque = opaque, .free_cb = free_cb },
        .fd = fd, .events = events, .cb = cb,
    };
    bool wake = events && need_wakeup_locked();
    pthread_mutex_unlock(&loop.lock);
    if (wake)
        wake_loop();
    RV_DEBUG("handle %d: fd %d, events %d", id, fd, events);
    return id;
}

static void builtin_update_handle(int watch, int events)
{
    /* No last error here: this returns nothing, and setting one would
     * leave it behind in the calling thread after a call that succeeded. */
    if (events & ~HANDLE_EVENT_MASK) {
        RV_WARN("handle %d: ignoring an update to unknown events %d", watch, events);
        return;
    }
    pthread_mutex_lock(&loop.lock);
    long i = find_watch(watch);
    bool wake = false;
    if (i >= 0) {
        /* Only events that were not waited for can need a new poll set:
         * a disabled one at worst makes poll() return once for nothing. */
        wake = (events & ~loop.watches[i].events) && need_wakeup_locked();
        loop.watches[i].events = events;
    }
    pthread_mutex_unlock(&loop.lock);
    if (i < 0)
        RV_DEBUG("update of unknown handle %d ignored", watch);
    if (wake)
        wake_loop();
}

static int builtin_remove_handle(int watch, rv_err *err)
{
    pthread_mutex_lock(&loop.lock);
    long i = find_watch(watch);
    if (i < 0) {
        pthread_mutex_unlock(&loop.lock);
        return fail(err, RV_ERR_INVALID_ARG, "rv_event_remove_handle: no such handle");
    }
    struct watch *w = &loop.watches[i];
    w->e.deleted = true;
    w->events = 0;
    loop.deleted_watches++;
    /* A sleeping loop would keep the opaque until its next wakeup; wake
     * it so that the free callback runs now. */
    bool wake = w->e.free_cb && need_wakeup_locked();
    pthread_mutex_unlock(&loop.lock);
    if (wake)
        wake_loop();
    RV_DEBUG("handle %d removed", watch);
    return 0;
}

/* Called with the lock held: whether a timer now due at due_ms could end
 * the current poll() earlier than it would end by itself. */
static bool timer_wakeup_locked(long long due_ms)
{
    if (loop.poll_deadline_ms >= 0 && due_ms >= loop.poll_deadline_ms)
        return false;
    return need_wakeup_locked();
}

static int builtin_add_timeout(int interval_ms, rv_event_timeout_callback cb, void *opaque,
                               rv_free_callback free_cb, rv_err *err)
{
    if (interval_ms < -1)
        return fail(err, RV_ERR_INVALID_ARG,
                    "rv_event_add_timeout: the interval must be -1 (disabled), 0 or positive");
    if (!cb)
        return fail(err, RV_ERR_INVALID_ARG, "rv_event_add_timeout: the callback must not be NULL");

    long long due = interval_ms >= 0 ? now_ms() + interval_ms : 0;
    pthread_mutex_lock(&loop.lock);
    if (loop.last_timer_id == INT_MAX) {
        pthread_mutex_unlock(&loop.lock);
        return fail(err, RV_ERR_INTERNAL_ERROR, "rv_event_add_timeout: out of timer ids");
    }
    if (grow((void **)&loop.timers, &loop.cap_timers, loop.n_timers,
             sizeof(*loop.timers)) < 0) {
        pthread_mutex_unlock(&loop.lock);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    int id = ++loop.last_timer_id;
    loop.timers[loop.n_timers++] = (struct timer){
        .e = { .id = id, .opaque = opaque, .free_cb = free_cb },
        .interval_ms = interval_ms, .due_ms = due, .cb = cb,
    };
    bool wake = interval_ms >= 0 && timer_wakeup_locked(due);
    pthread_mutex_unlock(&loop.lock);
    if (wake)
        wake_loop();
    RV_DEBUG("timer %d: every %d ms", id, interval_ms);
    return id;
}

static void builtin_update_timeout(int timer, int interval_ms)
{
    if (interval_ms < -1) {
        RV_WARN("timer %d: ignoring an update to interval %d", timer, interval_ms);
        return;
    }
    /* Like libvirt's: an update restarts the interval from now. */
    long long due = interval_ms >= 0 ? now_ms() + interval_ms : 0;
    pthread_mutex_lock(&loop.lock);
    long i = find_timer(timer);
    bool wake = false;
    if (i >= 0) {
        loop.timers[i].interval_ms = interval_ms;
        loop.timers[i].due_ms = due;
        wake = interval_ms >= 0 && timer_wakeup_locked(due);
    }
    pthread_mutex_unlock(&loop.lock);
    if (i < 0)
        RV_DEBUG("update of unknown timer %d ignored", timer);
    if (wake)
        wake_loop();
}

static int builtin_remove_timeout(int timer, rv_err *err)
{
    pthread_mutex_lock(&loop.lock);
    long i = find_timer(timer);
    if (i < 0) {
        pthread_mutex_unlock(&loop.lock);
        return fail(err, RV_ERR_INVALID_ARG, "rv_event_remove_timeout: no such timer");
    }
    struct timer *t = &loop.timers[i];
    t->e.deleted = true;
    t->interval_ms = -1;
    loop.deleted_timers++;
    bool wake = t->e.free_cb && need_wakeup_locked();
    pthread_mutex_unlock(&loop.lock);
    if (wake)
        wake_loop();
    RV_DEBUG("timer %d removed", timer);
    return 0;
}

/* ---- the registered loop's functions, failures in err ---- */

static int registered_add_handle(int fd, int events, rv_event_handle_callback cb,
                                 void *opaque, rv_free_callback free_cb, rv_err *err)
{
    struct event_impl impl;
    switch (get_registered(&impl)) {
    case IMPL_BUILTIN:
        return builtin_add_handle(fd, events, cb, opaque, free_cb, err);
    case IMPL_APPLICATION:
        return impl.add_handle(fd, events, cb, opaque, free_cb);
    default:
        return no_loop_registered(err);
    }
}

static int registered_remove_handle(int watch, rv_err *err)
{
    struct event_impl impl;
    switch (get_registered(&impl)) {
    case IMPL_BUILTIN:
        return builtin_remove_handle(watch, err);
    case IMPL_APPLICATION:
        return impl.remove_handle(watch);
    default:
        return no_loop_registered(err);
    }
}

static int registered_add_timeout(int interval_ms, rv_event_timeout_callback cb,
                                  void *opaque, rv_free_callback free_cb, rv_err *err)
{
    struct event_impl impl;
    switch (get_registered(&impl)) {
    case IMPL_BUILTIN:
        return builtin_add_timeout(interval_ms, cb, opaque, free_cb, err);
    case IMPL_APPLICATION:
        return impl.add_timeout(interval_ms, cb, opaque, free_cb);
    default:
        return no_loop_registered(err);
    }
}

static int registered_remove_timeout(int timer, rv_err *err)
{
    struct event_impl impl;
    switch (get_registered(&impl)) {
    case IMPL_BUILTIN:
        return builtin_remove_timeout(timer, err);
    case IMPL_APPLICATION:
        return impl.remove_timeout(timer);
    default:
        return no_loop_registered(err);
    }
}

/* The updates report nothing (they return nothing), so one function
 * serves the application and libremvirt alike. */
void rvc_event_update_handle(int watch, int events)
{
    struct event_impl impl;
    switch (get_registered(&impl)) {
    case IMPL_BUILTIN:
        builtin_update_handle(watch, events);
        break;
    case IMPL_APPLICATION:
        impl.update_handle(watch, events);
        break;
    default:
        break;
    }
}

void rvc_event_update_timeout(int timer, int interval_ms)
{
    struct event_impl impl;
    switch (get_registered(&impl)) {
    case IMPL_BUILTIN:
        builtin_update_timeout(timer, interval_ms);
        break;
    case IMPL_APPLICATION:
        impl.update_timeout(timer, interval_ms);
        break;
    default:
        break;
    }
}

/* ---- libremvirt's own calls: a failure is logged, never the last error ---- */

/* rc, after logging what err says went wrong (and clearing it). */
static int logged(int rc, rv_err *err, const char *what)
{
    if (rv_err_is_set(err))
        RV_DEBUG("%s: %s", what, err->message ? err->message : "?");
    rv_err_clear(err);
    return rc;
}

int rvc_event_add_handle(int fd, int events, rv_event_handle_callback cb, void *opaque,
                         rv_free_callback free_cb)
{
    rv_err err = { 0 };
    return logged(registered_add_handle(fd, events, cb, opaque, free_cb, &err), &err,
                  "cannot add a handle to the event loop");
}

int rvc_event_remove_handle(int watch)
{
    rv_err err = { 0 };
    return logged(registered_remove_handle(watch, &err), &err,
                  "cannot remove a handle from the event loop");
}

int rvc_event_add_timeout(int interval_ms, rv_event_timeout_callback cb, void *opaque,
                          rv_free_callback free_cb)
{
    rv_err err = { 0 };
    return logged(registered_add_timeout(interval_ms, cb, opaque, free_cb, &err), &err,
                  "cannot add a timer to the event loop");
}

int rvc_event_remove_timeout(int timer)
{
    rv_err err = { 0 };
    return logged(registered_remove_timeout(timer, &err), &err,
                  "cannot remove a timer from the event loop");
}

/* ---- one iteration of the built-in loop ---- */

static short poll_events(int events)
{
    return (short)((events & RV_EVENT_HANDLE_READABLE ? POLLIN : 0) |
                   (events & RV_EVENT_HANDLE_WRITABLE ? POLLOUT : 0));
}

static int handle_events(short revents)
{
    return (revents & POLLIN ? RV_EVENT_HANDLE_READABLE : 0) |
           (revents & POLLOUT ? RV_EVENT_HANDLE_WRITABLE : 0) |
           (revents & (POLLERR | POLLNVAL) ? RV_EVENT_HANDLE_ERROR : 0) |
           (revents & POLLHUP ? RV_EVENT_HANDLE_HANGUP : 0);
}

/* With the lock held: fill the poll set from the enabled handles, and
 * return poll()'s timeout from the earliest enabled timer (-1: none).
 * *nfds gets the set's size.  -1 if the set cannot grow. */
static int build_poll_set_locked(size_t *nfds, int *timeout_ms, long long now)
{
    if (loop.cap_poll < loop.n_watches + 1) {
        size_t cap = loop.n_watches + 1 > 2 * loop.cap_poll ? loop.n_watches + 1
                                                            : 2 * loop.cap_poll;
        struct pollfd *fds = reallocarray(loop.pollfds, cap, sizeof(*fds));
        if (!fds)
            return -1;
        loop.pollfds = fds;
        size_t *idx = reallocarray(loop.poll_watch, cap, sizeof(*idx));
        if (!idx)
            return -1;
        loop.poll_watch = idx;
        loop.cap_poll = cap;
    }

    size_t n = 0;
    loop.pollfds[n++] = (struct pollfd){ .fd = loop.wake_read_fd, .events = POLLIN };
    for (size_t i = 0; i < loop.n_watches; i++) {
        const struct watch *w = &loop.watches[i];
        if (!w->events)
            continue;       /* disabled or deleted */
        loop.poll_watch[n] = i;
        loop.pollfds[n++] = (struct pollfd){ .fd = w->fd, .events = poll_events(w->events) };
    }
    *nfds = n;

    long long deadline = -1;
    for (size_t i = 0; i < loop.n_timers; i++) {
        const struct timer *t = &loop.timers[i];
        if (t->interval_ms >= 0 && (deadline < 0 || t->due_ms < deadline))
            deadline = t->due_ms;
    }
    loop.poll_deadline_ms = deadline;
    if (deadline < 0)
        *timeout_ms = -1;
    else if (deadline <= now)
        *timeout_ms = 0;
    else
        *timeout_ms = deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
    return 0;
}

/* Run the timers due at now (those present when the dispatch began). */
static void run_timers(long long now)
{
    pthread_mutex_lock(&loop.lock);
    size_t n = loop.n_timers;
    for (size_t i = 0; i < n; i++) {
        struct timer *t = &loop.timers[i];
        if (t->interval_ms < 0 || t->due_ms > now)
            continue;       /* disabled, deleted, not due */
        t->due_ms = now + t->interval_ms;
        int id = t->e.id;
        rv_event_timeout_callback cb = t->cb;
        void *opaque = t->e.opaque;
        pthread_mutex_unlock(&loop.lock);
        cb(id, opaque);
        pthread_mutex_lock(&loop.lock);
    }
    pthread_mutex_unlock(&loop.lock);
}

/* Run the callbacks of the handles poll() found ready, skipping those
 * removed or disabled by an earlier callback of this iteration. */
static void run_handles(size_t nfds, int nready)
{
    pthread_mutex_lock(&loop.lock);
    for (size_t k = 1; k < nfds && nready > 0; k++) {
        short revents = loop.pollfds[k].revents;
        if (!revents)
            continue;
        nready--;
        struct watch *w = &loop.watches[loop.poll_watch[k]];
        if (!w->events)
            continue;
        /* Readiness the handle no longer asks for is not news to it;
         * errors and hangups always are. */
        int events = handle_events(revents) &
                     (w->events | RV_EVENT_HANDLE_ERROR | RV_EVENT_HANDLE_HANGUP);
        if (!events)
            continue;
        int id = w->e.id, fd = w->fd;
        rv_event_handle_callback cb = w->cb;
        void *opaque = w->e.opaque;
        pthread_mutex_unlock(&loop.lock);
        cb(id, fd, events, opaque);
        pthread_mutex_lock(&loop.lock);
    }
    pthread_mutex_unlock(&loop.lock);
}

/* With the lock held: queue a deleted entry's free callback in
 * loop.frees; false if the queue cannot grow. */
static bool queue_free_locked(const struct entry *e, size_t *nfrees)
{
    if (!e->free_cb)
        return true;
    if (grow((void **)&loop.frees, &loop.cap_frees, *nfrees, sizeof(*loop.frees)) < 0)
        return false;
    loop.frees[(*nfrees)++] = (struct pending_free){ e->free_cb, e->opaque };
    return true;
}

/* With the lock held: drop the deleted entries of one array, keeping the
 * rest in id order, and queue their free callbacks.  One whose callback
 * finds no room in the queue stays for the next purge. */
static void purge_array_locked(void *array, size_t *n, size_t elem_size, size_t *deleted,
                               size_t *nfrees)
{
    size_t kept = 0, i = 0;
    for (; i < *n && *deleted; i++) {
        struct entry *e = entry_at(array, elem_size, i);
        if (e->deleted && queue_free_locked(e, nfrees)) {
            (*deleted)--;
            continue;
        }
        if (kept != i)
            memcpy(entry_at(array, elem_size, kept), e, elem_size);
        kept++;
    }
    /* Past the last deleted entry the rest moves down in one piece. */
    if (kept != i)
        memmove(entry_at(array, elem_size, kept), entry_at(array, elem_size, i),
                (*n - i) * elem_size);
    *n = kept + (*n - i);
}

/* Drop the deleted entries, then run their free callbacks without the
 * lock: none of their callbacks can run any more, since only this thread
 * runs them and its dispatch is over. */
static void purge_deleted(void)
{
    size_t nfrees = 0;
    pthread_mutex_lock(&loop.lock);
    purge_array_locked(loop.watches, &loop.n_watches, sizeof(*loop.watches),
                       &loop.deleted_watches, &nfrees);
    purge_array_locked(loop.timers, &loop.n_timers, sizeof(*loop.timers),
                       &loop.deleted_timers, &nfrees);
    pthread_mutex_unlock(&loop.lock);
    /* loop.frees is this thread's alone: a free callback that adds or
     * removes entries only touches the arrays. */
    for (size_t i = 0; i < nfrees; i++)
        loop.frees[i].free_cb(loop.frees[i].opaque);
}

static int run_once(rv_err *err)
{
    pthread_mutex_lock(&loop.lock);
    if (!loop.initialized) {
        pthread_mutex_unlock(&loop.lock);
        rv_err_set(err, RV_FROM_NONE, RV_ERR_OPERATION_INVALID,
                   "the built-in event loop is not set up: "
                   "call rv_event_register_default_impl() first");
        return -1;
    }
    if (loop.running) {
        pthread_mutex_unlock(&loop.lock);
        rv_err_set(err, RV_FROM_NONE, RV_ERR_OPERATION_INVALID,
                   "rv_event_run_default_impl is already running "
                   "(in another thread, or this is one of its callbacks)");
        return -1;
    }
    size_t nfds;
    int timeout_ms;
    if (build_poll_set_locked(&nfds, &timeout_ms, now_ms()) < 0) {
        pthread_mutex_unlock(&loop.lock);
        rv_err_set(err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    loop.running = true;
    loop.polling = true;
    pthread_mutex_unlock(&loop.lock);

    int nready = poll(loop.pollfds, nfds, timeout_ms);
    int poll_errno = errno;
    long long now = now_ms();

    pthread_mutex_lock(&loop.lock);
    loop.polling = false;
    pthread_mutex_unlock(&loop.lock);

    int ret = 0;
    if (nready < 0 && poll_errno != EINTR) {
        rv_err_set_errno(err, RV_FROM_NONE, poll_errno, "poll failed");
        ret = -1;
    } else {
        if (nready > 0 && loop.pollfds[0].revents) {
            drain_wakeup();
            nready--;
        }
        run_timers(now);
        if (nready > 0)
            run_handles(nfds, nready);
    }
    purge_deleted();

    pthread_mutex_lock(&loop.lock);
    loop.running = false;
    pthread_mutex_unlock(&loop.lock);
    return ret;
}

static int loop_init(rv_err *err)
{
    pthread_mutex_lock(&loop.lock);
    if (!loop.initialized) {
        int fds[2];
        /* Non-blocking both ways: the loop drains without blocking, and
         * a waker never blocks on a full pipe. */
        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
            int errnum = errno;
            pthread_mutex_unlock(&loop.lock);
            rv_err_set_errno(err, RV_FROM_NONE, errnum,
                             "cannot create the event loop's wakeup pipe");
            return -1;
        }
        loop.wake_read_fd = fds[0];
        loop.wake_write_fd = fds[1];
        loop.initialized = true;
    }
    pthread_mutex_unlock(&loop.lock);
    return 0;
}

/* ---- the public functions ---- */

void rv_event_register_impl(rv_event_add_handle_func add_handle,
                            rv_event_update_handle_func update_handle,
                            rv_event_remove_handle_func remove_handle,
                            rv_event_add_timeout_func add_timeout,
                            rv_event_update_timeout_func update_timeout,
                            rv_event_remove_timeout_func remove_timeout)
{
    rv_reset_last_error();
    if (!add_handle || !update_handle || !remove_handle ||
        !add_timeout || !update_timeout || !remove_timeout) {
        rv_err err = { 0 };
        fail(&err, RV_ERR_INVALID_ARG, "rv_event_register_impl needs all six functions");
        rvc_set_last_error(&err);
        return;
    }
    set_registered(IMPL_APPLICATION, &(struct event_impl){
        add_handle, update_handle, remove_handle, add_timeout, update_timeout, remove_timeout,
    });
    RV_DEBUG("the application's event loop is registered");
}

int rv_event_register_default_impl(void)
{
    rv_reset_last_error();
    rv_err err = { 0 };
    if (loop_init(&err) < 0) {
        rvc_set_last_error(&err);
        return -1;
    }
    set_registered(IMPL_BUILTIN, NULL);
    RV_DEBUG("the built-in event loop is registered");
    return 0;
}

int rv_event_run_default_impl(void)
{
    rv_reset_last_error();
    rv_err err = { 0 };
    if (run_once(&err) < 0) {
        rvc_set_last_error(&err);
        return -1;
    }
    return 0;
}

/* The public calls: a failure becomes the thread's last error. */
static int to_last_error(int rc, rv_err *err)
{
    if (rv_err_is_set(err))
        rvc_set_last_error(err);
    return rc;
}

int rv_event_add_handle(int fd, int events, rv_event_handle_callback cb, void *opaque,
                        rv_free_callback free_cb)
{
    rv_reset_last_error();
    rv_err err = { 0 };
    return to_last_error(registered_add_handle(fd, events, cb, opaque, free_cb, &err),
                         &err);
}

void rv_event_update_handle(int watch, int events)
{
    rvc_event_update_handle(watch, events);
}

int rv_event_remove_handle(int watch)
{
    rv_reset_last_error();
    rv_err err = { 0 };
    return to_last_error(registered_remove_handle(watch, &err), &err);
}

int rv_event_add_timeout(int interval_ms, rv_event_timeout_callback cb, void *opaque,
                         rv_free_callback free_cb)
{
    rv_reset_last_error();
    rv_err err = { 0 };
    return to_last_error(registered_add_timeout(interval_ms, cb, opaque, free_cb, &err),
                         &err);
}

void rv_event_update_timeout(int timer, int interval_ms)
{
    rvc_event_update_timeout(timer, interval_ms);
}

int rv_event_remove_timeout(int timer)
{
    rv_reset_last_error();
    rv_err err = { 0 };
    return to_last_error(registered_remove_timeout(timer, &err), &err);
}
