/* The test driver's tables of named objects (networks, storage pools):
 * pointers kept sorted by name, as libvirt's test driver lists them, with
 * a bound on how many a peer can make it hold.  The table owns only its
 * array; the objects are the caller's, reached through two accessors. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_TABLE_H
#define RV_SERVER_DRIVERS_TEST_TEST_TABLE_H

#include <stddef.h>

#include "common/error.h"

typedef struct rv_test_table {
    void **items;                       /* sorted by name */
    size_t n, cap;
    size_t max;                         /* the bound on n */
    const char *kind;                   /* "network": for errors about one */
    const char *kinds;                  /* "networks": for the bound's error */
    const char *(*name_of)(const void *item);
    const unsigned char *(*uuid_of)(const void *item);
} rv_test_table;

static inline void *rv_test_table_at(const rv_test_table *t, size_t i)
{
    return t->items[i];
}

void *rv_test_table_find_name(const rv_test_table *t, const char *name);
void *rv_test_table_find_uuid(const rv_test_table *t, const unsigned char uuid[16]);

/* Whether a new definition (name, uuid) may stand: -1 with libvirt's error
 * when its name or its uuid belongs to another object; 0 when neither is
 * taken or both are that of one object (find it by uuid). */
int rv_test_table_check_clash(const rv_test_table *t, const char *name,
                              const unsigned char uuid[16], rv_err *err);

/* Insert item (its name not in the table) in name order; -1 with err set
 * when the bound is reached or memory is short (item is left to the
 * caller then). */
int rv_test_table_add(rv_test_table *t, void *item, rv_err *err);
void rv_test_table_remove(rv_test_table *t, const void *item);

/* Free every item with free_item and the array; the table is empty and
 * keeps its bound, names and accessors. */
void rv_test_table_clear(rv_test_table *t, void (*free_item)(void *item));

#endif
