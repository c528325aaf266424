/* The test driver's virtual networks, answering as libvirt 9.0's test
 * driver does (its error codes and texts; it looks networks up by name;
 * destroying an inactive network succeeds and still says STOPPED).  Like
 * the domains, they last for the daemon's life.  A handful of networks is
 * the norm, so a flat array kept in name order is enough. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_network.h"
#include "server/drivers/test/test_table.h"
#include "server/drivers/conf/network_xml.h"

RV_LOG_CATEGORY("drivers.test.network");

enum { TEST_MAX_NETWORKS = RV_NETWORK_LIST_MAX };

/* libvirt's test:///default has this network, active. */
static const char default_network_xml[] =
    "<network>"
    "<name>default</name>"
    "<uuid>dd8fe884-6c02-601e-7551-cca97df1c5df</uuid>"
    "<forward mode='nat'/>"
    "<bridge name='virbr0'/>"
    "<ip address='192.168.122.1' netmask='255.255.255.0'>"
    "<dhcp><range start='192.168.122.2' end='192.168.122.254'/></dhcp>"
    "</ip>"
    "</network>";

typedef struct test_net {
    rv_net_def *def;       /* what is live, or the only definition */
    rv_net_def *next_def;  /* persistent definition waiting for the stop */
    int active, persistent, autostart;
} test_net;

static const char *net_name(const void *n)
{
    return ((const test_net *)n)->def->name;
}

static const unsigned char *net_uuid(const void *n)
{
    return ((const test_net *)n)->def->uuid;
}

static struct {
    rv_test_table table;        /* of test_net */
    int ready;
} nets = {
    .table = { .max = TEST_MAX_NETWORKS, .kind = "network", .kinds = "networks",
               .name_of = net_name, .uuid_of = net_uuid },
};

static test_net *net_at(size_t i)
{
    return rv_test_table_at(&nets.table, i);
}

static int fail(rv_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rv_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, RV_FROM_TEST, code, fmt, ap);   /* libvirt's test driver says TEST */
    va_end(ap);
    return -1;
}

static int fail_oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static void net_free(void *item)
{
    test_net *n = item;
    rv_net_def_free(n->def);
    rv_net_def_free(n->next_def);
    free(n);
}

static void emit(const test_net *n, int event)
{
    rv_driver_network_event(&rv_test_driver, n->def->name, n->def->uuid, event, 0);
}

/* ---- the table ---- */

/* A new inactive network holding def (taken, freed on failure). */
static test_net *net_add(rv_net_def *def, rv_err *err)
{
    test_net *n = calloc(1, sizeof(*n));
    if (!n) {
        rv_net_def_free(def);
        fail_oom(err);
        return NULL;
    }
    n->def = def;
    if (rv_test_table_add(&nets.table, n, err) < 0) {
        net_free(n);
        return NULL;
    }
    return n;
}

static void net_remove(test_net *n)
{
    RV_DEBUG("network '%s' removed", n->def->name);
    rv_test_table_remove(&nets.table, n);
    net_free(n);
}

static int ready(rv_err *err)
{
    if (nets.ready)
        return 0;
    rv_net_def *def;
    if (rv_net_def_parse(default_network_xml, &def, err) < 0)
        return -1;
    test_net *n = net_add(def, err);
    if (!n)
        return -1;
    n->active = n->persistent = 1;
    nets.ready = 1;
    return 0;
}

void test_net_cleanup(void)
{
    rv_test_table_clear(&nets.table, net_free);
    nets.ready = 0;
}

/* The network a handle names: libvirt's test driver goes by the name. */
static test_net *get(const rv_nonnull_network *w, rv_err *err)
{
    if (ready(err) < 0)
        return NULL;
    test_net *n = rv_test_table_find_name(&nets.table, w->name);
    if (!n)
        fail(err, RV_ERR_NO_NETWORK, "Network not found: no network with matching name '%s'",
             w->name);
    return n;
}

static int to_wire(const test_net *n, rv_nonnull_network *w, rv_err *err)
{
    if (!(w->name = strdup(n->def->name)))
        return fail_oom(err);
    memcpy(w->uuid, n->def->uuid, 16);
    return 0;
}

static int check_flags(unsigned int flags, unsigned int known, const char *func, rv_err *err)
{
    if (flags & ~known)
        return fail(err, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                    flags & ~known, func);
    return 0;
}

/* ---- lists ---- */

static int count(int active, rv_err *err)
{
    if (ready(err) < 0)
        return -1;
    int k = 0;
    for (size_t i = 0; i < nets.table.n; i++)
        k += net_at(i)->active == active;
    return k;
}

int test_connect_num_of_networks(rv_driver_conn *c, rv_connect_num_of_networks_ret *ret,
                                 rv_err *err)
{
    (void)c;
    return (ret->num = count(1, err)) < 0 ? -1 : 0;
}

int test_connect_num_of_defined_networks(rv_driver_conn *c,
                                         rv_connect_num_of_defined_networks_ret *ret, rv_err *err)
{
    (void)c;
    return (ret->num = count(0, err)) < 0 ? -1 : 0;
}

