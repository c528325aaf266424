/* NAT and isolated networks: their bridge, dnsmasq and nftables table
 * (see qemu_netnat.h).  Everything written into dnsmasq's configuration
 * or the nft rules comes from checked addresses and names (no newline,
 * quote or space can get through), never from the XML's text as is. */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_link.h"
#include "server/drivers/qemu/qemu_netnat.h"
#include "server/drivers/conf/xml_write.h"
#include "server/drivers/work_pool.h"

RV_LOG_CATEGORY("drivers.qemu.netnat");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NETWORK, (code), __VA_ARGS__)

enum { MAX_RANGES = 16, MAX_HOSTS = 1024, LEASES_FILE_MAX = 1 << 20, OUTPUT_MAX = 400 };

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* ================================================================ the XML */

typedef struct ipconf {
    const rv_xml_node *ip;      /* NULL: the network has no address */
    uint32_t address;           /* host byte order */
    unsigned prefix;
} ipconf;

static uint32_t mask_of(unsigned prefix)
{
    return prefix ? ~0u << (32 - prefix) : 0;
}

static bool ipv4(const char *text, uint32_t *out)
{
    struct in_addr in;
    if (!text || inet_pton(AF_INET, text, &in) != 1)
        return false;
    *out = ntohl(in.s_addr);
    return true;
}

static const char *ip_text(uint32_t address, char buf[INET_ADDRSTRLEN])
{
    struct in_addr in = { htonl(address) };
    return inet_ntop(AF_INET, &in, buf, INET_ADDRSTRLEN);
}

static bool only(const char *s, const char *allowed, size_t max)
{
    size_t n = 0;
    for (; s && *s; s++, n++)
        if (!isalnum((unsigned char)*s) && !strchr(allowed, *s))
            return false;
    return s && n > 0 && n <= max;
}

static bool mac_ok(const char *mac)
{
    unsigned b[6];
    char extra;
    return mac && strlen(mac) == 17 &&
           sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                  &extra) == 6 && only(mac, ":", 17);
}

static const char *mode_of(const rv_net_def *def)
{
    const rv_xml_node *fw = rv_xml_child(def->root, "forward");
    const char *mode = fw ? rv_xml_attr_get(fw, "mode") : NULL;
    return !fw ? "none" : mode ? mode : "nat";
}

bool rv_qemu_netnat_managed(const rv_net_def *def)
{
    const char *mode = mode_of(def);
    return strcmp(mode, "nat") == 0 || strcmp(mode, "none") == 0;
}

static bool is_nat(const rv_net_def *def)
{
    return strcmp(mode_of(def), "nat") == 0;
}

/* The outgoing device of a NAT network (<forward dev>), or NULL. */
static const char *forward_dev(const rv_net_def *def)
{
    const rv_xml_node *fw = rv_xml_child(def->root, "forward");
    return fw ? rv_xml_attr_get(fw, "dev") : NULL;
}

static int get_ipconf(const rv_net_def *def, ipconf *c, rv_err *err)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < def->root->nkids; i++) {
        const rv_xml_node *k = def->root->kids[i];
        if (!k || !k->name || strcmp(k->name, "ip") != 0)
            continue;
        const char *family = rv_xml_attr_get(k, "family");
        if (family && strcmp(family, "ipv4") != 0)
            return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: network '%s': only IPv4 addresses "
                        "(not family '%s') on remvirtd's NAT and isolated networks", def->name, family);
        if (c->ip)
            return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: network '%s' has more than one IPv4 <ip>",
                        def->name);
        const char *address = rv_xml_attr_get(k, "address");
        const char *netmask = rv_xml_attr_get(k, "netmask");
        const char *prefix = rv_xml_attr_get(k, "prefix");
        uint32_t mask = 0;
        char *end = NULL;
        if (!ipv4(address, &c->address))
            return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': invalid <ip address='%s'>",
                        def->name, address ? address : "");
        if (prefix) {
            unsigned long p = strtoul(prefix, &end, 10);
            if (!*prefix || *end || p < 1 || p > 30)
                return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': invalid prefix '%s' (1 to 30)",
                            def->name, prefix);
            c->prefix = (unsigned)p;
        } else if (netmask && ipv4(netmask, &mask)) {
            while (c->prefix < 32 && (mask & (1u << (31 - c->prefix))))
                c->prefix++;
            if (mask != mask_of(c->prefix) || c->prefix < 1 || c->prefix > 30)
                return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': invalid netmask '%s'",
                            def->name, netmask);
        } else {
            return fail(err, RV_ERR_XML_ERROR,
                        "XML error: network '%s': <ip> needs a netmask or a prefix", def->name);
        }
        uint32_t host = c->address & ~mask_of(c->prefix);
        if (host == 0 || host == ~mask_of(c->prefix))
            return fail(err, RV_ERR_XML_ERROR,
                        "XML error: network '%s': address '%s' is the subnet's network or broadcast address",
                        def->name, address);
        c->ip = k;
    }
    return 0;
}

static bool in_subnet(const ipconf *c, uint32_t a)
{
    uint32_t m = mask_of(c->prefix);
    return (a & m) == (c->address & m) && (a & ~m) != 0 && (a & ~m) != ~m;
}

