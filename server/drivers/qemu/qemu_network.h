/* The QEMU driver's virtual networks: host bridges named as networks,
 * NAT and isolated networks on bridges of remvirtd's own (qemu_network.c):
 * start-up and exit, and the bridge a guest's <interface type='network'>
 * goes on.  The wire slots are in the driver's table (qemu_ops.c). */
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
/* The DHCP leases of network name for mac (NETWORK_GET_DHCP_LEASES's
 * answer, into ret): none for a host bridge; -1 with err set when there
 * is no such network. */
int rv_qemu_network_leases(const char *name, const char *mac,
                           rv_network_get_dhcp_leases_ret *ret, rv_err *err);


#endif
