/* DOMAIN_SET_METADATA, DOMAIN_GET_METADATA and DOMAIN_IS_UPDATED on the
 * QEMU driver: <title> and <description> of the live definition (in
 * memory, as the live definition's other changes) and/or the persistent
 * one (written durably first, then answered), with libvirtd's choice of
 * definitions and its errors.  DOMAIN_SET_LIFECYCLE_ACTION the same way
 * (a live on_reboot of destroy or restart is QEMU's too: set-action), and
 * DOMAIN_SET_PERF_EVENTS (<perf>; an event the host cannot count is
 * refused live as libvirtd refuses it, the others recorded: remvirtd
 * gives no perf statistics).
 * The checks are shared with the test driver (conf/domain_xml.c). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"

#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.metadata");

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

typedef struct metadata_change {
    int type;
    const char *text;
} metadata_change;

static int to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const metadata_change *ch = ctx;
    return rv_domain_metadata_set(&def->base, ch->type, ch->text, err);
}

/* libvirt's virDomainObjGetDefs: neither flag is the live definition of a
 * running domain, else the persistent one. */
static int pick(qemu_dom *d, unsigned int flags, bool *live, bool *config, rv_err *err)
{
    bool active = rv_qemu_dom_active(d);
    if (!(flags & (AFFECT_LIVE | AFFECT_CONFIG)))
        flags |= active ? AFFECT_LIVE : AFFECT_CONFIG;
    *live = flags & AFFECT_LIVE;
    *config = flags & AFFECT_CONFIG;
    if (*live && !active)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if (*config && !d->def)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: transient domains do not have "
                           "any persistent config");
    return 0;
}

int rv_qemu_domain_set_metadata(rv_driver_conn *c, const rv_domain_set_metadata_args *args,
                                rv_err *err)
{
    (void)c;
    metadata_change ch = { .type = args->type, .text = args->metadata ? *args->metadata : NULL };
    bool live, config;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainSetMetadata", err) < 0 ||
        rv_domain_metadata_check(args->type, ch.text, args->key ? *args->key : NULL,
                                 args->uri ? *args->uri : NULL, RV_FROM_QEMU, err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)) || pick(d, args->flags, &live, &config, err) < 0)
        return -1;
    const char *nsuri = args->uri ? *args->uri : NULL;
    if (!config) {
        if (rv_domain_metadata_set(&d->live->base, ch.type, ch.text, err) < 0)
            return -1;
        rv_qemu_emit_metadata_change(d, ch.type, nsuri);
        return 0;
    }
    /* The definition first: a live change is not undone when its write
     * fails, so it waits for the write's success. */
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    rv_err werr = { 0 };
    if (rv_qemu_def_change_no_event(d, to_config, &ch, reply, &werr) < 0) {
        rv_deferred_finish(reply, &werr);
        rv_err_clear(&werr);
        return RV_DEFERRED;
    }
    rv_qemu_emit_metadata_change(d, ch.type, nsuri);
    /* Written or queued: the live one follows now (its own copy). */
    if (live && rv_domain_metadata_set(&d->live->base, ch.type, ch.text, &werr) < 0)
        rv_err_clear(&werr);    /* out of memory: the live title stays as it was */
    return RV_DEFERRED;
}

int rv_qemu_domain_get_metadata(rv_driver_conn *c, const rv_domain_get_metadata_args *args,
                                rv_domain_get_metadata_ret *ret, rv_err *err)
{
    (void)c;
    bool live, config;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainGetMetadata", err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    if ((args->flags & AFFECT_LIVE) && (args->flags & AFFECT_CONFIG))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "Flags 'VIR_DOMAIN_AFFECT_LIVE' and 'VIR_DOMAIN_AFFECT_CONFIG' are "
                           "mutually exclusive");
    if (pick(d, args->flags, &live, &config, err) < 0)
        return -1;
    const rv_qemu_domain_def *def = live ? d->live : rv_qemu_def_newest(d);
    return rv_domain_metadata_get(&def->base, args->type, args->uri ? *args->uri : NULL,
                                  &ret->metadata, err);
}

