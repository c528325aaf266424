#!/usr/bin/env bash
# Disk hotplug to its event, remvirtd's QEMU driver against libvirtd's, in
# one run: each daemon (private, started here) runs the test guest
# (tests/tools/build-test-guest.sh's, TCG) as "g"; then, in turn, remvirtd
# and libvirtd, ROUNDS attach/detach cycles of a raw disk through
# python3-libvirt (bench/hotplug-events.py): milliseconds from the call to
# DEVICE_ADDED and from the detach to DEVICE_REMOVED (the guest's ACPI
# eject included), min / median / max for each daemon, over PAIRS pairs.
#
#   bench/run-hotplug.sh [--builddir DIR] [--rounds N] [--pairs N]
#                        [--exec 'COMMAND']
#
# --exec runs COMMAND with both guests up instead, with RV_URI, LV_URI,
# RV_IMAGE and LV_IMAGE exported (to time the cycles with another tool).
# Figures, not verdicts: exit status 0 when every cycle worked.
set -euo pipefail
builddir=./build
rounds=5
pairs=3
exec_cmd=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --pairs) pairs=${2:?}; shift 2 ;;
    --exec) exec_cmd=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-hotplug: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
start_libvirtd_qemu
start_remvirtd_qemu
chmod 755 "$RV_TMP"
boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu-img create -q -f raw "$2/d.img" 8M
    chmod 666 "$2/d.img"
    qemu_guest_xml g | sed "s|<serial type='pty'/>|<serial type='file'><source path='$2/console'/></serial>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}
booted() { grep -q "remvirt-test-guest: ready" "$1/console" 2> /dev/null; }
boot "$QEMU_URI" "$RV_TMP/rv"
boot "$LIBVIRTD_QEMU_URI" "$RV_TMP/lv"
wait_for 120 "remvirtd's guest to boot" booted "$RV_TMP/rv"
wait_for 120 "libvirtd's guest to boot" booted "$RV_TMP/lv"
export RV_URI=$QEMU_URI LV_URI=$LIBVIRTD_QEMU_URI RV_IMAGE=$RV_TMP/rv/d.img LV_IMAGE=$RV_TMP/lv/d.img
if [ -n "$exec_cmd" ]; then
    bash -c "$exec_cmd"
    exit
fi
echo "disk hotplug, $rounds cycles per run, $pairs pairs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$pairs"); do
    for who in remvirtd libvirtd; do
        if [ $who = remvirtd ]; then uri=$RV_URI img=$RV_IMAGE; else uri=$LV_URI img=$LV_IMAGE; fi
        "$SYSTEM_PYTHON3" "$abs_top_srcdir/bench/hotplug-events.py" "$uri" "$img" "$rounds" | sed "s/^/$who pair $i: /"
    done
done
