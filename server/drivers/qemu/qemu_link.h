/* Host network links that remvirtd (as root) makes itself, through
 * ioctls that answer at once: a guest's tap on a bridge, a network's own
 * bridge with its IPv4 address, and the counters of a link (qemu_link.c).
 * Failures name the link and why; without CAP_NET_ADMIN they say so. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_LINK_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "server/drivers/qemu/domain_xml.h"

enum { RV_LINK_NAME_MAX = 15 };     /* IFNAMSIZ - 1 */

/* A tap for a guest: named want when given (it must not exist yet), else
 * the first free vnetN; its MAC is the guest's with 0xfe first (so the
 * bridge never takes the guest's address as its own), its MTU the
 * bridge's; attached to bridge and up.  Returns the open tap (close on
 * exec) with its name in name, or -1 with err set.  The tap is not
 * persistent: it goes when the last descriptor (QEMU's) closes. */
int rv_qemu_tap_create(const char *want, const unsigned char mac[6], const char *bridge,
                       char name[RV_LINK_NAME_MAX + 1], rv_err *err);

/* A new bridge with address/prefix (host byte order; prefix 0: no
 * address), forward delay 0, up.  Refused when the name is in use or another link already has an
 * address in that subnet; nothing is left behind on failure. */
int rv_qemu_bridge_create(const char *name, const char *mac, uint32_t address, unsigned prefix,
                          rv_err *err);
/* Down and deleted (its ports, if any, are released by the kernel). */
int rv_qemu_bridge_delete(const char *name, rv_err *err);

bool rv_qemu_link_exists(const char *name);

/* The counters of a link as its guest sees them (a tap's rx is what the
 * guest sent): rx bytes, packets, errors, drops, then tx the same, as
 * /proc/net/dev counts them.  -1 when the link has none. */
int rv_qemu_link_guest_counters(const char *name, unsigned long long out[8]);

/* Before a start as root: a tap for each interface of type bridge or
 * network (whose bridge is resolved), named into its ifname.  A
 * <target dev> given is kept unless it starts with "vnet" (those names
 * are remvirtd's to choose, as libvirt's).  Returns a malloc'd array, one
 * descriptor per interface (-1: none), or NULL with err set and every tap
 * made so far closed. */
int *rv_qemu_domain_taps_open(rv_qemu_domain_def *live, rv_err *err);
void rv_qemu_domain_taps_close(int *fds, size_t n);

#endif
