/* The public calls that are more than one procedure's stub call (a
 * struct to copy, a list to build, a handle to update, two procedures to
 * choose from, a check the generator has no rule for): the procedures
 * annotated @api manual in protocol/rv_remote.x.  The one-call ones are
 * generated (remvirt-calls.gen.c); open.c, callbacks.c and handle.c hold
 * the rest. */
#include "client/remvirt.h"

#include <stdlib.h>
#include <string.h>

#include "client/conn.h"
#include "client/handle.h"
#include "client/last_error.h"
#include "client/params.h"
#include "client/rv_stubs.gen.h"
#include "common/util.h"
#include "rv_remote.h"

/* ---- host ---- */

/* Copy a counted char array that may or may not end in a NUL. */
static void copy_counted(char *dst, size_t size, const char *src, u_int len)
{
    size_t n = strnlen(src ? src : "", src ? len : 0);
    if (n > size - 1)
        n = size - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

int rv_node_get_info(rv_conn *conn, rv_node_info *info)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!info)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_node_get_info_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_info(rpc, &ret, &err) < 0)
        return rvc_fail(&err);
    copy_counted(info->model, sizeof(info->model), ret.model, sizeof(ret.model));
    info->memory = ret.memory;
    info->cpus = (unsigned int)ret.cpus;
    info->mhz = (unsigned int)ret.mhz;
    info->nodes = (unsigned int)ret.nodes;
    info->sockets = (unsigned int)ret.sockets;
    info->cores = (unsigned int)ret.cores;
    info->threads = (unsigned int)ret.threads;
    return 0;
}

int rv_node_get_security_model(rv_conn *conn, rv_security_model *model)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!model)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    rv_node_get_security_model_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_security_model(rpc, &ret, &err) < 0)
        return rvc_fail(&err);
    copy_counted(model->model, sizeof(model->model), ret.model.model_val, ret.model.model_len);
    copy_counted(model->doi, sizeof(model->doi), ret.doi.doi_val, ret.doi.doi_len);
    xdr_free((xdrproc_t)xdr_rv_node_get_security_model_ret, (char *)&ret);
    return 0;
}

/* ---- lists and lookups ---- */

int rv_connect_list_all_domains(rv_conn *conn, rv_dom ***doms, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (doms)
        *doms = NULL;
    rv_connect_list_all_domains_args args = { .need_results = doms != NULL, .flags = flags };
    rv_connect_list_all_domains_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_domains(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);

    int count = (int)ret.ret;
    if (doms) {
        u_int n = ret.domains.domains_len;      /* at most RV_DOMAIN_LIST_MAX */
        rv_dom **list = calloc(n + 1, sizeof(*list));
        for (u_int i = 0; list && i < n; i++) {
            if (!(list[i] = rvc_dom_from_wire(conn, &ret.domains.domains_val[i]))) {
                while (i > 0)
                    rv_domain_free(list[--i]);
                free(list);
                list = NULL;
            }
        }
        if (!list) {
            xdr_free((xdrproc_t)xdr_rv_connect_list_all_domains_ret, (char *)&ret);
            rvc_no_memory_null();
            return -1;
        }
        *doms = list;
        count = (int)n;
    } else if (ret.ret > RV_DOMAIN_LIST_MAX) {
        xdr_free((xdrproc_t)xdr_rv_connect_list_all_domains_ret, (char *)&ret);
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC,
                          "the server counts %u domains, more than the %d allowed", ret.ret,
                          RV_DOMAIN_LIST_MAX);
    }
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_domains_ret, (char *)&ret);
    return count;
}

/* By hand only for refusing a negative id, a check the generator has no
 * rule for (libvirt's client refuses it too). */
rv_dom *rv_domain_lookup_by_id(rv_conn *conn, int id)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (id < 0) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: id %d is negative", __func__, id);
        return NULL;
    }
    rv_domain_lookup_by_id_args args = { .id = id };
    rv_domain_lookup_by_id_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_domain_lookup_by_id(rpc, &args, &ret, &err) < 0)
        return rvc_fail_null(&err);
    rv_dom *found = rvc_dom_from_wire(conn, &ret.dom);
    xdr_free((xdrproc_t)xdr_rv_domain_lookup_by_id_ret, (char *)&ret);
    return found;
}

