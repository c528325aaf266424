/* The QEMU driver's virtual networks.  Forward mode 'bridge' names a
 * bridge the host already has: starting one checks that it is there.
 * NAT (<forward mode='nat'/>) and isolated (no <forward>) networks get a
 * bridge of remvirtd's own (virbrN unless named), dnsmasq and an nftables
 * table (qemu_netnat.c); their start and destroy answer later, once
 * dnsmasq and nft have.  A guest's <interface type='network'> gets a tap
 * on the network's bridge (qemu_link.c as root, else QEMU's bridge
 * helper).  Routed, open and other modes are refused, naming the mode
 * (VIR_ERR_OPERATION_UNSUPPORTED).  Files, as for storage pools:
 *   config_dir/networks/<name>.xml, config_dir/networks/autostart/<name>.xml,
 *   run_dir/networks/<name>.xml (the network is active), and the
 *   dnsmasq and nft files next to it (qemu_netnat.h). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_link.h"
#include "server/drivers/qemu/qemu_netnat.h"
#include "server/drivers/qemu/qemu_network.h"
#include "server/drivers/conf/network_xml.h"
#include "server/drivers/conf/objlist.h"

RV_LOG_CATEGORY("drivers.qemu.network");

enum { MAX_NETS = 256 };

typedef struct qnet {
    rv_net_def *def;
    /* What it runs with while active or starting: def, or the one def
     * replaced (a redefinition takes effect at the next start). */
    rv_net_def *live;
    bool active, persistent, autostart;
    /* A start or destroy of a NAT or isolated network under way, and
     * the call that waits for it (NULL: an autostart). */
    bool busy, reply_net;
    rv_deferred *reply;
} qnet;

static unsigned int net_state(const void *obj)
{
    const qnet *n = obj;
    return rv_obj_state(n->active, n->persistent, n->autostart);
}

static const rv_obj_kind net_kind = RV_NET_OBJ_KIND(RV_FROM_NETWORK, net_state);

static struct {
    rv_obj_list list;           /* of qnet */
} st = { .list = { .max = MAX_NETS, .kind = &net_kind } };

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NETWORK, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static void emit(const qnet *n, int event)
{
    rv_driver_network_event(&rv_qemu_driver, n->def->name, n->def->uuid, event, 0);
}

/* ---- the table ---- */

static qnet *find(const char *name)
{
    return rv_obj_find_name(&st.list, name);
}

static qnet *add(rv_net_def *def, rv_err *err)
{
    return rv_obj_new(&st.list, sizeof(qnet), def, err);
}

/* ---- start-up: the definition files (rv_qemu_family) ---- */

static void free_def(void *def)
{
    rv_net_def_free(def);
}

static void *parse_file(const char *xml, rv_err *err)
{
    rv_net_def *def = NULL;
    return rv_net_def_parse(xml, &def, err) < 0 ? NULL : def;
}

static void *load_new(void *def, bool persistent, rv_err *err)
{
    qnet *n = add(def, err);
    if (n) {
        n->persistent = persistent;
        n->active = !persistent;
        n->live = n->active ? def : NULL;
    }
    return n;
}

static void load_ran(void *obj, void *def)
{
    qnet *n = obj;
    n->active = true;   /* the run dir's copy: what runs */
    n->live = def;
}

static rv_qemu_family fam = {
    .files = { .what = "network", .max = RV_NETWORK_XML_MAX, .free = free_def },
    .sub = "networks", .from = RV_FROM_NETWORK, .list = &st.list, .parse = parse_file,
    .add = load_new, .ran = load_ran,
};

static const rv_net_def *running(const qnet *n)
{
    return n->live ? n->live : n->def;
}

static void live_clear(qnet *n)
{
    if (n->live != n->def)
        rv_net_def_free(n->live);
    n->live = NULL;
}

static void drop(qnet *n)
{
    rv_obj_remove(&st.list, n);
    live_clear(n);
    rv_net_def_free(n->def);
    free(n);
}

