#!/usr/bin/env bash
# Memory and vcpu changes of QEMU domains through virsh and python3-libvirt:
#   setmaxmem / setmem --config: the definition (dominfo, dumpxml), above
#     the maximum refused, the maximum of a running domain refused;
#   setvcpus --config within the maximum, --maximum; a guest started with
#     <vcpu current='2'>3</vcpu> (-smp 2,maxcpus=3) gets its third vcpu
#     live (query-hotpluggable-cpus, device_add): vcpucount, vcpuinfo,
#     domstats and the live XML say 3; beyond the maximum refused, fewer
#     live refused by QEMU for this guest without ACPI (unplug:
#     test-qemu-vcpu-unplug.sh);
#   setmem --live --config on the guest that boots (its virtio balloon
#     driver gives the memory back): dominfo's used memory follows, and
#     the definition keeps the new size; a guest without a balloon refused.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

# refused WHAT PATTERN COMMAND...: the virsh command fails saying PATTERN.
refused()
{
    local what=$1 pattern=$2
    shift 2
    "${V[@]}" "$@" > "$OUT/err" 2>&1 && fail "$what succeeded"
    grep -q -- "$pattern" "$OUT/err" || { show "$OUT/err"; fail "$what: not the expected error"; }
}
info() { "${V[@]}" dominfo "$1" | sed -n "s/^$2: *//p"; }
xml_has() { "${V[@]}" dumpxml "${@:2}" > "$OUT/xml" && grep -qF "$1" "$OUT/xml"; }

qemu_domain_xml t | sed "s|<vcpu>1</vcpu>|<vcpu current='2'>3</vcpu>|" > "$OUT/t.xml"
"${V[@]}" define "$OUT/t.xml" > /dev/null
xml_has "<vcpu placement='static' current='2'>3</vcpu>" t || fail "dumpxml lost <vcpu current>"

"${V[@]}" setmaxmem t 48M --config > /dev/null
[ "$(info t 'Max memory')" = "49152 KiB" ] || fail "setmaxmem --config: max memory $(info t 'Max memory')"
xml_has "<currentMemory unit='KiB'>49152</currentMemory>" t || fail "setmaxmem below the current memory did not lower it"
"${V[@]}" setmem t 32M --config > /dev/null
xml_has "<currentMemory unit='KiB'>32768</currentMemory>" t || fail "setmem --config: no currentMemory 32768"
refused "setmem above the maximum" "cannot set memory higher than max memory" setmem t 100M --config
refused "setmem --live of an inactive domain" "domain is not running" setmem t 16M --live
echo "ok   setmaxmem and setmem --config: the definition; above the maximum, or live while off, refused"

"${V[@]}" setvcpus t 1 --config > /dev/null
[ "$("${V[@]}" vcpucount t --config --current)" = 1 ] || fail "setvcpus 1 --config"
refused "setvcpus above the maximum" "greater than max allowable vcpus for the persistent domain: 4 > 3" setvcpus t 4 --config
"${V[@]}" setvcpus t 4 --config --maximum > /dev/null
[ "$("${V[@]}" vcpucount t --config --maximum)" = 4 ] || fail "setvcpus 4 --config --maximum"
"${V[@]}" setvcpus t 3 --config --maximum > /dev/null
"${V[@]}" setvcpus t 2 --config > /dev/null
xml_has "<vcpu placement='static' current='2'>3</vcpu>" t --inactive || fail "setvcpus --config: not in dumpxml"
echo "ok   setvcpus --config within the maximum, --maximum; above it refused"

