/* The test driver's storage pools and volumes, answering as libvirt 9.0's
 * test driver does: its error codes and texts (error domain TEST, XML
 * errors STORAGE), every pool gets 100 GiB when defined, a volume's path
 * and key are the pool's target path and its name, volumes stay with a
 * pool that is stopped and started again, and the pool events it sends
 * (build: CREATED, delete: DELETED, refresh: the refresh event).  Like the
 * domains they last for the daemon's life.  Pools are few: a flat array
 * in name order; each pool's volumes in creation order. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/conf/objlist.h"
#include "server/drivers/conf/storage_vols.h"
#include "server/drivers/conf/storage_xml.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_storage.h"

RV_LOG_CATEGORY("drivers.test.storage");

/* What a peer can make the driver hold: this many pools and volumes, each
 * from at most RV_STORAGE_XML_MAX bytes of XML. */
enum { TEST_MAX_POOLS = 1024, TEST_MAX_VOLUMES = 4096 };

/* libvirt's test driver: each pool holds 100 GiB, none of it used. */
static const unsigned long long pool_capacity = 100ULL << 30;

static const char default_pool_xml[] =
    "<pool type='dir'>"
    "<name>default-pool</name>"
    "<uuid>dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566</uuid>"
    "<target><path>/default-pool</path></target>"
    "</pool>";

typedef struct test_pool {
    rv_pool_def *def;
    int active, persistent, autostart;
    rv_vol_def **vols;
    size_t nvols, cap;
} test_pool;

static unsigned int pool_state(const void *obj)
{
    const test_pool *p = obj;
    return rv_obj_state(p->active, p->persistent, p->autostart);
}

/* libvirt's test driver says TEST in its errors. */
static const rv_obj_kind pool_kind = RV_POOL_OBJ_KIND(RV_FROM_TEST, pool_state);

static int ready(rv_err *err);

static struct {
    rv_obj_list list;           /* of test_pool */
    size_t nvols;               /* in all pools */
    int ready;
} pools = {
    .list = { .max = TEST_MAX_POOLS, .kind = &pool_kind, .fill = ready },
};

static test_pool *pool_at(size_t i)
{
    return rv_obj_at(&pools.list, i);
}

static void emit(const test_pool *p, int event)
{
    rv_driver_pool_event(&rv_test_driver, p->def->name, p->def->uuid,
                         RV_POOL_EVENT_ID_LIFECYCLE, event, 0);
}

static void set_defaults(rv_pool_def *def)
{
    def->capacity = def->available = pool_capacity;
    def->allocation = 0;
}

static void pool_free(void *item)
{
    test_pool *p = item;
    for (size_t i = 0; i < p->nvols; i++)
        rv_vol_def_free(p->vols[i]);
    pools.nvols -= p->nvols;
    free(p->vols);
    rv_pool_def_free(p->def);
    free(p);
}

/* ---- the table ---- */

/* A new inactive pool holding def (taken, freed on failure). */
static test_pool *pool_add(rv_pool_def *def, rv_err *err)
{
    test_pool *p = rv_obj_new(&pools.list, sizeof(*p), def, err);
    if (!p)
        rv_pool_def_free(def);
    return p;
}

static void pool_remove(test_pool *p)
{
    RV_DEBUG("storage pool '%s' removed", p->def->name);
    rv_obj_remove(&pools.list, p);
    pool_free(p);
}

static int ready(rv_err *err)
{
    if (pools.ready)
        return 0;
    rv_pool_def *def;
    if (rv_pool_def_parse(default_pool_xml, &def, err) < 0)
        return -1;
    set_defaults(def);
    test_pool *p = pool_add(def, err);
    if (!p)
        return -1;
    p->active = p->persistent = 1;
    pools.ready = 1;
    return 0;
}

void test_storage_cleanup(void)
{
    rv_obj_clear(&pools.list, pool_free);
    pools.ready = 0;
}

/* The pool a handle (or a volume's pool field) names: by name, as
 * libvirt's test driver looks it up. */
static test_pool *get_named(const char *name, rv_err *err)
{
    if (ready(err) < 0)
        return NULL;
    return rv_obj_get_name(&pools.list, name, err);
}