static qnet *get(const rv_nonnull_network *w, rv_err *err)
{
    return rv_obj_get_name(&st.list, w->name, err);
}

static int to_wire(const void *n, void *w, rv_err *err)
{
    rv_nonnull_network *net = w;
    return rv_obj_put_handle(&st.list, n, &net->name, net->uuid, err);
}

/* The run file: the network is active. */
static int save_run_file(const rv_net_def *def, rv_err *err)
{
    return rv_qemu_family_save_run(&fam, def->name, rv_net_def_format(def), err);
}

/* ---- what a network may be here ---- */

/* Letters, digits, '-', '_', '.': what dnsmasq's and nft's files may
 * hold unquoted. */
static bool link_name_ok(const char *name)
{
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("-_.", *c)))
            return false;
    return *name != '\0';
}

/* A NAT or isolated network's bridge: its own name, used by no other
 * network; without one the first virbrN that nothing uses. */
static int own_bridge(rv_net_def *def, rv_err *err)
{
    const qnet *same = find(def->name);     /* a redefinition keeps its bridge */
    if (!def->bridge && same && same->def->bridge && rv_qemu_netnat_managed(same->def) &&
        rv_net_def_set_bridge(def, same->def->bridge, err) < 0)
        return -1;
    for (int i = 0; !def->bridge && i < 256; i++) {
        char name[16];
        snprintf(name, sizeof(name), "virbr%d", i);
        bool used = rv_qemu_link_exists(name);
        for (size_t k = 0; k < st.list.n && !used; k++) {
            const qnet *n = rv_obj_at(&st.list, k);
            used = strcmp(n->def->name, def->name) != 0 && n->def->bridge &&
                   strcmp(n->def->bridge, name) == 0;
        }
        if (!used && rv_net_def_set_bridge(def, name, err) < 0)
            return -1;
    }
    if (!def->bridge)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: no free bridge name virbr0..virbr255");
    /* Its MAC address, as libvirtd gives one (the same after a
     * redefinition), so that the bridge's address does not follow
     * whichever port was added first. */
    if (!rv_net_def_mac(def)) {
        const char *kept = same ? rv_net_def_mac(same->def) : NULL;
        unsigned char m[6] = { 0x52, 0x54, 0x00 };
        char text[18];
        if (!kept && getrandom(m + 3, 3, 0) != 3)
            return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: cannot generate a MAC address");
        snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
        if (rv_net_def_set_mac(def, kept ? kept : text, err) < 0)
            return -1;
    }
    for (size_t k = 0; k < st.list.n; k++) {
        const qnet *n = rv_obj_at(&st.list, k);
        if (strcmp(n->def->name, def->name) != 0 && n->def->bridge &&
            strcmp(n->def->bridge, def->bridge) == 0)
            return fail(err, RV_ERR_OPERATION_INVALID,
                        "Requested operation is not valid: bridge name '%s' is already in use by "
                        "network '%s'", def->bridge, n->def->name);
    }
    return 0;
}

