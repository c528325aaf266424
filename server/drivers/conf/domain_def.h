/* The part of a domain definition both drivers keep, read and written once
 * for both (domain_xml.c): the domain's type, name, UUID, title and
 * description, memory, vCPUs, the OS type, architecture, machine and
 * boot order, the clock's offset and the lifecycle actions.  Read as
 * libvirt reads them, in libvirt's order and with its errors, so that the
 * first error reported is the one libvirtd reports; written in libvirt's
 * layout.  Each driver's definition starts with these fields
 * (RV_DOMAIN_BASE_FIELDS, reachable whole as its member base) and adds
 * what only it keeps; each driver then applies its own limits (the QEMU
 * driver: kvm or qemu, hvm on x86_64, ...). */
#ifndef RV_SERVER_DRIVERS_CONF_DOMAIN_DEF_H
#define RV_SERVER_DRIVERS_CONF_DOMAIN_DEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "server/drivers/tune_params.h"     /* RV_TUNE_PERF_EVENTS, their names */

/* libxml2's element (its headers are not needed to include this one). */
struct _xmlNode;

/* Lifecycle actions (<on_poweroff> and friends), libvirt's order. */
enum {
    RV_DOMAIN_ACTION_DESTROY,
    RV_DOMAIN_ACTION_RESTART,
    RV_DOMAIN_ACTION_RENAME_RESTART,
    RV_DOMAIN_ACTION_PRESERVE,
    RV_DOMAIN_ACTION_COREDUMP_DESTROY,
    RV_DOMAIN_ACTION_COREDUMP_RESTART,
};

/* Boot devices (<os><boot dev>), libvirt's order. */
enum { RV_DOMAIN_BOOT_FD, RV_DOMAIN_BOOT_HD, RV_DOMAIN_BOOT_CDROM, RV_DOMAIN_BOOT_NETWORK };

enum { RV_DOMAIN_MAX_BOOT = 4 };

extern const char *const rv_domain_action_words[];     /* indexed by RV_DOMAIN_ACTION_* */
extern const char *const rv_domain_boot_words[];       /* indexed by RV_DOMAIN_BOOT_* */

#define RV_DOMAIN_BASE_FIELDS \
    char *virt_type;                    /* <domain type='...'> */ \
    char *name; \
    unsigned char uuid[16]; \
    char *title, *description;          /* NULL when absent */ \
    unsigned long long memory_kib;      /* <memory> */ \
    unsigned long long current_memory_kib; \
    unsigned vcpus;                     /* <vcpu>: the maximum */ \
    unsigned current_vcpus;             /* <vcpu current>: on at start (vcpus: all) */ \
    bool placement_auto;                /* <vcpu placement='auto'> */ \
    char *os_type, *arch;               /* <os><type arch> */ \
    char *machine;                      /* NULL when absent */ \
    int boot[RV_DOMAIN_MAX_BOOT];       /* RV_DOMAIN_BOOT_* */ \
    size_t nboot; \
    bool clock_localtime;               /* <clock offset='localtime'>, else utc */ \
    int on_poweroff, on_reboot, on_crash;   /* RV_DOMAIN_ACTION_* */ \
    signed char perf[RV_TUNE_PERF_EVENTS];  /* <perf>: 1 enabled, -1 disabled, 0 absent */

typedef struct rv_domain_base {
    RV_DOMAIN_BASE_FIELDS
} rv_domain_base;

/* A driver's definition begins with RV_DOMAIN_BASE: the fields by their
 * names, and all of them as base. */
#define RV_DOMAIN_BASE \
    union { \
        rv_domain_base base; \
        struct { RV_DOMAIN_BASE_FIELDS }; \
    }

/* What differs between the drivers in reading the common part. */
typedef struct rv_domain_profile {
    const char *driver;         /* "remvirt's test driver": in "not supported by" */
    const char *default_arch;   /* the host's guest arch */
    unsigned max_vcpus;         /* over it: CONFIG_UNSUPPORTED */
    /* The driver's tuning elements, read where libvirt reads them (after
     * <vcpu>) with the ctx given to the parse; NULL: none here. */
    int (*tuning)(const struct _xmlNode *root, void *ctx, rv_err *err);
} rv_domain_profile;

