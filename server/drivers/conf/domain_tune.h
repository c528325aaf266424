/* The domain-wide tuning both drivers keep: <memtune>, <blkiotune>,
 * <cputune> (shares, vcpupin, emulatorpin) and <numatune>.  Written once
 * in libvirt's layout; the typed parameters of GET_MEMORY_PARAMETERS,
 * GET_BLKIO_PARAMETERS and GET_NUMA_PARAMETERS built once; the SET_*
 * parameters checked and applied once, with libvirt's errors.  What the
 * drivers do differently (libvirt's test driver and its QEMU driver do)
 * is said by an rv_tune_rules.  Each driver reads the elements with its
 * own strictness and keeps its live behaviour (cgroups, QMP, the
 * in-memory live definition). */
#ifndef RV_SERVER_DRIVERS_CONF_DOMAIN_TUNE_H
#define RV_SERVER_DRIVERS_CONF_DOMAIN_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "server/drivers/driver.h"
#include "server/drivers/tune_params.h"

#define RV_TUNE_UNLIMITED 9007199254740991ULL  /* libvirt's 2^53 - 1 KiB: no memory limit */

enum { RV_TUNE_MEM_HARD, RV_TUNE_MEM_SOFT, RV_TUNE_MEM_SWAP, RV_TUNE_MEM_LIMITS };
/* A blkio device's values: device_weight, _read_iops_sec, _write_iops_sec,
 * _read_bytes_sec, _write_bytes_sec (rv_tune_blkio_names after "weight"). */
enum { RV_TUNE_BLKIO_KINDS = 5 };

typedef struct rv_tune_cpumask {
    unsigned char *map;         /* NULL: not pinned */
    size_t len;
} rv_tune_cpumask;

/* An IOThread (<iothreadids><iothread id>) and its <iothreadpin>. */
typedef struct rv_tune_iothread {
    unsigned id;
    /* Filled in from <iothreads> alone: <iothreadids> is written only
     * when one of them was named (or pinned, added later). */
    bool autofill;
    rv_tune_cpumask pin;        /* map NULL: not pinned */
    int pool_min, pool_max;     /* thread_pool_min, thread_pool_max; -1: unset */
} rv_tune_iothread;

typedef struct rv_tune_blkio_dev {
    char *path;
    unsigned long long val[RV_TUNE_BLKIO_KINDS];    /* 0: not set */
} rv_tune_blkio_dev;

typedef struct rv_domain_tune {
    unsigned long long mem[RV_TUNE_MEM_LIMITS];     /* KiB; RV_TUNE_UNLIMITED: not set */
    unsigned int blkio_weight;                      /* 0: not set */
    rv_tune_blkio_dev *devs;
    size_t ndevs;
    unsigned long long cpu_shares;                  /* 0: not set */
    rv_tune_cpumask *pins;                          /* by vcpu */
    size_t npins;
    rv_tune_cpumask emulator;
    int numa_mode;                                  /* -1: no <numatune> */
    char *numa_nodeset;                             /* list form ("0-2,5"); NULL: none */
    rv_tune_iothread *iothreads;                    /* in the definition's order */
    size_t niothreads;
} rv_domain_tune;

/* What differs between the drivers, as between libvirt's. */
typedef struct rv_tune_rules {
    int from;                   /* RV_FROM_* of the driver's own errors */
    /* QEMU: a memory limit of 0 or from RV_TUNE_UNLIMITED up is none;
     * else (test) kept as given, only capped when read from XML. */
    bool limits_truncate;
    /* QEMU: the blkio weight within 100..1000 and no per-device values;
     * else any weight and the device lists kept. */
    bool blkio_weight_only;
} rv_tune_rules;

extern const char *const rv_tune_numa_modes[];     /* strict, preferred, interleave, restrictive */

rv_domain_tune *rv_domain_tune_new(void);
void rv_domain_tune_free(rv_domain_tune *t);
rv_domain_tune *rv_domain_tune_dup(const rv_domain_tune *t);
/* *t, made when NULL (NULL with err set when memory is short). */
rv_domain_tune *rv_domain_tune_of(rv_domain_tune **t, int from, rv_err *err);

/* ---- from the XML (values as read; the reader checked their form) ---- */
/* A memory limit (RV_TUNE_MEM_*) in KiB, as the rules keep it. */
void rv_domain_tune_set_limit(rv_domain_tune *t, const rv_tune_rules *rules, int which,
                              unsigned long long kib);
