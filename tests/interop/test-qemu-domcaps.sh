#!/usr/bin/env bash
# The QEMU driver's domain capabilities (CONNECT_GET_DOMAIN_CAPABILITIES)
# through virsh domcapabilities and python3-libvirt:
#   - the XML parses; path, domain type (kvm when usable), the machine
#     (the binary's default, pc and q35 by their canonical names) and arch
#     are what libvirtd's own QEMU driver says for the same binary (run
#     embedded: virsh -c qemu:///embed, no daemon), and every element
#     remvirtd writes is one libvirtd writes, in the same order;
#   - devices: the disk buses, graphics types and video models the XML
#     subset reads;
#   - bad arguments refused: another arch, an unknown machine, a virttype;
#   - virt-install --print-xml reads it: SPICE graphics and USB redirection.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

"${V[@]}" domcapabilities > "$OUT/ours.xml"
"${V[@]}" domcapabilities --machine q35 --virttype qemu > "$OUT/ours-q35.xml"

# libvirtd's own, for the same binary, when its QEMU driver can run here.
mkdir -p "$RV_TMP/embed"
libvirtd_caps() # OUTFILE [virsh domcapabilities options]
{
    local out=$1
    shift
    timeout 120 virsh -c "qemu:///embed?root=$RV_TMP/embed" domcapabilities "$@" > "$out" 2> "$out.err"
}
if libvirtd_caps "$OUT/theirs.xml" && libvirtd_caps "$OUT/theirs-q35.xml" --machine q35 --virttype qemu; then
    "$PYTHON3" - "$OUT" > "$OUT/compare" <<'PY'
import sys, xml.etree.ElementTree as ET
out = sys.argv[1]
def paths(root):
    """Each element's path, in document order, without repeats."""
    seen = []
    def walk(e, prefix):
        p = prefix + "/" + e.tag
        if p not in seen:
            seen.append(p)
        for c in e:
            walk(c, p)
    walk(root, "")
    return seen
for kind in ("", "-q35"):
    ours = ET.parse(f"{out}/ours{kind}.xml").getroot()
    theirs = ET.parse(f"{out}/theirs{kind}.xml").getroot()
    for tag in ("path", "domain", "machine", "arch"):
        a, b = ours.findtext(tag), theirs.findtext(tag)
        print(f"{kind or 'default'} {tag}: {'same' if a == b else f'{a} != {b}'}")
    mine, libvirts = paths(ours), paths(theirs)
    extra = [p for p in mine if p not in libvirts]
    print(f"{kind or 'default'} elements not in libvirtd's: {extra}")
    common = [p for p in libvirts if p in mine]
    print(f"{kind or 'default'} order: {'same' if common == mine else 'differs'}")
PY
    cat > "$OUT/compare.expected" <<'EOT'
default path: same
default domain: same
default machine: same
default arch: same
default elements not in libvirtd's: []
default order: same
-q35 path: same
-q35 domain: same
-q35 machine: same
-q35 arch: same
-q35 elements not in libvirtd's: []
-q35 order: same
EOT
    same "$OUT/compare.expected" "$OUT/compare" "domcapabilities against libvirtd's QEMU driver's"
else
    echo "note libvirtd's QEMU driver cannot run here ($(head -c 200 "$OUT/theirs.xml.err")): not compared"
fi

"$PYTHON3" - "$OUT/ours.xml" "$OUT/ours-q35.xml" > "$OUT/devices" <<'PY'
import sys, xml.etree.ElementTree as ET
caps = ET.parse(sys.argv[1]).getroot()
vals = lambda path: [v.text for v in caps.findall(path + "/value")]
print("disk bus", vals("devices/disk/enum[@name='bus']"))
print("disk device", vals("devices/disk/enum[@name='diskDevice']"))
print("graphics", vals("devices/graphics/enum[@name='type']"))
print("video", vals("devices/video/enum[@name='modelType']"))
print("hostdev", caps.find("devices/hostdev").get("supported"))
print("q35", ET.parse(sys.argv[2]).getroot().findtext("machine").startswith("pc-q35-"),
      ET.parse(sys.argv[2]).getroot().findtext("domain"))
PY
cat > "$OUT/devices.expected" <<'EOT'
disk bus ['ide', 'scsi', 'virtio', 'sata']
disk device ['disk', 'cdrom']
graphics ['vnc', 'spice']
video ['vga', 'cirrus', 'qxl', 'virtio', 'bochs', 'none']
hostdev no
q35 True qemu
EOT
same "$OUT/devices.expected" "$OUT/devices" "domcapabilities: devices of the XML subset"

refused() # WHAT PATTERN ARGS...
{
    local what=$1 pattern=$2
    shift 2
    "${V[@]}" domcapabilities "$@" > "$OUT/err" 2>&1 && fail "$what succeeded"
    grep -q -- "$pattern" "$OUT/err" || { show "$OUT/err"; fail "$what: not the expected error"; }
}
refused "another arch" "unable to find any emulator to serve 'aarch64' architecture" --arch aarch64
refused "an unknown machine" "the machine 'nosuch' is not supported" --machine nosuch
refused "an unknown virttype" "unknown virttype: xen" --virttype xen
echo "ok   domcapabilities: another arch, machine or virttype refused"

"$SYSTEM_PYTHON3" - > "$OUT/py" <<PY
import libvirt, xml.etree.ElementTree as ET
c = libvirt.open("$QEMU_URI")
caps = ET.fromstring(c.getDomainCapabilities(None, "x86_64", "pc", None))
print(caps.findtext("arch"), caps.findtext("machine").startswith("pc-i440fx-"))
PY
echo "x86_64 True" > "$OUT/py.expected"
same "$OUT/py.expected" "$OUT/py" "python3-libvirt getDomainCapabilities"

if virt-install --version > /dev/null 2>&1; then
    virt-install --connect "$QEMU_URI" --print-xml --name vi --memory 128 --vcpus 1 --disk none \
        --boot hd --osinfo detect=off,require=off --network user > "$OUT/vi.xml" 2> "$OUT/vi.err" ||
        { show "$OUT/vi.err"; fail "virt-install --print-xml failed"; }
    grep -q '<graphics type="spice"' "$OUT/vi.xml" || { show "$OUT/vi.xml"; fail "virt-install did not pick SPICE"; }
    grep -q '<redirdev bus="usb" type="spicevmc"' "$OUT/vi.xml" ||
        { show "$OUT/vi.xml"; fail "virt-install added no USB redirection, which is offered"; }
    echo "ok   virt-install --print-xml follows the domain capabilities: SPICE, USB redirection"
fi
