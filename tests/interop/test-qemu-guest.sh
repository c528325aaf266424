#!/usr/bin/env bash
# A real guest that boots (tests/tools/build-test-guest.sh: Debian's
# kernel, a busybox initramfs that powers off on the ACPI power button),
# booted directly from <os><kernel>/<initrd>/<cmdline> under TCG, through
# virsh, events seen by `virsh event --loop --all`:
#   shutdown: the power button, the guest powers off: Shutdown Finished
#     after guest request, Stopped Shutdown, shut off (shutdown);
#   reboot (libvirtd's fake reboot): the power button, the guest powers
#     off, QEMU is reset and the guest boots again in the same process,
#     running (booted);
#   reset (DOMAIN_RESET): system_reset, the guest boots again at once;
#   the serial console is a pty carrying the guest's output;
#   the balloon: currentMemory below memory is reached by the guest's
#     virtio balloon driver (BALLOON_CHANGE), seen in GetInfo.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

bg "$OUT/events" virsh -c "$QEMU_URI" event --loop --all
qemu_domain_xml warm > "$OUT/warm.xml"
_warm()
{
    "${V[@]}" define "$OUT/warm.xml" > /dev/null 2>&1
    "${V[@]}" undefine warm > /dev/null 2>&1
    grep -q "domain 'warm': Defined" "$OUT/events"
}
wait_for 30 "virsh event to see a definition" _warm

state_is() { [ "$("${V[@]}" domstate --reason "$1")" = "$2" ]; }
# readies N: the guest said "ready" N times on its console (once a boot).
readies() { [ "$(grep -c 'remvirt-test-guest: ready' "$OUT/console")" -ge "$1" ]; }

qemu_guest_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" dumpxml --inactive g > "$OUT/g.dumpxml"
grep -qF "<kernel>$TEST_GUEST_KERNEL</kernel>" "$OUT/g.dumpxml" || fail "dumpxml lost <kernel>"
grep -qF "<cmdline>console=ttyS0 quiet panic=-1</cmdline>" "$OUT/g.dumpxml" || fail "dumpxml lost <cmdline>"

"${V[@]}" start g > /dev/null
capture_console g "$OUT/console"
wait_for 300 "the guest to boot (its console says ready)" readies 1
echo "ok   the guest booted: its console (a pty) says ready"

# currentMemory 96 of 128 MiB: the balloon's target from the start; the
# guest's driver (loaded by its init) gives the rest back.
used() { "${V[@]}" dominfo g | sed -n 's/^Used memory: *//p'; }
_ballooned() { [ "$(used)" = "98304 KiB" ]; }
wait_for 120 "the guest's balloon to reach 96 MiB" _ballooned
"$SYSTEM_PYTHON3" - > "$OUT/py" <<PY
import libvirt
d = libvirt.open("$QEMU_URI").lookupByName("g")
print(d.info()[1:3])
PY
[ "$(cat "$OUT/py")" = "[131072, 98304]" ] || fail "python3-libvirt info: $(cat "$OUT/py")"
echo "ok   the balloon: 96 of 128 MiB once the guest's driver gave the rest back (virsh dominfo, python)"

g_pid=$(qemu_pids "$QEMU_DIR/run/")
"${V[@]}" reboot g > /dev/null
_rebooted() { [ "$(grep -c "domain 'g': Shutdown" "$OUT/events")" -ge 1 ] && readies 2; }
wait_for 300 "the guest to power off and boot again" _rebooted
wait_for 20 "g to run after its reboot" state_is g "running (booted)"
[ "$(qemu_pids "$QEMU_DIR/run/")" = "$g_pid" ] || fail "the reboot changed the QEMU process"
grep -q 'remvirt-test-guest: power button' "$OUT/console" || fail "the guest did not see the power button"
echo "ok   reboot: the power button, the guest powered off and booted again in the same QEMU"

"${V[@]}" reset g > /dev/null
wait_for 300 "the guest to boot again after its reset" readies 3
state_is g "running (booted)" || fail "g is $("${V[@]}" domstate --reason g) after its reset"
[ "$(qemu_pids "$QEMU_DIR/run/")" = "$g_pid" ] || fail "the reset changed the QEMU process"
echo "ok   reset: the guest booted again at once, in the same QEMU, no lifecycle event"

"${V[@]}" shutdown g > /dev/null
wait_for 120 "the guest to power off" state_is g "shut off (shutdown)"
_gone() { [ -z "$(qemu_pids "$QEMU_DIR/run/")" ]; }
wait_for 20 "the QEMU to exit" _gone
echo "ok   shutdown: the guest powered off, shut off (shutdown), its QEMU gone"

cat > "$OUT/expected" <<'EOT'
event 'lifecycle' for domain 'g': Defined Added
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'lifecycle' for domain 'g': Started Booted
event 'lifecycle' for domain 'g': Shutdown Finished after guest request
event 'lifecycle' for domain 'g': Shutdown Finished after guest request
event 'lifecycle' for domain 'g': Stopped Shutdown
EOT
_last() { grep -q "domain 'g': Stopped" "$OUT/events"; }
wait_for 10 "the last event" _last || true
grep "^event 'lifecycle' for domain 'g'" "$OUT/events" > "$OUT/got" || true
same "$OUT/expected" "$OUT/got" "virsh event --loop --all"
