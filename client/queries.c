/* The public readers rvsh's host and per-domain commands need beyond
 * wrappers.c's: tuning parameters, device counters, pinning, the guest's
 * time and addresses, the host's cells, CPU counters and models, and
 * the bulk statistics.  Each is one procedure annotated @api manual in
 * protocol/rv_remote.x: its reply is a list or a struct to copy out. */
#include "client/remvirt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/conn.h"
#include "client/handle.h"
#include "client/last_error.h"
#include "client/params.h"
#include "client/rv_stubs.gen.h"
#include "rv_remote.h"

/* The most parameters one tuning reader may announce: the wire's bound. */
#define PARAMS_MAX RV_BLOCK_IO_TUNE_PARAMS_MAX

/* rv_connect_baseline_cpu's way into the hypervisor variant's body. */
#define RVC_PLAIN_BASELINE 0x80000000u

static int no_result_pointer(const char *func)
{
    return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", func);
}

static int no_string(const char *func, const char *what)
{
    return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no %s given", func, what);
}

static int too_large(const char *func)
{
    return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the reply is larger than asked for", func);
}

/* ---- tuning parameters ----
 *
 * As libvirt's: nparams 0 answers how many there are, then the caller
 * asks for that many.  call_<stub>() makes one call: with room 0 it
 * returns the count, else the parameters it copied into out. */
#define PARAMS_ONE_CALL(stub, ...)                                                        \
    static int call_##stub(rv_dom *dom, const char *device, int room, unsigned int flags,  \
                           rv_typed_parameter *out, const char *func)                      \
    {                                                                                      \
        (void)device;                                                                      \
        struct rvc_conn *rpc = rvc_dom_rpc(dom, func);                                     \
        if (!rpc)                                                                          \
            return -1;                                                                     \
        rv_##stub##_args args = { .dom = rvc_dom_to_wire(dom), .nparams = room,            \
                                  .flags = flags, __VA_ARGS__ };                           \
        rv_##stub##_ret ret;                                                               \
        memset(&ret, 0, sizeof(ret));                                                      \
        rv_err err = { 0 };                                                                \
        if (rvc_call_##stub(rpc, &args, &ret, &err) < 0)                                   \
            return rvc_fail(&err);                                                         \
        int n = room ? rvc_params_from_wire(out, room, ret.params.params_val,              \
                                            ret.params.params_len, func)                   \
                     : ret.nparams;                                                        \
        xdr_free((xdrproc_t)xdr_rv_##stub##_ret, (char *)&ret);                            \
        return n;                                                                          \
    }

PARAMS_ONE_CALL(domain_get_memory_parameters)
PARAMS_ONE_CALL(domain_get_blkio_parameters)
PARAMS_ONE_CALL(domain_get_numa_parameters)
PARAMS_ONE_CALL(domain_get_interface_parameters, .device = (char *)device)
PARAMS_ONE_CALL(domain_get_block_io_tune, .disk = (char **)&device)

typedef int (*params_call)(rv_dom *dom, const char *device, int room, unsigned int flags,
                           rv_typed_parameter *out, const char *func);

/* libvirt's clients say they take string parameters; without it a server
 * leaves them out. */
#define TYPED_PARAM_STRING_OKAY 4u

static int read_params(params_call call, rv_dom *dom, const char *device,
                       rv_typed_parameter *params, int *nparams, unsigned int flags,
                       const char *func)
{
    if (!rvc_dom_rpc(dom, func))
        return -1;
    if (!nparams || *nparams < 0 || (*nparams && !params))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no room for the parameters",
                          func);
    int n = call(dom, device, *nparams, flags | TYPED_PARAM_STRING_OKAY, params, func);
    if (n < 0)
        return -1;
    if (*nparams == 0 && n > PARAMS_MAX)
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the server announces %d parameters",
                          func, n);
    *nparams = n;
    return 0;
}

void rv_typed_parameters_free(rv_typed_parameter *params, int n)
{
    rv_typed_parameters_clear(params, n);
    free(params);
}