static test_pool *get(const rv_nonnull_storage_pool *w, rv_err *err)
{
    return get_named(w->name, err);
}

static int not_active(const test_pool *p, rv_err *err)
{
    return test_fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: storage pool '%s' is not active", p->def->name);
}

static int is_active(const test_pool *p, rv_err *err)
{
    return test_fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: storage pool '%s' is active", p->def->name);
}

static test_pool *get_active(const rv_nonnull_storage_pool *w, rv_err *err)
{
    test_pool *p = get(w, err);
    if (p && !p->active) {
        not_active(p, err);
        return NULL;
    }
    return p;
}

/* The pool, inactive, for a call with these flags (libvirt's func). */
static test_pool *get_inactive(const rv_nonnull_storage_pool *w, unsigned int flags,
                               const char *func, rv_err *err)
{
    test_pool *p = NULL;
    if (test_check_flags(flags, 0, func, err) == 0 && (p = get(w, err)) && p->active) {
        is_active(p, err);
        return NULL;
    }
    return p;
}

static int pool_to_wire(const void *p, void *w, rv_err *err)
{
    rv_nonnull_storage_pool *pool = w;
    return rv_obj_put_handle(&pools.list, p, &pool->name, pool->uuid, err);
}

static int vol_to_wire(const test_pool *p, const rv_vol_def *v, rv_nonnull_storage_vol *w,
                       rv_err *err)
{
    return rv_vol_put_wire(p->def->name, v, w, RV_FROM_TEST, err);
}

/* ---- pool lists ---- */

RV_OBJ_ACTIVE_SLOTS(test_, storage_pools, &pools.list, RV_STORAGE_POOL_LIST_MAX)
RV_OBJ_DEFINED_SLOTS(test_, storage_pools, &pools.list, RV_STORAGE_POOL_LIST_MAX)

RV_OBJ_LIST_ALL_SLOT(test_, storage_pools, &pools.list, 0xfffff, "testConnectListAllStoragePools",
                     pool_to_wire, pools)

/* ---- finding pool sources ---- */

/* What libvirt's test driver "finds" for logical and netfs pools. */
static const char logical_sources[] =
    "<sources>\n"
    "  <source>\n"
    "    <device path='/dev/sda20'/>\n"
    "    <name>testvg1</name>\n"
    "    <format type='lvm2'/>\n"
    "  </source>\n"
    "  <source>\n"
    "    <device path='/dev/sda21'/>\n"
    "    <name>testvg2</name>\n"
    "    <format type='lvm2'/>\n"
    "  </source>\n"
    "</sources>\n";

int test_connect_find_storage_pool_sources(rv_driver_conn *c,
                                           const rv_connect_find_storage_pool_sources_args *args,
                                           rv_connect_find_storage_pool_sources_ret *ret,
                                           rv_err *err)
{
    (void)c;
    char *host = NULL;
    if (test_check_flags(args->flags, 0, "testConnectFindStoragePoolSources", err) < 0)
        return -1;
    /* libvirt's test driver takes type dir (number 0) for an unknown one. */
    if (strcmp(args->type, "dir") == 0)
        return test_fail(err, RV_ERR_INTERNAL_ERROR, "internal error: unknown storage pool type %s",
                    args->type);
    if (args->srcSpec && rv_pool_source_spec_host(*args->srcSpec, &host, err) < 0)
        return -1;
    int rc = 0;
    if (strcmp(args->type, "logical") == 0) {
        if (!(ret->xml = strdup(logical_sources)))
            rc = test_fail_oom(err);
    } else if (strcmp(args->type, "netfs") == 0) {
        if (!host)
            rc = test_fail(err, RV_ERR_INVALID_ARG,
                      "invalid argument: hostname must be specified for netfs sources");
        else if (!(ret->xml = rv_pool_netfs_sources(host)))
            rc = test_fail_oom(err);
    } else {
        rc = test_fail(err, RV_ERR_NO_SUPPORT, "this function is not supported by the connection "
                  "driver: pool type '%s' does not support source discovery", args->type);
    }
    free(host);
    return rc < 0 ? -1 : rv_string_result(0, &ret->xml, err);
}

