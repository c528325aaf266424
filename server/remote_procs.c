/* The remote program's handlers: each turns its wire arguments into a
 * driver call and the driver's answer into the wire result.  The generated
 * table (server/rv_dispatch.gen.c) routes calls here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/glob.h"
#include "auth/sasl.h"
#include "common/log.h"
#include "rv_remote.h"
#include "server/dispatch.h"
#include "server/rv_dispatch.gen.h"
#include "transport/tls.h"

RV_LOG_CATEGORY("server.remote");

#define open_conn rvs_call_conn

static const rv_driver *drv(rvs_call *call)
{
    return call->client->drv;
}

/* The wire domain as a driver reference; the name is borrowed. */
static rv_dom_ref dom_ref(const rv_nonnull_domain *wire)
{
    rv_dom_ref ref = { .name = wire->name, .id = wire->id };
    memcpy(ref.uuid, wire->uuid, sizeof(ref.uuid));
    return ref;
}

/* Move a driver reference into a wire domain (the name changes owner). */
static void put_dom(rv_nonnull_domain *wire, rv_dom_ref *ref)
{
    wire->name = ref->name;
    memcpy(wire->uuid, ref->uuid, sizeof(wire->uuid));
    wire->id = ref->id;
    ref->name = NULL;
}

/* rc is a driver call's result that put a string in *slot.  XDR can
 * neither send nor free a string over its bound, so one that long is
 * freed here and the call fails. */
static int string_result(rvs_call *call, int rc, char **slot)
{
    if (rc < 0 || !*slot || strlen(*slot) <= RV_STRING_MAX)
        return rc;
    rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
               "a reply string of %zu bytes exceeds the protocol's limit of %d",
               strlen(*slot), RV_STRING_MAX);
    free(*slot);
    *slot = NULL;
    return -1;
}

/* A byte string whose wire length counts its trailing NUL. */
static void put_nul_string(char **val, u_int *len, char *s)
{
    *len = (u_int)strlen(s) + 1;
    *val = s;
}

/* ---- connection ---- */

int rvs_handle_connect_open(rvs_call *call, rv_connect_open_args *args)
{
    rvs_client *c = call->client;
    if (c->drv_conn) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INTERNAL_ERROR, "connection already open");
        return -1;
    }
    const char *name = args->name ? *args->name : NULL;
    const rv_driver *d = rv_driver_for_uri(name, &call->err);
    if (!d)
        return -1;
    char *uri = NULL;
    if (name ? !(uri = strdup(name)) : asprintf(&uri, "%s:///default", d->name) < 0) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (d->open(uri, args->flags, &c->drv_conn, &call->err) < 0) {
        free(uri);
        return -1;
    }
    c->drv = d;
    c->uri = uri;
    if (args->flags & RV_CONNECT_RO)
        c->readonly = 1;
    RV_INFO("client %llu (pid %d uid %u) opened %s%s", c->serial_no, (int)c->peer.pid,
            (unsigned)c->peer.uid, uri, c->readonly ? " read-only" : "");
    return 0;
}

int rvs_handle_connect_close(rvs_call *call)
{
    rvs_client *c = call->client;
    if (c->drv_conn) {
        c->drv->close(c->drv_conn);
        c->drv_conn = NULL;
    }
    free(c->uri);
    c->uri = NULL;
    c->drv = NULL;
    /* Subscriptions belong to the hypervisor connection. */
    rvs_events_forget(c);
    return 0;
}

int rvs_handle_connect_supports_feature(rvs_call *call, rv_connect_supports_feature_args *args,
                                        rv_connect_supports_feature_ret *ret)
{
    switch (args->feature) {
    case RV_FEATURE_PROGRAM_KEEPALIVE:
        /* As libvirtd: a client that asks answers PINGs, so from now on
         * it gets them; one that never asks is never PINGed. */
        rvs_client_start_keepalive(call->client);
        ret->supported = 1;
        break;
    case RV_FEATURE_REMOTE_EVENT_CALLBACK:
    case RV_FEATURE_REMOTE_CLOSE_CALLBACK:
        ret->supported = 1;
        break;
    default:
        ret->supported = 0;
    }
    return 0;
}

