/* NETWORK_UPDATE on a network definition (network_xml.h), for both
 * drivers: one element of one section added, replaced or removed, with
 * libvirt 9.0's matching rules and error texts (found by running the same
 * `virsh net-update` commands against libvirtd side by side). */
#include "server/drivers/conf/network_xml.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/remvirt-values.gen.h"
#include "server/drivers/conf/xml_read.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NETWORK, (code), __VA_ARGS__)
#define invalid(err, ...) fail((err), RV_ERR_OPERATION_INVALID, "Requested operation is not valid: " __VA_ARGS__)
#define unsupported(err, ...) fail((err), RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: " __VA_ARGS__)

enum { CMD_MODIFY = 1, CMD_DELETE = 2, CMD_ADD_LAST = 3, CMD_ADD_FIRST = 4 };

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static bool is_add(unsigned int command)
{
    return command == CMD_ADD_LAST || command == CMD_ADD_FIRST;
}

static bool ipv4_of(const char *text, uint32_t *out)
{
    struct in_addr in;
    if (!text || inet_pton(AF_INET, text, &in) != 1)
        return false;
    *out = ntohl(in.s_addr);
    return true;
}

/* Both absent, or both the same IPv4 address (else the same text). */
static bool same_ip(const char *a, const char *b)
{
    uint32_t x, y;
    if (!a || !b)
        return false;
    if (ipv4_of(a, &x) && ipv4_of(b, &y))
        return x == y;
    return strcmp(a, b) == 0;
}

static bool same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool same_mac(const char *a, const char *b)
{
    return a && b && strcasecmp(a, b) == 0;
}

/* libvirt prints a missing value as glibc prints NULL. */
static const char *or_null(const char *s)
{
    return s ? s : "(null)";
}

/* ---- the tree ---- */

static int insert_kid(rv_xml_node *parent, size_t at, rv_xml_node *kid)
{
    rv_xml_node **kids = realloc(parent->kids, (parent->nkids + 1) * sizeof(*kids));
    if (!kids)
        return -1;
    memmove(kids + at + 1, kids + at, (parent->nkids - at) * sizeof(*kids));
    kids[at] = kid;
    parent->kids = kids;
    parent->nkids++;
    parent->kids_cap = parent->nkids;
    return 0;
}

static void remove_kid(rv_xml_node *parent, size_t at)
{
    rv_xml_free(parent->kids[at]);
    memmove(parent->kids + at, parent->kids + at + 1, (parent->nkids - at - 1) * sizeof(*parent->kids));
    parent->nkids--;
}

static bool named(const rv_xml_node *k, const char *name)
{
    return k && k->name && strcmp(k->name, name) == 0;
}

/* parent's first child element called name, made (empty, after the
 * others) when missing; NULL: no memory. */
static rv_xml_node *child_made(rv_xml_node *parent, const char *name)
{
    rv_xml_node *k = rv_xml_child(parent, name);
    if (k)
        return k;
    if (!(k = calloc(1, sizeof(*k))) || !(k->name = strdup(name)) ||
        insert_kid(parent, parent->nkids, k) < 0) {
        rv_xml_free(k);
        return NULL;
    }
    return k;
}

/* Where a new element of kind rank goes among parent's children whose
 * ranks are given by rank_of (-1: not one of them): before the first of
 * its rank (first) or after the last of its rank or below. */
static size_t insert_at(const rv_xml_node *parent, int rank, bool first,
                        int (*rank_of)(const rv_xml_node *k))
{
    size_t at = 0;
    for (size_t i = 0; i < parent->nkids; i++) {
        int r = rank_of(parent->kids[i]);
        if (r < 0)
            continue;
        if (first && r == rank)
            return i;
        if (r <= rank && !(first && r == rank))
            at = i + 1;
    }
    return at;
}

/* Keep only the attributes named in order (NULL-ended), in that order:
 * as libvirt writes back what it parsed. */
