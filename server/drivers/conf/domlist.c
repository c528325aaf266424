/* The domain list (domlist.h): two hash tables of entries, by UUID and by
 * name, each entry holding its object and a copy of its keys; a lookup
 * shows only the objects whose kind says they are shown.  GetInfo, the
 * hot call, finds its domain without allocating. */
#include "server/drivers/conf/domlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/objlist.h"

struct rv_dom_entry {
    void *obj;
    const rv_dom_kind *kind;        /* for the sort */
    unsigned char uuid[16];
    char *name;
    rv_dom_entry *uuid_next, *name_next;
};

static int oom(const rv_dom_list *l, rv_err *err)
{
    rv_err_set(err, l->kind->from, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

/* FNV-1a: cheap, and good enough for random UUIDs and short names. */
static size_t hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    unsigned long long h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return (size_t)h;
}

static rv_dom_entry **uuid_slot(rv_dom_entry **table, size_t nbuckets, const unsigned char *uuid)
{
    return &table[hash_bytes(uuid, 16) & (nbuckets - 1)];
}

static rv_dom_entry **name_slot(rv_dom_entry **table, size_t nbuckets, const char *name)
{
    return &table[hash_bytes(name, strlen(name)) & (nbuckets - 1)];
}

static void link_entry(rv_dom_entry **by_uuid, rv_dom_entry **by_name, size_t nbuckets,
                       rv_dom_entry *e)
{
    rv_dom_entry **u = uuid_slot(by_uuid, nbuckets, e->uuid);
    rv_dom_entry **n = name_slot(by_name, nbuckets, e->name);
    e->uuid_next = *u;
    *u = e;
    e->name_next = *n;
    *n = e;
}

static int resize(rv_dom_list *l, size_t nbuckets)
{
    rv_dom_entry **by_uuid = calloc(nbuckets, sizeof(*by_uuid));
    rv_dom_entry **by_name = calloc(nbuckets, sizeof(*by_name));
    if (!by_uuid || !by_name) {
        free(by_uuid);
        free(by_name);
        return -1;
    }
    for (size_t i = 0; i < l->nbuckets; i++) {
        rv_dom_entry *next;
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = next) {
            next = e->uuid_next;
            link_entry(by_uuid, by_name, nbuckets, e);
        }
    }
    free(l->by_uuid);
    free(l->by_name);
    l->by_uuid = by_uuid;
    l->by_name = by_name;
    l->nbuckets = nbuckets;
    return 0;
}

int rv_dom_list_add(rv_dom_list *l, void *obj, const char *name, const unsigned char uuid[16],
                    rv_err *err)
{
    if ((l->count >= l->nbuckets || !l->nbuckets) &&
        resize(l, l->nbuckets ? l->nbuckets * 2 : 64) < 0)
        return oom(l, err);
    rv_dom_entry *e = calloc(1, sizeof(*e));
    if (!e || !(e->name = strdup(name))) {
        free(e);
        return oom(l, err);
    }
    e->obj = obj;
    e->kind = l->kind;
    memcpy(e->uuid, uuid, 16);
    link_entry(l->by_uuid, l->by_name, l->nbuckets, e);
    l->count++;
    return 0;
}

/* The entry of obj: in its UUID's chain while it shows its UUID, else
 * anywhere. */
static rv_dom_entry *entry_of(const rv_dom_list *l, const void *obj)
{
    const unsigned char *uuid = l->kind->uuid_of(obj);
    if (uuid && l->nbuckets)
        for (rv_dom_entry *e = *uuid_slot(l->by_uuid, l->nbuckets, uuid); e; e = e->uuid_next)
            if (e->obj == obj)
                return e;
    for (size_t i = 0; i < l->nbuckets; i++)
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = e->uuid_next)
            if (e->obj == obj)
                return e;
    return NULL;
}

static void unlink_from(rv_dom_entry **slot, const rv_dom_entry *e, bool by_uuid)
{
    while (*slot != e)
        slot = by_uuid ? &(*slot)->uuid_next : &(*slot)->name_next;
    *slot = by_uuid ? e->uuid_next : e->name_next;
}

