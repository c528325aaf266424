/* A storage pool's volumes as both drivers keep them (an array of
 * rv_vol_def in the pool object) and what their volume calls answer from
 * it the same way: lookups with libvirt's "not found", the name lists,
 * the list-all answer, a volume's wire handle, info, XML and path.  The
 * errors are in the driver's error domain (from). */
#ifndef RV_SERVER_DRIVERS_CONF_STORAGE_VOLS_H
#define RV_SERVER_DRIVERS_CONF_STORAGE_VOLS_H

#include <stdbool.h>

#include "server/drivers/conf/storage_xml.h"
#include "server/drivers/driver.h"

/* The volume called name among vols[0..n), *at (may be NULL) its index;
 * or NULL. */
rv_vol_def *rv_vols_find(rv_vol_def *const *vols, size_t n, const char *name, size_t *at);
/* The one whose key (by_key) or path is what, or NULL. */
rv_vol_def *rv_vols_find_by(rv_vol_def *const *vols, size_t n, bool by_key, const char *what);
/* libvirt's error for no volume matching how ("name", "key", "path") what: -1. */
int rv_vol_not_found(int from, const char *how, const char *what, rv_err *err);

/* LIST_VOLUMES: at most maxnames names (the dispatcher frees what was
 * filled, on failure too). */
int rv_vols_names(rv_vol_def *const *vols, size_t n, int from, int maxnames, char ***names,
                  u_int *len, rv_err *err);
/* LIST_ALL_VOLUMES of the pool called pool. */
int rv_vols_list_all(const char *pool, rv_vol_def *const *vols, size_t n, int need_results,
                     int from, rv_storage_pool_list_all_volumes_ret *ret, rv_err *err);
/* v of the pool called pool as a wire handle (what was set is the
 * caller's to free on failure too). */
int rv_vol_put_wire(const char *pool, const rv_vol_def *v, rv_nonnull_storage_vol *w, int from,
                    rv_err *err);

/* GET_INFO, GET_XML_DESC and GET_PATH of v. */
void rv_vol_put_info(const rv_vol_def *v, rv_storage_vol_get_info_ret *ret);
int rv_vol_put_xml(const rv_vol_def *v, int from, char **xml, rv_err *err);
int rv_vol_put_path(const rv_vol_def *v, int from, char **path, rv_err *err);

/* The volume slots both drivers answer alike from a pool object (of
 * type pool_type, with vols and nvols): num_of_volumes and list_volumes
 * of the active pool get_active(handle, err) returns, and vol_get_path of
 * the volume get_vol(handle, NULL, err) returns; from: the driver's error
 * domain. */
#define RV_VOLS_SLOTS(prefix, pool_type, get_active, get_vol, from)                                \
    RV_VOLS_POOL_SLOT_(prefix, num_of_volumes, pool_type, get_active,                              \
                       (ret->num = (int)p->nvols, 0))                                              \
    RV_VOLS_POOL_SLOT_(prefix, list_volumes, pool_type, get_active,                                \
                       rv_vols_names(p->vols, p->nvols, from, args->maxnames,                      \
                                     &ret->names.names_val, &ret->names.names_len, err))           \
    int prefix##storage_vol_get_path(rv_driver_conn *c, const rv_storage_vol_get_path_args *args,  \
                                     rv_storage_vol_get_path_ret *ret, rv_err *err)                \
    {                                                                                              \
        (void)c;                                                                                   \
        rv_vol_def *v = get_vol(&args->vol, NULL, err);                                            \
        return v ? rv_vol_put_path(v, from, &ret->name, err) : -1;                                 \
    }

/* storage_pool_<proc>: answer (an int expression of p, args, ret, err)
 * on the active pool p. */
#define RV_VOLS_POOL_SLOT_(prefix, proc, pool_type, get_active, answer)                            \
    int prefix##storage_pool_##proc(rv_driver_conn *c, const rv_storage_pool_##proc##_args *args,  \
                                    rv_storage_pool_##proc##_ret *ret, rv_err *err)                \
    {                                                                                              \
        (void)c;                                                                                   \
        pool_type *p = get_active(&args->pool, err);                                               \
        return p ? (answer) : -1;                                                                  \
    }

#endif
