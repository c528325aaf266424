/* The test driver's wire-typed slots: each turns the call's wire
 * arguments into the native call of test_driver.c and its answer into the
 * wire result.  The dispatcher frees the result with xdr_free, on failure
 * too, so whatever was moved into it before a failure is not leaked. */
#include <stdlib.h>
#include <string.h>

#include "server/drivers/conf/domlist.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_network.h"
#include "server/drivers/test/test_nodedev.h"
#include "server/drivers/test/test_snapshot.h"
#include "server/drivers/test/test_storage.h"
#include "server/drivers/test/test_stats.h"
#include "server/drivers/test/test_tune.h"

static const test_native *const native = &rv_test_native;

static int oom(rv_err *err)
{
    rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

/* A byte string whose wire length counts its trailing NUL. */
static void put_nul_string(char **val, u_int *len, char *s)
{
    *len = (u_int)strlen(s) + 1;
    *val = s;
}

/* A native yes/no or count (-1: failed) into an int field of the result. */
static int put_count(int n, int *field)
{
    if (n < 0)
        return -1;
    *field = n;
    return 0;
}

/* ---- host ---- */

static int connect_get_type(rv_driver_conn *c, rv_connect_get_type_ret *ret, rv_err *err)
{
    return rv_string_result(native->get_type(c, &ret->type, err), &ret->type, err);
}

static int connect_get_version(rv_driver_conn *c, rv_connect_get_version_ret *ret, rv_err *err)
{
    unsigned long long v = 0;
    if (native->get_version(c, &v, err) < 0)
        return -1;
    ret->hv_ver = v;
    return 0;
}

static int connect_get_hostname(rv_driver_conn *c, rv_connect_get_hostname_ret *ret,
                                rv_err *err)
{
    return rv_string_result(native->get_hostname(c, &ret->hostname, err), &ret->hostname, err);
}

static int connect_get_capabilities(rv_driver_conn *c, rv_connect_get_capabilities_ret *ret,
                                    rv_err *err)
{
    return rv_string_result(native->get_capabilities(c, &ret->capabilities, err),
                            &ret->capabilities, err);
}

static int node_get_info(rv_driver_conn *c, rv_node_get_info_ret *ret, rv_err *err)
{
    rv_driver_node_info info = { 0 };
    if (native->node_get_info(c, &info, err) < 0)
        return -1;
    memcpy(ret->model, info.model, sizeof(ret->model));
    ret->memory = info.memory_kib;
    ret->cpus = info.cpus;
    ret->mhz = info.mhz;
    ret->nodes = info.nodes;
    ret->sockets = info.sockets;
    ret->cores = info.cores;
    ret->threads = info.threads;
    return 0;
}

static int node_get_security_model(rv_driver_conn *c, rv_node_get_security_model_ret *ret,
                                   rv_err *err)
{
    char *model = NULL, *doi = NULL;
    if (native->node_get_security_model(c, &model, &doi, err) < 0)
        return -1;
    put_nul_string(&ret->model.model_val, &ret->model.model_len, model);
    put_nul_string(&ret->doi.doi_val, &ret->doi.doi_len, doi);
    return 0;
}

/* ---- lists and lookups ---- */

static int connect_num_of_domains(rv_driver_conn *c, rv_connect_num_of_domains_ret *ret,
                                  rv_err *err)
{
    return put_count(native->num_of_domains(c, err), &ret->num);
}

static int connect_num_of_defined_domains(rv_driver_conn *c,
                                          rv_connect_num_of_defined_domains_ret *ret, rv_err *err)
{
    (void)c;
    return rv_dom_list_num_defined_wire(test_doms(), ret, err);
}

static int connect_list_defined_domains(rv_driver_conn *c,
                                        const rv_connect_list_defined_domains_args *args,
                                        rv_connect_list_defined_domains_ret *ret, rv_err *err)
{
    (void)c;
    return rv_dom_list_defined_wire(test_doms(), args, ret, err);
}

/* libvirt's test driver: trivially secure. */
static int connect_is_secure(rv_driver_conn *c, rv_connect_is_secure_ret *ret, rv_err *err)
{
    (void)c;
    (void)err;
    ret->secure = 1;
    return 0;
}

static int connect_list_domains(rv_driver_conn *c, const rv_connect_list_domains_args *args,
                                rv_connect_list_domains_ret *ret, rv_err *err)
{
    (void)c;
    return rv_dom_list_ids_wire(test_doms(), args, ret, err);
}

static int connect_list_all_domains(rv_driver_conn *c,
                                    const rv_connect_list_all_domains_args *args,
                                    rv_connect_list_all_domains_ret *ret, rv_err *err)
{
    rv_dom_ref *doms = NULL;
    int n = native->list_all_domains(c, args->flags, &doms, err);
    return rv_dom_refs_put_all(n, doms, args->need_results, ret, err);
}

static int domain_lookup_by_id(rv_driver_conn *c, const rv_domain_lookup_by_id_args *args,
                               rv_domain_lookup_by_id_ret *ret, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(native->lookup_by_id(c, args->id, &ref, err), &ref, &ret->dom);
}

static int domain_lookup_by_name(rv_driver_conn *c, const rv_domain_lookup_by_name_args *args,
                                 rv_domain_lookup_by_name_ret *ret, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(native->lookup_by_name(c, args->name, &ref, err), &ref, &ret->dom);
}

static int domain_lookup_by_uuid(rv_driver_conn *c, const rv_domain_lookup_by_uuid_args *args,
                                 rv_domain_lookup_by_uuid_ret *ret, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(native->lookup_by_uuid(c, (const unsigned char *)args->uuid, &ref, err),
                          &ref, &ret->dom);
}

/* ---- definition and lifecycle ---- */

static int domain_define_xml(rv_driver_conn *c, const rv_domain_define_xml_args *args,
                             rv_domain_define_xml_ret *ret, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(native->define_xml(c, args->xml, 0, &ref, err), &ref, &ret->dom);
}

static int domain_define_xml_flags(rv_driver_conn *c, const rv_domain_define_xml_flags_args *args,
                                   rv_domain_define_xml_flags_ret *ret, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(native->define_xml(c, args->xml, args->flags, &ref, err), &ref,
                          &ret->dom);
}

static int domain_create_xml(rv_driver_conn *c, const rv_domain_create_xml_args *args,
                             rv_domain_create_xml_ret *ret, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(native->create_xml(c, args->xml_desc, args->flags, &ref, err), &ref,
                     &ret->dom);
}

/* Start a defined domain; out (optional) gets its new identity. */
static int start_domain(rv_driver_conn *c, const rv_nonnull_domain *wire, unsigned int flags,
                        rv_nonnull_domain *out, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire), started = { 0 };
    if (native->create(c, &ref, flags, &started, err) < 0)
        return -1;
    if (out)
        rv_dom_ref_to_wire(out, &started);
    free(started.name);
    return 0;
}