/* The common part of root (a <domain>) into *base, in libvirt's order
 * with its defaults (a UUID generated when none is given, the current
 * memory at most the memory, boot from hd) and its errors.  On failure
 * what was read stays in *base for rv_domain_base_clear. */
int rv_domain_base_parse(const struct _xmlNode *root, const rv_domain_profile *profile,
                         rv_domain_base *base, void *tuning_ctx, rv_err *err);
void rv_domain_base_clear(rv_domain_base *base);

/* A number as libvirt reads it: decimal digits (after blanks and a '+')
 * and nothing after them; -1 otherwise or past 2^64 - 1. */
int rv_domain_parse_ull(const char *s, unsigned long long *out);

/* <memory>-like element el (NULL: absent, *kib 0) in KiB, rounded up, as
 * libvirt scales its unit; elname names it in the error. */
int rv_domain_parse_memory(const struct _xmlNode *el, const char *elname, unsigned long long *kib,
                           rv_err *err);

/* ---- DOMAIN_SET_LIFECYCLE_ACTION ---- */
/* Its types (virDomainLifecycle). */
enum { RV_DOMAIN_LIFECYCLE_POWEROFF, RV_DOMAIN_LIFECYCLE_REBOOT, RV_DOMAIN_LIFECYCLE_CRASH };
/* type and action (RV_DOMAIN_ACTION_*) known, as libvirt's API checks
 * them before the driver's checks of the flags. */
int rv_domain_lifecycle_check(unsigned int type, unsigned int action, rv_err *err);
/* Allowed together, as the drivers check it (no core dump on power-off or
 * reboot). */
int rv_domain_lifecycle_allowed(unsigned int type, unsigned int action, rv_err *err);
/* def's action for type becomes action (checked before). */
void rv_domain_lifecycle_set(rv_domain_base *def, unsigned int type, unsigned int action);

/* ---- DOMAIN_SET_PERF_EVENTS ---- */
/* The events' names and booleans checked as libvirt checks them (before
 * the driver's flags check: from is the driver's error domain for it). */
int rv_domain_perf_check(const rv_typed_param *params, unsigned int n, rv_err *err);
/* Each event params names becomes enabled or disabled in def. */
void rv_domain_perf_set(rv_domain_base *def, const rv_typed_param *params, unsigned int n);
/* GET_PERF_EVENTS' answer: every event, enabled or not, in libvirt's order. */
int rv_domain_perf_get(const rv_domain_base *def, rv_typed_param **val, u_int *len, rv_err *err);

/* ---- DOMAIN_SET_METADATA and DOMAIN_GET_METADATA ---- */
/* The types (virDomainMetadataType). */
enum { RV_METADATA_DESCRIPTION = 0, RV_METADATA_TITLE = 1, RV_METADATA_ELEMENT = 2 };
/* A change's arguments checked as libvirt checks them (from: the driver's
 * error domain for what its driver refuses; an ELEMENT is refused as not
 * modelled yet). */
int rv_domain_metadata_check(int type, const char *metadata, const char *key, const char *uri,
                             int from, rv_err *err);
/* Set (metadata NULL or "": remove) the <title> or <description> of def. */
int rv_domain_metadata_set(rv_domain_base *def, int type, const char *metadata, rv_err *err);
/* Its <title> or <description> (malloc'd), or libvirt's "metadata not
 * found" error. */
int rv_domain_metadata_get(const rv_domain_base *def, int type, const char *uri, char **out,
                           rv_err *err);

/* ---- written in libvirt's layout, each piece where libvirt puts it ---- */
/* <perf> (nothing when no event is named). */
void rv_domain_format_perf(FILE *fp, const rv_domain_base *base);
/* <name>, <uuid>, <title>, <description>. */
void rv_domain_format_ids(FILE *fp, const rv_domain_base *base);
/* <memory> and <currentMemory>. */
void rv_domain_format_memory(FILE *fp, const rv_domain_base *base);
/* <vcpu>. */
void rv_domain_format_vcpu(FILE *fp, const rv_domain_base *base);
/* <os>'s <type> and <boot> lines (without <os> itself). */
void rv_domain_format_os_type(FILE *fp, const rv_domain_base *base);
/* <on_poweroff>, <on_reboot>, <on_crash>. */
void rv_domain_format_actions(FILE *fp, const rv_domain_base *base);

#endif
