/* One list per family of objects known by name and UUID (virtual
 * networks, storage pools, ...), for both drivers: lookups, libvirt's
 * name and UUID conflict checks, the counts and name lists of the old
 * calls, the list-all filters and the answer built from them.  The
 * objects are the driver's own (it keeps its behaviour in them); the list
 * holds pointers kept in name order (as libvirt lists them) and reaches
 * the objects through its kind's accessors. */
#ifndef RV_SERVER_DRIVERS_CONF_OBJLIST_H
#define RV_SERVER_DRIVERS_CONF_OBJLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

/* What an object is, as the list calls see it. */
enum { RV_OBJ_ACTIVE = 1, RV_OBJ_PERSISTENT = 2, RV_OBJ_AUTOSTART = 4 };

/* The RV_OBJ_* bits of an object in these states. */
unsigned int rv_obj_state(bool active, bool persistent, bool autostart);

typedef struct rv_obj_kind {
    const char *what;           /* "network": errors name one */
    const char *whats;          /* "networks": the bound's error */
    const char *not_found;      /* "Network not found" */
    const char *lookup_what;    /* "network": "no network with matching name" */
    int from;                   /* the error domain of the errors */
    int no_object;              /* the code of "not found" (RV_ERR_NO_NETWORK) */
    const char *(*name_of)(const void *obj);
    const unsigned char *(*uuid_of)(const void *obj);
    unsigned int (*state_of)(const void *obj);  /* RV_OBJ_* */
    /* List flags the object answers to beyond the three pairs (a pool's
     * type), and the group they form; NULL: none. */
    unsigned int (*more_flags_of)(const void *obj);
    unsigned int more_flags;
    /* A family whose list filter flags are not these (secrets): its own
     * test of them, in place of the above; NULL: none. */
    bool (*match)(const void *obj, unsigned int flags);
} rv_obj_kind;

typedef struct rv_obj_list {
    void **items;               /* in name order */
    size_t n, cap;
    size_t max;                 /* the bound on n */
    const rv_obj_kind *kind;
    /* Fills the list at its first use (the test driver's default
     * objects), -1 with err; NULL: nothing to do. */
    int (*fill)(rv_err *err);
} rv_obj_list;

static inline int rv_obj_ready(const rv_obj_list *l, rv_err *err)
{
    return l->fill ? l->fill(err) : 0;
}

static inline void *rv_obj_at(const rv_obj_list *l, size_t i)
{
    return l->items[i];
}

void *rv_obj_find_name(const rv_obj_list *l, const char *name);
void *rv_obj_find_uuid(const rv_obj_list *l, const unsigned char uuid[16]);
/* The same, or NULL with libvirt's "not found" error. */
void *rv_obj_get_name(const rv_obj_list *l, const char *name, rv_err *err);
void *rv_obj_get_uuid(const rv_obj_list *l, const unsigned char uuid[16], rv_err *err);

/* Whether a new definition (name, uuid) may stand: -1 with libvirt's
 * error when its UUID is another object's ("... is already defined with
 * uuid") or its name is ("... already exists with uuid"); else 0, and
 * *same (may be NULL) is the object it redefines, or NULL. */
int rv_obj_check_clash(const rv_obj_list *l, const char *name, const unsigned char uuid[16],
                       void **same, rv_err *err);
/* The check alone, for lists of other shapes (domains): by_uuid and
 * by_name are the objects holding def's UUID and name (NULL: none),
 * described by their names and UUIDs. */
int rv_obj_clash_error(const char *what, int from, const char *name, const char *uuid_owner,
                       const unsigned char *name_owner_uuid, const unsigned char uuid[16],
                       rv_err *err);

/* -1 with the bound's error when l is full: checked before what a new
 * object needs is done (its file written), not only at rv_obj_add. */
int rv_obj_check_room(const rv_obj_list *l, rv_err *err);
/* Insert obj (its name not in the list) in name order; -1 with err set
 * when the bound is reached or memory is short (obj stays the caller's). */