static int list_names(int active, int maxnames, char ***names, u_int *len, rv_err *err)
{
    if (maxnames < 0 || maxnames > RV_NETWORK_LIST_MAX)
        return fail(err, RV_ERR_RPC, "maxnames %d is outside 0..%d", maxnames,
                    RV_NETWORK_LIST_MAX);
    if (ready(err) < 0)
        return -1;
    char **out = calloc((size_t)maxnames + 1, sizeof(*out));
    if (!out)
        return fail_oom(err);
    *names = out;       /* the dispatcher frees what was filled, on failure too */
    *len = 0;
    for (size_t i = 0; i < nets.table.n && *len < (u_int)maxnames; i++) {
        if (net_at(i)->active != active)
            continue;
        if (!(out[*len] = strdup(net_at(i)->def->name)))
            return fail_oom(err);
        (*len)++;
    }
    return 0;
}

int test_connect_list_networks(rv_driver_conn *c, const rv_connect_list_networks_args *args,
                               rv_connect_list_networks_ret *ret, rv_err *err)
{
    (void)c;
    return list_names(1, args->maxnames, &ret->names.names_val, &ret->names.names_len, err);
}

int test_connect_list_defined_networks(rv_driver_conn *c,
                                       const rv_connect_list_defined_networks_args *args,
                                       rv_connect_list_defined_networks_ret *ret, rv_err *err)
{
    (void)c;
    return list_names(0, args->maxnames, &ret->names.names_val, &ret->names.names_len, err);
}

/* Within each pair of filters the bits are ORed, the pairs ANDed; a pair
 * with no bit set lets everything through. */
static int matches(const test_net *n, unsigned int flags)
{
    unsigned int act = flags & (RV_LIST_NETWORKS_ACTIVE | RV_LIST_NETWORKS_INACTIVE);
    unsigned int per = flags & (RV_LIST_NETWORKS_PERSISTENT | RV_LIST_NETWORKS_TRANSIENT);
    unsigned int aut = flags & (RV_LIST_NETWORKS_AUTOSTART | RV_LIST_NETWORKS_NO_AUTOSTART);
    if (act && !(act & (n->active ? RV_LIST_NETWORKS_ACTIVE : RV_LIST_NETWORKS_INACTIVE)))
        return 0;
    if (per && !(per & (n->persistent ? RV_LIST_NETWORKS_PERSISTENT : RV_LIST_NETWORKS_TRANSIENT)))
        return 0;
    if (aut && !(aut & (n->autostart ? RV_LIST_NETWORKS_AUTOSTART : RV_LIST_NETWORKS_NO_AUTOSTART)))
        return 0;
    return 1;
}

int test_connect_list_all_networks(rv_driver_conn *c, const rv_connect_list_all_networks_args *args,
                                   rv_connect_list_all_networks_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0x3f, "testConnectListAllNetworks", err) < 0 || ready(err) < 0)
        return -1;
    u_int k = 0;
    for (size_t i = 0; i < nets.table.n; i++)
        k += (u_int)matches(net_at(i), args->flags);
    ret->ret = k;
    if (!args->need_results || k == 0)
        return 0;
    if (!(ret->nets.nets_val = calloc(k, sizeof(rv_nonnull_network))))
        return fail_oom(err);
    for (size_t i = 0; i < nets.table.n; i++) {
        if (!matches(net_at(i), args->flags))
            continue;
        if (to_wire(net_at(i), &ret->nets.nets_val[ret->nets.nets_len], err) < 0)
            return -1;
        ret->nets.nets_len++;
    }
    return 0;
}

/* ---- lookups ---- */

int test_network_lookup_by_name(rv_driver_conn *c, const rv_network_lookup_by_name_args *args,
                                rv_network_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    rv_nonnull_network w = { .name = args->name };
    test_net *n = get(&w, err);
    return n ? to_wire(n, &ret->net, err) : -1;
}

int test_network_lookup_by_uuid(rv_driver_conn *c, const rv_network_lookup_by_uuid_args *args,
                                rv_network_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c;
    if (ready(err) < 0)
        return -1;
    test_net *n = rv_test_table_find_uuid(&nets.table, (const unsigned char *)args->uuid);
    if (!n) {
        char text[RV_UUID_STRING_LEN];
        rv_uuid_format((const unsigned char *)args->uuid, text);
        return fail(err, RV_ERR_NO_NETWORK,
                    "Network not found: no network with matching uuid '%s'", text);
    }
    return to_wire(n, &ret->net, err);
}

/* ---- definition and lifecycle ---- */

/* Read XML into a definition that can be sent back whole. */
static int parse(const char *xml, rv_net_def **out, rv_err *err)
{
    if (ready(err) < 0 || rv_net_def_parse(xml, out, err) < 0)
        return -1;
    char *text = rv_net_def_format(*out);
    size_t len = text ? strlen(text) : 0;
    free(text);
    if (text && len <= RV_STRING_MAX)
        return 0;
    rv_net_def_free(*out);
    if (!text)
        return fail_oom(err);
    return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                "unsupported configuration: the network XML would be %zu bytes once written "
                "back, over the protocol's limit of %d", len, RV_STRING_MAX);
}

