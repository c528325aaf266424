#!/usr/bin/env bash
# The QEMU driver's NAT and isolated networks, in a network and mount
# namespace of the test's own (bridges, taps, dnsmasq's sockets and nft
# tables never reach the host): net-define + net-start of a NAT network
# (bridge virbrN with its address, dnsmasq, an nftables table of its own,
# IPv4 forwarding), a booting guest on it that gets its DHCP lease
# (net-dhcp-leases), its tap vnet0 (domiflist, domifstat counters that
# rise, domstats net.*), remvirtd killed with SIGKILL and restarted (the
# same dnsmasq, the guest's tap known again), the guest's destroy (tap
# gone), net-destroy (bridge, dnsmasq, table and files gone), autostart
# with remvirtd, a redefinition while it runs; an isolated
# network; errors that leave nothing behind (bridge name in use, address
# conflict, dnsmasq missing, IPv6, routed mode).  virsh's net-dumpxml and
# net-info are compared with libvirtd's test driver's (which has no DHCP
# leases to compare: "not supported by the connection driver").
set -euo pipefail
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view
requires virsh
requires nft --version
requires dnsmasq --version
requires ping -V

test_guest
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
VQ=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
NETS=$QEMU_DIR/run/networks
mkdir -p "$OUT"

expect()
{
    local want=$1 got
    shift
    got=$("$@" 2>&1) || fail "'$*' failed: $got"
    got=$(echo "$got" | sed '/^$/d')
    [ "$got" = "$want" ] || fail "'$*' printed '$got', expected '$want'"
    echo "ok   $* -> $want"
}

expect_error()
{
    local want=$1 got
    shift
    got=$("$@" 2>&1) && fail "'$*' succeeded: $got"
    grep -qF -- "$want" <<< "$got" || fail "'$*' said '$got', expected '$want'"
    echo "ok   $* fails: $want"
}

# dnsmasq processes whose configuration is nat1's.
dnsmasq_pids()
{
    local f pid
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        { tr '\0' ' ' < "$f"; } 2>/dev/null | grep -qF -- "--conf-file=$NETS/$1.dnsmasq.conf" &&
            echo "$pid"
    done
    return 0
}

# A counter of domifstat's output ("vnet0 rx_bytes 123").
ifstat()
{
    "${V[@]}" domifstat g1 vnet0 | awk -v k="$1" '$2 == k { print $3 }'
}

cat > "$OUT/nat1.xml" <<XML
<network>
  <name>nat1</name>
  <uuid>0e1f6a52-8d1c-4c55-9a8e-5d2b7c1a0f01</uuid>
  <forward mode='nat'/>
  <ip address='192.168.150.1' netmask='255.255.255.0'>
    <dhcp>
      <range start='192.168.150.100' end='192.168.150.199'/>
      <host mac='52:54:00:aa:bb:10' name='fixed1' ip='192.168.150.50'/>
    </dhcp>
  </ip>
</network>
XML
expect "Network nat1 defined from $OUT/nat1.xml" "${V[@]}" net-define "$OUT/nat1.xml"
"${V[@]}" net-dumpxml nat1 > "$OUT/nat1-def.xml"
grep -q "<bridge name='virbr0' stp='on' delay='0'/>" "$OUT/nat1-def.xml" ||
    { show "$OUT/nat1-def.xml"; fail "nat1 was given no bridge virbr0"; }
expect "Network nat1 started" "${V[@]}" net-start nat1
"${V[@]}" net-info nat1 > "$OUT/info"
for line in "Name:           nat1" "Active:         yes" "Bridge:         virbr0"; do
    has_line "$OUT/info" "$line" || { show "$OUT/info"; fail "net-info lacks '$line'"; }