"${V[@]}" start t > /dev/null
grep -q -- "-smp 2,maxcpus=3" "$QEMU_DIR/run/t.log" || { show "$QEMU_DIR/run/t.log"; fail "QEMU was not given -smp 2,maxcpus=3"; }
[ "$("${V[@]}" vcpucount t --live --current)" = 2 ] || fail "vcpucount --live --current before the hotplug"
"${V[@]}" setvcpus t 3 --live > /dev/null
[ "$("${V[@]}" vcpucount t --live --current)" = 3 ] || fail "vcpucount --live --current after setvcpus 3 --live"
[ "$("${V[@]}" vcpucount t --config --current)" = 2 ] || fail "setvcpus --live changed the definition"
[ "$("${V[@]}" vcpuinfo t | grep -c '^VCPU:')" = 3 ] || fail "vcpuinfo does not list 3 vcpus"
[ "$(info t 'CPU(s)')" = 3 ] || fail "dominfo CPU(s) is $(info t 'CPU(s)'), not 3"
"${V[@]}" domstats --vcpu t > "$OUT/vstats"
grep -q '^  vcpu.current=3$' "$OUT/vstats" || { show "$OUT/vstats"; fail "domstats vcpu.current is not 3"; }
xml_has "<vcpu placement='static'>3</vcpu>" t || fail "the live XML does not say 3 vcpus"
refused "setvcpus --live above the maximum" "greater than max allowable vcpus for the live domain: 4 > 3" setvcpus t 4 --live
refused "setvcpus --live to fewer without ACPI" "CPU hot unplug not supported without ACPI" setvcpus t 1 --live
refused "setmaxmem of a running domain" "cannot resize the maximum memory on an active domain" setmaxmem t 128M
echo "ok   setvcpus --live: the third vcpu hotplugged (vcpucount, vcpuinfo, dominfo, domstats, dumpxml); beyond or fewer refused"

"$SYSTEM_PYTHON3" - > "$OUT/py" <<PY
import libvirt
d = libvirt.open("$QEMU_URI").lookupByName("t")
d.setVcpusFlags(3, libvirt.VIR_DOMAIN_AFFECT_CONFIG)
d.setMemoryFlags(40 * 1024, libvirt.VIR_DOMAIN_AFFECT_CONFIG)
print(d.vcpusFlags(libvirt.VIR_DOMAIN_AFFECT_CONFIG), d.maxMemory())
try:
    d.setMemoryFlags(1024 * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
except libvirt.libvirtError as e:
    print(e.get_error_code() == libvirt.VIR_ERR_INVALID_ARG)
PY
printf '3 49152\nTrue\n' > "$OUT/py.expected"
same "$OUT/py.expected" "$OUT/py" "python3-libvirt setVcpusFlags, setMemoryFlags"
"${V[@]}" destroy t > /dev/null
xml_has "<currentMemory unit='KiB'>40960</currentMemory>" t || fail "setMemoryFlags(config) was not kept"

qemu_domain_xml nob "<memballoon model='none'/>" > "$OUT/nob.xml"
"${V[@]}" define "$OUT/nob.xml" > /dev/null
"${V[@]}" start nob > /dev/null
refused "setmem without a balloon" "without the balloon device" setmem nob 32M --live
"${V[@]}" destroy nob > /dev/null

# The guest that boots: its balloon driver acts on the new target.
qemu_guest_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" start g > /dev/null
_ballooned() { [ "$(info g 'Used memory')" = "$1 KiB" ]; }
wait_for 300 "the guest's balloon to reach 96 MiB" _ballooned 98304
"${V[@]}" setmem g 80M --live --config > /dev/null
wait_for 120 "the guest's balloon to reach 80 MiB" _ballooned 81920
xml_has "<currentMemory unit='KiB'>81920</currentMemory>" g || fail "the live XML has not currentMemory 81920"
xml_has "<currentMemory unit='KiB'>81920</currentMemory>" g --inactive || fail "setmem --config was not kept"
"${V[@]}" dommemstat g > "$OUT/memstat"
grep -q '^actual 81920$' "$OUT/memstat" || { show "$OUT/memstat"; fail "dommemstat: actual is not 81920"; }
echo "ok   setmem --live --config on a booted guest: its balloon follows (dominfo, dommemstat), the definition keeps it; no balloon refused"
"${V[@]}" destroy g > /dev/null