int rvs_handle_auth_list(rvs_call *call, rv_auth_list_ret *ret)
{
    ret->types.types_val = malloc(sizeof(rv_auth_type));
    if (!ret->types.types_val) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    ret->types.types_val[0] = call->client->authenticated ? RV_AUTH_NONE : RV_AUTH_SASL;
    ret->types.types_len = 1;
    return 0;
}

/* ---- SASL: AUTH_SASL_INIT, START and STEP (libvirt's flow) ---- */

/* The external SSF of a Unix socket: nothing outside the host sees it. */
#define RVS_LOCAL_SSF 256

/* A failed or refused attempt: logged with the peer and the user, an
 * AUTH_FAILED reply, then the connection closes. */
static int auth_failed(rvs_call *call, const char *why)
{
    rvs_client *c = call->client;
    char name[256];
    const char *user = c->sasl ? rv_sasl_attempted_user(c->sasl) : NULL;
    RV_WARN("%s: SASL authentication%s%s%s failed: %s",
            rvs_client_name(c, name, sizeof(name)), user ? " as '" : "", user ? user : "",
            user ? "'" : "", why);
    rv_sasl_free(c->sasl);
    c->sasl = NULL;
    /* The details stay in the log: telling an unknown user from a wrong
     * password would let anyone probe for user names. */
    rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED, "authentication failed");
    rvs_client_close_after_flush(c);
    return -1;
}

static int sasl_expected(rvs_call *call, int started)
{
    rvs_client *c = call->client;
    if (c->authenticated || c->handshaking)
        return auth_failed(call, "SASL is not expected on this connection now");
    if (started && !c->sasl)
        return auth_failed(call, "AUTH_SASL_INIT must come first");
    return 0;
}

int rvs_handle_auth_sasl_init(rvs_call *call, rv_auth_sasl_init_ret *ret)
{
    rvs_client *c = call->client;
    if (sasl_expected(call, 0) < 0)
        return -1;
    rv_sasl_free(c->sasl);
    /* TLS already protects the stream (its strength counts as SASL's
     * external SSF) and so does a local Unix socket: then no security
     * layer is needed. */
    int external = c->local ? RVS_LOCAL_SSF : rv_tls_ssf(c->tr);
    rv_err err = { 0 };
    c->sasl = rv_sasl_server_new(NULL, NULL, external, external ? 0 : c->min_ssf, &err);
    char *mechs = c->sasl ? rv_sasl_server_mechlist(c->sasl, &err) : NULL;
    if (!mechs) {
        rv_err_move(&call->err, &err);
        return -1;
    }
    ret->mechlist = mechs;
    return 0;
}

/* Copy a step's output into the reply, and finish on DONE. */
static int sasl_result(rvs_call *call, int rc, const rv_sasl_data *out, int *complete,
                       int *nil, u_int *data_len, char **data_val)
{
    rvs_client *c = call->client;
    if (out->len > RV_AUTH_SASL_DATA_MAX)
        return auth_failed(call, "the SASL library produced too much data for one step");
    *nil = out->nil;
    *data_len = (u_int)out->len;
    if (out->len && !(*data_val = malloc(out->len))) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (out->len)
        memcpy(*data_val, out->data, out->len);
    *complete = rc == RV_SASL_DONE;
    if (rc != RV_SASL_DONE)
        return 0;

    const char *user = rv_sasl_username(c->sasl);
    if (!rv_glob_list_match(c->env->sasl_allowed_users, user ? user : ""))
        return auth_failed(call, "the user is not in sasl_allowed_username_list");
    if (!(c->sasl_user = strdup(user ? user : "")))
        return auth_failed(call, "out of memory");
    int ssf = rv_sasl_ssf(c->sasl);
    rvs_client_authenticated(c);
    char name[256];
    RV_INFO("%s: authenticated with SASL (SSF %d)", rvs_client_name(c, name, sizeof(name)),
            ssf);
    /* Both ends see the same negotiated SSF; over TLS and Unix the
     * external SSF makes it 0. */
    if (ssf > 0)
        c->sasl_layer_next = 1;     /* after this reply goes out in clear */
    else {
        rv_sasl_free(c->sasl);
        c->sasl = NULL;
    }
    return 0;
}

