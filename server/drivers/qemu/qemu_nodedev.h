/* The QEMU driver's node devices and host interfaces, from sysfs
 * (qemu_nodedev.c): the slots its table lists. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_NODEDEV_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_NODEDEV_H

#include "server/drivers/driver.h"


/* 0 if the host has a device called name, else -1 with libvirtd's "not
 * found" error. */
int rv_qemu_nodedev_exists(const char *name, rv_err *err);



#endif