/* Whether s has no control character (a line of dnsmasq's configuration). */
static bool one_line(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

/* A number attribute of an SRV record: absent (0), or 0 to max. */
static bool srv_number(const rv_xml_node *srv, const char *attr, unsigned long max)
{
    const char *v = rv_xml_attr_get(srv, attr);
    char *end = NULL;
    unsigned long n = v ? strtoul(v, &end, 10) : 0;
    return !v || (*v && isdigit((unsigned char)*v) && !*end && n <= max);
}

/* A <dns> <txt> or <srv>: refused as libvirtd refuses it, and what could
 * not be one line of dnsmasq's configuration. */
static int check_record(const rv_net_def *def, const rv_xml_node *r, rv_err *err)
{
    if (strcmp(r->name, "txt") == 0) {
        const char *name = rv_xml_attr_get(r, "name"), *value = rv_xml_attr_get(r, "value");
        if (!name)
            return fail(err, RV_ERR_XML_DETAIL,
                        "missing required name attribute in DNS TXT record of network %s", def->name);
        if (strpbrk(name, " ,") || !one_line(name))
            return fail(err, RV_ERR_XML_DETAIL,
                        "prohibited character in DNS TXT record name '%s' of network %s", name, def->name);
        if (!value)
            return fail(err, RV_ERR_XML_DETAIL, "missing required value attribute in DNS TXT "
                        "record named '%s' of network %s", name, def->name);
        if (!one_line(value))
            return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': the value of DNS TXT "
                        "record '%s' has a control character", def->name, name);
        return 0;
    }
    const char *service = rv_xml_attr_get(r, "service"), *protocol = rv_xml_attr_get(r, "protocol");
    const char *names[] = { "domain", "target" };
    if (!service)
        return fail(err, RV_ERR_XML_DETAIL, "missing required service attribute in DNS SRV "
                    "record of network '%s'", def->name);
    if (!only(service, "-_.+", 63))
        return fail(err, RV_ERR_XML_DETAIL, "invalid character in service attribute '%s' in DNS "
                    "SRV record of network '%s'", service, def->name);
    if (!protocol)
        return fail(err, RV_ERR_XML_DETAIL, "missing required protocol attribute in DNS SRV "
                    "record '%s' of network '%s'", service, def->name);
    if (!only(protocol, "-_.+", 63))
        return fail(err, RV_ERR_XML_DETAIL, "invalid character in protocol attribute '%s' in DNS "
                    "SRV record of network '%s'", protocol, def->name);
    if (rv_xml_attr_get(r, "port") && !rv_xml_attr_get(r, "target"))
        return fail(err, RV_ERR_XML_DETAIL, "DNS SRV port attribute not permitted without target "
                    "for service '%s' in network '%s'", service, def->name);
    static const char *const numbers[] = { "port", "priority", "weight" };
    for (size_t i = 0; i < 3; i++)
        if (!srv_number(r, numbers[i], 65535))
            return fail(err, RV_ERR_XML_DETAIL, "%s DNS SRV %s attribute for service '%s' "
                        "in network '%s'", i == 1 ? "Invalid" : "invalid",  /* (as libvirtd) */
                        numbers[i], service, def->name);
    /* (remvirtd's own: each a field of dnsmasq's srv-host line) */
    for (size_t i = 0; i < 2; i++) {
        const char *v = rv_xml_attr_get(r, names[i]);
        if (v && !only(v, "-_.", 253))
            return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': DNS SRV %s '%s' is not "
                        "letters, digits, '-', '_' and '.'", def->name, names[i], v);
    }
    return 0;
}

int rv_qemu_netnat_check(const rv_net_def *def, rv_err *err)
{
    ipconf c;
    if (get_ipconf(def, &c, err) < 0)
        return -1;
    if (is_nat(def) && !c.ip)
        return fail(err, RV_ERR_XML_ERROR, "XML error: NAT network '%s' needs an <ip address>",
                    def->name);
    const char *dev = forward_dev(def);
    if (dev && !only(dev, "-_.", RV_LINK_NAME_MAX))
        return fail(err, RV_ERR_XML_ERROR, "XML error: invalid forward dev '%s'", dev);
    const rv_xml_node *dhcp = c.ip ? rv_xml_child(c.ip, "dhcp") : NULL;
    size_t ranges = 0, hosts = 0;
    for (size_t i = 0; dhcp && i < dhcp->nkids; i++) {
        const rv_xml_node *k = dhcp->kids[i];
        if (!k || !k->name)
            continue;
        uint32_t a, b;
        if (strcmp(k->name, "range") == 0) {
            const char *start = rv_xml_attr_get(k, "start"), *end = rv_xml_attr_get(k, "end");
            if (!ipv4(start, &a) || !ipv4(end, &b) || !in_subnet(&c, a) || !in_subnet(&c, b) || a > b)
                return fail(err, RV_ERR_XML_ERROR,
                            "XML error: network '%s': DHCP range '%s' - '%s' is not within its subnet",
                            def->name, start ? start : "", end ? end : "");
            if (++ranges > MAX_RANGES)
                return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': more than %d DHCP ranges",
                            def->name, MAX_RANGES);
        } else if (strcmp(k->name, "host") == 0) {
            /* As libvirtd: a MAC or a name, and an address (which may be
             * outside the subnet: dnsmasq then leaves it alone). */
            const char *mac = rv_xml_attr_get(k, "mac"), *ip = rv_xml_attr_get(k, "ip");
            const char *name = rv_xml_attr_get(k, "name");
            if (mac && !mac_ok(mac))
                return fail(err, RV_ERR_XML_ERROR,
                            "XML error: Cannot parse MAC address '%s' in network '%s'", mac, def->name);
            if (!mac && !name)
                return fail(err, RV_ERR_XML_ERROR, "XML error: Static host definition in IPv4 "
                            "network '%s' must have mac or name attribute", def->name);
            if (!ip)
                return fail(err, RV_ERR_XML_ERROR, "XML error: Missing IP address in static host "
                            "definition for network '%s'", def->name);
            if (!ipv4(ip, &a))
                return fail(err, RV_ERR_XML_ERROR, "XML error: Invalid IP address in static host "
                            "definition for network '%s'", def->name);
            /* (remvirtd's own: what dnsmasq takes as a host name) */
            if (name && !only(name, "-._", 63))
                return fail(err, RV_ERR_XML_ERROR,
                            "XML error: network '%s': DHCP host name '%s' is not letters, digits, "
                            "'-', '_' and '.'", def->name, name);
            if (++hosts > MAX_HOSTS)
                return fail(err, RV_ERR_XML_ERROR, "XML error: network '%s': more than %d DHCP hosts",
                            def->name, MAX_HOSTS);
        } else {
            return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: network '%s': <dhcp> element <%s>", def->name,
                        k->name);
        }
    }
    /* <dns> hosts, TXT and SRV records go into dnsmasq's configuration */
    const rv_xml_node *dns = rv_xml_child(def->root, "dns");
    for (size_t i = 0; dns && i < dns->nkids; i++) {
        const rv_xml_node *h = dns->kids[i];
        uint32_t a;
        if (h && h->name && (strcmp(h->name, "txt") == 0 || strcmp(h->name, "srv") == 0) &&
            check_record(def, h, err) < 0)
            return -1;
        if (!h || !h->name || strcmp(h->name, "host") != 0)
            continue;
        bool ok = ipv4(rv_xml_attr_get(h, "ip"), &a);
        for (size_t n = 0; ok && n < h->nkids; n++) {
            char *name = h->kids[n] && h->kids[n]->name && strcmp(h->kids[n]->name, "hostname") == 0
                             ? rv_xml_string(h->kids[n]) : NULL;
            ok = !name || only(name, "-.", 253);
            free(name);
        }
        if (!ok)
            return fail(err, RV_ERR_XML_ERROR,
                        "XML error: network '%s': a DNS <host> needs an IPv4 address and host "
                        "names of letters, digits, '-' and '.'", def->name);
    }
    return 0;
}

