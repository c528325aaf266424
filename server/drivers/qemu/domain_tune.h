/* The tuning part of a QEMU domain definition: <blkiotune>, <memtune>,
 * <cputune>, <numatune> and a disk's <iotune>, read and written in
 * libvirt's form (the subset the setters change). */
#ifndef RV_SERVER_DRIVERS_QEMU_DOMAIN_TUNE_H
#define RV_SERVER_DRIVERS_QEMU_DOMAIN_TUNE_H

#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"
#include "server/drivers/tune_params.h"

struct _xmlNode;

enum { RV_QEMU_MEM_HARD, RV_QEMU_MEM_SOFT, RV_QEMU_MEM_SWAP, RV_QEMU_MEM_LIMITS };
enum { RV_QEMU_IOTUNE_NUMBERS = RV_TUNE_IOTUNE_NUMBERS };
#define RV_QEMU_TUNE_MAX_VCPUS 256

typedef struct rv_qemu_tune {
    unsigned long long mem[RV_QEMU_MEM_LIMITS];    /* KiB; 0: unlimited (not set) */
    unsigned int blkio_weight;                      /* 0: not set */
    unsigned long long cpu_shares;                  /* 0: not set */
    char *vcpupin[RV_QEMU_TUNE_MAX_VCPUS];          /* cpu lists ("0-2,5"); NULL: none */
    char *emulatorpin;
    int numa_mode;                                  /* -1: no <numatune> */
    char *numa_nodeset;
} rv_qemu_tune;

/* A disk's limits in GET_BLOCK_IO_TUNE's order, group_name left out. */
typedef struct rv_qemu_iotune {
    unsigned long long val[RV_QEMU_IOTUNE_NUMBERS];
    char *group;                                    /* NULL: none */
} rv_qemu_iotune;

/* QEMU's -drive throttling.* option names of the limits (index as
 * rv_qemu_iotune.val and rv_tune_iotune_names). */
extern const char *const rv_qemu_iotune_options[RV_QEMU_IOTUNE_NUMBERS];
extern const char *const rv_qemu_numa_modes[];     /* strict, preferred, interleave, restrictive */

/* Read one of <blkiotune>, <memtune>, <cputune>, <numatune> into *tune
 * (made when NULL); vcpus bounds <vcpupin vcpu>. */
int rv_qemu_tune_parse(const struct _xmlNode *n, rv_qemu_tune **tune, rv_err *err);
/* A disk's <iotune> into *io (made when NULL). */
int rv_qemu_iotune_parse(const struct _xmlNode *n, rv_qemu_iotune **io, rv_err *err);
/* The vcpupins name vcpus below the count. */
int rv_qemu_tune_check(const rv_qemu_tune *tune, unsigned vcpus, rv_err *err);

/* Written where libvirt writes them: after <currentMemory> (blkio and
 * memory), after <vcpu> (cpu and numa), after a disk's <target>. */
void rv_qemu_tune_format_memory(FILE *fp, const rv_qemu_tune *tune);
void rv_qemu_tune_format_cpu(FILE *fp, const rv_qemu_tune *tune);
void rv_qemu_iotune_format(FILE *fp, const rv_qemu_iotune *io);

rv_qemu_tune *rv_qemu_tune_new(void);
void rv_qemu_tune_free(rv_qemu_tune *tune);
void rv_qemu_iotune_free(rv_qemu_iotune *io);

#endif