/* START (mech given) and STEP (mech NULL) share everything else; their
 * replies have the same fields. */
static int sasl_exchange(rvs_call *call, const char *mech, int nil, u_int len, char *data,
                         int *complete, int *out_nil, u_int *out_len, char **out_data)
{
    if (sasl_expected(call, 1) < 0)
        return -1;
    rv_sasl_data in = { data, len, nil }, out = { 0 };
    rv_err err = { 0 };
    int rc = rv_sasl_server_step(call->client->sasl, mech, &in, &out, &err);
    if (rc < 0) {
        int failed = auth_failed(call, err.message ? err.message : "unknown error");
        rv_err_clear(&err);
        return failed;
    }
    return sasl_result(call, rc, &out, complete, out_nil, out_len, out_data);
}

int rvs_handle_auth_sasl_start(rvs_call *call, rv_auth_sasl_start_args *args,
                               rv_auth_sasl_start_ret *ret)
{
    return sasl_exchange(call, args->mech, args->nil, args->data.data_len, args->data.data_val,
                         &ret->complete, &ret->nil, &ret->data.data_len, &ret->data.data_val);
}

int rvs_handle_auth_sasl_step(rvs_call *call, rv_auth_sasl_step_args *args,
                              rv_auth_sasl_step_ret *ret)
{
    return sasl_exchange(call, NULL, args->nil, args->data.data_len, args->data.data_val,
                         &ret->complete, &ret->nil, &ret->data.data_len, &ret->data.data_val);
}

int rvs_handle_auth_polkit(rvs_call *call, rv_auth_polkit_ret *ret)
{
    (void)ret;
    return auth_failed(call, "polkit authentication is not supported by remvirtd");
}

/* remvirtd's drivers never close a connection under a client, so no
 * CONNECT_EVENT_CONNECTION_CLOSED ever follows: nothing to remember. */
int rvs_handle_connect_register_close_callback(rvs_call *call)
{
    return open_conn(call) ? 0 : -1;
}

int rvs_handle_connect_unregister_close_callback(rvs_call *call)
{
    return open_conn(call) ? 0 : -1;
}

/* ---- events ---- */

int rvs_handle_connect_domain_event_callback_register_any(
    rvs_call *call, rv_connect_domain_event_callback_register_any_args *args,
    rv_connect_domain_event_callback_register_any_ret *ret)
{
    if (!open_conn(call))
        return -1;
    return rvs_events_subscribe(call->client, args->eventID, args->dom, &ret->callbackID,
                                &call->err);
}

int rvs_handle_connect_domain_event_callback_deregister_any(
    rvs_call *call, rv_connect_domain_event_callback_deregister_any_args *args)
{
    if (!open_conn(call))
        return -1;
    return rvs_events_unsubscribe(call->client, args->callbackID, &call->err);
}

int rvs_handle_connect_get_uri(rvs_call *call, rv_connect_get_uri_ret *ret)
{
    if (!open_conn(call))
        return -1;
    if (!(ret->uri = strdup(call->client->uri))) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    return 0;
}

int rvs_handle_connect_get_lib_version(rvs_call *call, rv_connect_get_lib_version_ret *ret)
{
    if (!open_conn(call))
        return -1;
    /* The libvirt API level remvirt speaks (9.0.0); clients such as
     * virt-manager gate features on it. */
    ret->lib_ver = 9000000;
    return 0;
}

/* ---- host ---- */

int rvs_handle_connect_get_type(rvs_call *call, rv_connect_get_type_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    return string_result(call, dc ? drv(call)->get_type(dc, &ret->type, &call->err) : -1,
                         &ret->type);
}

