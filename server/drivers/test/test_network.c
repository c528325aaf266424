/* The test driver's virtual networks, answering as libvirt 9.0's test
 * driver does (its error codes and texts; it looks networks up by name;
 * destroying an inactive network succeeds and still says STOPPED).  Like
 * the domains, they last for the daemon's life.  A handful of networks is
 * the norm, so a flat array kept in name order is enough. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/conf/objlist.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_network.h"
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
    rv_net_def *next_def;  /* the persistent definition, when it is not def (libvirt's newDef) */
    int active, persistent, autostart;
} test_net;

static unsigned int net_state(const void *obj)
{
    const test_net *n = obj;
    return rv_obj_state(n->active, n->persistent, n->autostart);
}

/* libvirt's test driver says TEST in its errors. */
static const rv_obj_kind net_kind = RV_NET_OBJ_KIND(RV_FROM_TEST, net_state);

static int ready(rv_err *err);

static struct {
    rv_obj_list list;           /* of test_net */
    int ready;
} nets = {
    .list = { .max = TEST_MAX_NETWORKS, .kind = &net_kind, .fill = ready },
};

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
    test_net *n = rv_obj_new(&nets.list, sizeof(*n), def, err);
    if (!n)
        rv_net_def_free(def);
    return n;
}

static void net_remove(test_net *n)
{
    RV_DEBUG("network '%s' removed", n->def->name);
    rv_obj_remove(&nets.list, n);
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
    rv_obj_clear(&nets.list, net_free);
    nets.ready = 0;
}

/* The network a handle names: libvirt's test driver goes by the name. */
static test_net *get(const rv_nonnull_network *w, rv_err *err)
{
    if (ready(err) < 0)
        return NULL;
    return rv_obj_get_name(&nets.list, w->name, err);
}

static int to_wire(const void *n, void *w, rv_err *err)
{
    rv_nonnull_network *net = w;
    return rv_obj_put_handle(&nets.list, n, &net->name, net->uuid, err);
}

/* ---- lists ---- */

RV_OBJ_ACTIVE_SLOTS(test_, networks, &nets.list, RV_NETWORK_LIST_MAX)
RV_OBJ_DEFINED_SLOTS(test_, networks, &nets.list, RV_NETWORK_LIST_MAX)

RV_OBJ_LIST_ALL_SLOT(test_, networks, &nets.list, 0x3f, "testConnectListAllNetworks", to_wire, nets)

/* ---- lookups ---- */

RV_OBJ_LOOKUP_SLOTS(test_, network, &nets.list, to_wire, net)

/* ---- definition and lifecycle ---- */

/* Read XML into a definition that can be sent back whole and may stand
 * (libvirt's name and UUID checks); *same: the network it replaces, or
 * NULL. */
static int parse(const char *xml, rv_net_def **out, test_net **same, rv_err *err)
{
    if (ready(err) < 0 || rv_net_def_parse(xml, out, err) < 0)
        return -1;
    char *text = rv_net_def_format(*out);
    size_t len = text ? strlen(text) : 0;
    free(text);
    void *obj = NULL;
    int rc = !text ? test_fail_oom(err)
             : len > RV_STRING_MAX
                 ? test_fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                             "unsupported configuration: the network XML would be %zu bytes "
                             "once written back, over the protocol's limit of %d", len,
                             RV_STRING_MAX)
                 : rv_obj_check_clash(&nets.list, (*out)->name, (*out)->uuid, &obj, err);
    if (rc < 0)
        rv_net_def_free(*out);
    *same = obj;
    return rc;
}

/* NETWORK_DEFINE_XML (and _FLAGS: VALIDATE is the reader's check). */
static int define_xml(const char *xml, rv_nonnull_network *net, rv_err *err)
{
    rv_net_def *def;
    test_net *n;
    if (parse(xml, &def, &n, err) < 0)
        return -1;
    if (!n) {
        if (!(n = net_add(def, err)))
            return -1;
    } else if (n->active) {         /* the new definition waits for the stop */
        rv_net_def_free(n->next_def);
        n->next_def = def;
    } else {
        rv_net_def_free(n->def);
        rv_net_def_free(n->next_def);
        n->def = def;
        n->next_def = NULL;
    }
    n->persistent = 1;
    RV_DEBUG("network '%s' defined", n->def->name);
    emit(n, RV_NET_EVENT_DEFINED);
    return to_wire(n, net, err);
}

int test_network_define_xml(rv_driver_conn *c, const rv_network_define_xml_args *args,
                            rv_network_define_xml_ret *ret, rv_err *err)
{
    (void)c;
    return define_xml(args->xml, &ret->net, err);
}

int test_network_define_xml_flags(rv_driver_conn *c, const rv_network_define_xml_flags_args *args,
                                  rv_network_define_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, RV_NETWORK_DEFINE_VALIDATE,
                              "testNetworkDefineXMLFlags", err) < 0)
        return -1;
    return define_xml(args->xml, &ret->net, err);
}