done
grep -q "inet 192.168.150.1/24" <<< "$(ip -o -4 addr show dev virbr0)" || fail "virbr0 has not 192.168.150.1/24"
[ -e /sys/class/net/virbr0/bridge ] || fail "virbr0 is not a bridge"
pids=$(dnsmasq_pids nat1)
[ "$(echo "$pids" | wc -w)" = 1 ] || fail "nat1 has not one dnsmasq: '$pids'"
[ "$(cat "$NETS/nat1.pid")" = "$pids" ] || fail "dnsmasq's pid file does not name it"
nft list table ip remvirt_virbr0 > "$OUT/table"
grep -q "masquerade" "$OUT/table" || { show "$OUT/table"; fail "no masquerade in remvirt_virbr0"; }
[ "$(cat /proc/sys/net/ipv4/ip_forward)" = 1 ] || fail "IPv4 forwarding is off"
# The bridge's MAC address: one given at define, as libvirtd's network
# driver gives it, and set on the bridge.
mac=$(sed -n "s|.*<mac address='\(52:54:00:[0-9a-f:]*\)'/>.*|\1|p" "$OUT/nat1-def.xml")
[ -n "$mac" ] || { show "$OUT/nat1-def.xml"; fail "nat1 was given no MAC address"; }
[ "$(cat /sys/class/net/virbr0/address)" = "$mac" ] || fail "virbr0's MAC is $(cat /sys/class/net/virbr0/address), not nat1's $mac"
echo "ok   nat1: virbr0 192.168.150.1/24 with MAC $mac, dnsmasq $pids, nft table remvirt_virbr0, forwarding on"
expect_error "is already active" "${V[@]}" net-start nat1

# A booting guest on it: its tap, its lease, its counters.
qemu_guest_xml g1 | sed "s|<devices>|&<interface type='network'><mac address='52:54:00:aa:bb:10'/><source network='nat1'/><model type='virtio'/></interface>|" > "$OUT/g1.xml"
"${V[@]}" define "$OUT/g1.xml" > /dev/null
expect "Domain 'g1' started" "${V[@]}" start g1
"${VQ[@]}" domiflist g1 > "$OUT/iflist"
grep -Eq '^ *vnet0 +network +nat1 +virtio +52:54:00:aa:bb:10$' "$OUT/iflist" ||
    { show "$OUT/iflist"; fail "domiflist g1 does not show vnet0 on nat1"; }
[ "$(cat /sys/class/net/vnet0/master/uevent | sed -n 's/^INTERFACE=//p')" = virbr0 ] ||
    fail "vnet0 is not on virbr0"
_leased()
{
    "${VQ[@]}" net-dhcp-leases nat1 > "$OUT/leases" 2>&1 &&
        grep -q "52:54:00:aa:bb:10 *ipv4 *192.168.150.50/24" "$OUT/leases"
}
wait_for 120 "g1's DHCP lease" _leased || { show "$OUT/leases"; fail "no lease for g1"; }
echo "ok   net-dhcp-leases nat1: $(head -n 1 "$OUT/leases" | tr -s ' ')"
"${VQ[@]}" net-dhcp-leases nat1 --mac 52:54:00:AA:BB:10 > "$OUT/by-mac"
grep -q 192.168.150.50 "$OUT/by-mac" || { show "$OUT/by-mac"; fail "net-dhcp-leases --mac does not find g1's lease"; }
[ -z "$("${VQ[@]}" net-dhcp-leases nat1 --mac 52:54:00:00:00:01)" ] ||
    fail "net-dhcp-leases --mac lists another MAC's lease"

rx=$(ifstat rx_bytes)
tx=$(ifstat tx_bytes)
[ "$rx" -gt 0 ] || fail "domifstat: g1 has sent nothing (rx_bytes $rx) though it asked for a lease"
_answers() { ping -c 1 -W 1 192.168.150.50 > /dev/null 2>&1; }
wait_for 60 "g1 to answer ping" _answers || fail "g1 does not answer ping on 192.168.150.50"
ping -c 3 -i 0.2 192.168.150.50 > /dev/null || fail "ping g1"
rx2=$(ifstat rx_bytes)
tx2=$(ifstat tx_bytes)
[ "$rx2" -gt "$rx" ] && [ "$tx2" -gt "$tx" ] ||
    fail "domifstat counters did not rise: rx $rx -> $rx2, tx $tx -> $tx2"
echo "ok   domifstat g1 vnet0: rx_bytes $rx -> $rx2, tx_bytes $tx -> $tx2"
# domifaddr: the lease (dnsmasq's file) and, after the pings, the host's
# ARP table; the agent source is refused as libvirtd does (g1 has no
# agent channel).
"${VQ[@]}" domifaddr g1 > "$OUT/ifaddr"
has_line "$OUT/ifaddr" " vnet0      52:54:00:aa:bb:10    ipv4         192.168.150.50/24" ||
    { show "$OUT/ifaddr"; fail "domifaddr g1 does not show the lease"; }