static void order_attrs(rv_xml_node *el, const char *const *order)
{
    size_t n = 0;
    rv_xml_attr *attrs = el->attrs;
    for (size_t o = 0; order[o]; o++)
        for (size_t i = n; i < el->nattrs; i++)
            if (strcmp(attrs[i].name, order[o]) == 0) {
                rv_xml_attr t = attrs[n];
                attrs[n++] = attrs[i];
                attrs[i] = t;
                break;
            }
    for (size_t i = n; i < el->nattrs; i++) {
        free(attrs[i].name);
        free(attrs[i].value);
    }
    el->nattrs = n;
}

/* ---- the sections ---- */

typedef struct update {
    rv_net_def *def;
    unsigned int command;
    int parent_index;
    rv_xml_node *el;            /* the element given, taken when added */
    rv_err *err;
} update;

/* The <ip> the DHCP sections work on. */
static rv_xml_node *dhcp_ip(update *u)
{
    size_t seen = 0;
    for (size_t i = 0; i < u->def->root->nkids; i++) {
        rv_xml_node *k = u->def->root->kids[i];
        if (!named(k, "ip"))
            continue;
        const char *family = rv_xml_attr_get(k, "family");
        if (u->parent_index < 0 ? !family || strcmp(family, "ipv4") == 0
                                : seen++ == (size_t)u->parent_index)
            return k;
    }
    if (u->parent_index < 0)
        invalid(u->err, "couldn't update dhcp host entry - no <ip> element found in network '%s'",
                u->def->name);
    else
        invalid(u->err, "couldn't update dhcp host entry - no <ip> element found at index %d in "
                "network '%s'", u->parent_index, u->def->name);
    return NULL;
}

static int dhcp_rank(const rv_xml_node *k)
{
    return named(k, "range") ? 0 : named(k, "host") ? 1 : named(k, "bootp") ? 2 : -1;
}

static int dns_rank(const rv_xml_node *k)
{
    return named(k, "forwarder") ? 0 : named(k, "txt") ? 1 : named(k, "srv") ? 2
         : named(k, "host") ? 3 : -1;
}

static int portgroup_rank(const rv_xml_node *k)
{
    return named(k, "portgroup") ? 0 : -1;
}

static int interface_rank(const rv_xml_node *k)
{
    return named(k, "interface") ? 0 : -1;
}

/* u->el added to parent (rank among the ranked children), or parent's
 * child at replaces replaced by it. */
static int put_el(update *u, rv_xml_node *parent, int rank, int (*rank_of)(const rv_xml_node *k),
                  size_t replaces)
{
    if (u->command == CMD_MODIFY) {
        rv_xml_free(parent->kids[replaces]);
        parent->kids[replaces] = u->el;
    } else if (insert_kid(parent, insert_at(parent, rank, u->command == CMD_ADD_FIRST, rank_of),
                          u->el) < 0) {
        return oom(u->err);
    }
    u->el = NULL;
    return 0;
}