int test_network_define_xml(rv_driver_conn *c, const rv_network_define_xml_args *args,
                            rv_network_define_xml_ret *ret, rv_err *err)
{
    rv_net_def *def;
    test_net *n;
    (void)c;
    if (parse(args->xml, &def, err) < 0)
        return -1;
    n = rv_test_table_find_uuid(&nets.table, def->uuid);
    if (rv_test_table_check_clash(&nets.table, def->name, def->uuid, err) < 0) {
        rv_net_def_free(def);
        return -1;
    }
    if (!n) {
        if (!(n = net_add(def, err)))
            return -1;
    } else if (n->active) {         /* the new definition waits for the stop */
        rv_net_def_free(n->next_def);
        n->next_def = def;
    } else {
        rv_net_def_free(n->def);
        n->def = def;
    }
    n->persistent = 1;
    RV_DEBUG("network '%s' defined", n->def->name);
    emit(n, RV_NET_EVENT_DEFINED);
    return to_wire(n, &ret->net, err);
}

int test_network_create_xml(rv_driver_conn *c, const rv_network_create_xml_args *args,
                            rv_network_create_xml_ret *ret, rv_err *err)
{
    rv_net_def *def;
    test_net *n;
    (void)c;
    if (parse(args->xml, &def, err) < 0)
        return -1;
    n = rv_test_table_find_uuid(&nets.table, def->uuid);
    if (rv_test_table_check_clash(&nets.table, def->name, def->uuid, err) < 0 ||
        (n && n->active &&
         fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: "
              "network is already active as '%s'", n->def->name) < 0)) {
        rv_net_def_free(def);
        return -1;
    }
    if (!n) {
        if (!(n = net_add(def, err)))
            return -1;
    } else {                        /* runs def; its persistent one waits */
        n->next_def = n->def;
        n->def = def;
    }
    n->active = 1;
    RV_DEBUG("network '%s' created", n->def->name);
    emit(n, RV_NET_EVENT_STARTED);
    return to_wire(n, &ret->net, err);
}

int test_network_create(rv_driver_conn *c, const rv_network_create_args *args, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    if (n->active)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Network '%s' is already running",
                    n->def->name);
    n->active = 1;
    emit(n, RV_NET_EVENT_STARTED);
    return 0;
}

int test_network_destroy(rv_driver_conn *c, const rv_network_destroy_args *args, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    /* As libvirt's test driver: no check that it was active. */
    n->active = 0;
    emit(n, RV_NET_EVENT_STOPPED);
    if (!n->persistent) {
        net_remove(n);
        return 0;
    }
    if (n->next_def) {
        rv_net_def_free(n->def);
        n->def = n->next_def;
        n->next_def = NULL;
    }
    return 0;
}

int test_network_undefine(rv_driver_conn *c, const rv_network_undefine_args *args, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    if (n->active)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Network '%s' is still running",
                    n->def->name);
    emit(n, RV_NET_EVENT_UNDEFINED);
    net_remove(n);
    return 0;
}

/* ---- queries ---- */

int test_network_get_xml_desc(rv_driver_conn *c, const rv_network_get_xml_desc_args *args,
                              rv_network_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    test_net *n;
    /* libvirt 9.0's test driver takes no flags here, not even INACTIVE. */
    if (check_flags(args->flags, 0, "testNetworkGetXMLDesc", err) < 0 ||
        !(n = get(&args->net, err)))
        return -1;
    if (!(ret->xml = rv_net_def_format(n->def)))
        return fail_oom(err);
    return rv_string_result(0, &ret->xml, err);
}

int test_network_get_bridge_name(rv_driver_conn *c, const rv_network_get_bridge_name_args *args,
                                 rv_network_get_bridge_name_ret *ret, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    if (!n->def->bridge)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: network '%s' does not have a bridge name.", n->def->name);
    if (!(ret->name = strdup(n->def->bridge)))
        return fail_oom(err);
    return 0;
}

int test_network_get_autostart(rv_driver_conn *c, const rv_network_get_autostart_args *args,
                               rv_network_get_autostart_ret *ret, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    ret->autostart = n->autostart;
    return 0;
}

int test_network_set_autostart(rv_driver_conn *c, const rv_network_set_autostart_args *args,
                               rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    n->autostart = args->autostart != 0;
    return 0;
}

int test_network_is_active(rv_driver_conn *c, const rv_network_is_active_args *args,
                           rv_network_is_active_ret *ret, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    ret->active = n->active;
    return 0;
}

int test_network_is_persistent(rv_driver_conn *c, const rv_network_is_persistent_args *args,
                               rv_network_is_persistent_ret *ret, rv_err *err)
{
    (void)c;
    test_net *n = get(&args->net, err);
    if (!n)
        return -1;
    ret->persistent = n->persistent;
    return 0;
}
