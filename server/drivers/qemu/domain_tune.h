/* The tuning part of a QEMU domain definition: <blkiotune>, <memtune>,
 * <cputune>, <numatune> and a disk's <iotune>, read and written in
 * libvirt's form (the subset the setters change): the domain-wide ones
 * into the shared model, strictly (anything else is refused). */
#ifndef RV_SERVER_DRIVERS_QEMU_DOMAIN_TUNE_H
#define RV_SERVER_DRIVERS_QEMU_DOMAIN_TUNE_H

#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"
#include "server/drivers/conf/domain_tune.h"
#include "server/drivers/tune_params.h"

struct _xmlNode;

enum { RV_QEMU_IOTUNE_NUMBERS = RV_TUNE_IOTUNE_NUMBERS };
#define RV_QEMU_TUNE_MAX_VCPUS 256
#define RV_QEMU_MAX_IOTHREADS 1024

/* The domain-wide tuning is the shared model (conf/domain_tune.h), kept
 * under the QEMU driver's rules. */
extern const rv_tune_rules rv_qemu_tune_rules;

/* A disk's limits in GET_BLOCK_IO_TUNE's order, group_name left out. */
typedef struct rv_qemu_iotune {
    unsigned long long val[RV_QEMU_IOTUNE_NUMBERS];
    char *group;                                    /* NULL: none */
} rv_qemu_iotune;

/* QEMU's -drive throttling.* option names of the limits (index as
 * rv_qemu_iotune.val and rv_tune_iotune_names). */
extern const char *const rv_qemu_iotune_options[RV_QEMU_IOTUNE_NUMBERS];

/* Read one of <blkiotune>, <memtune>, <cputune>, <numatune> into *tune
 * (made when NULL); vcpus bounds <vcpupin vcpu>. */
int rv_qemu_tune_parse(const struct _xmlNode *n, rv_domain_tune **tune, rv_err *err);
/* <iothreads> and <iothreadids> of root (a <domain>) into *tune (made
 * when there are any), read before <cputune> as libvirt reads them. */
int rv_qemu_iothreads_parse(const struct _xmlNode *root, rv_domain_tune **tune, rv_err *err);
/* A disk <driver>'s iothread attribute (0: none). */
int rv_qemu_disk_iothread_attr(const struct _xmlNode *driver, unsigned *iothread, rv_err *err);
/* A disk's <iotune> into *io (made when NULL). */
int rv_qemu_iotune_parse(const struct _xmlNode *n, rv_qemu_iotune **io, rv_err *err);
/* The vcpupins name vcpus below the count. */
int rv_qemu_tune_check(const rv_domain_tune *tune, unsigned vcpus, rv_err *err);

/* Written after the disk's <target>, where libvirt writes it. */
void rv_qemu_iotune_format(FILE *fp, const rv_qemu_iotune *io);

void rv_qemu_iotune_free(rv_qemu_iotune *io);

#endif