static int dhcp_host(update *u)
{
    static const char *const order[] = { "mac", "name", "ip", NULL };
    rv_xml_node *ip = dhcp_ip(u);
    if (!ip)
        return -1;
    const char *mac = rv_xml_attr_get(u->el, "mac"), *name = rv_xml_attr_get(u->el, "name");
    const char *addr = rv_xml_attr_get(u->el, "ip");
    unsigned int b[6];
    char extra;
    if (mac && (strlen(mac) != 17 || sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2],
                                             &b[3], &b[4], &b[5], &extra) != 6))
        return fail(u->err, RV_ERR_XML_ERROR, "XML error: Cannot parse MAC address '%s' in network '%s'",
                    mac, u->def->name);
    if (!mac && !name)
        return fail(u->err, RV_ERR_XML_ERROR, "XML error: Static host definition in IPv4 network "
                    "'%s' must have mac or name attribute", u->def->name);
    uint32_t a;
    if (u->command != CMD_DELETE && !ipv4_of(addr, &a))
        return fail(u->err, RV_ERR_XML_ERROR, "XML error: Missing IP address in static host "
                    "definition for network '%s'", u->def->name);
    order_attrs(u->el, order);
    rv_xml_node *dhcp = rv_xml_child(ip, "dhcp");
    size_t found = SIZE_MAX;
    for (size_t i = 0; dhcp && i < dhcp->nkids && found == SIZE_MAX; i++) {
        const rv_xml_node *h = dhcp->kids[i];
        if (!named(h, "host"))
            continue;
        const char *hm = rv_xml_attr_get(h, "mac"), *hn = rv_xml_attr_get(h, "name");
        const char *hi = rv_xml_attr_get(h, "ip");
        bool any = same_mac(mac, hm) || same_str(name, hn) || same_ip(addr, hi);
        bool all = (!mac || same_mac(mac, hm)) && (!name || same_str(name, hn)) &&
                   (!addr || same_ip(addr, hi));
        if (u->command == CMD_DELETE ? all : any)
            found = i;
    }
    if (is_add(u->command)) {
        if (found != SIZE_MAX)
            return invalid(u->err, "there is an existing dhcp host entry in network '%s' that "
                           "matches \"<host mac='%s' name='%s' ip='%s'/>\"", u->def->name,
                           or_null(mac), or_null(name), or_null(addr));
        if (!(dhcp = child_made(ip, "dhcp")))
            return oom(u->err);
        return put_el(u, dhcp, 1, dhcp_rank, 0);
    }
    if (found == SIZE_MAX && u->command == CMD_MODIFY)
        return invalid(u->err, "couldn't locate an existing dhcp host entry with \"mac='%s'\" "
                       "\"name='%s'\" \"ip='%s'\" in network '%s'", or_null(mac), or_null(name),
                       or_null(addr), u->def->name);
    if (found == SIZE_MAX)
        return invalid(u->err, "couldn't locate a matching dhcp host entry in network '%s'",
                       u->def->name);
    if (u->command == CMD_DELETE) {
        remove_kid(dhcp, found);
        return 0;
    }
    return put_el(u, dhcp, 1, dhcp_rank, found);
}

/* The subnet of an <ip> (its address and prefix), false when unreadable. */
static bool ip_subnet(const rv_xml_node *ip, uint32_t *address, unsigned int *prefix)
{
    const char *p = rv_xml_attr_get(ip, "prefix"), *m = rv_xml_attr_get(ip, "netmask");
    uint32_t mask;
    if (!ipv4_of(rv_xml_attr_get(ip, "address"), address))
        return false;
    if (p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        *prefix = (unsigned int)v;
        return *p && !*end && v <= 32;
    }
    if (!ipv4_of(m, &mask))
        return false;
    for (*prefix = 0; *prefix < 32 && (mask & (1u << (31 - *prefix))); (*prefix)++)
        ;
    return true;
}

static int dhcp_range(update *u)
{
    static const char *const order[] = { "start", "end", NULL };
    rv_xml_node *ip = dhcp_ip(u);
    if (!ip)
        return -1;
    if (u->command == CMD_MODIFY)
        return unsupported(u->err, "dhcp ranges cannot be modified, only added or deleted");
    const char *start = rv_xml_attr_get(u->el, "start"), *end = rv_xml_attr_get(u->el, "end");
    uint32_t s, e, net;
    unsigned int prefix;
    if (!ipv4_of(start, &s) || !ipv4_of(end, &e))
        return fail(u->err, RV_ERR_XML_ERROR, "XML error: Invalid dhcp range '%s' to '%s' in network '%s'",
                    or_null(start), or_null(end), u->def->name);
    if (s > e)
        return rv_err_fail(u->err, RV_FROM_NONE, RV_ERR_INTERNAL_ERROR,
                           "internal error: range %s - %s is reversed ", start, end);
    if (ip_subnet(ip, &net, &prefix)) {
        uint32_t mask = prefix ? ~0u << (32 - prefix) : 0;
        if ((s & mask) != (net & mask) || (e & mask) != (net & mask))
            return rv_err_fail(u->err, RV_FROM_NONE, RV_ERR_INTERNAL_ERROR,
                        "internal error: range %s - %s is not entirely within network %s/%u",
                        start, end, rv_xml_attr_get(ip, "address"), prefix);
    }
    order_attrs(u->el, order);
    rv_xml_node *dhcp = rv_xml_child(ip, "dhcp");
    size_t found = SIZE_MAX;
    for (size_t i = 0; dhcp && i < dhcp->nkids && found == SIZE_MAX; i++) {
        const rv_xml_node *r = dhcp->kids[i];
        if (named(r, "range") && same_ip(start, rv_xml_attr_get(r, "start")) &&
            same_ip(end, rv_xml_attr_get(r, "end")))
            found = i;
    }
    if (is_add(u->command)) {
        if (found != SIZE_MAX)
            return invalid(u->err, "there is an existing dhcp range entry in network '%s' that "
                           "matches \"<range start='%s' end='%s'/>\"", u->def->name, start, end);
        if (!(dhcp = child_made(ip, "dhcp")))
            return oom(u->err);
        return put_el(u, dhcp, 0, dhcp_rank, 0);
    }
    if (found == SIZE_MAX)
        return invalid(u->err, "couldn't locate a matching dhcp range entry in network '%s'",
                       u->def->name);
    remove_kid(dhcp, found);
    return 0;
}