static int domain_create(rv_driver_conn *c, const rv_domain_create_args *args, rv_err *err)
{
    return start_domain(c, &args->dom, 0, NULL, err);
}

static int domain_create_with_flags(rv_driver_conn *c,
                                    const rv_domain_create_with_flags_args *args,
                                    rv_domain_create_with_flags_ret *ret, rv_err *err)
{
    return start_domain(c, &args->dom, args->flags, &ret->dom, err);
}

/* The state changes that take a domain (and perhaps flags), and nothing back. */
#define DOM_OP(name, args_type, call)                                                   \
    static int name(rv_driver_conn *c, const args_type *args, rv_err *err)              \
    {                                                                                    \
        rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);                               \
        return call;                                                                     \
    }
DOM_OP(domain_undefine, rv_domain_undefine_args, native->undefine(c, &ref, 0, err))
DOM_OP(domain_undefine_flags, rv_domain_undefine_flags_args,
       native->undefine(c, &ref, args->flags, err))
DOM_OP(domain_destroy, rv_domain_destroy_args, native->destroy(c, &ref, 0, err))
DOM_OP(domain_destroy_flags, rv_domain_destroy_flags_args,
       native->destroy(c, &ref, args->flags, err))
DOM_OP(domain_shutdown, rv_domain_shutdown_args, native->shutdown(c, &ref, 0, err))
DOM_OP(domain_shutdown_flags, rv_domain_shutdown_flags_args,
       native->shutdown(c, &ref, args->flags, err))
