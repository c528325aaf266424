#!/usr/bin/env bash
# virt-install against remvirtd's QEMU driver.  For several option sets
# (SPICE with virt-install's USB controllers, channel, tablet, sound, QXL
# and redirdevs; VNC with virtio video, the guest agent channel and an
# rng; q35 with its root ports, virtio-scsi, a serial file; no graphics
# with qemu-xhci), `virt-install --print-xml` writes what remvirtd then
# defines and starts with real QEMU: the guest runs, the live XML has PCI
# addresses, the graphics port QEMU listens on and the agent's socket,
# and the addresses are the same after a restart.  Two guests at once get
# two graphics ports.  Last, virt-install does a whole --import itself
# and the guest it started boots (its console says so).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires virt-install --version
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

# The test guest boots directly (no disk: virt-install's disks need the
# storage pool calls); TCG, so it runs wherever QEMU does.
VI=(virt-install --connect "$QEMU_URI" --memory 128 --vcpus 1 --virt-type qemu --disk none
    --boot "kernel=$TEST_GUEST_KERNEL,initrd=$TEST_GUEST_INITRD,kernel_args=console=ttyS0 quiet panic=-1"
    --noautoconsole)
declare -A sets=(
    [spice]="--osinfo detect=on,require=off --network user"
    [vnc]="--os-variant generic --network user,model=virtio --graphics vnc,listen=127.0.0.1 --video virtio
           --sound ich9 --console pty --channel unix,target.type=virtio,name=org.qemu.guest_agent.0
           --rng /dev/urandom"
    [q35]="--osinfo detect=on,require=off --machine q35 --network none --graphics vnc --video vga --sound ac97
           --controller scsi,model=virtio-scsi --serial file,path=$OUT/q35-serial.log --input keyboard,bus=usb"
    [headless]="--os-variant generic --network user,model=rtl8139 --graphics none --video none
                --controller usb,model=qemu-xhci --input tablet,bus=usb --memballoon none"
)

# pci_addresses FILE: each device's kind and PCI address, one a line.
pci_addresses()
{
    "$PYTHON3" - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
for dev in ET.parse(sys.argv[1]).getroot().find("devices"):
    a = dev.find("address")
    if a is not None and a.get("type") == "pci":
        print(dev.tag, dev.get("type") or dev.get("model") or "", a.get("slot"), a.get("function"))
PY
}

# graphics_port FILE TYPE: the port of the graphics of TYPE in a live XML.
graphics_port()
{
    "$PYTHON3" -c 'import sys, xml.etree.ElementTree as ET
g = ET.parse(sys.argv[1]).getroot().find("devices/graphics[@type=\"%s\"]" % sys.argv[2])
print(g.get("port") if g is not None else "")' "$1" "$2"
}

