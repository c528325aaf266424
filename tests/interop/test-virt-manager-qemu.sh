#!/usr/bin/env bash
# Debian's virt-manager under Xvfb against remvirtd's QEMU driver (see
# test-virt-manager.sh for the machinery): the main window listing a
# running guest (tests/tools/build-test-guest.sh's, under TCG) and a
# defined one, the running guest's details (overview, CPUs, memory) and
# its serial console (its boot text after a reset, typed text echoed),
# Host Details' storage with the pool "default" virt-manager creates when
# it connects, and the New VM wizard to Finish (manual install, a new
# qcow2 disk in that pool, usermode networking), the new guest then
# running.  virt-manager's libvirt log must show no unknown procedure and
# no error but those listed below.
#
# virt-manager talks to qemu:///session (the socket's), even as root: it
# puts the default pool under $XDG_DATA_HOME/images when unprivileged
# (/var/lib/libvirt/images otherwise), here a temp dir, and offers
# usermode networking there (the QEMU driver has no NAT network).
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
qemu_guest_xml g > "$RV_TMP/g.xml"
qemu_domain_xml idle > "$RV_TMP/idle.xml"
"${V[@]}" define "$RV_TMP/g.xml" > /dev/null
"${V[@]}" define "$RV_TMP/idle.xml" > /dev/null
"${V[@]}" start g > /dev/null

export XDG_DATA_HOME=$RV_TMP/xdg
export VM_EXPECT_DOMAINS="g idle" VM_DOMAIN=g VM_EXPECT_POOL=default VM_NEW_NAME=fresh
export VM_CONSOLE_RESET="virsh -q -c '$VM_URI' reset g"
run_virt_manager qemu "$VM_URI" main details console host newvm new-disk

# The pool virt-manager made, and the guest the wizard made and started.
"${V[@]}" pool-dumpxml default | grep -qF "<path>$XDG_DATA_HOME/images</path>" ||
    fail "the pool default is not under $XDG_DATA_HOME/images"
[ -f "$XDG_DATA_HOME/images/fresh.qcow2" ] || fail "no fresh.qcow2 in the pool's directory"
# (-U: the running guest holds the image's lock.)
qemu-img info -U "$XDG_DATA_HOME/images/fresh.qcow2" | grep -qx 'file format: qcow2' ||
    fail "fresh.qcow2 is not a qcow2 image"
[ "$("${V[@]}" domstate fresh)" = running ] || fail "the new guest fresh is not running"
"${V[@]}" dumpxml fresh | grep -q "<interface type='user'>" ||
    fail "the new guest has no usermode interface"

# The calls whose failure virt-manager wants; any other failed call
# fails the test.
allowed_failures=(
    # The wizard's probes that the new guest's name and disk are free:
    # "not found" is the answer it wants (checked below).
    'DOMAIN_LOOKUP_BY_NAME' 'STORAGE_VOL_LOOKUP_BY_NAME' 'STORAGE_VOL_LOOKUP_BY_PATH'
)
wire_summary qemu
unexpected=$(grep '^fail ' "$RV_TMP/qemu.wire" || true)
for pattern in "${allowed_failures[@]}"; do
    unexpected=$(printf '%s\n' "$unexpected" | grep -Evx "fail $pattern" || true)
done
[ -z "$unexpected" ] ||
    fail "virt-manager got errors from the QEMU driver: $unexpected; $(grep '^error ' "$RV_TMP/qemu.wire")"
for probe in "Domain not found: no domain with matching name 'fresh'" \
    "Storage volume not found: no storage vol with matching name 'fresh.qcow2'"; do
    grep -qxF "error $probe" "$RV_TMP/qemu.wire" || fail "no \"$probe\" in virt-manager's log"
done
for proc in DOMAIN_GET_XML_DESC DOMAIN_OPEN_CONSOLE CONNECT_GET_DOMAIN_CAPABILITIES \
    STORAGE_POOL_DEFINE_XML STORAGE_VOL_CREATE_XML; do
    grep -qx "call $proc" "$RV_TMP/qemu.wire" || fail "virt-manager never called $proc"
done
echo "the QEMU driver: $(grep -c '^call' "$RV_TMP/qemu.wire") procedures, only the known failures"
