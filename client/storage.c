/* Storage pool and volume handles (rv_pool, rv_vol) and the storage calls
 * that are more than one stub call.  The one-call ones are generated
 * (remvirt-calls.gen.c) from protocol/rv_remote.x. */
#include "client/remvirt.h"

#include <stdlib.h>
#include <string.h>

#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "common/util.h"
#include "rv_remote.h"

/* ---- pools ---- */

struct rvc_conn *rvc_pool_rpc(rv_pool *pool, const char *func)
{
    if (!pool) {
        rvc_report(RV_FROM_STORAGE, RV_ERR_INVALID_STORAGE_POOL, "%s: no storage pool given", func);
        return NULL;
    }
    return rvc_handle_rpc(pool->conn, func);
}

rv_nonnull_storage_pool rvc_pool_to_wire(const rv_pool *pool)
{
    rv_nonnull_storage_pool w;
    w.name = pool->name;
    memcpy(w.uuid, pool->uuid, RV_UUID_LEN);
    return w;
}

rv_pool *rvc_pool_from_wire(rv_conn *conn, rv_nonnull_storage_pool *w)
{
    rv_pool *pool = malloc(sizeof(*pool));
    if (!pool)
        return rvc_no_memory_null();
    pool->conn = conn;
    pool->name = w->name;
    w->name = NULL;
    memcpy(pool->uuid, w->uuid, RV_UUID_LEN);
    rvc_handle_ref(conn);
    return pool;
}

void rv_storage_pool_free(rv_pool *pool)
{
    if (!pool)
        return;
    rv_conn *conn = pool->conn;
    free(pool->name);
    free(pool);
    rvc_handle_unref(conn);
}

const char *rv_storage_pool_get_name(rv_pool *pool)
{
    rvc_enter();
    if (!pool) {
        rvc_report(RV_FROM_STORAGE, RV_ERR_INVALID_STORAGE_POOL, "%s: no storage pool given",
                   __func__);
        return NULL;
    }
    return pool->name;
}

static int check_uuid_args(const rv_pool *pool, const void *buf, const char *func)
{
    rvc_enter();
    if (!pool || !buf)
        return rvc_report(RV_FROM_STORAGE, pool ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_STORAGE_POOL,
                          "%s: %s", func, pool ? "no buffer given" : "no storage pool given");
    return 0;
}

int rv_storage_pool_get_uuid(rv_pool *pool, unsigned char uuid[RV_UUID_BUFLEN])
{
    if (check_uuid_args(pool, uuid, __func__) < 0)
        return -1;
    memcpy(uuid, pool->uuid, RV_UUID_LEN);
    return 0;
}

int rv_storage_pool_get_uuid_string(rv_pool *pool, char buf[RV_UUID_STRING_BUFLEN])
{
    if (check_uuid_args(pool, buf, __func__) < 0)
        return -1;
    rv_uuid_format(pool->uuid, buf);
    return 0;
}

rv_pool *rv_storage_pool_lookup_by_uuid_string(rv_conn *conn, const char *uuid)
{
    unsigned char raw[RV_UUID_LEN];
    if (!rvc_handle_rpc(conn, __func__))
        return NULL;
    if (!uuid || rv_uuid_parse(uuid, raw) < 0) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: %s", __func__,
                   uuid ? "malformed uuid" : "no uuid given");
        return NULL;
    }
    return rv_storage_pool_lookup_by_uuid(conn, raw);
}

char *rv_connect_find_storage_pool_sources(rv_conn *conn, const char *type,
                                           const char *src_spec, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!type) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no type given", __func__);
        return NULL;
    }
    char *spec = (char *)src_spec;
    rv_connect_find_storage_pool_sources_args args = {
        .type = (char *)type, .srcSpec = src_spec ? &spec : NULL, .flags = flags,
    };
    rv_connect_find_storage_pool_sources_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_find_storage_pool_sources(rpc, &args, &ret, &err) < 0)
        return rvc_fail_null(&err);
    return ret.xml;     /* the caller frees it */
}

int rv_storage_pool_get_info(rv_pool *pool, rv_storage_pool_info *info)
{
    struct rvc_conn *rpc = rvc_pool_rpc(pool, __func__);
    if (!rpc)
        return -1;
    if (!info)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_storage_pool_get_info_args args = { .pool = rvc_pool_to_wire(pool) };
    rv_storage_pool_get_info_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_storage_pool_get_info(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    info->state = ret.state;
    info->capacity = ret.capacity;
    info->allocation = ret.allocation;
    info->available = ret.available;
    return 0;
}

/* A count the server sent without the list (need_results 0) is checked
 * against the protocol's bound, as a list would have been. */
static int check_count(unsigned int count, int max, const char *what)
{
    if (count > (unsigned int)max)
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC,
                          "the server counts %u %s, more than the %d allowed", count, what, max);
    return (int)count;
}

