#!/usr/bin/env bash
# NETWORK_UPDATE (virsh net-update) on both drivers, side by side with a
# stock libvirtd 9.0 in a network and mount namespace of the test's own:
# network-update-checks.py makes the same calls (every section, command
# and flag, good and bad) against libvirtd's network driver and remvirtd's
# QEMU driver on a NAT network of each (inactive, running, destroyed,
# transient), and against both test drivers' "default" network; the
# transcripts (results, errors, live and inactive XML after each call,
# network events) must be the same.  Then remvirtd's dnsmasq through
# virsh net-update: a DHCP host (a booting guest with its MAC gets its
# address), a DNS host (dnsmasq answers for it) and a range added live
# are in its configuration and dnsmasq was restarted for each; two
# updates at once; nothing left after net-destroy.
set -euo pipefail
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view
requires virsh
requires nft --version
requires dnsmasq --version
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/out
NETS=$QEMU_DIR/run/networks
mkdir -p "$OUT"

checks()
{
    "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/network-update-checks.py" "$@" > "$OUT/$5" 2>&1 ||
        { show "$OUT/$5"; fail "network-update-checks.py $2 against $1 failed"; }
}
checks "$LIBVIRTD_QEMU_URI" qemu 192.168.151 virbr7 libvirtd-qemu
checks "$QEMU_URI" qemu 192.168.150 virbr3 remvirtd-qemu
same "$OUT/libvirtd-qemu" "$OUT/remvirtd-qemu" "net-update on a NAT network: remvirtd's QEMU driver as libvirtd's network driver"
echo "ok   $(grep -c '^===' "$OUT/remvirtd-qemu") NETWORK_UPDATE steps on the QEMU drivers, the same transcripts"
# The network events of both: lifecycle ones only (none for an update).
events=$(sed -n '/^=== events$/,$p' "$OUT/remvirtd-qemu" | tail -n +2 | tr '\n' ' ')
[ "$events" = "nat1 0 0 nat1 2 0 nat1 3 0 nat1 1 0 nat1 2 0 nat1 3 0 " ] ||
    fail "network events: '$events'"
echo "ok   events: $events(defined, started, stopped, undefined, started, stopped; none for updates)"
checks "$LIBVIRTD_URI" test 192.168.122 virbr0 libvirtd-test
checks "$REMVIRTD_URI" test 192.168.122 virbr0 remvirtd-test
same "$OUT/libvirtd-test" "$OUT/remvirtd-test" "net-update on test:///default: remvirtd's test driver as libvirtd's"
echo "ok   $(grep -c '^===' "$OUT/remvirtd-test") NETWORK_UPDATE steps on the test drivers, the same transcripts"

# remvirtd's dnsmasq follows live updates: its configuration rewritten
# and dnsmasq restarted (once the old one is gone).
V=(virsh -c "$QEMU_URI")
cat > "$OUT/nat2.xml" <<XML
<network>
  <name>nat2</name>
  <forward mode='nat'/>
  <bridge name='virbr4'/>
  <ip address='192.168.152.1' netmask='255.255.255.0'>
    <dhcp>
      <range start='192.168.152.100' end='192.168.152.199'/>
      <host mac='52:54:00:aa:bb:10' name='fixed1' ip='192.168.152.50'/>
    </dhcp>
  </ip>
</network>
XML
"${V[@]}" net-define "$OUT/nat2.xml" > /dev/null
"${V[@]}" net-start nat2 > /dev/null
_destroy_nat2() { virsh -q -c "$QEMU_URI" net-destroy nat2 > /dev/null 2>&1 || true; }
cleanup_fn _destroy_nat2      # no dnsmasq left behind when the test fails
CONF=$NETS/nat2.dnsmasq.conf
has_line "$CONF" "dhcp-host=52:54:00:aa:bb:10,192.168.152.50,fixed1" || { show "$CONF"; fail "nat2's dnsmasq.conf lacks its host"; }