int rvs_handle_connect_get_version(rvs_call *call, rv_connect_get_version_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    unsigned long long v = 0;
    if (!dc || drv(call)->get_version(dc, &v, &call->err) < 0)
        return -1;
    ret->hv_ver = v;
    return 0;
}

int rvs_handle_connect_get_hostname(rvs_call *call, rv_connect_get_hostname_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    return string_result(call,
                         dc ? drv(call)->get_hostname(dc, &ret->hostname, &call->err) : -1,
                         &ret->hostname);
}

int rvs_handle_connect_get_capabilities(rvs_call *call, rv_connect_get_capabilities_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    return string_result(
        call, dc ? drv(call)->get_capabilities(dc, &ret->capabilities, &call->err) : -1,
        &ret->capabilities);
}

int rvs_handle_node_get_info(rvs_call *call, rv_node_get_info_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_node_info info = { 0 };
    if (!dc || drv(call)->node_get_info(dc, &info, &call->err) < 0)
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

int rvs_handle_node_get_security_model(rvs_call *call, rv_node_get_security_model_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    char *model = NULL, *doi = NULL;
    if (!dc || drv(call)->node_get_security_model(dc, &model, &doi, &call->err) < 0)
        return -1;
    put_nul_string(&ret->model.model_val, &ret->model.model_len, model);
    put_nul_string(&ret->doi.doi_val, &ret->doi.doi_len, doi);
    return 0;
}

/* ---- lists and lookups ---- */

int rvs_handle_connect_num_of_domains(rvs_call *call, rv_connect_num_of_domains_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    int n = dc ? drv(call)->num_of_domains(dc, &call->err) : -1;
    if (n < 0)
        return -1;
    ret->num = n;
    return 0;
}

int rvs_handle_connect_list_domains(rvs_call *call, rv_connect_list_domains_args *args,
                                    rv_connect_list_domains_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    if (!dc)
        return -1;
    if (args->maxids < 0 || args->maxids > RV_DOMAIN_LIST_MAX) {
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_RPC, "maxids %d is outside 0..%d",
                   args->maxids, RV_DOMAIN_LIST_MAX);
        return -1;
    }
    int *ids = calloc((size_t)args->maxids + 1, sizeof(int));
    if (!ids) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int n = drv(call)->list_domain_ids(dc, ids, args->maxids, &call->err);
    if (n < 0) {
        free(ids);
        return -1;
    }
    ret->ids.ids_val = ids;
    ret->ids.ids_len = (u_int)n;
    return 0;
}

int rvs_handle_connect_list_all_domains(rvs_call *call, rv_connect_list_all_domains_args *args,
                                        rv_connect_list_all_domains_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref *doms = NULL;
    int n = dc ? drv(call)->list_all_domains(dc, args->flags, &doms, &call->err) : -1;
    if (n < 0)
        return -1;
    if (n > RV_DOMAIN_LIST_MAX) {
        rv_dom_refs_free(doms, (size_t)n);
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_RPC,
                   "too many domains (%d) for one reply: the limit is %d", n, RV_DOMAIN_LIST_MAX);
        return -1;
    }
    ret->ret = (u_int)n;
    if (args->need_results && n > 0) {
        ret->domains.domains_val = calloc((size_t)n, sizeof(rv_nonnull_domain));
        if (!ret->domains.domains_val) {
            rv_dom_refs_free(doms, (size_t)n);
            rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        for (int i = 0; i < n; i++)
            put_dom(&ret->domains.domains_val[i], &doms[i]);
        ret->domains.domains_len = (u_int)n;
    }
    rv_dom_refs_free(doms, (size_t)n);
    return 0;
}

int rvs_handle_domain_lookup_by_id(rvs_call *call, rv_domain_lookup_by_id_args *args,
                                   rv_domain_lookup_by_id_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = { 0 };
    if (!dc || drv(call)->lookup_by_id(dc, args->id, &ref, &call->err) < 0)
        return -1;
    put_dom(&ret->dom, &ref);
    return 0;
}