void rv_dom_list_remove(rv_dom_list *l, const void *obj)
{
    rv_dom_entry *e = entry_of(l, obj);
    if (!e)
        return;
    unlink_from(uuid_slot(l->by_uuid, l->nbuckets, e->uuid), e, true);
    unlink_from(name_slot(l->by_name, l->nbuckets, e->name), e, false);
    l->count--;
    free(e->name);
    free(e);
}

int rv_dom_list_rename(rv_dom_list *l, const void *obj, const char *name, rv_err *err)
{
    rv_dom_entry *e = entry_of(l, obj);
    char *copy = strdup(name);
    if (!copy)
        return oom(l, err);
    if (!e) {
        free(copy);
        return 0;
    }
    unlink_from(name_slot(l->by_name, l->nbuckets, e->name), e, false);
    free(e->name);
    e->name = copy;
    rv_dom_entry **n = name_slot(l->by_name, l->nbuckets, e->name);
    e->name_next = *n;
    *n = e;
    return 0;
}

void rv_dom_list_clear(rv_dom_list *l, void (*free_obj)(void *obj))
{
    for (size_t i = 0; i < l->nbuckets; i++) {
        rv_dom_entry *next;
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = next) {
            next = e->uuid_next;
            if (free_obj)
                free_obj(e->obj);
            free(e->name);
            free(e);
        }
    }
    free(l->by_uuid);
    free(l->by_name);
    l->by_uuid = l->by_name = NULL;
    l->nbuckets = l->count = 0;
}

void *rv_dom_list_find(const rv_dom_list *l, bool (*match)(const void *obj, const void *ctx),
                       const void *ctx)
{
    for (size_t i = 0; i < l->nbuckets; i++)
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = e->uuid_next)
            if (match(e->obj, ctx))
                return e->obj;
    return NULL;
}

void rv_dom_list_each(const rv_dom_list *l, void (*fn)(void *obj, void *ctx), void *ctx)
{
    for (size_t i = 0; i < l->nbuckets; i++) {
        rv_dom_entry *next;
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = next) {
            next = e->uuid_next;
            fn(e->obj, ctx);
        }
    }
}

static bool shown(const rv_dom_list *l, const void *obj)
{
    return l->kind->name_of(obj) != NULL;
}

void *rv_dom_list_find_uuid(const rv_dom_list *l, const unsigned char uuid[16])
{
    if (!l->nbuckets)
        return NULL;
    for (rv_dom_entry *e = *uuid_slot(l->by_uuid, l->nbuckets, uuid); e; e = e->uuid_next)
        if (memcmp(e->uuid, uuid, 16) == 0 && shown(l, e->obj))
            return e->obj;
    return NULL;
}

void *rv_dom_list_find_name(const rv_dom_list *l, const char *name)
{
    if (!l->nbuckets)
        return NULL;
    for (rv_dom_entry *e = *name_slot(l->by_name, l->nbuckets, name); e; e = e->name_next)
        if (strcmp(e->name, name) == 0 && shown(l, e->obj))
            return e->obj;
    return NULL;
}

void *rv_dom_list_find_id(const rv_dom_list *l, int id)
{
    for (size_t i = 0; id >= 0 && i < l->nbuckets; i++)
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = e->uuid_next)
            if (shown(l, e->obj) && l->kind->id_of(e->obj) == id)
                return e->obj;
    return NULL;
}

void *rv_dom_list_get(const rv_dom_list *l, const unsigned char uuid[16], const char *name,
                      rv_err *err)
{
    void *obj = rv_dom_list_find_uuid(l, uuid);
    if (!obj) {
        char text[RV_UUID_STRING_LEN];
        rv_uuid_format(uuid, text);
        rv_err_set(err, l->kind->from, RV_ERR_NO_DOMAIN,
                   "Domain not found: no domain with matching uuid '%s' (%s)", text,
                   name ? name : "");
    }
    return obj;
}

static bool defined(const rv_dom_list *l, const void *obj)
{
    return l->kind->defined ? l->kind->defined(obj) : shown(l, obj);
}

