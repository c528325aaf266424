#!/usr/bin/env bash
# The QEMU driver's networks on a host bridge, in a network and mount
# namespace of the test's own (its bridge rvbr0, sysfs of that namespace,
# and qemu-bridge-helper's /etc/qemu/bridge.conf on an overlay of /etc:
# nothing outside changes): net-define with <forward mode='bridge'/>,
# net-start (refused while the bridge is missing), net-list, net-info,
# net-dumpxml, net-autostart across a restart of remvirtd, a guest with
# <interface type='network'> whose tap lands on the bridge (and a
# user-mode guest beside it), net-destroy, net-undefine, the network
# events; routed and open networks refused naming their mode.
set -euo pipefail
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view
requires virsh
HELPER=/usr/lib/qemu/qemu-bridge-helper
[ -x "$HELPER" ] || skip "no $HELPER (qemu-system-common)"

# bridge.conf for the helper, in this namespace only.
mkdir -p "$RV_TMP/etc-up" "$RV_TMP/etc-work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$RV_TMP/etc-up,workdir=$RV_TMP/etc-work" /etc
mkdir -p /etc/qemu
echo "allow rvbr0" > /etc/qemu/bridge.conf

start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
VQ=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
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

bg "$OUT/events" virsh -c "$QEMU_URI" net-event --loop --event lifecycle
cat > "$OUT/warm.xml" <<XML
<network><name>warm</name><forward mode='bridge'/><bridge name='rvbr0'/></network>
XML
_subscribed()
{
    "${V[@]}" net-define "$OUT/warm.xml" > /dev/null 2>&1
    "${V[@]}" net-undefine warm > /dev/null 2>&1
    grep -q "network warm:" "$OUT/events"
}
wait_for 30 "virsh net-event to see a definition" _subscribed

cat > "$OUT/br.xml" <<XML
<network>
  <name>hostbr</name>
  <uuid>3e3fce45-4f53-4fa7-bb32-11f34168da01</uuid>
  <forward mode='bridge'/>
  <bridge name='rvbr0'/>
</network>
XML
expect "Network hostbr defined from $OUT/br.xml" "${V[@]}" net-define "$OUT/br.xml"
expect_error "no bridge 'rvbr0'" "${V[@]}" net-start hostbr
ip link add rvbr0 type bridge
ip link set rvbr0 up
expect "Network hostbr started" "${V[@]}" net-start hostbr
"${V[@]}" net-info hostbr > "$OUT/info"
for line in "Name:           hostbr" "UUID:           3e3fce45-4f53-4fa7-bb32-11f34168da01" \
            "Active:         yes" "Persistent:     yes" "Autostart:      no" "Bridge:         rvbr0"; do
    has_line "$OUT/info" "$line" || { show "$OUT/info"; fail "net-info lacks '$line'"; }
done
"${V[@]}" net-dumpxml hostbr > "$OUT/dump.xml"
grep -q "<forward mode='bridge'/>" "$OUT/dump.xml" || { show "$OUT/dump.xml"; fail "net-dumpxml"; }

# A guest on the network, and one with user-mode networking beside it.
qemu_domain_xml g1 "<interface type='network'><mac address='52:54:00:aa:bb:01'/><source network='hostbr'/><model type='e1000'/></interface>" > "$OUT/g1.xml"
qemu_domain_xml g2 "<interface type='user'><mac address='52:54:00:aa:bb:02'/><model type='e1000'/></interface>" > "$OUT/g2.xml"
"${V[@]}" define "$OUT/g1.xml" > /dev/null
"${V[@]}" define "$OUT/g2.xml" > /dev/null
expect "Domain 'g1' started" "${V[@]}" start g1
expect "Domain 'g2' started" "${V[@]}" start g2
_tap_on_bridge() { [ -n "$(ip -o link show master rvbr0)" ]; }
wait_for 10 "a tap on rvbr0" _tap_on_bridge
echo "ok   g1's tap is on rvbr0: $(ip -o link show master rvbr0 | cut -d: -f2)"
"${V[@]}" dumpxml g1 > "$OUT/g1-live.xml"
grep -q "<source network='hostbr' bridge='rvbr0'/>" "$OUT/g1-live.xml" ||
    { show "$OUT/g1-live.xml"; fail "g1's live XML does not name the bridge"; }
