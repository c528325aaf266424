/* Virtual network handles (rv_net) and the network calls that are more
 * than one stub call.  The one-call ones are generated
 * (remvirt-calls.gen.c) from protocol/rv_remote.x. */
#include "client/remvirt.h"

#include <stdlib.h>
#include <string.h>

#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "common/util.h"
#include "rv_remote.h"

struct rv_net {
    rv_conn *conn;
    char *name;
    unsigned char uuid[RV_UUID_LEN];
};

struct rvc_conn *rvc_net_rpc(rv_net *net, const char *func)
{
    if (!net) {
        rvc_report(RV_FROM_NET, RV_ERR_INVALID_NETWORK, "%s: no network given", func);
        return NULL;
    }
    return rvc_handle_rpc(net->conn, func);
}

rv_nonnull_network rvc_net_to_wire(const rv_net *net)
{
    rv_nonnull_network w;
    w.name = net->name;
    memcpy(w.uuid, net->uuid, RV_UUID_LEN);
    return w;
}

rv_net *rvc_net_from_wire(rv_conn *conn, rv_nonnull_network *w)
{
    rv_net *net = malloc(sizeof(*net));
    if (!net)
        return rvc_no_memory_null();
    net->conn = conn;
    net->name = w->name;
    w->name = NULL;
    memcpy(net->uuid, w->uuid, RV_UUID_LEN);
    rvc_handle_ref(conn);
    return net;
}

void rv_network_free(rv_net *net)
{
    if (!net)
        return;
    rv_conn *conn = net->conn;
    free(net->name);
    free(net);
    rvc_handle_unref(conn);
}

const char *rv_network_get_name(rv_net *net)
{
    rvc_enter();
    if (!net) {
        rvc_report(RV_FROM_NET, RV_ERR_INVALID_NETWORK, "rv_network_get_name: no network given");
        return NULL;
    }
    return net->name;
}

int rv_network_get_uuid(rv_net *net, unsigned char uuid[RV_UUID_BUFLEN])
{
    rvc_enter();
    if (!net || !uuid)
        return rvc_report(RV_FROM_NET, net ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_NETWORK,
                          "rv_network_get_uuid: %s",
                          net ? "no buffer given" : "no network given");
    memcpy(uuid, net->uuid, RV_UUID_LEN);
    return 0;
}

int rv_network_get_uuid_string(rv_net *net, char buf[RV_UUID_STRING_BUFLEN])
{
    rvc_enter();
    if (!net || !buf)
        return rvc_report(RV_FROM_NET, net ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_NETWORK,
                          "rv_network_get_uuid_string: %s",
                          net ? "no buffer given" : "no network given");
    rv_uuid_format(net->uuid, buf);
    return 0;
}

rv_net *rv_network_lookup_by_uuid_string(rv_conn *conn, const char *uuid)
{
    unsigned char raw[RV_UUID_LEN];
    if (!rvc_handle_rpc(conn, __func__))
        return NULL;
    if (!uuid || rv_uuid_parse(uuid, raw) < 0) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: %s", __func__,
                   uuid ? "malformed uuid" : "no uuid given");
        return NULL;
    }
    return rv_network_lookup_by_uuid(conn, raw);
}

int rv_connect_list_all_networks(rv_conn *conn, rv_net ***nets, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (nets)
        *nets = NULL;
    rv_connect_list_all_networks_args args = { .need_results = nets != NULL, .flags = flags };
    rv_connect_list_all_networks_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_networks(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int count = (int)ret.ret;
    if (nets) {
        u_int n = ret.nets.nets_len;            /* at most RV_NETWORK_LIST_MAX */
        rv_net **list = calloc(n + 1, sizeof(*list));
        for (u_int i = 0; list && i < n; i++) {
            if (!(list[i] = rvc_net_from_wire(conn, &ret.nets.nets_val[i]))) {
                while (i > 0)
                    rv_network_free(list[--i]);
                free(list);
                list = NULL;
            }
        }
        if (!list) {
            xdr_free((xdrproc_t)xdr_rv_connect_list_all_networks_ret, (char *)&ret);
            rvc_no_memory_null();
            return -1;
        }
        *nets = list;
        count = (int)n;
    } else if (ret.ret > RV_NETWORK_LIST_MAX) {
        xdr_free((xdrproc_t)xdr_rv_connect_list_all_networks_ret, (char *)&ret);
        return rvc_report(RV_FROM_RPC, RV_ERR_RPC,
                          "the server counts %u networks, more than the %d allowed", ret.ret,
                          RV_NETWORK_LIST_MAX);
    }
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_networks_ret, (char *)&ret);
    return count;
}

void rv_network_dhcp_leases_free(rv_network_dhcp_lease_info *leases, int n)
{
    for (int i = 0; leases && i < n; i++) {
        free(leases[i].iface);
        free(leases[i].mac);
        free(leases[i].iaid);
        free(leases[i].ipaddr);
        free(leases[i].hostname);
        free(leases[i].clientid);
    }
    free(leases);
}

/* A reply's optional string, now the caller's. */
static char *take_optional(rv_string s)
{
    char *t = s ? *s : NULL;
    if (s)
        *s = NULL;
    return t;
}

int rv_network_get_dhcp_leases(rv_net *net, const char *mac, rv_network_dhcp_lease_info **leases,
                               unsigned int flags)
{
    struct rvc_conn *rpc = rvc_net_rpc(net, __func__);
    if (!rpc)
        return -1;
    if (!leases)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no result pointer", __func__);
    *leases = NULL;
    char *mac_copy = (char *)mac;
    rv_network_get_dhcp_leases_args args = {
        .net = rvc_net_to_wire(net), .mac = mac ? &mac_copy : NULL, .need_results = 1,
        .flags = flags,
    };
    rv_network_get_dhcp_leases_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_network_get_dhcp_leases(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.leases.leases_len;            /* at most RV_NETWORK_DHCP_LEASES_MAX */
    rv_network_dhcp_lease_info *list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++) {
        rv_network_dhcp_lease *w = &ret.leases.leases_val[i];
        list[i].iface = w->iface;
        w->iface = NULL;
        list[i].expiry_time = w->expirytime;
        list[i].type = w->type;
        list[i].mac = take_optional(w->mac);
        list[i].iaid = take_optional(w->iaid);
        list[i].ipaddr = w->ipaddr;
        w->ipaddr = NULL;
        list[i].prefix = w->prefix;
        list[i].hostname = take_optional(w->hostname);
        list[i].clientid = take_optional(w->clientid);
    }
    xdr_free((xdrproc_t)xdr_rv_network_get_dhcp_leases_ret, (char *)&ret);
    if (!list) {
        rvc_no_memory_null();
        return -1;
    }
    *leases = list;
    return (int)n;
}
