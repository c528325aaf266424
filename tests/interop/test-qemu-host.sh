#!/usr/bin/env bash
# The QEMU driver's host calls side by side with libvirtd's QEMU driver on
# this machine (issue 29 item 4), through virsh and python3-libvirt:
#   - capabilities: <host><topology> (cells, memory, pages, distances, CPUs
#     with socket, die and core ids and siblings) is libvirtd's exactly;
#     <host><cpu> has libvirtd's arch, vendor, microcode, signature, TSC
#     counter, topology, maxphysaddr and page sizes, a model, and (expanded
#     by cpu-baseline --features on each daemon) the same feature set;
#     every element remvirtd writes under <host> is one libvirtd writes;
#   - nova's capability parser (when python3-nova is installed) reads the
#     host's cells and CPU;
#   - nodememstats (host and cell), nodecpustats (each counter between two
#     of libvirtd's readings), freecell (--all, --cellno) and their errors;
#   - pool-capabilities: libvirtd's pool types in its order, the dir pool's
#     options exactly;
#   - cpu-models (QEMU's own models), cpu-compare, cpu-baseline,
#     hypervisor-cpu-compare, hypervisor-cpu-baseline: libvirtd's answers
#     and errors where both daemons know the models involved.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
start_remvirtd_qemu
start_libvirtd_qemu
OUT=$RV_TMP/out
mkdir -p "$OUT"
R=(virsh -q -c "$QEMU_URI")
L=(virsh -q -c "$LIBVIRTD_QEMU_URI")

# ---------------------------------------------------------------- capabilities
"${R[@]}" capabilities > "$OUT/ours.xml"
"${L[@]}" capabilities > "$OUT/theirs.xml"
"$PYTHON3" - "$OUT/ours.xml" "$OUT/theirs.xml" > "$OUT/caps" <<'PY'
import sys, xml.etree.ElementTree as ET
ours, theirs = (ET.parse(f).getroot().find("host") for f in sys.argv[1:3])
def canon(e):
    return ET.tostring(e, encoding="unicode").replace(" ", "").replace("\n", "")
print("topology:", "same" if canon(ours.find("topology")) == canon(theirs.find("topology"))
      else "differs")
for tag in ("arch", "vendor", "microcode", "signature", "counter", "topology", "maxphysaddr"):
    a, b = ours.find("cpu/" + tag), theirs.find("cpu/" + tag)
    print(f"cpu/{tag}:", "same" if a is not None and b is not None and canon(a) == canon(b)
          else "differs" if b is not None else "libvirtd has none")
print("cpu/pages:", [p.attrib for p in ours.findall("cpu/pages")] ==
      [p.attrib for p in theirs.findall("cpu/pages")])
print("cpu/model:", bool(ours.findtext("cpu/model")))
def paths(e, prefix=""):
    out = []
    for c in e:
        p = prefix + "/" + c.tag
        out += [p] + paths(c, p)
    return out
extra = sorted(set(paths(ours)) - set(paths(theirs)))
print("elements not in libvirtd's:", extra)
PY
cat > "$OUT/caps.expected" <<'EOT'
topology: same
cpu/arch: same
cpu/vendor: same
cpu/microcode: same
cpu/signature: same
cpu/counter: same
cpu/topology: same
cpu/maxphysaddr: same
cpu/pages: True
cpu/model: True
elements not in libvirtd's: []
EOT
# Without KVM libvirtd gives no TSC counter, and neither does remvirtd.
grep -q "<counter" "$OUT/theirs.xml" || sed -i 's|^cpu/counter: same$|cpu/counter: libvirtd has none|' "$OUT/caps.expected"
same "$OUT/caps.expected" "$OUT/caps" "capabilities: the host as libvirtd's QEMU driver describes it"

# The host CPU's whole feature set, each daemon expanding its own <cpu>.
sed -n '/^    <cpu>/,/^    <\/cpu>/p' "$OUT/ours.xml" > "$OUT/ours-cpu.xml"
sed -n '/^    <cpu>/,/^    <\/cpu>/p' "$OUT/theirs.xml" > "$OUT/theirs-cpu.xml"
"${R[@]}" cpu-baseline --features "$OUT/ours-cpu.xml" | sed -n "s/.*name='\([^']*\)'.*/\1/p" | sort > "$OUT/ours.features"
"${L[@]}" cpu-baseline --features "$OUT/theirs-cpu.xml" | sed -n "s/.*name='\([^']*\)'.*/\1/p" | sort > "$OUT/theirs.features"
# osxsave is the OS's bit, no feature QEMU can give or take.
grep -vx osxsave "$OUT/theirs.features" > "$OUT/theirs.features.cmp" || true
same "$OUT/theirs.features.cmp" "$OUT/ours.features" "capabilities: the host CPU's features (expanded) are libvirtd's"
"${R[@]}" cpu-compare "$OUT/ours-cpu.xml" > "$OUT/self" 2>&1
echo "CPU described in $OUT/ours-cpu.xml is identical to host CPU" > "$OUT/self.expected"
same "$OUT/self.expected" "$OUT/self" "cpu-compare: the host's own CPU is identical"

