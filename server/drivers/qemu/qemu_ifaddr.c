/* DOMAIN_INTERFACE_ADDRESSES on the QEMU driver, from its three sources
 * as libvirtd's QEMU driver reads them: the DHCP leases of remvirtd's own
 * networks (dnsmasq's file, by the interface's MAC), the host's ARP table
 * (/proc/net/arp, by MAC), and the guest agent's
 * guest-network-get-interfaces (the guest's own names, loopback and
 * aliases included, an alias "eth0:1" counted under "eth0"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_network.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

enum { SOURCE_LEASE = 0, SOURCE_AGENT = 1, SOURCE_ARP = 2, IP_ADDR_IPV4 = 0, IP_ADDR_IPV6 = 1 };
enum { ARP_LINE_MAX = 256 };

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static void mac_text(const unsigned char mac[6], char out[18])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
             mac[5]);
}

/* One more interface on the answer, named name, with hwaddr (NULL: none)
 * and no addresses yet. */
static rv_domain_interface *new_iface(rv_domain_interface_addresses_ret *ret, const char *name,
                                      const char *hwaddr, rv_err *err)
{
    if (ret->ifaces.ifaces_len >= RV_DOMAIN_INTERFACE_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "too many interfaces (over %d)",
                   RV_DOMAIN_INTERFACE_MAX);
        return NULL;
    }
    rv_domain_interface *v = realloc(ret->ifaces.ifaces_val,
                                     (ret->ifaces.ifaces_len + 1) * sizeof(*v));
    if (!v) {
        oom(err);
        return NULL;
    }
    ret->ifaces.ifaces_val = v;
    rv_domain_interface *wi = &v[ret->ifaces.ifaces_len++];
    memset(wi, 0, sizeof(*wi));
    if (!(wi->name = strdup(name)) ||
        (hwaddr && (!(wi->hwaddr = calloc(1, sizeof(char *))) || !(*wi->hwaddr = strdup(hwaddr))))) {
        oom(err);
        return NULL;
    }
    return wi;
}

/* The same for the domain's interface iface (named by its host device,
 * as libvirtd names it). */
static rv_domain_interface *add_iface(rv_domain_interface_addresses_ret *ret,
                                      const rv_qemu_interface *iface, rv_err *err)
{
    char mac[18];
    mac_text(iface->mac, mac);
    return new_iface(ret, iface->ifname ? iface->ifname : "", mac, err);
}

static int add_addr(rv_domain_interface *wi, int type, const char *addr, unsigned int prefix,
                    rv_err *err)
{
    if (wi->addrs.addrs_len >= RV_DOMAIN_IP_ADDR_MAX)
        return 0;               /* the wire's limit: the first ones */
    rv_domain_ip_addr *v = realloc(wi->addrs.addrs_val, (wi->addrs.addrs_len + 1) * sizeof(*v));
    if (!v)
        return oom(err);
    wi->addrs.addrs_val = v;
    rv_domain_ip_addr *a = &v[wi->addrs.addrs_len];
    a->type = type;
    a->prefix = prefix;
    if (!(a->addr = strdup(addr)))
        return oom(err);
    wi->addrs.addrs_len++;
    return 0;
}

/* Each <interface type='network'> with a lease on its network. */
static int from_leases(const rv_qemu_domain_def *def, rv_domain_interface_addresses_ret *ret,
                       rv_err *err)
{
    for (size_t i = 0; i < def->ninterfaces; i++) {
        const rv_qemu_interface *iface = &def->interfaces[i];
        if (iface->type != RV_QEMU_NET_NETWORK)
            continue;
        char mac[18];
        mac_text(iface->mac, mac);
        rv_network_get_dhcp_leases_ret leases = { 0 };
        int rc = rv_qemu_network_leases(iface->network, mac, &leases, err);
        rv_domain_interface *wi = NULL;
        for (u_int k = 0; rc == 0 && k < leases.leases.leases_len; k++) {
            const rv_network_dhcp_lease *l = &leases.leases.leases_val[k];
            if ((!wi && !(wi = add_iface(ret, iface, err))) ||
                add_addr(wi, IP_ADDR_IPV4, l->ipaddr, l->prefix, err) < 0)
                rc = -1;
        }
        xdr_free((xdrproc_t)xdr_rv_network_get_dhcp_leases_ret, (char *)&leases);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The kernel's table: "IP HW-type Flags HW-address Mask Device" after a
 * header line; flags 0 is an entry still unresolved. */
static int from_arp(const rv_qemu_domain_def *def, rv_domain_interface_addresses_ret *ret,
                    rv_err *err)
{
    FILE *f = fopen("/proc/net/arp", "r");
    if (!f)
        return 0;               /* no IPv4 on this host: no neighbours */
    rv_domain_interface **found = calloc(def->ninterfaces ? def->ninterfaces : 1, sizeof(*found));
    if (!found) {
        fclose(f);
        return oom(err);
    }
    char line[ARP_LINE_MAX];
    int rc = 0;
    bool header = true;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char ip[64], hw[32];
        unsigned int type, flags;
        if (header) {
            header = false;
            continue;
        }
        if (sscanf(line, "%63s 0x%x 0x%x %31s", ip, &type, &flags, hw) != 4 || flags == 0)
            continue;
        for (size_t i = 0; rc == 0 && i < def->ninterfaces; i++) {
            char mac[18];
            mac_text(def->interfaces[i].mac, mac);
            if (strcasecmp(mac, hw) != 0)
                continue;
            if ((!found[i] && !(found[i] = add_iface(ret, &def->interfaces[i], err))) ||
                add_addr(found[i], IP_ADDR_IPV4, ip, 0, err) < 0)
                rc = -1;
        }
    }
    free(found);
    fclose(f);
    return rc;
}

/* ---------------------------------------------------------------- the agent */

static int bad_reply(rv_err *err, const char *what, const char *name)
{
    return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: qemu agent didn't provide '%s' field%s%s%s",
                what, name ? " for interface '" : "", name ? name : "", name ? "'" : "");
}