/* The end of a DNS record's update once count records matched (the
 * last at found): added (rank among <dns>'s children), or the one found
 * deleted; else libvirt's error, "<text> in network NAME" (many: NULL
 * when one record at most can match). */
static int dns_record_done(update *u, size_t count, size_t found, int rank, const char *dup,
                           const char *many, const char *none)
{
    rv_xml_node *dns = rv_xml_child(u->def->root, "dns");
    if (is_add(u->command)) {
        if (count)
            return invalid(u->err, "%s in network %s", dup, u->def->name);
        if (!(dns = child_made(u->def->root, "dns")))
            return oom(u->err);
        return put_el(u, dns, rank, dns_rank, 0);
    }
    if (count > 1 && many)
        return invalid(u->err, "%s in network %s", many, u->def->name);
    if (!count)
        return invalid(u->err, "%s in network %s", none, u->def->name);
    remove_kid(dns, found);
    return 0;
}

/* The hostnames of a DNS <host>. */
static bool dns_host_has_name(const rv_xml_node *h, const char *name)
{
    for (size_t i = 0; i < h->nkids; i++) {
        if (!named(h->kids[i], "hostname"))
            continue;
        char *text = rv_xml_string(h->kids[i]);
        bool same = text && strcmp(text, name) == 0;
        free(text);
        if (same)
            return true;
    }
    return false;
}

static int dns_host(update *u)
{
    if (u->command == CMD_MODIFY)
        return unsupported(u->err, "DNS HOST records cannot be modified, only added or deleted");
    const char *addr = rv_xml_attr_get(u->el, "ip");
    size_t names = 0;
    for (size_t i = 0; i < u->el->nkids; i++) {
        char *text = named(u->el->kids[i], "hostname") ? rv_xml_string(u->el->kids[i]) : NULL;
        names += text && *text;
        free(text);
    }
    uint32_t a;
    if (!ipv4_of(addr, &a) && !(u->command == CMD_DELETE && !addr && names))
        return fail(u->err, RV_ERR_XML_DETAIL, "Missing IP address in network '%s' DNS HOST record",
                    u->def->name);
    if (!names && u->command != CMD_DELETE)
        return fail(u->err, RV_ERR_XML_DETAIL, "Missing hostname in network '%s' DNS HOST record",
                    u->def->name);
    rv_xml_node *dns = rv_xml_child(u->def->root, "dns");
    size_t found = SIZE_MAX, count = 0;
    for (size_t i = 0; dns && i < dns->nkids; i++) {
        const rv_xml_node *h = dns->kids[i];
        if (!named(h, "host"))
            continue;
        /* An add looks for the address alone: one name on several
         * addresses is a configuration libvirt allows. */
        bool match = same_ip(addr, rv_xml_attr_get(h, "ip"));
        for (size_t k = 0; !match && !is_add(u->command) && k < u->el->nkids; k++) {
            char *text = named(u->el->kids[k], "hostname") ? rv_xml_string(u->el->kids[k]) : NULL;
            match = text && dns_host_has_name(h, text);
            free(text);
        }
        if (match) {
            count++;
            found = i;
        }
    }
    return dns_record_done(u, count, found, 3,
                           "there is already at least one DNS HOST record with a matching field",
                           "multiple matching DNS HOST records were found",
                           "couldn't locate a matching DNS HOST record");
}