/* ---- pool lookups ---- */

RV_OBJ_LOOKUP_SLOTS(test_, storage_pool, &pools.list, pool_to_wire, pool)

int test_storage_pool_lookup_by_volume(rv_driver_conn *c,
                                       const rv_storage_pool_lookup_by_volume_args *args,
                                       rv_storage_pool_lookup_by_volume_ret *ret, rv_err *err)
{
    (void)c;
    test_pool *p = get_named(args->vol.pool, err);
    return p ? pool_to_wire(p, &ret->pool, err) : -1;
}

/* ---- pool definition and lifecycle ---- */

/* Read XML into a definition that may stand (libvirt's name and UUID
 * checks); *same: the pool it replaces, or NULL. */
static int parse_pool(const char *xml, rv_pool_def **out, test_pool **same, rv_err *err)
{
    void *obj;
    if (ready(err) < 0 || rv_pool_def_parse(xml, out, err) < 0)
        return -1;
    if (rv_obj_check_clash(&pools.list, (*out)->name, (*out)->uuid, &obj, err) < 0) {
        rv_pool_def_free(*out);
        return -1;
    }
    set_defaults(*out);
    *same = obj;
    return 0;
}

int test_storage_pool_define_xml(rv_driver_conn *c, const rv_storage_pool_define_xml_args *args,
                                 rv_storage_pool_define_xml_ret *ret, rv_err *err)
{
    rv_pool_def *def;
    test_pool *p;
    (void)c;
    /* VALIDATE (against libvirt's schema) has no schema to check here. */
    if (test_check_flags(args->flags, 0x1, "testStoragePoolDefineXML", err) < 0 ||
        parse_pool(args->xml, &def, &p, err) < 0)
        return -1;
    if (!p) {
        if (!(p = pool_add(def, err)))
            return -1;
    } else if (p->active) {
        /* libvirt's test driver keeps the running definition, then and
         * after the stop: the new one is never used. */
        rv_pool_def_free(def);
    } else {
        rv_pool_def_free(p->def);
        p->def = def;
    }
    p->persistent = 1;
    RV_DEBUG("storage pool '%s' defined", p->def->name);
    emit(p, RV_POOL_EVENT_DEFINED);
    return pool_to_wire(p, &ret->pool, err);
}

int test_storage_pool_create_xml(rv_driver_conn *c, const rv_storage_pool_create_xml_args *args,
                                 rv_storage_pool_create_xml_ret *ret, rv_err *err)
{
    rv_pool_def *def;
    test_pool *p;
    (void)c;
    if (test_check_flags(args->flags, 0, "testStoragePoolCreateXML", err) < 0 ||
        parse_pool(args->xml, &def, &p, err) < 0)
        return -1;
    if (p && p->active) {
        test_fail(err, RV_ERR_OPERATION_INVALID,
                  "Requested operation is not valid: pool is already active as '%s'",
                  p->def->name);
        rv_pool_def_free(def);
        return -1;
    }
    if (!p) {
        if (!(p = pool_add(def, err)))
            return -1;
    } else {
        /* As libvirt's test driver: an inactive pool of that name runs
         * def and becomes transient (gone at its stop). */
        rv_pool_def_free(p->def);
        p->def = def;
        p->persistent = 0;
    }
    p->active = 1;
    RV_DEBUG("storage pool '%s' created", p->def->name);
    emit(p, RV_POOL_EVENT_STARTED);
    return pool_to_wire(p, &ret->pool, err);
}

int test_storage_pool_create(rv_driver_conn *c, const rv_storage_pool_create_args *args,
                             rv_err *err)
{
    (void)c;
    test_pool *p = get_inactive(&args->pool, args->flags, "testStoragePoolCreate", err);
    if (!p)
        return -1;
    p->active = 1;
    emit(p, RV_POOL_EVENT_STARTED);
    return 0;
}

