/* A pool's volumes and the calls answered from them (storage_vols.h). */
#include "server/drivers/conf/storage_vols.h"

#include <stdlib.h>
#include <string.h>

static int oom(int from, rv_err *err)
{
    return rv_err_fail(err, from, RV_ERR_NO_MEMORY, "out of memory");
}

rv_vol_def *rv_vols_find(rv_vol_def *const *vols, size_t n, const char *name, size_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(vols[i]->name, name) == 0) {
            if (at)
                *at = i;
            return vols[i];
        }
    return NULL;
}

rv_vol_def *rv_vols_find_by(rv_vol_def *const *vols, size_t n, bool by_key, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(by_key ? vols[i]->key : vols[i]->path, what) == 0)
            return vols[i];
    return NULL;
}

int rv_vol_not_found(int from, const char *how, const char *what, rv_err *err)
{
    return rv_err_fail(err, from, RV_ERR_NO_STORAGE_VOL,
                       "Storage volume not found: no storage vol with matching %s '%s'", how,
                       what);
}

int rv_vols_names(rv_vol_def *const *vols, size_t n, int from, int maxnames, char ***names,
                  u_int *len, rv_err *err)
{
    if (maxnames < 0 || maxnames > RV_STORAGE_VOL_LIST_MAX)
        return rv_err_fail(err, from, RV_ERR_RPC, "maxnames %d is outside 0..%d", maxnames,
                           RV_STORAGE_VOL_LIST_MAX);
    char **out = calloc((size_t)maxnames + 1, sizeof(*out));
    if (!out)
        return oom(from, err);
    *names = out;
    *len = 0;
    for (size_t i = 0; i < n && *len < (u_int)maxnames; i++)
        if (!(out[(*len)++] = strdup(vols[i]->name)))
            return oom(from, err);
    return 0;
}

int rv_vol_put_wire(const char *pool, const rv_vol_def *v, rv_nonnull_storage_vol *w, int from,
                    rv_err *err)
{
    w->pool = strdup(pool);
    w->name = strdup(v->name);
    w->key = strdup(v->key);
    return w->pool && w->name && w->key ? 0 : oom(from, err);
}

int rv_vols_list_all(const char *pool, rv_vol_def *const *vols, size_t n, int need_results,
                     int from, rv_storage_pool_list_all_volumes_ret *ret, rv_err *err)
{
    ret->ret = (u_int)n;
    if (!need_results || n == 0)
        return 0;
    /* More than a reply can carry: said so, as libvirtd says it. */
    if (n > RV_STORAGE_VOL_LIST_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                           "internal error: Too many storage_vols '%zu' for limit '%d'", n,
                           RV_STORAGE_VOL_LIST_MAX);
    if (!(ret->vols.vols_val = calloc(n, sizeof(rv_nonnull_storage_vol))))
        return oom(from, err);
    for (size_t i = 0; i < n; i++)
        if (rv_vol_put_wire(pool, vols[i], &ret->vols.vols_val[ret->vols.vols_len++], from, err) < 0)
            return -1;
    return 0;
}

void rv_vol_put_info(const rv_vol_def *v, rv_storage_vol_get_info_ret *ret)
{
    ret->type = (char)v->type;
    ret->capacity = v->capacity;
    ret->allocation = v->allocation;
}

int rv_vol_put_xml(const rv_vol_def *v, int from, char **xml, rv_err *err)
{
    if (!(*xml = rv_vol_def_format(v)))
        return oom(from, err);
    return rv_string_result(0, xml, err);
}

int rv_vol_put_path(const rv_vol_def *v, int from, char **path, rv_err *err)
{
    return (*path = strdup(v->path)) ? 0 : oom(from, err);
}