int rvs_handle_domain_lookup_by_name(rvs_call *call, rv_domain_lookup_by_name_args *args,
                                     rv_domain_lookup_by_name_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = { 0 };
    if (!dc || drv(call)->lookup_by_name(dc, args->name, &ref, &call->err) < 0)
        return -1;
    put_dom(&ret->dom, &ref);
    return 0;
}

int rvs_handle_domain_lookup_by_uuid(rvs_call *call, rv_domain_lookup_by_uuid_args *args,
                                     rv_domain_lookup_by_uuid_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = { 0 };
    if (!dc || drv(call)->lookup_by_uuid(dc, (unsigned char *)args->uuid, &ref, &call->err) < 0)
        return -1;
    put_dom(&ret->dom, &ref);
    return 0;
}

/* ---- definition and lifecycle ---- */

int rvs_handle_domain_define_xml(rvs_call *call, rv_domain_define_xml_args *args,
                                 rv_domain_define_xml_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = { 0 };
    if (!dc || drv(call)->define_xml(dc, args->xml, 0, &ref, &call->err) < 0)
        return -1;
    put_dom(&ret->dom, &ref);
    return 0;
}

int rvs_handle_domain_create_xml(rvs_call *call, rv_domain_create_xml_args *args,
                                 rv_domain_create_xml_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = { 0 };
    if (!dc || drv(call)->create_xml(dc, args->xml_desc, args->flags, &ref, &call->err) < 0)
        return -1;
    put_dom(&ret->dom, &ref);
    return 0;
}

/* Start a defined domain; out (optional) gets its new identity. */
static int start_domain(rvs_call *call, const rv_nonnull_domain *wire, unsigned int flags,
                        rv_nonnull_domain *out)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(wire), started = { 0 };
    if (!dc || drv(call)->create(dc, &ref, flags, &started, &call->err) < 0)
        return -1;
    if (out)
        put_dom(out, &started);
    free(started.name);
    return 0;
}

int rvs_handle_domain_create(rvs_call *call, rv_domain_create_args *args)
{
    return start_domain(call, &args->dom, 0, NULL);
}

int rvs_handle_domain_create_with_flags(rvs_call *call, rv_domain_create_with_flags_args *args,
                                        rv_domain_create_with_flags_ret *ret)
{
    return start_domain(call, &args->dom, args->flags, &ret->dom);
}

/* The driver's state changes that take a domain and flags. */
typedef enum { OP_UNDEFINE, OP_DESTROY, OP_SHUTDOWN, OP_REBOOT, OP_SUSPEND, OP_RESUME,
               OP_MANAGED_SAVE_REMOVE } dom_op;

static int run_dom_op(rvs_call *call, const rv_nonnull_domain *wire, unsigned int flags,
                      dom_op op)
{
    rv_driver_conn *dc = open_conn(call);
    if (!dc)
        return -1;
    const rv_driver *d = drv(call);
    rv_dom_ref ref = dom_ref(wire);
    switch (op) {
    case OP_UNDEFINE: return d->undefine(dc, &ref, flags, &call->err);
    case OP_DESTROY: return d->destroy(dc, &ref, flags, &call->err);
    case OP_SHUTDOWN: return d->shutdown(dc, &ref, flags, &call->err);
    case OP_REBOOT: return d->reboot(dc, &ref, flags, &call->err);
    case OP_SUSPEND: return d->suspend(dc, &ref, &call->err);
    case OP_RESUME: return d->resume(dc, &ref, &call->err);
    case OP_MANAGED_SAVE_REMOVE: return d->managed_save_remove(dc, &ref, flags, &call->err);
    }
    return -1;
}