/* The keys are the names and UUIDs the definitions have and will have. */
int rv_dom_list_check_clash(const rv_dom_list *l, const char *name, const unsigned char uuid[16],
                            void **same, rv_err *err)
{
    const rv_dom_entry *by_uuid = NULL, *by_name = NULL;
    for (const rv_dom_entry *e = l->nbuckets ? *uuid_slot(l->by_uuid, l->nbuckets, uuid) : NULL;
         e && !by_uuid; e = e->uuid_next)
        if (memcmp(e->uuid, uuid, 16) == 0 && defined(l, e->obj))
            by_uuid = e;
    for (const rv_dom_entry *e = l->nbuckets ? *name_slot(l->by_name, l->nbuckets, name) : NULL;
         e && !by_name; e = e->name_next)
        if (strcmp(e->name, name) == 0 && defined(l, e->obj))
            by_name = e;
    *same = by_uuid ? by_uuid->obj : NULL;
    return rv_obj_clash_error("domain", RV_FROM_DOMAIN, name, by_uuid ? by_uuid->name : NULL,
                              by_name ? by_name->uuid : NULL, uuid, err);
}

int rv_dom_list_ref(const rv_dom_list *l, const void *obj, rv_dom_ref *ref, rv_err *err)
{
    if (!(ref->name = strdup(l->kind->name_of(obj))))
        return oom(l, err);
    memcpy(ref->uuid, l->kind->uuid_of(obj), 16);
    ref->id = l->kind->id_of(obj);
    return 0;
}

/* ---------------------------------------------------------------- lists */

/* A pair of opposite filter flags: with either set, value must match one. */
static bool pair_ok(unsigned int flags, unsigned int yes, unsigned int no, bool value)
{
    return !(flags & (yes | no)) || (flags & (value ? yes : no));
}

static bool status_matches(const rv_dom_status *st, unsigned int flags)
{
    const unsigned int states = RV_LIST_DOMAINS_RUNNING | RV_LIST_DOMAINS_PAUSED |
                                RV_LIST_DOMAINS_SHUTOFF | RV_LIST_DOMAINS_OTHER;
    unsigned int want = st->state == RV_DOMAIN_RUNNING ? RV_LIST_DOMAINS_RUNNING
                      : st->state == RV_DOMAIN_PAUSED ? RV_LIST_DOMAINS_PAUSED
                      : st->state == RV_DOMAIN_SHUTOFF ? RV_LIST_DOMAINS_SHUTOFF
                      : RV_LIST_DOMAINS_OTHER;
    return pair_ok(flags, RV_LIST_DOMAINS_ACTIVE, RV_LIST_DOMAINS_INACTIVE, st->active) &&
           pair_ok(flags, RV_LIST_DOMAINS_PERSISTENT, RV_LIST_DOMAINS_TRANSIENT,
                   st->persistent) &&
           (!(flags & states) || (flags & want)) &&
           pair_ok(flags, RV_LIST_DOMAINS_MANAGEDSAVE, RV_LIST_DOMAINS_NO_MANAGEDSAVE,
                   st->managed_save) &&
           pair_ok(flags, RV_LIST_DOMAINS_AUTOSTART, RV_LIST_DOMAINS_NO_AUTOSTART,
                   st->autostart) &&
           pair_ok(flags, RV_LIST_DOMAINS_HAS_SNAPSHOT, RV_LIST_DOMAINS_NO_SNAPSHOT,
                   st->has_snapshot) &&
           pair_ok(flags, RV_LIST_DOMAINS_HAS_CHECKPOINT, RV_LIST_DOMAINS_NO_CHECKPOINT,
                   st->has_checkpoint);
}

bool rv_dom_list_match(const rv_dom_list *l, const void *obj, unsigned int flags)
{
    rv_dom_status st = { 0 };
    if (!shown(l, obj))
        return false;
    l->kind->status_of(obj, &st);
    return status_matches(&st, flags);
}

/* Running domains by ID, then the others by name. */
static int compare(const void *a, const void *b)
{
    const rv_dom_entry *x = *(rv_dom_entry *const *)a, *y = *(rv_dom_entry *const *)b;
    const rv_dom_kind *k = x->kind;
    int xid = k->id_of(x->obj), yid = k->id_of(y->obj);
    if ((xid >= 0) != (yid >= 0))
        return xid >= 0 ? -1 : 1;
    if (xid >= 0)
        return (xid > yid) - (xid < yid);
    return strcmp(x->name, y->name);
}