rv_dom *rv_domain_lookup_by_uuid_string(rv_conn *conn, const char *uuid)
{
    unsigned char raw[RV_UUID_LEN];
    if (!rvc_handle_rpc(conn, __func__))
        return NULL;
    if (!uuid || rv_uuid_parse(uuid, raw) < 0) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: '%s' is not a UUID", __func__,
                   uuid ? uuid : "(null)");
        return NULL;
    }
    return rv_domain_lookup_by_uuid(conn, raw);
}

/* ---- lifecycle ---- */

/* For calls taking { D dom [, flags] } and answering nothing. */
#define VOID_DOMAIN_CALL(stub, ...)                                \
    do {                                                           \
        struct rvc_conn *rpc_ = rvc_dom_rpc(dom, __func__);        \
        if (!rpc_)                                                 \
            return -1;                                             \
        rv_##stub##_args args_ = { .dom = rvc_dom_to_wire(dom), __VA_ARGS__ }; \
        rv_err err_ = { 0 };                                       \
        if (rvc_call_##stub(rpc_, &args_, &err_) < 0)              \
            return rvc_fail(&err_);                                \
    } while (0)

int rv_domain_create(rv_dom *dom, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_dom_rpc(dom, __func__);
    if (!rpc)
        return -1;
    rv_domain_create_with_flags_args args = { .dom = rvc_dom_to_wire(dom), .flags = flags };
    rv_domain_create_with_flags_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_domain_create_with_flags(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    rvc_dom_set_id(dom, ret.dom.id);
    xdr_free((xdrproc_t)xdr_rv_domain_create_with_flags_ret, (char *)&ret);
    return 0;
}

/* Flags 0 uses the original procedure, as libvirt's client does. */
int rv_domain_shutdown(rv_dom *dom, unsigned int flags)
{
    if (flags)
        VOID_DOMAIN_CALL(domain_shutdown_flags, .flags = flags);
    else
        VOID_DOMAIN_CALL(domain_shutdown);
    return 0;
}

int rv_domain_destroy(rv_dom *dom, unsigned int flags)
{
    if (flags)
        VOID_DOMAIN_CALL(domain_destroy_flags, .flags = flags);
    else
        VOID_DOMAIN_CALL(domain_destroy);
    rvc_dom_set_id(dom, -1);
    return 0;
}

/* ---- queries ---- */

/* Declares ret and makes the call; the caller reads ret afterwards. */
#define QUERY_DOMAIN_CALL(stub, ...)                               \
    struct rvc_conn *rpc_ = rvc_dom_rpc(dom, __func__);            \
    if (!rpc_)                                                     \
        return -1;                                                 \
    rv_##stub##_args args_ = { .dom = rvc_dom_to_wire(dom), __VA_ARGS__ }; \
    rv_##stub##_ret ret;                                           \
    memset(&ret, 0, sizeof(ret));                                  \
    rv_err err_ = { 0 };                                           \
    if (rvc_call_##stub(rpc_, &args_, &ret, &err_) < 0)            \
        return rvc_fail(&err_)

static int no_result_pointer(const char *func)
{
    return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", func);
}

static void domain_info_from_wire(rv_domain_info *info, const rv_domain_get_info_ret *ret)
{
    info->state = ret->state;
    info->max_mem = ret->maxMem;
    info->memory = ret->memory;
    info->nr_virt_cpu = ret->nrVirtCpu;
    info->cpu_time = ret->cpuTime;
}

int rv_domain_get_info(rv_dom *dom, rv_domain_info *info)
{
    if (dom && !info)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_info);
    domain_info_from_wire(info, &ret);
    return 0;
}

/* ---- asynchronous calls ---- */

/* One started GetInfo: the wire result, and where the caller wants it. */
typedef struct get_info_call {
    rv_domain_get_info_ret ret;
    rv_domain_info *info;
    rv_call_done done;
    void *opaque;
} get_info_call;

/* Hand an asynchronous call's outcome to the application's callback. */
static void report_done(rv_call_done done, void *opaque, int failed, const rv_err *err)
{
    if (!failed) {
        done(opaque, NULL);
        return;
    }
    rv_error_info e = {
        .code = err->code, .domain = err->domain,
        .level = err->level ? err->level : RV_ERR_LEVEL_ERROR,
        .message = err->message ? err->message : "unknown error",
    };
    done(opaque, &e);
}

static void get_info_done(void *opaque, int failed, rv_err *err)
{
    get_info_call *call = opaque;
    if (!failed)
        domain_info_from_wire(call->info, &call->ret);
    xdr_free((xdrproc_t)xdr_rv_domain_get_info_ret, (char *)&call->ret);
    report_done(call->done, call->opaque, failed, err);
    free(call);
}

int rv_domain_get_info_start(rv_dom *dom, rv_domain_info *info, rv_call_done done,
                             void *opaque)
{
    struct rvc_conn *rpc = rvc_dom_rpc(dom, __func__);
    if (!rpc)
        return -1;
    if (!info || !done)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no %s", __func__,
                          info ? "completion callback" : "result pointer");
    get_info_call *call = calloc(1, sizeof(*call));
    if (!call)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    *call = (get_info_call){ .info = info, .done = done, .opaque = opaque };
    rv_domain_get_info_args args = { .dom = rvc_dom_to_wire(dom) };
    rv_err err = { 0 };
    if (rvc_conn_start(rpc, RV_PROC_DOMAIN_GET_INFO, (xdrproc_t)xdr_rv_domain_get_info_args,
                       &args, (xdrproc_t)xdr_rv_domain_get_info_ret, &call->ret,
                       get_info_done, call, &err) < 0) {
        free(call);
        return rvc_fail(&err);
    }
    return 0;
}

int rv_connect_complete(rv_conn *conn, unsigned int max_in_flight)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    return rpc ? rvc_conn_complete(rpc, max_in_flight) : -1;
}

