#!/usr/bin/env bash
# The QEMU driver's node devices against the host's sysfs, through virsh
# and python3-libvirt: iface-list (the host's interfaces); nodedev-list (all, --cap net, --cap pci, --tree),
# nodedev-dumpxml of the computer, every network interface and every PCI
# device (name, path, parent, the main fields), an unknown name's error.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
VQ=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

# What sysfs says, named as libvirt names it.
for i in /sys/class/net/*; do
    mac=$(cat "$i/address" 2>/dev/null || echo 00:00:00:00:00:00)
    echo "net_$(basename "$i")_$mac" | tr ':.-' '___'
done | sort > "$OUT/want-net"
for p in /sys/bus/pci/devices/*; do
    basename "$p" | tr ':.' '__' | sed 's/^/pci_/'
done | sort > "$OUT/want-pci"
{ echo computer; cat "$OUT/want-net" "$OUT/want-pci"; } | sort > "$OUT/want-all"

"${VQ[@]}" nodedev-list --cap net | sed '/^$/d' > "$OUT/net"
diff -u "$OUT/want-net" "$OUT/net" || fail "nodedev-list --cap net differs from /sys/class/net"
"${VQ[@]}" nodedev-list --cap pci | sed '/^$/d' > "$OUT/pci"
diff -u "$OUT/want-pci" "$OUT/pci" || fail "nodedev-list --cap pci differs from /sys/bus/pci/devices"
"${VQ[@]}" nodedev-list | sed '/^$/d' > "$OUT/all"
diff -u "$OUT/want-all" "$OUT/all" || fail "nodedev-list differs"
"${VQ[@]}" nodedev-list --tree > "$OUT/tree"
[ "$(head -1 "$OUT/tree")" = computer ] || { show "$OUT/tree"; fail "the tree's top is not computer"; }
echo "ok   nodedev-list: $(wc -l < "$OUT/all") devices, as sysfs has them"

"${VQ[@]}" nodedev-dumpxml computer > "$OUT/computer.xml"
grep -q "<capability type='system'>" "$OUT/computer.xml" || { show "$OUT/computer.xml"; fail "computer"; }
grep -q "<uuid>" "$OUT/computer.xml" || { show "$OUT/computer.xml"; fail "computer has no uuid"; }

for i in /sys/class/net/*; do
    iface=$(basename "$i")
    name=$(grep "^net_${iface}_" "$OUT/want-net" | head -1)
    "${VQ[@]}" nodedev-dumpxml "$name" > "$OUT/dev.xml"
    grep -q "<interface>$iface</interface>" "$OUT/dev.xml" || { show "$OUT/dev.xml"; fail "$name: interface"; }
    grep -q "<path>$(readlink -f "$i")</path>" "$OUT/dev.xml" || { show "$OUT/dev.xml"; fail "$name: path"; }
    grep -q "<address>$(cat "$i/address")</address>" "$OUT/dev.xml" || fail "$name: address"
    # The parent is the PCI device the interface sits on, else computer.
    pci=$(readlink -f "$i" | grep -oE '[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]' | tail -1 || true)
    want=computer
    [ -z "$pci" ] || want=pci_$(echo "$pci" | tr ':.' '__')
    grep -q "<parent>$want</parent>" "$OUT/dev.xml" || { show "$OUT/dev.xml"; fail "$name: parent not $want"; }
done
echo "ok   nodedev-dumpxml of each network interface: interface, path, address, parent"

for p in /sys/bus/pci/devices/*; do
    name=pci_$(basename "$p" | tr ':.' '__')
    "${VQ[@]}" nodedev-dumpxml "$name" > "$OUT/dev.xml"
    grep -q "<class>$(cat "$p/class")</class>" "$OUT/dev.xml" || { show "$OUT/dev.xml"; fail "$name: class"; }
    grep -q "<vendor id='$(cat "$p/vendor")'" "$OUT/dev.xml" || { show "$OUT/dev.xml"; fail "$name: vendor"; }
    grep -q "<product id='$(cat "$p/device")'" "$OUT/dev.xml" || { show "$OUT/dev.xml"; fail "$name: product"; }
    if [ -e "$p/driver" ]; then
        grep -q "<name>$(basename "$(readlink "$p/driver")")</name>" "$OUT/dev.xml" ||
            { show "$OUT/dev.xml"; fail "$name: driver"; }
    fi
done
echo "ok   nodedev-dumpxml of each PCI device: class, vendor, product, driver"

# Host interfaces, as libvirtd's interface driver lists them: each
# /sys/class/net entry, active when its operstate is up.
for i in /sys/class/net/*; do
    state=inactive
    [ "$(cat "$i/operstate")" != up ] || state=active
    echo "$(basename "$i") $state $(cat "$i/address")"
done | sort > "$OUT/want-ifaces"
"${VQ[@]}" iface-list --all | awk 'NF { print $1, $2, $3 }' | sort > "$OUT/ifaces"
diff -u "$OUT/want-ifaces" "$OUT/ifaces" || fail "iface-list --all differs from /sys/class/net"
"${VQ[@]}" iface-list | awk 'NF { print $1, $2, $3 }' | sort > "$OUT/ifaces"
diff -u <(grep ' active ' "$OUT/want-ifaces") "$OUT/ifaces" || fail "iface-list (active) differs"
echo "ok   iface-list: $(wc -l < "$OUT/want-ifaces") interfaces, states from operstate"

out=$("${VQ[@]}" nodedev-dumpxml no_such_dev 2>&1) && fail "an unknown device was found"
grep -q "no node device with matching name 'no_such_dev'" <<< "$out" || fail "unknown device: $out"

if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    "$SYSTEM_PYTHON3" - "$QEMU_URI" "$(wc -l < "$OUT/want-net")" "$(wc -l < "$OUT/want-all")" <<'PY' ||
import sys, libvirt
c = libvirt.open(sys.argv[1])
nnet, nall = int(sys.argv[2]), int(sys.argv[3])
assert c.numOfDevices("net", 0) == nnet, c.numOfDevices("net", 0)
assert c.numOfDevices(None, 0) == nall
assert len(c.listAllDevices(libvirt.VIR_CONNECT_LIST_NODE_DEVICES_CAP_NET)) == nnet
assert c.listAllDevices(libvirt.VIR_CONNECT_LIST_NODE_DEVICES_INACTIVE) == []
d = c.nodeDeviceLookupByName("computer")
assert d.parent() is None and d.listCaps() == ["system"] and d.numOfCaps() == 1
print("ok   python3-libvirt: numOfDevices, listAllDevices, parent, listCaps")
PY
        fail "python3-libvirt checks failed"
fi
