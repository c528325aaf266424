/* The QEMU driver's storage: directory pools on the host's disks and
 * the files in them as volumes (qemu_storage.c).  The wire slots are
 * listed in the driver's table (qemu_driver.c); the rest is for the
 * driver's own start-up and exit, and for whoever needs a volume's bytes
 * (the volume upload and download streams). */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_STORAGE_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_STORAGE_H

#include "server/drivers/driver.h"

/* Load the pool definitions, see which ran, start the autostart ones. */
void rv_qemu_storage_init(void);
/* At daemon exit: fail the volume jobs still running, forget the pools. */
void rv_qemu_storage_cleanup(void);

/* The file of a volume of an active pool, opened with open_flags
 * (O_RDONLY for a download, O_WRONLY for an upload; O_CLOEXEC is
 * added): an fd the caller owns, or -1 with err set as the lookups set
 * it.  A volume that a job is still creating is not there yet. */
int rv_qemu_storage_vol_open(const char *pool, const char *vol, int open_flags, rv_err *err);

/* The slots. */
#define RV_QEMU_STORAGE_SLOT(name) \
    int rv_qemu_##name(rv_driver_conn *c, const rv_##name##_args *args, rv_##name##_ret *ret, \
                       rv_err *err)
#define RV_QEMU_STORAGE_VOID_SLOT(name) \
    int rv_qemu_##name(rv_driver_conn *c, const rv_##name##_args *args, rv_err *err)

/* vol-upload and vol-download: streams on the volume's file. */
RV_QEMU_STORAGE_VOID_SLOT(storage_vol_upload);
RV_QEMU_STORAGE_VOID_SLOT(storage_vol_download);

int rv_qemu_connect_num_of_storage_pools(rv_driver_conn *c,
                                         rv_connect_num_of_storage_pools_ret *ret, rv_err *err);
int rv_qemu_connect_num_of_defined_storage_pools(rv_driver_conn *c,
                                                 rv_connect_num_of_defined_storage_pools_ret *ret,
                                                 rv_err *err);
RV_QEMU_STORAGE_SLOT(connect_list_storage_pools);
RV_QEMU_STORAGE_SLOT(connect_list_defined_storage_pools);
RV_QEMU_STORAGE_SLOT(connect_list_all_storage_pools);
RV_QEMU_STORAGE_SLOT(storage_pool_define_xml);
RV_QEMU_STORAGE_SLOT(storage_pool_create_xml);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_create);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_build);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_destroy);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_delete);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_undefine);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_refresh);
RV_QEMU_STORAGE_SLOT(storage_pool_lookup_by_name);
RV_QEMU_STORAGE_SLOT(storage_pool_lookup_by_uuid);
RV_QEMU_STORAGE_SLOT(storage_pool_lookup_by_volume);
RV_QEMU_STORAGE_SLOT(storage_pool_get_info);
RV_QEMU_STORAGE_SLOT(storage_pool_get_xml_desc);
RV_QEMU_STORAGE_SLOT(storage_pool_get_autostart);
RV_QEMU_STORAGE_VOID_SLOT(storage_pool_set_autostart);
RV_QEMU_STORAGE_SLOT(storage_pool_is_active);
RV_QEMU_STORAGE_SLOT(storage_pool_is_persistent);
RV_QEMU_STORAGE_SLOT(storage_pool_num_of_volumes);
RV_QEMU_STORAGE_SLOT(storage_pool_list_volumes);
RV_QEMU_STORAGE_SLOT(storage_pool_list_all_volumes);
RV_QEMU_STORAGE_SLOT(storage_vol_create_xml);
RV_QEMU_STORAGE_SLOT(storage_vol_create_xml_from);
RV_QEMU_STORAGE_VOID_SLOT(storage_vol_delete);
RV_QEMU_STORAGE_VOID_SLOT(storage_vol_resize);
RV_QEMU_STORAGE_VOID_SLOT(storage_vol_wipe);
RV_QEMU_STORAGE_SLOT(storage_vol_lookup_by_name);
RV_QEMU_STORAGE_SLOT(storage_vol_lookup_by_key);
RV_QEMU_STORAGE_SLOT(storage_vol_lookup_by_path);
RV_QEMU_STORAGE_SLOT(storage_vol_get_info);
RV_QEMU_STORAGE_SLOT(storage_vol_get_xml_desc);
RV_QEMU_STORAGE_SLOT(storage_vol_get_path);

#endif
