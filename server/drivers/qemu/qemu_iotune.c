/* The QEMU driver's block I/O throttling.  SET_BLOCK_IO_TUNE live merges
 * the limits given into the disk's current ones (query-block) and sends
 * them with block_set_io_throttle; config, into the definition's <iotune>
 * (given to QEMU as -drive throttling.* at start); both: the definition
 * once QEMU has taken them.  GET_BLOCK_IO_TUNE reads query-block, or the
 * definition. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/domain_xml_priv.h"
#include "server/drivers/tune_params.h"


enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2, TYPED_PARAM_STRING_OKAY = 0x4 };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* libvirt's names in GET_BLOCK_IO_TUNE's order, and QEMU's for each
 * (group_name, a string, is QEMU's "group"). */
static const struct { const char *name, *qmp; } limits[] = {
    { "total_bytes_sec", "bps" }, { "read_bytes_sec", "bps_rd" },
    { "write_bytes_sec", "bps_wr" }, { "total_iops_sec", "iops" },
    { "read_iops_sec", "iops_rd" }, { "write_iops_sec", "iops_wr" },
    { "total_bytes_sec_max", "bps_max" }, { "read_bytes_sec_max", "bps_rd_max" },
    { "write_bytes_sec_max", "bps_wr_max" }, { "total_iops_sec_max", "iops_max" },
    { "read_iops_sec_max", "iops_rd_max" }, { "write_iops_sec_max", "iops_wr_max" },
    { "size_iops_sec", "iops_size" }, { "group_name", "group" },
    { "total_bytes_sec_max_length", "bps_max_length" },
    { "read_bytes_sec_max_length", "bps_rd_max_length" },
    { "write_bytes_sec_max_length", "bps_wr_max_length" },
    { "total_iops_sec_max_length", "iops_max_length" },
    { "read_iops_sec_max_length", "iops_rd_max_length" },
    { "write_iops_sec_max_length", "iops_wr_max_length" },
};
enum { NLIMITS = sizeof(limits) / sizeof(limits[0]), GROUP = 13 };

typedef struct iotune_req {
    rv_qemu_live_req live;
    char *target;
    rv_typed_param *params;     /* SET: a copy of what to change */
    u_int nparams;
    int want;                   /* GET: how many limits */
    bool strings;               /* GET: the client takes group_name */
    bool config;                /* SET: then the definition too */
} iotune_req;

static void req_free(iotune_req *req)
{
    for (u_int i = 0; i < req->nparams; i++) {
        free(req->params[i].field);
        if (req->params[i].value.type == RV_TYPED_PARAM_STRING)
            free(req->params[i].value.rv_typed_param_value_u.s);
    }
    free(req->params);
    free(req->live.name);
    free(req->target);
    free(req);
}

/* Answer the call with an error of the QEMU domain; the request goes. */
#define finish(req, ...) (rv_qemu_finish_error((req)->live.reply, __VA_ARGS__), req_free(req))

/* The answer's "inserted" object of the disk, or NULL; *qdev: the path
 * of the device it is attached to (what block_set_io_throttle's id wants:
 * a virtio disk's backend, not its PCI proxy). */
static json_object *inserted_of(json_object *blocks, const char *target, const char **qdev)
{
    json_object *b = rv_qemu_block_entry(blocks, target), *ins = NULL, *q = NULL;
    if (!b || !json_object_object_get_ex(b, "inserted", &ins))
        return NULL;
    if (qdev)
        *qdev = json_object_object_get_ex(b, "qdev", &q) ? json_object_get_string(q) : target;
    return ins;
}

/* The request's domain, if it still runs; else the call is answered and
 * the request freed. */
static bool alive(iotune_req *req, rv_qmp *qmp, const rv_err *err)
{
    if (rv_qemu_live_req_alive(&req->live, qmp, err))
        return true;
    req_free(req);
    return false;
}

static iotune_req *req_new(qemu_dom *d, const char *target, rv_err *err)
{
    char *t = strdup(target);
    iotune_req *req = t ? rv_qemu_live_req_new(sizeof(*req), d, err) : NULL;
    if (!req) {
        if (!t)
            fail(err, RV_ERR_NO_MEMORY, "out of memory");
        free(t);
        return NULL;
    }
    req->target = t;
    return req;
}

/* Send command; on failure the call is answered and the request freed. */
static void qmp_send(qemu_dom *d, iotune_req *req, const char *command, json_object *args,
                     rv_qmp_reply_fn fn)
{
    if (!rv_qemu_send_for(d, req->live.reply, command, args, fn, req))
        req_free(req);
}