int rv_domain_get_memory_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams,
                                    unsigned int flags)
{
    return read_params(call_domain_get_memory_parameters, dom, NULL, params, nparams, flags,
                       __func__);
}

int rv_domain_get_blkio_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams,
                                   unsigned int flags)
{
    return read_params(call_domain_get_blkio_parameters, dom, NULL, params, nparams, flags,
                       __func__);
}

int rv_domain_get_numa_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams,
                                  unsigned int flags)
{
    return read_params(call_domain_get_numa_parameters, dom, NULL, params, nparams, flags,
                       __func__);
}

int rv_domain_get_interface_parameters(rv_dom *dom, const char *device,
                                       rv_typed_parameter *params, int *nparams,
                                       unsigned int flags)
{
    if (dom && !device)
        return no_string(__func__, "device");
    return read_params(call_domain_get_interface_parameters, dom, device, params, nparams,
                       flags, __func__);
}

int rv_domain_get_block_io_tune(rv_dom *dom, const char *disk, rv_typed_parameter *params,
                                int *nparams, unsigned int flags)
{
    return read_params(call_domain_get_block_io_tune, dom, disk, params, nparams, flags,
                       __func__);
}

/* ---- one domain's devices, pinning, guest ---- */

/* Declares ret and makes the call; the caller reads ret afterwards. */
#define QUERY_DOMAIN(stub, ...)                                            \
    struct rvc_conn *rpc_ = rvc_dom_rpc(dom, __func__);                    \
    if (!rpc_)                                                             \
        return -1;                                                         \
    rv_##stub##_args args_ = { .dom = rvc_dom_to_wire(dom), __VA_ARGS__ }; \
    rv_##stub##_ret ret;                                                   \
    memset(&ret, 0, sizeof(ret));                                          \
    rv_err err_ = { 0 };                                                   \
    if (rvc_call_##stub(rpc_, &args_, &ret, &err_) < 0)                    \
        return rvc_fail(&err_)

int rv_domain_interface_stats(rv_dom *dom, const char *device, rv_interface_stats *stats)
{
    if (dom && !device)
        return no_string(__func__, "device");
    if (dom && !stats)
        return no_result_pointer(__func__);
    QUERY_DOMAIN(domain_interface_stats, .device = (char *)device);
    *stats = (rv_interface_stats){
        .rx_bytes = ret.rx_bytes, .rx_packets = ret.rx_packets, .rx_errs = ret.rx_errs,
        .rx_drop = ret.rx_drop, .tx_bytes = ret.tx_bytes, .tx_packets = ret.tx_packets,
        .tx_errs = ret.tx_errs, .tx_drop = ret.tx_drop,
    };
    return 0;
}

int rv_domain_get_block_info(rv_dom *dom, const char *path, rv_block_info *info,
                             unsigned int flags)
{
    if (dom && !path)
        return no_string(__func__, "path");
    if (dom && !info)
        return no_result_pointer(__func__);
    QUERY_DOMAIN(domain_get_block_info, .path = (char *)path, .flags = flags);
    *info = (rv_block_info){ .capacity = ret.capacity, .allocation = ret.allocation,
                             .physical = ret.physical };
    return 0;
}

int rv_domain_get_emulator_pin_info(rv_dom *dom, unsigned char *cpumap, int maplen,
                                    unsigned int flags)
{
    if (dom && (maplen < 1 || !cpumap))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no room for the map",
                          __func__);
    QUERY_DOMAIN(domain_get_emulator_pin_info, .maplen = maplen, .flags = flags);
    int n = ret.ret;
    if (ret.cpumaps.cpumaps_len > (u_int)maplen) {
        xdr_free((xdrproc_t)xdr_rv_domain_get_emulator_pin_info_ret, (char *)&ret);
        return too_large(__func__);
    }
    memset(cpumap, 0, (size_t)maplen);
    if (ret.cpumaps.cpumaps_len)
        memcpy(cpumap, ret.cpumaps.cpumaps_val, ret.cpumaps.cpumaps_len);
    xdr_free((xdrproc_t)xdr_rv_domain_get_emulator_pin_info_ret, (char *)&ret);
    return n;
}