static int parse(const char *xml, rv_net_def **out, rv_err *err)
{
    if (rv_net_def_parse(xml, out, err) < 0)
        return -1;
    rv_net_def *def = *out;
    const char *mode = rv_net_def_forward_mode(def);
    int rc = 0;
    bool bad_name = !def->name[0] || def->name[0] == '.' || strchr(def->name, '/');
    for (const char *c = def->name; *c; c++)
        bad_name |= (unsigned char)*c < 0x20;
    if (bad_name)       /* it becomes a file name */
        rc = fail(err, RV_ERR_XML_ERROR, "XML error: invalid network name");
    else if (strcmp(mode, "bridge") != 0 && !rv_qemu_netnat_managed(def))
        rc = fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                  "Operation not supported: network forward mode '%s' is not supported by "
                  "remvirtd's QEMU driver (only 'nat', isolated without <forward>, and "
                  "'bridge' naming an existing host bridge)", mode);
    else if (strcmp(mode, "bridge") == 0 && (!def->bridge || !*def->bridge))
        rc = fail(err, RV_ERR_XML_ERROR,
                  "XML error: network '%s' has forward mode 'bridge' but no <bridge name='...'/>",
                  def->name);
    else if (def->bridge && (strlen(def->bridge) > RV_LINK_NAME_MAX || !link_name_ok(def->bridge)))
        rc = fail(err, RV_ERR_XML_ERROR, "XML error: invalid bridge name '%s'", def->bridge);
    else if (rv_qemu_netnat_managed(def) &&
             (rv_qemu_netnat_check(def, err) < 0 || own_bridge(def, err) < 0))
        rc = -1;
    if (rc == 0)
        rc = rv_obj_check_clash(&st.list, def->name, def->uuid, NULL, err);
    if (rc < 0) {
        rv_net_def_free(def);
        *out = NULL;
    }
    return rc;
}

static bool bridge_exists(const char *bridge)
{
    char path[128];
    snprintf(path, sizeof(path), "/sys/class/net/%s/bridge", bridge);
    return access(path, F_OK) == 0;
}

static void started(qnet *n)
{
    n->active = true;
    RV_INFO("network '%s' started (bridge %s)", n->def->name, n->def->bridge);
    emit(n, RV_NET_EVENT_STARTED);
}

/* A start or destroy under way (a NAT or isolated network) is over:
 * answer the call that waits.  A transient network that does not run
 * goes. */
static void finish(qnet *n, const rv_err *why)
{
    rv_deferred *reply = n->reply;
    bool reply_net = n->reply_net;
    rv_err err = { 0 };
    n->busy = n->reply_net = false;
    n->reply = NULL;
    if (reply && !why && reply_net) {
        /* (CREATE_XML's result or CREATE_XML_FLAGS': the network first.) */
        rv_nonnull_network *net = rv_deferred_ret(reply);
        to_wire(n, net, &err);
    }
    if (reply)
        rv_deferred_finish(reply, why ? why : rv_err_is_set(&err) ? &err : NULL);
    else if (why)
        RV_WARN("network '%s': %s", n->def->name, why->message);
    rv_err_clear(&err);
    if (!n->active)
        live_clear(n);
    if (!n->active && !n->persistent)
        drop(n);
}

static void on_managed_started(void *opaque, const rv_err *why)
{
    qnet *n = opaque;
    rv_err err = { 0 };
    if (!why && save_run_file(running(n), &err) == 0)
        started(n);
    else if (!why) {    /* it runs, but a restarted remvirtd would not know: undo */
        rv_err ignored = { 0 };
        rv_qemu_netnat_stop(running(n), fam.run_dir, NULL, NULL, &ignored);
        rv_err_clear(&ignored);
    }
    finish(n, why ? why : rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
}

static void stopped(qnet *n)
{
    rv_qemu_remove_file(fam.run_dir, n->def->name, ".xml");
    n->active = false;
    live_clear(n);
    RV_INFO("network '%s' stopped", n->def->name);
    emit(n, RV_NET_EVENT_STOPPED);
}

static void on_managed_stopped(void *opaque, const rv_err *why)
{
    qnet *n = opaque;
    stopped(n);         /* bridge and dnsmasq are gone, whatever nft said */
    finish(n, why);
}

static int busy(const qnet *n, rv_err *err)
{
    if (!n->busy)
        return 0;
    return fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: network '%s' is being %s", n->def->name,
                n->active ? "destroyed" : "started");
}

/* 0 when started; RV_DEFERRED when a NAT or isolated network's start is
 * under way (reply, if any, answered then), -1 with err set. */