# dnsmasq's pid, once a dnsmasq other than $1 runs
_restarted()
{
    local now
    now=$(cat "$NETS/nat2.pid" 2> /dev/null) && [ -n "$now" ] && [ "$now" != "$1" ] &&
        tr '\0' ' ' < "/proc/$now/cmdline" 2> /dev/null | grep -qF -- "--conf-file=$CONF"
}
# update WHAT ARGS...: net-update nat2 ARGS, then dnsmasq restarted; sets pid
pid=$(cat "$NETS/nat2.pid")
update()
{
    local what=$1 out
    shift
    out=$("${V[@]}" net-update nat2 "$@" 2>&1) || fail "net-update nat2 $*: $out"
    wait_for 20 "dnsmasq to start again ($what)" _restarted "$pid" || fail "dnsmasq was not restarted for $what"
    ! tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null | grep -qF -- "--conf-file=$CONF" ||
        fail "the old dnsmasq $pid runs on"
    echo "ok   $what: dnsmasq restarted ($pid -> $(cat "$NETS/nat2.pid"))"
    pid=$(cat "$NETS/nat2.pid")
}
update "a DHCP host added live and to the config" add ip-dhcp-host \
    "<host mac='52:54:00:aa:bb:11' name='web' ip='192.168.152.51'/>" --live --config
has_line "$CONF" "dhcp-host=52:54:00:aa:bb:11,192.168.152.51,web" || { show "$CONF"; fail "the host added live"; }
grep -q "192.168.152.51" "$QEMU_DIR/etc/networks/nat2.xml" || fail "the host is not in nat2's definition file"
# A guest with that MAC gets the address of the host added live.
if (test_guest) > /dev/null 2>&1; then
    test_guest
    qemu_guest_xml g1 | sed "s|<devices>|&<interface type='network'><mac address='52:54:00:aa:bb:11'/><source network='nat2'/><model type='virtio'/></interface>|" > "$OUT/g1.xml"
    "${V[@]}" define "$OUT/g1.xml" > /dev/null
    "${V[@]}" start g1 > /dev/null
    _leased()
    {
        virsh -q -c "$QEMU_URI" net-dhcp-leases nat2 > "$OUT/leases" 2>&1 &&
            grep -q "52:54:00:aa:bb:11 *ipv4 *192.168.152.51/24 *web" "$OUT/leases"
    }
    wait_for 120 "g1's DHCP lease" _leased || { show "$OUT/leases"; fail "g1 did not get the address of the host added live"; }
    echo "ok   a guest with the MAC of the host added live gets its address: $(tr -s ' ' < "$OUT/leases" | head -n 1)"
    "${V[@]}" destroy g1 > /dev/null
else
    echo "(no test guest here: the DHCP lease of the host added live is not tried)"
fi
update "a DNS host added live" add dns-host "<host ip='192.168.152.70'><hostname>www</hostname></host>" --live
has_line "$CONF" "host-record=www,192.168.152.70" || { show "$CONF"; fail "the DNS host added live"; }

# An A query for www to dnsmasq on the bridge, from a client on it (a
# veth into a namespace of its own: dnsmasq refuses the host's own
# queries, which come in on lo).
ip netns add rvq
cleanup_fn ip netns del rvq
ip link add rvq0 type veth peer name rvq1
ip link set rvq1 netns rvq
ip link set rvq0 master virbr4 up
ip -n rvq addr add 192.168.152.9/24 dev rvq1
ip -n rvq link set rvq1 up
_answers()
{
    ip netns exec rvq "$SYSTEM_PYTHON3" - <<'PY' 2> "$OUT/dns.err"
import socket, struct, sys
q = struct.pack(">HHHHHH", 0x5256, 0x0100, 1, 0, 0, 0) + b"\x03www\x00" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
s.sendto(q, ("192.168.152.1", 53))
r = s.recv(512)
print(r.hex(), file=sys.stderr)
sys.exit(0 if struct.unpack(">H", r[6:8])[0] > 0 and socket.inet_ntoa(r[-4:]) == "192.168.152.70" else 1)
PY
}
wait_for 10 "dnsmasq to answer for www" _answers ||
    { show "$OUT/dns.err"; show "$CONF"; fail "dnsmasq does not resolve the DNS host added live"; }
