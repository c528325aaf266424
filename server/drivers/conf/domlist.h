/* The domain list both drivers keep their domains in: lookups by UUID
 * (every domain call: hashed), name (hashed) and ID, libvirt's name and
 * UUID conflict check for a new definition, the counts, ID lists and
 * list-all filters, and the wire forms of the answers.  The domains are
 * the driver's own objects (its behaviour lives in them); the list reaches
 * them through its kind's accessors.  An object's name and UUID must not
 * change while it is in the list (libvirt's conflict rules keep them),
 * but through rv_dom_list_rename. */
#ifndef RV_SERVER_DRIVERS_CONF_DOMLIST_H
#define RV_SERVER_DRIVERS_CONF_DOMLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "server/drivers/driver.h"

/* What a domain is, as the list filters see it. */
typedef struct rv_dom_status {
    int state;                  /* RV_DOMAIN_*: SHUTOFF when not active */
    bool active, persistent, autostart, managed_save, has_snapshot, has_checkpoint;
} rv_dom_status;

typedef struct rv_dom_kind {
    int from;                   /* the error domain of "not found" */
    /* libvirt's test driver says "Domain not found" and no more when a
     * lookup by name, UUID or ID fails; its QEMU driver names what it
     * looked for. */
    bool terse_not_found;
    /* The object's name and UUID; NULL: the object is on its way out and
     * no lookup or list shows it. */
    const char *(*name_of)(const void *obj);
    const unsigned char *(*uuid_of)(const void *obj);
    void (*status_of)(const void *obj, rv_dom_status *st);
    int (*id_of)(const void *obj);      /* -1 when not active */
    /* Whether a new definition must agree with obj's name and UUID (the
     * conflict check), though it may not be shown yet (a define not yet
     * durable); NULL: when it is shown. */
    bool (*defined)(const void *obj);
} rv_dom_kind;

typedef struct rv_dom_entry rv_dom_entry;

typedef struct rv_dom_list {
    const rv_dom_kind *kind;
    rv_dom_entry **by_uuid, **by_name;
    size_t nbuckets;            /* a power of two; 0 until the first add */
    size_t count;
} rv_dom_list;

/* Add obj, whose name and UUID are (or will be, once it is shown) name
 * and uuid; -1 with err set (from) when memory is short (obj stays the
 * caller's). */
int rv_dom_list_add(rv_dom_list *l, void *obj, const char *name, const unsigned char uuid[16],
                    rv_err *err);
void rv_dom_list_remove(rv_dom_list *l, const void *obj);
/* obj is known by name from now on (a rename: its kind shows the new
 * name once this returns); -1 with err when memory is short (unchanged). */
int rv_dom_list_rename(rv_dom_list *l, const void *obj, const char *name, rv_err *err);
/* Free every object with free_obj and the list's own memory. */
void rv_dom_list_clear(rv_dom_list *l, void (*free_obj)(void *obj));
/* How many objects the list holds, shown or not. */
static inline size_t rv_dom_list_size(const rv_dom_list *l)
{
    return l->count;
}
/* The first object match() accepts (shown or not), or NULL. */
void *rv_dom_list_find(const rv_dom_list *l, bool (*match)(const void *obj, const void *ctx),
                       const void *ctx);

/* fn on every object, shown or not; fn may remove the object it is given
 * and no other. */
void rv_dom_list_each(const rv_dom_list *l, void (*fn)(void *obj, void *ctx), void *ctx);

void *rv_dom_list_find_uuid(const rv_dom_list *l, const unsigned char uuid[16]);
void *rv_dom_list_find_name(const rv_dom_list *l, const char *name);
void *rv_dom_list_find_id(const rv_dom_list *l, int id);
/* The domain a call names (by UUID, as libvirt), or NULL with libvirt's
 * "no domain with matching uuid" error. */
void *rv_dom_list_get(const rv_dom_list *l, const unsigned char uuid[16], const char *name,
                      rv_err *err);

/* libvirt's rule for a new definition: a known UUID keeps its name and a
 * known name comes with its UUID (known: kind->defined); *same is the
 * domain it redefines, or NULL for a new one. */
int rv_dom_list_check_clash(const rv_dom_list *l, const char *name, const unsigned char uuid[16],
                            void **same, rv_err *err);

/* ref (name malloc'd) of obj; -1 when memory is short, with err (from). */
int rv_dom_list_ref(const rv_dom_list *l, const void *obj, rv_dom_ref *ref, rv_err *err);

/* obj is shown and passes libvirt's list-all flags: within a pair of
 * opposites (ACTIVE/INACTIVE, ...) and among the states the bits are
 * ORed, the groups ANDed. */
bool rv_dom_list_match(const rv_dom_list *l, const void *obj, unsigned int flags);
/* The shown objects matching flags, running ones by ID, then the others
 * by name: *objs malloc'd (the objects stay the list's), *n of them. */
int rv_dom_list_collect(const rv_dom_list *l, unsigned int flags, void ***objs, size_t *n,
                        rv_err *err);

/* ---- the list calls, in the drivers' own terms ---- */
int rv_dom_list_num_active(const rv_dom_list *l);
/* The IDs of at most max active domains, in ID order (max >= 0). */
int rv_dom_list_ids(const rv_dom_list *l, int *ids, int max, rv_err *err);
/* The domains matching libvirt's list-all flags (the driver checks which
 * it knows), in rv_dom_list_collect's order.  Returns the count, *refs
 * malloc'd. */
int rv_dom_list_all(const rv_dom_list *l, unsigned int flags, rv_dom_ref **refs, rv_err *err);
/* Lookups with libvirt's errors; an ID below 0 is libvirt's API error. */
int rv_dom_list_lookup_id(const rv_dom_list *l, int id, rv_dom_ref *out, rv_err *err);
int rv_dom_list_lookup_name(const rv_dom_list *l, const char *name, rv_dom_ref *out, rv_err *err);
int rv_dom_list_lookup_uuid(const rv_dom_list *l, const unsigned char uuid[16], rv_dom_ref *out,
                            rv_err *err);

/* ---- and on the wire ---- */
int rv_dom_list_ids_wire(const rv_dom_list *l, const rv_connect_list_domains_args *args,
                         rv_connect_list_domains_ret *ret, rv_err *err);
/* n refs (a list-all's answer, -1: it failed) moved into ret; what
 * need_results does not want is freed. */
int rv_dom_refs_put_all(int n, rv_dom_ref *doms, int need_results,
                        rv_connect_list_all_domains_ret *ret, rv_err *err);
int rv_dom_list_all_wire(const rv_dom_list *l, const rv_connect_list_all_domains_args *args,
                         rv_connect_list_all_domains_ret *ret, rv_err *err);
/* CONNECT_NUM_OF_DEFINED_DOMAINS and CONNECT_LIST_DEFINED_DOMAINS: the
 * domains that are defined and do not run (names in name order). */
int rv_dom_list_num_defined_wire(const rv_dom_list *l, rv_connect_num_of_defined_domains_ret *ret,
                                 rv_err *err);
int rv_dom_list_defined_wire(const rv_dom_list *l, const rv_connect_list_defined_domains_args *args,
                             rv_connect_list_defined_domains_ret *ret, rv_err *err);

#endif
