#!/usr/bin/env bash
# NETWORK_UPDATE (virsh net-update) on both drivers, side by side with a
# stock libvirtd 9.0 in a network and mount namespace of the test's own:
# network-update-checks.py makes the same calls (every section, command
# and flag, good and bad) against libvirtd's network driver and remvirtd's
# QEMU driver on a NAT network of each (inactive, running, destroyed,
# transient), and against both test drivers' "default" network; the
# transcripts (results, errors, live and inactive XML after each call,
# network events) must be the same.  Then remvirtd's dnsmasq: a host
# added live is in its hostsfile and the same dnsmasq read it (SIGHUP), a
# DHCP range added live restarts it with the range; and virsh net-update
# itself.
set -euo pipefail
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
checks "$LIBVIRTD_URI" test 192.168.122 virbr0 libvirtd-test
checks "$REMVIRTD_URI" test 192.168.122 virbr0 remvirtd-test
same "$OUT/libvirtd-test" "$OUT/remvirtd-test" "net-update on test:///default: remvirtd's test driver as libvirtd's"
echo "ok   $(grep -c '^===' "$OUT/remvirtd-test") NETWORK_UPDATE steps on the test drivers, the same transcripts"

# remvirtd's dnsmasq follows live updates.
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
pid=$(cat "$NETS/nat2.pid")
has_line "$NETS/nat2.hostsfile" "52:54:00:aa:bb:10,192.168.152.50,fixed1" ||
    { show "$NETS/nat2.hostsfile"; fail "nat2's hostsfile lacks its host"; }
out=$("${V[@]}" net-update nat2 add ip-dhcp-host "<host mac='52:54:00:aa:bb:11' name='web' ip='192.168.152.51'/>" --live --config 2>&1)
grep -q "Updated network nat2 persistent config and live state" <<< "$out" || fail "net-update said: $out"
has_line "$NETS/nat2.hostsfile" "52:54:00:aa:bb:11,192.168.152.51,web" ||
    { show "$NETS/nat2.hostsfile"; fail "the host added live is not in nat2's hostsfile"; }
[ "$(cat "$NETS/nat2.pid")" = "$pid" ] && kill -0 "$pid" || fail "dnsmasq $pid did not stay for a host added live"
grep -q "192.168.152.51" "$QEMU_DIR/etc/networks/nat2.xml" || fail "the host is not in nat2's definition file"
"${V[@]}" net-update nat2 add dns-host "<host ip='192.168.152.70'><hostname>www</hostname></host>" --live > /dev/null
has_line "$NETS/nat2.addnhosts" "192.168.152.70 www" || { show "$NETS/nat2.addnhosts"; fail "addnhosts"; }
_answers() { [ "$(dig +short +time=1 +tries=1 @192.168.152.1 www 2>/dev/null)" = 192.168.152.70 ]; }
if command -v dig > /dev/null; then
    wait_for 10 "dnsmasq to answer for www" _answers || fail "dnsmasq does not resolve the DNS host added live"
    echo "ok   dnsmasq resolves the DNS host added live (SIGHUP)"
fi
echo "ok   a host added live: in nat2's hostsfile, the same dnsmasq ($pid) told, the definition file has it"
"${V[@]}" net-update nat2 add ip-dhcp-range "<range start='192.168.152.200' end='192.168.152.210'/>" --live > /dev/null
_restarted()
{
    local now
    now=$(cat "$NETS/nat2.pid" 2> /dev/null) && [ -n "$now" ] && [ "$now" != "$pid" ] && kill -0 "$now" 2> /dev/null
}
wait_for 20 "dnsmasq to start again" _restarted || fail "dnsmasq was not restarted for a new range"
grep -q "dhcp-range=192.168.152.200,192.168.152.210" "$NETS/nat2.dnsmasq.conf" || fail "the new range is not in dnsmasq.conf"
kill -0 "$pid" 2> /dev/null && [ "$(tr '\0' ' ' < "/proc/$pid/cmdline")" != "" ] && fail "the old dnsmasq $pid runs on"
echo "ok   a DHCP range added live restarts dnsmasq ($pid -> $(cat "$NETS/nat2.pid")) with it"
"${V[@]}" net-destroy nat2 > /dev/null
[ ! -e "$NETS/nat2.hostsfile" ] && [ ! -e "$NETS/nat2.addnhosts" ] || fail "nat2's hosts files outlive it"
_no_dnsmasq()
{
    local f
    for f in /proc/[0-9]*/cmdline; do
        { tr '\0' ' ' < "$f"; } 2> /dev/null | grep -qF -- "--conf-file=$NETS/nat2.dnsmasq.conf" && return 1
    done
    return 0
}
wait_for 10 "nat2's dnsmasq to exit" _no_dnsmasq || fail "a dnsmasq of nat2 outlives net-destroy"
echo "ok   net-destroy: no dnsmasq left, hosts files removed"
