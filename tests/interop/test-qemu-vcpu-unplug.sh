#!/usr/bin/env bash
# Live vCPU unplug with real QEMU and the test guest (Debian's kernel
# ejects a vCPU on ACPI's request; its /init onlines hotplugged ones):
# `virsh setvcpus --live` up to the maximum and back down to the vCPUs
# the domain started with, `vcpucount`, and the live XML's <vcpus> list
# as libvirtd 9.0 writes it (observed: enabled, hotpluggable, order); it
# survives a restart of remvirtd (reattach).  Plugging again after an
# unplug is refused under TCG (QEMU 7.2 crashes then: SIGSEGV, seen
# here), also after a restart.  Below the vCPUs QEMU
# started with is refused; an unplug QEMU refuses (a guest with no OS
# never switched ACPI to the CPU hotplug that can eject) is a clear
# error and leaves the count as it was.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

qemu_guest_xml cpu | sed "s|<vcpu>1</vcpu>|<vcpu current='1'>3</vcpu>|" > "$OUT/cpu.xml"
grep -q "current='1'>3<" "$OUT/cpu.xml" || fail "qemu_guest_xml has no <vcpu>1</vcpu> to change"
"${V[@]}" define "$OUT/cpu.xml" > /dev/null
"${V[@]}" start cpu > /dev/null
capture_console cpu "$OUT/console"
_ready() { grep -q "remvirt-test-guest: ready" "$OUT/console" 2> /dev/null; }
wait_for 120 "the guest to boot" _ready

live_count() { "${V[@]}" vcpucount --live --current cpu | sed '/^$/d'; }
vcpus_xml() { "${V[@]}" dumpxml cpu | sed -n '/<vcpu placement/p; /<vcpus>/,/<\/vcpus>/p'; }
# setvcpus N: when the guest takes longer than the 5 s libvirtd (and
# remvirtd) wait, the call fails with the timeout; the next call sees
# what the guest did in the end.
_set() { "${V[@]}" setvcpus cpu "$1" --live > "$OUT/set.out" 2>&1 && [ "$(live_count)" = "$1" ]; }
set_live()
{
    _set "$1" && return 0
    grep -qF "vcpu unplug request timed out" "$OUT/set.out" ||
        fail "setvcpus cpu $1 --live: $(cat "$OUT/set.out")"
    wait_for 60 "the guest to let the vcpus go" _set "$1" || fail "setvcpus cpu $1: $(cat "$OUT/set.out")"
}

set_live 3
[ "$(vcpus_xml)" = "  <vcpu placement='static'>3</vcpu>
  <vcpus>
    <vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>
    <vcpu id='1' enabled='yes' hotpluggable='yes' order='2'/>
    <vcpu id='2' enabled='yes' hotpluggable='yes' order='3'/>
  </vcpus>" ] || fail "live XML after plugging to 3: $(vcpus_xml)"
echo "ok   setvcpus 3 --live: 3 on, <vcpus> as libvirtd's"

set_live 2
[ "$(vcpus_xml)" = "  <vcpu placement='static' current='2'>3</vcpu>
  <vcpus>
    <vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>
    <vcpu id='1' enabled='yes' hotpluggable='yes' order='2'/>
    <vcpu id='2' enabled='no' hotpluggable='yes'/>
  </vcpus>" ] || fail "live XML after unplugging to 2: $(vcpus_xml)"
echo "ok   setvcpus 2 --live: vcpu 2 unplugged by the guest"

stop_remvirtd
start_remvirtd_qemu
[ "$(live_count)" = 2 ] || fail "after a restart the live count is $(live_count)"
vcpus_xml | grep -qF "<vcpu id='2' enabled='no' hotpluggable='yes'/>" ||
    fail "after a restart the live XML lost <vcpus>: $(vcpus_xml)"
echo "ok   after a restart of remvirtd: 2 on, <vcpus> kept"
if got=$("${V[@]}" setvcpus cpu 3 --live 2>&1); then
    fail "a vcpu plugged in again after an unplug under TCG: $got"
fi
grep -qF "QEMU under TCG crashes when vcpus are plugged in again after an unplug" <<< "$got" ||
    fail "setvcpus cpu 3 after an unplug: $got"
[ "$(live_count)" = 2 ] && [ "$("${V[@]}" domstate cpu | sed '/^$/d')" = running ] ||
    fail "the refused plug changed the domain"
echo "ok   no plug after an unplug (TCG): $got"

set_live 1
[ "$(vcpus_xml | head -n 1)" = "  <vcpu placement='static' current='1'>3</vcpu>" ] ||
    fail "live XML after unplugging to 1: $(vcpus_xml)"
"${V[@]}" dumpxml --inactive cpu | grep -q "<vcpus>" && fail "the definition got a <vcpus>"
echo "ok   setvcpus 1 --live: down to the vcpu the domain started with"
"${V[@]}" destroy cpu > /dev/null

# Two vcpus at start: the second cannot go (not hotpluggable).
qemu_guest_xml two | sed "s|<vcpu>1</vcpu>|<vcpu current='2'>3</vcpu>|" > "$OUT/two.xml"
"${V[@]}" define "$OUT/two.xml" > /dev/null
"${V[@]}" start two > /dev/null
if got=$("${V[@]}" setvcpus two 1 --live 2>&1); then
    fail "unplugging a vcpu QEMU started with succeeded: $got"
fi
grep -qF "only hotplugged vcpus can be unplugged" <<< "$got" || fail "setvcpus two 1: $got"
[ "$("${V[@]}" vcpucount --live --current two | sed '/^$/d')" = 2 ] || fail "two's count changed"
echo "ok   a vcpu the domain started with is not unplugged: $got"
"${V[@]}" destroy two > /dev/null

# No OS in the guest: QEMU refuses the unplug; the count stays.
qemu_domain_xml fw | sed "s|<vcpu>1</vcpu>|<vcpu current='1'>2</vcpu>|; s|</os>|</os><features><acpi/></features>|" \
    > "$OUT/fw.xml"
"${V[@]}" define "$OUT/fw.xml" > /dev/null
"${V[@]}" start fw > /dev/null
"${V[@]}" setvcpus fw 2 --live > /dev/null || fail "setvcpus fw 2 --live failed"
if got=$("${V[@]}" setvcpus fw 1 --live 2>&1); then
    fail "an unplug QEMU cannot do succeeded: $got"
fi
grep -qF "device_del" <<< "$got" || fail "setvcpus fw 1: $got"
[ "$("${V[@]}" vcpucount --live --current fw | sed '/^$/d')" = 2 ] || fail "fw's count changed"
echo "ok   an unplug QEMU refuses: $got; still 2"
"${V[@]}" destroy fw > /dev/null
