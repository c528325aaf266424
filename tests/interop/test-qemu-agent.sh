#!/usr/bin/env bash
# The guest agent, through virsh, with real QEMU and the test guest (its
# /init answers on the org.qemu.guest_agent.0 port like qemu-ga would):
# `virsh domhostname` is the guest agent's guest-get-host-name,
# `virsh reboot --mode agent` has the guest reboot itself (it boots
# again), `virsh shutdown --mode agent` has it power off (shut off);
# without the channel: "QEMU guest agent is not configured"; with the
# channel but nothing answering in the guest (no kernel, the firmware
# only): "Guest agent is not responding" after the timeout.  Both modes
# (`--mode acpi,agent`, as libvirtd): the agent when it works; when it
# does not answer (remvirt.agent=mute) or refuses (remvirt.agent=fail),
# the ACPI power button instead (shutdown: the guest powers off; reboot:
# it boots again).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"

fails_with()
{
    local want=$1 got
    shift
    if got=$("$@" 2>&1); then
        fail "'$*' succeeded: $got"
    fi
    grep -qF -- "$want" <<< "$got" || fail "'$*' failed without '$want': $got"
    echo "ok   $* fails: $want"
}

qemu_guest_xml ga | sed "s|<devices>|<devices>$CHANNEL|" > "$OUT/ga.xml"
"${V[@]}" define "$OUT/ga.xml" > /dev/null
"${V[@]}" start ga > /dev/null
capture_console ga "$OUT/console"
_ready() { [ "$(grep -c "remvirt-test-guest: ready" "$OUT/console" 2> /dev/null)" -ge "$1" ] 2> /dev/null; }
wait_for 120 "the guest to boot" _ready 1

# The agent's port may open a moment after "ready": retry until it answers.
_hostname() { "${V[@]}" domhostname ga > "$OUT/hostname" 2>&1; }
wait_for 2 "domhostname to be answered" _hostname
[ "$(sed '/^$/d' "$OUT/hostname")" = remvirt-test-guest ] || fail "domhostname ga: $(cat "$OUT/hostname")"
[ "$("${V[@]}" domhostname --source agent ga | sed '/^$/d')" = remvirt-test-guest ] ||
    fail "domhostname --source agent ga"
echo "ok   virsh domhostname: the guest agent's host name"
_reboot() { "${V[@]}" reboot --mode agent ga > "$OUT/reboot.out" 2>&1; }
wait_for 2 "reboot --mode agent to be accepted" _reboot
wait_for 120 "the guest to boot again" _ready 2
grep -q "remvirt-test-guest: agent reboot" "$OUT/console" ||
    fail "the guest did not reboot through its agent"
[ "$("${V[@]}" domstate ga | sed '/^$/d')" = running ] || fail "ga is not running after the reboot"
echo "ok   virsh reboot --mode agent: the guest rebooted itself"

_shutdown() { "${V[@]}" shutdown --mode agent ga > "$OUT/shutdown.out" 2>&1; }
wait_for 2 "shutdown --mode agent to be accepted" _shutdown
_off() { [ "$("${V[@]}" domstate ga | sed '/^$/d')" = "shut off" ]; }
wait_for 60 "ga to shut off" _off
grep -q "remvirt-test-guest: agent powerdown" "$OUT/console" ||
    fail "the guest did not power off through its agent"
echo "ok   virsh shutdown --mode agent: the guest powered off"

# No channel: refused at once, as libvirtd does.
qemu_domain_xml plain > "$OUT/plain.xml"
"${V[@]}" define "$OUT/plain.xml" > /dev/null
"${V[@]}" start plain > /dev/null
fails_with "QEMU guest agent is not configured" "${V[@]}" shutdown --mode agent plain
fails_with "QEMU guest agent is not configured" "${V[@]}" reboot --mode agent plain
fails_with "QEMU guest agent is not configured" "${V[@]}" domhostname plain
"${V[@]}" destroy plain > /dev/null

