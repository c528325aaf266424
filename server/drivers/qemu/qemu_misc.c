/* The QEMU driver's smaller calls that admins' virsh makes:
 *   - DOMAIN_GET_SECURITY_LABEL(_LIST): the none driver's empty label;
 *     the list: one label per security driver of a
 *     running domain, as libvirtd 9.0 with security_driver "none" answers
 *     (the none driver's empty label, then DAC's "+UID:+GID" of the user
 *     QEMU runs as: remvirtd's own); none for a domain that is shut off;
 *   - CONNECT_DOMAIN_XML_TO_NATIVE "qemu-argv": the command line this
 *     driver's builder (command.c) would run to start the domain, as one
 *     shell-quoted string (the environment's words first);
 *   - DOMAIN_START_DIRTY_RATE_CALC: QMP calc-dirty-rate, page sampling or
 *     (KVM) a dirty bitmap, answered once QEMU has taken it; domstats
 *     --dirtyrate reads the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/qemu_driver.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* ================================================================ security labels */

static int label_put(rv_domain_get_security_label_ret *l, const char *text, rv_err *err)
{
    if (!(l->label.label_val = strdup(text)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    l->label.label_len = (u_int)strlen(text) + 1;     /* with its NUL */
    l->enforcing = 0;
    return 0;
}

/* The none driver's label: libvirtd's for every domain. */
int rv_qemu_domain_get_security_label(rv_driver_conn *c,
                                      const rv_domain_get_security_label_args *args,
                                      rv_domain_get_security_label_ret *ret, rv_err *err)
{
    (void)c;
    if (!rv_qemu_dom_get(&args->dom, err))
        return -1;
    return label_put(ret, "", err);
}

int rv_qemu_domain_get_security_label_list(rv_driver_conn *c,
                                           const rv_domain_get_security_label_list_args *args,
                                           rv_domain_get_security_label_list_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (!rv_qemu_dom_active(d))
        return 0;
    char dac[48];
    snprintf(dac, sizeof(dac), "+%u:+%u", (unsigned)geteuid(), (unsigned)getegid());
    if (!(ret->labels.labels_val = calloc(2, sizeof(*ret->labels.labels_val))))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    /* (The dispatcher frees what the reply holds, also after a failure.) */
    const char *const texts[2] = { "", dac };
    for (int i = 0; i < 2; i++) {
        if (label_put(&ret->labels.labels_val[i], texts[i], err) < 0)
            return -1;
        ret->labels.labels_len++;
    }
    ret->ret = 2;
    return 0;
}

/* ================================================================ XML to native */

/* Whether word needs quotes for a POSIX shell. */
static bool shell_plain(const char *word)
{
    if (!*word)
        return false;
    for (const char *p = word; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("-_./,:=+@%^", *p)))
            return false;
    return true;
}

/* word, single-quoted when it must be ('\'' for a quote inside). */
static void shell_word(FILE *fp, const char *word)
{
    if (shell_plain(word)) {
        fputs(word, fp);
        return;
    }
    fputc('\'', fp);
    for (const char *p = word; *p; p++)
        fputs(*p == '\'' ? "'\\''" : (char[2]){ *p, 0 }, fp);
    fputc('\'', fp);
}

int rv_qemu_connect_domain_xml_to_native(rv_driver_conn *c,
                                         const rv_connect_domain_xml_to_native_args *args,
                                         rv_connect_domain_xml_to_native_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuConnectDomainXMLToNative", err) < 0)
        return -1;
    if (strcmp(args->nativeFormat, "qemu-argv") != 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: unsupported config type %s",
                    args->nativeFormat);
    rv_qemu_domain_def *def = rv_qemu_parse_def(args->domainXml, err);
    if (!def)
        return -1;
    char **argv = rv_qemu_start_argv(def, err);
    char *text = NULL;
    size_t len = 0;
    FILE *fp = argv ? open_memstream(&text, &len) : NULL;
    if (argv && !fp)
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
    for (char **a = argv; fp && *a; a++) {
        if (a != argv)
            fputc(' ', fp);
        shell_word(fp, *a);
    }
    int rc = -1;
    if (fp && fclose(fp) == 0 && text) {
        ret->nativeConfig = text;
        text = NULL;
        rc = 0;
    } else if (fp) {
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    free(text);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    return rc;
}

/* ================================================================ dirty rate */

/* libvirtd's bounds for a measurement's length, in seconds. */
#define DIRTY_RATE_MIN 1
#define DIRTY_RATE_MAX 60

/* The calculation's modes (flags); none: page sampling. */
enum { DIRTY_BITMAP = 0x1, DIRTY_RING = 0x2 };

int rv_qemu_domain_start_dirty_rate_calc(rv_driver_conn *c,
                                         const rv_domain_start_dirty_rate_calc_args *args,
                                         rv_err *err)
{
    (void)c;
    unsigned int flags = args->flags;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, DIRTY_BITMAP | DIRTY_RING,
                            "qemuDomainStartDirtyRateCalc", err) < 0)
        return -1;
    if ((flags & DIRTY_BITMAP) && (flags & DIRTY_RING))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "Flags 'VIR_DOMAIN_DIRTYRATE_MODE_DIRTY_BITMAP' and "
                           "'VIR_DOMAIN_DIRTYRATE_MODE_DIRTY_RING' are mutually exclusive");
    if (args->seconds < DIRTY_RATE_MIN || args->seconds > DIRTY_RATE_MAX)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: seconds=%d is "
                    "invalid, please choose value within [%d, %d].", args->seconds,
                    DIRTY_RATE_MIN, DIRTY_RATE_MAX);
    /* (libvirtd's "not running" comes from its domain code here.) */
    qemu_dom *d = rv_qemu_dom_get_active(&args->dom, err);
    if (!d)
        return -1;
    /* remvirt's XML has no <kvm><dirty-ring>: never enabled. */
    if (flags & DIRTY_RING)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: dirty-ring "
                    "calculation mode requires dirty-ring feature enabled.");
    /* Seen with QEMU 7.2 under TCG: the process dies (libvirtd's guest
     * too: "Unable to read from monitor"). */
    if ((flags & DIRTY_BITMAP) && (d->live->accel == RV_QEMU_VIRT_QEMU || !rv_qemu.kvm))
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: QEMU under "
                    "TCG crashes measuring the dirty rate with a dirty bitmap: use page "
                    "sampling");
    int rc = rv_qemu_need_monitor(d, err);
    if (rc != 0)
        return rc;
    json_object *cmd = json_object_new_object();
    if (!cmd || json_object_object_add(cmd, "calc-time", json_object_new_int(args->seconds)) < 0 ||
        ((flags & DIRTY_BITMAP) &&
         json_object_object_add(cmd, "mode", json_object_new_string("dirty-bitmap")) < 0)) {
        json_object_put(cmd);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    return rv_qemu_live_void(d, "calc-dirty-rate", cmd, err);
}