int rv_connect_list_all_storage_pools(rv_conn *conn, rv_pool ***pools, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (pools)
        *pools = NULL;
    rv_connect_list_all_storage_pools_args args = { .need_results = pools != NULL,
                                                    .flags = flags };
    rv_connect_list_all_storage_pools_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_storage_pools(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int count;
    if (pools) {
        u_int n = ret.pools.pools_len;          /* at most RV_STORAGE_POOL_LIST_MAX */
        rv_pool **list = calloc(n + 1, sizeof(*list));
        for (u_int i = 0; list && i < n; i++) {
            if (!(list[i] = rvc_pool_from_wire(conn, &ret.pools.pools_val[i]))) {
                while (i > 0)
                    rv_storage_pool_free(list[--i]);
                free(list);
                list = NULL;
            }
        }
        *pools = list;
        count = list ? (int)n : rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    } else {
        count = check_count(ret.ret, RV_STORAGE_POOL_LIST_MAX, "storage pools");
    }
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_storage_pools_ret, (char *)&ret);
    return count;
}

/* ---- volumes ---- */

struct rvc_conn *rvc_vol_rpc(rv_vol *vol, const char *func)
{
    if (!vol) {
        rvc_report(RV_FROM_STORAGE, RV_ERR_INVALID_STORAGE_VOL, "%s: no storage volume given",
                   func);
        return NULL;
    }
    return rvc_handle_rpc(vol->conn, func);
}

rv_nonnull_storage_vol rvc_vol_to_wire(const rv_vol *vol)
{
    rv_nonnull_storage_vol w = { .pool = vol->pool, .name = vol->name, .key = vol->key };
    return w;
}

rv_vol *rvc_vol_from_wire(rv_conn *conn, rv_nonnull_storage_vol *w)
{
    rv_vol *vol = malloc(sizeof(*vol));
    if (!vol)
        return rvc_no_memory_null();
    vol->conn = conn;
    vol->pool = w->pool;
    vol->name = w->name;
    vol->key = w->key;
    w->pool = w->name = w->key = NULL;
    rvc_handle_ref(conn);
    return vol;
}

void rv_storage_vol_free(rv_vol *vol)
{
    if (!vol)
        return;
    rv_conn *conn = vol->conn;
    free(vol->pool);
    free(vol->name);
    free(vol->key);
    free(vol);
    rvc_handle_unref(conn);
}

static const char *vol_field(rv_vol *vol, size_t offset, const char *func)
{
    rvc_enter();
    if (!vol) {
        rvc_report(RV_FROM_STORAGE, RV_ERR_INVALID_STORAGE_VOL, "%s: no storage volume given",
                   func);
        return NULL;
    }
    return *(char **)((char *)vol + offset);
}

const char *rv_storage_vol_get_name(rv_vol *vol)
{
    return vol_field(vol, offsetof(rv_vol, name), __func__);
}

const char *rv_storage_vol_get_key(rv_vol *vol)
{
    return vol_field(vol, offsetof(rv_vol, key), __func__);
}

const char *rv_storage_vol_get_pool_name(rv_vol *vol)
{
    return vol_field(vol, offsetof(rv_vol, pool), __func__);
}

int rv_storage_vol_get_info(rv_vol *vol, rv_storage_vol_info *info)
{
    struct rvc_conn *rpc = rvc_vol_rpc(vol, __func__);
    if (!rpc)
        return -1;
    if (!info)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_storage_vol_get_info_args args = { .vol = rvc_vol_to_wire(vol) };
    rv_storage_vol_get_info_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_storage_vol_get_info(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    info->type = ret.type;
    info->capacity = ret.capacity;
    info->allocation = ret.allocation;
    return 0;
}

int rv_storage_pool_list_all_volumes(rv_pool *pool, rv_vol ***vols, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_pool_rpc(pool, __func__);
    if (!rpc)
        return -1;
    if (vols)
        *vols = NULL;
    rv_storage_pool_list_all_volumes_args args = { .pool = rvc_pool_to_wire(pool),
                                                   .need_results = vols != NULL,
                                                   .flags = flags };
    rv_storage_pool_list_all_volumes_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_storage_pool_list_all_volumes(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int count;
    if (vols) {
        u_int n = ret.vols.vols_len;            /* at most RV_STORAGE_VOL_LIST_MAX */
        rv_vol **list = calloc(n + 1, sizeof(*list));
        for (u_int i = 0; list && i < n; i++) {
            if (!(list[i] = rvc_vol_from_wire(pool->conn, &ret.vols.vols_val[i]))) {
                while (i > 0)
                    rv_storage_vol_free(list[--i]);
                free(list);
                list = NULL;
            }
        }
        *vols = list;
        count = list ? (int)n : rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    } else {
        count = check_count(ret.ret, RV_STORAGE_VOL_LIST_MAX, "storage volumes");
    }
    xdr_free((xdrproc_t)xdr_rv_storage_pool_list_all_volumes_ret, (char *)&ret);
    return count;
}