# A channel that nobody in the guest reads: the sync times out.
qemu_domain_xml mute "$CHANNEL" > "$OUT/mute.xml"
"${V[@]}" define "$OUT/mute.xml" > /dev/null
"${V[@]}" start mute > /dev/null
fails_with "Guest agent is not responding" "${V[@]}" shutdown --mode agent mute
fails_with "Guest agent is not responding" "${V[@]}" domhostname mute
[ "$("${V[@]}" domstate mute | sed '/^$/d')" = running ] || fail "mute stopped after a failed agent shutdown"
echo "ok   a failed agent shutdown leaves the guest running"
"${V[@]}" destroy mute > /dev/null

# Both modes: the agent first, then ACPI when it fails.  A guest whose
# agent never answers (nothing reads the port) and one whose agent
# refuses guest-shutdown both go down by the power button.
for kind in mute fail; do
    qemu_guest_xml "b$kind" | sed -e "s|<devices>|<devices>$CHANNEL|" \
        -e "s|<cmdline>console=ttyS0|<cmdline>remvirt.agent=$kind console=ttyS0|" > "$OUT/b$kind.xml"
    "${V[@]}" define "$OUT/b$kind.xml" > /dev/null
    "${V[@]}" start "b$kind" > /dev/null
    capture_console "b$kind" "$OUT/console-$kind"
done
_ready_in() { [ "$(grep -c "remvirt-test-guest: ready" "$OUT/console-$1" 2> /dev/null)" -ge "$2" ] 2> /dev/null; }
wait_for 120 "bmute to boot" _ready_in mute 1
wait_for 120 "bfail to boot" _ready_in fail 1
sleep 1     # (the guest's power button watcher starts just before "ready")
"${V[@]}" reboot --mode acpi,agent bmute > "$OUT/reboot-mute.out" 2>&1 ||
    fail "reboot --mode acpi,agent of a guest whose agent is mute failed: $(cat "$OUT/reboot-mute.out")"
wait_for 120 "bmute to boot again" _ready_in mute 2
grep -q "remvirt-test-guest: power button" "$OUT/console-mute" ||
    fail "bmute did not reboot by the power button"
[ "$("${V[@]}" domstate bmute | sed '/^$/d')" = running ] || fail "bmute is not running after the reboot"
echo "ok   reboot --mode acpi,agent, agent mute: rebooted by the ACPI power button"
"${V[@]}" shutdown --mode acpi,agent bmute > "$OUT/shutdown-mute.out" 2>&1 ||
    fail "shutdown --mode acpi,agent of bmute failed: $(cat "$OUT/shutdown-mute.out")"
_off_named() { [ "$("${V[@]}" domstate "$1" | sed '/^$/d')" = "shut off" ]; }
wait_for 60 "bmute to shut off" _off_named bmute
echo "ok   shutdown --mode acpi,agent, agent mute: powered off by the ACPI power button"

_shutdown_fail() { "${V[@]}" shutdown --mode acpi,agent bfail > "$OUT/shutdown-fail.out" 2>&1; }
wait_for 2 "shutdown --mode acpi,agent of bfail to be accepted" _shutdown_fail
wait_for 60 "bfail to shut off" _off_named bfail
grep -q "remvirt-test-guest: agent refuses" "$OUT/console-fail" ||
    fail "bfail's agent was not asked first"
grep -q "remvirt-test-guest: power button" "$OUT/console-fail" ||
    fail "bfail did not power off by the power button"
echo "ok   shutdown --mode acpi,agent, agent refuses: asked first, then the ACPI power button"

# The agent alone still fails (no fall-back without acpi in the modes).
"${V[@]}" start bfail > /dev/null
: > "$OUT/console-fail2"
capture_console bfail "$OUT/console-fail2"
_ready_fail2() { grep -q "remvirt-test-guest: ready" "$OUT/console-fail2" 2> /dev/null; }
wait_for 120 "bfail to boot" _ready_fail2
_agent_only() { ! "${V[@]}" shutdown --mode agent bfail > "$OUT/agent-only.out" 2>&1 &&
                grep -qF "refused by the test agent" "$OUT/agent-only.out"; }
wait_for 5 "shutdown --mode agent of bfail to fail with the agent's error" _agent_only ||
    fail "shutdown --mode agent bfail: $(cat "$OUT/agent-only.out")"
[ "$("${V[@]}" domstate bfail | sed '/^$/d')" = running ] || fail "bfail went down without ACPI asked"
echo "ok   shutdown --mode agent, agent refuses: the agent's error, the guest runs on"
"${V[@]}" destroy bfail > /dev/null
