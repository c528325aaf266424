/* Checks of the typed parameters a tuning setter receives, shared by the
 * drivers, with the errors libvirtd gives for them (its daemon, its public
 * API and its driver-side checks, in that order), and small helpers for
 * reading them and for the CPU maps of the pinning calls. */
#ifndef RV_SERVER_DRIVERS_TUNE_PARAMS_H
#define RV_SERVER_DRIVERS_TUNE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "server/drivers/driver.h"

/* A parameter a setter takes: its name and RV_TYPED_PARAM_* type. */
typedef struct rv_tune_field {
    const char *name;
    int type;
} rv_tune_field;

/* Before the driver: a name of 80 bytes or more (libvirt's field size)
 * and an empty list (api: libvirt's function name, e.g.
 * "virDomainSetMemoryParameters"; what: "params" or "nparams" as that
 * function words it). */
int rv_tune_params_check_call(const rv_typed_param *params, unsigned int n, const char *api,
                              const char *what, rv_err *err);

/* libvirt's public-API check that live and config are not both asked. */
int rv_tune_check_exclusive(unsigned int flags, rv_err *err);

/* Every parameter known, of its type, none twice; the first offender in
 * name order is reported, as libvirt does. */
int rv_tune_params_validate(const rv_typed_param *params, unsigned int n,
                            const rv_tune_field *fields, size_t nfields, rv_err *err);

/* ---- a getter's answer ---- */
/* The bound libvirtd's dispatcher puts on a getter's nparams (0..max). */
int rv_tune_check_nparams(int nparams, int max, rv_err *err);
/* Room for the first want of n typed parameters (zeroed), *len of them;
 * NULL with err set when memory is short. */
rv_typed_param *rv_tune_param_list(int want, int n, u_int *len, rv_err *err);
/* p named field, of type; -1 with err set when memory is short. */
int rv_tune_param_name(rv_typed_param *p, const char *field, int type, rv_err *err);

/* A list of typed parameters built one by one (a getter's answer). */
typedef struct rv_tparam_list {
    rv_typed_param *v;
    u_int n, cap;
    bool oom;                   /* memory ran short, or over the protocol's bound */
} rv_tparam_list;
/* Add field: value as type (RV_TYPED_PARAM_*), str for a string; a
 * failure sets oom and later puts do nothing. */
void rv_tparam_put(rv_tparam_list *l, const char *field, int type, unsigned long long value,
                   const char *str);

/* The parameter called name, or NULL. */
const rv_typed_param *rv_tune_param_find(const rv_typed_param *params, unsigned int n,
                                         const char *name);

/* MEMORY_PARAMETERS' limits (<memtune>'s elements, KiB) and
 * BLKIO_PARAMETERS' weight and per-device lists, in libvirt's order. */
extern const char *const rv_tune_memory_names[3];
extern const char *const rv_tune_blkio_names[6];

/* A disk's I/O limits (<iotune>, BLOCK_IO_TUNE's parameters but
 * group_name), in libvirt's order: the names both drivers read and give. */
enum { RV_TUNE_IOTUNE_NUMBERS = 19 };
extern const char *const rv_tune_iotune_names[RV_TUNE_IOTUNE_NUMBERS];

/* The perf events libvirt 9.0 knows (PERF_EVENTS' parameters, all
 * booleans), in its order. */
enum { RV_TUNE_PERF_EVENTS = 22 };
extern const char *const rv_tune_perf_names[RV_TUNE_PERF_EVENTS];

/* An interface's <bandwidth> (INTERFACE_PARAMETERS): inbound average,
 * peak, burst, floor, then outbound average, peak, burst (KiB/s, KiB), in
 * libvirt's order; a direction is present or not. */
enum { RV_TUNE_BANDWIDTH_FIELDS = 7 };
extern const rv_tune_field rv_tune_bandwidth_fields[RV_TUNE_BANDWIDTH_FIELDS];
typedef struct rv_tune_bandwidth {
    bool has_in, has_out;
    unsigned int val[RV_TUNE_BANDWIDTH_FIELDS];
} rv_tune_bandwidth;
/* Apply SET_INTERFACE_PARAMETERS' params (validated) to *b, as libvirt
 * merges them: a direction whose average (or inbound floor) is named is
 * replaced by what is given (the rest of it 0), or removed when that is 0;
 * a peak or burst alone changes nothing. */
void rv_tune_bandwidth_apply(rv_tune_bandwidth *b, const rv_typed_param *p, unsigned int n);

/* A CPU (or NUMA node) list "0-3,^2,5" to a bitmap of *len bytes
 * (malloc'd; bits beyond RV_TUNE_BITMAP_MAX_BITS refused); -1 with
 * libvirt's "Failed to parse bitmap" error. */
#define RV_TUNE_BITMAP_MAX_BITS 65536
int rv_tune_bitmap_parse(const char *s, unsigned char **map, size_t *len, rv_err *err);
/* The list form ("0-2,5") of a bitmap; "" when empty.  NULL: no memory. */
char *rv_tune_bitmap_format(const unsigned char *map, size_t len);
/* Whether no bit is set; the highest set bit or -1. */
int rv_tune_bitmap_empty(const unsigned char *map, size_t len);
int rv_tune_bitmap_last(const unsigned char *map, size_t len);

#endif