static int start(qnet *n, rv_deferred *reply, rv_err *err)
{
    if (rv_qemu_netnat_managed(n->def)) {
        if (rv_qemu_netnat_start(n->def, fam.run_dir, on_managed_started, n, err) < 0)
            return -1;
        n->live = n->def;
        n->busy = true;
        n->reply = reply;
        return RV_DEFERRED;
    }
    if (!bridge_exists(n->def->bridge))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: the host has no bridge '%s' for network '%s'",
                    n->def->bridge, n->def->name);
    if (save_run_file(n->def, err) < 0)
        return -1;
    n->live = n->def;
    started(n);
    return 0;
}

static int defer_managed(qnet *n, int (*step)(qnet *, rv_deferred *, rv_err *), rv_err *err);

/* The network a handle names, with no start or destroy under way. */
static qnet *get_idle(const rv_nonnull_network *w, rv_err *err)
{
    qnet *n = get(w, err);
    return n && busy(n, err) == 0 ? n : NULL;
}

int rv_qemu_network_bridge(const char *name, char **bridge, rv_err *err)
{
    qnet *n = find(name);
    if (!n)
        return fail(err, RV_ERR_NO_NETWORK, "Network not found: no network with matching name '%s'",
                    name);
    if (!n->active)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: network '%s' is not active", name);
    return (*bridge = strdup(running(n)->bridge)) ? 0 : oom(err);
}

int rv_qemu_network_resolve(rv_qemu_domain_def *live, rv_err *err)
{
    for (size_t i = 0; i < live->ninterfaces; i++) {
        rv_qemu_interface *iface = &live->interfaces[i];
        if (iface->type != RV_QEMU_NET_NETWORK)
            continue;
        char *bridge = NULL;
        if (rv_qemu_network_bridge(iface->network, &bridge, err) < 0)
            return -1;
        free(iface->bridge);
        iface->bridge = bridge;
    }
    return 0;
}

/* ---- the slots ---- */

RV_OBJ_ACTIVE_SLOTS(rv_qemu_, networks, &st.list, RV_NETWORK_LIST_MAX)
RV_OBJ_DEFINED_SLOTS(rv_qemu_, networks, &st.list, RV_NETWORK_LIST_MAX)

RV_OBJ_LIST_ALL_SLOT(rv_qemu_, networks, &st.list, 0x3f, "connectListAllNetworks", to_wire, nets)

RV_OBJ_LOOKUP_SLOTS(rv_qemu_, network, &st.list, to_wire, net)

/* A define or an undefine, through the family's queue (qemu_fileq.c):
 * checked when the ones before it are done, answered once its file is
 * durable, memory changed then. (rv_qemu_defop) */
static rv_qemu_fileq net_queue = { .name = "network", .from = RV_FROM_NETWORK };

static int define_prepare(rv_qemu_fileop *o, rv_err *err)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    rv_net_def *def;
    if (parse(op->xml, &def, err) < 0)
        return -1;
    op->def = def;
    return rv_qemu_family_define_step(o, &fam, def->name, rv_net_def_format(def), err);
}

static void define_commit(rv_qemu_fileop *o)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    rv_err err = { 0 };
    rv_net_def *def = op->def;
    qnet *n = find(def->name);
    if (!n && !(n = add(def, &err))) {
        RV_ERROR("network '%s' is on disk, but not in memory: %s", def->name, err.message);
        rv_err_clear(&err);
        return;
    }
    rv_net_def *old = n->def == def ? NULL : n->def;
    n->def = def;
    op->def = NULL;
    /* An active network keeps running as it started (live); the new
     * definition (maybe another bridge) is what starts next time. */
    if (old && old != n->live)
        rv_net_def_free(old);
    n->persistent = true;
    emit(n, RV_NET_EVENT_DEFINED);
    /* (DEFINE_XML's result or DEFINE_XML_FLAGS': the network first.) */
    rv_nonnull_network *net = rv_deferred_ret(o->reply);
    if (to_wire(n, net, &err) < 0)
        rv_err_clear(&err);
}