/* The running domain and its disk for a live call: 0; else RV_DEFERRED
 * (it waits for the monitor, rv_qemu_need_monitor) or -1 with err. */
static int live_disk(const rv_nonnull_domain *wire, const char *path, qemu_dom **d,
                     const rv_qemu_disk **disk, rv_err *err)
{
    if (!(*d = rv_qemu_dom_get(wire, err)))
        return -1;
    int rc = rv_qemu_need_monitor(*d, err);
    if (rc)
        return rc;
    if (!(*disk = rv_qemu_disk_find((*d)->live, path)) || (*disk)->device != RV_QEMU_DISK_DISK)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk '%s' was not found in the "
                    "domain config", path);
    return 0;
}

/* ================================================================ set */

/* What a SET records in a definition: the params on top of the disk's. */
typedef struct io_change {
    const char *target;
    const rv_typed_param *params;
    u_int nparams;
} io_change;

static int record_iotune(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const io_change *ch = ctx;
    rv_qemu_disk *disk = NULL;
    for (size_t i = 0; i < def->ndisks && !disk; i++)
        if (strcmp(def->disks[i].target, ch->target) == 0)
            disk = &def->disks[i];
    if (!disk)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: missing persistent configuration for disk '%s'",
                    ch->target);
    rv_qemu_iotune io = { 0 };
    if (disk->iotune)
        io = *disk->iotune;
    const char *group = io.group;
    for (u_int i = 0; i < ch->nparams; i++) {
        const rv_typed_param *p = &ch->params[i];
        if (p->value.type == RV_TYPED_PARAM_STRING) {
            group = *p->value.rv_typed_param_value_u.s ? p->value.rv_typed_param_value_u.s : NULL;
            continue;
        }
        int k = rv_qx_word_index(p->field, rv_tune_iotune_names);
        if (k >= 0)
            io.val[k] = p->value.rv_typed_param_value_u.ul;
    }
    /* libvirt's checks of the result. */
    static const char *const what[] = { "bytes_sec", "iops_sec", "bytes_sec_max",
                                        "iops_sec_max" };
    for (int g = 0; g < 4; g++) {
        int k = 3 * g;
        if (io.val[k] && (io.val[k + 1] || io.val[k + 2]))
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: total and read/write of %s "
                        "cannot be set at the same time", what[g]);
    }
    for (int k = 0; k < 6; k++)
        if (io.val[k + 6] && io.val[k] > io.val[k + 6])
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s cannot be set higher "
                        "than %s", rv_tune_iotune_names[k], rv_tune_iotune_names[k + 6]);
    char *gcopy = group ? strdup(group) : NULL;
    if ((group && !gcopy) || (!disk->iotune && !(disk->iotune = calloc(1, sizeof(*disk->iotune))))) {
        free(gcopy);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(disk->iotune->val, io.val, sizeof(io.val));
    free(disk->iotune->group);
    disk->iotune->group = gcopy;
    return 0;
}

/* libvirtd's TUNABLE after a live change: the disk, then the values given. */
static void tunable_event(const qemu_dom *d, const iotune_req *req)
{
    rv_typed_param *ps = calloc(req->nparams + 1, sizeof(*ps));
    char **names = calloc(req->nparams, sizeof(*names));
    if (!ps || !names)
        goto out;
    ps[0].field = "blkdeviotune.disk";
    ps[0].value.type = RV_TYPED_PARAM_STRING;
    ps[0].value.rv_typed_param_value_u.s = req->target;
    for (u_int i = 0; i < req->nparams; i++) {
        if (asprintf(&names[i], "blkdeviotune.%s", req->params[i].field) < 0) {
            names[i] = NULL;
            goto out;
        }
        ps[i + 1] = req->params[i];
        ps[i + 1].field = names[i];
    }
    rv_qemu_emit_tunable(d, ps, req->nparams + 1);
out:
    for (u_int i = 0; names && i < req->nparams; i++)
        free(names[i]);
    free(names);
    free(ps);
}

static void on_throttled(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    iotune_req *req = opaque;
    if (!alive(req, qmp, err))
        return;
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    io_change ch = { req->target, req->params, req->nparams };
    rv_err ignored = { 0 }, cerr = { 0 };
    /* The live XML shows what QEMU now has. */
    if (record_iotune(d->live, &ch, &ignored) < 0)
        rv_err_clear(&ignored);
    tunable_event(d, req);
    if (req->config && rv_qemu_def_change(d, record_iotune, &ch, req->live.reply, &cerr) == 0) {
        req_free(req);
        return;
    }
    rv_deferred_finish(req->live.reply, rv_err_is_set(&cerr) ? &cerr : NULL);
    rv_err_clear(&cerr);
    req_free(req);
}

