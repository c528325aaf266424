/* The QEMU driver's domain snapshot slots (qemu_snapshot.c): internal
 * snapshots of qcow2 disks, their metadata in <config_dir>/snapshot/. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_SNAPSHOT_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_SNAPSHOT_H

#include "server/drivers/qemu/qemu_driver.h"

/* Free the metadata read so far (daemon exit). */
void rv_qemu_snapshots_cleanup(void);
/* Before d is undefined: as libvirt, a shut-off domain with snapshots is
 * refused unless flags has RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA, which
 * drops their metadata (the images keep the snapshots). */
int rv_qemu_snapshots_undefine(const qemu_dom *d, unsigned int flags, rv_err *err);


#endif