/* NETWORK_DEFINE_XML (and _FLAGS: VALIDATE is the reader's check). */
static int define_xml(const char *xml, rv_err *err)
{
    rv_net_def *def;
    /* Refused at once when bad; checked again at its turn. */
    if (parse(xml, &def, err) < 0)
        return -1;
    rv_net_def_free(def);
    return rv_qemu_defop_submit(&net_queue, xml, NULL, free_def, define_prepare, define_commit,
                                err);
}

int rv_qemu_network_define_xml(rv_driver_conn *c, const rv_network_define_xml_args *args,
                               rv_network_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return define_xml(args->xml, err);
}

int rv_qemu_network_define_xml_flags(rv_driver_conn *c,
                                     const rv_network_define_xml_flags_args *args,
                                     rv_network_define_xml_flags_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (rv_driver_check_flags(RV_FROM_NETWORK, args->flags, RV_NETWORK_DEFINE_VALIDATE,
                              "networkDefineXMLFlags", err) < 0)
        return -1;
    return define_xml(args->xml, err);
}

/* NETWORK_CREATE_XML (and _FLAGS): net is the result's. */
static int create_xml(const char *xml, rv_nonnull_network *net, rv_err *err)
{
    rv_net_def *def;
    if (parse(xml, &def, err) < 0)
        return -1;
    if (find(def->name)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: network '%s' is already defined; start it instead",
             def->name);
        rv_net_def_free(def);
        return -1;
    }
    qnet *n = add(def, err);
    if (!n) {
        rv_net_def_free(def);
        return -1;
    }
    rv_deferred *reply = NULL;
    if (rv_qemu_netnat_managed(def) && !(reply = rv_driver_defer(err))) {
        drop(n);
        return -1;
    }
    int rc = start(n, reply, err);
    if (rc == RV_DEFERRED) {
        n->reply_net = true;
        return RV_DEFERRED;
    }
    if (rc < 0) {
        drop(n);
        if (!reply)
            return -1;
        rv_deferred_finish(reply, err);
        rv_err_clear(err);
        return RV_DEFERRED;
    }
    return to_wire(n, net, err);
}

int rv_qemu_network_create_xml(rv_driver_conn *c, const rv_network_create_xml_args *args,
                               rv_network_create_xml_ret *ret, rv_err *err)
{
    (void)c;
    return create_xml(args->xml, &ret->net, err);
}

int rv_qemu_network_create_xml_flags(rv_driver_conn *c,
                                     const rv_network_create_xml_flags_args *args,
                                     rv_network_create_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_NETWORK, args->flags, RV_NETWORK_CREATE_VALIDATE,
                              "networkCreateXMLFlags", err) < 0)
        return -1;
    return create_xml(args->xml, &ret->net, err);
}

int rv_qemu_network_create(rv_driver_conn *c, const rv_network_create_args *args, rv_err *err)
{
    (void)c;
    qnet *n = get_idle(&args->net, err);
    if (!n)
        return -1;
    if (n->active)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: network is already active");
    return defer_managed(n, start, err);
}

static int stop_managed(qnet *n, rv_deferred *reply, rv_err *err)
{
    if (rv_qemu_netnat_stop(running(n), fam.run_dir, on_managed_stopped, n, err) < 0)
        return -1;
    n->busy = true;
    n->reply = reply;
    return RV_DEFERRED;
}

/* A start or stop for a slot whose reply has no data: deferred for NAT
 * and isolated networks, whose steps answer later. */
static int defer_managed(qnet *n, int (*step)(qnet *, rv_deferred *, rv_err *), rv_err *err)
{
    if (!rv_qemu_netnat_managed(running(n)))
        return step(n, NULL, err);
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    if (step(n, reply, err) < 0) {
        rv_deferred_finish(reply, err);
        rv_err_clear(err);
    }
    return RV_DEFERRED;
}