/* A device's value of kind 0..4. */
int rv_domain_tune_set_device(rv_domain_tune *t, const rv_tune_rules *rules, const char *path,
                              int kind, unsigned long long value, rv_err *err);
/* A vcpu's (vcpu -1: the emulator's) pinning: a copy of map. */
int rv_domain_tune_pin(rv_domain_tune *t, int vcpu, const unsigned char *map, size_t len,
                       int from, rv_err *err);
/* The same from a list ("0-3,^2"), libvirt's error when it is not one. */
int rv_domain_tune_pin_list(rv_domain_tune *t, int vcpu, const char *list, int from,
                            rv_err *err);
/* A vcpu's (-1: the emulator's) pinning, or NULL (t may be NULL). */
const rv_tune_cpumask *rv_domain_tune_pin_of(const rv_domain_tune *t, int vcpu);

/* ---- IOThreads (t may be NULL where it is only read) ---- */
/* The index of IOThread id, or -1. */
int rv_domain_tune_iothread_find(const rv_domain_tune *t, unsigned id);
/* Id added last (the caller checked it is new and not 0). */
int rv_domain_tune_iothread_add(rv_domain_tune *t, unsigned id, bool autofill, int from,
                                rv_err *err);
/* The IOThread at index i removed, with its pinning (the others are
 * then written by id). */
void rv_domain_tune_iothread_del(rv_domain_tune *t, size_t i);
/* Up to count IOThreads: the lowest ids not taken added (<iothreads>
 * above the <iothreadids> given). */
int rv_domain_tune_iothreads_fill(rv_domain_tune *t, size_t count, int from, rv_err *err);
/* IOThread index i pinned to map (it is then always written by id). */
int rv_domain_tune_iothread_pin(rv_domain_tune *t, size_t i, const unsigned char *map, size_t len,
                                int from, rv_err *err);

/* ---- written where libvirt writes them (t may be NULL) ---- */
/* <iothreads> and <iothreadids>, after <vcpu>. */
void rv_domain_tune_format_iothreads(FILE *fp, const rv_domain_tune *t);
/* <blkiotune> and <memtune>, after <currentMemory>. */
void rv_domain_tune_format_memory(FILE *fp, const rv_domain_tune *t);
/* <cputune> and <numatune>, after <vcpu>; placement_auto: <vcpu
 * placement='auto'>, whose <numatune> has no nodeset. */
void rv_domain_tune_format_cpu(FILE *fp, const rv_domain_tune *t, bool placement_auto);

/* ---- the getters' typed parameters (t may be NULL: the defaults) ---- */
enum { RV_TUNE_GET_MEMORY, RV_TUNE_GET_BLKIO, RV_TUNE_GET_NUMA };
/* How many parameters the kind has (the answer to nparams 0). */
int rv_domain_tune_count(int kind);
/* The first nparams of kind (strings only when flags has
 * TYPED_PARAM_STRING_OKAY, 4) into *val, *len of them. */
int rv_domain_tune_get(const rv_domain_tune *t, int kind, int nparams, unsigned int flags,
                       rv_typed_param **val, unsigned int *len, int from, rv_err *err);

/* ---- the setters (params already validated by name and type) ---- */
/* hard_limit at most swap_hard_limit, the ones not given taken from
 * check (libvirt's test driver checks the live definition's). */
int rv_domain_tune_set_memory(rv_domain_tune *t, const rv_domain_tune *check,
                              const rv_typed_param *p, unsigned int n, const rv_tune_rules *rules,
                              rv_err *err);
/* The weight and the per-device lists ("path,value,..."): like libvirt,
 * a bad list fails the call but the others apply. */
int rv_domain_tune_set_blkio(rv_domain_tune *t, const rv_typed_param *p, unsigned int n,
                             const rv_tune_rules *rules, rv_err *err);
/* numa_mode and numa_nodeset; live: a running domain's (its mode stays). */
int rv_domain_tune_set_numa(rv_domain_tune *t, const rv_typed_param *p, unsigned int n, bool live,
                            bool placement_auto, const rv_tune_rules *rules, rv_err *err);

/* The typed-parameter fields of the setters, for rv_tune_params_validate. */
extern const rv_tune_field rv_tune_memory_fields[3];
extern const rv_tune_field rv_tune_blkio_fields[6];
extern const rv_tune_field rv_tune_numa_fields[2];

#endif