DOM_OP(domain_reboot, rv_domain_reboot_args, native->reboot(c, &ref, args->flags, err))
DOM_OP(domain_suspend, rv_domain_suspend_args, native->suspend(c, &ref, err))
DOM_OP(domain_resume, rv_domain_resume_args, native->resume(c, &ref, err))
DOM_OP(domain_managed_save_remove, rv_domain_managed_save_remove_args,
       native->managed_save_remove(c, &ref, args->flags, err))
#undef DOM_OP

/* ---- queries ---- */

static int domain_get_info(rv_driver_conn *c, const rv_domain_get_info_args *args,
                           rv_domain_get_info_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    rv_dom_info info;
    if (native->get_info(c, &ref, &info, err) < 0)
        return -1;
    ret->state = (u_char)info.state;
    ret->maxMem = info.max_mem_kib;
    ret->memory = info.memory_kib;
    ret->nrVirtCpu = (u_short)info.nr_vcpu;
    ret->cpuTime = info.cpu_time_ns;
    return 0;
}

static int domain_get_state(rv_driver_conn *c, const rv_domain_get_state_args *args,
                            rv_domain_get_state_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return native->get_state(c, &ref, args->flags, &ret->state, &ret->reason, err);
}

static int domain_get_xml_desc(rv_driver_conn *c, const rv_domain_get_xml_desc_args *args,
                               rv_domain_get_xml_desc_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return rv_string_result(native->get_xml_desc(c, &ref, args->flags, &ret->xml, err),
                            &ret->xml, err);
}

static int domain_get_os_type(rv_driver_conn *c, const rv_domain_get_os_type_args *args,
                              rv_domain_get_os_type_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return rv_string_result(native->get_os_type(c, &ref, &ret->type, err), &ret->type, err);
}

static int domain_get_autostart(rv_driver_conn *c, const rv_domain_get_autostart_args *args,
                                rv_domain_get_autostart_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return native->get_autostart(c, &ref, &ret->autostart, err);
}

static int domain_is_active(rv_driver_conn *c, const rv_domain_is_active_args *args,
                            rv_domain_is_active_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return put_count(native->is_active(c, &ref, err), &ret->active);
}

static int domain_is_persistent(rv_driver_conn *c, const rv_domain_is_persistent_args *args,
                                rv_domain_is_persistent_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return put_count(native->is_persistent(c, &ref, err), &ret->persistent);
}

static int domain_has_managed_save_image(rv_driver_conn *c,
                                         const rv_domain_has_managed_save_image_args *args,
                                         rv_domain_has_managed_save_image_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return put_count(native->has_managed_save_image(c, &ref, args->flags, err), &ret->result);
}

static int domain_snapshot_num(rv_driver_conn *c, const rv_domain_snapshot_num_args *args,
                               rv_domain_snapshot_num_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    return put_count(native->snapshot_num(c, &ref, args->flags, err), &ret->num);
}

static int domain_get_security_label(rv_driver_conn *c,
                                     const rv_domain_get_security_label_args *args,
                                     rv_domain_get_security_label_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    char *label = NULL;
    if (native->get_security_label(c, &ref, &label, &ret->enforcing, err) < 0)
        return -1;
    put_nul_string(&ret->label.label_val, &ret->label.label_len, label);
    return 0;
}

static int domain_get_messages(rv_driver_conn *c, const rv_domain_get_messages_args *args,
                               rv_domain_get_messages_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    char **msgs = NULL;
    int n = native->get_messages(c, &ref, args->flags, &msgs, err);
    if (n < 0)
        return -1;
    ret->msgs.msgs_val = msgs;
    ret->msgs.msgs_len = (u_int)n;
    if (n > RV_DOMAIN_MESSAGES_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "too many domain messages (%d)", n);
        return -1;      /* the dispatcher frees ret */
    }
    return 0;
}

/* Copy one typed parameter into its wire form (moving strings). */
static void put_param(rv_typed_param *wire, rv_param *p)
{
    wire->field = p->field;
    p->field = NULL;
    wire->value.type = p->type;
    switch (p->type) {
    case RV_TYPED_PARAM_INT: wire->value.rv_typed_param_value_u.i = p->v.i; break;
    case RV_TYPED_PARAM_UINT: wire->value.rv_typed_param_value_u.ui = p->v.ui; break;
    case RV_TYPED_PARAM_LLONG: wire->value.rv_typed_param_value_u.l = p->v.l; break;
    case RV_TYPED_PARAM_ULLONG: wire->value.rv_typed_param_value_u.ul = p->v.ul; break;
    case RV_TYPED_PARAM_DOUBLE: wire->value.rv_typed_param_value_u.d = p->v.d; break;
    case RV_TYPED_PARAM_BOOLEAN: wire->value.rv_typed_param_value_u.b = p->v.b; break;
    case RV_TYPED_PARAM_STRING:
        wire->value.rv_typed_param_value_u.s = p->v.s;
        p->v.s = NULL;
        break;
    }
}