/* libvirtd's QEMU driver marks no domain updated either. */
int rv_qemu_domain_is_updated(rv_driver_conn *c, const rv_domain_is_updated_args *args,
                              rv_domain_is_updated_ret *ret, rv_err *err)
{
    (void)c;
    ret->updated = 0;
    return rv_qemu_dom_get(&args->dom, err) ? 0 : -1;
}

/* ---- DOMAIN_SET_LIFECYCLE_ACTION ---- */

typedef struct lifecycle_change {
    unsigned int type, action;
    bool config;
    char *name;                 /* (a live change under way) */
    rv_deferred *reply;
} lifecycle_change;

static int lifecycle_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const lifecycle_change *ch = ctx;
    (void)err;
    rv_domain_lifecycle_set(&def->base, ch->type, ch->action);
    return 0;
}

/* The live definition takes the action (recorded for a reattach), then
 * the persistent one when asked: reply (taken) answered once it is
 * durable, or at once. */
static void lifecycle_apply(qemu_dom *d, bool live, const lifecycle_change *ch, rv_deferred *reply)
{
    rv_err err = { 0 };
    if (live) {
        rv_domain_lifecycle_set(&d->live->base, ch->type, ch->action);
        if (rv_qemu_save_status(d, &err) < 0)
            RV_WARN("domain '%s': %s", d->live->name, err.message);
        rv_err_clear(&err);
    }
    if (!ch->config)
        rv_deferred_finish(reply, NULL);
    else if (rv_qemu_def_change(d, lifecycle_to_config, ch, reply, &err) < 0)
        rv_deferred_finish(reply, &err);
    rv_err_clear(&err);
}

static void on_set_action(rv_qmp *qmp, json_object *ret, const rv_err *qerr, void *opaque)
{
    (void)ret;
    lifecycle_change *ch = opaque;
    qemu_dom *d = rv_qemu_find_name(ch->name);
    if (qerr)
        rv_deferred_finish(ch->reply, qerr);
    else if (!d || d->qmp != qmp || !d->live)
        rv_qemu_finish_error(ch->reply, RV_ERR_OPERATION_INVALID,
                             "Requested operation is not valid: domain is not running");
    else
        lifecycle_apply(d, true, ch, ch->reply);
    free(ch->name);
    free(ch);
}

/* libvirtd's QEMU driver's refusals for def, and remvirtd's: it runs no
 * core dump on a crash. */
static int lifecycle_allowed(const rv_qemu_domain_def *def, unsigned int type, unsigned int action,
                             rv_err *err)
{
    if (action == RV_DOMAIN_ACTION_PRESERVE && type != RV_DOMAIN_LIFECYCLE_CRASH)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: qemu driver doesn't support the 'preserve' action "
                    "for 'on_reboot'/'on_poweroff'");
    if (action == RV_DOMAIN_ACTION_RENAME_RESTART)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: qemu driver doesn't support the 'rename-restart' "
                    "action for 'on_reboot'/'on_poweroff'/'on_crash'");
    if ((type == RV_DOMAIN_LIFECYCLE_REBOOT && action == RV_DOMAIN_ACTION_DESTROY &&
         def->on_poweroff == RV_DOMAIN_ACTION_RESTART) ||
        (type == RV_DOMAIN_LIFECYCLE_POWEROFF && action == RV_DOMAIN_ACTION_RESTART &&
         def->on_reboot == RV_DOMAIN_ACTION_DESTROY))
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,       /* (libvirtd's words, quote and all) */
                    "unsupported configuration: qemu driver doesn't support 'onReboot' set to "
                    "'destroy and 'onPoweroff' set to 'reboot'");
    if (action == RV_DOMAIN_ACTION_COREDUMP_DESTROY || action == RV_DOMAIN_ACTION_COREDUMP_RESTART)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: unsupported <on_crash> action '%s' (remvirtd "
                    "makes no core dump on a crash)", rv_domain_action_words[action]);
    return 0;
}