int rv_dom_list_collect(const rv_dom_list *l, unsigned int flags, void ***objs, size_t *n,
                        rv_err *err)
{
    rv_dom_entry **v = malloc((l->count ? l->count : 1) * sizeof(*v));
    *objs = NULL;
    *n = 0;
    if (!v)
        return oom(l, err);
    for (size_t i = 0; i < l->nbuckets; i++)
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = e->uuid_next)
            if (rv_dom_list_match(l, e->obj, flags))
                v[(*n)++] = e;
    qsort(v, *n, sizeof(*v), compare);
    /* The entries' places now hold their objects, in the same order. */
    void **out = (void **)v;
    for (size_t i = 0; i < *n; i++)
        out[i] = v[i]->obj;
    *objs = out;
    return 0;
}

int rv_dom_list_num_active(const rv_dom_list *l)
{
    int n = 0;
    for (size_t i = 0; i < l->nbuckets; i++)
        for (rv_dom_entry *e = l->by_uuid[i]; e; e = e->uuid_next)
            n += shown(l, e->obj) && l->kind->id_of(e->obj) >= 0;
    return n;
}

int rv_dom_list_ids(const rv_dom_list *l, int *ids, int max, rv_err *err)
{
    void **v;
    size_t n;
    if (max < 0) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "maxids in virConnectListDomains must be zero or greater");
        return -1;
    }
    if (rv_dom_list_collect(l, RV_LIST_DOMAINS_ACTIVE, &v, &n, err) < 0)
        return -1;
    if (n > (size_t)max)
        n = (size_t)max;
    for (size_t i = 0; i < n; i++)
        ids[i] = l->kind->id_of(v[i]);
    free(v);
    return (int)n;
}

int rv_dom_list_all(const rv_dom_list *l, unsigned int flags, rv_dom_ref **refs, rv_err *err)
{
    void **v;
    size_t n;
    *refs = NULL;
    if (rv_dom_list_collect(l, flags, &v, &n, err) < 0)
        return -1;
    rv_dom_ref *r = calloc(n ? n : 1, sizeof(*r));
    int ret = r ? (int)n : oom(l, err);
    for (size_t i = 0; r && i < n && ret >= 0; i++)
        if (rv_dom_list_ref(l, v[i], &r[i], err) < 0)
            ret = -1;
    free(v);
    if (ret < 0)
        rv_dom_refs_free(r, n);
    else
        *refs = r;
    return ret;
}

/* what is quoted with q ("'" for names and UUIDs). */
static int not_found(const rv_dom_list *l, const char *how, const char *what, const char *q,
                     rv_err *err)
{
    if (l->kind->terse_not_found)
        rv_err_set(err, l->kind->from, RV_ERR_NO_DOMAIN, "Domain not found");
    else
        rv_err_set(err, l->kind->from, RV_ERR_NO_DOMAIN,
                   "Domain not found: no domain with matching %s %s%s%s", how, q, what, q);
    return -1;
}

int rv_dom_list_lookup_id(const rv_dom_list *l, int id, rv_dom_ref *out, rv_err *err)
{
    if (id < 0) {   /* libvirt's API checks this before any driver */
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "id in virDomainLookupByID must be zero or greater");
        return -1;
    }
    void *obj = rv_dom_list_find_id(l, id);
    char text[16];
    snprintf(text, sizeof(text), "%d", id);
    return obj ? rv_dom_list_ref(l, obj, out, err) : not_found(l, "id", text, "", err);
}

int rv_dom_list_lookup_name(const rv_dom_list *l, const char *name, rv_dom_ref *out, rv_err *err)
{
    void *obj = rv_dom_list_find_name(l, name);
    return obj ? rv_dom_list_ref(l, obj, out, err) : not_found(l, "name", name, "'", err);
}

