/* The test driver's virtual networks: libvirt's test:///default starts
 * with one, "default", active.  The slots take wire types directly (a
 * network is only a name, a uuid and its XML); test_ops.c lists them in
 * the driver's table. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_NETWORK_H
#define RV_SERVER_DRIVERS_TEST_TEST_NETWORK_H

#include "server/drivers/driver.h"

/* Forget every network (daemon exit); the next call starts afresh. */
void test_net_cleanup(void);

#endif
