/* The QEMU driver's domain snapshot slots (qemu_snapshot.c): internal
 * snapshots of qcow2 disks, their metadata in <config_dir>/snapshot/. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_SNAPSHOT_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_SNAPSHOT_H

#include "server/drivers/qemu/qemu_driver.h"

/* At start-up, once the domains are known: the snapshots an operation
 * that a kill interrupted left on the disks (the metadata's trash) are
 * removed from those of domains that do not run. */
void rv_qemu_snapshots_recover(void);
/* Free the metadata read so far (daemon exit). */
void rv_qemu_snapshots_cleanup(void);
/* Before d is undefined: as libvirt, a shut-off domain with snapshots is
 * refused unless flags has RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA (the
 * undefine then drops their metadata; the images keep the snapshots). */
int rv_qemu_snapshots_undefine(const qemu_dom *d, unsigned int flags, rv_err *err);
/* The undefine's metadata file is gone: forget what was read of it. */
void rv_qemu_snapshots_forget(const unsigned char uuid[16]);
/* config_dir/snapshot/<name>.json (malloc'd; NULL: no memory). */
char *rv_qemu_snapshot_metadata_path(const char *name);

int rv_qemu_domain_snapshot_create_xml(rv_driver_conn *c,
                                       const rv_domain_snapshot_create_xml_args *args,
                                       rv_domain_snapshot_create_xml_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_get_xml_desc(rv_driver_conn *c,
    const rv_domain_snapshot_get_xml_desc_args *args, rv_domain_snapshot_get_xml_desc_ret *ret,
    rv_err *err);
int rv_qemu_domain_snapshot_num(rv_driver_conn *c, const rv_domain_snapshot_num_args *args,
                                rv_domain_snapshot_num_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_list_names(rv_driver_conn *c,
                                       const rv_domain_snapshot_list_names_args *args,
                                       rv_domain_snapshot_list_names_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_lookup_by_name(rv_driver_conn *c,
    const rv_domain_snapshot_lookup_by_name_args *args, rv_domain_snapshot_lookup_by_name_ret *ret,
    rv_err *err);
int rv_qemu_domain_has_current_snapshot(rv_driver_conn *c,
    const rv_domain_has_current_snapshot_args *args, rv_domain_has_current_snapshot_ret *ret,
    rv_err *err);
int rv_qemu_domain_snapshot_current(rv_driver_conn *c, const rv_domain_snapshot_current_args *args,
                                    rv_domain_snapshot_current_ret *ret, rv_err *err);
int rv_qemu_domain_revert_to_snapshot(rv_driver_conn *c,
                                      const rv_domain_revert_to_snapshot_args *args, rv_err *err);
int rv_qemu_domain_snapshot_delete(rv_driver_conn *c, const rv_domain_snapshot_delete_args *args,
                                   rv_err *err);
int rv_qemu_domain_snapshot_get_parent(rv_driver_conn *c,
                                       const rv_domain_snapshot_get_parent_args *args,
                                       rv_domain_snapshot_get_parent_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_num_children(rv_driver_conn *c,
    const rv_domain_snapshot_num_children_args *args, rv_domain_snapshot_num_children_ret *ret,
    rv_err *err);
int rv_qemu_domain_snapshot_list_children_names(rv_driver_conn *c,
    const rv_domain_snapshot_list_children_names_args *args,
    rv_domain_snapshot_list_children_names_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_is_current(rv_driver_conn *c,
                                       const rv_domain_snapshot_is_current_args *args,
                                       rv_domain_snapshot_is_current_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_has_metadata(rv_driver_conn *c,
    const rv_domain_snapshot_has_metadata_args *args, rv_domain_snapshot_has_metadata_ret *ret,
    rv_err *err);
int rv_qemu_domain_list_all_snapshots(rv_driver_conn *c,
                                      const rv_domain_list_all_snapshots_args *args,
                                      rv_domain_list_all_snapshots_ret *ret, rv_err *err);
int rv_qemu_domain_snapshot_list_all_children(rv_driver_conn *c,
    const rv_domain_snapshot_list_all_children_args *args,
    rv_domain_snapshot_list_all_children_ret *ret, rv_err *err);

#endif