static int dns_txt(update *u)
{
    static const char *const order[] = { "name", "value", NULL };
    if (u->command == CMD_MODIFY)
        return unsupported(u->err, "DNS TXT records cannot be modified, only added or deleted");
    const char *name = rv_xml_attr_get(u->el, "name");
    if (!name || !*name)
        return fail(u->err, RV_ERR_XML_DETAIL, "missing required name attribute in DNS TXT record");
    order_attrs(u->el, order);
    rv_xml_node *dns = rv_xml_child(u->def->root, "dns");
    size_t found = SIZE_MAX;
    for (size_t i = 0; dns && i < dns->nkids && found == SIZE_MAX; i++)
        if (named(dns->kids[i], "txt") && same_str(name, rv_xml_attr_get(dns->kids[i], "name")))
            found = i;
    char *dup = NULL;
    if (asprintf(&dup, "there is already a DNS TXT record with name '%s'", name) < 0)
        return oom(u->err);
    int rc = dns_record_done(u, found != SIZE_MAX, found, 1, dup, NULL,
                             "couldn't locate a matching DNS TXT record");
    free(dup);
    return rc;
}

static int dns_srv(update *u)
{
    static const char *const order[] = { "service", "protocol", "domain", "target", "port",
                                         "priority", "weight", NULL };
    if (u->command == CMD_MODIFY)
        return unsupported(u->err, "DNS SRV records cannot be modified, only added or deleted");
    if (!rv_xml_attr_get(u->el, "service") && u->command != CMD_DELETE)
        return fail(u->err, RV_ERR_XML_DETAIL, "missing required service attribute in DNS SRV "
                    "record of network '%s'", u->def->name);
    order_attrs(u->el, order);
    rv_xml_node *dns = rv_xml_child(u->def->root, "dns");
    size_t found = SIZE_MAX, count = 0;
    for (size_t i = 0; dns && i < dns->nkids; i++) {
        const rv_xml_node *s = dns->kids[i];
        bool all = named(s, "srv");
        for (size_t a = 0; all && a < u->el->nattrs; a++)
            all = same_str(u->el->attrs[a].value, rv_xml_attr_get(s, u->el->attrs[a].name));
        if (all) {
            count++;
            found = i;
        }
    }
    return dns_record_done(u, count, found, 2,
                           "there is already at least one DNS SRV record matching all specified fields",
                           "multiple DNS SRV records matching all specified fields were found",
                           "couldn't locate a matching DNS SRV record");
}

static int portgroup(update *u)
{
    const char *name = rv_xml_attr_get(u->el, "name"), *dflt = rv_xml_attr_get(u->el, "default");
    rv_xml_node *root = u->def->root;
    if (!name)
        return fail(u->err, RV_ERR_XML_ERROR, "XML error: Missing required name attribute in "
                    "portgroup");
    size_t found = SIZE_MAX, other_default = SIZE_MAX;
    for (size_t i = 0; i < root->nkids; i++) {
        const rv_xml_node *p = root->kids[i];
        if (!named(p, "portgroup"))
            continue;
        const char *d = rv_xml_attr_get(p, "default");
        if (same_str(name, rv_xml_attr_get(p, "name")))
            found = i;
        else if (d && strcmp(d, "yes") == 0)
            other_default = i;
    }
    if (is_add(u->command) && found != SIZE_MAX)
        return invalid(u->err, "there is an existing portgroup entry in network '%s' that matches "
                       "\"<portgroup name='%s'>\"", u->def->name, name);
    if (!is_add(u->command) && found == SIZE_MAX)
        return invalid(u->err, "couldn't find a portgroup entry in network '%s' matching "
                       "<portgroup name='%s'>", u->def->name, name);
    if (u->command != CMD_DELETE && dflt && strcmp(dflt, "yes") == 0 && other_default != SIZE_MAX)
        return invalid(u->err, "a different portgroup entry in network '%s' is already set as the "
                       "default. Only one default is allowed.", u->def->name);
    if (u->command == CMD_DELETE) {
        remove_kid(root, found);
        return 0;
    }
    return put_el(u, root, 0, portgroup_rank, found);
}