static int connect_get_all_domain_stats(rv_driver_conn *c,
                                        const rv_connect_get_all_domain_stats_args *args,
                                        rv_connect_get_all_domain_stats_ret *ret, rv_err *err)
{
    size_t nwant = args->doms.doms_len;
    rv_dom_ref *want = nwant ? calloc(nwant, sizeof(*want)) : NULL;
    if (nwant && !want)
        return oom(err);
    for (size_t i = 0; i < nwant; i++)
        want[i] = rv_dom_ref_from_wire(&args->doms.doms_val[i]);
    rv_dom_stats *stats = NULL;
    int n = native->get_all_domain_stats(c, want, nwant, args->stats, args->flags, &stats, err);
    free(want);
    if (n < 0)
        return -1;
    int rc = 0;
    rv_domain_stats_record *recs = n ? calloc((size_t)n, sizeof(*recs)) : NULL;
    if (n > RV_DOMAIN_LIST_MAX || (n && !recs)) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_INTERNAL_ERROR,
                   "cannot return stats for %d domains", n);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        rv_dom_stats *s = &stats[i];
        rv_typed_param *params = s->nparams ? calloc(s->nparams, sizeof(*params)) : NULL;
        if (s->nparams > RV_TYPED_PARAM_LIST_MAX || (s->nparams && !params)) {
            free(params);
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_INTERNAL_ERROR,
                       "cannot return %zu stats for one domain", s->nparams);
            rc = -1;
            break;
        }
        rv_dom_ref_to_wire(&recs[i].dom, &s->dom);
        for (size_t j = 0; j < s->nparams; j++)
            put_param(&params[j], &s->params[j]);
        recs[i].params.params_val = params;
        recs[i].params.params_len = (u_int)s->nparams;
        ret->retStats.retStats_len = (u_int)i + 1;
    }
    /* On failure what was moved into ret is freed by the dispatcher. */
    ret->retStats.retStats_val = recs;
    if (rc < 0 && ret->retStats.retStats_len == 0) {
        free(recs);
        ret->retStats.retStats_val = NULL;
    }
    rv_dom_stats_free(stats, n > 0 ? (size_t)n : 0);
    return rc;
}

