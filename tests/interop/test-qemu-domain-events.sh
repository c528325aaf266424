#!/usr/bin/env bash
# The domain events a running guest gives rise to, with real QEMU (TCG)
# under remvirtd and under libvirtd's QEMU driver side by side: the same
# actions through python3-libvirt (tests/interop/qemu-events-checks.py:
# the guest agent connecting, metadata, live vcpupin, emulatorpin and
# blkdeviotune, a VNC client, a cdrom eject, setmem) give the same
# events with the same fields.  `virsh event --all --loop` on remvirtd
# sees each kind too.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu domevents

define()    # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu-img create -q -f raw "$2/vda.img" 8M
    qemu-img create -q -f raw "$2/cd.iso" 1M
    chmod 666 "$2"/*
    qemu_guest_xml g "" | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><source file='$2/vda.img'/><target dev='vda' bus='virtio'/></disk><disk type='file' device='cdrom'><source file='$2/cd.iso'/><target dev='hdc' bus='ide'/></disk><serial type='file'><source path='$2/console'/></serial><channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel><graphics type='vnc' autoport='yes' listen='127.0.0.1'/>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
define "$LIBVIRTD_QEMU_URI" "$LV"
define "$QEMU_URI" "$RV"
bg "$OUT/virsh-events" virsh -c "$QEMU_URI" event --all --loop
sleep 1
"$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/qemu-events-checks.py" "$LIBVIRTD_QEMU_URI" g \
    > "$OUT/libvirtd.txt"
"$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/qemu-events-checks.py" "$QEMU_URI" g \
    > "$OUT/remvirtd.txt"
cat "$OUT/libvirtd.txt" >&2
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "the events of the same actions as libvirtd's"
for kind in AGENT_LIFECYCLE METADATA_CHANGE TUNABLE GRAPHICS TRAY_CHANGE BALLOON_CHANGE; do
    grep -q " $kind g " "$OUT/remvirtd.txt" || fail "no $kind event"
done
cat "$OUT/remvirtd.txt"
echo "ok   the same events as libvirtd's: $(wc -l < "$OUT/remvirtd.txt") of them"

for kind in agent-lifecycle metadata-change tunable graphics tray-change balloon-change; do
    grep -q "event '$kind' for domain 'g'" "$OUT/virsh-events" ||
        { cat "$OUT/virsh-events"; fail "virsh event --all saw no $kind event"; }
done
echo "ok   virsh event --all --loop saw each kind"
