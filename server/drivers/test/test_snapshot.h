/* The test driver's domain snapshots: a tree per domain, in memory, with
 * the behaviour of libvirt 9.0's test driver (its flags, errors, states
 * and lifecycle events; see test_snapshot.c). */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_SNAPSHOT_H
#define RV_SERVER_DRIVERS_TEST_TEST_SNAPSHOT_H

#include "server/drivers/test/test_driver.h"

void test_snaps_free(test_snaps *snaps);
size_t test_snaps_count(const test_snaps *snaps);

/* The native call of test_driver.h's snapshot_num. */
int test_snapshot_num(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                      rv_err *err);

#endif
