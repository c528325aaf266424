#include "server/drivers/driver.h"

#include <stdlib.h>
#include <string.h>

const rv_driver *const rv_drivers[] = { &rv_test_driver, &rv_qemu_driver, NULL };

int rv_drivers_busy(void)
{
    for (size_t i = 0; rv_drivers[i]; i++)
        if (rv_drivers[i]->busy && rv_drivers[i]->busy())
            return 1;
    return 0;
}

/* The daemon has one loop thread and one sink (the event fan-out). */
static rv_lifecycle_sink lifecycle_sink;
static void *lifecycle_sink_opaque;

void rv_driver_set_lifecycle_sink(rv_lifecycle_sink sink, void *opaque)
{
    lifecycle_sink = sink;
    lifecycle_sink_opaque = opaque;
}

void rv_driver_lifecycle_event(const rv_driver *drv, const rv_dom_ref *dom, int event,
                               int detail)
{
    if (lifecycle_sink)
        lifecycle_sink(drv, dom, event, detail, lifecycle_sink_opaque);
}

static rv_domain_event_sink domain_event_sink;
static void *domain_event_sink_opaque;

void rv_driver_set_domain_event_sink(rv_domain_event_sink sink, void *opaque)
{
    domain_event_sink = sink;
    domain_event_sink_opaque = opaque;
}

void rv_driver_dom_event(const rv_driver *drv, const rv_dom_ref *dom, const rv_dom_event *ev)
{
    if (domain_event_sink)
        domain_event_sink(drv, dom, ev, domain_event_sink_opaque);
}

void rv_driver_domain_event(const rv_driver *drv, const rv_dom_ref *dom, int event_id)
{
    rv_dom_event ev = { .id = event_id };
    rv_driver_dom_event(drv, dom, &ev);
}

void rv_driver_device_event(const rv_driver *drv, const rv_dom_ref *dom, int event_id,
                            const char *alias)
{
    rv_dom_event ev = { .id = event_id };
    /* The three device events share one layout. */
    ev.u.device_added.msg.devAlias = (char *)alias;
    rv_driver_dom_event(drv, dom, &ev);
}

void rv_driver_metadata_event(const rv_driver *drv, const rv_dom_ref *dom, int type,
                              const char *nsuri)
{
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_METADATA_CHANGE };
    ev.u.metadata_change.type = type;
    ev.u.metadata_change.nsuri = nsuri ? (char **)&nsuri : NULL;
    rv_driver_dom_event(drv, dom, &ev);
}

void rv_driver_block_job_event(const rv_driver *drv, const rv_dom_ref *dom, const char *path,
                               const char *target, int type, int status)
{
    if (path) {
        rv_dom_event one = { .id = RV_DOMAIN_EVENT_ID_BLOCK_JOB };
        one.u.block_job.msg.path = (char *)path;
        one.u.block_job.msg.type = type;
        one.u.block_job.msg.status = status;
        rv_driver_dom_event(drv, dom, &one);
    }
    rv_dom_event two = { .id = RV_DOMAIN_EVENT_ID_BLOCK_JOB_2 };
    two.u.block_job_2.dst = (char *)target;
    two.u.block_job_2.type = type;
    two.u.block_job_2.status = status;
    rv_driver_dom_event(drv, dom, &two);
}

static rv_network_sink network_sink;
static void *network_sink_opaque;

void rv_driver_set_network_sink(rv_network_sink sink, void *opaque)
{
    network_sink = sink;
    network_sink_opaque = opaque;
}

void rv_driver_network_event(const rv_driver *drv, const char *name,
                             const unsigned char uuid[16], int event, int detail)
{
    if (network_sink)
        network_sink(drv, name, uuid, event, detail, network_sink_opaque);
}

static rv_pool_sink pool_sink;
static void *pool_sink_opaque;

void rv_driver_set_pool_sink(rv_pool_sink sink, void *opaque)
{
    pool_sink = sink;
    pool_sink_opaque = opaque;
}

void rv_driver_pool_event(const rv_driver *drv, const char *name, const unsigned char uuid[16],
                          int event_id, int event, int detail)
{
    if (pool_sink)
        pool_sink(drv, name, uuid, event_id, event, detail, pool_sink_opaque);
}

static rv_nodedev_sink nodedev_sink;
static void *nodedev_sink_opaque;

void rv_driver_set_nodedev_sink(rv_nodedev_sink sink, void *opaque)
{
    nodedev_sink = sink;
    nodedev_sink_opaque = opaque;
}

