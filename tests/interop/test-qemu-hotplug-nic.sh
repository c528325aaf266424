#!/usr/bin/env bash
# Interface hotplug on the QEMU driver, side by side with libvirtd's QEMU
# driver, in a network namespace of the test's own with a bridge rvhp0:
# virsh attach-interface and detach-interface (bridge and user, --live,
# --config, --persistent, neither) and domif-setlink (live and --config)
# against a booted test guest (TCG) on each, with domiflist after each
# step, and the outputs compared (tap names masked: each daemon picks its
# own).  The tap remvirtd makes for a
# hotplugged bridge interface is on the bridge, and goes with it.  Then
# detach-device-alias of a NIC by its alias (net1) and the DEVICE_REMOVED
# event's alias through python3-libvirt.
set -euo pipefail
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view_cgroups
requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
ip link add rvhp0 type bridge
ip link set rvhp0 up
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/nic
mkdir -p "$OUT"
chmod 755 "$RV_TMP" "$OUT"

boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu_guest_xml g "" |
        sed "s|<serial type='pty'/>|<interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/></interface><serial type='file'><source path='$2/console'/></serial>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}
booted() { grep -q "remvirt-test-guest: ready" "$1/console" 2> /dev/null; }
nics()   # URI: how many interfaces the live XML has
{
    local xml
    xml=$(virsh -c "$1" dumpxml g) && grep -c "<interface " <<< "$xml"
}
count()  # URI N
{
    [ "$(nics "$1")" = "$2" ]
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"
wait_for 120 "libvirtd's guest to boot" booted "$LV"
wait_for 120 "remvirtd's guest to boot" booted "$RV"

for n in 3 5 6; do
    echo "<interface type='user'><mac address='52:54:00:00:00:0$n'/><model type='e1000'/></interface>" > "$OUT/user$n.xml"
done
# attach-interface has no user type: attach-device (as virt-manager and
# cockpit add one).
transcript()    # URI
{
    local u=$1 rc
    run() {
        rc=0
        (cd "$OUT" && virsh -c "$u" "$@") > "$OUT/o" 2> "$OUT/e" || rc=$?
        echo "=== virsh $*"
        sed 's/vnet[0-9]*/TAP/' "$OUT/o"
        echo "--- stderr"
        cat "$OUT/e"
        echo "--- exit status $rc"
    }
    run attach-interface g bridge rvhp0 --mac 52:54:00:00:00:02 --model virtio --live
    run attach-device g user3.xml --persistent
    run attach-interface g bridge rvhp0 --mac 52:54:00:00:00:04 --model e1000 --config
    # The link state (UPDATE_DEVICE_FLAGS; cockpit's Unplug and Plug).
    run domif-setlink g 52:54:00:00:00:03 down
    run domif-getlink g 52:54:00:00:00:03
    run domif-setlink g 52:54:00:00:00:03 down --config
    run domif-getlink g 52:54:00:00:00:03 --config
    run domif-setlink g 52:54:00:00:00:03 up
    run domif-getlink g 52:54:00:00:00:03
    run domif-getlink g 52:54:00:00:00:03 --config
    run domiflist g
    run domiflist g --inactive
    run detach-interface g bridge --mac 52:54:00:00:00:02 --live
    wait_for 60 "the NIC to go" count "$u" 2
    run detach-interface g bridge --mac 52:54:00:00:00:09 --live
    run detach-interface g bridge --mac 52:54:00:00:00:04 --config
    run detach-interface g user --mac 52:54:00:00:00:03 --persistent
    wait_for 60 "the NIC to go" count "$u" 1
    run domiflist g
    run domiflist g --inactive
    run destroy g
    run attach-device g user5.xml
    run attach-device g user6.xml --live
    run domiflist g --inactive
    run detach-interface g user --mac 52:54:00:00:00:05
    run domiflist g --inactive
}
transcript "$LIBVIRTD_QEMU_URI" > "$OUT/libvirtd.txt" || { cat "$OUT/libvirtd.txt"; fail "libvirtd transcript"; }
transcript "$QEMU_URI" > "$OUT/remvirtd.txt" || { cat "$OUT/remvirtd.txt"; fail "remvirtd transcript"; }
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "virsh attach-interface and detach-interface as against libvirtd"

# remvirtd's tap for a hotplugged bridge NIC: on the bridge, gone after.
virsh -q -c "$QEMU_URI" start g > /dev/null
: > "$RV/console"
wait_for 120 "the guest to boot again" booted "$RV"
virsh -q -c "$QEMU_URI" attach-interface g bridge rvhp0 --mac 52:54:00:00:00:07 --live > /dev/null
tap=$(virsh -c "$QEMU_URI" domiflist g | awk '$5 == "52:54:00:00:00:07" { print $1 }')
[ -n "$tap" ] && [ "$(basename "$(readlink "/sys/class/net/$tap/master")")" = rvhp0 ] ||
    fail "the hotplugged NIC's tap '$tap' is not on rvhp0"
echo "ok   the hotplugged NIC's tap $tap is on rvhp0"

# By alias, with the event (net0 came with the guest: the new one is net1).
"$SYSTEM_PYTHON3" - "$QEMU_URI" <<'PY' || fail "detach-device-alias of a NIC"
import sys
import threading

import libvirt

libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("g")
got = threading.Event()
aliases = []
conn.domainEventRegisterAny(dom, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
                            lambda c, d, alias, o: (aliases.append(alias), got.set()), None)
threading.Thread(target=lambda: [libvirt.virEventRunDefaultImpl() for _ in iter(int, 1)], daemon=True).start()
if "<alias name='net1'/>" not in dom.XMLDesc(0):
    sys.exit("FAIL: the hotplugged NIC is not net1:\n" + dom.XMLDesc(0))
dom.detachDeviceAlias("net1", libvirt.VIR_DOMAIN_AFFECT_LIVE)
if not got.wait(60):
    sys.exit("FAIL: no DEVICE_REMOVED")
if aliases != ["net1"]:
    sys.exit(f"FAIL: DEVICE_REMOVED for {aliases}")
print("ok   detach-device-alias net1: DEVICE_REMOVED net1")
PY
wait_for 30 "the tap to go" sh -c "! [ -e /sys/class/net/$tap ]"
echo "ok   its tap went with it"