/* ================================================================ files */

/* A text file of at most max bytes (malloc'd, NUL-terminated), or NULL. */
static char *read_small(const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *text = malloc(max + 1);
    size_t len = 0;
    ssize_t n = 1;
    while (text && len < max && (n = read(fd, text + len, max - len)) > 0)
        len += (size_t)n;
    close(fd);
    if (text)
        text[len] = '\0';
    return text;
}

/* The <dns> hosts as dnsmasq's host records ("host-record=name...,address"). */
static void put_dns_hosts(FILE *fp, const rv_net_def *def)
{
    char a[INET_ADDRSTRLEN];
    const rv_xml_node *dns = rv_xml_child(def->root, "dns");
    for (size_t i = 0; dns && i < dns->nkids; i++) {
        const rv_xml_node *h = dns->kids[i];
        uint32_t s;
        bool named = false;
        if (!h || !h->name || strcmp(h->name, "host") != 0 || !ipv4(rv_xml_attr_get(h, "ip"), &s))
            continue;
        for (size_t n = 0; n < h->nkids; n++) {
            char *name = h->kids[n] && h->kids[n]->name && strcmp(h->kids[n]->name, "hostname") == 0
                             ? rv_xml_string(h->kids[n]) : NULL;
            if (name && only(name, "-.", 253)) {   /* checked at define; never a newline */
                fprintf(fp, "%s%s", named ? "," : "host-record=", name);
                named = true;
            }
            free(name);
        }
        if (named)
            fprintf(fp, ",%s\n", ip_text(s, a));
    }
}

/* The <dns> TXT and SRV records, as libvirtd writes them (each field
 * checked at define: one line, no comma where a field ends). */
static void put_dns_records(FILE *fp, const rv_net_def *def)
{
    const rv_xml_node *dns = rv_xml_child(def->root, "dns");
    for (size_t i = 0; dns && i < dns->nkids; i++) {
        const rv_xml_node *r = dns->kids[i];
        if (r && r->name && strcmp(r->name, "txt") == 0) {
            const char *name = rv_xml_attr_get(r, "name"), *value = rv_xml_attr_get(r, "value");
            if (name && value)
                fprintf(fp, "txt-record=%s,%s\n", name, value);
        }
    }
    for (size_t i = 0; dns && i < dns->nkids; i++) {
        const rv_xml_node *r = dns->kids[i];
        const char *service = r && r->name && strcmp(r->name, "srv") == 0
                                  ? rv_xml_attr_get(r, "service") : NULL;
        const char *protocol = service ? rv_xml_attr_get(r, "protocol") : NULL;
        if (!protocol)
            continue;
        const char *domain = rv_xml_attr_get(r, "domain"), *target = rv_xml_attr_get(r, "target");
        fprintf(fp, "srv-host=_%s._%s%s%s%s%s", service, protocol, domain ? "." : "",
                domain ? domain : "", target ? "," : "", target ? target : "");
        /* port, priority, weight: each when given and not 0 */
        static const char *const numbers[] = { "port", "priority", "weight" };
        for (size_t n = 0; n < 3; n++) {
            unsigned long v = strtoul(rv_xml_attr_get(r, numbers[n]) ? rv_xml_attr_get(r, numbers[n]) : "0",
                                      NULL, 10);
            if (v)
                fprintf(fp, ",%lu", v);
        }
        fputc('\n', fp);
    }
}

/* dnsmasq's configuration: DHCP on the bridge only, its files here.  The
 * DHCP and DNS hosts are in it too, not in files of their own that a
 * SIGHUP would have it read again as libvirtd does: dnsmasq reads those
 * as nobody, and remvirtd's run directory is private. */
static char *dnsmasq_conf(const rv_net_def *def, const ipconf *c, const char *dir)
{
    char *pid = rv_qemu_path(dir, def->name, ".pid"), *leases = rv_qemu_path(dir, def->name, ".leases");
    char *text = NULL;
    size_t size = 0;
    FILE *fp = pid && leases ? open_memstream(&text, &size) : NULL;
    if (!fp) {
        free(pid);
        free(leases);
        return NULL;
    }
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN], m[INET_ADDRSTRLEN];
    fprintf(fp, "# written by remvirtd for network '%s'; rewritten at each start\n"
                "strict-order\nno-hosts\nexcept-interface=lo\nbind-dynamic\ninterface=%s\n"
                "pid-file=%s\ndhcp-leasefile=%s\n",
            def->name, def->bridge, pid, leases);
    put_dns_records(fp, def);
    const rv_xml_node *dhcp = rv_xml_child(c->ip, "dhcp");
    unsigned long leases_max = 0;
    bool hosts = false;
    ip_text(mask_of(c->prefix), m);
    for (size_t i = 0; dhcp && i < dhcp->nkids; i++) {
        const rv_xml_node *k = dhcp->kids[i];
        uint32_t s, e;
        if (!k || !k->name)
            continue;
        if (strcmp(k->name, "range") == 0 && ipv4(rv_xml_attr_get(k, "start"), &s) &&
            ipv4(rv_xml_attr_get(k, "end"), &e)) {
            fprintf(fp, "dhcp-range=%s,%s,%s\n", ip_text(s, a), ip_text(e, b), m);
            leases_max += e - s + 1;
        } else if (strcmp(k->name, "host") == 0 && ipv4(rv_xml_attr_get(k, "ip"), &s)) {
            /* as libvirtd's hosts file: MAC,address[,name] or name,address */
            const char *mac = rv_xml_attr_get(k, "mac"), *name = rv_xml_attr_get(k, "name");
            if (mac)
                fprintf(fp, "dhcp-host=%s,%s%s%s\n", mac, ip_text(s, a), name ? "," : "",
                        name ? name : "");
            else
                fprintf(fp, "dhcp-host=%s,%s\n", name, ip_text(s, a));
            hosts = true;
        }
    }
    put_dns_hosts(fp, def);
    /* Fixed hosts alone: DHCP for them only, on the network's address. */
    if (hosts && !leases_max)
        fprintf(fp, "dhcp-range=%s,static\n", ip_text(c->address, a));
    if (hosts || leases_max)
        fputs("dhcp-no-override\ndhcp-authoritative\n", fp);
    if (leases_max)
        fprintf(fp, "dhcp-lease-max=%lu\n", leases_max);
    bool failed = ferror(fp) != 0;
    if (fclose(fp) != 0 || failed) {
        free(text);
        text = NULL;
    }
    free(pid);
    free(leases);
    return text;
}

