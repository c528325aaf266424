/* A small store of large freed buffers for one thread (buf_store.h). */
#include "common/buf_store.h"

#include <malloc.h>
#include <stdlib.h>

typedef struct buf_store {
    size_t min, each, total, held;
    unsigned slots, n;
    struct {
        char *data;
        size_t cap;
    } kept[];
} buf_store;

static __thread buf_store *store;

int rv_buf_store_start(size_t min, size_t each, size_t total, unsigned slots)
{
    rv_buf_store_stop();
    buf_store *s = calloc(1, sizeof(*s) + slots * sizeof(s->kept[0]));
    if (!s)
        return -1;
    s->min = min;
    s->each = each;
    s->total = total;
    s->slots = slots;
    store = s;
    return 0;
}

size_t rv_buf_store_held(void)
{
    return store ? store->held : 0;
}

void rv_buf_store_drop(void)
{
    buf_store *s = store;
    if (!s)
        return;
    for (unsigned i = 0; i < s->n; i++)
        free(s->kept[i].data);
    s->n = 0;
    s->held = 0;
}

void rv_buf_store_stop(void)
{
    rv_buf_store_drop();
    free(store);
    store = NULL;
}

char *rv_buf_store_take(size_t cap, size_t *got)
{
    buf_store *s = store;
    if (!s || cap < s->min || s->n == 0)
        return NULL;
    unsigned best = s->n;
    for (unsigned i = 0; i < s->n; i++)
        if (s->kept[i].cap >= cap && s->kept[i].cap / 2 < cap &&
            (best == s->n || s->kept[i].cap < s->kept[best].cap))
            best = i;
    if (best == s->n)
        return NULL;
    char *p = s->kept[best].data;
    *got = s->kept[best].cap;
    s->held -= *got;
    s->kept[best] = s->kept[--s->n];
    return p;
}

void rv_buf_store_give(char *p, size_t cap)
{
    buf_store *s = store;
    if (s && p && cap >= s->min && cap <= s->each && s->n < s->slots &&
        s->held + cap <= s->total) {
        s->kept[s->n].data = p;
        s->kept[s->n++].cap = cap;
        s->held += cap;
        return;
    }
    free(p);
}

void *rv_buf_store_alloc(size_t size)
{
    size_t got;
    char *p = store ? rv_buf_store_take(size, &got) : NULL;
    return p ? p : malloc(size);
}

void rv_buf_store_free(void *p)
{
    if (store && p)
        rv_buf_store_give(p, malloc_usable_size(p));
    else
        free(p);
}