int rvs_handle_domain_undefine(rvs_call *call, rv_domain_undefine_args *args)
{ return run_dom_op(call, &args->dom, 0, OP_UNDEFINE); }
int rvs_handle_domain_undefine_flags(rvs_call *call, rv_domain_undefine_flags_args *args)
{ return run_dom_op(call, &args->dom, args->flags, OP_UNDEFINE); }
int rvs_handle_domain_destroy(rvs_call *call, rv_domain_destroy_args *args)
{ return run_dom_op(call, &args->dom, 0, OP_DESTROY); }
int rvs_handle_domain_destroy_flags(rvs_call *call, rv_domain_destroy_flags_args *args)
{ return run_dom_op(call, &args->dom, args->flags, OP_DESTROY); }
int rvs_handle_domain_shutdown(rvs_call *call, rv_domain_shutdown_args *args)
{ return run_dom_op(call, &args->dom, 0, OP_SHUTDOWN); }
int rvs_handle_domain_shutdown_flags(rvs_call *call, rv_domain_shutdown_flags_args *args)
{ return run_dom_op(call, &args->dom, args->flags, OP_SHUTDOWN); }
int rvs_handle_domain_reboot(rvs_call *call, rv_domain_reboot_args *args)
{ return run_dom_op(call, &args->dom, args->flags, OP_REBOOT); }
int rvs_handle_domain_suspend(rvs_call *call, rv_domain_suspend_args *args)
{ return run_dom_op(call, &args->dom, 0, OP_SUSPEND); }
int rvs_handle_domain_resume(rvs_call *call, rv_domain_resume_args *args)
{ return run_dom_op(call, &args->dom, 0, OP_RESUME); }
int rvs_handle_domain_managed_save_remove(rvs_call *call,
                                          rv_domain_managed_save_remove_args *args)
{ return run_dom_op(call, &args->dom, args->flags, OP_MANAGED_SAVE_REMOVE); }

/* ---- queries ---- */

int rvs_handle_domain_get_info(rvs_call *call, rv_domain_get_info_args *args,
                               rv_domain_get_info_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    rv_dom_info info;
    if (!dc || drv(call)->get_info(dc, &ref, &info, &call->err) < 0)
        return -1;
    ret->state = (u_char)info.state;
    ret->maxMem = info.max_mem_kib;
    ret->memory = info.memory_kib;
    ret->nrVirtCpu = (u_short)info.nr_vcpu;
    ret->cpuTime = info.cpu_time_ns;
    return 0;
}

int rvs_handle_domain_get_state(rvs_call *call, rv_domain_get_state_args *args,
                                rv_domain_get_state_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    return dc ? drv(call)->get_state(dc, &ref, args->flags, &ret->state, &ret->reason,
                                     &call->err)
              : -1;
}

int rvs_handle_domain_get_xml_desc(rvs_call *call, rv_domain_get_xml_desc_args *args,
                                   rv_domain_get_xml_desc_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    if (call->client->readonly && (args->flags & RV_DOMAIN_XML_SECURE)) {
        /* Secure XML may hold passwords: like libvirtd, never to read-only. */
        rv_err_set(&call->err, RV_FROM_DOMAIN, RV_ERR_OPERATION_DENIED,
                   "operation forbidden: virDomainGetXMLDesc with secure flag");
        return -1;
    }
    return string_result(
        call, dc ? drv(call)->get_xml_desc(dc, &ref, args->flags, &ret->xml, &call->err) : -1,
        &ret->xml);
}

int rvs_handle_domain_get_os_type(rvs_call *call, rv_domain_get_os_type_args *args,
                                  rv_domain_get_os_type_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    return string_result(call, dc ? drv(call)->get_os_type(dc, &ref, &ret->type, &call->err) : -1,
                         &ret->type);
}

int rvs_handle_domain_get_autostart(rvs_call *call, rv_domain_get_autostart_args *args,
                                    rv_domain_get_autostart_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    return dc ? drv(call)->get_autostart(dc, &ref, &ret->autostart, &call->err) : -1;
}

/* The yes/no questions about a domain. */
typedef enum { ASK_ACTIVE, ASK_PERSISTENT } dom_question;

static int ask(rvs_call *call, const rv_nonnull_domain *wire, dom_question q, int *answer)
{
    rv_driver_conn *dc = open_conn(call);
    if (!dc)
        return -1;
    rv_dom_ref ref = dom_ref(wire);
    int r = q == ASK_ACTIVE ? drv(call)->is_active(dc, &ref, &call->err)
                            : drv(call)->is_persistent(dc, &ref, &call->err);
    if (r < 0)
        return -1;
    *answer = r;
    return 0;
}