void rv_iothread_info_free(rv_iothread_info *info, int n)
{
    for (int i = 0; info && i < n; i++)
        free(info[i].cpumap);
    free(info);
}

int rv_domain_get_iothread_info(rv_dom *dom, rv_iothread_info **info, unsigned int flags)
{
    if (dom && !info)
        return no_result_pointer(__func__);
    QUERY_DOMAIN(domain_get_iothread_info, .flags = flags);
    u_int n = ret.info.info_len;
    rv_iothread_info *list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++) {
        rv_domain_iothread_info *w = &ret.info.info_val[i];
        list[i].iothread_id = w->iothread_id;
        list[i].maplen = (int)w->cpumap.cpumap_len;
        /* The map is moved, not copied. */
        list[i].cpumap = (unsigned char *)w->cpumap.cpumap_val;
        w->cpumap.cpumap_val = NULL;
        w->cpumap.cpumap_len = 0;
    }
    xdr_free((xdrproc_t)xdr_rv_domain_get_iothread_info_ret, (char *)&ret);
    if (!list)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    *info = list;
    return (int)n;
}

int rv_domain_get_time(rv_dom *dom, long long *seconds, unsigned int *nseconds,
                       unsigned int flags)
{
    if (dom && (!seconds || !nseconds))
        return no_result_pointer(__func__);
    QUERY_DOMAIN(domain_get_time, .flags = flags);
    *seconds = ret.seconds;
    *nseconds = ret.nseconds;
    return 0;
}

void rv_dom_ifaces_free(rv_dom_iface *ifaces, int n)
{
    for (int i = 0; ifaces && i < n; i++) {
        free(ifaces[i].name);
        free(ifaces[i].hwaddr);
        for (unsigned int k = 0; k < ifaces[i].naddrs; k++)
            free(ifaces[i].addrs[k].addr);
        free(ifaces[i].addrs);
    }
    free(ifaces);
}

int rv_domain_interface_addresses(rv_dom *dom, rv_dom_iface **ifaces, unsigned int source,
                                  unsigned int flags)
{
    if (dom && !ifaces)
        return no_result_pointer(__func__);
    QUERY_DOMAIN(domain_interface_addresses, .source = source, .flags = flags);
    u_int n = ret.ifaces.ifaces_len;
    rv_dom_iface *list = calloc(n + 1, sizeof(*list));
    int ok = list != NULL;
    /* Strings are moved out of the reply. */
    for (u_int i = 0; ok && i < n; i++) {
        rv_domain_interface *w = &ret.ifaces.ifaces_val[i];
        rv_dom_iface *o = &list[i];
        o->name = w->name;
        w->name = NULL;
        o->hwaddr = w->hwaddr ? *w->hwaddr : NULL;
        if (w->hwaddr)
            *w->hwaddr = NULL;
        o->addrs = calloc(w->addrs.addrs_len + 1, sizeof(*o->addrs));
        if (!o->addrs) {
            ok = 0;
            break;
        }
        o->naddrs = w->addrs.addrs_len;
        for (u_int k = 0; k < w->addrs.addrs_len; k++) {
            o->addrs[k].type = w->addrs.addrs_val[k].type;
            o->addrs[k].prefix = w->addrs.addrs_val[k].prefix;
            o->addrs[k].addr = w->addrs.addrs_val[k].addr;
            w->addrs.addrs_val[k].addr = NULL;
        }
    }
    xdr_free((xdrproc_t)xdr_rv_domain_interface_addresses_ret, (char *)&ret);
    if (!ok) {
        rv_dom_ifaces_free(list, (int)n);
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    }
    *ifaces = list;
    return (int)n;
}

/* ---- the host ---- */

int rv_connect_get_max_vcpus(rv_conn *conn, const char *type)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_connect_get_max_vcpus_args args = { .type = type ? (char **)&type : NULL };
    rv_connect_get_max_vcpus_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_get_max_vcpus(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    if (ret.max_vcpus < 0)
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: a negative count", __func__);
    return ret.max_vcpus;
}