int rv_obj_add(rv_obj_list *l, void *obj, rv_err *err);
/* A new object of size bytes, zeroed but for its first member, def (an
 * object begins with its definition), added to l; NULL with err set
 * (def stays the caller's). */
void *rv_obj_new(rv_obj_list *l, size_t size, void *def, rv_err *err);
void rv_obj_remove(rv_obj_list *l, const void *obj);
/* Free every object with free_obj and the array; the list is empty. */
void rv_obj_clear(rv_obj_list *l, void (*free_obj)(void *obj));

/* The objects that are (or are not) active: NUM_OF_* and NUM_OF_DEFINED_*. */
int rv_obj_count(const rv_obj_list *l, bool active);
/* LIST_* and LIST_DEFINED_*: at most maxnames names (maxnames checked
 * against limit, the wire's bound) of the active (inactive) objects, in
 * *names (the dispatcher frees what was filled, on failure too). */
int rv_obj_list_names(const rv_obj_list *l, bool active, int maxnames, int limit, char ***names,
                      u_int *len, rv_err *err);
/* obj passes libvirt's list filter flags: ACTIVE/INACTIVE (2/1),
 * PERSISTENT/TRANSIENT (4/8), AUTOSTART/NO_AUTOSTART (16/32), the
 * kind's more_flags; within a group the bits are ORed, groups ANDed
 * (or the kind's match).  No flags: every object. */
bool rv_obj_match(const rv_obj_list *l, const void *obj, unsigned int flags);
/* LIST_ALL_*: *count the objects matching flags; with need_results
 * their wire forms in *vals (*len of them, each elem_size bytes, filled
 * by put).  On failure what was filled stays for the dispatcher. */
int rv_obj_list_all(const rv_obj_list *l, unsigned int flags, int need_results,
                    size_t elem_size, int (*put)(const void *obj, void *elem, rv_err *err),
                    void **vals, u_int *len, unsigned int *count, rv_err *err);
/* The slots every family answers from its list alone, alike in both
 * drivers, written once: each macro below defines them in the driver's
 * file (which includes driver.h) where it stands.
 *
 * The old calls that count and name a family's active objects
 * (connect_num_of_<whats>, connect_list_<whats>), or its inactive ones
 * (RV_OBJ_DEFINED_SLOTS: connect_num_of_defined_<whats>,
 * connect_list_defined_<whats>), answered from list alike in both
 * drivers: the slots, named with the driver's prefix (rv_qemu_, test_);
 * limit is the wire's bound on names. */