int rv_qemu_network_destroy(rv_driver_conn *c, const rv_network_destroy_args *args, rv_err *err)
{
    (void)c;
    qnet *n = get_idle(&args->net, err);
    if (!n)
        return -1;
    if (!n->active)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: network '%s' is not active", n->def->name);
    if (rv_qemu_netnat_managed(running(n)))
        return defer_managed(n, stop_managed, err);
    /* Guests' taps stay on the bridge: the bridge is the host's, not ours. */
    stopped(n);
    if (!n->persistent)
        drop(n);
    return 0;
}

static int undefine_prepare(rv_qemu_fileop *o, rv_err *err)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    qnet *n = rv_qemu_family_get_queued(&fam, op->uuid, err);
    if (!n || busy(n, err) < 0)
        return -1;
    if (!n->persistent)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: network '%s' is not persistent",
                    n->def->name);
    return rv_qemu_family_undefine_steps(o, &fam, n->def->name, err);
}

static void undefine_commit(rv_qemu_fileop *o)
{
    rv_qemu_defop *op = (rv_qemu_defop *)o;
    qnet *n = rv_obj_find_uuid(&st.list, op->uuid);
    if (!n)
        return;
    n->persistent = n->autostart = false;
    emit(n, RV_NET_EVENT_UNDEFINED);
    if (!n->active)
        drop(n);
}

int rv_qemu_network_undefine(rv_driver_conn *c, const rv_network_undefine_args *args, rv_err *err)
{
    (void)c;
    qnet *n = get_idle(&args->net, err);
    if (!n)
        return -1;
    return rv_qemu_defop_submit(&net_queue, NULL, n->def->uuid, free_def, undefine_prepare,
                                undefine_commit, err);
}

int rv_qemu_network_get_xml_desc(rv_driver_conn *c, const rv_network_get_xml_desc_args *args,
                                 rv_network_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qnet *n;
    if (args->flags & ~1u)      /* INACTIVE: the definition, not what runs */
        return fail(err, RV_ERR_INVALID_ARG,
                    "unsupported flags (0x%x) in function networkGetXMLDesc", args->flags & ~1u);
    if (!(n = get(&args->net, err)))
        return -1;
    if (!(ret->xml = rv_net_def_format((args->flags & 1u) ? n->def : running(n))))
        return oom(err);
    return rv_string_result(0, &ret->xml, err);
}

int rv_qemu_network_get_bridge_name(rv_driver_conn *c,
                                    const rv_network_get_bridge_name_args *args,
                                    rv_network_get_bridge_name_ret *ret, rv_err *err)
{
    (void)c;
    qnet *n = get(&args->net, err);
    if (!n)
        return -1;
    return (ret->name = strdup(running(n)->bridge)) ? 0 : oom(err);
}

RV_OBJ_STATE_SLOTS(rv_qemu_, network, &st.list, net)

int rv_qemu_network_set_autostart(rv_driver_conn *c, const rv_network_set_autostart_args *args,
                                  rv_err *err)
{
    (void)c;
    qnet *n = get(&args->net, err);
    if (!n)
        return -1;
    if (!n->persistent)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot set autostart for transient network");
    if (rv_qemu_family_set_autostart(&fam, n->def->name, args->autostart != 0, err) < 0)
        return -1;
    n->autostart = args->autostart != 0;
    return 0;
}

/* ---- start-up and exit ---- */

void rv_qemu_network_init(void)
{
    if (rv_qemu_family_load(&fam) < 0)
        return;
    for (size_t i = 0; i < st.list.n; i++) {
        qnet *n = rv_obj_at(&st.list, i);
        n->autostart = n->persistent && rv_qemu_family_autostart(&fam, n->def->name);
        rv_err err = { 0 };
        if (n->active && rv_qemu_netnat_managed(running(n)))
            rv_qemu_netnat_reattach(running(n), fam.run_dir);
        if (!n->active && n->autostart && start(n, NULL, &err) < 0)
            RV_WARN("network '%s' does not autostart: %s", n->def->name, err.message);
        rv_err_clear(&err);
    }
}

