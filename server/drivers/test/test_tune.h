/* The test driver's tuning setters, as libvirt 9.0's test:///default
 * answers them, and the tuning they keep in each definition for the
 * getters (test_stats.c) to read back. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_TUNE_H
#define RV_SERVER_DRIVERS_TEST_TEST_TUNE_H

#include <stddef.h>

#include "server/drivers/driver.h"
#include "server/drivers/test/test_domain_xml.h"
#include "server/drivers/tune_params.h"

typedef struct test_tune test_tune;
void test_tune_free(test_tune *t);

/* ---- read back; def may have no tuning (the defaults) ---- */
enum { TEST_MEM_HARD, TEST_MEM_SOFT, TEST_MEM_SWAP };
unsigned long long test_tune_mem(const rv_test_def *def, int which);
unsigned int test_tune_blkio_weight(const rv_test_def *def);
/* kind 0..4: device_weight, _read_iops_sec, _write_iops_sec,
 * _read_bytes_sec, _write_bytes_sec; "path,value,..." (malloc'd). */
char *test_tune_blkio_devices(const rv_test_def *def, int kind);
int test_tune_numa_mode(const rv_test_def *def);
const char *test_tune_numa_nodeset(const rv_test_def *def);   /* "" when none */
/* in average, peak, burst, floor, out average, peak, burst. */
void test_tune_bandwidth(const rv_test_def *def, int iface, unsigned int out[7]);
/* The 19 numeric limits in the getter's order (group_name left out). */
enum { TEST_IOTUNE_NUMBERS = RV_TUNE_IOTUNE_NUMBERS };
const char *test_tune_iotune(const rv_test_def *def, const char *target,
                             unsigned long long out[TEST_IOTUNE_NUMBERS]);
/* A vcpu's or the emulator's pinning, or NULL when not pinned. */
const unsigned char *test_tune_vcpu_pin(const rv_test_def *def, unsigned int vcpu, size_t *len);
const unsigned char *test_tune_emulator_pin(const rv_test_def *def, size_t *len);

/* The definition's tuning in libvirt's XML: <blkiotune> and <memtune>
 * (after <currentMemory>), <cputune> and <numatune> (after <vcpu>);
 * malloc'd, NULL when there is none to write. */
char *test_tune_xml_memory(const rv_test_def *def);
char *test_tune_xml_cpu(const rv_test_def *def);

/* DOMAIN_SET_MEMORY_STATS_PERIOD's record, flags and period checked:
 * <stats period='N'/> in the balloon of the definition flags name (0
 * removes it), or libvirt's error when there is no balloon. */
int test_tune_stats_period(const rv_nonnull_domain *dom, unsigned int flags, int period,
                           rv_err *err);

/* A defined XML's tuning (test_domain_xml.c reads it): memory limit which
 * (TEST_MEM_*) in KiB, the blkio weight, a device's value of kind 0..4
 * (as test_tune_blkio_devices), a vcpu's (or, vcpu -1, the emulator's)
 * pinning and the NUMA memory mode and nodeset, as lists ("0-2,5"). */
int test_tune_set_mem(rv_test_def *def, int which, unsigned long long kib, rv_err *err);
int test_tune_set_blkio_weight(rv_test_def *def, unsigned int weight, rv_err *err);
int test_tune_set_blkio_device(rv_test_def *def, const char *path, int kind,
                               unsigned long long value, rv_err *err);
int test_tune_set_pin(rv_test_def *def, int vcpu, const char *list, rv_err *err);
int test_tune_set_numa(rv_test_def *def, int mode, const char *nodeset, rv_err *err);

/* ---- the driver slots ---- */

#endif
