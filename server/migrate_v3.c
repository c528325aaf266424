/* The version 3 migration steps with plain arguments (BEGIN3, PREPARE3,
 * PREPARE_TUNNEL3, PERFORM3, FINISH3, CONFIRM3), as clients call them
 * when the daemon does not offer MIGRATION_PARAMS (libvirt's own client
 * then falls back to them; so do older ones).  Each is served as its step with typed
 * parameters (rvs_call_as): its fields become the parameters that step
 * takes, and its result is that step's, encoded identically.  So one
 * implementation serves both (the QEMU driver's qemu_migrate.c):
 *     xmlin, dom_xml  -> destination_xml
 *     dname           -> destination_name
 *     uri_in, uri     -> migrate_uri
 *     resource        -> bandwidth (MiB/s; 0: not given)
 *     flags           -> flags (64 bits here, 32 there: higher bits refused)
 * The fields are moved, not copied (a cookie may be 4 MiB): the plain
 * arguments are left empty for the dispatcher to free. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rv_remote.h"
#include "server/dispatch.h"
#include "server/rv_dispatch.gen.h"

/* The parameters being built (at most four). */
typedef struct plain_params {
    rv_typed_param p[4];
    u_int n;
    bool nomem;
} plain_params;

/* A string field moved into parameter name (absent when NULL). */
static void take_string(plain_params *pp, const char *name, char **value)
{
    if (!*value)
        return;
    char *field = strdup(name);
    if (!field) {
        pp->nomem = true;
        return;
    }
    rv_typed_param *t = &pp->p[pp->n++];
    t->field = field;
    t->value.type = RV_TYPED_PARAM_STRING;
    t->value.rv_typed_param_value_u.s = *value;
    *value = NULL;
}

/* An optional string field (rv_string) moved into parameter name. */
static void take_opt(plain_params *pp, const char *name, rv_string *value)
{
    if (!*value)
        return;
    take_string(pp, name, *value);
    if (!**value) {     /* its string moved: the box goes */
        free(*value);
        *value = NULL;
    }
}

static void take_bandwidth(plain_params *pp, uint64_t resource)
{
    if (!resource)
        return;
    char *field = strdup("bandwidth");
    if (!field) {
        pp->nomem = true;
        return;
    }
    rv_typed_param *t = &pp->p[pp->n++];
    t->field = field;
    t->value.type = RV_TYPED_PARAM_ULLONG;
    t->value.rv_typed_param_value_u.ul = resource;
}

/* The parameters as a heap list (into val and len), or -1 with call->err
 * (what was moved is freed then). */