"${VQ[@]}" domifaddr g1 --source arp > "$OUT/ifaddr-arp"
has_line "$OUT/ifaddr-arp" " vnet0      52:54:00:aa:bb:10    ipv4         192.168.150.50/0" ||
    { show "$OUT/ifaddr-arp"; fail "domifaddr g1 --source arp does not show the neighbour"; }
expect_error "QEMU guest agent is not configured" "${V[@]}" domifaddr g1 --source agent
"$SYSTEM_PYTHON3" - "$QEMU_URI" <<'PY' || fail "python3-libvirt's interfaceAddresses differs"
import sys, libvirt
d = libvirt.open(sys.argv[1]).lookupByName("g1")
want = {"vnet0": {"hwaddr": "52:54:00:aa:bb:10",
                  "addrs": [{"type": 0, "addr": "192.168.150.50", "prefix": 24}]}}
got = d.interfaceAddresses(libvirt.VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_LEASE)
assert got == want, got
assert d.messages(0) == [], d.messages(0)     # no taints, no deprecations
try:
    d.interfaceAddresses(7)
    sys.exit("source 7 accepted")
except libvirt.libvirtError as e:
    assert e.get_error_code() == libvirt.VIR_ERR_ARGUMENT_UNSUPPORTED, e
try:
    d.interfaceAddresses(0, 1)
    sys.exit("flags 1 accepted")
except libvirt.libvirtError as e:
    assert "unsupported flags (0x1)" in str(e), e
PY
echo "ok   domifaddr g1: the lease and the ARP entry"
"${V[@]}" domstats --interface g1 > "$OUT/domstats"
for line in "  net.count=1" "  net.0.name=vnet0"; do
    has_line "$OUT/domstats" "$line" || { show "$OUT/domstats"; fail "domstats lacks '$line'"; }
done
grep -Eq '^  net\.0\.rx\.bytes=[1-9][0-9]*$' "$OUT/domstats" || { show "$OUT/domstats"; fail "net.0.rx.bytes"; }

# remvirtd killed while all of it runs: the same dnsmasq, the tap known.
kill -KILL "$REMVIRTD_PID"
wait "$REMVIRTD_PID" 2>/dev/null || true
REMVIRTD_PID=
rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
start_remvirtd_qemu
"${VQ[@]}" net-list > "$OUT/list"
grep -Eq '^ *nat1 +active +no +yes$' "$OUT/list" || { show "$OUT/list"; fail "nat1 is not active after the restart"; }
[ "$(dnsmasq_pids nat1)" = "$pids" ] || fail "dnsmasq after the restart: '$(dnsmasq_pids nat1)', before: $pids"
[ "$(ifstat rx_bytes)" -ge "$rx2" ] || fail "domifstat after the restart"
"${VQ[@]}" net-dhcp-leases nat1 > "$OUT/leases2"
grep -q 192.168.150.50 "$OUT/leases2" || { show "$OUT/leases2"; fail "the lease is not listed after the restart"; }
echo "ok   remvirtd killed and restarted: nat1 active, the same dnsmasq ($pids), vnet0 counted"
# And a dnsmasq that died while remvirtd was away is started again, once.
kill -KILL "$REMVIRTD_PID"
wait "$REMVIRTD_PID" 2>/dev/null || true
REMVIRTD_PID=
rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
kill -TERM "$pids"
_dnsmasq_gone() { [ -z "$(dnsmasq_pids nat1)" ]; }
wait_for 10 "dnsmasq to exit" _dnsmasq_gone || fail "dnsmasq $pids does not exit"
start_remvirtd_qemu
_one_dnsmasq() { [ "$(dnsmasq_pids nat1 | wc -w)" = 1 ]; }
wait_for 10 "a new dnsmasq for nat1" _one_dnsmasq || fail "nat1's dnsmasq was not started again"
pids=$(dnsmasq_pids nat1)
echo "ok   its dnsmasq killed while remvirtd was away: started again (pid $pids)"