/* libvirt shows <forward dev> as the first <interface>'s, first. */
static int forward_dev_first(rv_xml_node *fw, rv_err *err)
{
    const rv_xml_node *first = rv_xml_child(fw, "interface");
    const char *dev = first ? rv_xml_attr_get(first, "dev") : NULL;
    size_t at = 0;
    while (at < fw->nattrs && strcmp(fw->attrs[at].name, "dev") != 0)
        at++;
    if (at < fw->nattrs) {
        free(fw->attrs[at].name);
        free(fw->attrs[at].value);
        memmove(fw->attrs + at, fw->attrs + at + 1, (fw->nattrs - at - 1) * sizeof(*fw->attrs));
        fw->nattrs--;
    }
    if (!dev)
        return 0;
    rv_xml_attr *attrs = realloc(fw->attrs, (fw->nattrs + 1) * sizeof(*attrs));
    char *name = strdup("dev"), *value = strdup(dev);
    if (!attrs || !name || !value) {
        if (attrs)
            fw->attrs = attrs;
        free(name);
        free(value);
        return oom(err);
    }
    memmove(attrs + 1, attrs, fw->nattrs * sizeof(*attrs));
    attrs[0] = (rv_xml_attr){ name, value };
    fw->attrs = attrs;
    fw->nattrs++;
    return 0;
}

static int forward_interface(update *u)
{
    static const char *const order[] = { "dev", NULL };
    rv_xml_node *fw = rv_xml_child(u->def->root, "forward");
    const char *dev = rv_xml_attr_get(u->el, "dev");
    if (!fw)
        return invalid(u->err, "can't add an <interface> element unless network '%s' has a "
                       "<forward> element", u->def->name);
    if (!dev)
        return fail(u->err, RV_ERR_XML_ERROR, "XML error: Missing required dev attribute in "
                    "network '%s' forward interface element", u->def->name);
    if (u->command == CMD_MODIFY)
        return unsupported(u->err, "forward interface entries cannot be modified, only added or "
                           "deleted");
    order_attrs(u->el, order);
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < fw->nkids && found == SIZE_MAX; i++)
        if (named(fw->kids[i], "interface") && same_str(dev, rv_xml_attr_get(fw->kids[i], "dev")))
            found = i;
    if (is_add(u->command)) {
        if (found != SIZE_MAX)
            return invalid(u->err, "there is an existing interface entry in network '%s' that "
                           "matches \"<interface dev='%s'>\"", u->def->name, dev);
        if (put_el(u, fw, 0, interface_rank, 0) < 0)
            return -1;
    } else if (found == SIZE_MAX) {
        return invalid(u->err, "couldn't find an interface entry in network '%s' matching "
                       "<interface dev='%s'>", u->def->name, dev);
    } else {
        remove_kid(fw, found);
    }
    return forward_dev_first(fw, u->err);
}

static const struct {
    const char *element;        /* what the XML must be */
    const char *no_support;     /* "can't update '%s' section": not updatable */
    int (*apply)(update *u);
} sections[] = {
    [RV_NETWORK_SECTION_BRIDGE] = { "bridge", "bridge", NULL },
    [RV_NETWORK_SECTION_DOMAIN] = { "domain", "domain", NULL },
    [RV_NETWORK_SECTION_IP] = { "ip", "ip", NULL },
    [RV_NETWORK_SECTION_IP_DHCP_HOST] = { "host", NULL, dhcp_host },
    [RV_NETWORK_SECTION_IP_DHCP_RANGE] = { "range", NULL, dhcp_range },
    [RV_NETWORK_SECTION_FORWARD] = { "forward", "forward", NULL },
    [RV_NETWORK_SECTION_FORWARD_INTERFACE] = { "interface", NULL, forward_interface },
    [RV_NETWORK_SECTION_FORWARD_PF] = { "pf", "forward pf", NULL },
    [RV_NETWORK_SECTION_PORTGROUP] = { "portgroup", NULL, portgroup },
    [RV_NETWORK_SECTION_DNS_HOST] = { "host", NULL, dns_host },
    [RV_NETWORK_SECTION_DNS_TXT] = { "txt", NULL, dns_txt },
    [RV_NETWORK_SECTION_DNS_SRV] = { "srv", NULL, dns_srv },
};