static int table_name(const rv_net_def *def, char *out, size_t size)
{
    return snprintf(out, size, "remvirt_%s", def->bridge) < (int)size ? 0 : -1;
}

/* The network's nftables table, replaced whole in one transaction (an
 * older one left by a crash goes first). */
static char *nft_rules(const rv_net_def *def, const ipconf *c)
{
    char table[64], net[INET_ADDRSTRLEN], *text = NULL;
    size_t size = 0;
    FILE *fp = table_name(def, table, sizeof(table)) == 0 ? open_memstream(&text, &size) : NULL;
    if (!fp)
        return NULL;
    const char *br = def->bridge;
    fprintf(fp, "table ip %s\ndelete table ip %s\ntable ip %s {\n", table, table, table);
    if (is_nat(def)) {
        const char *dev = forward_dev(def);
        char out[48] = "";
        if (dev)
            snprintf(out, sizeof(out), "oifname \"%s\" ", dev);
        ip_text(c->address & mask_of(c->prefix), net);
        fprintf(fp,
                "  chain postrouting {\n"
                "    type nat hook postrouting priority srcnat; policy accept;\n"
                "    ip saddr %s/%u ip daddr 224.0.0.0/24 return\n"
                "    ip saddr %s/%u ip daddr 255.255.255.255 return\n"
                "    %sip saddr %s/%u ip daddr != %s/%u masquerade\n"
                "  }\n"
                "  chain forward {\n"
                "    type filter hook forward priority filter; policy accept;\n"
                "    iifname \"%s\" oifname \"%s\" accept\n"
                "    iifname \"%s\" ip saddr %s/%u accept\n"
                "    oifname \"%s\" ip daddr %s/%u ct state related,established accept\n"
                "    iifname \"%s\" reject\n"
                "    oifname \"%s\" reject\n"
                "  }\n",
                net, c->prefix, net, c->prefix, out, net, c->prefix, net, c->prefix, br, br, br,
                net, c->prefix, br, net, c->prefix, br, br);
    } else {
        /* Isolated: the guests reach each other and the host, nothing else. */
        fprintf(fp,
                "  chain forward {\n"
                "    type filter hook forward priority filter; policy accept;\n"
                "    iifname \"%s\" oifname \"%s\" accept\n"
                "    iifname \"%s\" reject\n"
                "    oifname \"%s\" reject\n"
                "  }\n",
                br, br, br, br);
    }
    fputs("}\n", fp);
    bool failed = ferror(fp) != 0;
    if (fclose(fp) != 0 || failed) {
        free(text);
        return NULL;
    }
    return text;
}

/* ================================================================ dnsmasq's process */

/* dnsmasq's pid from its pid file, when that process is still the
 * dnsmasq of this configuration (its --conf-file argument); else 0. */
/* Whether pid runs with --conf-file=conf (a zombie has no arguments). */
static bool runs_conf(pid_t pid, const char *conf)
{
    char proc[64], args[4096];
    snprintf(proc, sizeof(proc), "/proc/%d/cmdline", (int)pid);
    int fd = pid > 1 && conf ? open(proc, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = fd >= 0 ? read(fd, args, sizeof(args) - 1) : -1;
    bool ours = false;
    if (n > 0) {
        args[n] = '\0';
        /* the arguments, each NUL-terminated */
        for (size_t at = 0; at < (size_t)n; at += strlen(args + at) + 1)
            ours |= strncmp(args + at, "--conf-file=", 12) == 0 && strcmp(args + at + 12, conf) == 0;
    }
    if (fd >= 0)
        close(fd);
    return ours;
}

static pid_t running_dnsmasq(const char *dir, const char *name)
{
    char *pid_path = rv_qemu_path(dir, name, ".pid"), *conf = rv_qemu_path(dir, name, ".dnsmasq.conf");
    char *text = pid_path ? read_small(pid_path, 32) : NULL;
    pid_t pid = text ? (pid_t)atoi(text) : 0;
    bool ours = runs_conf(pid, conf);
    free(text);
    free(pid_path);
    free(conf);
    return ours ? pid : 0;
}

/* The same, found among all processes: a dnsmasq just started may not
 * have written its pid file yet (rare: a restart that meets a stop). */
static pid_t find_dnsmasq(const char *dir, const char *name)
{
    pid_t pid = running_dnsmasq(dir, name), found = 0;
    char *conf = pid > 0 ? NULL : rv_qemu_path(dir, name, ".dnsmasq.conf");
    DIR *d = conf ? opendir("/proc") : NULL;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && runs_conf((pid_t)atoi(e->d_name), conf))
            found = (pid_t)atoi(e->d_name);
    if (d)
        closedir(d);
    free(conf);
    return pid > 0 ? pid : found;
}

/* The dnsmasq sent SIGTERM, or 0. */
static pid_t stop_dnsmasq(const char *dir, const char *name)
{
    pid_t pid = running_dnsmasq(dir, name);
    if (pid <= 0 || kill(pid, SIGTERM) < 0)
        return 0;
    RV_INFO("network '%s': dnsmasq (pid %d) stopped", name, (int)pid);
    return pid;
}

/* ================================================================ commands, watched by the loop */

typedef enum { STEP_DNSMASQ, STEP_NFT_LOAD, STEP_NFT_DELETE, STEP_RESTART_DNSMASQ } step;

