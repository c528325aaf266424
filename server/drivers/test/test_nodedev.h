/* The test driver's host devices: libvirt's test:///default has four
 * (the host "computer" and three SCSI hosts on FC adapters), answered as
 * libvirt 9.0's test driver answers; create makes a vHBA (scsi_host12)
 * under an FC host that can, destroy takes an FC host away, each with its
 * lifecycle event.  Define/undefine, start, active, persistent and
 * autostart are left unset (NO_SUPPORT, as libvirtd's test driver
 * answers). */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_NODEDEV_H
#define RV_SERVER_DRIVERS_TEST_TEST_NODEDEV_H

#include "server/drivers/driver.h"

/* The longest device XML create reads. */
#define RV_NODEDEV_XML_MAX (1 << 20)
/* virNodeDeviceCreateXMLFlags VALIDATE. */
#define RV_NODEDEV_CREATE_XML_VALIDATE 1u

/* Forget the created and destroyed devices (the driver's cleanup). */
void test_nodedev_cleanup(void);

#endif
