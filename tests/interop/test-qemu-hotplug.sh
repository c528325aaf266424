#!/usr/bin/env bash
# Disk hotplug on the QEMU driver, side by side with libvirtd's QEMU
# driver: the same virsh commands (attach-disk, detach-disk,
# detach-device-alias, change-media of a cdrom, domblklist) against a booted test guest (TCG) on
# each, --live, --config, --persistent and neither, with their errors, and
# the outputs compared (the guests' directories masked).  Then through
# python3-libvirt: DEVICE_ADDED after an attach and DEVICE_REMOVED after a
# detach reach a subscriber, with the disk's alias, on both; the time from
# the call to each event is printed for both (the figure in
# docs/qemu-driver.md).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu hotplug

# One guest per daemon, its console in a file (to see it booted), its
# disks in a directory of its own.
boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu-img create -q -f raw "$2/d1.img" 8M
    qemu-img create -q -f qcow2 "$2/d2.qcow2" 8M
    qemu-img create -q -f raw "$2/d3.img" 8M
    qemu-img create -q -f raw "$2/cd.iso" 1M
    chmod 666 "$2"/*
    qemu_guest_xml g "" | sed "s|<serial type='pty'/>|<disk type='file' device='cdrom'><target dev='hdc' bus='ide'/></disk><serial type='file'><source path='$2/console'/></serial>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}
booted() { grep -q "remvirt-test-guest: ready" "$1/console" 2> /dev/null; }
gone()   # URI TARGET: the live XML has no such disk any more
{
    local list
    list=$(virsh -c "$1" domblklist g) && ! grep -q "^ *$2 " <<< "$list"
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"
wait_for 120 "libvirtd's guest to boot" booted "$LV"
wait_for 120 "remvirtd's guest to boot" booted "$RV"

transcript()    # URI DIR
{
    local u=$1 d=$2 rc
    run() {
        rc=0
        virsh -c "$u" "$@" > "$OUT/o" 2> "$OUT/e" || rc=$?
        echo "=== virsh $*"
        cat "$OUT/o"
        echo "--- stderr"
        cat "$OUT/e"
        echo "--- exit status $rc"
    }
    run attach-disk g "$d/d1.img" vdb --live
    run attach-disk g "$d/d1.img" vdb --live
    run attach-disk g "$d/d2.qcow2" vdc --subdriver qcow2 --persistent
    run attach-disk g "$d/d3.img" vdd --config
    run attach-disk g "$d/d3.img" vdd --config
    run domblklist g
    run domblklist g --inactive
    run detach-disk g vdb --live
    wait_for 60 "vdb to go" gone "$u" vdb
    run detach-disk g vdb --live
    run detach-disk g vdx --config
    run detach-device-alias g virtio-disk2
    wait_for 60 "vdc to go" gone "$u" vdc
    run detach-device-alias g virtio-disk9
    run change-media g hdc "$d/cd.iso" --insert --live
    run domblklist g
    run change-media g hdc "$d/d3.img" --update --live --config
    run domblklist g
    run domblklist g --inactive
    run change-media g hdc --eject --live
    run domblklist g
    run change-media g hdc --eject --config
    run domblklist g --inactive
    run detach-disk g hdc --live
    run domblklist g
    run detach-disk g vdc --config
    run detach-disk g vdd
    run domblklist g --inactive
    run attach-disk g "$d/d1.img" vdb --persistent
    run detach-disk g vdb --persistent
    wait_for 60 "vdb to go" gone "$u" vdb
    run domblklist g
    run domblklist g --inactive
    run destroy g
    run attach-disk g "$d/d1.img" vdb
    run attach-disk g "$d/d3.img" vde --live
    run domblklist g --inactive
    run detach-disk g vdb
    run domblklist g --inactive
}
transcript "$LIBVIRTD_QEMU_URI" "$LV" | sed "s|$LV|DIR|g" > "$OUT/libvirtd.txt"
transcript "$QEMU_URI" "$RV" | sed "s|$RV|DIR|g" > "$OUT/remvirtd.txt"
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "virsh attach-disk, detach-disk and detach-device-alias as against libvirtd"
# (The same text could be the same failure: the changes did happen.)
for what in "Disk attached successfully" "Disk detached successfully" "Successfully inserted media" \
            "Successfully updated media" "Successfully ejected media" "DIR/cd.iso" "DIR/d3.img"; do
    grep -q "$what" "$OUT/remvirtd.txt" || fail "no '$what' in the transcript"
done

# The events, and how long they take from the call.
events()        # URI DIR
{
    virsh -q -c "$1" start g > /dev/null
    : > "$2/console"
    wait_for 120 "the guest to boot again" booted "$2"
    PYTHONPATH="$top_srcdir/tests/tools" "$SYSTEM_PYTHON3" - "$1" "$2" <<'PY'
import sys
import time

import libvirt

from device_events import DeviceEvents, event_loop

event_loop()
conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("g")
events = DeviceEvents(conn, dom)


def wait(kind, since):
    e = events.wait(kind, since=since)
    if not e:
        sys.exit(f"FAIL: no {kind} event")
    return (e[0], dom.name(), e[1], e[2])


xml = f"<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='{sys.argv[2]}/d1.img'/><target dev='vdb' bus='virtio'/></disk>"
times = {"added": [], "removed": []}
for _ in range(3):
    t0 = time.monotonic()
    dom.attachDeviceFlags(xml, libvirt.VIR_DOMAIN_AFFECT_LIVE)
    e = wait("added", t0)
    times["added"].append(e[3] - t0)
    print(f"event {e[0]} {e[1]} {e[2]}")
    time.sleep(1)   # the guest takes the disk in before it is asked to let go
    t0 = time.monotonic()
    dom.detachDeviceFlags(xml, libvirt.VIR_DOMAIN_AFFECT_LIVE)
    e = wait("removed", t0)
    times["removed"].append(e[3] - t0)
    print(f"event {e[0]} {e[1]} {e[2]}")
for k, v in times.items():
    v.sort()
    print(f"timing {k}: median {v[1] * 1000:.0f} ms (of {', '.join(f'{x * 1000:.0f}' for x in v)})", file=sys.stderr)
PY
}
events "$LIBVIRTD_QEMU_URI" "$LV" > "$OUT/libvirtd.ev" 2> "$OUT/libvirtd.time" ||
    { cat "$OUT/libvirtd.ev" "$OUT/libvirtd.time"; fail "events from libvirtd"; }
events "$QEMU_URI" "$RV" > "$OUT/remvirtd.ev" 2> "$OUT/remvirtd.time" ||
    { cat "$OUT/remvirtd.ev" "$OUT/remvirtd.time"; fail "events from remvirtd"; }
same "$OUT/libvirtd.ev" "$OUT/remvirtd.ev" "DEVICE_ADDED and DEVICE_REMOVED events as libvirtd's"
sed 's/^/libvirtd: /' "$OUT/libvirtd.time"
sed 's/^/remvirtd: /' "$OUT/remvirtd.time"