int rv_domain_get_state(rv_dom *dom, int *state, int *reason, unsigned int flags)
{
    if (dom && !state)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_state, .flags = flags);
    *state = ret.state;
    if (reason)
        *reason = ret.reason;
    return 0;
}

int rv_domain_get_security_label(rv_dom *dom, rv_security_label *label)
{
    if (dom && !label)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_security_label);
    copy_counted(label->label, sizeof(label->label), ret.label.label_val, ret.label.label_len);
    label->enforcing = ret.enforcing;
    xdr_free((xdrproc_t)xdr_rv_domain_get_security_label_ret, (char *)&ret);
    return 0;
}

int rv_domain_get_messages(rv_dom *dom, char ***msgs, unsigned int flags)
{
    if (dom && !msgs)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_messages, .flags = flags);
    u_int n = ret.msgs.msgs_len;                /* at most RV_DOMAIN_MESSAGES_MAX */
    char **list = calloc(n + 1, sizeof(*list));
    if (!list) {
        xdr_free((xdrproc_t)xdr_rv_domain_get_messages_ret, (char *)&ret);
        rvc_no_memory_null();
        return -1;
    }
    for (u_int i = 0; i < n; i++) {
        list[i] = ret.msgs.msgs_val[i];
        ret.msgs.msgs_val[i] = NULL;
    }
    /* The strings now belong to list: this frees only the array. */
    xdr_free((xdrproc_t)xdr_rv_domain_get_messages_ret, (char *)&ret);
    *msgs = list;
    return (int)n;
}


/* ---- statistics and tuning ---- */

int rv_domain_memory_stats(rv_dom *dom, rv_memory_stat *stats, unsigned int nr_stats,
                           unsigned int flags)
{
    if (dom && nr_stats && !stats)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_memory_stats, .maxStats = nr_stats, .flags = flags);
    /* The server may not send more than asked for. */
    u_int n = ret.stats.stats_len;
    if (n > nr_stats) {
        xdr_free((xdrproc_t)xdr_rv_domain_memory_stats_ret, (char *)&ret);
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: %u statistics for %u asked", __func__,
                          n, nr_stats);
    }
    for (u_int i = 0; i < n; i++) {
        stats[i].tag = ret.stats.stats_val[i].tag;
        stats[i].val = ret.stats.stats_val[i].val;
    }
    xdr_free((xdrproc_t)xdr_rv_domain_memory_stats_ret, (char *)&ret);
    return (int)n;
}

