/* DOMAIN_INTERFACE_ADDRESSES on the QEMU driver, from the two sources
 * the host knows without asking the guest, as libvirtd's QEMU driver reads
 * them: the DHCP leases of remvirtd's own networks (dnsmasq's file, by the
 * interface's MAC) and the host's ARP table (/proc/net/arp, by MAC).  The
 * guest agent's source is refused until the agent family has the call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_network.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

enum { SOURCE_LEASE = 0, SOURCE_AGENT = 1, SOURCE_ARP = 2, IP_ADDR_IPV4 = 0 };
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

/* One more interface on the answer, for iface (named by its host device,
 * as libvirtd names it), without addresses yet. */
static rv_domain_interface *add_iface(rv_domain_interface_addresses_ret *ret,
                                      const rv_qemu_interface *iface, rv_err *err)
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
    char mac[18];
    mac_text(iface->mac, mac);
    wi->name = strdup(iface->ifname ? iface->ifname : "");
    wi->hwaddr = calloc(1, sizeof(char *));
    if (!wi->name || !wi->hwaddr || !(*wi->hwaddr = strdup(mac))) {
        oom(err);
        return NULL;
    }
    return wi;
}

static int add_addr(rv_domain_interface *wi, const char *addr, unsigned int prefix, rv_err *err)
{
    if (wi->addrs.addrs_len >= RV_DOMAIN_IP_ADDR_MAX)
        return 0;               /* the wire's limit: the first ones */
    rv_domain_ip_addr *v = realloc(wi->addrs.addrs_val, (wi->addrs.addrs_len + 1) * sizeof(*v));
    if (!v)
        return oom(err);
    wi->addrs.addrs_val = v;
    rv_domain_ip_addr *a = &v[wi->addrs.addrs_len];
    a->type = IP_ADDR_IPV4;
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
                add_addr(wi, l->ipaddr, l->prefix, err) < 0)
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
                add_addr(found[i], ip, 0, err) < 0)
                rc = -1;
        }
    }
    free(found);
    fclose(f);
    return rc;
}

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
    case SOURCE_AGENT:
        return fail(err, RV_ERR_NO_SUPPORT, "this function is not supported by the connection "
                    "driver: the guest agent's interfaces (guest-network-get-interfaces)");
    default:
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Unknown IP address data source %u", args->source);
    }
}
