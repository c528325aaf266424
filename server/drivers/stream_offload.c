#include "server/drivers/stream_offload.h"
#include "server/drivers/stream_fd.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

/* The queue's bound in bytes of data, each way: with the stream's own
 * 256 KiB chunks, four in flight keep the disk busy while the loop fills
 * the next. */
#define QUEUE_BOUND (1u << 20)
/* Every item holds up to this much data; items are kept for reuse (a
 * fresh 256 KiB allocation is an mmap, and its pages faulted in and
 * zeroed each time cost more than the copy: perf, issue 31). */
#define ITEM_CAP (256u << 10)
#define SPARE_MAX (QUEUE_BOUND / ITEM_CAP + 2)
/* A hole costs the queue this much, so that a flood of hole packets is
 * bounded too. */
#define HOLE_COST 64u

typedef struct item {
    struct item *next;
    long long hole;             /* > 0: a hole of this length, no data */
    size_t len, off;            /* data[off..len) still to go */
    bool big;                   /* data has ITEM_CAP bytes (a hole's has none) */
    char data[];
} item;

typedef struct offload {
    rv_stream_io base;
    rv_stream_io *inner;
    struct ev_loop *loop;
    ev_async wake;              /* the thread has room, data, an end or an error */
    bool uploading;
    rv_upload_bounds bounds;    /* the loop's: what the upload may still take */

    /* Under lock, shared by the loop and the thread: */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    item *head, *tail;
    size_t queued;              /* the queue's cost: data bytes and holes */
    bool busy;                  /* the thread holds an item it is writing */
    bool eof;                   /* a download's data ended (no more items) */
    bool loop_waits;            /* the loop was told "again": wake it */
    bool gone;                  /* the loop freed it: the thread frees all */
    rv_err failure;             /* the thread's error */
    item *spare;                /* used items, for reuse */
    unsigned spares;
} offload;

/* Threads alive: a thread outlives its endpoint while it ends a write
 * that a slow disk holds, so the bound counts threads, not endpoints. */
static unsigned offloads;

static void queue_push(offload *o, item *it)
{
    it->next = NULL;
    if (o->tail)
        o->tail->next = it;
    else
        o->head = it;
    o->tail = it;
    o->queued += it->hole > 0 ? HOLE_COST : it->len;
}

static item *queue_pop(offload *o)
{
    item *it = o->head;
    if (it && !(o->head = it->next))
        o->tail = NULL;
    return it;
}

/* Under lock: a used item, or NULL (then item_new outside the lock). */
static item *item_reuse(offload *o)
{
    item *it = o->spare;
    if (it) {
        o->spare = it->next;
        o->spares--;
    }
    return it;
}

static item *item_new(void)
{
    item *it = malloc(sizeof(item) + ITEM_CAP);
    if (it)
        it->big = true;
    return it;
}

/* Under lock: keep it for the next one, up to SPARE_MAX. */
static void item_done(offload *o, item *it)
{
    if (!it->big || o->spares >= SPARE_MAX) {
        free(it);
        return;
    }
    it->next = o->spare;
    o->spare = it;
    o->spares++;
}

static void queue_drop(offload *o)
{
    for (item *it; (it = queue_pop(o));)
        item_done(o, it);
    o->queued = 0;
}

/* From the thread, under lock: the loop wants to hear of a change. */
static void tell_loop(offload *o)
{
    if (o->loop_waits && !o->gone) {
        o->loop_waits = false;
        ev_async_send(o->loop, &o->wake);
    }
}

/* The thread's error, if any, into err; any later call fails the same way. */
static bool failed(offload *o, rv_err *err)
{
    if (!rv_err_is_set(&o->failure))
        return false;
    rv_err_set(err, o->failure.domain, o->failure.code, "%s",
               o->failure.message ? o->failure.message : "the transfer failed");
    return true;
}

/* ---- the thread ---- */

/* An upload: write each item through the inner endpoint, in order. */
static void upload_item(offload *o, item *it)
{
    rv_err err = { 0 };
    if (it->hole > 0) {
        o->inner->ops->hole(o->inner, it->hole, &err);
    } else {
        while (it->off < it->len && !rv_err_is_set(&err)) {
            ssize_t n = o->inner->ops->write(o->inner, it->data + it->off, it->len - it->off, &err);
            if (n == 0)
                rv_err_set(&err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR,
                           "cannot write to stream: the file took no data");
            if (n > 0)
                it->off += (size_t)n;
        }
    }
    pthread_mutex_lock(&o->lock);
    o->queued -= it->hole > 0 ? HOLE_COST : it->len;
    o->busy = false;
    if (rv_err_is_set(&err)) {
        rv_err_move(&o->failure, &err);
        queue_drop(o);
    }
    item_done(o, it);
    tell_loop(o);
    pthread_mutex_unlock(&o->lock);
}

