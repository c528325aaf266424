/* Migration tuning on the QEMU driver, as libvirtd 9.0's QEMU driver
 * does it: DOMAIN_MIGRATE_SET/GET_MAX_DOWNTIME (QEMU's downtime-limit,
 * ms), SET/GET_MAX_SPEED (max-bandwidth, and with the POSTCOPY flag
 * max-postcopy-bandwidth: MiB/s on the wire, bytes/s to QEMU),
 * SET/GET_COMPRESSION_CACHE (xbzrle-cache-size, bytes) and
 * START_POST_COPY (migrate-start-postcopy).
 *
 * Setters send migrate-set-parameters with the one value; QEMU checks its
 * ranges and its refusal is the call's error.  The getters ask QEMU
 * (query-migrate-parameters), but for the pre-copy bandwidth: remvirtd
 * keeps it in the domain's migtune (qemu_driver.h), shut off or running,
 * as libvirtd keeps its own copy; it is what an outgoing migration will
 * use, and QEMU's own max-bandwidth is only changed by a live set, and
 * by a save or dump to a file, which runs unlimited and puts the kept
 * value in QEMU after (as libvirtd's). */
#include <stdint.h>
#include <stdlib.h>

#include "server/drivers/qemu/qemu_driver.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)
#define MIB (1024ull * 1024)

/* The running domain whose monitor the call needs: 0, RV_DEFERRED (it
 * waits for the monitor) or -1 (not running: libvirtd's check of the
 * domain object). */
static int running(const rv_nonnull_domain *wire, qemu_dom **d, rv_err *err)
{
    if (!(*d = rv_qemu_dom_get_active(wire, err)))
        return -1;
    return rv_qemu_need_monitor(*d, err);
}

/* ---------------------------------------------------------------- for a migration */

json_object *rv_qemu_migtune_bandwidth_args(unsigned long long mib)
{
    json_object *args = json_object_new_object();
    if (args)
        json_object_object_add(args, "max-bandwidth", json_object_new_uint64(mib * MIB));
    return args;
}

static void ignore_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret, (void)opaque;
    (void)err;      /* (libvirtd ignores it too) */
}

void rv_qemu_migtune_put_bandwidth(qemu_dom *d)
{
    json_object *args = rv_qemu_migtune_bandwidth_args(d->migtune.max_bandwidth);
    rv_err ignored = { 0 };
    if (args && d->qmp)
        rv_qmp_command(d->qmp, "migrate-set-parameters", args, 0, ignore_reply, NULL, &ignored);
    else
        json_object_put(args);
    rv_err_clear(&ignored);
}

/* ---------------------------------------------------------------- setters */

typedef struct set_req {
    rv_qemu_live_req live;
    unsigned long long keep_mib;    /* the pre-copy bandwidth to keep once QEMU has it */
    bool keep;
} set_req;

static void set_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    set_req *req = opaque;
    if (err)
        rv_qemu_finish_qmp_error(req->live.reply, err);
    else if (rv_qemu_live_req_alive(&req->live, qmp, NULL)) {
        if (req->keep)
            rv_qemu_find_name(req->live.name)->migtune.max_bandwidth = req->keep_mib;
        rv_deferred_finish(req->live.reply, NULL);
    }
    free(req->live.name);
    free(req);
}

/* migrate-set-parameters { key: value } to running d. */
static int set_param(qemu_dom *d, const char *key, uint64_t value, bool keep, rv_err *err)
{
    json_object *args = json_object_new_object();
    set_req *req = args ? rv_qemu_live_req_new(sizeof(*req), d, err) : NULL;
    if (!req) {
        json_object_put(args);
        return args ? -1 : fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    json_object_object_add(args, key, json_object_new_uint64(value));
    req->keep = keep;
    req->keep_mib = value / MIB;
    if (!rv_qemu_send_for(d, req->live.reply, "migrate-set-parameters", args, set_done, req)) {
        free(req->live.name);
        free(req);
    }
    return RV_DEFERRED;
}

int rv_qemu_domain_migrate_set_max_downtime(rv_driver_conn *c,
                                            const rv_domain_migrate_set_max_downtime_args *args,
                                            rv_err *err)
{
    (void)c;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainMigrateSetMaxDowntime", err) < 0)
        return -1;
    if ((rc = running(&args->dom, &d, err)) != 0)
        return rc;
    return set_param(d, "downtime-limit", args->downtime, false, err);
}

int rv_qemu_domain_migrate_set_max_speed(rv_driver_conn *c,
                                         const rv_domain_migrate_set_max_speed_args *args,
                                         rv_err *err)
{
    (void)c;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_MIGRATE_MAX_SPEED_POSTCOPY,
                            "qemuDomainMigrateSetMaxSpeed", err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    bool postcopy = args->flags & RV_DOMAIN_MIGRATE_MAX_SPEED_POSTCOPY;
    /* In bytes/s QEMU takes up to INT64_MAX for max-bandwidth, UINT64_MAX
     * for max-postcopy-bandwidth. */
    unsigned long long max = postcopy ? UINT64_MAX / MIB : RV_QEMU_MIG_BANDWIDTH_MAX;
    if (args->bandwidth > max)
        return fail(err, RV_ERR_OVERFLOW, "numerical overflow: bandwidth must be less than %llu",
                    max + 1);
    if (!postcopy && !rv_qemu_dom_active(d)) {
        d->migtune.max_bandwidth = args->bandwidth;
        return 0;
    }
    if ((rc = running(&args->dom, &d, err)) != 0)
        return rc;
    return set_param(d, postcopy ? "max-postcopy-bandwidth" : "max-bandwidth",
                     args->bandwidth * MIB, !postcopy, err);
}

int rv_qemu_domain_migrate_set_compression_cache(
    rv_driver_conn *c, const rv_domain_migrate_set_compression_cache_args *args, rv_err *err)
{
    (void)c;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainMigrateSetCompressionCache",
                            err) < 0)
        return -1;
    if ((rc = running(&args->dom, &d, err)) != 0)
        return rc;
    return set_param(d, "xbzrle-cache-size", args->cacheSize, false, err);
}