# listening PORT: something accepts TCP connections on 127.0.0.1:PORT.
listening()
{
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

for set in spice vnc q35 headless; do
    name=vi-$set
    # shellcheck disable=SC2086
    "${VI[@]}" --print-xml --name "$name" ${sets[$set]} > "$OUT/$name.xml" 2> "$OUT/$name.err" ||
        { show "$OUT/$name.err"; fail "virt-install --print-xml ($set) failed"; }
    "${V[@]}" define "$OUT/$name.xml" > "$OUT/$name.define" 2>&1 ||
        { show "$OUT/$name.xml"; show "$OUT/$name.define"; fail "$set: virt-install's XML was refused"; }
    "${V[@]}" dumpxml --inactive "$name" > "$OUT/$name.inactive"
    "${V[@]}" start "$name" > "$OUT/$name.start" 2>&1 ||
        { show "$OUT/$name.start"; show "$QEMU_DIR/run/$name.log"; fail "$set: the guest did not start"; }
    [ "$("${V[@]}" domstate "$name")" = running ] || fail "$set: not running after start"
    "${V[@]}" dumpxml "$name" > "$OUT/$name.live"
    pci_addresses "$OUT/$name.live" > "$OUT/$name.pci"
    [ -s "$OUT/$name.pci" ] || { show "$OUT/$name.live"; fail "$set: no PCI addresses in the live XML"; }
    # No two devices at one address.
    [ -z "$(awk '{ print $3, $4 }' "$OUT/$name.pci" | sort | uniq -d)" ] ||
        { show "$OUT/$name.pci"; fail "$set: two devices share a PCI address"; }
    echo "ok   $set: virt-install's XML defined and started, $(wc -l < "$OUT/$name.pci") PCI devices"

    case $set in
    spice|vnc|q35)
        type=spice
        [ "$set" = spice ] || type=vnc
        port=$(graphics_port "$OUT/$name.live" "$type")
        [ -n "$port" ] && [ "$port" -ge 5900 ] ||
            { show "$OUT/$name.live"; fail "$set: the live XML has no resolved $type port ($port)"; }
        listening "$port" || fail "$set: nothing listens on $type port $port"
        [ "$(graphics_port "$OUT/$name.inactive" "$type")" = -1 ] || fail "$set: the inactive XML has a port"
        echo "ok   $set: $type autoport resolved to $port, QEMU listens there"
        ;;
    esac
    case $set in
    spice)
        for want in "<controller type='usb' index='0' model='ich9-ehci1'>" "<model type='qxl' " \
                    "<redirdev bus='usb' type='spicevmc'>" "<address type='usb' bus='0' port='3'/>" "<sound model='ich6'>" "<audio id='1' type='spice'/>" \
                    "<input type='tablet' bus='usb'>" "name='com.redhat.spice.0'"; do
            grep -qF "$want" "$OUT/$name.live" || { show "$OUT/$name.live"; fail "$set: no $want"; }
        done
        ;;
    vnc)
        sock=$(sed -n "s|.*<source mode='bind' path='\([^']*\)'/>.*|\1|p" "$OUT/$name.live")
        [ -n "$sock" ] && [ -S "$sock" ] || { show "$OUT/$name.live"; fail "vnc: no agent socket ($sock)"; }
        grep -q "<source mode='bind' path=" "$OUT/$name.inactive" && fail "vnc: the inactive XML has a socket path"
        grep -qF "<backend model='random'>/dev/urandom</backend>" "$OUT/$name.live" || fail "vnc: no rng"
        echo "ok   vnc: the guest agent channel's socket $sock exists"
        ;;
    q35)
        grep -qF "model='pcie-root-port'" "$OUT/$name.live" || fail "q35: no root ports"
        grep -qF "<controller type='scsi' index='0' model='virtio-scsi'>" "$OUT/$name.live" || fail "q35: no scsi"
        [ -e "$OUT/q35-serial.log" ] || fail "q35: QEMU did not create the serial file"
        ;;
    headless)
        grep -q "<graphics\|<video" "$OUT/$name.live" && fail "headless: graphics or video appeared"
        grep -qF "model='qemu-xhci'" "$OUT/$name.live" || fail "headless: no qemu-xhci"
        ;;
    esac

    # The addresses were assigned at define time and stay.
    "${V[@]}" destroy "$name" > /dev/null
    "${V[@]}" start "$name" > /dev/null
    "${V[@]}" dumpxml "$name" > "$OUT/$name.live2"
    pci_addresses "$OUT/$name.live2" > "$OUT/$name.pci2"
    same "$OUT/$name.pci" "$OUT/$name.pci2" "$set: PCI addresses after a restart"
    "${V[@]}" destroy "$name" > /dev/null
done

# Two guests with graphics at once: two ports.  Then the stopped one's
# port is free again and the next start may take it.
"${V[@]}" start vi-spice > /dev/null
"${V[@]}" start vi-vnc > /dev/null
"${V[@]}" dumpxml vi-spice > "$OUT/a.live"
"${V[@]}" dumpxml vi-vnc > "$OUT/b.live"
p1=$(graphics_port "$OUT/a.live" spice)
p2=$(graphics_port "$OUT/b.live" vnc)
[ "$p1" != "$p2" ] || fail "two running guests got the same graphics port $p1"
listening "$p1" && listening "$p2" || fail "not both ports $p1 and $p2 listen"
"${V[@]}" destroy vi-spice > /dev/null
"${V[@]}" start vi-q35 > /dev/null
"${V[@]}" dumpxml vi-q35 > "$OUT/c.live"
p3=$(graphics_port "$OUT/c.live" vnc)
[ "$p3" != "$p2" ] || fail "the q35 guest got the running vnc guest's port $p2"
echo "ok   graphics ports: $p1 and $p2 at once; after a stop the next start got $p3"
for name in vi-vnc vi-q35; do
    "${V[@]}" destroy "$name" > /dev/null
done
for set in spice vnc q35 headless; do
    "${V[@]}" undefine "vi-$set" > /dev/null
done

# virt-install itself: define, start, and the guest boots.
"${VI[@]}" --name vi-whole --osinfo detect=on,require=off --network user --graphics vnc --import \
    > "$OUT/whole.out" 2>&1 || { show "$OUT/whole.out"; fail "virt-install --import failed"; }
[ "$("${V[@]}" domstate vi-whole)" = running ] || fail "virt-install's guest is not running"
capture_console vi-whole "$OUT/console"
wait_for 120 "the console" grep -q "remvirt-test-guest: ready" "$OUT/console" || { show "$OUT/console"; fail "virt-install's guest did not boot"; }
"${V[@]}" list --all --name > "$OUT/list"
has_line "$OUT/list" vi-whole || fail "virt-install's guest is not listed"
"${V[@]}" destroy vi-whole > /dev/null
"${V[@]}" undefine vi-whole > /dev/null
echo "ok   virt-install --import defined and started a guest that booted"
