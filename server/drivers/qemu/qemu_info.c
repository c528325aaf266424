/* What the QEMU driver says about a domain's control channel and perf
 * events, and about the host's SMBIOS: the answers libvirtd's QEMU driver
 * gives, the perf events its <perf> names (remvirtd counts nothing).
 * IOThreads: qemu_iothread.c. */
#include <stdlib.h>
#include <unistd.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2, TYPED_PARAM_STRING_OKAY = 0x4 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)


/* libvirt's domain-object layer refuses these, not its QEMU driver. */
static int not_running(rv_err *err)
{
    return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                       "Requested operation is not valid: domain is not running");
}

int rv_qemu_domain_get_control_info(rv_driver_conn *c, const rv_domain_get_control_info_args *args,
                                    rv_domain_get_control_info_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetControlInfo", err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    if (!rv_qemu_dom_active(d))
        return not_running(err);
    /* "ok": a call waiting on the monitor here waits in the loop, never
     * in the caller's thread, so the channel is never seen occupied. */
    ret->state = 0;
    ret->details = 0;
    ret->stateTime = 0;
    return 0;
}

int rv_qemu_domain_get_perf_events(rv_driver_conn *c, const rv_domain_get_perf_events_args *args,
                                   rv_domain_get_perf_events_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY,
                            "qemuDomainGetPerfEvents", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0)
        return -1;
    qemu_dom *d;
    bool live;
    int rc = rv_qemu_pick_getter(&args->dom, args->flags, &d, &live, err);
    if (rc)
        return rc;
    const rv_qemu_domain_def *def = live ? d->live : rv_qemu_def_newest(d);
    return rv_domain_perf_get(&def->base, &ret->params.params_val, &ret->params.params_len, err);
}

/* libvirtd reads the host's SMBIOS with dmidecode once, at start; without
 * the tables (a VM without SMBIOS, a container without /dev/mem) it has
 * none to give.  remvirtd does not decode the tables, so it can only be
 * libvirtd's equal where there are none. */
int rv_qemu_connect_get_sysinfo(rv_driver_conn *c, const rv_connect_get_sysinfo_args *args,
                                rv_connect_get_sysinfo_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuConnectGetSysinfo", err) < 0)
        return -1;
    if (access("/sys/firmware/dmi/tables/DMI", R_OK) == 0 || access("/dev/mem", R_OK) == 0)
        return fail(err, RV_ERR_NO_SUPPORT, "this function is not supported by the connection driver: "
                    "remvirtd does not decode the host's SMBIOS tables");
    return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                "unsupported configuration: Host SMBIOS information is not available");
}