if "$SYSTEM_PYTHON3" -c 'import nova.virt.libvirt.config' 2>/dev/null; then
    "$SYSTEM_PYTHON3" - "$OUT/ours.xml" > "$OUT/nova" <<'PY'
import sys
from nova.virt.libvirt import config
caps = config.LibvirtConfigCaps()
caps.parse_str(open(sys.argv[1]).read())
cells = caps.host.topology.cells
print("cells", len(cells) > 0, "cpus", sum(len(c.cpus) for c in cells) > 0,
      "memory", all(c.memory > 0 for c in cells), "pages", all(c.mempages for c in cells))
print("cpu", bool(caps.host.cpu.model), bool(caps.host.cpu.vendor), caps.host.cpu.sockets > 0,
      len(caps.host.cpu.features) > 0)
PY
    printf 'cells True cpus True memory True pages True\ncpu True True True True\n' > "$OUT/nova.expected"
    same "$OUT/nova.expected" "$OUT/nova" "nova's LibvirtConfigCaps reads the host's cells and CPU"
else
    echo "note python3-nova is not installed: nova's parser not run"
fi

# ---------------------------------------------------------------- memory and CPU time
numbers() { sed -E 's/[0-9]+ KiB/N KiB/; s/ +/ /g'; }
for args in "" "--cell 0"; do
    # shellcheck disable=SC2086
    "${R[@]}" nodememstats $args > "$OUT/mem.ours"
    # shellcheck disable=SC2086
    "${L[@]}" nodememstats $args > "$OUT/mem.theirs"
    numbers < "$OUT/mem.theirs" > "$OUT/mem.theirs.n"
    numbers < "$OUT/mem.ours" > "$OUT/mem.ours.n"
    same "$OUT/mem.theirs.n" "$OUT/mem.ours.n" "nodememstats $args: libvirtd's fields"
    [ "$(grep ^total "$OUT/mem.ours")" = "$(grep ^total "$OUT/mem.theirs")" ] ||
        fail "nodememstats $args: total differs from libvirtd's"
done
for cmd in "nodememstats --cell 5" "freecell --cellno 3" "nodecpustats --cpu 4096"; do
    # shellcheck disable=SC2086
    "${R[@]}" $cmd > "$OUT/err.ours" 2>&1 && fail "$cmd succeeded"
    # shellcheck disable=SC2086
    "${L[@]}" $cmd > "$OUT/err.theirs" 2>&1 || true
    same "$OUT/err.theirs" "$OUT/err.ours" "$cmd: libvirtd's error"
done
"${R[@]}" freecell --all | numbers > "$OUT/free.ours"
"${L[@]}" freecell --all | numbers > "$OUT/free.theirs"
same "$OUT/free.theirs" "$OUT/free.ours" "freecell --all: libvirtd's cells"

"$SYSTEM_PYTHON3" - "$QEMU_URI" "$LIBVIRTD_QEMU_URI" > "$OUT/py" <<'PY'
import sys, libvirt
ours, theirs = libvirt.open(sys.argv[1]), libvirt.open(sys.argv[2])
for cpu in (-1, 0):
    before = theirs.getCPUStats(cpu)
    mine = ours.getCPUStats(cpu)
    after = theirs.getCPUStats(cpu)
    print(cpu, sorted(mine) == sorted(before),
          all(before[k] <= mine[k] <= after[k] for k in mine))
print("memory", sorted(ours.getMemoryStats(-1)) == sorted(theirs.getMemoryStats(-1)),
      sorted(ours.getMemoryStats(0)) == sorted(theirs.getMemoryStats(0)))