expect "Domain 'g1' destroyed" "${V[@]}" destroy g1
[ ! -e /sys/class/net/vnet0 ] || fail "vnet0 is left after g1's destroy"
# A redefinition while it runs takes effect at its next start.
sed "s|<forward mode='nat'/>|&<bridge name='rvnat9'/>|" "$OUT/nat1.xml" > "$OUT/nat1-new.xml"
expect "Network nat1 defined from $OUT/nat1-new.xml" "${V[@]}" net-define "$OUT/nat1-new.xml"
"${V[@]}" net-dumpxml nat1 > "$OUT/nat1-live.xml"
grep -q "<bridge name='virbr0'" "$OUT/nat1-live.xml" || { show "$OUT/nat1-live.xml"; fail "the running nat1 is not on virbr0"; }
"${V[@]}" net-dumpxml --inactive nat1 > "$OUT/nat1-next.xml"
grep -q "<bridge name='rvnat9'" "$OUT/nat1-next.xml" || { show "$OUT/nat1-next.xml"; fail "nat1's new definition"; }
grep -q "<mac address='$mac'/>" "$OUT/nat1-next.xml" || { show "$OUT/nat1-next.xml"; fail "nat1's redefinition lost its MAC $mac"; }
expect "Network nat1 destroyed" "${V[@]}" net-destroy nat1
[ ! -e /sys/class/net/virbr0 ] || fail "virbr0 is left after net-destroy"
! nft list table ip remvirt_virbr0 > /dev/null 2>&1 || fail "the nft table is left after net-destroy"
_no_dnsmasq() { [ -z "$(dnsmasq_pids nat1)" ]; }
wait_for 10 "nat1's dnsmasq to exit" _no_dnsmasq || fail "dnsmasq is left after net-destroy"
left=$(cd "$NETS" && ls nat1.* 2> /dev/null || true)
[ -z "$left" ] || fail "files left after net-destroy: $left"
echo "ok   net-destroy nat1: no virbr0, no dnsmasq, no table, no files"

# Autostart: as after a reboot of the host (remvirtd stopped, everything
# it made gone), nat1 starts with remvirtd, on its new bridge.
expect "Network nat1 marked as autostarted" "${V[@]}" net-autostart nat1
expect "Network nat1 started" "${V[@]}" net-start nat1
stop_remvirtd
kill -TERM $(dnsmasq_pids nat1)
ip link del rvnat9
nft delete table ip remvirt_rvnat9
rm -f "$NETS"/nat1.*
wait_for 10 "dnsmasq to exit" _no_dnsmasq || fail "dnsmasq does not exit"
start_remvirtd_qemu
_autostarted()
{
    "${VQ[@]}" net-list > "$OUT/list" && grep -Eq '^ *nat1 +active +yes +yes$' "$OUT/list"
}
wait_for 10 "nat1 to autostart" _autostarted || { show "$OUT/list"; fail "nat1 did not autostart"; }
[ -e /sys/class/net/rvnat9/bridge ] && [ "$(dnsmasq_pids nat1 | wc -w)" = 1 ] &&
    nft list table ip remvirt_rvnat9 > /dev/null || fail "nat1 autostarted without its bridge, dnsmasq or table"
echo "ok   nat1 autostarted with remvirtd: rvnat9, dnsmasq, remvirt_rvnat9"
expect "Network nat1 unmarked as autostarted" "${V[@]}" net-autostart --disable nat1
expect "Network nat1 destroyed" "${V[@]}" net-destroy nat1
[ ! -e /sys/class/net/rvnat9 ] || fail "rvnat9 is left after net-destroy"

# An isolated network, transient, without DHCP.
cat > "$OUT/iso1.xml" <<XML
<network><name>iso1</name><bridge name='rviso1'/><ip address='10.77.0.1' prefix='16'/></network>
XML
expect "Network iso1 created from $OUT/iso1.xml" "${V[@]}" net-create "$OUT/iso1.xml"
grep -q "inet 10.77.0.1/16" <<< "$(ip -o -4 addr show dev rviso1)" || fail "rviso1 has not 10.77.0.1/16"
nft list table ip remvirt_rviso1 > "$OUT/iso-table"
grep -q reject "$OUT/iso-table" && ! grep -q masquerade "$OUT/iso-table" ||
    { show "$OUT/iso-table"; fail "iso1's table"; }
# The address is taken now.
sed 's/nat1/nat2/; s/0e1f6a52-8d1c-4c55-9a8e-5d2b7c1a0f01/0e1f6a52-8d1c-4c55-9a8e-5d2b7c1a0f02/; s/192.168.150/10.77.5/g' \
    "$OUT/nat1.xml" > "$OUT/nat2.xml"