const rv_driver rv_test_driver = {
    .name = "test",
    .probe = test_probe,
    .open = test_open,
    .close = test_close,
    .cleanup = test_cleanup,
    .ops = {
        .connect_get_type = connect_get_type,
        .connect_get_version = connect_get_version,
        .connect_get_hostname = connect_get_hostname,
        .connect_get_capabilities = connect_get_capabilities,
        .node_get_info = node_get_info,
        .node_get_security_model = node_get_security_model,
        .connect_num_of_domains = connect_num_of_domains,
        .connect_num_of_defined_domains = connect_num_of_defined_domains,
        .connect_list_defined_domains = connect_list_defined_domains,
        .connect_is_secure = connect_is_secure,
        .connect_list_domains = connect_list_domains,
        .connect_list_all_domains = connect_list_all_domains,
        .domain_lookup_by_id = domain_lookup_by_id,
        .domain_lookup_by_name = domain_lookup_by_name,
        .domain_lookup_by_uuid = domain_lookup_by_uuid,
        .domain_define_xml = domain_define_xml,
        .domain_define_xml_flags = domain_define_xml_flags,
        .domain_create_xml = domain_create_xml,
        .domain_create = domain_create,
        .domain_create_with_flags = domain_create_with_flags,
        .domain_undefine = domain_undefine,
        .domain_undefine_flags = domain_undefine_flags,
        .domain_rename = test_domain_rename,
        .domain_destroy = domain_destroy,
        .domain_destroy_flags = domain_destroy_flags,
        .domain_shutdown = domain_shutdown,
        .domain_shutdown_flags = domain_shutdown_flags,
        .domain_reboot = domain_reboot,
        .domain_suspend = domain_suspend,
        .domain_resume = domain_resume,
        .domain_managed_save_remove = domain_managed_save_remove,
        /* save, restore, reset, autostart, memory (test_driver.c, test_tune.c) */
        .domain_set_autostart = test_domain_set_autostart,
        .domain_set_max_memory = test_domain_set_max_memory,
        .domain_set_memory = test_domain_set_memory,
        .domain_restore = test_domain_restore,
        .domain_save = test_domain_save,
        .domain_core_dump = test_domain_core_dump,
        .domain_save_image_get_xml_desc = test_domain_save_image_get_xml_desc,
        .domain_core_dump_with_format = test_domain_core_dump_with_format,
        .domain_managed_save = test_domain_managed_save,
        .domain_set_memory_flags = test_domain_set_memory_flags,
        .domain_save_flags = test_domain_save_flags,
        .domain_restore_flags = test_domain_restore_flags,
        .domain_reset = test_domain_reset,
        .domain_is_updated = test_domain_is_updated,
        /* keys, NMI and screenshots (test_input.c) */
        .domain_inject_nmi = test_domain_inject_nmi,
        .domain_screenshot = test_domain_screenshot,
        .domain_send_key = test_domain_send_key,
        .domain_fstrim = test_domain_fstrim,
        .domain_get_disk_errors = test_domain_get_disk_errors,      /* test_stats.c */
        .domain_get_cpu_stats = test_domain_get_cpu_stats,
        .domain_memory_peek = test_domain_memory_peek,
        .domain_fsfreeze = test_domain_fsfreeze,
        .domain_fsthaw = test_domain_fsthaw,
        .domain_set_user_password = test_domain_set_user_password,
        .domain_set_metadata = test_domain_set_metadata,
        .domain_get_metadata = test_domain_get_metadata,
        .domain_get_info = domain_get_info,
        .domain_get_state = domain_get_state,
        .domain_get_xml_desc = domain_get_xml_desc,
        .domain_get_os_type = domain_get_os_type,
        .domain_get_autostart = domain_get_autostart,
        .domain_is_active = domain_is_active,
        .domain_is_persistent = domain_is_persistent,
        .domain_has_managed_save_image = domain_has_managed_save_image,
        .domain_snapshot_num = domain_snapshot_num,
        .domain_get_security_label = domain_get_security_label,
        .domain_get_messages = domain_get_messages,
        .connect_get_all_domain_stats = connect_get_all_domain_stats,
        /* networks (test_network.c); no DHCP leases, as libvirt's test driver */
        .connect_num_of_networks = test_connect_num_of_networks,
        .connect_num_of_defined_networks = test_connect_num_of_defined_networks,
        .connect_list_networks = test_connect_list_networks,
        .connect_list_defined_networks = test_connect_list_defined_networks,
        .connect_list_all_networks = test_connect_list_all_networks,
        .network_lookup_by_name = test_network_lookup_by_name,
        .network_lookup_by_uuid = test_network_lookup_by_uuid,
        .network_define_xml = test_network_define_xml,
        .network_create_xml = test_network_create_xml,
        .network_define_xml_flags = test_network_define_xml_flags,
        .network_create_xml_flags = test_network_create_xml_flags,
        .network_create = test_network_create,
        .network_destroy = test_network_destroy,
        .network_undefine = test_network_undefine,
        .network_get_xml_desc = test_network_get_xml_desc,
        .network_get_bridge_name = test_network_get_bridge_name,
        .network_get_autostart = test_network_get_autostart,
        .network_set_autostart = test_network_set_autostart,
        .network_update = test_network_update,
        .network_is_active = test_network_is_active,
        .network_is_persistent = test_network_is_persistent,
        /* storage pools and volumes (test_storage.c); no volume resize or
         * wipe, as libvirt's test driver */
        .connect_num_of_storage_pools = test_connect_num_of_storage_pools,
        .connect_list_storage_pools = test_connect_list_storage_pools,
        .connect_num_of_defined_storage_pools = test_connect_num_of_defined_storage_pools,
        .connect_list_defined_storage_pools = test_connect_list_defined_storage_pools,
        .connect_find_storage_pool_sources = test_connect_find_storage_pool_sources,
        .storage_pool_create_xml = test_storage_pool_create_xml,
        .storage_pool_define_xml = test_storage_pool_define_xml,
        .storage_pool_create = test_storage_pool_create,
        .storage_pool_build = test_storage_pool_build,
        .storage_pool_destroy = test_storage_pool_destroy,
        .storage_pool_delete = test_storage_pool_delete,
        .storage_pool_undefine = test_storage_pool_undefine,
        .storage_pool_refresh = test_storage_pool_refresh,
        .storage_pool_lookup_by_name = test_storage_pool_lookup_by_name,
        .storage_pool_lookup_by_uuid = test_storage_pool_lookup_by_uuid,
        .storage_pool_lookup_by_volume = test_storage_pool_lookup_by_volume,
        .storage_pool_get_info = test_storage_pool_get_info,
        .storage_pool_get_xml_desc = test_storage_pool_get_xml_desc,
        .storage_pool_get_autostart = test_storage_pool_get_autostart,
        .storage_pool_set_autostart = test_storage_pool_set_autostart,
        .storage_pool_num_of_volumes = test_storage_pool_num_of_volumes,
        .storage_pool_list_volumes = test_storage_pool_list_volumes,
        .storage_vol_create_xml = test_storage_vol_create_xml,
        .storage_vol_delete = test_storage_vol_delete,
        .storage_vol_upload = test_storage_vol_upload,
        .storage_vol_download = test_storage_vol_download,
        .storage_vol_lookup_by_name = test_storage_vol_lookup_by_name,
        .storage_vol_lookup_by_key = test_storage_vol_lookup_by_key,
        .storage_vol_lookup_by_path = test_storage_vol_lookup_by_path,
        .storage_vol_get_info = test_storage_vol_get_info,
        .storage_vol_get_xml_desc = test_storage_vol_get_xml_desc,
        .storage_vol_get_path = test_storage_vol_get_path,
        .storage_vol_create_xml_from = test_storage_vol_create_xml_from,
        .storage_pool_is_active = test_storage_pool_is_active,
        .storage_pool_is_persistent = test_storage_pool_is_persistent,
        .connect_list_all_storage_pools = test_connect_list_all_storage_pools,
        .storage_pool_list_all_volumes = test_storage_pool_list_all_volumes,
        /* host devices (test_nodedev.c) */
        .node_num_of_devices = test_node_num_of_devices,
        .node_list_devices = test_node_list_devices,
        .connect_list_all_node_devices = test_connect_list_all_node_devices,
        .node_device_lookup_by_name = test_node_device_lookup_by_name,
        .node_device_get_xml_desc = test_node_device_get_xml_desc,
        .node_device_get_parent = test_node_device_get_parent,
        .node_device_num_of_caps = test_node_device_num_of_caps,
        .node_device_list_caps = test_node_device_list_caps,
        .node_device_create_xml = test_node_device_create_xml,
        .node_device_destroy = test_node_device_destroy,
        /* domain snapshots (test_snapshot.c) */
        .domain_snapshot_create_xml = test_domain_snapshot_create_xml,
        .domain_snapshot_get_xml_desc = test_domain_snapshot_get_xml_desc,
        .domain_snapshot_list_names = test_domain_snapshot_list_names,
        .domain_snapshot_lookup_by_name = test_domain_snapshot_lookup_by_name,
        .domain_has_current_snapshot = test_domain_has_current_snapshot,
        .domain_snapshot_current = test_domain_snapshot_current,
        .domain_revert_to_snapshot = test_domain_revert_to_snapshot,
        .domain_snapshot_delete = test_domain_snapshot_delete,
        .domain_snapshot_get_parent = test_domain_snapshot_get_parent,
        .domain_snapshot_num_children = test_domain_snapshot_num_children,
        .domain_snapshot_list_children_names = test_domain_snapshot_list_children_names,
        .domain_snapshot_is_current = test_domain_snapshot_is_current,
        .domain_snapshot_has_metadata = test_domain_snapshot_has_metadata,
        .domain_list_all_snapshots = test_domain_list_all_snapshots,
        .domain_snapshot_list_all_children = test_domain_snapshot_list_all_children,
        .domain_checkpoint_create_xml = test_domain_checkpoint_create_xml,
        .domain_checkpoint_get_xml_desc = test_domain_checkpoint_get_xml_desc,
        .domain_list_all_checkpoints = test_domain_list_all_checkpoints,
        .domain_checkpoint_list_all_children = test_domain_checkpoint_list_all_children,
        .domain_checkpoint_lookup_by_name = test_domain_checkpoint_lookup_by_name,
        .domain_checkpoint_get_parent = test_domain_checkpoint_get_parent,
        .domain_checkpoint_delete = test_domain_checkpoint_delete,
        /* statistics, tuning and host interfaces (test_stats.c) */
        .domain_get_block_io_tune = test_domain_get_block_io_tune,
        .domain_get_perf_events = test_domain_get_perf_events,
        .domain_get_interface_parameters = test_domain_get_interface_parameters,
        .domain_get_scheduler_parameters_flags =
            test_domain_get_scheduler_parameters_flags,
        .domain_get_max_vcpus = test_domain_get_max_vcpus,
        .domain_get_max_memory = test_domain_get_max_memory,
        .domain_set_memory_stats_period = test_domain_set_memory_stats_period,
        .connect_get_max_vcpus = test_connect_get_max_vcpus,
        .connect_get_sysinfo = test_connect_get_sysinfo,
        .node_get_cells_free_memory = test_node_get_cells_free_memory,
        .node_get_free_memory = test_node_get_free_memory,
        .node_get_cpu_stats = test_node_get_cpu_stats,
        .node_get_cpu_map = test_node_get_cpu_map,
        .connect_get_cpu_model_names = test_connect_get_cpu_model_names,
        .domain_memory_stats = test_domain_memory_stats,
        .domain_block_stats = test_domain_block_stats,
        .domain_interface_stats = test_domain_interface_stats,
        .domain_get_block_info = test_domain_get_block_info,
        .domain_get_vcpus = test_domain_get_vcpus,
        .domain_get_vcpus_flags = test_domain_get_vcpus_flags,
        .domain_get_vcpu_pin_info = test_domain_get_vcpu_pin_info,
        .domain_get_emulator_pin_info = test_domain_get_emulator_pin_info,
        .domain_get_iothread_info = test_domain_get_iothread_info,
        .domain_get_scheduler_type = test_domain_get_scheduler_type,
        .domain_get_scheduler_parameters = test_domain_get_scheduler_parameters,
        .domain_get_memory_parameters = test_domain_get_memory_parameters,
        .domain_get_blkio_parameters = test_domain_get_blkio_parameters,
        .domain_get_numa_parameters = test_domain_get_numa_parameters,
        .domain_get_hostname = test_domain_get_hostname,
        .domain_get_time = test_domain_get_time,
        .domain_get_control_info = test_domain_get_control_info,
        .domain_get_fsinfo = test_domain_get_fsinfo,
        .domain_interface_addresses = test_domain_interface_addresses,
        .connect_list_all_interfaces = test_connect_list_all_interfaces,
        .interface_is_active = test_interface_is_active,
        .interface_lookup_by_name = test_interface_lookup_by_name,
        .interface_lookup_by_mac_string = test_interface_lookup_by_mac_string,
        .interface_get_xml_desc = test_interface_get_xml_desc,
        /* tuning setters (test_tune.c) */
        .domain_set_scheduler_parameters = test_domain_set_scheduler_parameters,
        .domain_set_scheduler_parameters_flags = test_domain_set_scheduler_parameters_flags,
        .domain_set_memory_parameters = test_domain_set_memory_parameters,
        .domain_set_blkio_parameters = test_domain_set_blkio_parameters,
        .domain_set_numa_parameters = test_domain_set_numa_parameters,
        .domain_set_interface_parameters = test_domain_set_interface_parameters,
        .domain_set_block_io_tune = test_domain_set_block_io_tune,
        .domain_pin_vcpu = test_domain_pin_vcpu,
        .domain_pin_vcpu_flags = test_domain_pin_vcpu_flags,
        .domain_pin_emulator = test_domain_pin_emulator,
        .domain_set_time = test_domain_set_time,
        .domain_set_vcpus = test_domain_set_vcpus,
        .domain_set_vcpus_flags = test_domain_set_vcpus_flags,
        .domain_set_lifecycle_action = test_domain_set_lifecycle_action,
        .domain_set_perf_events = test_domain_set_perf_events,
    },
};
