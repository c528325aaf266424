/* A sorted array of pointers: the test driver holds a handful of networks
 * or pools, so a binary search by name and a linear one by uuid are all
 * it needs. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/test/test_table.h"

static size_t pos_of_name(const rv_test_table *t, const char *name, int *found)
{
    size_t lo = 0, hi = t->n;
    *found = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(t->name_of(t->items[mid]), name);
        if (cmp == 0) {
            *found = 1;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void *rv_test_table_find_name(const rv_test_table *t, const char *name)
{
    int found;
    size_t i = pos_of_name(t, name, &found);
    return found ? t->items[i] : NULL;
}

void *rv_test_table_find_uuid(const rv_test_table *t, const unsigned char uuid[16])
{
    for (size_t i = 0; i < t->n; i++)
        if (memcmp(t->uuid_of(t->items[i]), uuid, 16) == 0)
            return t->items[i];
    return NULL;
}

int rv_test_table_check_clash(const rv_test_table *t, const char *name,
                              const unsigned char uuid[16], rv_err *err)
{
    char text[RV_UUID_STRING_LEN];
    void *item = rv_test_table_find_uuid(t, uuid);
    const char *how = "is already defined";
    if (item && strcmp(t->name_of(item), name) == 0)
        return 0;
    if (!item) {
        how = "already exists";
        if (!(item = rv_test_table_find_name(t, name)))
            return 0;
    }
    rv_uuid_format(t->uuid_of(item), text);
    rv_err_set(err, RV_FROM_TEST, RV_ERR_OPERATION_FAILED,   /* libvirt's test driver says TEST */
               "operation failed: %s '%s' %s with uuid %s", t->kind, t->name_of(item), how, text);
    return -1;
}

int rv_test_table_add(rv_test_table *t, void *item, rv_err *err)
{
    if (t->n >= t->max) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_OPERATION_FAILED,
                   "operation failed: the test driver holds at most %zu %s", t->max, t->kinds);
        return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        void **grown = realloc(t->items, cap * sizeof(*grown));
        if (!grown) {
            rv_err_set(err, RV_FROM_TEST, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        t->items = grown;
        t->cap = cap;
    }
    int found;
    size_t at = pos_of_name(t, t->name_of(item), &found);
    memmove(&t->items[at + 1], &t->items[at], (t->n - at) * sizeof(t->items[0]));
    t->items[at] = item;
    t->n++;
    return 0;
}

void rv_test_table_remove(rv_test_table *t, const void *item)
{
    int found;
    size_t at = pos_of_name(t, t->name_of(item), &found);
    if (!found)
        return;
    memmove(&t->items[at], &t->items[at + 1], (t->n - at - 1) * sizeof(t->items[0]));
    t->n--;
}

void rv_test_table_clear(rv_test_table *t, void (*free_item)(void *item))
{
    for (size_t i = 0; i < t->n; i++)
        free_item(t->items[i]);
    free(t->items);
    t->items = NULL;
    t->n = t->cap = 0;
}