int rv_domain_block_stats(rv_dom *dom, const char *path, rv_block_stats *stats)
{
    if (dom && !path)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no path given", __func__);
    if (dom && !stats)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_block_stats, .path = (char *)path);
    *stats = (rv_block_stats){ .rd_req = ret.rd_req, .rd_bytes = ret.rd_bytes,
                               .wr_req = ret.wr_req, .wr_bytes = ret.wr_bytes,
                               .errs = ret.errs };
    return 0;
}

int rv_domain_get_vcpus(rv_dom *dom, rv_vcpu *info, int maxinfo, unsigned char *cpumaps,
                        int maplen)
{
    if (dom && (maxinfo < 1 || !info || (cpumaps && maplen < 1)))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: no room for the vcpus or their maps", __func__);
    int want_maplen = cpumaps ? maplen : 0;
    QUERY_DOMAIN_CALL(domain_get_vcpus, .maxinfo = maxinfo, .maplen = want_maplen);
    u_int n = ret.info.info_len;
    if (n > (u_int)maxinfo ||
        ret.cpumaps.cpumaps_len > (u_int)maxinfo * (u_int)want_maplen) {
        xdr_free((xdrproc_t)xdr_rv_domain_get_vcpus_ret, (char *)&ret);
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the reply is larger than asked for",
                          __func__);
    }
    for (u_int i = 0; i < n; i++)
        info[i] = (rv_vcpu){ .number = ret.info.info_val[i].number,
                             .state = ret.info.info_val[i].state,
                             .cpu_time = ret.info.info_val[i].cpu_time,
                             .cpu = ret.info.info_val[i].cpu };
    if (cpumaps) {
        memset(cpumaps, 0, (size_t)maxinfo * (size_t)maplen);
        if (ret.cpumaps.cpumaps_len)
            memcpy(cpumaps, ret.cpumaps.cpumaps_val, ret.cpumaps.cpumaps_len);
    }
    xdr_free((xdrproc_t)xdr_rv_domain_get_vcpus_ret, (char *)&ret);
    return (int)n;
}

int rv_domain_get_vcpu_pin_info(rv_dom *dom, int ncpumaps, unsigned char *cpumaps, int maplen,
                                unsigned int flags)
{
    if (dom && (ncpumaps < 1 || maplen < 1 || !cpumaps))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no room for the maps",
                          __func__);
    QUERY_DOMAIN_CALL(domain_get_vcpu_pin_info, .ncpumaps = ncpumaps, .maplen = maplen,
                      .flags = flags);
    int n = ret.num;
    if (n < 0 || n > ncpumaps ||
        ret.cpumaps.cpumaps_len > (u_int)ncpumaps * (u_int)maplen) {
        xdr_free((xdrproc_t)xdr_rv_domain_get_vcpu_pin_info_ret, (char *)&ret);
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the reply is larger than asked for",
                          __func__);
    }
    memset(cpumaps, 0, (size_t)ncpumaps * (size_t)maplen);
    if (ret.cpumaps.cpumaps_len)
        memcpy(cpumaps, ret.cpumaps.cpumaps_val, ret.cpumaps.cpumaps_len);
    xdr_free((xdrproc_t)xdr_rv_domain_get_vcpu_pin_info_ret, (char *)&ret);
    return n;
}

