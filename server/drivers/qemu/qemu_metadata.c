/* DOMAIN_SET_METADATA, DOMAIN_GET_METADATA and DOMAIN_IS_UPDATED on the
 * QEMU driver: <title> and <description> of the live definition (in
 * memory, as the live definition's other changes) and/or the persistent
 * one (written durably first, then answered), with libvirtd's choice of
 * definitions and its errors.  The checks are shared with the test driver
 * (conf/domain_xml.c). */
#include <stdlib.h>

#include "server/drivers/qemu/qemu_driver.h"

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