cells = ours.getCellsFreeMemory(0, 64)
print("cells", len(cells) == len(theirs.getCellsFreeMemory(0, 64)),
      abs(sum(cells) - ours.getFreeMemory()) < sum(cells) // 10 + (64 << 20))
PY
printf -- '-1 True True\n0 True True\nmemory True True\ncells True True\n' > "$OUT/py.expected"
same "$OUT/py.expected" "$OUT/py" "python3-libvirt: CPU time between libvirtd's readings, memory and cell fields"

# ---------------------------------------------------------------- storage pool capabilities
"${R[@]}" pool-capabilities > "$OUT/pool.ours"
"${L[@]}" pool-capabilities > "$OUT/pool.theirs"
"$PYTHON3" - "$OUT/pool.ours" "$OUT/pool.theirs" > "$OUT/pool" <<'PY'
import sys, xml.etree.ElementTree as ET
ours, theirs = (ET.parse(f).getroot() for f in sys.argv[1:3])
print("types", [p.get("type") for p in ours] == [p.get("type") for p in theirs])
print("supported", [p.get("type") for p in ours if p.get("supported") == "yes"])
d = lambda r: ET.tostring(r.find("pool[@type='dir']"), encoding="unicode")
print("dir", d(ours) == d(theirs))
PY
printf "types True\nsupported ['dir']\ndir True\n" > "$OUT/pool.expected"
same "$OUT/pool.expected" "$OUT/pool" "pool-capabilities: libvirtd's pool types, the dir pool's options"

# ---------------------------------------------------------------- CPU models
"${R[@]}" cpu-models x86_64 > "$OUT/models"
qemu-system-x86_64 -cpu help > "$OUT/qemu-cpus"
while read -r m; do
    grep -q "^x86 $m  *\|^x86 *$m " "$OUT/qemu-cpus" || fail "cpu-models: $m is not one of QEMU's models"
done < "$OUT/models"
[ "$(wc -l < "$OUT/models")" -ge 20 ] || fail "cpu-models: only $(wc -l < "$OUT/models") models"
echo "ok   cpu-models x86_64: $(wc -l < "$OUT/models") of QEMU's own models"

cat > "$OUT/pentium3.xml" <<'EOF'
<cpu><model>pentium3</model></cpu>
EOF
cat > "$OUT/westmere-avx.xml" <<'EOF'
<cpu>
  <arch>x86_64</arch>
  <model>Westmere</model>
  <feature policy='require' name='avx'/>
</cpu>
EOF
cat > "$OUT/nosuch.xml" <<'EOF'
<cpu><model>nosuch</model></cpu>
EOF
echo 'not xml' > "$OUT/bad.xml"
cat > "$OUT/two-vendors.xml" <<'EOF'
<cpu><arch>x86_64</arch><model>Westmere</model><vendor>Intel</vendor></cpu>
<cpu><arch>x86_64</arch><model>EPYC</model><vendor>AMD</vendor></cpu>
EOF
for cmd in "cpu-models aarch64" "cpu-models nosuch" \
           "cpu-compare $OUT/pentium3.xml" "cpu-compare $OUT/westmere-avx.xml" \
           "cpu-compare $OUT/nosuch.xml" "cpu-compare $OUT/bad.xml" \
           "cpu-baseline $OUT/pentium3.xml" "cpu-baseline $OUT/westmere-avx.xml" \
           "cpu-baseline $OUT/two-vendors.xml" "cpu-baseline $OUT/nosuch.xml" \
           "hypervisor-cpu-compare $OUT/pentium3.xml" "hypervisor-cpu-baseline $OUT/pentium3.xml" \
           "hypervisor-cpu-compare --arch aarch64 $OUT/pentium3.xml"; do
    # shellcheck disable=SC2086
    "${R[@]}" $cmd > "$OUT/cmd.ours" 2>&1 || true
    # shellcheck disable=SC2086
    "${L[@]}" $cmd > "$OUT/cmd.theirs" 2>&1 || true
    same "$OUT/cmd.theirs" "$OUT/cmd.ours" "$cmd: libvirtd's answer"
done

# ---------------------------------------------------------------- rvsh prints what virsh prints
# Against both daemons: stdout, stderr and the exit status byte for byte
# (the memory figures change between two runs: numbers are masked).
[ -x "$RVSH" ] || fail "$RVSH is not built"
cat > "$OUT/intel.xml" <<'EOF2'
<cpu><model>Westmere</model><vendor>Intel</vendor></cpu>
EOF2
echo '<domain/>' > "$OUT/nocpu.xml"
cd "$OUT"
for uri in "$QEMU_URI" "$LIBVIRTD_QEMU_URI"; do
    for cmd in "nodememstats" "nodememstats --cell 0" "nodememstats --cell 9" "nodememstats --cell x" \
               "pool-capabilities" "cpu-compare pentium3.xml" "cpu-compare intel.xml" \
               "cpu-compare --error intel.xml" "cpu-compare nocpu.xml" "cpu-compare missing.xml" \
               "cpu-compare ours-cpu.xml" "cpu-baseline westmere-avx.xml" "cpu-baseline two-vendors.xml" \
               "cpu-baseline pentium3.xml" "hypervisor-cpu-compare pentium3.xml" \
               "hypervisor-cpu-compare intel.xml" "hypervisor-cpu-baseline pentium3.xml" \
               "hypervisor-cpu-compare --arch aarch64 pentium3.xml" "freecell --all"; do
        for tool in virsh "$RVSH"; do
            rc=0
            # shellcheck disable=SC2086
            "$tool" -c "$uri" $cmd > "$OUT/p.out" 2> "$OUT/p.err" || rc=$?
            sed -E 's/[0-9]+ KiB/N KiB/' "$OUT/p.out" > "$OUT/p.$(basename "$tool").out"
            cp "$OUT/p.err" "$OUT/p.$(basename "$tool").err"
            echo "$rc" > "$OUT/p.$(basename "$tool").rc"
        done
        for f in out err rc; do
            diff -u "$OUT/p.virsh.$f" "$OUT/p.rvsh.$f" >&2 ||
                fail "rvsh $cmd (${uri%%\?*}): its $f differs from virsh's (- virsh, + rvsh)"
        done
    done
    echo "ok   rvsh's host CPU, memory and pool-capabilities commands print what virsh prints (${uri%%\?*})"
done