int rv_node_get_cells_free_memory(rv_conn *conn, unsigned long long *free_mem, int start_cell,
                                  int max_cells)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!free_mem || max_cells < 1)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no room for the cells",
                          __func__);
    rv_node_get_cells_free_memory_args args = { .startCell = start_cell,
                                                .maxcells = max_cells };
    rv_node_get_cells_free_memory_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_cells_free_memory(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.cells.cells_len;
    if (n > (u_int)max_cells) {
        xdr_free((xdrproc_t)xdr_rv_node_get_cells_free_memory_ret, (char *)&ret);
        return too_large(__func__);
    }
    for (u_int i = 0; i < n; i++)
        free_mem[i] = ret.cells.cells_val[i];
    xdr_free((xdrproc_t)xdr_rv_node_get_cells_free_memory_ret, (char *)&ret);
    return (int)n;
}

/* One NODE_GET_CPU_STATS call: room 0 answers how many counters. */
static int cpu_stats_call(struct rvc_conn *rpc, int cpu, int room, unsigned int flags,
                          rv_node_cpu_counter *out)
{
    rv_node_get_cpu_stats_args args = { .cpuNum = cpu, .nparams = room, .flags = flags };
    rv_node_get_cpu_stats_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_cpu_stats(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int n = ret.nparams;
    if (room) {
        n = (int)ret.params.params_len;
        if (n > room) {
            xdr_free((xdrproc_t)xdr_rv_node_get_cpu_stats_ret, (char *)&ret);
            return too_large("rv_node_get_cpu_stats");
        }
        for (int i = 0; i < n; i++) {
            snprintf(out[i].field, sizeof(out[i].field), "%s", ret.params.params_val[i].field);
            out[i].value = ret.params.params_val[i].value;
        }
    }
    xdr_free((xdrproc_t)xdr_rv_node_get_cpu_stats_ret, (char *)&ret);
    return n;
}

int rv_node_get_cpu_stats(rv_conn *conn, int cpu, rv_node_cpu_counter **stats, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!stats)
        return no_result_pointer(__func__);
    *stats = NULL;
    int n = cpu_stats_call(rpc, cpu, 0, flags, NULL);
    if (n < 0)
        return -1;
    if (n > RV_NODE_CPU_STATS_MAX)
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the server announces %d counters",
                          __func__, n);
    rv_node_cpu_counter *list = calloc((size_t)n + 1, sizeof(*list));
    if (!list)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    if (n > 0 && (n = cpu_stats_call(rpc, cpu, n, flags, list)) < 0) {
        free(list);
        return -1;
    }
    *stats = list;
    return n;
}

/* One NODE_GET_MEMORY_STATS call: room 0 answers how many figures. */
static int memory_stats_call(struct rvc_conn *rpc, int cell, int room, unsigned int flags,
                             rv_node_cpu_counter *out)
{
    rv_node_get_memory_stats_args args = { .nparams = room, .cellNum = cell, .flags = flags };
    rv_node_get_memory_stats_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_get_memory_stats(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int n = ret.nparams;
    if (room) {
        n = (int)ret.params.params_len;
        if (n > room) {
            xdr_free((xdrproc_t)xdr_rv_node_get_memory_stats_ret, (char *)&ret);
            return too_large("rv_node_get_memory_stats");
        }
        for (int i = 0; i < n; i++) {
            snprintf(out[i].field, sizeof(out[i].field), "%s", ret.params.params_val[i].field);
            out[i].value = ret.params.params_val[i].value;
        }
    }
    xdr_free((xdrproc_t)xdr_rv_node_get_memory_stats_ret, (char *)&ret);
    return n;
}

int rv_node_get_memory_stats(rv_conn *conn, int cell, rv_node_cpu_counter **stats,
                             unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!stats)
        return no_result_pointer(__func__);
    *stats = NULL;
    int n = memory_stats_call(rpc, cell, 0, flags, NULL);
    if (n < 0)
        return -1;
    if (n > RV_NODE_MEMORY_STATS_MAX)
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC, "%s: the server announces %d figures",
                          __func__, n);
    rv_node_cpu_counter *list = calloc((size_t)n + 1, sizeof(*list));
    if (!list)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    if (n > 0 && (n = memory_stats_call(rpc, cell, n, flags, list)) < 0) {
        free(list);
        return -1;
    }
    *stats = list;
    return n;
}

