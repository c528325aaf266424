#!/usr/bin/env bash
# nova's libvirt driver (python3-nova 26, in-process:
# tests/interop/nova-hotplug.py) attaches and detaches a file-backed
# volume and a bridge interface on a running guest, against libvirtd's
# QEMU driver and against remvirtd's, in a network namespace of the
# test's own with a bridge rvnova0: the devices nova made, live and
# persistent, must be the same from both, and each detach must end on
# DEVICE_REMOVED (nova waits for it) before nova's timeout (issue 29).
set -euo pipefail
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view_cgroups
requires "$SYSTEM_PYTHON3" -c 'import nova.virt.libvirt.driver, vif_plug_linux_bridge'
ip link add rvnova0 type bridge
ip link set rvnova0 up
start_both_qemu nova

run()   # NAME URI
{
    local dir=$OUT/$1 uuid=6a5b6c1e-0000-4000-8000-000000000001
    mkdir -p "$dir"
    chmod 777 "$dir"
    qemu_guest_xml g |
        sed -e "s|<name>g</name>|<name>instance-00000001</name><uuid>$uuid</uuid>|" \
            -e "s|<serial type='pty'/>|<interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/></interface><serial type='file'><source path='$dir/console'/></serial>|" \
        > "$dir/g.xml"
    virsh -q -c "$2" define "$dir/g.xml" > /dev/null
    virsh -q -c "$2" start instance-00000001 > /dev/null
    wait_for 240 "$1's guest to boot" grep -q "remvirt-test-guest: ready" "$dir/console"
    qemu-img create -q -f raw "$dir/volume" 16M
    chmod 666 "$dir/volume"
    env PYTHONDONTWRITEBYTECODE=1 "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/nova-hotplug.py" \
        "$2" "$dir/state" "$uuid" "$dir/volume" rvnova0 > "$dir/out" 2> "$dir/err" ||
        { tail -40 "$dir/err"; cat "$dir/out"; fail "nova hotplug against $1"; }
    sed -i "s|$dir/|DIR/|g" "$dir/out"
    grep "^time " "$dir/err" | sed "s/^/$1 /"
}
run libvirtd "$LIBVIRTD_QEMU_URI"
run remvirtd "$QEMU_URI"
same "$OUT/libvirtd/out" "$OUT/remvirtd/out" "nova's attach and detach of a volume and an interface as through libvirtd"
cat "$OUT/remvirtd/out"