int test_storage_pool_build(rv_driver_conn *c, const rv_storage_pool_build_args *args,
                            rv_err *err)
{
    (void)c;
    test_pool *p = get_inactive(&args->pool, args->flags, "testStoragePoolBuild", err);
    if (!p)
        return -1;
    emit(p, RV_POOL_EVENT_CREATED);
    return 0;
}

int test_storage_pool_destroy(rv_driver_conn *c, const rv_storage_pool_destroy_args *args,
                              rv_err *err)
{
    (void)c;
    test_pool *p = get_active(&args->pool, err);
    if (!p)
        return -1;
    p->active = 0;
    emit(p, RV_POOL_EVENT_STOPPED);
    if (!p->persistent)
        pool_remove(p);
    return 0;
}

int test_storage_pool_delete(rv_driver_conn *c, const rv_storage_pool_delete_args *args,
                             rv_err *err)
{
    (void)c;
    test_pool *p = get_inactive(&args->pool, args->flags, "testStoragePoolDelete", err);
    if (!p)
        return -1;
    emit(p, RV_POOL_EVENT_DELETED);
    return 0;
}

int test_storage_pool_undefine(rv_driver_conn *c, const rv_storage_pool_undefine_args *args,
                               rv_err *err)
{
    (void)c;
    test_pool *p = get_inactive(&args->pool, 0, "testStoragePoolUndefine", err);
    if (!p)
        return -1;
    emit(p, RV_POOL_EVENT_UNDEFINED);
    pool_remove(p);
    return 0;
}

int test_storage_pool_refresh(rv_driver_conn *c, const rv_storage_pool_refresh_args *args,
                              rv_err *err)
{
    (void)c;
    test_pool *p;
    if (test_check_flags(args->flags, 0, "testStoragePoolRefresh", err) < 0 ||
        !(p = get_active(&args->pool, err)))
        return -1;
    rv_driver_pool_event(&rv_test_driver, p->def->name, p->def->uuid, RV_POOL_EVENT_ID_REFRESH,
                         0, 0);
    return 0;
}

/* ---- pool queries ---- */

int test_storage_pool_get_info(rv_driver_conn *c, const rv_storage_pool_get_info_args *args,
                               rv_storage_pool_get_info_ret *ret, rv_err *err)
{
    (void)c;
    test_pool *p = get(&args->pool, err);
    if (!p)
        return -1;
    ret->state = (u_char)(p->active ? RV_STORAGE_POOL_RUNNING : RV_STORAGE_POOL_INACTIVE);
    ret->capacity = p->def->capacity;
    ret->allocation = p->def->allocation;
    ret->available = p->def->available;
    return 0;
}

int test_storage_pool_get_xml_desc(rv_driver_conn *c,
                                   const rv_storage_pool_get_xml_desc_args *args,
                                   rv_storage_pool_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    test_pool *p;
    /* libvirt 9.0's test driver takes no flags here, not even INACTIVE. */
    if (test_check_flags(args->flags, 0, "testStoragePoolGetXMLDesc", err) < 0 ||
        !(p = get(&args->pool, err)))
        return -1;
    if (!(ret->xml = rv_pool_def_format(p->def)))
        return test_fail_oom(err);
    return rv_string_result(0, &ret->xml, err);
}

RV_OBJ_STATE_SLOTS(test_, storage_pool, &pools.list, pool)

int test_storage_pool_set_autostart(rv_driver_conn *c,
                                    const rv_storage_pool_set_autostart_args *args, rv_err *err)
{
    (void)c;
    test_pool *p = get(&args->pool, err);
    if (!p)
        return -1;
    if (!p->persistent)
        return test_fail(err, RV_ERR_INVALID_ARG, "invalid argument: pool has no config file");
    p->autostart = args->autostart != 0;
    return 0;
}

/* ---- volumes ---- */

static rv_vol_def *vol_by_name(const test_pool *p, const char *name, size_t *at)
{
    return rv_vols_find(p->vols, p->nvols, name, at);
}

