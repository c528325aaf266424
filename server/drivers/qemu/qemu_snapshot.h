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

#endif