void rv_driver_nodedev_event(const rv_driver *drv, const char *name, int event)
{
    if (nodedev_sink)
        nodedev_sink(drv, name, event, nodedev_sink_opaque);
}

static rv_secret_sink secret_sink;
static void *secret_sink_opaque;

void rv_driver_set_secret_sink(rv_secret_sink sink, void *opaque)
{
    secret_sink = sink;
    secret_sink_opaque = opaque;
}

void rv_driver_secret_event(const rv_driver *drv, const rv_nonnull_secret *secret, int event_id,
                            int event)
{
    if (secret_sink)
        secret_sink(drv, secret, event_id, event, secret_sink_opaque);
}

int rv_driver_check_core_dump(unsigned int flags, unsigned int format, rv_err *err)
{
    if ((flags & RV_DUMP_CRASH) && (flags & (RV_DUMP_LIVE | RV_DUMP_RESET)))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "Flags 'VIR_DUMP_CRASH' and 'VIR_DUMP_%s' are mutually exclusive",
                           flags & RV_DUMP_LIVE ? "LIVE" : "RESET");
    if (format > RV_DOMAIN_CORE_DUMP_FORMAT_WIN_DMP)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "dumpformat '%u' is not supported", format);
    return 0;
}

void rv_driver_job_completed_event(const rv_driver *drv, const rv_dom_ref *dom,
                                   const rv_typed_param *params, unsigned int nparams)
{
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_JOB_COMPLETED };
    /* (XDR encodes from the list; it does not change it) */
    ev.u.job_completed.params.params_len = nparams;
    ev.u.job_completed.params.params_val = (rv_typed_param *)params;
    rv_driver_dom_event(drv, dom, &ev);
}

void rv_dom_ref_clear(rv_dom_ref *ref)
{
    free(ref->name);
    memset(ref, 0, sizeof(*ref));
    ref->id = -1;
}

void rv_dom_refs_free(rv_dom_ref *refs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(refs[i].name);
    free(refs);
}

void rv_dom_stats_free(rv_dom_stats *stats, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(stats[i].dom.name);
        for (size_t j = 0; j < stats[i].nparams; j++) {
            free(stats[i].params[j].field);
            if (stats[i].params[j].type == 7)
                free(stats[i].params[j].v.s);
        }
        free(stats[i].params);
    }
    free(stats);
}

rv_dom_ref rv_dom_ref_from_wire(const rv_nonnull_domain *wire)
{
    rv_dom_ref ref = { .name = wire->name, .id = wire->id };
    memcpy(ref.uuid, wire->uuid, sizeof(ref.uuid));
    return ref;
}

void rv_dom_ref_to_wire(rv_nonnull_domain *wire, rv_dom_ref *ref)
{
    wire->name = ref->name;
    memcpy(wire->uuid, ref->uuid, sizeof(wire->uuid));
    wire->id = ref->id;
    ref->name = NULL;
}

int rv_driver_check_flags(int from, unsigned int flags, unsigned int known, const char *func,
                          rv_err *err)
{
    if (flags & ~known)
        return rv_err_fail(err, from, RV_ERR_INVALID_ARG,
                           "unsupported flags (0x%x) in function %s", flags & ~known, func);
    return 0;
}

int rv_driver_rename_name_check(const char *name, rv_err *err)
{
    if (!name)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: new_name in virDomainRename must not be NULL");
    if (!*name)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "string new_name in virDomainRename must not be empty");
    return 0;
}

int rv_dom_ref_put(int rc, rv_dom_ref *ref, rv_nonnull_domain *wire)
{
    if (rc < 0)
        return -1;
    rv_dom_ref_to_wire(wire, ref);
    return 0;
}

int rv_string_result(int rc, char **slot, rv_err *err)
{
    if (rc < 0 || !*slot || strlen(*slot) <= RV_STRING_MAX)
        return rc;
    rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
               "a reply string of %zu bytes exceeds the protocol's limit of %d",
               strlen(*slot), RV_STRING_MAX);
    free(*slot);
    *slot = NULL;
    return -1;
}

const rv_driver *rv_driver_for_uri(const char *uri, rv_err *err)
{
    if (!uri)
        return rv_drivers[0];
    for (size_t i = 0; rv_drivers[i]; i++)
        if (rv_drivers[i]->probe(uri))
            return rv_drivers[i];
    rv_err_set(err, RV_FROM_NONE, RV_ERR_NO_CONNECT,
               "no connection driver available for %s", uri);
    return NULL;
}
