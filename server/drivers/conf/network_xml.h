/* Virtual network XML, for both drivers: the identity and bridge read
 * from the document, which is kept whole (xml_tree.h) and written back in
 * libvirt's element order and layout.  Elements libvirt does not model
 * are dropped on the way out. */
#ifndef RV_SERVER_DRIVERS_CONF_NETWORK_XML_H
#define RV_SERVER_DRIVERS_CONF_NETWORK_XML_H

#include <stdbool.h>

#include "common/error.h"
#include "server/drivers/conf/xml_tree.h"

/* The largest network XML accepted. */
#define RV_NETWORK_XML_MAX (64 * 1024)

typedef struct rv_net_def {
    char *name;
    unsigned char uuid[16];             /* generated when the XML has none */
    char *bridge;                       /* <bridge name>; NULL when absent */
    rv_xml_node *root;
} rv_net_def;

/* Errors as libvirt's network parser gives them (VIR_FROM_NETWORK). */
int rv_net_def_parse(const char *xml, rv_net_def **out, rv_err *err);
void rv_net_def_free(rv_net_def *def);
/* NULL only when out of memory. */
char *rv_net_def_format(const rv_net_def *def);
/* The forward mode: "nat", "bridge", ...; "none" without <forward>. */
const char *rv_net_def_forward_mode(const rv_net_def *def);
/* Set <bridge name> (and def->bridge). */
int rv_net_def_set_bridge(rv_net_def *def, const char *name, rv_err *err);
/* The bridge's MAC address (<mac address>), NULL when none is given;
 * set one (there must be none yet). */
const char *rv_net_def_mac(const rv_net_def *def);
int rv_net_def_set_mac(rv_net_def *def, const char *mac, rv_err *err);

/* NETWORK_UPDATE (network_update.c): a copy of def with command
 * (RV_NETWORK_UPDATE_COMMAND_*) applied to section's element xml (under
 * the <ip> of parent_index, -1: the first IPv4 one), or NULL with
 * libvirt 9.0's error; def is unchanged either way. */
rv_net_def *rv_net_def_updated(const rv_net_def *def, unsigned int command, unsigned int section,
                               int parent_index, const char *xml, rv_err *err);
/* The command and section alone (known, and a section that updates). */
int rv_net_def_update_check(unsigned int command, unsigned int section, rv_err *err);
/* NETWORK_UPDATE's flags for a network in this state, checked (api names
 * the function in "unsupported flags", from its error domain; the
 * state's errors are the network conf's) and
 * resolved: *out holds LIVE, CONFIG or both (AFFECT_CURRENT: LIVE when
 * active, else CONFIG). */
int rv_net_update_flags(unsigned int flags, bool active, bool persistent, const char *api,
                        int from, unsigned int *out, rv_err *err);

/* ---- on an object list (objlist.h): a driver's network object begins
 * with its rv_net_def pointer; state_of gives its RV_OBJ_* bits. ---- */
const char *rv_net_obj_name(const void *obj);
const unsigned char *rv_net_obj_uuid(const void *obj);
#define RV_NET_OBJ_KIND(from_, state_of_)                                        \
    { .what = "network", .whats = "networks", .not_found = "Network not found", \
      .lookup_what = "network", .from = (from_), .no_object = RV_ERR_NO_NETWORK, \
      .name_of = rv_net_obj_name, .uuid_of = rv_net_obj_uuid, .state_of = (state_of_) }

#endif