void rv_qemu_network_cleanup(void)
{
    rv_qemu_fileq_release(&net_queue);
    rv_qemu_netnat_cleanup();   /* answers the calls that wait, before the table goes */
    while (st.list.n)
        drop(rv_obj_at(&st.list, 0));
    free(st.list.items);
    rv_qemu_family_free(&fam);
    memset(&st, 0, sizeof(st));
    st.list = (rv_obj_list){ .max = MAX_NETS, .kind = &net_kind };
}

static int leases_of(qnet *n, const char *mac, bool need_results,
                     rv_network_get_dhcp_leases_ret *ret, rv_err *err)
{
    /* A bridge of the host's has no DHCP server of ours: no leases. */
    if (!rv_qemu_netnat_managed(running(n))) {
        ret->ret = 0;
        return 0;
    }
    return rv_qemu_netnat_leases(running(n), fam.run_dir, mac, need_results, ret, err);
}

int rv_qemu_network_get_dhcp_leases(rv_driver_conn *c, const rv_network_get_dhcp_leases_args *args,
                                    rv_network_get_dhcp_leases_ret *ret, rv_err *err)
{
    (void)c;
    if (args->flags)
        return fail(err, RV_ERR_INVALID_ARG,
                    "unsupported flags (0x%x) in function networkGetDHCPLeases", args->flags);
    qnet *n = get(&args->net, err);
    if (!n)
        return -1;
    return leases_of(n, args->mac ? *args->mac : NULL, args->need_results != 0, ret, err);
}

int rv_qemu_network_leases(const char *name, const char *mac,
                           rv_network_get_dhcp_leases_ret *ret, rv_err *err)
{
    qnet *n = find(name);
    if (!n)
        return fail(err, RV_ERR_NO_NETWORK, "Network not found: no network with matching name '%s'",
                    name);
    return leases_of(n, mac, true, ret, err);
}

/* ---- NETWORK_UPDATE ---- */

/* What a changed definition must be here: a NAT or isolated network's
 * (the hosts go into dnsmasq's files); def is freed when refused. */
static rv_net_def *checked(rv_net_def *def, rv_err *err)
{
    if (def && rv_qemu_netnat_managed(def) && rv_qemu_netnat_check(def, err) < 0) {
        rv_net_def_free(def);
        return NULL;
    }
    return def;
}

/* The running network's memory becomes live (taken); its files were
 * written by the queue. */
static void set_live(qnet *n, rv_net_def *live)
{
    live_clear(n);
    if (!n->persistent) {       /* a transient network has no other definition */
        rv_net_def_free(n->def);
        n->def = live;
    }
    n->live = live;
}

/* An update, through the family's queue (off the loop): computed at
 * its turn from the definitions then, answered once its files are
 * written.  The commit point is the definition's file, or without one
 * (the live part alone) the run file; the live part's files (the run
 * file, dnsmasq's configuration when it changes) follow the definition's,
 * and dnsmasq is restarted once they are written. */
typedef struct netupd {
    rv_qemu_fileop op;
    unsigned char uuid[16];
    unsigned int command, section, flags;
    int parent_index;
    char *xml;
    rv_net_def *config, *live;
    bool restart;               /* dnsmasq's configuration changes */
} netupd;

static void netupd_destroy(rv_qemu_fileop *o)
{
    netupd *u = (netupd *)o;
    free(u->xml);
    rv_net_def_free(u->config);
    rv_net_def_free(u->live);
    free(u);
}

/* The new definitions of u for n as it is now. */
static int netupd_compute(netupd *u, const qnet *n, rv_err *err)
{
    unsigned int flags;
    if (busy(n, err) < 0 || rv_net_update_flags(u->flags, n->active, n->persistent, "networkUpdate",
                                                RV_FROM_NETWORK, &flags, err) < 0)
        return -1;
    if ((flags & RV_NETWORK_UPDATE_AFFECT_LIVE) &&
        !(u->live = checked(rv_net_def_updated(running(n), u->command, u->section,
                                               u->parent_index, u->xml, err), err)))
        return -1;
    if ((flags & RV_NETWORK_UPDATE_AFFECT_CONFIG) &&
        !(u->config = checked(rv_net_def_updated(n->def, u->command, u->section, u->parent_index,
                                                 u->xml, err), err)))
        return -1;
    u->flags = flags;
    return 0;
}