/* The volume a handle names, in its (active) pool. */
static rv_vol_def *get_vol(const rv_nonnull_storage_vol *w, test_pool **pool, rv_err *err)
{
    test_pool *p = get_named(w->pool, err);
    if (!p)
        return NULL;
    if (!p->active) {
        not_active(p, err);
        return NULL;
    }
    rv_vol_def *v = vol_by_name(p, w->name, NULL);
    if (!v)
        rv_vol_not_found(RV_FROM_TEST, "name", w->name, err);
    if (pool)
        *pool = p;
    return v;
}

rv_vol_def *test_storage_find_vol(const rv_nonnull_storage_vol *w, rv_err *err)
{
    return get_vol(w, NULL, err);
}

RV_VOLS_SLOTS(test_, test_pool, get_active, get_vol, RV_FROM_TEST)

int test_storage_pool_list_all_volumes(rv_driver_conn *c,
                                       const rv_storage_pool_list_all_volumes_args *args,
                                       rv_storage_pool_list_all_volumes_ret *ret, rv_err *err)
{
    (void)c;
    test_pool *p;
    if (test_check_flags(args->flags, 0, "testStoragePoolListAllVolumes", err) < 0 ||
        !(p = get(&args->pool, err)))
        return -1;
    if (!p->active)     /* this one alone does not name the pool */
        return test_fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: storage pool is not active");
    return rv_vols_list_all(p->def->name, p->vols, p->nvols, args->need_results, RV_FROM_TEST,
                            ret, err);
}

int test_storage_vol_lookup_by_name(rv_driver_conn *c,
                                    const rv_storage_vol_lookup_by_name_args *args,
                                    rv_storage_vol_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    rv_nonnull_storage_vol w = { .pool = args->pool.name, .name = args->name };
    test_pool *p;
    rv_vol_def *v = get_vol(&w, &p, err);
    return v ? vol_to_wire(p, v, &ret->vol, err) : -1;
}

/* The volume whose key (by_key) or path is what, in any active pool. */
static int lookup_anywhere(const char *what, int by_key, rv_nonnull_storage_vol *out, rv_err *err)
{
    if (ready(err) < 0)
        return -1;
    for (size_t i = 0; i < pools.list.n; i++) {
        test_pool *p = pool_at(i);
        rv_vol_def *v = p->active ? rv_vols_find_by(p->vols, p->nvols, by_key, what) : NULL;
        if (v)
            return vol_to_wire(p, v, out, err);
    }
    return rv_vol_not_found(RV_FROM_TEST, by_key ? "key" : "path", what, err);
}

int test_storage_vol_lookup_by_key(rv_driver_conn *c,
                                   const rv_storage_vol_lookup_by_key_args *args,
                                   rv_storage_vol_lookup_by_key_ret *ret, rv_err *err)
{
    (void)c;
    return lookup_anywhere(args->key, 1, &ret->vol, err);
}

int test_storage_vol_lookup_by_path(rv_driver_conn *c,
                                    const rv_storage_vol_lookup_by_path_args *args,
                                    rv_storage_vol_lookup_by_path_ret *ret, rv_err *err)
{
    (void)c;
    return lookup_anywhere(args->path, 0, &ret->vol, err);
}

/* Parse a new volume for p (active) and check that it fits: its name
 * free, the pool's space enough, the driver's bound not reached. */
static rv_vol_def *new_vol(test_pool *p, const char *xml, rv_err *err)
{
    rv_vol_def *v;
    if (rv_vol_def_parse(xml, p->def->type, &v, err) < 0)
        return NULL;
    if (vol_by_name(p, v->name, NULL))
        test_fail(err, RV_ERR_OPERATION_FAILED, "operation failed: storage vol already exists");
    else if (p->def->available < v->allocation)
        test_fail(err, RV_ERR_INTERNAL_ERROR,
             "internal error: Not enough free space in pool for volume '%s'", v->name);
    else if (pools.nvols >= TEST_MAX_VOLUMES)
        test_fail(err, RV_ERR_OPERATION_FAILED,
             "operation failed: the test driver holds at most %d storage volumes",
             TEST_MAX_VOLUMES);
    else if (asprintf(&v->path, "%s/%s", p->def->target_path, v->name) < 0)
        v->path = NULL, test_fail_oom(err);
    else if (!(v->key = strdup(v->path)))
        test_fail_oom(err);
    else
        return v;
    rv_vol_def_free(v);
    return NULL;
}

