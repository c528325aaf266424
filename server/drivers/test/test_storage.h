/* The test driver's storage pools and volumes: libvirt's test:///default
 * starts with one pool, "default-pool" (a directory pool, active, 100 GiB,
 * no volumes).  The slots take wire types directly; test_ops.c lists them
 * in the driver's table.  Volume resize and wipe are left unset, as
 * libvirt's test driver leaves them (clients get VIR_ERR_NO_SUPPORT). */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_STORAGE_H
#define RV_SERVER_DRIVERS_TEST_TEST_STORAGE_H

#include "server/drivers/driver.h"

/* The volume a handle names, in its active pool (test_vol_stream.c). */
struct rv_vol_def *test_storage_find_vol(const rv_nonnull_storage_vol *w, rv_err *err);

/* Forget every pool (daemon exit); the next call starts afresh. */
void test_storage_cleanup(void);

#endif
