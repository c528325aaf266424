#!/usr/bin/env bash
# The QMP events a guest OS causes, turned into lifecycle events, seen by
# `virsh event --loop --all`.  A guest without a disk causes none, so
# tests/tools/fake-qemu.py stands in for QEMU here (the other
# test-qemu-*.sh run the real one):
#   shutdown: POWERDOWN, SHUTDOWN (guest) -> Shutdown Finished after guest
#     request, then (on_poweroff destroy) Stopped Shutdown, shut off (shutdown);
#   a panic: GUEST_PANICKED -> Crashed Panicked, then (on_crash destroy)
#     Stopped Crashed, shut off (crashed);
#   on_crash preserve: crashed (panicked), the process kept;
#   on_poweroff restart: the same process reset and running again;
#   reboot: libvirtd's fake reboot: the power button, the guest's
#     SHUTDOWN (Shutdown Finished after guest request), then a reset in
#     the same process, running (booted) again;
#   remvirtd killed (SIGKILL) in the middle of a start: after a restart
#   the half-started QEMU is killed and the domain shut off (failed).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
fake_qemu
start_remvirtd_qemu "qemu_binary = \"$FAKE\""
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

qemu_domain_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" start g > /dev/null
"${V[@]}" shutdown g > /dev/null
wait_for 20 "g to shut down" state_is g "shut off (shutdown)"
echo "ok   shutdown: shut off (shutdown)"

"${V[@]}" start g > /dev/null
g_pid=$(qemu_pids "$QEMU_DIR/run/")
"${V[@]}" reboot g > /dev/null
_g_rebooted() { [ "$(grep -c "domain 'g': Shutdown" "$OUT/events")" = 2 ]; }
wait_for 20 "g's shutdown event of the reboot" _g_rebooted
wait_for 20 "g to run again after its reboot" state_is g "running (booted)"
[ "$(qemu_pids "$QEMU_DIR/run/")" = "$g_pid" ] || fail "reboot changed the QEMU process"
echo "ok   reboot: power button, then a reset in the same process"
kill -USR1 "$(qemu_pids "$QEMU_DIR/run/")"
wait_for 20 "g to be stopped after its panic" state_is g "shut off (crashed)"
echo "ok   a panic with on_crash destroy: shut off (crashed)"

sed "s|</os>|</os><on_crash>preserve</on_crash>|; s|<name>g<|<name>p<|" "$OUT/g.xml" > "$OUT/p.xml"
"${V[@]}" define "$OUT/p.xml" > /dev/null
"${V[@]}" start p > /dev/null
kill -USR1 "$(qemu_pids "$QEMU_DIR/run/")"
wait_for 20 "p to be crashed" state_is p "crashed (panicked)"
[ -n "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "on_crash preserve did not keep the process"
"${V[@]}" destroy p > /dev/null
echo "ok   a panic with on_crash preserve: crashed (panicked), kept until destroyed"

sed "s|</os>|</os><on_poweroff>restart</on_poweroff>|; s|<name>g<|<name>r<|" "$OUT/g.xml" > "$OUT/r.xml"
"${V[@]}" define "$OUT/r.xml" > /dev/null
"${V[@]}" start r > /dev/null
r_pid=$(qemu_pids "$QEMU_DIR/run/")
"${V[@]}" shutdown r > /dev/null
_r_shut() { grep -q "domain 'r': Shutdown" "$OUT/events"; }
wait_for 20 "r's shutdown event" _r_shut
wait_for 20 "r to run again after a shutdown with on_poweroff restart" state_is r "running (booted)"
[ "$(qemu_pids "$QEMU_DIR/run/")" = "$r_pid" ] || fail "on_poweroff restart changed the QEMU process"
"${V[@]}" destroy r > /dev/null
echo "ok   a shutdown with on_poweroff restart: the same QEMU runs on"

cat > "$OUT/expected" <<'EOF'
event 'lifecycle' for domain 'g': Defined Added
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'lifecycle' for domain 'g': Started Booted
event 'lifecycle' for domain 'g': Shutdown Finished after guest request
event 'lifecycle' for domain 'g': Stopped Shutdown
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'lifecycle' for domain 'g': Started Booted
event 'lifecycle' for domain 'g': Shutdown Finished after guest request
event 'lifecycle' for domain 'g': Crashed Panicked
event 'lifecycle' for domain 'g': Stopped Crashed
event 'lifecycle' for domain 'p': Defined Added
event 'lifecycle' for domain 'p': Resumed Unpaused
event 'lifecycle' for domain 'p': Started Booted
event 'lifecycle' for domain 'p': Crashed Panicked
event 'lifecycle' for domain 'p': Shutdown Finished after host request
event 'lifecycle' for domain 'p': Stopped Destroyed
event 'lifecycle' for domain 'r': Defined Added
event 'lifecycle' for domain 'r': Resumed Unpaused
event 'lifecycle' for domain 'r': Started Booted
event 'lifecycle' for domain 'r': Shutdown Finished after guest request
event 'lifecycle' for domain 'r': Shutdown Finished after host request
event 'lifecycle' for domain 'r': Stopped Destroyed
EOF
_last() { grep -q "domain 'r': Stopped" "$OUT/events"; }
wait_for 10 "the last event" _last || true
grep "^event 'lifecycle' for domain '[gpr]'" "$OUT/events" > "$OUT/got" || true
same "$OUT/expected" "$OUT/got" "virsh event --loop --all"

# A start that hangs (the QEMU never greets), remvirtd killed meanwhile.
stop_remvirtd
FAKE_QEMU_SILENT=1 start_remvirtd_qemu "qemu_binary = \"$FAKE\""
"${V[@]}" start g > "$OUT/hung-start" 2>&1 &
hung=$!
_starting() { [ -e "$QEMU_DIR/run/g.status" ]; }
wait_for 20 "the start to be under way" _starting
half=$(qemu_pids "$QEMU_DIR/run/")
[ -n "$half" ] || fail "no QEMU for the hanging start"
kill -KILL "$REMVIRTD_PID"
wait "$REMVIRTD_PID" 2>/dev/null || true
REMVIRTD_PID=
wait "$hung" 2>/dev/null && fail "the start survived remvirtd's death"
rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
start_remvirtd_qemu "qemu_binary = \"$FAKE\""
state_is g "shut off (failed)" || fail "the half-started g is $("${V[@]}" domstate --reason g)"
_half_gone() { ! kill -0 "$half" 2>/dev/null; }
wait_for 10 "the half-started QEMU to be killed" _half_gone
[ ! -e "$QEMU_DIR/run/g.status" ] || fail "the half-started g's status is left"
echo "ok   killed in the middle of a start: the QEMU killed after the restart, g shut off (failed)"