int rv_net_def_update_check(unsigned int command, unsigned int section, rv_err *err)
{
    if (command < CMD_MODIFY || command > CMD_ADD_FIRST)
        return unsupported(err, "unrecognized network update command code %u", command);
    if (section >= sizeof(sections) / sizeof(sections[0]) || !sections[section].element)
        return unsupported(err, "can't update unrecognized section of network");
    return 0;
}

/* Whether def still reads back within the limit a definition is read
 * with (at define, and at start-up from its file): an add past it would
 * be written, and then lost at the next restart. */
static bool fits(const rv_net_def *def, rv_err *err)
{
    char *text = rv_net_def_format(def);
    size_t len = text ? strlen(text) : 0;
    free(text);
    if (!text)
        oom(err);
    else if (len > RV_NETWORK_XML_MAX)
        fail(err, RV_ERR_XML_ERROR, "XML error: network '%s' would be %zu bytes after this "
             "update, over the limit of %d for a network definition", def->name, len,
             RV_NETWORK_XML_MAX);
    return text && len <= RV_NETWORK_XML_MAX;
}

rv_net_def *rv_net_def_updated(const rv_net_def *def, unsigned int command, unsigned int section,
                               int parent_index, const char *xml, rv_err *err)
{
    if (rv_net_def_update_check(command, section, err) < 0)
        return NULL;
    if (sections[section].no_support) {
        unsupported(err, "can't update '%s' section of network '%s'", sections[section].no_support,
                    def->name);
        return NULL;
    }
    xmlDoc *doc = NULL;
    xmlNode *top = rv_lx_read(xml, RV_NETWORK_XML_MAX, NULL, "=network_update_xml", RV_FROM_NETWORK,
                              &doc, err);
    if (!top)
        return NULL;
    update u = { .command = command, .parent_index = parent_index, .err = err,
                 .el = rv_xml_tree_copy(top) };
    rv_lx_free(doc);
    char *text = rv_net_def_format(def);
    if (!u.el || !text || rv_net_def_parse(text, &u.def, err) < 0) {
        if (!rv_err_is_set(err))
            oom(err);
    } else if (strcmp(u.el->name, sections[section].element) != 0) {
        fail(err, RV_ERR_XML_ERROR, "XML error: unexpected element <%s>, expecting <%s>, while "
             "updating network '%s'", u.el->name, sections[section].element, def->name);
    } else if (sections[section].apply(&u) == 0 && fits(u.def, err)) {
        free(text);
        rv_xml_free(u.el);      /* a deleted element's, not taken */
        return u.def;
    }
    free(text);
    rv_xml_free(u.el);
    rv_net_def_free(u.def);
    return NULL;
}

int rv_net_update_flags(unsigned int flags, bool active, bool persistent, const char *api,
                        int from, unsigned int *out, rv_err *err)
{
    unsigned int live = RV_NETWORK_UPDATE_AFFECT_LIVE, config = RV_NETWORK_UPDATE_AFFECT_CONFIG;
    if (flags & ~(live | config))
        return rv_err_fail(err, from, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                           flags & ~(live | config), api);
    if (!(flags & (live | config)))
        flags = active ? live : config;
    if ((flags & live) && !active)
        return rv_err_fail(err, RV_FROM_NETWORK, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: network is not running");
    if ((flags & config) && !persistent)
        return rv_err_fail(err, RV_FROM_NETWORK, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: cannot change persistent config of a "
                           "transient network");
    *out = flags;
    return 0;
}