/* One address of the agent's interface name onto wi. */
static int agent_addr(rv_domain_interface *wi, json_object *a, const char *name, rv_err *err)
{
    json_object *type, *addr, *prefix;
    if (!json_object_object_get_ex(a, "ip-address-type", &type) ||
        !json_object_is_type(type, json_type_string))
        return bad_reply(err, "ip-address-type", name);
    const char *t = json_object_get_string(type);
    if (strcmp(t, "ipv4") != 0 && strcmp(t, "ipv6") != 0)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: unknown ip address type '%s'", t);
    if (!json_object_object_get_ex(a, "ip-address", &addr) ||
        !json_object_is_type(addr, json_type_string))
        return bad_reply(err, "ip-address", name);
    if (!json_object_object_get_ex(a, "prefix", &prefix) ||
        !json_object_is_type(prefix, json_type_int) || json_object_get_int64(prefix) < 0 ||
        json_object_get_int64(prefix) > 128)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: malformed 'prefix' field");
    return add_addr(wi, strcmp(t, "ipv4") == 0 ? IP_ADDR_IPV4 : IP_ADDR_IPV6,
                    json_object_get_string(addr), (unsigned)json_object_get_int64(prefix), err);
}

/* One of the agent's interfaces: an entry of its own, or its addresses
 * onto the entry of the device it is an alias ("eth0:1") of. */
static int agent_iface(rv_domain_interface_addresses_ret *ret, json_object *o, rv_err *err)
{
    json_object *jname, *jhw, *addrs;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "name", &jname) ||
        !json_object_is_type(jname, json_type_string))
        return bad_reply(err, "name", NULL);
    const char *name = json_object_get_string(jname);
    size_t devlen = strcspn(name, ":");
    rv_domain_interface *wi = NULL;
    for (u_int i = 0; i < ret->ifaces.ifaces_len && !wi; i++)
        if (strlen(ret->ifaces.ifaces_val[i].name) == devlen &&
            strncmp(ret->ifaces.ifaces_val[i].name, name, devlen) == 0)
            wi = &ret->ifaces.ifaces_val[i];
    if (!wi) {
        char *dev = strndup(name, devlen);
        const char *hw = json_object_object_get_ex(o, "hardware-address", &jhw) &&
                         json_object_is_type(jhw, json_type_string) ? json_object_get_string(jhw) : NULL;
        wi = dev ? new_iface(ret, dev, hw, err) : NULL;
        free(dev);
        if (!wi)
            return rv_err_is_set(err) ? -1 : oom(err);
    }
    if (!json_object_object_get_ex(o, "ip-addresses", &addrs))
        return 0;
    if (!json_object_is_type(addrs, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: Malformed ip-addresses array");
    for (size_t k = 0; k < json_object_array_length(addrs); k++)
        if (agent_addr(wi, json_object_array_get_idx(addrs, k), name, err) < 0)
            return -1;
    return 0;
}

int rv_qemu_agent_interfaces(json_object *reply, rv_domain_interface_addresses_ret *ret, rv_err *err)
{
    if (!json_object_is_type(reply, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: qemu agent didn't return an array of interfaces");
    for (size_t i = 0; i < json_object_array_length(reply); i++)
        if (agent_iface(ret, json_object_array_get_idx(reply, i), err) < 0)
            return -1;
    return 0;
}

/* guest-network-get-interfaces' answer into the call's result (out
 * NULL: nobody waits; read for its errors all the same). */
static int finish_agent(qemu_dom *d, json_object *reply, void *out, rv_err *err)
{
    (void)d;
    rv_domain_interface_addresses_ret unsent = { 0 }, *ret = out ? out : &unsent;
    int rc = rv_qemu_agent_interfaces(reply, ret, err);
    if (ret == &unsent)          /* (a reply's is freed with it) */
        xdr_free((xdrproc_t)xdr_rv_domain_interface_addresses_ret, (char *)ret);
    return rc;
}

static const rv_qemu_agent_cmd cmd_interfaces = { .command = "guest-network-get-interfaces",
    .finish = finish_agent };

int rv_qemu_domain_interface_addresses(rv_driver_conn *c,
                                       const rv_domain_interface_addresses_args *args,
                                       rv_domain_interface_addresses_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainInterfaceAddresses",
                              err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get_running(&args->dom, err);
    if (!d)
        return -1;
    switch (args->source) {
    case SOURCE_LEASE:
        return from_leases(d->live, ret, err);
    case SOURCE_ARP:
        return from_arp(d->live, ret, err);
    case SOURCE_AGENT: {
        rv_deferred *reply;
        if (!rv_qemu_agent_domain(&args->dom, err) || !(reply = rv_driver_defer(err)))
            return -1;
        rv_qemu_agent_job(d, &cmd_interfaces, NULL, reply);
        return RV_DEFERRED;
    }
    default:
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Unknown IP address data source %u", args->source);
    }
}
