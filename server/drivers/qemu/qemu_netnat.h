/* Networks whose bridge remvirtd makes (qemu_netnat.c): NAT
 * (<forward mode='nat'/>) and isolated (no <forward>).  A start makes the
 * bridge with the network's IPv4 address, runs dnsmasq for DHCP and DNS
 * on it, and loads an nftables table of the network's own (masquerade and
 * forward rules for NAT, forward rejects for isolated); a stop undoes it
 * all.  dnsmasq and nft run as child processes watched by the loop: the
 * caller's done() runs later, from the loop.  Files, in run_dir/networks:
 *   <name>.dnsmasq.conf  <name>.pid (dnsmasq's)  <name>.leases (dnsmasq's)
 *   <name>.nft (the rules loaded; .del.nft: their removal)
 *   <name>.cmd.log (what dnsmasq or nft last said, for errors) */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_NETNAT_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_NETNAT_H

#include <stdbool.h>

#include "common/error.h"
#include "server/drivers/driver.h"
#include "server/drivers/conf/network_xml.h"

/* The network's bridge is remvirtd's to make (modes nat and none). */
bool rv_qemu_netnat_managed(const rv_net_def *def);
/* Whether its <ip>, <dhcp> and forward mode can be made here; err says
 * what cannot (IPv6, a range outside the subnet, ...). */
int rv_qemu_netnat_check(const rv_net_def *def, rv_err *err);

typedef void (*rv_qemu_netnat_done)(void *opaque, const rv_err *err);
/* 0: done(opaque, NULL or the error) runs later, with nothing left behind
 * on error; -1 with err set: nothing was started. */
int rv_qemu_netnat_start(const rv_net_def *def, const char *dir, rv_qemu_netnat_done done,
                         void *opaque, rv_err *err);
/* dnsmasq sent SIGTERM, bridge deleted, files removed at once; done runs
 * when the nftables table is gone and dnsmasq has exited too (so a start
 * right after finds its addresses free).  -1 with err set: nothing
 * changed. */
int rv_qemu_netnat_stop(const rv_net_def *def, const char *dir, rv_qemu_netnat_done done,
                        void *opaque, rv_err *err);
/* After a restart of remvirtd: the running dnsmasq is found from its pid
 * file (one that died is started again). */
void rv_qemu_netnat_reattach(const rv_net_def *def, const char *dir);
/* A live NETWORK_UPDATE of a running network from old to def: *conf is
 * dnsmasq's new configuration (malloc'd) when it changes (its DHCP
 * ranges and hosts, its DNS hosts, TXT and SRV records), else NULL.
 * The caller has it written (off the loop: qemu_fileq.c), then calls
 * rv_qemu_netnat_restart, which restarts dnsmasq (the new one starts
 * once the old one is gone, later, from the loop). */
int rv_qemu_netnat_update_conf(const rv_net_def *old, const rv_net_def *def, const char *dir,
                               char **conf, rv_err *err);
void rv_qemu_netnat_restart(const rv_net_def *def, const char *dir);
/* NETWORK_GET_DHCP_LEASES from dnsmasq's lease file (mac: only its). */
int rv_qemu_netnat_leases(const rv_net_def *def, const char *dir, const char *mac,
                          bool need_results, rv_network_get_dhcp_leases_ret *ret, rv_err *err);
/* At exit: commands still running are abandoned, their done() told so. */
void rv_qemu_netnat_cleanup(void);

#endif