typedef struct netop {
    step step;
    char *name, *bridge, *dir;
    bool nat;
    /* An old dnsmasq (old) is waited for, polled, before what comes
     * next may bind its addresses: a restart's new dnsmasq (a live update
     * of its ranges), a start's (one that a failed start left exiting),
     * a stop's answer (result: what nft said).  Once a restart's new one
     * is being started (spawned): an update meanwhile asks for another
     * restart (again), as it may have read the older configuration; a
     * stop of the network meanwhile (cancelled) ends it. */
    ev_timer wait;
    int waits;
    pid_t old;                  /* the dnsmasq waited for */
    rv_err result;
    bool spawned, again, cancelled;
    rv_qemu_netnat_done done;
    void *opaque;
    struct netop *next;
    /* Its disk and link steps, on a pool thread (issue 31: a start's
     * files, bridge and scan of /proc, a stop's bridge and files cost
     * the loop milliseconds): what the job reads (job_*) and says
     * (job_err, job_old).  A start's ends the call when it fails.  One
     * job at a time (job_link: the next): what a start checks of the
     * host (the bridge name, the subnet) is as the jobs before left it. */
    rv_work work;
    struct netop *job_link;
    void (*job_run)(struct netop *op), (*job_next)(struct netop *op);
    char *job_nft, *job_conf, *job_mac;
    uint32_t job_address;
    unsigned job_prefix;
    bool job_ip, orphaned, nft_exited;
    pid_t job_old;
    rv_err job_err;
} netop;

static netop *ops;
static bool restart_settled(netop *op);

static void op_free(netop *op)
{
    ev_timer_stop(rv_qemu.loop, &op->wait);
    rv_err_clear(&op->result);
    for (netop **at = &ops; *at; at = &(*at)->next)
        if (*at == op) {
            *at = op->next;
            break;
        }
    if (op->job_next) {         /* a job holds it: its end frees it */
        op->orphaned = true;
        op->done = NULL;
        return;
    }
    rv_err_clear(&op->job_err);
    free(op->job_nft);
    free(op->job_conf);
    free(op->job_mac);
    free(op->name);
    free(op->bridge);
    free(op->dir);
    free(op);
}

static void op_finish(netop *op, const rv_err *err)
{
    rv_qemu_netnat_done done = op->done;
    void *opaque = op->opaque;
    op_free(op);
    if (done)
        done(opaque, err);
}

static void on_exit_status(void *data, int status, const char *why);
static bool exited(pid_t pid);

static void job_run(rv_work *w)
{
    netop *op = (netop *)((char *)w - offsetof(netop, work));
    op->job_run(op);
}

static netop *jobs, **jobs_tail = &jobs;   /* the running job, then the waiting ones */
static void job_done(rv_work *w);

static void job_start_head(void)
{
    if (jobs && rv_work_pool_running()) {
        rv_work_submit(&jobs->work);
    } else if (jobs) {          /* (the pool stopped: remvirtd exits) */
        job_run(&jobs->work);
        job_done(&jobs->work);
    }
}

static void job_done(rv_work *w)
{
    netop *op = (netop *)((char *)w - offsetof(netop, work));
    void (*next)(netop *op) = op->job_next;
    op->job_next = NULL;
    if (jobs == op) {
        if (!(jobs = op->job_link))
            jobs_tail = &jobs;
        job_start_head();
    }
    if (op->orphaned)
        op_free(op);
    else
        next(op);
}

/* run(op) off the loop, then next(op) on it; op is the job's meanwhile
 * (its name, bridge and dir do not change). */
static void submit(netop *op, void (*run)(netop *op), void (*next)(netop *op))
{
    op->job_run = run;
    op->job_next = next;
    op->work.run = job_run;
    op->work.done = job_done;
    if (rv_work_pool_running()) {
        op->job_link = NULL;
        *jobs_tail = op;
        jobs_tail = &op->job_link;
        if (jobs == op)
            job_start_head();
    } else {                    /* (no pool: a unit test's driver) */
        job_run(&op->work);
        job_done(&op->work);
    }
}

/* op goes on once old, sent SIGTERM, has exited (on_old_dnsmasq). */
static void wait_for_old(netop *op, pid_t old)
{
    op->old = old;
    op->waits = 0;
    ev_timer_start(rv_qemu.loop, &op->wait);
}

/* Run argv (argv[0] a tool name) with its output in dir/name.cmd.log;
 * on_exit_status goes on with op's next step. */
static int run(netop *op, const char *tool, char *const args[], rv_err *err)
{
    char *path = rv_qemu_find_program(tool), *log = rv_qemu_path(op->dir, op->name, ".cmd.log");
    int logfd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    int rc = 0;
    if (!path)
        rc = fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                  "Operation not supported: network '%s' needs %s, which is not installed "
                  "(Debian: %s)", op->name, tool,
                  strcmp(tool, "nft") == 0 ? "nftables" : "dnsmasq-base");
    else if (logfd < 0)
        rc = fail(err, RV_ERR_SYSTEM_ERROR, "cannot open '%s': %s", log ? log : op->name,
                  strerror(errno));
    /* Through the spawner helper: the loop does not fork. */
    char *argv[8] = { path };
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = args[i];
    if (rc == 0)
        rc = rv_qemu_run(argv, logfd, -1, -1, on_exit_status, op, err);
    if (logfd >= 0)
        close(logfd);
    free(log);
    free(path);
    if (rc < 0)
        return -1;
    RV_DEBUG("network '%s': %s started", op->name, tool);
    return 0;
}