echo "ok   dnsmasq answers www with 192.168.152.70, the DNS host added live"
update "a DHCP range added live" add ip-dhcp-range "<range start='192.168.152.200' end='192.168.152.210'/>" --live
has_line "$CONF" "dhcp-range=192.168.152.200,192.168.152.210,255.255.255.0" || { show "$CONF"; fail "the range added live"; }
# Two restarts asked for at once: the second configuration wins.
"${V[@]}" net-update nat2 delete ip-dhcp-range "<range start='192.168.152.200' end='192.168.152.210'/>" --live > /dev/null
update "a DHCP host deleted live right after" delete ip-dhcp-host "<host mac='52:54:00:aa:bb:11'/>" --live
sleep 0.5
now=$(cat "$NETS/nat2.pid")
tr '\0' ' ' < "/proc/$now/cmdline" | grep -qF -- "--conf-file=$CONF" || fail "no dnsmasq runs for nat2"
! grep -q "192.168.152.200\|aa:bb:11" "$CONF" || { show "$CONF"; fail "dnsmasq.conf keeps what was deleted"; }
"${V[@]}" net-destroy nat2 > /dev/null
_no_dnsmasq()
{
    local f
    for f in /proc/[0-9]*/cmdline; do
        { tr '\0' ' ' < "$f"; } 2> /dev/null | grep -qF -- "--conf-file=$CONF" && return 1
    done
    return 0
}
wait_for 10 "nat2's dnsmasq to exit" _no_dnsmasq || fail "a dnsmasq of nat2 outlives net-destroy"
echo "ok   net-destroy: no dnsmasq of nat2 left"

# A definition grown by updates stays one remvirtd reads back: an add that
# would take it past the 64 KiB a network definition is read with is
# refused, and the network is there, whole, after a restart (kill -9).
"${V[@]}" net-define /dev/stdin > /dev/null <<XML
<network><name>big</name><bridge name='virbr9'/>
<ip address='10.9.0.1' netmask='255.255.0.0'/></network>
XML
"$SYSTEM_PYTHON3" - "$QEMU_URI" > "$OUT/big" 2>&1 <<'PY' || { show "$OUT/big"; fail "filling a network by updates"; }
import sys
import libvirt
net = libvirt.open(sys.argv[1]).networkLookupByName("big")
for i in range(5000):
    host = (f"<host mac='52:54:00:00:{i // 256:02x}:{i % 256:02x}' name='host-{i}' "
            f"ip='10.9.{1 + i // 250}.{1 + i % 250}'/>")
    try:
        net.update(libvirt.VIR_NETWORK_UPDATE_COMMAND_ADD_LAST,
                   libvirt.VIR_NETWORK_SECTION_IP_DHCP_HOST, -1, host,
                   libvirt.VIR_NETWORK_UPDATE_AFFECT_CONFIG)
    except libvirt.libvirtError as e:
        print(f"{i} {e.get_error_code()} {e}")
        break
PY
grep -q "^[0-9]* 27 XML error: network 'big' would be [0-9]* bytes after this update, over the limit of 65536" "$OUT/big" ||
    { show "$OUT/big"; fail "an update past the definition's size limit was not refused so"; }
added=$(sed -n 's/^\([0-9]*\) 27 .*/\1/p' "$OUT/big")
kill_remvirtd
start_remvirtd_qemu
hosts=$(virsh -q -c "$QEMU_URI" net-dumpxml big --inactive | grep -c "<host ")
[ "$hosts" = "$added" ] || fail "after a restart network big has $hosts hosts, not the $added added"
echo "ok   updates stop at the definition's size limit ($added hosts), and a restart reads it back whole"