/* NETWORK_CREATE_XML (and _FLAGS). */
static int create_xml(const char *xml, rv_nonnull_network *net, rv_err *err)
{
    rv_net_def *def;
    test_net *n;
    if (parse(xml, &def, &n, err) < 0)
        return -1;
    if (n && n->active) {
        test_fail(err, RV_ERR_OPERATION_INVALID,
                  "Requested operation is not valid: network is already active as '%s'",
                  n->def->name);
        rv_net_def_free(def);
        return -1;
    }
    if (!n) {
        if (!(n = net_add(def, err)))
            return -1;
    } else {                        /* runs def; its persistent one waits */
        if (n->next_def)
            rv_net_def_free(n->def);
        else
            n->next_def = n->def;
        n->def = def;
    }
    n->active = 1;
    RV_DEBUG("network '%s' created", n->def->name);
    emit(n, RV_NET_EVENT_STARTED);
    return to_wire(n, net, err);
}

int test_network_create_xml(rv_driver_conn *c, const rv_network_create_xml_args *args,
                            rv_network_create_xml_ret *ret, rv_err *err)
{
    (void)c;
    return create_xml(args->xml, &ret->net, err);
}

int test_network_create_xml_flags(rv_driver_conn *c, const rv_network_create_xml_flags_args *args,
                                  rv_network_create_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, RV_NETWORK_CREATE_VALIDATE,
                              "testNetworkCreateXMLFlags", err) < 0)
        return -1;
    return create_xml(args->xml, &ret->net, err);
}

/* The network a handle names, refused while it runs ("Network '%s' is
 * <running>"). */
static test_net *get_stopped(const rv_nonnull_network *w, const char *running, rv_err *err)
{
    test_net *n = get(w, err);
    if (n && n->active) {
        test_fail(err, RV_ERR_OPERATION_INVALID,
                  "Requested operation is not valid: Network '%s' is %s", n->def->name, running);
        return NULL;
    }
    return n;
}

int test_network_create(rv_driver_conn *c, const rv_network_create_args *args, rv_err *err)
{
    (void)c;
    test_net *n = get_stopped(&args->net, "already running", err);
    if (!n)
        return -1;
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
    /* As libvirt's test driver: def (what ran) stays what it shows; a
     * persistent definition given meanwhile (next_def) waits on. */
    if (!n->persistent)
        net_remove(n);
    return 0;
}

int test_network_undefine(rv_driver_conn *c, const rv_network_undefine_args *args, rv_err *err)
{
    (void)c;
    test_net *n = get_stopped(&args->net, "still running", err);
    if (!n)
        return -1;
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
    if (test_check_flags(args->flags, 0, "testNetworkGetXMLDesc", err) < 0 ||
        !(n = get(&args->net, err)))
        return -1;
    if (!(ret->xml = rv_net_def_format(n->def)))
        return test_fail_oom(err);
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
        return test_fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: network '%s' does not have a bridge name.", n->def->name);
    if (!(ret->name = strdup(n->def->bridge)))
        return test_fail_oom(err);
    return 0;
}

RV_OBJ_STATE_SLOTS(test_, network, &nets.list, net)

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


/* NETWORK_UPDATE, as libvirt 9.0's test driver does it (found side by
 * side): the live part updates def; the persistent part of an active
 * network updates next_def (made from def), which shows nowhere while it
 * runs nor after its destroy; that of an inactive one is next_def (if
 * one waits, else def) updated, which becomes def while next_def stays
 * as it was (so each such update starts again from next_def, as in
 * libvirt).  Both are computed before either changes. */
int test_network_update(rv_driver_conn *c, const rv_network_update_args *args, rv_err *err)
{
    (void)c;
    unsigned int flags;
    test_net *n = get(&args->net, err);
    if (!n || rv_net_update_flags(args->flags, n->active, n->persistent, "testNetworkUpdate",
                                  RV_FROM_TEST, &flags, err) < 0)
        return -1;
    bool live = flags & RV_NETWORK_UPDATE_AFFECT_LIVE, config = flags & RV_NETWORK_UPDATE_AFFECT_CONFIG;
    rv_net_def *new_live = NULL, *new_config = NULL;
    if (live && !(new_live = rv_net_def_updated(n->def, args->command, args->section,
                                                args->parentIndex, args->xml, err)))
        return -1;
    if (config && !(new_config = rv_net_def_updated(n->next_def ? n->next_def : n->def,
                                                    args->command, args->section,
                                                    args->parentIndex, args->xml, err))) {
        rv_net_def_free(new_live);
        return -1;
    }
    if (!n->active) {                   /* config alone; next_def stays as it is */
        rv_net_def_free(n->def);
        n->def = new_config;
        return 0;
    }
    if (new_config) {
        rv_net_def_free(n->next_def);
        n->next_def = new_config;
    }
    if (new_live) {
        rv_net_def_free(n->def);
        n->def = new_live;
    }
    return 0;
}