/* Add v (taken) to p and account for its space. */
static int vol_add(test_pool *p, rv_vol_def *v, rv_nonnull_storage_vol *out, rv_err *err)
{
    if (p->nvols == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        rv_vol_def **grown = realloc(p->vols, cap * sizeof(*grown));
        if (!grown) {
            rv_vol_def_free(v);
            return test_fail_oom(err);
        }
        p->vols = grown;
        p->cap = cap;
    }
    p->vols[p->nvols++] = v;
    pools.nvols++;
    p->def->allocation += v->allocation;
    p->def->available = p->def->capacity - p->def->allocation;
    RV_DEBUG("volume '%s' created in pool '%s'", v->name, p->def->name);
    return vol_to_wire(p, v, out, err);
}

int test_storage_vol_create_xml(rv_driver_conn *c, const rv_storage_vol_create_xml_args *args,
                                rv_storage_vol_create_xml_ret *ret, rv_err *err)
{
    (void)c;
    test_pool *p;
    rv_vol_def *v;
    if (test_check_flags(args->flags, 0, "testStorageVolCreateXML", err) < 0 ||
        !(p = get_active(&args->pool, err)) || !(v = new_vol(p, args->xml, err)))
        return -1;
    return vol_add(p, v, &ret->vol, err);
}

int test_storage_vol_create_xml_from(rv_driver_conn *c,
                                     const rv_storage_vol_create_xml_from_args *args,
                                     rv_storage_vol_create_xml_from_ret *ret, rv_err *err)
{
    (void)c;
    test_pool *p;
    rv_vol_def *v;
    if (test_check_flags(args->flags, 0, "testStorageVolCreateXMLFrom", err) < 0 ||
        !(p = get_active(&args->pool, err)))
        return -1;
    /* The original is looked for in the new volume's pool, by name. */
    if (!vol_by_name(p, args->clonevol.name, NULL))
        return rv_vol_not_found(RV_FROM_TEST, "name", args->clonevol.name, err);
    if (!(v = new_vol(p, args->xml, err)))
        return -1;
    return vol_add(p, v, &ret->vol, err);
}

int test_storage_vol_delete(rv_driver_conn *c, const rv_storage_vol_delete_args *args,
                            rv_err *err)
{
    (void)c;
    test_pool *p;
    rv_vol_def *v;
    size_t at = 0;
    if (test_check_flags(args->flags, 0, "testStorageVolDelete", err) < 0 ||
        !(v = get_vol(&args->vol, &p, err)))
        return -1;
    vol_by_name(p, v->name, &at);
    /* A pool redefined while it held volumes starts again from nothing
     * allocated: never wrap below it. */
    p->def->allocation -= v->allocation < p->def->allocation ? v->allocation
                                                              : p->def->allocation;
    p->def->available = p->def->capacity - p->def->allocation;
    memmove(&p->vols[at], &p->vols[at + 1], (p->nvols - at - 1) * sizeof(p->vols[0]));
    p->nvols--;
    pools.nvols--;
    RV_DEBUG("volume '%s' deleted from pool '%s'", v->name, p->def->name);
    rv_vol_def_free(v);
    return 0;
}

int test_storage_vol_get_info(rv_driver_conn *c, const rv_storage_vol_get_info_args *args,
                              rv_storage_vol_get_info_ret *ret, rv_err *err)
{
    (void)c;
    rv_vol_def *v = get_vol(&args->vol, NULL, err);
    if (!v)
        return -1;
    rv_vol_put_info(v, ret);
    return 0;
}

int test_storage_vol_get_xml_desc(rv_driver_conn *c,
                                  const rv_storage_vol_get_xml_desc_args *args,
                                  rv_storage_vol_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    rv_vol_def *v;
    if (test_check_flags(args->flags, 0, "testStorageVolGetXMLDesc", err) < 0 ||
        !(v = get_vol(&args->vol, NULL, err)))
        return -1;
    return rv_vol_put_xml(v, RV_FROM_TEST, &ret->xml, err);
}