# As root remvirtd made the tap itself: named, counted, gone with QEMU.
grep -q "<target dev='vnet0'/>" "$OUT/g1-live.xml" || { show "$OUT/g1-live.xml"; fail "g1's tap is not vnet0"; }
[ "$(cat /sys/class/net/vnet0/address)" = fe:54:00:aa:bb:01 ] || fail "vnet0's MAC is not fe: and the guest's"
"${V[@]}" domifstat g1 vnet0 > "$OUT/ifstat"
has_line "$OUT/ifstat" "vnet0 tx_drop 0" || { show "$OUT/ifstat"; fail "domifstat g1 vnet0"; }
"${V[@]}" dumpxml --inactive g1 > "$OUT/g1-def.xml"
grep -q "<source network='hostbr'/>" "$OUT/g1-def.xml" || { show "$OUT/g1-def.xml"; fail "g1's definition"; }
"${V[@]}" destroy g1 > /dev/null
"${V[@]}" destroy g2 > /dev/null
[ ! -e /sys/class/net/vnet0 ] || fail "vnet0 is left after g1's destroy"

# Autostart, across a restart.
expect "Network hostbr marked as autostarted" "${V[@]}" net-autostart hostbr
expect "Network hostbr destroyed" "${V[@]}" net-destroy hostbr
expect_error "network 'hostbr' is not active" "${V[@]}" start g1
stop_remvirtd
start_remvirtd_qemu
"${VQ[@]}" net-list --all > "$OUT/list"
grep -Eq '^ *hostbr +active +yes +yes$' "$OUT/list" || { show "$OUT/list"; fail "hostbr not autostarted"; }

# Routed and open networks are not made here (NAT and isolated ones are:
# test-qemu-nat-network.sh).
cat > "$OUT/route.xml" <<XML
<network><name>r1</name><forward mode='route'/><bridge name='virbr9'/>
  <ip address='192.168.199.1' netmask='255.255.255.0'/></network>
XML
expect_error "network forward mode 'route' is not supported" "${V[@]}" net-define "$OUT/route.xml"
cat > "$OUT/open.xml" <<XML
<network><name>o1</name><forward mode='open'/><bridge name='virbr8'/></network>
XML
expect_error "network forward mode 'open' is not supported" "${V[@]}" net-create "$OUT/open.xml"

for name in ../../evil .hidden; do
    printf "<network><name>%s</name><forward mode='bridge'/><bridge name='rvbr0'/></network>" \
        "$name" > "$OUT/bad.xml"
    expect_error "invalid network name" "${V[@]}" net-define "$OUT/bad.xml"
done
[ ! -e "$QEMU_DIR/evil.xml" ] || fail "a network name made a file outside the networks directory"

expect "Network hostbr destroyed" "${V[@]}" net-destroy hostbr
expect "Network hostbr has been undefined" "${V[@]}" net-undefine hostbr
[ -z "$("${VQ[@]}" net-list --all)" ] || fail "networks left"
"${V[@]}" undefine g1 > /dev/null
"${V[@]}" undefine g2 > /dev/null

sed -n "s/^event 'lifecycle' for network \(hostbr\): \(.*\)$/\1 \2/p" "$OUT/events" > "$OUT/seen"
printf '%s\n' "hostbr Defined" "hostbr Started" "hostbr Stopped" > "$OUT/want"
diff -u "$OUT/want" "$OUT/seen" || fail "network events differ"
echo "ok   network events: $(tr '\n' ',' < "$OUT/seen")"