int rv_node_get_cpu_map(rv_conn *conn, unsigned char **cpumap, unsigned int *online,
                        unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_node_get_cpu_map_args args = { .need_map = cpumap != NULL,
                                      .need_online = online != NULL, .flags = flags };
    rv_node_get_cpu_map_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_cpu_map(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    if (cpumap) {
        /* A map of at least one byte per eight CPUs present. */
        size_t need = ret.ret > 0 ? ((size_t)ret.ret + 7) / 8 : 0;
        size_t size = ret.cpumap.cpumap_len > need ? ret.cpumap.cpumap_len : need;
        *cpumap = calloc(size ? size : 1, 1);
        if (!*cpumap) {
            xdr_free((xdrproc_t)xdr_rv_node_get_cpu_map_ret, (char *)&ret);
            return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        }
        if (ret.cpumap.cpumap_len)
            memcpy(*cpumap, ret.cpumap.cpumap_val, ret.cpumap.cpumap_len);
    }
    if (online)
        *online = ret.online;
    int present = ret.ret;
    xdr_free((xdrproc_t)xdr_rv_node_get_cpu_map_ret, (char *)&ret);
    return present;
}

char *rv_domain_get_scheduler_type(rv_dom *dom, int *nparams)
{
    struct rvc_conn *rpc = rvc_dom_rpc(dom, __func__);
    if (!rpc)
        return NULL;
    rv_domain_get_scheduler_type_args args = { .dom = rvc_dom_to_wire(dom) };
    rv_domain_get_scheduler_type_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_domain_get_scheduler_type(rpc, &args, &ret, &err) < 0) {
        rvc_fail(&err);
        return NULL;
    }
    if (nparams)
        *nparams = ret.nparams;
    return ret.type;                /* the caller's now */
}

void rv_typed_parameters_clear(rv_typed_parameter *params, int n)
{
    for (int i = 0; params && i < n; i++)
        if (params[i].type == RV_PARAM_STRING) {
            free(params[i].value.s);
            params[i].value.s = NULL;
        }
}

/* Copy wire parameters into the caller's array (strings moved); queries.c
 * uses it too (client/params.h). */
int rvc_params_from_wire(rv_typed_parameter *out, int room, rv_typed_param *wire, u_int n,
                            const char *func)
{
    if (n > (u_int)room)
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: %u parameters for %d asked", func, n,
                          room);
    for (u_int i = 0; i < n; i++) {
        rv_typed_parameter *p = &out[i];
        memset(p, 0, sizeof(*p));
        if (strlen(wire[i].field) >= sizeof(p->field)) {
            rv_typed_parameters_clear(out, (int)i);
            return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: parameter name too long", func);
        }
        strcpy(p->field, wire[i].field);
        p->type = wire[i].value.type;
        const rv_typed_param_value *v = &wire[i].value;
        switch (v->type) {
        case RV_PARAM_INT: p->value.i = v->rv_typed_param_value_u.i; break;
        case RV_PARAM_UINT: p->value.ui = v->rv_typed_param_value_u.ui; break;
        case RV_PARAM_LLONG: p->value.l = v->rv_typed_param_value_u.l; break;
        case RV_PARAM_ULLONG: p->value.ul = v->rv_typed_param_value_u.ul; break;
        case RV_PARAM_DOUBLE: p->value.d = v->rv_typed_param_value_u.d; break;
        case RV_PARAM_BOOLEAN: p->value.b = v->rv_typed_param_value_u.b; break;
        case RV_PARAM_STRING:
            p->value.s = wire[i].value.rv_typed_param_value_u.s;
            wire[i].value.rv_typed_param_value_u.s = NULL;
            break;
        }
    }
    return (int)n;
}

int rv_domain_get_scheduler_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams)
{
    if (dom && (!params || !nparams || *nparams < 1))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: no room for the parameters", __func__);
    QUERY_DOMAIN_CALL(domain_get_scheduler_parameters, .nparams = *nparams);
    int n = rvc_params_from_wire(params, *nparams, ret.params.params_val, ret.params.params_len,
                             __func__);
    xdr_free((xdrproc_t)xdr_rv_domain_get_scheduler_parameters_ret, (char *)&ret);
    if (n < 0)
        return -1;
    *nparams = n;
    return 0;
}

/* ---- IOThreads and security labels ---- */