/* A download: the next hole or chunk of data, or the end. */
static void download_ahead(offload *o)
{
    rv_err err = { 0 };
    long long hole = 0;
    pthread_mutex_lock(&o->lock);
    item *it = item_reuse(o);
    pthread_mutex_unlock(&o->lock);
    if (!it && !(it = item_new()))
        rv_err_set(&err, RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory");
    if (it && o->inner->sparse && o->inner->ops->skip_hole)
        hole = o->inner->ops->skip_hole(o->inner, &err);
    if (it && !rv_err_is_set(&err)) {
        ssize_t n = hole > 0 ? 0 : o->inner->ops->read(o->inner, it->data, ITEM_CAP, &err);
        if (n == RV_STREAM_AGAIN)
            rv_err_set(&err, RV_FROM_STREAMS, RV_ERR_INTERNAL_ERROR,
                       "internal error: a file's read said 'again'");
        it->hole = hole > 0 ? hole : 0;
        it->len = n > 0 ? (size_t)n : 0;
        it->off = 0;
    }
    pthread_mutex_lock(&o->lock);
    if (rv_err_is_set(&err)) {
        rv_err_move(&o->failure, &err);
        if (it)
            item_done(o, it);
    } else if (it->hole == 0 && it->len == 0) {
        o->eof = true;
        item_done(o, it);
    } else {
        queue_push(o, it);
    }
    o->busy = false;
    tell_loop(o);
    pthread_mutex_unlock(&o->lock);
}

static void *serve(void *arg)
{
    offload *o = arg;
    pthread_mutex_lock(&o->lock);
    for (;;) {
        if (o->gone)
            break;
        if (o->uploading && o->head && !rv_err_is_set(&o->failure)) {
            item *it = queue_pop(o);
            o->busy = true;
            pthread_mutex_unlock(&o->lock);
            upload_item(o, it);
            pthread_mutex_lock(&o->lock);
        } else if (!o->uploading && !o->eof && !rv_err_is_set(&o->failure) &&
                   o->queued < QUEUE_BOUND) {
            o->busy = true;
            pthread_mutex_unlock(&o->lock);
            download_ahead(o);
            pthread_mutex_lock(&o->lock);
        } else {
            pthread_cond_wait(&o->cond, &o->lock);
        }
    }
    pthread_mutex_unlock(&o->lock);
    /* The loop is done with it: nothing else refers to o. */
    queue_drop(o);
    for (item *it; (it = o->spare);) {
        o->spare = it->next;
        free(it);
    }
    rv_err_clear(&o->failure);
    o->inner->ops->free(o->inner);
    pthread_cond_destroy(&o->cond);
    pthread_mutex_destroy(&o->lock);
    free(o);
    __atomic_sub_fetch(&offloads, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* ---- the loop's side ---- */

static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop, (void)revents;
    rv_stream_io_wake(w->data);
}

static ssize_t offload_write(rv_stream_io *base, const char *data, size_t len, rv_err *err)
{
    offload *o = (offload *)base;
    if (len > ITEM_CAP)
        len = ITEM_CAP;         /* the stream offers the rest again */
    pthread_mutex_lock(&o->lock);
    bool full = o->queued >= QUEUE_BOUND;
    bool bad = failed(o, err);
    item *it = full || bad ? NULL : item_reuse(o);
    if (full)
        o->loop_waits = true;
    pthread_mutex_unlock(&o->lock);
    if (bad)
        return -1;
    if (full)
        return 0;
    if (rv_upload_bounds_take(&o->bounds, false, len, err) < 0 ||
        (!it && !(it = item_new()) &&
         (rv_err_set(err, RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory"), true))) {
        /* Refused here as the file's endpoint would refuse it. */
        if (it) {
            pthread_mutex_lock(&o->lock);
            item_done(o, it);
            pthread_mutex_unlock(&o->lock);
        }
        return -1;
    }
    /* The copy outside the lock: the thread may be taking the last one. */
    it->hole = 0;
    it->len = len;
    it->off = 0;
    memcpy(it->data, data, len);
    pthread_mutex_lock(&o->lock);
    queue_push(o, it);
    pthread_cond_signal(&o->cond);
    pthread_mutex_unlock(&o->lock);
    return (ssize_t)len;
}

static int offload_hole(rv_stream_io *base, long long len, rv_err *err)
{
    offload *o = (offload *)base;
    item *it = calloc(1, sizeof(*it));
    pthread_mutex_lock(&o->lock);
    int rc = -1;
    if (failed(o, err) || rv_upload_bounds_take(&o->bounds, true, (unsigned long long)len, err) < 0) {
        free(it);
    } else if (!it) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory");
    } else {
        /* Taken, and past the bound the stream holds the client's
         * reading until the thread has made room (a flood of holes). */
        it->hole = len;
        queue_push(o, it);
        pthread_cond_signal(&o->cond);
        rc = o->queued >= QUEUE_BOUND;
        if (rc)
            o->loop_waits = true;
    }
    pthread_mutex_unlock(&o->lock);
    return rc;
}

/* The upload's end: everything queued must be on the file first. */
static int offload_finish(rv_stream_io *base, rv_err *err)
{
    offload *o = (offload *)base;
    pthread_mutex_lock(&o->lock);
    int rc = 0;
    if (failed(o, err)) {
        rc = -1;
    } else if (o->head || o->busy) {
        o->loop_waits = true;
        rc = RV_STREAM_AGAIN;
    }
    pthread_mutex_unlock(&o->lock);
    if (rc == 0 && o->inner->ops->finish)
        rc = o->inner->ops->finish(o->inner, err);  /* the thread is idle */
    return rc;
}

static ssize_t offload_read(rv_stream_io *base, char *buf, size_t len, rv_err *err)
{
    offload *o = (offload *)base;
    pthread_mutex_lock(&o->lock);
    ssize_t n;
    item *it = o->head;
    if (it && it->hole == 0) {
        size_t take = it->len - it->off < len ? it->len - it->off : len;
        memcpy(buf, it->data + it->off, take);
        it->off += take;
        if (it->off == it->len) {
            queue_pop(o);
            o->queued -= it->len;
            item_done(o, it);
            pthread_cond_signal(&o->cond);
        }
        n = (ssize_t)take;
    } else if (it) {
        /* A hole came in since the stream asked: its next round (soon,
         * from the loop) skips it first. */
        ev_async_send(o->loop, &o->wake);
        n = RV_STREAM_AGAIN;
    } else if (failed(o, err)) {
        n = -1;
    } else if (o->eof) {
        n = 0;
    } else {
        o->loop_waits = true;
        n = RV_STREAM_AGAIN;
    }
    pthread_mutex_unlock(&o->lock);
    return n;
}

static long long offload_skip_hole(rv_stream_io *base, rv_err *err)
{
    offload *o = (offload *)base;
    pthread_mutex_lock(&o->lock);
    long long hole = 0;
    item *it = o->head;
    if (it && it->hole > 0) {
        hole = it->hole;
        queue_pop(o);
        o->queued -= HOLE_COST;
        item_done(o, it);
        pthread_cond_signal(&o->cond);
    } else if (!it && failed(o, err)) {
        hole = -1;
    }
    pthread_mutex_unlock(&o->lock);
    return hole;
}

static void offload_free(rv_stream_io *base)
{
    offload *o = (offload *)base;
    ev_async_stop(o->loop, &o->wake);
    pthread_mutex_lock(&o->lock);
    o->gone = true;
    pthread_cond_signal(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

static const rv_stream_io_ops upload_ops = { .write = offload_write, .hole = offload_hole,
                                             .finish = offload_finish, .free = offload_free };
static const rv_stream_io_ops download_ops = { .read = offload_read,
                                               .skip_hole = offload_skip_hole,
                                               .free = offload_free };

rv_stream_io *rv_stream_offload(struct ev_loop *loop, rv_stream_io *inner, rv_err *err)
{
    if (__atomic_load_n(&offloads, __ATOMIC_ACQUIRE) >= RV_STREAM_OFFLOAD_MAX) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_OPERATION_FAILED,
                   "operation failed: too many volume transfers at once (%d); try again when "
                   "one has ended", RV_STREAM_OFFLOAD_MAX);
        inner->ops->free(inner);
        return NULL;
    }
    offload *o = calloc(1, sizeof(*o));
    if (!o) {
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_NO_MEMORY, "out of memory");
        inner->ops->free(inner);
        return NULL;
    }
    o->inner = inner;
    o->loop = loop;
    o->uploading = inner->ops->write != NULL;
    if (o->uploading && rv_stream_fd_upload_bounds(inner, &o->bounds, err) < 0) {
        inner->ops->free(inner);
        free(o);
        return NULL;
    }
    o->base.ops = o->uploading ? &upload_ops : &download_ops;
    o->base.sparse = inner->sparse;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cond, NULL);
    ev_async_init(&o->wake, on_wake);
    o->wake.data = &o->base;
    ev_async_start(loop, &o->wake);

    pthread_attr_t attr;
    pthread_t thread;
    int rc = pthread_attr_init(&attr);
    __atomic_add_fetch(&offloads, 1, __ATOMIC_ACQ_REL);
    if (rc == 0) {
        /* It only copies and calls read/write: a small stack will do. */
        pthread_attr_setstacksize(&attr, 64 << 10);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&thread, &attr, serve, o);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        __atomic_sub_fetch(&offloads, 1, __ATOMIC_RELEASE);
        rv_err_set(err, RV_FROM_STREAMS, RV_ERR_SYSTEM_ERROR,
                   "cannot start a thread for the transfer: %s", strerror(rc));
        ev_async_stop(loop, &o->wake);
        pthread_cond_destroy(&o->cond);
        pthread_mutex_destroy(&o->lock);
        inner->ops->free(inner);
        free(o);
        return NULL;
    }
    return &o->base;
}
