/* The QEMU driver's storage: directory pools on the host's disks and
 * the files in them as volumes (qemu_storage.c): its start-up and exit,
 * and a volume's file for whoever needs its bytes (the volume upload and
 * download streams).  The wire slots are in the driver's table
 * (qemu_ops.c). */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_STORAGE_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_STORAGE_H

#include "server/drivers/driver.h"
#include "server/drivers/qemu/domain_xml.h"

/* Load the pool definitions, see which ran, start the autostart ones. */
void rv_qemu_storage_init(void);
/* At daemon exit: fail the volume jobs still running, forget the pools. */
void rv_qemu_storage_cleanup(void);

/* The file of a volume of an active pool, opened with open_flags
 * (O_RDONLY for a download, O_WRONLY for an upload; O_CLOEXEC is
 * added): an fd the caller owns, or -1 with err set as the lookups set
 * it.  A volume that a job is still creating is not there yet. */
int rv_qemu_storage_vol_open(const char *pool, const char *vol, int open_flags, rv_err *err);

/* def's volume disks (<disk type='volume'>) get their volumes' files as
 * their sources, for a start, a hotplug or a reattach (as
 * rv_qemu_network_resolve gives interfaces their bridges); -1 with err set
 * when a pool is not active or a volume is missing or being created. */
int rv_qemu_storage_resolve(rv_qemu_domain_def *def, rv_err *err);

#endif