int rv_dom_list_lookup_uuid(const rv_dom_list *l, const unsigned char uuid[16], rv_dom_ref *out,
                            rv_err *err)
{
    void *obj = rv_dom_list_find_uuid(l, uuid);
    if (obj)
        return rv_dom_list_ref(l, obj, out, err);
    char text[RV_UUID_STRING_LEN];
    rv_uuid_format(uuid, text);
    return not_found(l, "uuid", text, "'", err);
}

/* ---------------------------------------------------------------- on the wire */

int rv_dom_list_ids_wire(const rv_dom_list *l, const rv_connect_list_domains_args *args,
                         rv_connect_list_domains_ret *ret, rv_err *err)
{
    if (args->maxids < 0 || args->maxids > RV_DOMAIN_LIST_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "maxids %d is outside 0..%d", args->maxids,
                   RV_DOMAIN_LIST_MAX);
        return -1;
    }
    int *ids = calloc((size_t)args->maxids + 1, sizeof(int));
    if (!ids)
        return oom(l, err);
    int n = rv_dom_list_ids(l, ids, args->maxids, err);
    if (n < 0) {
        free(ids);
        return -1;
    }
    ret->ids.ids_val = ids;
    ret->ids.ids_len = (u_int)n;
    return 0;
}

int rv_dom_refs_put_all(int n, rv_dom_ref *doms, int need_results,
                        rv_connect_list_all_domains_ret *ret, rv_err *err)
{
    if (n < 0)
        return -1;
    if (n > RV_DOMAIN_LIST_MAX) {
        rv_dom_refs_free(doms, (size_t)n);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC,
                   "too many domains (%d) for one reply: the limit is %d", n, RV_DOMAIN_LIST_MAX);
        return -1;
    }
    ret->ret = (u_int)n;
    if (need_results && n > 0) {
        ret->domains.domains_val = calloc((size_t)n, sizeof(rv_nonnull_domain));
        if (!ret->domains.domains_val) {
            rv_dom_refs_free(doms, (size_t)n);
            rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        for (int i = 0; i < n; i++)
            rv_dom_ref_to_wire(&ret->domains.domains_val[i], &doms[i]);
        ret->domains.domains_len = (u_int)n;
    }
    rv_dom_refs_free(doms, (size_t)n);
    return 0;
}

int rv_dom_list_all_wire(const rv_dom_list *l, const rv_connect_list_all_domains_args *args,
                         rv_connect_list_all_domains_ret *ret, rv_err *err)
{
    rv_dom_ref *doms = NULL;
    int n = rv_dom_list_all(l, args->flags, &doms, err);
    return rv_dom_refs_put_all(n, doms, args->need_results, ret, err);
}

int rv_dom_list_num_defined_wire(const rv_dom_list *l, rv_connect_num_of_defined_domains_ret *ret,
                                 rv_err *err)
{
    rv_dom_ref *refs = NULL;
    int n = rv_dom_list_all(l, RV_LIST_DOMAINS_INACTIVE, &refs, err);
    if (n < 0)
        return -1;
    rv_dom_refs_free(refs, (size_t)n);
    ret->num = n;
    return 0;
}

int rv_dom_list_defined_wire(const rv_dom_list *l, const rv_connect_list_defined_domains_args *args,
                             rv_connect_list_defined_domains_ret *ret, rv_err *err)
{
    if (args->maxnames < 0 || args->maxnames > RV_DOMAIN_LIST_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "maxnames %d is outside 0..%d", args->maxnames,
                   RV_DOMAIN_LIST_MAX);
        return -1;
    }
    rv_dom_ref *refs = NULL;
    int n = rv_dom_list_all(l, RV_LIST_DOMAINS_INACTIVE, &refs, err);
    if (n < 0)
        return -1;
    int keep = n < args->maxnames ? n : args->maxnames;
    char **names = calloc((size_t)keep + 1, sizeof(char *));
    if (!names) {
        rv_dom_refs_free(refs, (size_t)n);
        return oom(l, err);
    }
    for (int i = 0; i < keep; i++) {
        names[i] = refs[i].name;        /* moved */
        refs[i].name = NULL;
    }
    rv_dom_refs_free(refs, (size_t)n);
    ret->names.names_val = names;
    ret->names.names_len = (u_int)keep;
    return 0;
}
