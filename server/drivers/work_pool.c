#include "server/drivers/work_pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "common/log.h"

RV_LOG_CATEGORY("server.work_pool");

static struct {
    struct ev_loop *loop;
    ev_async wake;              /* jobs finished */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* Under lock: */
    rv_work *todo, **todo_tail;
    rv_work *done, **done_tail;
    bool stopping;
    /* The loop's: */
    pthread_t threads[RV_WORK_THREADS_MAX];
    int nthreads;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *serve(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        rv_work *w = pool.todo;
        if (!w) {
            if (pool.stopping)
                break;
            pthread_cond_wait(&pool.cond, &pool.lock);
            continue;
        }
        if (!(pool.todo = w->next))
            pool.todo_tail = &pool.todo;
        pthread_mutex_unlock(&pool.lock);
        w->run(w);
        pthread_mutex_lock(&pool.lock);
        w->next = NULL;
        bool first = !pool.done;
        *pool.done_tail = w;
        pool.done_tail = &w->next;
        /* One wake-up per batch: the loop takes the whole list. */
        if (first && !pool.stopping)
            ev_async_send(pool.loop, &pool.wake);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* On the loop: the `done` of every finished job. */
static void finish_done(void)
{
    pthread_mutex_lock(&pool.lock);
    rv_work *list = pool.done;
    pool.done = NULL;
    pool.done_tail = &pool.done;
    pthread_mutex_unlock(&pool.lock);
    while (list) {
        rv_work *w = list;
        list = w->next;
        w->done(w);
    }
}

static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    finish_done();
}

int rv_work_pool_start(struct ev_loop *loop, int threads, rv_err *err)
{
    if (threads < 1)
        threads = 1;
    if (threads > RV_WORK_THREADS_MAX) {
        RV_WARN("work_threads = %d: using the most, %d", threads, RV_WORK_THREADS_MAX);
        threads = RV_WORK_THREADS_MAX;
    }
    pool.loop = loop;
    pool.todo = pool.done = NULL;
    pool.todo_tail = &pool.todo;
    pool.done_tail = &pool.done;
    pool.stopping = false;
    ev_async_init(&pool.wake, on_wake);
    ev_async_start(loop, &pool.wake);
    /* Signals stay the loop's: the threads start with all blocked. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* gnutls' handshake is the deepest caller; 256 KiB is ample. */
    pthread_attr_setstacksize(&attr, 256 << 10);
    int rc = 0;
    for (pool.nthreads = 0; pool.nthreads < threads; pool.nthreads++)
        if ((rc = pthread_create(&pool.threads[pool.nthreads], &attr, serve, NULL)) != 0)
            break;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pool.nthreads == 0) {
        ev_async_stop(loop, &pool.wake);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR,
                   "cannot start a work thread: %s", strerror(rc));
        return -1;
    }
    if (pool.nthreads < threads)
        RV_WARN("started %d of %d work threads: %s", pool.nthreads, threads, strerror(rc));
    RV_DEBUG("%d work threads", pool.nthreads);
    return 0;
}

bool rv_work_pool_running(void)
{
    return pool.nthreads > 0;
}

void rv_work_submit(rv_work *w)
{
    w->next = NULL;
    pthread_mutex_lock(&pool.lock);
    *pool.todo_tail = w;
    pool.todo_tail = &w->next;
    pthread_cond_signal(&pool.cond);
    pthread_mutex_unlock(&pool.lock);
}

void rv_work_pool_stop(void)
{
    if (pool.nthreads == 0)
        return;
    pthread_mutex_lock(&pool.lock);
    pool.stopping = true;
    pthread_cond_broadcast(&pool.cond);
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < pool.nthreads; i++)
        pthread_join(pool.threads[i], NULL);
    pool.nthreads = 0;
    ev_async_stop(pool.loop, &pool.wake);
    finish_done();
}
