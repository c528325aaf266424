#!/usr/bin/env bash
# Hotplug on a q35 guest, side by side with libvirtd's QEMU driver.  QEMU
# cannot hotplug onto q35's root bus (pcie.0): a device attached to a
# running q35 guest goes behind a free pcie-root-port, as libvirtd puts it
# (virt-install and virt-manager define q35 guests with spare ports for
# this).  Through python3-libvirt on a booted test guest (TCG) with two
# spare ports (no USB controller and no balloon, which libvirtd would put
# on them): a virtio disk and a virtio NIC (user networking) attached
# --live --config at the same time from two connections, with DEVICE_ADDED, the live XML placing each on a root
# port's bus, the guest taking them (the detach's DEVICE_REMOVED needs the
# guest's PCIe hotplug driver to let go); then a restart of the guest
# starts QEMU with them on the same ports; then a third device with no
# port left gets an error and changes nothing.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu q35

boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu-img create -q -f raw "$2/d1.img" 8M
    qemu-img create -q -f raw "$2/d2.img" 8M
    chmod 666 "$2"/*
    qemu_guest_xml g "" |
        sed -e "s|machine='pc'|machine='q35'|" \
            -e "s|<serial type='pty'/>|<controller type='usb' model='none'/><memballoon model='none'/><controller type='pci' model='pcie-root'/><controller type='pci' model='pcie-root-port'/><controller type='pci' model='pcie-root-port'/><serial type='file'><source path='$2/console'/></serial>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}
booted() { grep -q "remvirt-test-guest: ready" "$1/console" 2> /dev/null; }
LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"
wait_for 120 "libvirtd's guest to boot" booted "$LV"
wait_for 120 "remvirtd's guest to boot" booted "$RV"

check()     # URI DIR: what the client sees, in a form both daemons must share
{
    PYTHONPATH="$top_srcdir/tests/tools" "$SYSTEM_PYTHON3" - "$1" "$2" <<'PY'
import sys
import threading
import time
import xml.etree.ElementTree as ET

import libvirt

from device_events import DeviceEvents, event_loop

uri, d = sys.argv[1], sys.argv[2]
event_loop()
conn = libvirt.open(uri)
dom = conn.lookupByName("g")
events = DeviceEvents(conn, dom)


def wait(kind, alias):
    if not events.wait(kind, alias):
        sys.exit(f"FAIL: no {kind} event for {alias} (seen: {events.seen})")
    print(f"event {kind} {alias}")


def ports(root):
    """The buses of the root ports, by index."""
    return {int(c.get("index")) for c in root.iter("controller")
            if c.get("type") == "pci" and c.get("model") == "pcie-root-port"}


def bus_of(root, path, key, value):
    for e in root.iterfind(path):
        if e.find(key) is not None and value in ET.tostring(e.find(key), encoding="unicode"):
            return int(e.find("address").get("bus"), 16)
    sys.exit(f"FAIL: no device {value} in the live XML")


LIVE_CONFIG = libvirt.VIR_DOMAIN_AFFECT_LIVE | libvirt.VIR_DOMAIN_AFFECT_CONFIG
disk = (f"<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='{d}/d1.img'/>"
        "<target dev='vdb' bus='virtio'/></disk>")
nic = "<interface type='user'><mac address='52:54:00:aa:bb:01'/><model type='virtio'/></interface>"
# Both at once, from two connections: each must see the other's device
# (its port taken) and neither may be lost from the live XML.
errors = []


def attach(xml):
    try:
        libvirt.open(uri).lookupByName("g").attachDeviceFlags(xml, LIVE_CONFIG)
    except libvirt.libvirtError as e:
        errors.append(str(e))


threads = [threading.Thread(target=attach, args=(x,)) for x in (disk, nic)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if errors:
    sys.exit(f"FAIL: concurrent attaches: {errors}")
wait("added", "virtio-disk1")
wait("added", "net0")
for flags, what in ((0, "live"), (libvirt.VIR_DOMAIN_XML_INACTIVE, "config")):
    root = ET.fromstring(dom.XMLDesc(flags))
    dbus = bus_of(root, "devices/disk", "target", "vdb")
    nbus = bus_of(root, "devices/interface", "mac", "52:54:00:aa:bb:01")
    if dbus not in ports(root) or nbus not in ports(root) or dbus == nbus:
        sys.exit(f"FAIL: {what}: the disk on bus {dbus}, the NIC on {nbus}: not two root ports {ports(root)}")
    print(f"{what}: the disk and the NIC each behind a root port")
# No port left: an error, nothing attached.
try:
    dom.attachDeviceFlags(disk.replace("d1.img", "d2.img").replace("vdb", "vdc"), libvirt.VIR_DOMAIN_AFFECT_LIVE)
    sys.exit("FAIL: a third device with no free root port was attached")
except libvirt.libvirtError as e:
    print("no free port: refused")
if "vdc" in dom.XMLDesc(0):
    sys.exit("FAIL: the refused attach left vdc in the live XML")
time.sleep(2)   # the guest takes the disk in before it is asked to let go
dom.detachDeviceFlags(disk, libvirt.VIR_DOMAIN_AFFECT_LIVE)
wait("removed", "virtio-disk1")
if "vdb" in dom.XMLDesc(0) or "vdb" not in dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE):
    sys.exit("FAIL: after the live detach vdb should be in the definition only")
print("detach --live: DEVICE_REMOVED, the definition keeps it")
PY
}
check "$LIBVIRTD_QEMU_URI" "$LV" > "$OUT/libvirtd.out" 2>&1 || { cat "$OUT/libvirtd.out"; fail "libvirtd"; }
check "$QEMU_URI" "$RV" > "$OUT/remvirtd.out" 2>&1 || { cat "$OUT/remvirtd.out"; fail "remvirtd"; }
same "$OUT/libvirtd.out" "$OUT/remvirtd.out" "q35 hotplug as libvirtd's"
cat "$OUT/remvirtd.out"

# The next start: QEMU gets the devices on the ports the definition names.
virsh -q -c "$QEMU_URI" destroy g > /dev/null
: > "$RV/console"
virsh -q -c "$QEMU_URI" start g > /dev/null
wait_for 120 "remvirtd's guest to boot again" booted "$RV"
bus=$(virsh -q -c "$QEMU_URI" dumpxml g | grep -A3 "target dev='vdb'" | sed -n "s|.*<address type='pci' domain='0x0000' bus='0x\([0-9a-f]*\)'.*|\1|p")
[ -n "$bus" ] && [ "$bus" != 00 ] || fail "after a restart vdb is not behind a root port: $(virsh -q -c "$QEMU_URI" dumpxml g)"
grep -q "drive-virtio-disk1\|id=virtio-disk1" "$QEMU_DIR/run/g.log" 2>/dev/null || true
grep -q "bus=pci.$((16#$bus)),addr=0x0.0x0" "$QEMU_DIR/run/g.log" || fail "QEMU's command line does not put vdb on pci.$((16#$bus)): $(grep -o 'virtio-blk-pci[^ ]*' "$QEMU_DIR/run/g.log")"
echo "ok   after a restart QEMU has vdb on root port pci.$((16#$bus))"