static int finish_params(rvs_call *call, plain_params *pp, rv_typed_param **val, u_int *len)
{
    rv_typed_param *list = pp->nomem || !pp->n ? NULL : malloc(pp->n * sizeof(*list));
    if (pp->nomem || (pp->n && !list)) {
        for (u_int i = 0; i < pp->n; i++)
            xdr_free((xdrproc_t)xdr_rv_typed_param, (char *)&pp->p[i]);
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (pp->n)
        memcpy(list, pp->p, pp->n * sizeof(*list));
    *val = list;
    *len = pp->n;
    return 0;
}

/* libvirt's flags are 32 bits wide in the steps with parameters. */
static int narrow_flags(rvs_call *call, uint64_t flags, const char *func, unsigned int *out)
{
    if (flags >> 32) {
        rv_err_set(&call->err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                   "unsupported flags (0x%" PRIx64 ") in function %s", flags & ~(uint64_t)UINT32_MAX,
                   func);
        return -1;
    }
    *out = (unsigned int)flags;
    return 0;
}

#define MOVE_COOKIE(to, from)                                                                      \
    do {                                                                                           \
        (to).cookie_in_val = (from).cookie_in_val;                                                 \
        (to).cookie_in_len = (from).cookie_in_len;                                                 \
        (from).cookie_in_val = NULL;                                                               \
        (from).cookie_in_len = 0;                                                                  \
    } while (0)

static void move_dom(rv_nonnull_domain *to, rv_nonnull_domain *from)
{
    *to = *from;
    memset(from, 0, sizeof(*from));
}

int rvs_handle_domain_migrate_begin3(rvs_call *call, rv_domain_migrate_begin3_args *args,
                                     rv_domain_migrate_begin3_ret *ret)
{
    (void)ret;
    rv_domain_migrate_begin3_params_args a = { 0 };
    plain_params pp = { 0 };
    if (narrow_flags(call, args->flags, "qemuDomainMigrateBegin3", &a.flags) < 0)
        return -1;
    take_opt(&pp, "destination_xml", &args->xmlin);
    take_opt(&pp, "destination_name", &args->dname);
    take_bandwidth(&pp, args->resource);
    if (finish_params(call, &pp, &a.params.params_val, &a.params.params_len) < 0)
        return -1;
    move_dom(&a.dom, &args->dom);
    return rvs_call_as(call, RV_PROC_DOMAIN_MIGRATE_BEGIN3_PARAMS, &a);
}

int rvs_handle_domain_migrate_prepare3(rvs_call *call, rv_domain_migrate_prepare3_args *args,
                                       rv_domain_migrate_prepare3_ret *ret)
{
    (void)ret;
    rv_domain_migrate_prepare3_params_args a = { 0 };
    plain_params pp = { 0 };
    if (narrow_flags(call, args->flags, "qemuDomainMigratePrepare3", &a.flags) < 0)
        return -1;
    take_string(&pp, "destination_xml", &args->dom_xml);
    take_opt(&pp, "destination_name", &args->dname);
    take_opt(&pp, "migrate_uri", &args->uri_in);
    take_bandwidth(&pp, args->resource);
    if (finish_params(call, &pp, &a.params.params_val, &a.params.params_len) < 0)
        return -1;
    MOVE_COOKIE(a.cookie_in, args->cookie_in);
    return rvs_call_as(call, RV_PROC_DOMAIN_MIGRATE_PREPARE3_PARAMS, &a);
}

/* Tunnelled: served as PREPARE_TUNNEL3_PARAMS, which opens the stream
 * on this call (its packets carry this call's procedure, 215). */
int rvs_handle_domain_migrate_prepare_tunnel3(rvs_call *call,
                                              rv_domain_migrate_prepare_tunnel3_args *args,
                                              rv_domain_migrate_prepare_tunnel3_ret *ret)
{
    (void)ret;
    rv_domain_migrate_prepare_tunnel3_params_args a = { 0 };
    plain_params pp = { 0 };
    if (narrow_flags(call, args->flags, "qemuDomainMigratePrepareTunnel3", &a.flags) < 0)
        return -1;
    take_string(&pp, "destination_xml", &args->dom_xml);
    take_opt(&pp, "destination_name", &args->dname);
    take_bandwidth(&pp, args->resource);
    if (finish_params(call, &pp, &a.params.params_val, &a.params.params_len) < 0)
        return -1;
    MOVE_COOKIE(a.cookie_in, args->cookie_in);
    return rvs_call_as(call, RV_PROC_DOMAIN_MIGRATE_PREPARE_TUNNEL3_PARAMS, &a);
}

int rvs_handle_domain_migrate_perform3(rvs_call *call, rv_domain_migrate_perform3_args *args,
                                       rv_domain_migrate_perform3_ret *ret)
{
    (void)ret;
    rv_domain_migrate_perform3_params_args a = { 0 };
    plain_params pp = { 0 };
    if (narrow_flags(call, args->flags, "qemuDomainMigratePerform3", &a.flags) < 0)
        return -1;
    take_opt(&pp, "destination_xml", &args->xmlin);
    take_opt(&pp, "destination_name", &args->dname);
    take_opt(&pp, "migrate_uri", &args->uri);
    take_bandwidth(&pp, args->resource);
    if (finish_params(call, &pp, &a.params.params_val, &a.params.params_len) < 0)
        return -1;
    move_dom(&a.dom, &args->dom);
    a.dconnuri = args->dconnuri;
    args->dconnuri = NULL;
    MOVE_COOKIE(a.cookie_in, args->cookie_in);
    return rvs_call_as(call, RV_PROC_DOMAIN_MIGRATE_PERFORM3_PARAMS, &a);
}

/* (dconnuri, the source's URI for the destination, is not used here:
 * the step with parameters has no such field either) */
int rvs_handle_domain_migrate_finish3(rvs_call *call, rv_domain_migrate_finish3_args *args,
                                      rv_domain_migrate_finish3_ret *ret)
{
    (void)ret;
    rv_domain_migrate_finish3_params_args a = { 0 };
    plain_params pp = { 0 };
    if (narrow_flags(call, args->flags, "qemuDomainMigrateFinish3", &a.flags) < 0)
        return -1;
    take_string(&pp, "destination_name", &args->dname);
    take_opt(&pp, "migrate_uri", &args->uri);
    if (finish_params(call, &pp, &a.params.params_val, &a.params.params_len) < 0)
        return -1;
    MOVE_COOKIE(a.cookie_in, args->cookie_in);
    a.cancelled = args->cancelled;
    return rvs_call_as(call, RV_PROC_DOMAIN_MIGRATE_FINISH3_PARAMS, &a);
}

int rvs_handle_domain_migrate_confirm3(rvs_call *call, rv_domain_migrate_confirm3_args *args)
{
    rv_domain_migrate_confirm3_params_args a = { 0 };
    if (narrow_flags(call, args->flags, "qemuDomainMigrateConfirm3", &a.flags) < 0)
        return -1;
    move_dom(&a.dom, &args->dom);
    MOVE_COOKIE(a.cookie_in, args->cookie_in);
    a.cancelled = args->cancelled;
    return rvs_call_as(call, RV_PROC_DOMAIN_MIGRATE_CONFIRM3_PARAMS, &a);
}