int rvs_handle_domain_is_active(rvs_call *call, rv_domain_is_active_args *args,
                                rv_domain_is_active_ret *ret)
{ return ask(call, &args->dom, ASK_ACTIVE, &ret->active); }
int rvs_handle_domain_is_persistent(rvs_call *call, rv_domain_is_persistent_args *args,
                                    rv_domain_is_persistent_ret *ret)
{ return ask(call, &args->dom, ASK_PERSISTENT, &ret->persistent); }

int rvs_handle_domain_has_managed_save_image(rvs_call *call,
                                             rv_domain_has_managed_save_image_args *args,
                                             rv_domain_has_managed_save_image_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    int r = dc ? drv(call)->has_managed_save_image(dc, &ref, args->flags, &call->err) : -1;
    if (r < 0)
        return -1;
    ret->result = r;
    return 0;
}

int rvs_handle_domain_snapshot_num(rvs_call *call, rv_domain_snapshot_num_args *args,
                                   rv_domain_snapshot_num_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    int n = dc ? drv(call)->snapshot_num(dc, &ref, args->flags, &call->err) : -1;
    if (n < 0)
        return -1;
    ret->num = n;
    return 0;
}

int rvs_handle_domain_get_security_label(rvs_call *call, rv_domain_get_security_label_args *args,
                                         rv_domain_get_security_label_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    char *label = NULL;
    if (!dc || drv(call)->get_security_label(dc, &ref, &label, &ret->enforcing, &call->err) < 0)
        return -1;
    put_nul_string(&ret->label.label_val, &ret->label.label_len, label);
    return 0;
}

int rvs_handle_domain_get_messages(rvs_call *call, rv_domain_get_messages_args *args,
                                   rv_domain_get_messages_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    rv_dom_ref ref = dom_ref(&args->dom);
    char **msgs = NULL;
    int n = dc ? drv(call)->get_messages(dc, &ref, args->flags, &msgs, &call->err) : -1;
    if (n < 0)
        return -1;
    ret->msgs.msgs_val = msgs;
    ret->msgs.msgs_len = (u_int)n;
    if (n > RV_DOMAIN_MESSAGES_MAX) {
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_RPC, "too many domain messages (%d)", n);
        return -1;      /* the dispatcher frees ret */
    }
    return 0;
}

/* Copy one driver typed parameter into its wire form (moving strings). */
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

int rvs_handle_connect_get_all_domain_stats(rvs_call *call,
                                            rv_connect_get_all_domain_stats_args *args,
                                            rv_connect_get_all_domain_stats_ret *ret)
{
    rv_driver_conn *dc = open_conn(call);
    if (!dc)
        return -1;
    size_t nwant = args->doms.doms_len;
    rv_dom_ref *want = nwant ? calloc(nwant, sizeof(*want)) : NULL;
    if (nwant && !want) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < nwant; i++)
        want[i] = dom_ref(&args->doms.doms_val[i]);
    rv_dom_stats *stats = NULL;
    int n = drv(call)->get_all_domain_stats(dc, want, nwant, args->stats, args->flags, &stats,
                                            &call->err);
    free(want);
    if (n < 0)
        return -1;
    int rc = 0;
    rv_domain_stats_record *recs = n ? calloc((size_t)n, sizeof(*recs)) : NULL;
    if (n > RV_DOMAIN_LIST_MAX || (n && !recs)) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INTERNAL_ERROR,
                   "cannot return stats for %d domains", n);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        rv_dom_stats *s = &stats[i];
        rv_typed_param *params = s->nparams ? calloc(s->nparams, sizeof(*params)) : NULL;
        if (s->nparams > RV_TYPED_PARAM_LIST_MAX || (s->nparams && !params)) {
            free(params);
            rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INTERNAL_ERROR,
                       "cannot return %zu stats for one domain", s->nparams);
            rc = -1;
            break;
        }
        put_dom(&recs[i].dom, &s->dom);
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