int rv_domain_pin_iothread(rv_dom *dom, unsigned int iothread_id, const unsigned char *cpumap,
                           int maplen, unsigned int flags)
{
    if (dom && (!cpumap || maplen < 1 || maplen > RV_CPUMAP_MAX))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: the map must have 1 to %d bytes", __func__, RV_CPUMAP_MAX);
    /* (the stub only reads the map) */
    VOID_DOMAIN_CALL(domain_pin_iothread, .iothreads_id = iothread_id,
                     .cpumap = { .cpumap_len = (u_int)maplen, .cpumap_val = (char *)cpumap },
                     .flags = flags);
    return 0;
}

/* The caller's parameters as wire ones pointing at the caller's strings:
 * free wire alone, never its strings. */
static rv_typed_param *params_to_wire(const rv_typed_parameter *params, int n, const char *func)
{
    rv_typed_param *wire = calloc((size_t)n + 1, sizeof(*wire));
    if (!wire) {
        rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "%s: out of memory", func);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const rv_typed_parameter *p = &params[i];
        rv_typed_param_value *v = &wire[i].value;
        if (!memchr(p->field, '\0', sizeof(p->field)) || !p->field[0])
            goto bad;
        wire[i].field = (char *)p->field;
        v->type = p->type;
        switch (p->type) {
        case RV_PARAM_INT: v->rv_typed_param_value_u.i = p->value.i; break;
        case RV_PARAM_UINT: v->rv_typed_param_value_u.ui = p->value.ui; break;
        case RV_PARAM_LLONG: v->rv_typed_param_value_u.l = p->value.l; break;
        case RV_PARAM_ULLONG: v->rv_typed_param_value_u.ul = p->value.ul; break;
        case RV_PARAM_DOUBLE: v->rv_typed_param_value_u.d = p->value.d; break;
        case RV_PARAM_BOOLEAN: v->rv_typed_param_value_u.b = p->value.b; break;
        case RV_PARAM_STRING:
            if (!p->value.s)
                goto bad;
            v->rv_typed_param_value_u.s = p->value.s;
            break;
        default:
            goto bad;
        }
        continue;
bad:
        free(wire);
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                   "%s: parameter %d has no name, no string or an unknown type", func, i);
        return NULL;
    }
    return wire;
}

int rv_domain_set_iothread_params(rv_dom *dom, unsigned int iothread_id,
                                  const rv_typed_parameter *params, int nparams,
                                  unsigned int flags)
{
    if (dom && (nparams < 0 || nparams > RV_DOMAIN_IOTHREAD_PARAMS_MAX || (nparams && !params)))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG,
                          "%s: from 0 to %d parameters", __func__,
                          RV_DOMAIN_IOTHREAD_PARAMS_MAX);
    struct rvc_conn *rpc = rvc_dom_rpc(dom, __func__);
    if (!rpc)
        return -1;
    rv_typed_param *wire = params_to_wire(params, nparams, __func__);
    if (!wire)
        return -1;
    rv_domain_set_iothread_params_args args = {
        .dom = rvc_dom_to_wire(dom), .iothread_id = iothread_id,
        .params = { .params_len = (u_int)nparams, .params_val = wire }, .flags = flags,
    };
    rv_err err = { 0 };
    int rc = rvc_call_domain_set_iothread_params(rpc, &args, &err);
    free(wire);
    return rc < 0 ? rvc_fail(&err) : 0;
}

int rv_domain_get_security_label_list(rv_dom *dom, rv_security_label **labels)
{
    if (dom && !labels)
        return no_result_pointer(__func__);
    QUERY_DOMAIN_CALL(domain_get_security_label_list);
    u_int n = ret.labels.labels_len;
    rv_security_label *list = calloc((size_t)n + 1, sizeof(*list));
    if (!list) {
        xdr_free((xdrproc_t)xdr_rv_domain_get_security_label_list_ret, (char *)&ret);
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "%s: out of memory", __func__);
    }
    for (u_int i = 0; i < n; i++) {
        const rv_domain_get_security_label_ret *w = &ret.labels.labels_val[i];
        copy_counted(list[i].label, sizeof(list[i].label), w->label.label_val,
                     w->label.label_len);
        list[i].enforcing = w->enforcing;
    }
    xdr_free((xdrproc_t)xdr_rv_domain_get_security_label_list_ret, (char *)&ret);
    *labels = list;
    return (int)n;
}
