/* The QEMU driver's secrets (qemu_secret.c: persistent ones in files,
 * ephemeral ones in memory, with their events) and network filters
 * (qemu_nwfilter.c: stored, never applied), answered as libvirtd's secret
 * and nwfilter drivers answer. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_SECRET_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_SECRET_H

#include "server/drivers/driver.h"


/* Load the secrets saved in config_dir/secrets; forget them all. */
void rv_qemu_secret_init(void);
void rv_qemu_secret_cleanup(void);


/* Load the filters saved in config_dir/nwfilter; forget them all. */
void rv_qemu_nwfilter_init(void);
void rv_qemu_nwfilter_cleanup(void);

#endif
