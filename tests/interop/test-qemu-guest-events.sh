#!/usr/bin/env bash
# The domain events a guest OS causes that a test guest cannot (a
# watchdog that fires, a disk I/O error, a clock change, S3 and S4, a
# memory failure, a write past a block threshold, the agent's port),
# with tests/tools/fake-qemu.py sending QEMU's events in their stead
# (SIGUSR2: the lines of its .inject file), seen by
# `virsh event --all --loop` (the callback messages) and by an old
# client: python3-libvirt through a proxy that hides
# REMOTE_EVENT_CALLBACK, so that it registers with the legacy procedures
# (105, 167) and gets the legacy messages (107, 170, ...).  With the
# pauses a watchdog and an I/O error cause (paused (watchdog), paused
# (I/O error)) and the states of power management, as libvirtd's.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
fake_qemu
start_remvirtd_qemu "qemu_binary = \"$FAKE\""
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
: > "$OUT/vda.img"
state_is() { [ "$("${V[@]}" domstate --reason "$1")" = "$2" ]; }

bg "$OUT/events" virsh -c "$QEMU_URI" event --loop --all
PROXY=$RV_TMP/proxy.sock
bg "$OUT/legacy.out" "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/legacy-events.py" \
    "$REMVIRTD_SOCK" "$PROXY" "${QEMU_URI%%\?*}?socket=$PROXY" "$OUT/legacy"
_registered() { grep -q registered "$OUT/legacy" 2> /dev/null; }
wait_for 30 "the old client to register" _registered

qemu_domain_xml g "<disk type='file' device='disk'><source file='$OUT/vda.img'/><target dev='vda' bus='virtio'/></disk><channel type='unix'><source mode='bind' path='$OUT/agent.sock'/><target type='virtio' name='org.qemu.guest_agent.0'/></channel>" > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" start g > /dev/null
"${V[@]}" domblkthreshold g vda 1048576
pid=$(qemu_pids "$QEMU_DIR/run/")
inject()    # JSON lines on stdin
{
    cat > "$QEMU_DIR/run/g.qmp.inject"
    kill -USR2 "$pid"
}

inject <<'EOF'
{"event": "RTC_CHANGE", "data": {"offset": 42, "qom-path": "/machine/unattached/device[4]"}}
{"event": "WATCHDOG", "data": {"action": "pause"}}
{"event": "STOP"}
EOF
wait_for 20 "the watchdog's pause" state_is g "paused (watchdog)"
"${V[@]}" resume g > /dev/null
inject <<'EOF'
{"event": "BLOCK_IO_ERROR", "data": {"device": "drive-vda", "node-name": "#block100", "operation": "write", "action": "stop", "nospace": true, "reason": "No space left on device"}}
{"event": "STOP"}
EOF
wait_for 20 "the I/O error's pause" state_is g "paused (I/O error)"
"${V[@]}" resume g > /dev/null
inject <<'EOF'
{"event": "SUSPEND"}
EOF
wait_for 20 "S3" state_is g "pmsuspended (unknown)"
inject <<'EOF'
{"event": "WAKEUP"}
{"event": "MEMORY_FAILURE", "data": {"recipient": "guest", "action": "inject", "flags": {"action-required": true, "recursive": false}}}
{"event": "BLOCK_WRITE_THRESHOLD", "data": {"node-name": "#block100", "amount-exceeded": 4096, "write-threshold": 1048576}}
{"event": "VSERPORT_CHANGE", "data": {"id": "channel0", "open": true}}
{"event": "VSERPORT_CHANGE", "data": {"id": "channel0", "open": false}}
{"event": "SUSPEND_DISK"}
EOF
# (the state was pmsuspended already: the event says S4 came)
_s4() { grep -q "domain 'g': PMSuspended Disk" "$OUT/events"; }
wait_for 20 "S4" _s4
"${V[@]}" destroy g > /dev/null

cat > "$OUT/expected" <<EOF
event 'lifecycle' for domain 'g': Defined Added
event 'agent-lifecycle' for domain 'g': state: 'disconnected' reason: 'domain started'
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'lifecycle' for domain 'g': Started Booted
event 'rtc-change' for domain 'g': 42
event 'watchdog' for domain 'g': pause
event 'lifecycle' for domain 'g': Suspended Watchdog
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'io-error' for domain 'g': $OUT/vda.img (virtio-disk0) pause
event 'io-error-reason' for domain 'g': $OUT/vda.img (virtio-disk0) pause due to enospc
event 'lifecycle' for domain 'g': Suspended I/O Error
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'pm-suspend' for domain 'g'
event 'lifecycle' for domain 'g': PMSuspended Memory
event 'pm-wakeup' for domain 'g'
event 'lifecycle' for domain 'g': Started Event wakeup
event 'memory-failure' for domain 'g':
recipient: guest
action: inject
flags:
	action required: 1
	recursive: 0
event 'block-threshold' for domain 'g': dev: vda($OUT/vda.img) 1048576 4096
event 'agent-lifecycle' for domain 'g': state: 'connected' reason: 'channel event'
event 'agent-lifecycle' for domain 'g': state: 'disconnected' reason: 'channel event'
event 'pm-suspend-disk' for domain 'g'
event 'lifecycle' for domain 'g': PMSuspended Disk
event 'lifecycle' for domain 'g': Shutdown Finished after host request
event 'lifecycle' for domain 'g': Stopped Destroyed
EOF
_last() { grep -q "domain 'g': Stopped" "$OUT/events"; }
wait_for 10 "the last event" _last || true
sed -n "/^event 'lifecycle' for domain 'g': Defined/,\$p" "$OUT/events" | grep -v '^$' > "$OUT/got" || true
same "$OUT/expected" "$OUT/got" "virsh event --loop --all"

cat > "$OUT/legacy.expected" <<EOF
registered
lifecycle(legacy register) g (0, 0)
lifecycle(legacy register) g (4, 0)
lifecycle(legacy register) g (2, 0)
rtc-change g (42,)
watchdog g (1,)
lifecycle(legacy register) g (3, 3)
lifecycle(legacy register) g (4, 0)
io-error g ('$OUT/vda.img', 'virtio-disk0', 1)
io-error-reason g ('$OUT/vda.img', 'virtio-disk0', 1, 'enospc')
lifecycle(legacy register) g (3, 2)
lifecycle(legacy register) g (4, 0)
pm-suspend g (0,)
lifecycle(legacy register) g (7, 0)
pm-wakeup g (0,)
lifecycle(legacy register) g (2, 4)
lifecycle(legacy register) g (7, 1)
lifecycle(legacy register) g (6, 2)
lifecycle(legacy register) g (5, 1)
EOF
_legacy_last() { grep -q "(5, 1)" "$OUT/legacy"; }
wait_for 10 "the old client's last event" _legacy_last || true
same "$OUT/legacy.expected" "$OUT/legacy" "the old client's events"
for p in "call 105" "call 167" "message 107" "message 170" "message 171" "message 172" \
         "message 195" "message 269" "message 270"; do
    grep -qx "$p" "$OUT/legacy.procs" || fail "the old client's traffic has no $p"
done
! grep -qx "call 316" "$OUT/legacy.procs" || fail "the old client used the callback registration"
! grep -qx "message 379" "$OUT/legacy.procs" || fail "a callback message reached the old client"
echo "ok   the old client registered with 105 and 167 and got the legacy messages"