int rv_qemu_domain_set_lifecycle_action(rv_driver_conn *c,
                                        const rv_domain_set_lifecycle_action_args *args,
                                        rv_err *err)
{
    (void)c;
    bool live, config;
    qemu_dom *d;
    if (rv_domain_lifecycle_check(args->type, args->action, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainSetLifecycleAction", err) < 0 ||
        rv_domain_lifecycle_allowed(args->type, args->action, err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)) || pick(d, args->flags, &live, &config, err) < 0 ||
        (live && lifecycle_allowed(d->live, args->type, args->action, err) < 0) ||
        (config && lifecycle_allowed(rv_qemu_def_newest(d), args->type, args->action, err) < 0))
        return -1;
    lifecycle_change now = { .type = args->type, .action = args->action, .config = config };
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    /* QEMU reboots or stops on a guest's reset (-no-reboot at start);
     * remvirtd acts on the other events' actions itself. */
    bool qemu_too = live && args->type == RV_DOMAIN_LIFECYCLE_REBOOT &&
                    d->live->on_reboot != (int)args->action &&
                    (args->action == RV_DOMAIN_ACTION_DESTROY ||
                     args->action == RV_DOMAIN_ACTION_RESTART);
    if (!qemu_too) {
        lifecycle_apply(d, live, &now, reply);
        return RV_DEFERRED;
    }
    lifecycle_change *ch = malloc(sizeof(*ch));
    json_object *qargs = json_object_new_object();
    if (!ch || !qargs || !(now.name = strdup(d->live->name))) {
        free(ch);
        json_object_put(qargs);
        rv_qemu_finish_error(reply, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    *ch = now;
    ch->reply = reply;
    json_object_object_add(qargs, "reboot", json_object_new_string(
                               args->action == RV_DOMAIN_ACTION_DESTROY ? "shutdown" : "reset"));
    if (!rv_qemu_send_for(d, reply, "set-action", qargs, on_set_action, ch)) {
        free(ch->name);
        free(ch);
    }
    return RV_DEFERRED;
}

/* ---- DOMAIN_SET_PERF_EVENTS ---- */

int rv_qemu_perf_check(const char *event, rv_err *err)
{
    /* libvirt's kinds of event: after cmt, mbmt and mbml (Intel CMT/MBM,
     * a sysfs PMU), the hardware ones, then the software ones. */
    int i = 0;
    while (i < RV_TUNE_PERF_EVENTS && strcmp(rv_tune_perf_names[i], event) != 0)
        i++;
    int error = ENOENT;
    if (i >= 3 && i < RV_TUNE_PERF_EVENTS) {
        struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1,
                                        .type = i < 13 ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
                                        .config = (unsigned)(i < 13 ? i - 3 : i - 13) };
        long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
        error = fd < 0 ? errno : 0;
        if (fd >= 0)
            close((int)fd);
    } else if (access("/sys/devices/intel_cqm/type", R_OK) == 0) {
        error = 0;
    }
    if (error)
        return rv_err_fail(err, RV_FROM_PERF, RV_ERR_SYSTEM_ERROR,
                           "unable to open host cpu perf event for %s: %s", event, strerror(error));
    return 0;
}

typedef struct perf_change {
    const rv_typed_param *params;
    u_int n;
} perf_change;

static int perf_to_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const perf_change *ch = ctx;
    (void)err;
    rv_domain_perf_set(&def->base, ch->params, ch->n);
    return 0;
}

int rv_qemu_domain_set_perf_events(rv_driver_conn *c, const rv_domain_set_perf_events_args *args,
                                   rv_err *err)
{
    (void)c;
    perf_change ch = { args->params.params_val, args->params.params_len };
    bool live, config;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                            "qemuDomainSetPerfEvents", err) < 0 ||
        rv_domain_perf_check(ch.params, ch.n, err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)) || pick(d, args->flags, &live, &config, err) < 0)
        return -1;
    for (u_int i = 0; live && i < ch.n; i++)
        if (ch.params[i].value.rv_typed_param_value_u.b)
            if (rv_qemu_perf_check(ch.params[i].field, err) < 0)
                return -1;
    if (live) {
        rv_domain_perf_set(&d->live->base, ch.params, ch.n);
        if (rv_qemu_save_status(d, err) < 0)
            RV_WARN("domain '%s': %s", d->live->name, err->message);
        rv_err_clear(err);
    }
    if (!config)
        return 0;
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    rv_err werr = { 0 };
    if (rv_qemu_def_change(d, perf_to_config, &ch, reply, &werr) < 0)
        rv_deferred_finish(reply, &werr);
    rv_err_clear(&werr);
    return RV_DEFERRED;
}