/* ---------------------------------------------------------------- getters */

typedef enum { GET_DOWNTIME, GET_POSTCOPY_SPEED, GET_CACHE } get_what;

typedef struct get_req {
    rv_qemu_live_req live;
    get_what what;
} get_req;

static void get_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    get_req *req = opaque;
    static const char *const keys[] = { "downtime-limit", "max-postcopy-bandwidth",
                                        "xbzrle-cache-size" };
    json_object *v;
    if (!rv_qemu_live_req_alive(&req->live, qmp, err)) {
        /* answered */
    } else if (!json_object_object_get_ex(ret, keys[req->what], &v)) {
        /* (QEMU 7.2, the one remvirtd runs, has all three) */
        rv_qemu_finish_error(req->live.reply, RV_ERR_OPERATION_INVALID,
                             "Requested operation is not valid: querying %s is not supported "
                             "by QEMU binary", keys[req->what]);
    } else {
        uint64_t n = json_object_get_uint64(v);
        void *out = rv_deferred_ret(req->live.reply);
        if (req->what == GET_DOWNTIME)
            ((rv_domain_migrate_get_max_downtime_ret *)out)->downtime = n;
        else if (req->what == GET_POSTCOPY_SPEED)
            ((rv_domain_migrate_get_max_speed_ret *)out)->bandwidth = n / MIB;
        else
            ((rv_domain_migrate_get_compression_cache_ret *)out)->cacheSize = n;
        rv_deferred_finish(req->live.reply, NULL);
    }
    free(req->live.name);
    free(req);
}

static int get_param(const rv_nonnull_domain *wire, get_what what, rv_err *err)
{
    qemu_dom *d;
    int rc = running(wire, &d, err);
    if (rc)
        return rc;
    get_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req)
        return -1;
    req->what = what;
    if (!rv_qemu_send_for(d, req->live.reply, "query-migrate-parameters", NULL, get_done, req)) {
        free(req->live.name);
        free(req);
    }
    return RV_DEFERRED;
}

int rv_qemu_domain_migrate_get_max_downtime(rv_driver_conn *c,
                                            const rv_domain_migrate_get_max_downtime_args *args,
                                            rv_domain_migrate_get_max_downtime_ret *ret,
                                            rv_err *err)
{
    (void)c, (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainMigrateGetMaxDowntime", err) < 0)
        return -1;
    return get_param(&args->dom, GET_DOWNTIME, err);
}

int rv_qemu_domain_migrate_get_max_speed(rv_driver_conn *c,
                                         const rv_domain_migrate_get_max_speed_args *args,
                                         rv_domain_migrate_get_max_speed_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_MIGRATE_MAX_SPEED_POSTCOPY,
                            "qemuDomainMigrateGetMaxSpeed", err) < 0)
        return -1;
    if (args->flags & RV_DOMAIN_MIGRATE_MAX_SPEED_POSTCOPY)
        return get_param(&args->dom, GET_POSTCOPY_SPEED, err);
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->bandwidth = d->migtune.max_bandwidth;
    return 0;
}

int rv_qemu_domain_migrate_get_compression_cache(
    rv_driver_conn *c, const rv_domain_migrate_get_compression_cache_args *args,
    rv_domain_migrate_get_compression_cache_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainMigrateGetCompressionCache",
                            err) < 0)
        return -1;
    return get_param(&args->dom, GET_CACHE, err);
}

/* ---------------------------------------------------------------- post-copy */

int rv_qemu_domain_migrate_start_post_copy(rv_driver_conn *c,
                                           const rv_domain_migrate_start_post_copy_args *args,
                                           rv_err *err)
{
    (void)c;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainMigrateStartPostCopy", err) < 0)
        return -1;
    if ((rc = running(&args->dom, &d, err)) != 0)
        return rc;
    if (d->migtune.outgoing == RV_QEMU_MIGOUT_NONE)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: post-copy can "
                    "only be started while outgoing migration is in progress");
    if (d->migtune.outgoing != RV_QEMU_MIGOUT_POSTCOPY)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: switching to "
                    "post-copy requires migration to be started with VIR_MIGRATE_POSTCOPY flag");
    return rv_qemu_live_void(d, "migrate-start-postcopy", NULL, err);
}
