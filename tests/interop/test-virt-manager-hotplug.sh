#!/usr/bin/env bash
# Debian's virt-manager under Xvfb against remvirtd's QEMU driver (see
# test-virt-manager.sh for the machinery): on a running test guest (TCG),
# the details' Add Hardware of a disk (Storage: a new qcow2 image in the
# pool "default" virt-manager makes) and of a NIC (Network: usermode),
# then Remove of that disk, as a user clicks them (issue 29: hotplug works
# unchanged from virt-manager).  Each change is checked in the live XML
# and the definition, and virt-manager's libvirt log must show no error
# but the known probes.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/virt-manager-lib.sh"

requires_root
requires virsh
requires qemu-img --version
requires_virt_manager_ui
test_guest
start_remvirtd_qemu
start_xvfb

VM_URI="qemu+unix:///session?socket=$REMVIRTD_SOCK"
V=(virsh -q -c "$VM_URI")
# A virtio disk already: Add Hardware offers the bus of the guest's first
# disk (with none, IDE, which neither daemon hotplugs).
qemu-img create -q -f raw "$RV_TMP/vda.img" 8M
vda="<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$RV_TMP/vda.img'/><target dev='vda' bus='virtio'/></disk>"
qemu_guest_xml g | sed -e "s|<serial type='pty'/>|$vda<serial type='file'><source path='$RV_TMP/console'/></serial>|" > "$RV_TMP/g.xml"
"${V[@]}" define "$RV_TMP/g.xml" > /dev/null
"${V[@]}" start g > /dev/null
wait_for 120 "the guest to boot" grep -q "remvirt-test-guest: ready" "$RV_TMP/console"

export XDG_DATA_HOME=$RV_TMP/xdg
export VM_EXPECT_DOMAINS=g VM_DOMAIN=g
run_virt_manager qemu "$VM_URI" main addhw

live=$("${V[@]}" dumpxml g) config=$("${V[@]}" dumpxml --inactive g)
grep -q "<interface type='user'>" <<< "$live" || fail "the NIC virt-manager added is not in the live XML: $live"
grep -q "<interface type='user'>" <<< "$config" || fail "the NIC virt-manager added is not in the definition"
[ "$(grep -c "<target dev='vd" <<< "$live")" = 1 ] || fail "the disk virt-manager removed is still live: $live"
[ "$(grep -c "<target dev='vd" <<< "$config")" = 1 ] || fail "the disk virt-manager removed is still defined: $config"
ls "$XDG_DATA_HOME"/images/*.qcow2 > /dev/null 2>&1 || fail "no disk image was made in the pool"
echo "ok   the NIC is live and defined; the removed disk is gone from both"

wire_summary qemu
for proc in DOMAIN_ATTACH_DEVICE DOMAIN_DETACH_DEVICE STORAGE_VOL_CREATE_XML; do
    grep -qx "call $proc" "$RV_TMP/qemu.wire" || fail "virt-manager never called $proc"
done
allowed_failures=(
    # Add Hardware's probe that the new image's name is free.
    'STORAGE_VOL_LOOKUP_BY_NAME' 'STORAGE_VOL_LOOKUP_BY_PATH'
)
unexpected=$(grep '^fail ' "$RV_TMP/qemu.wire" || true)
for pattern in "${allowed_failures[@]}"; do
    unexpected=$(printf '%s\n' "$unexpected" | grep -Evx "fail $pattern" || true)
done
[ -z "$unexpected" ] ||
    fail "virt-manager got errors from the QEMU driver: $unexpected; $(grep '^error ' "$RV_TMP/qemu.wire")"
echo "ok   virt-manager's log: attach, detach and the new volume, no unexpected error"
