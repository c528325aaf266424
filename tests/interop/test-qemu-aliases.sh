#!/usr/bin/env bash
# Device aliases in the QEMU driver's live XML, side by side with
# libvirtd's QEMU driver: the same guest (every kind of device the XML
# subset has, pc and q35) started on both, and each device's alias in
# the live XML compared (cockpit opens the serial console by its alias,
# nova finds disks and NICs by theirs).  The inactive XML has none, and
# a live XML defines again as it is (the aliases dropped, as libvirtd).
# virsh console DOM serial0 opens the console by its alias.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires qemu-img --version
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/aliases
mkdir -p "$OUT"

guest()     # NAME MACHINE DIR
{
    local cd_bus=ide
    [ "$2" = pc ] || cd_bus=sata
    qemu-img create -q -f raw "$3/$1-a.img" 1M
    qemu-img create -q -f qcow2 "$3/$1-b.img" 1M
    qemu_domain_xml "$1" "
    <disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$3/$1-a.img'/><target dev='vdb' bus='virtio'/></disk>
    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$3/$1-b.img'/><target dev='sdb' bus='sata'/></disk>
    <disk type='file' device='cdrom'><target dev='hdc' bus='$cd_bus'/></disk>
    <interface type='user'><model type='virtio'/></interface>
    <interface type='user'><model type='e1000'/></interface>
    <serial type='pty'/>
    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
    <input type='tablet' bus='usb'/>
    <graphics type='vnc'/>
    <video><model type='vga'/></video>
    <sound model='ich6'/>
    <rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>
  " | sed "s/machine='pc'/machine='$2'/"
}

# "element alias" for each device with an alias, sorted: the devices'
# order in <devices> is compared elsewhere (test-qemu-vs-libvirtd.sh).
aliases()
{
    "$SYSTEM_PYTHON3" -c '
import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
out = []
for dev in root.find("devices"):
    a = dev.find("alias")
    if a is not None:
        what = dev.tag
        if dev.tag == "disk":
            what += ":" + dev.find("target").get("dev")
        if dev.tag == "controller":
            what += ":" + dev.get("type") + dev.get("index")
        out.append(what + " " + a.get("name"))
print("\n".join(sorted(out)))'
}

for m in pc q35; do
    mkdir -p "$OUT/lv" "$OUT/rv"
    chmod 755 "$RV_TMP" "$OUT" "$OUT/lv"
    guest "g$m" $m "$OUT/lv" > "$OUT/lv-$m.xml"
    chmod 666 "$OUT"/lv/*.img
    guest "g$m" $m "$OUT/rv" > "$OUT/rv-$m.xml"
    virsh -q -c "$LIBVIRTD_QEMU_URI" define "$OUT/lv-$m.xml" > /dev/null
    virsh -q -c "$QEMU_URI" define "$OUT/rv-$m.xml" > /dev/null
    virsh -q -c "$LIBVIRTD_QEMU_URI" start "g$m" > /dev/null
    virsh -q -c "$QEMU_URI" start "g$m" > /dev/null
    virsh -c "$LIBVIRTD_QEMU_URI" dumpxml "g$m" | aliases > "$OUT/lv-$m.aliases"
    virsh -c "$QEMU_URI" dumpxml "g$m" | aliases > "$OUT/rv-$m.aliases"
    # On q35 libvirtd puts each PCI device behind a root port of its own
    # (pci.1, ...), remvirtd on pcie.0 (docs/compatibility.md): those
    # controllers are left out.
    sed -i '/^controller:pci[1-9][0-9]* /d' "$OUT/lv-$m.aliases" "$OUT/rv-$m.aliases"
    same "$OUT/lv-$m.aliases" "$OUT/rv-$m.aliases" "aliases of a $m guest"
    echo "ok   $m: $(wc -l < "$OUT/rv-$m.aliases") aliases as libvirtd's"
    virsh -c "$QEMU_URI" dumpxml --inactive "g$m" | grep -q "<alias" &&
        fail "the inactive XML of g$m has aliases"
    virsh -c "$QEMU_URI" dumpxml "g$m" > "$OUT/live-$m.xml"
    virsh -q -c "$QEMU_URI" define "$OUT/live-$m.xml" > /dev/null ||
        fail "the live XML of g$m does not define again"
    virsh -c "$QEMU_URI" dumpxml --inactive "g$m" | grep -q "<alias" &&
        fail "a live XML defined kept its aliases"
    virsh -q -c "$LIBVIRTD_QEMU_URI" destroy "g$m" > /dev/null
done
echo "ok   the inactive XML has no aliases; a live XML defines again without them"

# After a restart of remvirtd the live XML is read back with its aliases.
virsh -c "$QEMU_URI" dumpxml gpc | aliases > "$OUT/before"
stop_remvirtd
start_remvirtd_qemu
wait_for 30 "gpc reattached" sh -c "virsh -c '$QEMU_URI' domstate gpc | grep -q running"
virsh -c "$QEMU_URI" dumpxml gpc | aliases > "$OUT/after"
same "$OUT/before" "$OUT/after" "aliases after a restart of remvirtd"
echo "ok   the aliases are kept across a restart of remvirtd"

# virsh console by alias (cockpit's way): the console opens.
"$SYSTEM_PYTHON3" - "$QEMU_URI" <<'PY'
import sys
import libvirt

conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("gpc")
st = conn.newStream(libvirt.VIR_STREAM_NONBLOCK)
dom.openConsole("serial0", st, 0)
st.abort()
try:
    dom.openConsole("serial7", conn.newStream(0), 0)
    sys.exit("FAIL: a console that does not exist opened")
except libvirt.libvirtError as e:
    print("ok   console serial0 opens by its alias; serial7:", e.get_error_message())
PY
