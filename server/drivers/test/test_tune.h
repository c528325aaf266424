/* The test driver's tuning setters, as libvirt 9.0's test:///default
 * answers them.  The domain-wide tuning is the shared model
 * (conf/domain_tune.h) under the test driver's rules; what only this
 * driver keeps, per definition, is each interface's bandwidth and each
 * disk's I/O limits, for the getters (test_stats.c) to read back. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_TUNE_H
#define RV_SERVER_DRIVERS_TEST_TEST_TUNE_H

#include <stddef.h>

#include "server/drivers/conf/domain_tune.h"
#include "server/drivers/driver.h"
#include "server/drivers/test/test_domain_xml.h"
#include "server/drivers/tune_params.h"

extern const rv_tune_rules test_tune_rules;

typedef struct test_tune test_tune;
void test_tune_free(test_tune *t);

/* ---- read back; def may have none (all 0) ---- */
/* in average, peak, burst, floor, out average, peak, burst. */
void test_tune_bandwidth(const rv_test_def *def, int iface, unsigned int out[7]);
/* The 19 numeric limits in the getter's order (group_name left out). */
enum { TEST_IOTUNE_NUMBERS = RV_TUNE_IOTUNE_NUMBERS };
const char *test_tune_iotune(const rv_test_def *def, const char *target,
                             unsigned long long out[TEST_IOTUNE_NUMBERS]);

/* DOMAIN_SET_MEMORY_STATS_PERIOD's record, flags and period checked:
 * <stats period='N'/> in the balloon of the definition flags name (0
 * removes it), or libvirt's error when there is no balloon. */
int test_tune_stats_period(const rv_nonnull_domain *dom, unsigned int flags, int period,
                           rv_err *err);

#endif
