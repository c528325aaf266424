/* The test driver's statistics, tuning and host-interface slots
 * (test_stats.c), wire-typed; test_ops.c lists them in the driver's table. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_STATS_H
#define RV_SERVER_DRIVERS_TEST_TEST_STATS_H

#include "server/drivers/driver.h"
#include "server/drivers/test/test_domain_xml.h"

/* For the setters (test_tune.c): the index of the interface a name or MAC
 * address names (-1 with libvirt's error), the target of the disk a
 * target or source path names (NULL when none). */
int test_stats_iface_index(const rv_test_def *def, const char *device, rv_err *err);
const char *test_stats_disk_target(const rv_test_def *def, const char *path);

#endif
