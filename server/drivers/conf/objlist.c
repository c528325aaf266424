/* The object lists (objlist.h): a sorted array of pointers, searched by
 * name in halves and by UUID in order (a few hundred objects at most). */
#include "server/drivers/conf/objlist.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

unsigned int rv_obj_state(bool active, bool persistent, bool autostart)
{
    return (active ? RV_OBJ_ACTIVE : 0) | (persistent ? RV_OBJ_PERSISTENT : 0) |
           (autostart ? RV_OBJ_AUTOSTART : 0);
}

static const char *name_at(const rv_obj_list *l, size_t i)
{
    return l->kind->name_of(l->items[i]);
}

static size_t pos_of_name(const rv_obj_list *l, const char *name, bool *found)
{
    size_t lo = 0, hi = l->n;
    *found = false;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(name_at(l, mid), name);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void *rv_obj_find_name(const rv_obj_list *l, const char *name)
{
    bool found;
    size_t i = pos_of_name(l, name, &found);
    return found ? l->items[i] : NULL;
}

void *rv_obj_find_uuid(const rv_obj_list *l, const unsigned char uuid[16])
{
    for (size_t i = 0; i < l->n; i++)
        if (memcmp(l->kind->uuid_of(l->items[i]), uuid, 16) == 0)
            return l->items[i];
    return NULL;
}

void *rv_obj_get_name(const rv_obj_list *l, const char *name, rv_err *err)
{
    void *obj = rv_obj_find_name(l, name);
    if (!obj)
        rv_err_set(err, l->kind->from, l->kind->no_object, "%s: no %s with matching name '%s'",
                   l->kind->not_found, l->kind->lookup_what, name);
    return obj;
}

void *rv_obj_get_uuid(const rv_obj_list *l, const unsigned char uuid[16], rv_err *err)
{
    void *obj = rv_obj_find_uuid(l, uuid);
    if (!obj) {
        char text[RV_UUID_STRING_LEN];
        rv_uuid_format(uuid, text);
        rv_err_set(err, l->kind->from, l->kind->no_object, "%s: no %s with matching uuid '%s'",
                   l->kind->not_found, l->kind->lookup_what, text);
    }
    return obj;
}

int rv_obj_clash_error(const char *what, int from, const char *name, const char *uuid_owner,
                       const unsigned char *name_owner_uuid, const unsigned char uuid[16],
                       rv_err *err)
{
    char text[RV_UUID_STRING_LEN];
    if (uuid_owner && strcmp(uuid_owner, name) != 0) {
        rv_uuid_format(uuid, text);
        rv_err_set(err, from, RV_ERR_OPERATION_FAILED,
                   "operation failed: %s '%s' is already defined with uuid %s", what, uuid_owner,
                   text);
        return -1;
    }
    if (!uuid_owner && name_owner_uuid) {
        rv_uuid_format(name_owner_uuid, text);
        rv_err_set(err, from, RV_ERR_OPERATION_FAILED,
                   "operation failed: %s '%s' already exists with uuid %s", what, name, text);
        return -1;
    }
    return 0;
}

int rv_obj_check_clash(const rv_obj_list *l, const char *name, const unsigned char uuid[16],
                       void **same, rv_err *err)
{
    void *by_uuid = rv_obj_find_uuid(l, uuid), *by_name = rv_obj_find_name(l, name);
    if (same)
        *same = by_uuid;
    return rv_obj_clash_error(l->kind->what, l->kind->from, name,
                              by_uuid ? l->kind->name_of(by_uuid) : NULL,
                              by_name ? l->kind->uuid_of(by_name) : NULL, uuid, err);
}

int rv_obj_check_room(const rv_obj_list *l, rv_err *err)
{
    if (l->n < l->max)
        return 0;
    rv_err_set(err, l->kind->from, RV_ERR_OPERATION_FAILED, "operation failed: at most %zu %s",
               l->max, l->kind->whats);
    return -1;
}

int rv_obj_add(rv_obj_list *l, void *obj, rv_err *err)
{
    if (rv_obj_check_room(l, err) < 0)
        return -1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        void **grown = realloc(l->items, cap * sizeof(*grown));
        if (!grown) {
            rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        l->items = grown;
        l->cap = cap;
    }
    bool found;
    size_t at = pos_of_name(l, l->kind->name_of(obj), &found);
    memmove(&l->items[at + 1], &l->items[at], (l->n - at) * sizeof(l->items[0]));
    l->items[at] = obj;
    l->n++;
    return 0;
}

void *rv_obj_new(rv_obj_list *l, size_t size, void *def, rv_err *err)
{
    void **obj = calloc(1, size);
    if (!obj) {
        rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    *obj = def;
    if (rv_obj_add(l, obj, err) < 0) {
        free(obj);
        return NULL;
    }
    return obj;
}

void rv_obj_remove(rv_obj_list *l, const void *obj)
{
    for (size_t at = 0; at < l->n; at++)
        if (l->items[at] == obj) {
            memmove(&l->items[at], &l->items[at + 1], (l->n - at - 1) * sizeof(l->items[0]));
            l->n--;
            return;
        }
}

void rv_obj_clear(rv_obj_list *l, void (*free_obj)(void *obj))
{
    for (size_t i = 0; i < l->n; i++)
        free_obj(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

static bool is_active(const rv_obj_list *l, const void *obj)
{
    return (l->kind->state_of(obj) & RV_OBJ_ACTIVE) != 0;
}

int rv_obj_count(const rv_obj_list *l, bool active)
{
    int k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += is_active(l, l->items[i]) == active;
    return k;
}

int rv_obj_list_names(const rv_obj_list *l, bool active, int maxnames, int limit, char ***names,
                      u_int *len, rv_err *err)
{
    if (maxnames < 0 || maxnames > limit) {
        rv_err_set(err, l->kind->from, RV_ERR_RPC, "maxnames %d is outside 0..%d", maxnames,
                   limit);
        return -1;
    }
    char **out = calloc((size_t)maxnames + 1, sizeof(*out));
    if (!out) {
        rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    *names = out;
    *len = 0;
    for (size_t i = 0; i < l->n && *len < (u_int)maxnames; i++) {
        if (is_active(l, l->items[i]) != active)
            continue;
        if (!(out[*len] = strdup(name_at(l, i)))) {
            rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        (*len)++;
    }
    return 0;
}

/* Within a group of filter bits one must match; a group without a bit
 * set lets everything through. */
static bool group_ok(unsigned int flags, unsigned int group, unsigned int has)
{
    return !(flags & group) || (flags & group & has);
}

bool rv_obj_match(const rv_obj_list *l, const void *obj, unsigned int flags)
{
    enum { INACTIVE = 1, ACTIVE = 2, PERSISTENT = 4, TRANSIENT = 8, AUTOSTART = 16,
           NO_AUTOSTART = 32 };
    if (!flags || l->kind->match)
        return !flags || l->kind->match(obj, flags);
    unsigned int st = l->kind->state_of(obj);
    unsigned int has = (st & RV_OBJ_ACTIVE ? ACTIVE : INACTIVE) |
                       (st & RV_OBJ_PERSISTENT ? PERSISTENT : TRANSIENT) |
                       (st & RV_OBJ_AUTOSTART ? AUTOSTART : NO_AUTOSTART);
    if (l->kind->more_flags_of)
        has |= l->kind->more_flags_of(obj);
    return group_ok(flags, ACTIVE | INACTIVE, has) &&
           group_ok(flags, PERSISTENT | TRANSIENT, has) &&
           group_ok(flags, AUTOSTART | NO_AUTOSTART, has) &&
           group_ok(flags, l->kind->more_flags, has);
}

int rv_obj_list_all(const rv_obj_list *l, unsigned int flags, int need_results,
                    size_t elem_size, int (*put)(const void *obj, void *elem, rv_err *err),
                    void **vals, u_int *len, unsigned int *count, rv_err *err)
{
    u_int k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += rv_obj_match(l, l->items[i], flags);
    *count = k;
    if (!need_results || k == 0)
        return 0;
    char *out = calloc(k, elem_size);
    if (!out) {
        rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    *vals = out;
    for (size_t i = 0; i < l->n; i++) {
        if (!rv_obj_match(l, l->items[i], flags))
            continue;
        if (put(l->items[i], out + (size_t)*len * elem_size, err) < 0)
            return -1;
        (*len)++;
    }
    return 0;
}

int rv_obj_put_handle(const rv_obj_list *l, const void *obj, char **name, char uuid[16],
                      rv_err *err)
{
    if (!(*name = strdup(l->kind->name_of(obj)))) {
        rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    memcpy(uuid, l->kind->uuid_of(obj), 16);
    return 0;
}