/* What a failed command said (its log, on one line). */
static void command_failed(netop *op, const char *tool, int status, rv_err *err)
{
    char *log = rv_qemu_path(op->dir, op->name, ".cmd.log");
    char *text = log ? read_small(log, OUTPUT_MAX) : NULL;
    size_t len = text ? strlen(text) : 0;
    while (len && isspace((unsigned char)text[len - 1]))
        text[--len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n' || text[i] == '\t')
            text[i] = ' ';
    char how[48];
    if (WIFEXITED(status))
        snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
    else
        snprintf(how, sizeof(how), "signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    fail(err, RV_ERR_OPERATION_FAILED, "operation failed: network '%s': %s failed (%s)%s%s",
         op->name, tool, how, len ? ": " : "", len ? text : "");
    free(text);
    free(log);
}

static int write_forwarding(rv_err *err)
{
    int fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
    int rc = fd >= 0 && write(fd, "1\n", 2) == 2 ? 0 : -1;
    if (rc < 0)
        fail(err, RV_ERR_SYSTEM_ERROR, "cannot enable IPv4 forwarding: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

/* A start that failed part way: what it made goes (the table never was:
 * nft's load is one transaction). */
static void undo_start(netop *op)
{
    rv_err ignored = { 0 };
    stop_dnsmasq(op->dir, op->name);
    rv_qemu_bridge_delete(op->bridge, &ignored);
    rv_err_clear(&ignored);
    rv_qemu_remove_file(op->dir, op->name, ".dnsmasq.conf");
    rv_qemu_remove_file(op->dir, op->name, ".pid");
    rv_qemu_remove_file(op->dir, op->name, ".leases");
    rv_qemu_remove_file(op->dir, op->name, ".nft");
}

static void finish_with_job_err(netop *op)
{
    rv_err err = { 0 };
    rv_err_move(&err, &op->job_err);
    op_finish(op, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
}

/* A start failed (err, taken): undone off the loop, then answered. */
static void undo_then_finish(netop *op, rv_err *err)
{
    rv_err_move(&op->job_err, err);
    submit(op, undo_start, finish_with_job_err);
}

static int run_nft(netop *op, const char *suffix, rv_err *err)
{
    char *file = rv_qemu_path(op->dir, op->name, suffix);
    char *args[] = { "-f", file, NULL };
    int rc = file ? run(op, "nft", args, err) : oom(err);
    free(file);
    return rc;
}

static int run_dnsmasq(netop *op, rv_err *err)
{
    char *conf = rv_qemu_path(op->dir, op->name, ".dnsmasq.conf"), *arg = NULL;
    int rc = conf && asprintf(&arg, "--conf-file=%s", conf) >= 0 ? 0 : oom(err);
    char *args[] = { arg, NULL };
    if (rc == 0)
        rc = run(op, "dnsmasq", args, err);
    free(arg);
    free(conf);
    return rc;
}

/* A stop is answered once nft has exited and its job is over, and its
 * old dnsmasq is gone. */
static void stop_settle(netop *op)
{
    if (op->job_next || !op->nft_exited)
        return;
    if (op->old > 0 && !exited(op->old)) {
        wait_for_old(op, op->old);
        return;
    }
    rv_err err = { 0 };
    rv_err_move(&err, &op->result);
    op_finish(op, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
}

static void on_exit_status(void *data, int status, const char *why)
{
    netop *op = data;
    if (status < 0) {
        RV_WARN("network '%s': %s", op->name, why ? why : "a command did not run");
        status = 127 << 8;      /* (as a program that could not run) */
    }
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    rv_err err = { 0 };
    switch (op->step) {
    case STEP_DNSMASQ:          /* dnsmasq answers once it is ready, in the background */
        if (!ok) {
            command_failed(op, "dnsmasq", status, &err);
            break;
        }
        op->step = STEP_NFT_LOAD;
        run_nft(op, ".nft", &err);
        if (!rv_err_is_set(&err))
            return;
        break;
    case STEP_NFT_LOAD:
        if (!ok)
            command_failed(op, "nft", status, &err);
        else if (op->nat)
            write_forwarding(&err);
        if (!rv_err_is_set(&err))
            RV_INFO("network '%s' is up on bridge %s", op->name, op->bridge);
        break;
    case STEP_NFT_DELETE:
        if (!ok)
            command_failed(op, "nft", status, &err);
        rv_qemu_remove_file(op->dir, op->name, ".nft");
        rv_qemu_remove_file(op->dir, op->name, ".del.nft");
        if (ok)
            rv_qemu_remove_file(op->dir, op->name, ".cmd.log");
        rv_err_move(&op->result, &err);
        op->nft_exited = true;
        stop_settle(op);
        return;
    case STEP_RESTART_DNSMASQ:
        if (!ok) {
            command_failed(op, "dnsmasq", status, &err);
            RV_WARN("%s", err.message);
        }
        rv_err_clear(&err);
        if (restart_settled(op))
            break;
        return;         /* restarted again */
    }
    if (rv_err_is_set(&err) && (op->step == STEP_DNSMASQ || op->step == STEP_NFT_LOAD))
        undo_then_finish(op, &err);
    else
        op_finish(op, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
}

static void on_old_dnsmasq(struct ev_loop *loop, ev_timer *w, int revents);

/* A started dnsmasq of op (a restart) is up: what happened meanwhile is
 * done; false when op goes on (another restart). */
static bool restart_settled(netop *op)
{
    pid_t pid = find_dnsmasq(op->dir, op->name);
    op->spawned = false;
    if (op->cancelled) {        /* the network stopped meanwhile */
        if (pid > 0)
            kill(pid, SIGTERM);
        rv_qemu_remove_file(op->dir, op->name, ".pid");
    } else if (op->again && pid > 0) {
        op->again = false;
        kill(pid, SIGTERM);
        wait_for_old(op, pid);
        return false;
    }
    return true;
}

/* The restart of name's dnsmasq under way, or NULL. */
static netop *restarting(const char *name)
{
    for (netop *op = ops; op; op = op->next)
        if (op->step == STEP_RESTART_DNSMASQ && strcmp(op->name, name) == 0)
            return op;
    return NULL;
}

static netop *op_new(const rv_net_def *def, const char *dir, step s, rv_qemu_netnat_done done,
                     void *opaque)
{
    netop *op = calloc(1, sizeof(*op));
    if (!op)
        return NULL;
    op->name = strdup(def->name);
    op->bridge = strdup(def->bridge);
    op->dir = strdup(dir);
    if (!op->name || !op->bridge || !op->dir) {
        free(op->name);
        free(op->bridge);
        free(op->dir);
        free(op);
        return NULL;
    }
    op->step = s;
    op->nat = is_nat(def);
    ev_timer_init(&op->wait, on_old_dnsmasq, 0.01, 0.01);
    op->done = done;
    op->opaque = opaque;
    op->next = ops;
    ops = op;
    return op;
}

/* ================================================================ start, stop, reattach */

static int write_in(const char *dir, const char *name, const char *suffix, const char *text,
                    rv_err *err)
{
    char *path = rv_qemu_path(dir, name, suffix);
    int rc = !text || !path ? oom(err) : rv_qemu_write_file(path, text, false, err);
    free(path);
    return rc;
}

/* A start's files and bridge (off the loop): what an earlier run left
 * goes (a leftover pid file must not name someone else's process as
 * ours), the nft and dnsmasq files, the bridge (without an <ip>, one
 * with no address), and a dnsmasq of an earlier run still exiting. */
static void start_files(netop *op)
{
    rv_err *err = &op->job_err;
    if (rv_qemu_mkdirs(op->dir, err) < 0)
        return;
    rv_qemu_remove_file(op->dir, op->name, ".pid");
    rv_qemu_remove_file(op->dir, op->name, ".leases");
    if (write_in(op->dir, op->name, ".nft", op->job_nft, err) < 0 ||
        (op->job_ip && write_in(op->dir, op->name, ".dnsmasq.conf", op->job_conf, err) < 0) ||
        rv_qemu_bridge_create(op->bridge, op->job_mac, op->job_address, op->job_prefix, err) < 0) {
        rv_qemu_remove_file(op->dir, op->name, ".dnsmasq.conf");
        rv_qemu_remove_file(op->dir, op->name, ".nft");
        return;
    }
    op->job_old = op->job_ip ? find_dnsmasq(op->dir, op->name) : 0;
}

static void start_go(netop *op)
{
    rv_err err = { 0 };
    if (rv_err_is_set(&op->job_err)) {
        finish_with_job_err(op);
        return;
    }
    /* One of an earlier run still exiting (a failed start's) holds the
     * addresses a while: the new one starts once it is gone. */
    if (op->job_old > 0) {
        kill(op->job_old, SIGTERM);
        wait_for_old(op, op->job_old);
    } else if ((op->job_ip ? run_dnsmasq(op, &err) : run_nft(op, ".nft", &err)) < 0) {
        undo_then_finish(op, &err);
        rv_err_clear(&err);
        return;
    }
    RV_INFO("network '%s': bridge %s made, %s", op->name, op->bridge,
            op->job_ip ? "starting dnsmasq" : "loading its nftables table");
}

int rv_qemu_netnat_start(const rv_net_def *def, const char *dir, rv_qemu_netnat_done done,
                         void *opaque, rv_err *err)
{
    ipconf c;
    if (!rv_qemu.privileged)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: network '%s': NAT and isolated networks need "
                    "remvirtd to run as root (qemu:///system) to make bridge '%s'",
                    def->name, def->bridge);
    if (!def->bridge)       /* qemu_network.c names one at define */
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: network '%s' has no bridge name",
                    def->name);
    if (get_ipconf(def, &c, err) < 0)
        return -1;
    netop *op = op_new(def, dir, c.ip ? STEP_DNSMASQ : STEP_NFT_LOAD, done, opaque);
    if (!op)
        return oom(err);
    const char *mac = rv_net_def_mac(def);
    op->job_ip = c.ip;
    op->job_address = c.ip ? c.address : 0;
    op->job_prefix = c.ip ? c.prefix : 0;
    if (!(op->job_nft = nft_rules(def, &c)) || (c.ip && !(op->job_conf = dnsmasq_conf(def, &c, dir))) ||
        (mac && !(op->job_mac = strdup(mac)))) {
        op_free(op);
        return oom(err);
    }
    submit(op, start_files, start_go);
    return 0;
}

/* A stop's bridge and files (off the loop), once nft runs and dnsmasq
 * was sent SIGTERM. */
static void stop_files(netop *op)
{
    rv_err e = { 0 };
    if (rv_qemu_bridge_delete(op->bridge, &e) < 0)
        RV_WARN("network '%s': %s", op->name, e.message);
    rv_err_clear(&e);
    rv_qemu_remove_file(op->dir, op->name, ".dnsmasq.conf");
    rv_qemu_remove_file(op->dir, op->name, ".pid");
    rv_qemu_remove_file(op->dir, op->name, ".leases");
}

int rv_qemu_netnat_stop(const rv_net_def *def, const char *dir, rv_qemu_netnat_done done,
                        void *opaque, rv_err *err)
{
    char table[64], *rules = NULL;
    if (table_name(def, table, sizeof(table)) < 0 ||
        asprintf(&rules, "table ip %s\ndelete table ip %s\n", table, table) < 0)
        return oom(err);
    int rc = write_in(dir, def->name, ".del.nft", rules, err);
    free(rules);
    netop *op = rc == 0 ? op_new(def, dir, STEP_NFT_DELETE, done, opaque) : NULL;
    if (rc == 0 && !op)
        rc = oom(err);
    if (rc < 0 || run_nft(op, ".del.nft", err) < 0) {
        if (op)
            op_free(op);
        rv_qemu_remove_file(dir, def->name, ".del.nft");
        return -1;
    }
    netop *restart = restarting(def->name);
    if (restart && restart->spawned)
        restart->cancelled = true;
    else if (restart)
        op_finish(restart, NULL);
    /* done runs once it has exited too: a start right after may bind
     * the same addresses */
    op->old = stop_dnsmasq(dir, def->name);
    submit(op, stop_files, stop_settle);
    return 0;
}

void rv_qemu_netnat_reattach(const rv_net_def *def, const char *dir)
{
    ipconf c;
    rv_err err = { 0 };
    if (get_ipconf(def, &c, &err) < 0 || !c.ip) {
        rv_err_clear(&err);
        return;
    }
    pid_t pid = running_dnsmasq(dir, def->name);
    if (pid > 0) {
        RV_INFO("network '%s': dnsmasq (pid %d) found running", def->name, (int)pid);
        return;
    }
    if (!rv_qemu_link_exists(def->bridge)) {
        RV_WARN("network '%s' was active but its bridge %s is gone", def->name, def->bridge);
        return;
    }
    RV_WARN("network '%s': its dnsmasq is gone; starting it again", def->name);
    netop *op = op_new(def, dir, STEP_RESTART_DNSMASQ, NULL, NULL);
    if (!op || run_dnsmasq(op, &err) < 0) {
        RV_WARN("network '%s': %s", def->name, err.message ? err.message : "out of memory");
        if (op)
            op_free(op);
    }
    rv_err_clear(&err);
}

void rv_qemu_netnat_cleanup(void)
{
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_NETWORK, RV_ERR_OPERATION_FAILED, "operation failed: remvirtd is stopping");
    /* (The spawner's cleanup came first: no exit is reported now.) */
    while (ops)
        op_finish(ops, &err);
    rv_err_clear(&err);
}

/* ================================================================ leases */

static char **opt_string(const char *s)
{
    if (!s || strcmp(s, "*") == 0)
        return NULL;
    char **p = malloc(sizeof(*p));
    if (p && !(*p = strdup(s))) {
        free(p);
        p = NULL;
    }
    return p;
}

int rv_qemu_netnat_leases(const rv_net_def *def, const char *dir, const char *mac,
                          bool need_results, rv_network_get_dhcp_leases_ret *ret, rv_err *err)
{
    ipconf c;
    if (get_ipconf(def, &c, err) < 0)
        return -1;
    char *path = rv_qemu_path(dir, def->name, ".leases");
    char *text = path ? read_small(path, LEASES_FILE_MAX) : NULL;
    free(path);
    ret->ret = 0;
    if (!text)
        return 0;
    size_t cap = 0;
    time_t now = time(NULL);
    int rc = 0;
    char *save = NULL;
    /* dnsmasq's lines: expiry MAC address host-name client-id ('*': none) */
    for (char *line = strtok_r(text, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save)) {
        char *f[5] = { 0 }, *fsave = NULL;
        int n = 0;
        for (char *t = strtok_r(line, " ", &fsave); t && n < 5; t = strtok_r(NULL, " ", &fsave))
            f[n++] = t;
        uint32_t addr;
        long long expiry = n >= 4 ? atoll(f[0]) : -1;
        if (n < 4 || !ipv4(f[2], &addr) || !mac_ok(f[1]) || (expiry > 0 && expiry < now))
            continue;   /* IPv6 (duid) lines, expired leases */
        if (mac && strcasecmp(mac, f[1]) != 0)
            continue;
        if (ret->ret >= RV_NETWORK_DHCP_LEASES_MAX)
            break;
        ret->ret++;
        if (!need_results)
            continue;
        if (ret->leases.leases_len == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            rv_network_dhcp_lease *v = realloc(ret->leases.leases_val, ncap * sizeof(*v));
            if (!v) {
                rc = oom(err);
                break;
            }
            ret->leases.leases_val = v;
            cap = ncap;
        }
        rv_network_dhcp_lease *l = &ret->leases.leases_val[ret->leases.leases_len++];
        memset(l, 0, sizeof(*l));
        l->iface = strdup(def->bridge);
        l->expirytime = expiry;
        l->type = 0;            /* VIR_IP_ADDR_TYPE_IPV4 */
        l->mac = opt_string(f[1]);
        l->ipaddr = strdup(f[2]);
        l->prefix = c.ip ? c.prefix : 0;
        l->hostname = opt_string(f[3]);
        l->clientid = opt_string(f[4]);
        if (!l->iface || !l->mac || !l->ipaddr || (strcmp(f[3], "*") != 0 && !l->hostname) ||
            (f[4] && strcmp(f[4], "*") != 0 && !l->clientid))
            rc = oom(err);
    }
    free(text);
    return rc;
}

/* ================================================================ live updates */

/* Whether pid has exited (gone, or a zombie: its sockets closed; an
 * exiting process loses its command line before its files). */
static bool exited(pid_t pid)
{
    char path[64], stat[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return true;
    stat[n] = '\0';
    const char *end = strrchr(stat, ')');
    return !end || end[1] != ' ' || end[2] == 'Z' || end[2] == 'X';
}

/* Polled while the old dnsmasq (op->old) exits; then op goes on. */
static void on_old_dnsmasq(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    netop *op = (netop *)((char *)w - offsetof(netop, wait));
    if (op->old > 1 && !exited(op->old)) {
        if (++op->waits == 300)         /* 3 s: deaf to SIGTERM */
            kill(op->old, SIGKILL);
        if (op->waits < 500)
            return;
        RV_WARN("network '%s': dnsmasq (pid %d) does not exit", op->name, (int)op->old);
    }
    ev_timer_stop(rv_qemu.loop, &op->wait);
    op->old = 0;
    rv_err err = { 0 };
    if (op->step == STEP_NFT_DELETE) {          /* the stop's answer */
        rv_err_move(&err, &op->result);
        op_finish(op, rv_err_is_set(&err) ? &err : NULL);
        rv_err_clear(&err);
        return;
    }
    if (op->step == STEP_DNSMASQ) {             /* the start's dnsmasq */
        if (run_dnsmasq(op, &err) < 0)
            undo_then_finish(op, &err);
        rv_err_clear(&err);
        return;
    }
    char *conf = rv_qemu_path(op->dir, op->name, ".dnsmasq.conf");
    bool stopped = !conf || access(conf, F_OK) != 0;   /* the network was destroyed meanwhile */
    free(conf);
    if (stopped)
        op_finish(op, NULL);
    else if (run_dnsmasq(op, &err) == 0)
        op->spawned = true;
    else {
        RV_WARN("network '%s': dnsmasq does not start again: %s", op->name, err.message);
        op_finish(op, &err);
    }
    rv_err_clear(&err);
}

int rv_qemu_netnat_update_conf(const rv_net_def *old, const rv_net_def *def, const char *dir,
                               char **out, rv_err *err)
{
    ipconf c, oc;
    *out = NULL;
    if (get_ipconf(def, &c, err) < 0 || get_ipconf(old, &oc, err) < 0)
        return -1;
    if (!c.ip)          /* no dnsmasq: the XML alone changes */
        return 0;
    char *conf = dnsmasq_conf(def, &c, dir), *old_conf = oc.ip ? dnsmasq_conf(old, &oc, dir) : NULL;
    int rc = !conf || (oc.ip && !old_conf) ? oom(err) : 0;
    if (rc == 0 && (!old_conf || strcmp(conf, old_conf) != 0)) {
        *out = conf;
        conf = NULL;
    }
    free(conf);
    free(old_conf);
    return rc;
}

void rv_qemu_netnat_restart(const rv_net_def *def, const char *dir)
{
    netop *busy = restarting(def->name);
    if (busy) {                 /* the file is written; a waiting restart reads it */
        busy->again |= busy->spawned;
        return;
    }
    pid_t pid = running_dnsmasq(dir, def->name);
    if (pid <= 0)               /* (one that died is started again by reattach) */
        return;
    netop *op = op_new(def, dir, STEP_RESTART_DNSMASQ, NULL, NULL);
    if (!op) {
        RV_WARN("network '%s': dnsmasq is not restarted: out of memory", def->name);
        return;
    }
    kill(pid, SIGTERM);
    wait_for_old(op, pid);
    RV_INFO("network '%s': dnsmasq (pid %d) restarted for its new hosts or ranges", def->name, (int)pid);
}