static int netupd_prepare(rv_qemu_fileop *o, rv_err *err)
{
    netupd *u = (netupd *)o;
    qnet *n = rv_qemu_family_get_queued(&fam, u->uuid, err);
    rv_net_def_free(u->live);
    u->live = NULL;
    if (!n || netupd_compute(u, n, err) < 0)
        return -1;
    if ((u->flags & RV_NETWORK_UPDATE_AFFECT_CONFIG) &&
        rv_qemu_family_define_step(o, &fam, n->def->name, rv_net_def_format(u->config), err) < 0)
        return -1;
    if (!u->live)
        return 0;
    char *conf = NULL, *xml = NULL;
    if (rv_qemu_netnat_managed(u->live) &&
        rv_qemu_netnat_update_conf(running(n), u->live, fam.run_dir, &conf, err) < 0)
        return -1;
    bool commit = !(u->flags & RV_NETWORK_UPDATE_AFFECT_CONFIG);
    if (!(xml = rv_net_def_format(u->live)) ||
        rv_qemu_fileop_step(o, rv_qemu_path(fam.run_dir, n->def->name, ".xml"), xml, commit) < 0) {
        free(conf);
        return oom(err);
    }
    u->restart = conf != NULL;
    if (conf && rv_qemu_fileop_step(o, rv_qemu_path(fam.run_dir, n->def->name, ".dnsmasq.conf"),
                                    conf, false) < 0)
        return oom(err);
    return 0;
}

static void netupd_commit(rv_qemu_fileop *o)
{
    netupd *u = (netupd *)o;
    qnet *n = rv_obj_find_uuid(&st.list, u->uuid);
    if (!n)
        return;
    if (u->config) {
        rv_net_def *old = n->def;
        n->def = u->config;
        u->config = NULL;
        if (old != n->live)     /* else what runs, until it stops or is updated */
            rv_net_def_free(old);
    }
    if (u->live && n->active)   /* (not when destroyed meanwhile) */
        set_live(n, u->live);
    else
        rv_net_def_free(u->live);
    u->live = NULL;
}

static void netupd_after(rv_qemu_fileop *o)
{
    netupd *u = (netupd *)o;
    qnet *n = rv_obj_find_uuid(&st.list, u->uuid);
    if (n && n->active && u->restart && rv_qemu_netnat_managed(running(n)))
        rv_qemu_netnat_restart(running(n), fam.run_dir);
}

int rv_qemu_network_update(rv_driver_conn *c, const rv_network_update_args *args, rv_err *err)
{
    (void)c;
    qnet *n = get(&args->net, err);
    netupd *u = n ? rv_qemu_fileop_new(&net_queue, sizeof(*u), netupd_destroy, err) : NULL;
    if (!u)
        return -1;
    memcpy(u->uuid, n->def->uuid, sizeof(u->uuid));
    u->command = args->command;
    u->section = args->section;
    u->parent_index = args->parentIndex;
    u->flags = args->flags;
    /* Refused at once when it cannot be done now. */
    if (!(u->xml = strdup(args->xml))) {
        netupd_destroy(&u->op);
        return oom(err);
    }
    if (netupd_compute(u, n, err) < 0) {
        netupd_destroy(&u->op);
        return -1;
    }
    rv_net_def_free(u->config);
    u->config = NULL;
    rv_net_def_free(u->live);
    u->live = NULL;
    u->op.after = netupd_after;
    return rv_qemu_fileq_submit(&net_queue, &u->op, netupd_prepare, netupd_commit, err);
}