char *rv_connect_baseline_cpu(rv_conn *conn, const char *const *xml_cpus, unsigned int ncpus,
                              unsigned int flags)
{
    return rv_connect_baseline_hypervisor_cpu(conn, NULL, NULL, NULL, NULL, xml_cpus, ncpus,
                                              flags | RVC_PLAIN_BASELINE);
}

char *rv_connect_baseline_hypervisor_cpu(rv_conn *conn, const char *emulator, const char *arch,
                                         const char *machine, const char *virttype,
                                         const char *const *xml_cpus, unsigned int ncpus,
                                         unsigned int flags)
{
    /* One body for both: RVC_PLAIN_BASELINE (never a libvirt flag) picks
     * CONNECT_BASELINE_CPU, which has no hypervisor arguments. */
    bool plain = flags & RVC_PLAIN_BASELINE;
    const char *func = plain ? "rv_connect_baseline_cpu" : __func__;
    flags &= ~RVC_PLAIN_BASELINE;
    struct rvc_conn *rpc = rvc_handle_rpc(conn, func);
    if (!rpc)
        return NULL;
    if (!xml_cpus || ncpus == 0 || ncpus > RV_CPU_BASELINE_MAX) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: between 1 and %d CPU definitions, please",
                   func, RV_CPU_BASELINE_MAX);
        return NULL;
    }
    for (unsigned int i = 0; i < ncpus; i++)
        if (!xml_cpus[i]) {
            no_string(func, "xml_cpus[i]");
            return NULL;
        }
    rv_err err = { 0 };
    char *cpu = NULL;
    int rc;
    if (plain) {
        rv_connect_baseline_cpu_args args = { .xmlCPUs = { ncpus, (char **)xml_cpus }, .flags = flags };
        rv_connect_baseline_cpu_ret ret = { 0 };
        rc = rvc_call_connect_baseline_cpu(rpc, &args, &ret, &err);
        cpu = ret.cpu;
    } else {
        rv_connect_baseline_hypervisor_cpu_args args = {
            .emulator = emulator ? (char **)&emulator : NULL,
            .arch = arch ? (char **)&arch : NULL,
            .machine = machine ? (char **)&machine : NULL,
            .virttype = virttype ? (char **)&virttype : NULL,
            .xmlCPUs = { ncpus, (char **)xml_cpus },
            .flags = flags,
        };
        rv_connect_baseline_hypervisor_cpu_ret ret = { 0 };
        rc = rvc_call_connect_baseline_hypervisor_cpu(rpc, &args, &ret, &err);
        cpu = ret.cpu;
    }
    if (rc < 0) {
        rvc_fail(&err);
        return NULL;
    }
    return cpu;
}

int rv_connect_compare_hypervisor_cpu(rv_conn *conn, const char *emulator, const char *arch,
                                      const char *machine, const char *virttype,
                                      const char *xml_cpu, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!xml_cpu)
        return no_string(__func__, "xml_cpu");
    rv_connect_compare_hypervisor_cpu_args args = {
        .emulator = emulator ? (char **)&emulator : NULL,
        .arch = arch ? (char **)&arch : NULL,
        .machine = machine ? (char **)&machine : NULL,
        .virttype = virttype ? (char **)&virttype : NULL,
        .xmlCPU = (char *)xml_cpu,
        .flags = flags,
    };
    rv_connect_compare_hypervisor_cpu_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_compare_hypervisor_cpu(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    return ret.result;
}

