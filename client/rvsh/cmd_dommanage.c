/* rvsh: the domain management commands beyond start and stop: shutdown
 * and reboot (--mode), undefine with its options, reset, save, restore,
 * managed save, memory and vCPU sizes, autostart (as virsh prints them). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rvsh.h"

/* --mode acpi,agent,...: the SHUTDOWN/REBOOT flags (the same bits). */
static int parse_mode(const char *text, unsigned int *flags)
{
    static const struct { const char *name; unsigned int flag; } modes[] = {
        { "acpi", RV_DOMAIN_SHUTDOWN_ACPI_POWER_BTN }, { "agent", RV_DOMAIN_SHUTDOWN_GUEST_AGENT },
        { "initctl", RV_DOMAIN_SHUTDOWN_INITCTL }, { "signal", RV_DOMAIN_SHUTDOWN_SIGNAL },
        { "paravirt", RV_DOMAIN_SHUTDOWN_PARAVIRT },
    };
    *flags = 0;
    for (const char *p = text; p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        size_t i = 0;
        while (i < sizeof(modes) / sizeof(modes[0]) &&
               !(strlen(modes[i].name) == len && strncmp(modes[i].name, p, len) == 0))
            i++;
        if (i == sizeof(modes) / sizeof(modes[0])) {
            error_line("Unknown mode %.*s value, expecting 'acpi', 'agent', 'initctl', "
                       "'signal', or 'paravirt'", (int)len, p);
            return -1;
        }
        *flags |= modes[i].flag;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int cmd_shutdown_reboot(shell *sh, const command *cmd, const cmd_args *a)
{
    int reboot = strcmp(cmd->name, "reboot") == 0;
    unsigned int flags = 0;
    if (a->opt_values[0] && parse_mode(a->opt_values[0], &flags) < 0)
        return -1;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    int rc = reboot ? rv_domain_reboot(dom, flags) : rv_domain_shutdown(dom, flags);
    if (rc < 0) {
        error_line("Failed to %s domain '%s'", cmd->name, name);
        lib_error();
    } else {
        printf("Domain '%s' is being %s\n", name, reboot ? "rebooted" : "shutdown");
    }
    rv_domain_free(dom);
    return rc;
}

/* undefine: options as virsh's, in opts_undefine's order. */
static const struct { const char *option; unsigned int flag; } undefine_flags[] = {
    { "managed-save", RV_DOMAIN_UNDEFINE_MANAGED_SAVE },
    { "snapshots-metadata", RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA },
    { "checkpoints-metadata", RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA },
    { "nvram", RV_DOMAIN_UNDEFINE_NVRAM },
    { "keep-nvram", RV_DOMAIN_UNDEFINE_KEEP_NVRAM },
    { "tpm", RV_DOMAIN_UNDEFINE_TPM },
    { "keep-tpm", RV_DOMAIN_UNDEFINE_KEEP_TPM },
};

static int cmd_undefine(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = 0;
    for (size_t i = 0; i < sizeof(undefine_flags) / sizeof(undefine_flags[0]); i++)
        if (has_opt(cmd, a, undefine_flags[i].option))
            flags |= undefine_flags[i].flag;
    if (has_opt(cmd, a, "nvram") && has_opt(cmd, a, "keep-nvram")) {
        error_line("Options --nvram and --keep-nvram are mutually exclusive");
        return -1;
    }
    if (has_opt(cmd, a, "tpm") && has_opt(cmd, a, "keep-tpm")) {
        error_line("Options --tpm and --keep-tpm are mutually exclusive");
        return -1;
    }
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    /* As virsh: a flag with nothing to act on is not sent, so a server
     * that does not know it still undefines the domain. */
    int has_image = rv_domain_has_managed_save_image(dom, 0);
    if ((flags & RV_DOMAIN_UNDEFINE_MANAGED_SAVE) && has_image == 0)
        flags &= ~(unsigned int)RV_DOMAIN_UNDEFINE_MANAGED_SAVE;
    /* ...and without --managed-save virsh refuses an image itself. */
    if (!(flags & RV_DOMAIN_UNDEFINE_MANAGED_SAVE) && has_image > 0) {
        error_line("Refusing to undefine while domain managed save image exists");
        rv_domain_free(dom);
        return -1;
    }
    if ((flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA) && rv_domain_snapshot_num(dom, 0) == 0)
        flags &= ~(unsigned int)RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA;
    int rc = rv_domain_undefine(dom, flags);
    if (rc < 0) {
        error_line("Failed to undefine domain '%s'", name);
        lib_error();
    } else {
        printf("Domain '%s' has been undefined\n", name);
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_reset(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    int rc = rv_domain_reset(dom, 0);
    if (rc < 0) {
        error_line("Failed to reset domain '%s'", name);
        lib_error();
    } else {
        printf("Domain '%s' was reset\n", name);
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_save(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    int rc = rv_domain_save(dom, a->value2);
    if (rc < 0) {
        error_line("Failed to save domain '%s' to %s", name, a->value2);
        lib_error();
    } else {
        /* (virsh's leading newline ends its progress line) */
        printf("\nDomain '%s' saved to %s\n", name, a->value2);
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_restore(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    if (rv_domain_restore(sh->conn, a->value) < 0) {
        error_line("Failed to restore domain from %s", a->value);
        lib_error();
        return -1;
    }
    printf("Domain restored from %s\n", a->value);
    return 0;
}

static int cmd_managedsave(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    int rc = rv_domain_managed_save(dom, 0);
    if (rc < 0) {
        error_line("Failed to save domain '%s' state", name);
        lib_error();
    } else {
        printf("\nDomain '%s' state saved by libvirt\n", name);
    }
    rv_domain_free(dom);
    return rc;
}

/* (virsh prints these two lines without a newline of their own.) */
static int cmd_managedsave_remove(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    int rc = -1, has = rv_domain_has_managed_save_image(dom, 0);
    if (has < 0) {
        error_line("Failed to check for domain managed save image");
        lib_error();
    } else if (has == 0) {
        printf("Domain '%s' has no manage save image; removal skipped", name);
        rc = 0;
    } else if (rv_domain_managed_save_remove(dom, 0) < 0) {
        error_line("Failed to remove managed save image for domain '%s'", name);
        lib_error();
    } else {
        printf("Removed managedsave image for domain '%s'", name);
        rc = 0;
    }
    rv_domain_free(dom);
    return rc;
}

/* A size as virsh reads one: a number in KiB, or with a unit (b, k/KiB,
 * KB (1000), M/MiB, MB, G, T, P, E, likewise); the result in KiB,
 * rounded up. */
static int parse_kib(const char *text, const char *option, unsigned long long *kib)
{
    static const char units[] = "kmgtpe";
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned long long scale = 1024;
    int ok = !errno && end != text && text[0] != '-';
    if (ok && *end) {
        const char *u = strchr(units, tolower((unsigned char)*end));
        if (strcasecmp(end, "b") == 0 || strcasecmp(end, "bytes") == 0) {
            scale = 1;
        } else if (u && *end) {
            unsigned long long base = strcasecmp(end + 1, "b") == 0 ? 1000 : 1024;
            ok = end[1] == '\0' || strcasecmp(end + 1, "b") == 0 || strcasecmp(end + 1, "ib") == 0;
            scale = 1;
            for (const char *k = units; ok && k <= u; k++)
                scale *= base;
        } else {
            ok = 0;
        }
    }
    if (!ok || (scale && v > ULLONG_MAX / scale)) {
        error_line("Scaled numeric value '%s' for <%s> option is malformed or out of range",
                   text, option);
        if (!ok && end != text && *end)
            error_line("invalid argument: unknown suffix '%s'", end);
        return -1;
    }
    *kib = (v * scale + 1023) / 1024;
    return 0;
}

/* setmem and setmaxmem: one call, the maximum a flag; with none of
 * --config, --live, --current, virsh asks for the live domain's memory. */
static int cmd_setmem(shell *sh, const command *cmd, const cmd_args *a)
{
    int maximum = strcmp(cmd->name, "setmaxmem") == 0;
    unsigned int flags;
    unsigned long long kib;
    if (affect_flags(cmd, a, &flags) < 0 || parse_kib(a->value2, "size", &kib) < 0)
        return -1;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    if (!flags && !has_opt(cmd, a, "current") && !maximum)
        flags = RV_DOMAIN_MEM_LIVE;
    int rc = rv_domain_set_memory_flags(dom, kib, flags | (maximum ? RV_DOMAIN_MEM_MAXIMUM : 0));
    if (rc < 0) {
        if (maximum)
            error_line("Unable to change MaxMemorySize");
        lib_error();
    }
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

static int cmd_setvcpus(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags;
    int count;
    if (affect_flags(cmd, a, &flags) < 0)
        return -1;
    if (parse_int(a->value2, &count) < 0) {
        error_line("Numeric value '%s' for <count> option is malformed or out of range",
                   a->value2);
        return -1;
    }
    int maximum = has_opt(cmd, a, "maximum");
    if (maximum)
        flags |= RV_DOMAIN_VCPU_MAXIMUM;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = flags || has_opt(cmd, a, "current") ? rv_domain_set_vcpus_flags(dom, count, flags)
                                                 : rv_domain_set_vcpus(dom, count);
    if (rc < 0)
        lib_error();
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

static int cmd_autostart(shell *sh, const command *cmd, const cmd_args *a)
{
    int disable = has_opt(cmd, a, "disable");
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = rv_domain_get_name(dom);
    int rc = rv_domain_set_autostart(dom, !disable);
    if (rc < 0) {
        error_line("Failed to %smark domain '%s' as autostarted", disable ? "un" : "", name);
        lib_error();
    } else {
        printf("Domain '%s' %smarked as autostarted\n", name, disable ? "un" : "");
    }
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

static const char *const opts_mode[] = { "mode=", NULL };
static const char *const opts_undefine[] = {
    "managed-save", "snapshots-metadata", "checkpoints-metadata", "nvram", "keep-nvram", "tpm",
    "keep-tpm", NULL,
};
static const char *const opts_affect[] = { "config", "live", "current", NULL };
static const char *const opts_setvcpus[] = { "config", "live", "current", "maximum", NULL };

const command rvsh_dommanage_commands[] = {
    { .name = "shutdown", .run = cmd_shutdown_reboot, .arg = "domain", .lookup = BY_ANY,
      .options = opts_mode,
      .summary = "gracefully shut down a domain (--mode acpi,agent,...)" },
    { .name = "reboot", .run = cmd_shutdown_reboot, .arg = "domain", .lookup = BY_ANY,
      .options = opts_mode,
      .summary = "reboot a domain (--mode acpi,agent,...)" },
    { .name = "undefine", .run = cmd_undefine, .arg = "domain", .lookup = BY_ANY,
      .options = opts_undefine,
      .summary = "undefine a domain (--managed-save, --snapshots-metadata, --nvram: with them)" },
    { .name = "reset", .run = cmd_reset, .arg = "domain", .lookup = BY_ANY,
      .summary = "reset a domain as its reset button would" },
    { .name = "save", .run = cmd_save, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "file", .arg2_required = 1,
      .summary = "save a running domain's state to a file and stop it" },
    { .name = "restore", .run = cmd_restore, .arg = "file",
      .summary = "start a domain from a file save wrote" },
    { .name = "managedsave", .run = cmd_managedsave, .arg = "domain", .lookup = BY_ANY,
      .summary = "save a running domain's state where start finds it" },
    { .name = "managedsave-remove", .run = cmd_managedsave_remove, .arg = "domain",
      .lookup = BY_ANY,
      .summary = "remove a domain's managed save image" },
    { .name = "setmem", .run = cmd_setmem, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "size", .arg2_required = 1, .options = opts_affect,
      .summary = "change a domain's memory (KiB, or with a unit)" },
    { .name = "setmaxmem", .run = cmd_setmem, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "size", .arg2_required = 1, .options = opts_affect,
      .summary = "change a domain's maximum memory (KiB, or with a unit)" },
    { .name = "setvcpus", .run = cmd_setvcpus, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "count", .arg2_required = 1, .options = opts_setvcpus,
      .summary = "change how many virtual CPUs a domain has" },
    { .name = "autostart", .run = cmd_autostart, .arg = "domain", .lookup = BY_ANY,
      .options = opts_disable,
      .summary = "start a domain with the host (--disable: not)" },
    { .name = NULL },
};
