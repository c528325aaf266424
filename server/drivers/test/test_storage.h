/* The test driver's storage pools and volumes: libvirt's test:///default
 * starts with one pool, "default-pool" (a directory pool, active, 100 GiB,
 * no volumes).  The slots take wire types directly; test_ops.c lists them
 * in the driver's table.  Volume resize and wipe are left unset, as
 * libvirt's test driver leaves them (clients get VIR_ERR_NO_SUPPORT). */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_STORAGE_H
#define RV_SERVER_DRIVERS_TEST_TEST_STORAGE_H

#include "server/drivers/driver.h"

int test_connect_num_of_storage_pools(rv_driver_conn *c,
                                      rv_connect_num_of_storage_pools_ret *ret, rv_err *err);
int test_connect_list_storage_pools(rv_driver_conn *c,
                                    const rv_connect_list_storage_pools_args *args,
                                    rv_connect_list_storage_pools_ret *ret, rv_err *err);
int test_connect_num_of_defined_storage_pools(rv_driver_conn *c,
                                              rv_connect_num_of_defined_storage_pools_ret *ret,
                                              rv_err *err);
int test_connect_list_defined_storage_pools(rv_driver_conn *c,
                                            const rv_connect_list_defined_storage_pools_args *args,
                                            rv_connect_list_defined_storage_pools_ret *ret,
                                            rv_err *err);
int test_connect_find_storage_pool_sources(rv_driver_conn *c,
                                           const rv_connect_find_storage_pool_sources_args *args,
                                           rv_connect_find_storage_pool_sources_ret *ret,
                                           rv_err *err);
int test_storage_pool_create_xml(rv_driver_conn *c, const rv_storage_pool_create_xml_args *args,
                                 rv_storage_pool_create_xml_ret *ret, rv_err *err);
int test_storage_pool_define_xml(rv_driver_conn *c, const rv_storage_pool_define_xml_args *args,
                                 rv_storage_pool_define_xml_ret *ret, rv_err *err);
int test_storage_pool_create(rv_driver_conn *c, const rv_storage_pool_create_args *args,
                             rv_err *err);
int test_storage_pool_build(rv_driver_conn *c, const rv_storage_pool_build_args *args,
                            rv_err *err);
int test_storage_pool_destroy(rv_driver_conn *c, const rv_storage_pool_destroy_args *args,
                              rv_err *err);
int test_storage_pool_delete(rv_driver_conn *c, const rv_storage_pool_delete_args *args,
                             rv_err *err);
int test_storage_pool_undefine(rv_driver_conn *c, const rv_storage_pool_undefine_args *args,
                               rv_err *err);
int test_storage_pool_refresh(rv_driver_conn *c, const rv_storage_pool_refresh_args *args,
                              rv_err *err);
int test_storage_pool_lookup_by_name(rv_driver_conn *c,
                                     const rv_storage_pool_lookup_by_name_args *args,
                                     rv_storage_pool_lookup_by_name_ret *ret, rv_err *err);
int test_storage_pool_lookup_by_uuid(rv_driver_conn *c,
                                     const rv_storage_pool_lookup_by_uuid_args *args,
                                     rv_storage_pool_lookup_by_uuid_ret *ret, rv_err *err);
int test_storage_pool_lookup_by_volume(rv_driver_conn *c,
                                       const rv_storage_pool_lookup_by_volume_args *args,
                                       rv_storage_pool_lookup_by_volume_ret *ret, rv_err *err);
int test_storage_pool_get_info(rv_driver_conn *c, const rv_storage_pool_get_info_args *args,
                               rv_storage_pool_get_info_ret *ret, rv_err *err);
int test_storage_pool_get_xml_desc(rv_driver_conn *c,
                                   const rv_storage_pool_get_xml_desc_args *args,
                                   rv_storage_pool_get_xml_desc_ret *ret, rv_err *err);