static void on_current(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    iotune_req *req = opaque;
    if (!alive(req, qmp, err))
        return;
    const char *qdev = NULL;
    json_object *ins = inserted_of(ret, req->target, &qdev);
    if (!ins) {
        finish(req, RV_ERR_OPERATION_INVALID,
               "Requested operation is not valid: disk '%s' does not have a medium", req->target);
        return;
    }
    /* The current limits, then the ones given on top. */
    json_object *args = json_object_new_object();
    if (!args) {
        finish(req, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    json_object_object_add(args, "id", json_object_new_string(qdev));
    for (int k = 0; k < NLIMITS; k++) {
        json_object *v = NULL;
        const rv_typed_param *p = rv_tune_param_find(req->params, req->nparams, limits[k].name);
        if (p && k == GROUP)
            json_object_object_add(args, "group",
                                   json_object_new_string(p->value.rv_typed_param_value_u.s));
        else if (p)
            json_object_object_add(args, limits[k].qmp,
                                   json_object_new_int64((int64_t)p->value.rv_typed_param_value_u.ul));
        else if (json_object_object_get_ex(ins, limits[k].qmp, &v))
            json_object_object_add(args, limits[k].qmp, json_object_get(v));
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    qmp_send(d, req, "block_set_io_throttle", args, on_throttled);
}

int rv_qemu_domain_set_block_io_tune(rv_driver_conn *c,
                                     const rv_domain_set_block_io_tune_args *args, rv_err *err)
{
    rv_tune_field fields[NLIMITS];
    const rv_typed_param *p = args->params.params_val;
    u_int n = args->params.params_len;
    const rv_qemu_disk *disk;
    (void)c;
    for (int k = 0; k < NLIMITS; k++)
        fields[k] = (rv_tune_field){ limits[k].name,
                                     k == GROUP ? RV_TYPED_PARAM_STRING : RV_TYPED_PARAM_ULLONG };
    if (rv_tune_params_check_call(p, n, "virDomainSetBlockIoTune", "nparams", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG, "qemuDomainSetBlockIoTune",
                            err) < 0 ||
        rv_tune_params_validate(p, n, fields, NLIMITS, err) < 0)
        return -1;
    /* A group's name goes into the definition and to QEMU: keep it short. */
    const rv_typed_param *group = rv_tune_param_find(p, n, "group_name");
    if (group && strlen(group->value.rv_typed_param_value_u.s) > 255)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: group_name longer than 255 bytes");
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    bool live = args->flags & AFFECT_LIVE, config = args->flags & AFFECT_CONFIG;
    if (!live && !config) {
        live = rv_qemu_dom_active(d);
        config = !live;
    }
    if (config && !d->def)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: transient "
                    "domains do not have any persistent config");
    const rv_qemu_disk *conf_disk = config ? rv_qemu_disk_find(d->def, args->disk) : NULL;
    if (config && (!conf_disk || conf_disk->device != RV_QEMU_DISK_DISK))
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: missing persistent configuration for disk '%s'",
                    args->disk);
    if (!live) {
        io_change ch = { conf_disk->target, p, n };
        rv_deferred *reply = rv_driver_defer(err);
        if (!reply)
            return -1;
        if (rv_qemu_def_change(d, record_iotune, &ch, reply, err) < 0) {
            rv_deferred_finish(reply, err);
            rv_err_clear(err);
        }
        return RV_DEFERRED;
    }
    int rc = live_disk(&args->dom, args->disk, &d, &disk, err);
    if (rc)
        return rc;
    iotune_req *req = req_new(d, disk->target, err);
    if (!req)
        return -1;
    req->config = config;
    if (!(req->params = calloc(n, sizeof(*req->params)))) {
        finish(req, RV_ERR_NO_MEMORY, "out of memory");
        return RV_DEFERRED;
    }
    for (u_int i = 0; i < n; i++, req->nparams++) {
        req->params[i] = p[i];
        req->params[i].field = strdup(p[i].field);
        if (p[i].value.type == RV_TYPED_PARAM_STRING)
            req->params[i].value.rv_typed_param_value_u.s =
                strdup(p[i].value.rv_typed_param_value_u.s);
        if (!req->params[i].field || (p[i].value.type == RV_TYPED_PARAM_STRING &&
                                      !req->params[i].value.rv_typed_param_value_u.s)) {
            req->nparams++;
            finish(req, RV_ERR_NO_MEMORY, "out of memory");
            return RV_DEFERRED;
        }
    }
    qmp_send(d, req, "query-block", NULL, on_current);
    return RV_DEFERRED;
}

/* ================================================================ get */

static int fill(rv_domain_get_block_io_tune_ret *out, int want, bool strings, json_object *ins)
{
    int k = want - (!strings && want > GROUP);
    out->params.params_val = calloc((size_t)k, sizeof(rv_typed_param));
    if (!out->params.params_val)
        return -1;
    out->params.params_len = (u_int)k;
    for (int i = 0, j = 0; i < want; i++) {
        if (i == GROUP && !strings)
            continue;
        rv_typed_param *p = &out->params.params_val[j++];
        json_object *v = NULL;
        bool has = ins && json_object_object_get_ex(ins, limits[i].qmp, &v) && v;
        if (!(p->field = strdup(limits[i].name)))
            return -1;
        if (i == GROUP) {
            p->value.type = RV_TYPED_PARAM_STRING;
            if (!(p->value.rv_typed_param_value_u.s = strdup(has ? json_object_get_string(v) : "")))
                return -1;
        } else {
            p->value.type = RV_TYPED_PARAM_ULLONG;
            p->value.rv_typed_param_value_u.ul = has ? (uint64_t)json_object_get_int64(v) : 0;
        }
    }
    return 0;
}

/* The definition's limits (its order has group_name at GROUP). */
static int fill_def(rv_domain_get_block_io_tune_ret *out, int want, bool strings,
                    const rv_qemu_iotune *io)
{
    json_object *ins = json_object_new_object();
    if (!ins)
        return -1;
    for (int i = 0, k = 0; io && i < NLIMITS; i++) {
        if (i == GROUP) {
            if (io->group)
                json_object_object_add(ins, limits[i].qmp, json_object_new_string(io->group));
            continue;
        }
        json_object_object_add(ins, limits[i].qmp, json_object_new_int64((int64_t)io->val[k++]));
    }
    int rc = fill(out, want, strings, ins);
    json_object_put(ins);
    return rc;
}

static void on_query(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    iotune_req *req = opaque;
    if (!alive(req, qmp, err))
        return;
    json_object *ins = inserted_of(ret, req->target, NULL);
    if (!ins) {
        finish(req, RV_ERR_OPERATION_INVALID,
               "Requested operation is not valid: disk '%s' does not have a medium", req->target);
        return;
    }
    if (fill(rv_deferred_ret(req->live.reply), req->want, req->strings, ins) < 0) {
        finish(req, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    rv_deferred_finish(req->live.reply, NULL);
    req_free(req);
}

int rv_qemu_domain_get_block_io_tune(rv_driver_conn *c,
                                     const rv_domain_get_block_io_tune_args *args,
                                     rv_domain_get_block_io_tune_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_tune_check_nparams(args->nparams, RV_BLOCK_IO_TUNE_PARAMS_MAX, err) < 0)
        return -1;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY,
                            "qemuDomainGetBlockIoTune", err) < 0 ||
        rv_tune_check_exclusive(args->flags, err) < 0)
        return -1;
    if (args->nparams == 0) {
        ret->nparams = NLIMITS;
        return 0;
    }
    if (!args->disk)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "disk in virDomainGetBlockIoTune must not be NULL");
    int want = args->nparams < NLIMITS ? args->nparams : NLIMITS;
    bool strings = args->flags & TYPED_PARAM_STRING_OKAY;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    bool live = (args->flags & AFFECT_LIVE) ||
                (!(args->flags & AFFECT_CONFIG) && rv_qemu_dom_active(d));
    if (!live) {
        const rv_qemu_domain_def *def = d->def;
        if (!def)
            return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: "
                        "transient domains do not have any persistent config");
        const rv_qemu_disk *cd = rv_qemu_disk_find(def, *args->disk);
        if (!cd)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: disk '%s' was not found in "
                        "the domain config", *args->disk);
        return fill_def(ret, want, strings, cd->iotune) < 0
                   ? fail(err, RV_ERR_NO_MEMORY, "out of memory") : 0;
    }
    const rv_qemu_disk *disk;
    int rc = live_disk(&args->dom, *args->disk, &d, &disk, err);
    if (rc)
        return rc;
    iotune_req *req = req_new(d, disk->target, err);
    if (!req)
        return -1;
    req->want = want;
    req->strings = strings;
    qmp_send(d, req, "query-block", NULL, on_query);
    return RV_DEFERRED;
}