#define RV_OBJ_ACTIVE_SLOTS(prefix, whats, list, limit)                                            \
    RV_OBJ_NAME_SLOTS_(prefix##connect_num_of_##whats, rv_connect_num_of_##whats##_ret,            \
                       prefix##connect_list_##whats, rv_connect_list_##whats, list, true, limit)
#define RV_OBJ_DEFINED_SLOTS(prefix, whats, list, limit)                                           \
    RV_OBJ_NAME_SLOTS_(prefix##connect_num_of_defined_##whats,                                     \
                       rv_connect_num_of_defined_##whats##_ret,                                    \
                       prefix##connect_list_defined_##whats, rv_connect_list_defined_##whats,      \
                       list, false, limit)
#define RV_OBJ_NAME_SLOTS_(num_fn, num_ret, list_fn, list_wire, l, active, limit)                  \
    int num_fn(rv_driver_conn *c, num_ret *ret, rv_err *err)                                       \
    {                                                                                              \
        (void)c;                                                                                   \
        if (rv_obj_ready(l, err) < 0)                                                              \
            return -1;                                                                             \
        ret->num = rv_obj_count(l, active);                                                        \
        return 0;                                                                                  \
    }                                                                                              \
    int list_fn(rv_driver_conn *c, const list_wire##_args *args, list_wire##_ret *ret,             \
                rv_err *err)                                                                       \
    {                                                                                              \
        (void)c;                                                                                   \
        if (rv_obj_ready(l, err) < 0)                                                              \
            return -1;                                                                             \
        return rv_obj_list_names(l, active, args->maxnames, limit, &ret->names.names_val,          \
                                 &ret->names.names_len, err);                                      \
    }

/* connect_list_all_<whats>: the flags checked (known: those served; api:
 * libvirt's function, for the error), then the objects of list that
 * match them, each put by to_wire into the result's array field. */
#define RV_OBJ_LIST_ALL_SLOT(prefix, whats, list, known, api, to_wire, field)                      \
    int prefix##connect_list_all_##whats(rv_driver_conn *c,                                        \
                                         const rv_connect_list_all_##whats##_args *args,           \
                                         rv_connect_list_all_##whats##_ret *ret, rv_err *err)      \
    {                                                                                              \
        (void)c;                                                                                   \
        if (rv_driver_check_flags((list)->kind->from, args->flags, known, api, err) < 0 ||         \
            rv_obj_ready(list, err) < 0)                                                           \
            return -1;                                                                             \
        return rv_obj_list_all(list, args->flags, args->need_results,                              \
                               sizeof(*ret->field.field##_val), to_wire,                           \
                               (void **)&ret->field.field##_val, &ret->field.field##_len,          \
                               &ret->ret, err);                                                    \
    }

/* <what>_lookup_by_name and <what>_lookup_by_uuid: the object of list
 * so named, put by to_wire into the result's field, or libvirt's "not
 * found". */
#define RV_OBJ_LOOKUP_SLOTS(prefix, what, list, to_wire, field)                                    \
    RV_OBJ_LOOKUP_SLOT_(prefix##what##_lookup_by_name, rv_##what##_lookup_by_name, list,           \
                        rv_obj_get_name(list, args->name, err), to_wire, field)                    \
    RV_OBJ_LOOKUP_SLOT_(prefix##what##_lookup_by_uuid, rv_##what##_lookup_by_uuid, list,           \
                        rv_obj_get_uuid(list, (const unsigned char *)args->uuid, err), to_wire,    \
                        field)
#define RV_OBJ_LOOKUP_SLOT_(fn, wire, list, find, to_wire, field)                                  \
    int fn(rv_driver_conn *c, const wire##_args *args, wire##_ret *ret, rv_err *err)               \
    {                                                                                              \
        (void)c;                                                                                   \
        void *obj = rv_obj_ready(list, err) < 0 ? NULL : find;                                     \
        return obj ? to_wire(obj, &ret->field, err) : -1;                                          \
    }

/* <what>_is_active, <what>_is_persistent and <what>_get_autostart: the
 * state (its kind's state_of) of the object of list that the argument
 * handle names. */
#define RV_OBJ_STATE_SLOTS(prefix, what, list, handle)                                             \
    RV_OBJ_STATE_SLOT_(prefix##what##_is_active, rv_##what##_is_active, list, handle, active,      \
                       RV_OBJ_ACTIVE)                                                              \
    RV_OBJ_STATE_SLOT_(prefix##what##_is_persistent, rv_##what##_is_persistent, list, handle,      \
                       persistent, RV_OBJ_PERSISTENT)                                              \
    RV_OBJ_STATE_SLOT_(prefix##what##_get_autostart, rv_##what##_get_autostart, list, handle,      \
                       autostart, RV_OBJ_AUTOSTART)
#define RV_OBJ_STATE_SLOT_(fn, wire, list, handle, field, bit)                                     \
    int fn(rv_driver_conn *c, const wire##_args *args, wire##_ret *ret, rv_err *err)               \
    {                                                                                              \
        (void)c;                                                                                   \
        const void *obj = rv_obj_ready(list, err) < 0                                              \
                          ? NULL : rv_obj_get_name(list, args->handle.name, err);                  \
        if (!obj)                                                                                  \
            return -1;                                                                             \
        ret->field = ((list)->kind->state_of(obj) & (bit)) != 0;                                   \
        return 0;                                                                                  \
    }

/* A name and UUID into a wire handle (network, storage pool, nwfilter). */
int rv_obj_put_handle(const rv_obj_list *l, const void *obj, char **name, char uuid[16],
                      rv_err *err);

#endif