int test_storage_pool_get_autostart(rv_driver_conn *c,
                                    const rv_storage_pool_get_autostart_args *args,
                                    rv_storage_pool_get_autostart_ret *ret, rv_err *err);
int test_storage_pool_set_autostart(rv_driver_conn *c,
                                    const rv_storage_pool_set_autostart_args *args,
                                    rv_err *err);
int test_storage_pool_num_of_volumes(rv_driver_conn *c,
                                     const rv_storage_pool_num_of_volumes_args *args,
                                     rv_storage_pool_num_of_volumes_ret *ret, rv_err *err);
int test_storage_pool_list_volumes(rv_driver_conn *c,
                                   const rv_storage_pool_list_volumes_args *args,
                                   rv_storage_pool_list_volumes_ret *ret, rv_err *err);
int test_storage_vol_create_xml(rv_driver_conn *c, const rv_storage_vol_create_xml_args *args,
                                rv_storage_vol_create_xml_ret *ret, rv_err *err);
/* The volume a handle names, in its active pool (test_vol_stream.c). */
struct rv_vol_def *test_storage_find_vol(const rv_nonnull_storage_vol *w, rv_err *err);
int test_storage_vol_upload(rv_driver_conn *c, const rv_storage_vol_upload_args *args,
                            rv_err *err);
int test_storage_vol_download(rv_driver_conn *c, const rv_storage_vol_download_args *args,
                              rv_err *err);
int test_storage_vol_delete(rv_driver_conn *c, const rv_storage_vol_delete_args *args,
                            rv_err *err);
int test_storage_vol_lookup_by_name(rv_driver_conn *c,
                                    const rv_storage_vol_lookup_by_name_args *args,
                                    rv_storage_vol_lookup_by_name_ret *ret, rv_err *err);
int test_storage_vol_lookup_by_key(rv_driver_conn *c,
                                   const rv_storage_vol_lookup_by_key_args *args,
                                   rv_storage_vol_lookup_by_key_ret *ret, rv_err *err);
int test_storage_vol_lookup_by_path(rv_driver_conn *c,
                                    const rv_storage_vol_lookup_by_path_args *args,
                                    rv_storage_vol_lookup_by_path_ret *ret, rv_err *err);
int test_storage_vol_get_info(rv_driver_conn *c, const rv_storage_vol_get_info_args *args,
                              rv_storage_vol_get_info_ret *ret, rv_err *err);
int test_storage_vol_get_xml_desc(rv_driver_conn *c,
                                  const rv_storage_vol_get_xml_desc_args *args,
                                  rv_storage_vol_get_xml_desc_ret *ret, rv_err *err);
int test_storage_vol_get_path(rv_driver_conn *c, const rv_storage_vol_get_path_args *args,
                              rv_storage_vol_get_path_ret *ret, rv_err *err);
int test_storage_vol_create_xml_from(rv_driver_conn *c,
                                     const rv_storage_vol_create_xml_from_args *args,
                                     rv_storage_vol_create_xml_from_ret *ret, rv_err *err);
int test_storage_pool_is_active(rv_driver_conn *c, const rv_storage_pool_is_active_args *args,
                                rv_storage_pool_is_active_ret *ret, rv_err *err);
int test_storage_pool_is_persistent(rv_driver_conn *c,
                                    const rv_storage_pool_is_persistent_args *args,
                                    rv_storage_pool_is_persistent_ret *ret, rv_err *err);
int test_connect_list_all_storage_pools(rv_driver_conn *c,
                                        const rv_connect_list_all_storage_pools_args *args,
                                        rv_connect_list_all_storage_pools_ret *ret,
                                        rv_err *err);
int test_storage_pool_list_all_volumes(rv_driver_conn *c,
                                       const rv_storage_pool_list_all_volumes_args *args,
                                       rv_storage_pool_list_all_volumes_ret *ret, rv_err *err);

/* Forget every pool (daemon exit); the next call starts afresh. */
void test_storage_cleanup(void);

#endif
