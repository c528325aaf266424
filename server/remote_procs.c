/* The remote program's hand-written handlers (@handler daemon and
 * daemon-driver in rv_remote.x): what the daemon itself answers (opening,
 * authentication, events, features) and the daemon's policy in front of a
 * driver slot.  Every other procedure goes straight to its driver slot
 * through the generated server/rv_dispatch.gen.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/glob.h"
#include "auth/sasl.h"
#include "common/log.h"
#include "rv_remote.h"
#include "server/dispatch.h"
#include "server/rv_dispatch.gen.h"

RV_LOG_CATEGORY("server.remote");

/* ---- connection ---- */

int rvs_handle_connect_open(rvs_call *call, rv_connect_open_args *args)
{
    rvs_client *c = call->client;
    if (rvs_client_driver_conn(c)) {
        /* As libvirtd's error, but the open connection stays. */
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: connection already open");
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
    rv_driver_conn *conn = NULL;
    if (d->open(uri, args->flags, &conn, &call->err) < 0) {
        free(uri);
        return -1;
    }
    rvs_client_attach_driver(c, d, conn, uri);
    if (args->flags & RV_CONNECT_RO)
        rvs_client_make_readonly(c);
    const rv_peer_identity *peer = rvs_client_peer(c);
    RV_INFO("client %llu (pid %d uid %u) opened %s%s", rvs_client_serial_no(c), (int)peer->pid,
            (unsigned)peer->uid, uri, rvs_client_is_readonly(c) ? " read-only" : "");
    return 0;
}

int rvs_handle_connect_close(rvs_call *call)
{
    /* Subscriptions go with it: they belong to the hypervisor connection. */
    rvs_client_detach_driver(call->client);
    return 0;
}

int rvs_handle_connect_supports_feature(rvs_call *call, rv_connect_supports_feature_args *args,
                                        rv_connect_supports_feature_ret *ret)
{
    if (args->feature == RV_FEATURE_PROGRAM_KEEPALIVE) {
        /* As libvirtd: a client that asks answers PINGs, so from now on
         * it gets them; one that never asks is never PINGed.  The only
         * feature answered before CONNECT_OPEN. */
        rvs_client_start_keepalive(call->client);
        ret->supported = 1;
        return 0;
    }
    /* As libvirtd: any other feature needs the hypervisor connection. */
    if (!rvs_call_conn(call))
        return -1;
    switch (args->feature) {
    case RV_FEATURE_MIGRATION_V3:
    case RV_FEATURE_MIGRATION_P2P:
    case RV_FEATURE_MIGRATE_CHANGE_PROTECTION:
    case RV_FEATURE_MIGRATION_OFFLINE:
    case RV_FEATURE_MIGRATION_PARAMS:
        /* Only the QEMU driver migrates (qemu_migrate.c).  Tests set
         * RV_TEST_NO_MIGRATION_PARAMS=1 to make libvirt's client use the
         * steps with plain arguments (server/migrate_v3.c). */
        ret->supported = strcmp(rvs_client_driver(call->client)->name, "qemu") == 0 &&
                         !(args->feature == RV_FEATURE_MIGRATION_PARAMS &&
                           getenv("RV_TEST_NO_MIGRATION_PARAMS") &&
                           strcmp(getenv("RV_TEST_NO_MIGRATION_PARAMS"), "1") == 0);
        break;
    case RV_FEATURE_TYPED_PARAM_STRING:
    case RV_FEATURE_REMOTE_EVENT_CALLBACK:
    case RV_FEATURE_REMOTE_CLOSE_CALLBACK:
        ret->supported = 1;
        break;
    case RV_FEATURE_FD_PASSING:
        /* Only a Unix socket carries descriptors (SCM_RIGHTS). */
        ret->supported = rvs_client_passes_fds(call->client);
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
    ret->types.types_val[0] = rvs_client_is_authenticated(call->client) ? RV_AUTH_NONE
                                                                           : RV_AUTH_SASL;
    ret->types.types_len = 1;
    return 0;
}

/* ---- SASL: AUTH_SASL_INIT, START and STEP (libvirt's flow) ---- */

/* A failed or refused attempt: logged with the peer and the user, an
 * AUTH_FAILED reply, then the connection closes. */
static int auth_failed(rvs_call *call, const char *why)
{
    rvs_client *c = call->client;
    char name[256];
    struct rv_sasl *sasl = rvs_client_sasl(c);
    const char *user = sasl ? rv_sasl_attempted_user(sasl) : NULL;
    RV_WARN("%s: SASL authentication%s%s%s failed: %s",
            rvs_client_name(c, name, sizeof(name)), user ? " as '" : "", user ? user : "",
            user ? "'" : "", why);
    rvs_client_set_sasl(c, NULL);
    /* The details stay in the log: telling an unknown user from a wrong
     * password would let anyone probe for user names. */
    rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED, "authentication failed");
    rvs_client_close_after_flush(c);
    return -1;
}

static int sasl_expected(rvs_call *call, int started)
{
    rvs_client *c = call->client;
    if (rvs_client_auth_phase(c) != RVS_AUTH_ANONYMOUS)
        return auth_failed(call, "SASL is not expected on this connection now");
    if (started && !rvs_client_sasl(c))
        return auth_failed(call, "AUTH_SASL_INIT must come first");
    return 0;
}

int rvs_handle_auth_sasl_init(rvs_call *call, rv_auth_sasl_init_ret *ret)
{
    rvs_client *c = call->client;
    if (sasl_expected(call, 0) < 0)
        return -1;
    rvs_client_set_sasl(c, NULL);
    /* TLS already protects the stream (its strength counts as SASL's
     * external SSF) and so does a local Unix socket: then no security
     * layer is needed. */
    int external = rvs_client_transport_ssf(c);
    rv_err err = { 0 };
    struct rv_sasl *sasl =
        rv_sasl_server_new(NULL, NULL, external, external ? 0 : rvs_client_min_ssf(c), &err);
    rvs_client_set_sasl(c, sasl);
    char *mechs = sasl ? rv_sasl_server_mechlist(sasl, &err) : NULL;
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

    struct rv_sasl *sasl = rvs_client_sasl(c);
    const char *user = rv_sasl_username(sasl);
    if (!rv_glob_list_match(rvs_client_sasl_allowed_users(c), user ? user : ""))
        return auth_failed(call, "the user is not in sasl_allowed_username_list");
    int ssf = rv_sasl_ssf(sasl);
    /* Both ends see the same negotiated SSF; over TLS and Unix the
     * external SSF makes it 0.  With a layer it starts once this reply
     * is out in clear. */
    if (rvs_client_sasl_done(c, user ? user : "", ssf > 0) < 0)
        return auth_failed(call, "out of memory");
    char name[256];
    RV_INFO("%s: authenticated with SASL (SSF %d)", rvs_client_name(c, name, sizeof(name)),
            ssf);
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
    int rc = rv_sasl_server_step(rvs_client_sasl(call->client), mech, &in, &out, &err);
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
    return rvs_call_conn(call) ? 0 : -1;
}

int rvs_handle_connect_unregister_close_callback(rvs_call *call)
{
    return rvs_call_conn(call) ? 0 : -1;
}

/* ---- events ---- */

int rvs_handle_connect_domain_event_callback_register_any(
    rvs_call *call, rv_connect_domain_event_callback_register_any_args *args,
    rv_connect_domain_event_callback_register_any_ret *ret)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_subscribe(call->client, args->eventID, args->dom, &ret->callbackID,
                                &call->err);
}

