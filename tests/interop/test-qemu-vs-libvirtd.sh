#!/usr/bin/env bash
# remvirtd's QEMU driver side by side with libvirtd's own (Debian 12's
# libvirt-daemon-driver-qemu, run privately by start_libvirtd_qemu): the
# same virsh commands against both with the same guest (the test guest,
# TCG), and their outputs compared after normalize() below.
#
#   - the lifecycle and its errors: define, list, dominfo, domstate
#     --reason, start (twice), suspend (twice), resume (twice: the second
#     of a running guest), destroy (twice),
#     suspend of an inactive guest, a domain that does not exist,
#     malformed XML, undefine;
#   - the key fields of dumpxml, inactive and live (what virt-manager
#     reads: memory, vcpus, os, actions, each device's kind, model and
#     PCI address, the graphics port);
#   - title, description and IS_UPDATED of the running guest
#     (python3-libvirt);
#   - a guest shutdown through ACPI and the lines `virsh event --loop`
#     printed for the whole session.
# The differences normalize() hides are the ones listed in
# docs/compatibility.md ("QEMU driver: remvirtd and libvirtd side by side").
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
test_guest
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/cmp
mkdir -p "$OUT"

# The guest: the test guest with VNC (so graphics, video, input and
# audio are compared too) and a USB tablet.
qemu_guest_xml g > "$OUT/g.xml"
sed -i "s|<devices><serial type='pty'/></devices>|<devices><serial type='pty'/><input type='tablet' bus='usb'/><graphics type='vnc' listen='127.0.0.1'/></devices>|" \
    "$OUT/g.xml"
grep -q "<graphics" "$OUT/g.xml" || fail "qemu_guest_xml changed: update this test"
echo '<domain type="qemu"><name>x</name>' > "$OUT/bad.xml"
qemu_domain_xml probe > "$OUT/probe.xml"

# normalize: what differs between the two for reasons documented in
# compatibility.md, made the same:
#  - UUIDs (generated) and CPU times;
#  - dominfo's "Messages:" (libvirtd's taint notes: remvirtd has none).
normalize()
{
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' \
           -e 's/^(CPU time: +)[0-9.]+s$/\1N/' -e '/^Messages: /d'
}

steps=(
    "define g.xml"
    "list --all"
    "mask:dominfo g"
    "domstate --reason g"
    "start g"
    "start g"
    "domstate --reason g"
    "list"
    "mask:dominfo g"
    "suspend g"
    "domstate --reason g"
    "suspend g"
    "resume g"
    "resume g"
    "domstate --reason g"
    "destroy g"
    "domstate --reason g"
    "destroy g"
    "suspend g"
    "start nosuch"
    "undefine nosuch"
    "define bad.xml"
    "ro:start g"
    "domid g"
    "domname 1"
)

# key_fields: the fields of a domain XML (stdin) that are compared.
key_fields()
{
    "$PYTHON3" -c '
import sys, xml.etree.ElementTree as ET
d = ET.parse(sys.stdin).getroot()
print("domain type=%s id=%s" % (d.get("type"), d.get("id")))
for tag in ("name", "memory", "vcpu", "on_poweroff", "on_reboot", "on_crash", "os/type",
            "os/kernel", "os/initrd", "os/cmdline", "devices/emulator"):
    e = d.find(tag)
    print(tag, None if e is None else (e.text, sorted(k for k in e.attrib if k != "machine")))
for dev in d.find("devices"):
    a = dev.find("address")
    m = dev.find("model")
    print(dev.tag, dev.get("type"), dev.get("model") or (m.get("type") if m is not None else None),
          None if a is None else (a.get("type"), a.get("slot"), a.get("function")),
          "port=%s autoport=%s" % (dev.get("port"), dev.get("autoport")) if dev.tag == "graphics" else "")
'
}

