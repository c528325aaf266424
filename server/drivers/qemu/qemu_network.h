/* The QEMU driver's virtual networks: host bridges named as networks,
 * NAT and isolated networks on bridges of remvirtd's own (qemu_network.c).  The slots its table lists, start-up and exit, and
 * the bridge a guest's <interface type='network'> goes on. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_NETWORK_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_NETWORK_H

#include "server/drivers/driver.h"
#include "server/drivers/qemu/domain_xml.h"

void rv_qemu_network_init(void);
void rv_qemu_network_cleanup(void);

/* The host bridge of the active network name (malloc'd in *bridge), or
 * -1 with err set (no such network, not active). */
int rv_qemu_network_bridge(const char *name, char **bridge, rv_err *err);
/* Before a start: each <interface type='network'> of live gets its
 * network's bridge (-1 with err set when a network is missing or down). */
int rv_qemu_network_resolve(rv_qemu_domain_def *live, rv_err *err);

#define RV_QEMU_NET_SLOT(name) \
    int rv_qemu_##name(rv_driver_conn *c, const rv_##name##_args *args, rv_##name##_ret *ret, \
                       rv_err *err)
int rv_qemu_connect_num_of_networks(rv_driver_conn *c, rv_connect_num_of_networks_ret *ret,
                                    rv_err *err);
int rv_qemu_connect_num_of_defined_networks(rv_driver_conn *c,
                                            rv_connect_num_of_defined_networks_ret *ret,
                                            rv_err *err);
RV_QEMU_NET_SLOT(connect_list_networks);
RV_QEMU_NET_SLOT(connect_list_defined_networks);
RV_QEMU_NET_SLOT(connect_list_all_networks);
RV_QEMU_NET_SLOT(network_lookup_by_name);
RV_QEMU_NET_SLOT(network_lookup_by_uuid);
RV_QEMU_NET_SLOT(network_define_xml);
RV_QEMU_NET_SLOT(network_create_xml);
RV_QEMU_NET_SLOT(network_get_xml_desc);
RV_QEMU_NET_SLOT(network_get_bridge_name);
RV_QEMU_NET_SLOT(network_get_autostart);
RV_QEMU_NET_SLOT(network_is_active);
RV_QEMU_NET_SLOT(network_is_persistent);
RV_QEMU_NET_SLOT(network_get_dhcp_leases);
int rv_qemu_network_create(rv_driver_conn *c, const rv_network_create_args *args, rv_err *err);
int rv_qemu_network_destroy(rv_driver_conn *c, const rv_network_destroy_args *args, rv_err *err);
int rv_qemu_network_undefine(rv_driver_conn *c, const rv_network_undefine_args *args,
                             rv_err *err);
int rv_qemu_network_set_autostart(rv_driver_conn *c, const rv_network_set_autostart_args *args,
                                  rv_err *err);

#endif