int rvs_handle_connect_domain_event_callback_deregister_any(
    rvs_call *call, rv_connect_domain_event_callback_deregister_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_unsubscribe(call->client, args->callbackID, &call->err);
}

/* The legacy registrations (clients that do not ask for
 * REMOTE_EVENT_CALLBACK).  libvirtd answers cb_registered 1 and 0. */
int rvs_handle_connect_domain_event_register(rvs_call *call,
                                             rv_connect_domain_event_register_ret *ret)
{
    if (!rvs_call_conn(call) ||
        rvs_events_subscribe_legacy(call->client, RV_DOM_EVENT_ID_LIFECYCLE, &call->err) < 0)
        return -1;
    ret->cb_registered = 1;
    return 0;
}

int rvs_handle_connect_domain_event_deregister(rvs_call *call,
                                               rv_connect_domain_event_deregister_ret *ret)
{
    if (!rvs_call_conn(call) ||
        rvs_events_unsubscribe_legacy(call->client, RV_DOM_EVENT_ID_LIFECYCLE, &call->err) < 0)
        return -1;
    ret->cb_registered = 0;
    return 0;
}

int rvs_handle_connect_domain_event_register_any(rvs_call *call,
                                                 rv_connect_domain_event_register_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_subscribe_legacy(call->client, args->eventID, &call->err);
}

int rvs_handle_connect_domain_event_deregister_any(
    rvs_call *call, rv_connect_domain_event_deregister_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_unsubscribe_legacy(call->client, args->eventID, &call->err);
}

int rvs_handle_connect_get_uri(rvs_call *call, rv_connect_get_uri_ret *ret)
{
    if (!rvs_call_conn(call))
        return -1;
    if (!(ret->uri = strdup(rvs_client_uri(call->client)))) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    return 0;
}

int rvs_handle_connect_get_lib_version(rvs_call *call, rv_connect_get_lib_version_ret *ret)
{
    if (!rvs_call_conn(call))
        return -1;
    /* The libvirt API level remvirt speaks (9.0.0); clients such as
     * virt-manager gate features on it. */
    ret->lib_ver = 9000000;
    return 0;
}

/* ---- queries with a daemon policy ---- */

int rvs_handle_domain_get_xml_desc(rvs_call *call, rv_domain_get_xml_desc_args *args,
                                   rv_domain_get_xml_desc_ret *ret)
{
    if (rvs_client_is_readonly(call->client) && (args->flags & RV_DOM_XML_SECURE)) {
        /* Secure XML may hold passwords: like libvirtd, never to read-only. */
        rv_err_set(&call->err, RV_FROM_DOMAIN, RV_ERR_OPERATION_DENIED,
                   "operation forbidden: virDomainGetXMLDesc with secure flag");
        return -1;
    }
    return rvs_driver_domain_get_xml_desc(call, args, ret);
}

int rvs_handle_domain_interface_addresses(rvs_call *call,
                                          rv_domain_interface_addresses_args *args,
                                          rv_domain_interface_addresses_ret *ret)
{
    /* Asking the guest agent (source 1) runs code in the guest: libvirtd
     * keeps that from read-only clients; the leases and ARP sources not. */
    if (rvs_client_is_readonly(call->client) && args->source == 1) {
        rv_err_set(&call->err, RV_FROM_DOMAIN, RV_ERR_OPERATION_DENIED,
                   "operation forbidden: read only access prevents "
                   "virDomainInterfaceAddresses");
        return -1;
    }
    return rvs_driver_domain_interface_addresses(call, args, ret);
}