# metadata_transcript URI: title, description and IS_UPDATED of the
# running guest g, each call's result or error.
metadata_transcript()
{
    PYTHONPATH=$top_srcdir/tests/interop "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys
import libvirt
from transcript import show
d = libvirt.open(sys.argv[1]).lookupByName("g")
T, D = libvirt.VIR_DOMAIN_METADATA_TITLE, libvirt.VIR_DOMAIN_METADATA_DESCRIPTION
show("updated", d.isUpdated)
show("get title", lambda: d.metadata(T, None, 0))
show("set title", lambda: d.setMetadata(T, "T1", None, None, 0))
show("get title", lambda: d.metadata(T, None, 0))
show("get title config", lambda: d.metadata(T, None, 2))
show("get title both", lambda: d.metadata(T, None, 3))
show("set description both", lambda: d.setMetadata(D, "D <&>\n2", None, None, 3))
show("get description config", lambda: d.metadata(D, None, 2))
show("get description live", lambda: d.metadata(D, None, 1))
show("inactive xml", lambda: [l.strip() for l in d.XMLDesc(2).splitlines()
                              if "title>" in l or "description>" in l or l.strip() == "2</description>"])
show("set bad flag", lambda: d.setMetadata(D, "x", None, None, 4))
show("get bad type", lambda: d.metadata(7, None, 0))
show("remove description", lambda: d.setMetadata(D, None, None, None, 3))
show("remove title", lambda: d.setMetadata(T, "", None, None, 0))
show("get description", lambda: d.metadata(D, None, 2))
show("updated", d.isUpdated)
PY
}

# session URI URI_RO NAME: the whole comparison's steps against one daemon,
# its outputs in $OUT/NAME.*.
session()
{
    local uri=$1 uri_ro=$2 name=$3 i
    bg "$OUT/$name.events" virsh -c "$uri" event --loop --all
    # The watcher is registered once it reports a probe domain's changes.
    for ((i = 0; i < 100; i++)); do
        virsh -q -c "$uri" define "$OUT/probe.xml" > /dev/null
        virsh -q -c "$uri" undefine probe > /dev/null
        grep -q "'probe'" "$OUT/$name.events" && break
        sleep 0.1
    done
    wait_for 10 "the probe's Undefined event" grep -q "'probe': Undefined" "$OUT/$name.events" ||
        fail "$name: virsh event --loop saw no events"
    virsh_transcript "$uri" "$uri_ro" "$OUT" normalize > "$OUT/$name.transcript"
    virsh -q -c "$uri" dumpxml g | key_fields > "$OUT/$name.inactive"
    virsh -q -c "$uri" start g > /dev/null
    virsh -q -c "$uri" dumpxml g | key_fields > "$OUT/$name.live"
    metadata_transcript "$uri" > "$OUT/$name.metadata"
    # ACPI shutdown once the guest listens to the power button.
    for ((i = 0; i < 120; i++)); do
        [ "$(virsh -q -c "$uri" domstate g)" = "shut off" ] && break
        virsh -q -c "$uri" shutdown g > /dev/null 2>&1 || true
        sleep 1
    done
    virsh -q -c "$uri" domstate --reason g > "$OUT/$name.after-shutdown"
    virsh -q -c "$uri" undefine g > /dev/null
    wait_for 10 "the undefine event" grep -q "Undefined" "$OUT/$name.events" ||
        { show "$OUT/$name.events"; fail "$name: no Undefined event"; }
}

session "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" libvirtd
session "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" remvirtd

same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "virsh lifecycle and errors, remvirtd as libvirtd"
same "$OUT/libvirtd.inactive" "$OUT/remvirtd.inactive" "dumpxml --inactive key fields"
# The live graphics port is whichever was free: compared as "a port".
sed -i -E 's/port=59[0-9][0-9] autoport=yes/port=PORT autoport=yes/' "$OUT/libvirtd.live" "$OUT/remvirtd.live"
same "$OUT/libvirtd.live" "$OUT/remvirtd.live" "live dumpxml key fields"
same "$OUT/libvirtd.after-shutdown" "$OUT/remvirtd.after-shutdown" "state after an ACPI shutdown"
same "$OUT/libvirtd.metadata" "$OUT/remvirtd.metadata" "title, description and IS_UPDATED"
# (balloon-change events come as the guest's balloon driver moves, at
# times of its own on each daemon: left out.  libvirtd
# sometimes sends a control-error when the guest's QEMU closes its
# monitor as it powers off (its log: "Unable to read from monitor:
# Connection reset by peer"): a race of its own, left out of both.)
grep "^event " "$OUT/libvirtd.events" | grep -v "'probe'\|'balloon-change'\|'control-error'" > "$OUT/libvirtd.ev"
grep "^event " "$OUT/remvirtd.events" | grep -v "'probe'\|'balloon-change'\|'control-error'" > "$OUT/remvirtd.ev"
same "$OUT/libvirtd.ev" "$OUT/remvirtd.ev" "virsh event --loop --all lines"