expect_error "conflicts with an address of interface 'rviso1'" "${V[@]}" net-create "$OUT/nat2.xml"
expect "Network iso1 destroyed" "${V[@]}" net-destroy iso1
[ ! -e /sys/class/net/rviso1 ] || fail "rviso1 is left"
expect_error "no network with matching name 'iso1'" "${V[@]}" net-info iso1

# Errors leave nothing behind.
ip link add rvtaken type bridge
cat > "$OUT/taken.xml" <<XML
<network><name>taken</name><forward mode='nat'/><bridge name='rvtaken'/><ip address='192.168.152.1' prefix='24'/></network>
XML
expect_error "bridge name 'rvtaken' is already in use" "${V[@]}" net-create "$OUT/taken.xml"
[ -e /sys/class/net/rvtaken ] || fail "a failed start deleted the host's bridge rvtaken"
mount --bind /dev/null "$(command -v dnsmasq)"
expect_error "needs dnsmasq, which is not installed" "${V[@]}" net-start nat1
umount "$(command -v dnsmasq)"
[ ! -e /sys/class/net/rvnat9 ] || fail "rvnat9 is left after a failed start"
expect "" "${VQ[@]}" net-list
cat > "$OUT/v6.xml" <<XML
<network><name>v6</name><ip family='ipv6' address='fd00::1' prefix='64'/></network>
XML
expect_error "only IPv4 addresses" "${V[@]}" net-define "$OUT/v6.xml"
cat > "$OUT/route.xml" <<XML
<network><name>r1</name><forward mode='route'/><ip address='192.168.153.1' prefix='24'/></network>
XML
expect_error "network forward mode 'route' is not supported" "${V[@]}" net-define "$OUT/route.xml"
cat > "$OUT/badrange.xml" <<XML
<network><name>bad</name><forward mode='nat'/><ip address='192.168.154.1' prefix='24'><dhcp><range start='192.168.155.2' end='192.168.155.9'/></dhcp></ip></network>
XML
expect_error "is not within its subnet" "${V[@]}" net-define "$OUT/badrange.xml"

# Shapes against libvirtd's test driver, with the same definition (a
# bridge named: its test driver names none).
sed "s|<forward mode='nat'/>|&<bridge name='virbr0' stp='on' delay='0'/>|" "$OUT/nat1.xml" > "$OUT/same.xml"
expect "Network nat1 defined from $OUT/same.xml" "${V[@]}" net-define "$OUT/same.xml"
# Debian's default network (libvirt-daemon-config-network's file): its
# virbr0 is nat1's while nat1 is defined, then it is accepted as it is.
DEFAULT_XML=/usr/share/libvirt/networks/default.xml
if [ -r "$DEFAULT_XML" ]; then
    expect_error "bridge name 'virbr0' is already in use by network 'nat1'" \
        "${V[@]}" net-define "$DEFAULT_XML"
fi

start_libvirtd
virsh -c "$LIBVIRTD_URI" "net-define $OUT/same.xml; net-dumpxml nat1; net-info nat1" \
    > "$OUT/libvirtd" 2>&1 || { show "$OUT/libvirtd"; fail "libvirtd's test driver"; }
"${V[@]}" "net-dumpxml nat1; net-info nat1" > "$OUT/remvirtd.txt" 2>&1
grep -v "defined from" "$OUT/libvirtd" | sed '/^ *$/d' > "$OUT/l"
# (libvirtd's network driver gives a bridge a MAC at define; its test
# driver does not)
sed -e '/^ *$/d' -e "/^  <mac address='52:54:00:/d" "$OUT/remvirtd.txt" > "$OUT/r"
diff -u "$OUT/l" "$OUT/r" || fail "net-dumpxml/net-info differ from libvirtd's test driver"
echo "ok   net-dumpxml, net-info of an inactive nat1 as libvirtd's test driver prints them"
expect "Network nat1 has been undefined" "${V[@]}" net-undefine nat1
"${V[@]}" undefine g1 > /dev/null
if [ -r "$DEFAULT_XML" ]; then
    expect "Network default defined from $DEFAULT_XML" "${V[@]}" net-define "$DEFAULT_XML"
    expect "Network default has been undefined" "${V[@]}" net-undefine default
fi