int rv_connect_get_cpu_model_names(rv_conn *conn, const char *arch, char ***models,
                                   unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!arch)
        return no_string(__func__, "arch");
    if (models)
        *models = NULL;
    rv_connect_get_cpu_model_names_args args = { .arch = (char *)arch,
                                                 .need_results = models != NULL,
                                                 .flags = flags };
    rv_connect_get_cpu_model_names_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_get_cpu_model_names(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int n = ret.ret;
    if (models) {
        u_int len = ret.models.models_len;
        char **list = calloc(len + 1, sizeof(*list));
        if (!list) {
            xdr_free((xdrproc_t)xdr_rv_connect_get_cpu_model_names_ret, (char *)&ret);
            return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        }
        for (u_int i = 0; i < len; i++) {
            list[i] = ret.models.models_val[i];
            ret.models.models_val[i] = NULL;
        }
        *models = list;
        n = (int)len;
    }
    xdr_free((xdrproc_t)xdr_rv_connect_get_cpu_model_names_ret, (char *)&ret);
    return n;
}

char *rv_connect_get_domain_capabilities(rv_conn *conn, const char *emulator, const char *arch,
                                         const char *machine, const char *virttype,
                                         unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    /* Each may be NULL: the driver's default. */
    rv_connect_get_domain_capabilities_args args = {
        .emulatorbin = emulator ? (char **)&emulator : NULL,
        .arch = arch ? (char **)&arch : NULL,
        .machine = machine ? (char **)&machine : NULL,
        .virttype = virttype ? (char **)&virttype : NULL,
        .flags = flags,
    };
    rv_connect_get_domain_capabilities_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_connect_get_domain_capabilities(rpc, &args, &ret, &err) < 0)
        return rvc_fail_null(&err);
    return ret.capabilities;        /* the caller's now */
}

/* ---- bulk statistics ---- */

void rv_domain_stats_free(rv_domain_stats *records, int n)
{
    for (int i = 0; records && i < n; i++) {
        rv_domain_free(records[i].dom);
        rv_typed_parameters_free(records[i].params, records[i].nparams);
    }
    free(records);
}

int rv_connect_get_all_domain_stats(rv_conn *conn, rv_dom *const *doms, unsigned int ndoms,
                                    unsigned int stats, rv_domain_stats **records,
                                    unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!records)
        return no_result_pointer(__func__);
    if (ndoms > RV_DOMAIN_LIST_MAX || (ndoms && !doms))
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: %u domains", __func__, ndoms);
    *records = NULL;
    rv_nonnull_domain *wire = calloc((size_t)ndoms + 1, sizeof(*wire));
    if (!wire)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    for (unsigned int i = 0; i < ndoms; i++)
        wire[i] = rvc_dom_to_wire(doms[i]);
    rv_connect_get_all_domain_stats_args args = { .doms = { ndoms, wire }, .stats = stats,
                                                  .flags = flags };
    rv_connect_get_all_domain_stats_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    int rc = rvc_call_connect_get_all_domain_stats(rpc, &args, &ret, &err);
    free(wire);
    if (rc < 0)
        return rvc_fail(&err);
    u_int n = ret.retStats.retStats_len;
    rv_domain_stats *list = calloc(n + 1, sizeof(*list));
    int ok = list != NULL;
    for (u_int i = 0; ok && i < n; i++) {
        rv_domain_stats_record *w = &ret.retStats.retStats_val[i];
        u_int np = w->params.params_len;
        list[i].params = calloc(np + 1, sizeof(*list[i].params));
        list[i].dom = list[i].params ? rvc_dom_from_wire(conn, &w->dom) : NULL;
        if (!list[i].dom) {
            ok = 0;
            break;
        }
        int got = rvc_params_from_wire(list[i].params, (int)np, w->params.params_val, np,
                                       __func__);
        if (got < 0) {
            rv_domain_stats_free(list, (int)i + 1);
            xdr_free((xdrproc_t)xdr_rv_connect_get_all_domain_stats_ret, (char *)&ret);
            return -1;
        }
        list[i].nparams = got;
    }
    xdr_free((xdrproc_t)xdr_rv_connect_get_all_domain_stats_ret, (char *)&ret);
    if (!ok) {
        rv_domain_stats_free(list, (int)n);
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    }
    *records = list;
    return (int)n;
}
