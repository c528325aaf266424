/* The QEMU command line for a domain definition.  The process starts
 * paused (-S) with its QMP monitor on a Unix socket (server, no wait), so
 * the driver connects, sets up and then sends "cont". */
#ifndef RV_SERVER_DRIVERS_QEMU_COMMAND_H
#define RV_SERVER_DRIVERS_QEMU_COMMAND_H

#include <stdbool.h>

#include "common/error.h"
#include "server/drivers/qemu/domain_xml.h"

typedef struct rv_qemu_command_opts {
    const char *binary;         /* e.g. /usr/bin/qemu-system-x86_64 */
    const char *monitor_path;   /* the QMP socket QEMU creates */
    bool kvm_usable;            /* /dev/kvm can create a VM */
    const char *incoming;       /* NULL, or -incoming's URI (a restore) */
} rv_qemu_command_opts;

/* A NULL-terminated argv (each string and the array malloc'd), or NULL
 * with err set (a domain type='kvm' without KVM, no memory).  Words
 * before the binary's path are NAME=VALUE for QEMU's environment
 * (<qemu:env>): the binary is the first word that starts with '/'. */
char **rv_qemu_build_argv(const rv_qemu_domain_def *def, const rv_qemu_command_opts *opts, rv_err *err);
/* A disk's error_policy and rerror_policy in QEMU's words (werror=, rerror=),
 * NULL when not set: for -drive and for a hotplugged device alike. */
void rv_qemu_disk_error_policies(const rv_qemu_disk *d, const char **werror, const char **rerror);
void rv_qemu_argv_free(char **argv);
/* -name's argument for a domain, escaped: reattach looks for exactly
 * this in a process's command line (malloc'd; NULL: no memory). */
char *rv_qemu_name_arg(const char *name);

/* Whether /dev/kvm can create a VM here (the device may exist but be
 * unusable: no permission, nested virtualisation off). */
bool rv_qemu_kvm_usable(void);

#endif
