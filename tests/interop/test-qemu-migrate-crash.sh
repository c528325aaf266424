#!/usr/bin/env bash
# A live migration's failures leave the guest running on exactly one host,
# its memory whole, and no definition lost (docs/qemu-driver.md, "Failures
# and restarts"), between two remvirtds on the two hosts of
# tests/migrate-hosts.sh, `virsh migrate --live --persistent
# --undefinesource` (managed direct, as nova's flags without p2p):
#   - a crash point (RV_CRASH_AT, server/drivers/crash_point.h) at each
#     step on each side kills that remvirtd (SIGKILL) there: B after
#     PREPARE3 started its QEMU (migrate-prepare:1), A after QEMU took
#     the migrate command (migrate-perform:1) and after the stream (2), B
#     in FINISH3 before its cont (migrate-finish:1), after it (2) and
#     after the definition is durable (3), A in CONFIRM3 before the guest
#     and its definition go (migrate-confirm:1) and after (2); and A after
#     the stream of a peer-to-peer migration (B's QEMU goes with A's
#     connection).  virsh cleans up as it does (a failed step is followed
#     by FINISH3 and CONFIRM3 cancelled), the dead
#     remvirtd is started again, and then: the guest runs on one host
#     only (the other's copy, if any, paused), the SSH key its agent keeps
#     in memory is there, and the definitions are where they should be;
#   - the link cut: B's end of the veth pair set down while the stream
#     comes: A cancels the stream that sends nothing (its
#     qemu_migration_stall_timeout, 5 s here), the call fails within
#     virsh's keepalive, B drops its waiting QEMU when its keepalive gives
#     virsh's connection up (1 s x 3 here); the guest runs on A; the link
#     up again, the migration succeeds;
#   - the destination's job record, side by side with two stock libvirtd
#     9.0: domjobinfo there during the stream is refused as libvirtd
#     refuses it, domjobabort finds no job, and after it `domjobinfo
#     --completed` says Completed, Incoming migration, with the source's
#     figures (from PERFORM3's cookie); no JOB_COMPLETED event there.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

migrate_pair_up
# Shorter than the defaults (30 s; 5 s x 5), for the link cut.
MIG_A_CONF+=('qemu_migration_stall_timeout = 5')
restart_a
printf 'keepalive_interval = 1\nkeepalive_count = 3\n' >> "$BDIR/remvirtd.conf"
restart_b

agent_guest_up "$A" g "$OUT/g.xml"
KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICrashCrashCrashCrashCrashCrash00000 rv@crash"
echo "$KEY" > "$OUT/key"
virsh -q -c "$A" set-user-sshkeys g root --file "$OUT/key" > /dev/null

state_on() { virsh -q -c "$1" domstate g 2> /dev/null || echo none; }
persistent_on() { virsh -q -c "$1" dominfo g 2> /dev/null | sed -n 's/^Persistent: *//p'; }
key_on() { virsh -q -c "$1" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
run_on() { [ "$(state_on "$1")" = running ]; }
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2> /dev/null; }

# arm SIDE OP STEP: that side's remvirtd again, armed to die at OP:STEP.
arm()
{
    if [ "$1" = a ]; then
        kill_remvirtd
        RV_CRASH_AT="$2:$3" start_remvirtd_qemu "${MIG_A_CONF[@]}"
    else
        kill "$BPID"
        wait "$BPID" 2> /dev/null || true
        RV_CRASH_AT="$2:$3" start_b
    fi
}

# back_to_a: the guest that ended on B comes back to A (A's paused copy,
# if any, destroyed first: B's is the one that ran).
back_to_a()
{
    [ "$(state_on "$A")" != paused ] || virsh -q -c "$A" destroy g > /dev/null
    virsh -q -c "$B" migrate --live --persistent --undefinesource --migrateuri tcp://10.231.0.1 g "$A" \
        > "$OUT/back" 2>&1 || { show "$OUT/back"; fail "back to A"; }
    wait_for 60 "the key on A again" key_on "$A"
}

# crash SIDE OP STEP WHERE DEF_A DEF_B [OPTION...]: the migration (with
# virsh migrate's OPTIONs) with SIDE's remvirtd killed at OP:STEP; then
# the guest runs on WHERE (a or b) only, and dominfo's Persistent on A
# and on B is DEF_A and DEF_B ("" for none).
crash()
{
    local side=$1 op=$2 step=$3 where=$4 def_a=$5 def_b=$6
    shift 6
    arm "$side" "$op" "$step"
    local pid=$BPID log=$BDIR/stderr
    [ "$side" = b ] || { pid=$REMVIRTD_PID; log=$REMVIRTD_DIR/stderr; }
    local rc=0 start end
    start=$(date +%s.%N)
    timeout 120 virsh -q -c "$A" migrate --live --persistent --undefinesource "$@" g "$B" > "$OUT/m-$op-$step" 2>&1 || rc=$?
    end=$(date +%s.%N)
    [ "$rc" != 124 ] || fail "$op:$step: virsh migrate hangs"
    wait_for 30 "$side's remvirtd to die at $op:$step" eval "! alive $pid" || fail "$op:$step was not reached"
    grep -q "crash point $op:$step" "$log" || { show "$log"; fail "$side did not die at $op:$step"; }
    local lines=$(($(wc -l < "$REMVIRTD_DIR/remvirtd.log") + 1))
    if [ "$side" = a ]; then
        # (dead already, and maybe reaped: kill_remvirtd's kill would fail)
        wait "$REMVIRTD_PID" 2> /dev/null || true
        REMVIRTD_PID=
        rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
        start_remvirtd_qemu "${MIG_A_CONF[@]}"
    else
        wait "$BPID" 2> /dev/null || true
        start_b
    fi
    local other=$B here=$A
    [ "$where" = a ] || { other=$A; here=$B; }
    if ! wait_for 60 "g running on $where after $op:$step" run_on "$here"; then
        # What each side says, and what A's restarted remvirtd logged
        # besides calls (the dump at exit keeps only the last lines).
        echo "A: $(virsh -q -c "$A" domstate --reason g 2>&1); B: $(virsh -q -c "$B" domstate --reason g 2>&1)"
        tail -n "+$lines" "$REMVIRTD_DIR/remvirtd.log" | grep -v ": debug : server\." | tail -60 || true
        fail "$op:$step: g is not running on $where"
    fi
    # the other side's copy, if any, gone or stopped (CONFIRM3 cancelled or
    # the restart may still be at it)
    _settled() { [ "$(state_on "$other")" != running ] && { [ "$where" = b ] || b_empty; }; }
    wait_for 60 "the other host without a running g after $op:$step" _settled ||
        fail "$op:$step: g runs on both hosts ($(state_on "$A") on A, $(state_on "$B") on B)"
    sleep 1
    run_on "$here" && ! run_on "$other" || fail "$op:$step: g does not run on $where alone"
    wait_for 60 "the guest's key in its memory on $where" key_on "$here" || fail "$op:$step: the key is lost"
    [ "$(persistent_on "$A")" = "$def_a" ] || fail "$op:$step: A's definition: '$(persistent_on "$A")', not '$def_a'"
    [ "$(persistent_on "$B")" = "$def_b" ] || fail "$op:$step: B's definition: '$(persistent_on "$B")', not '$def_b'"
    printf '%s:%s %s(%s killed): virsh rc %s after %.2f s; g runs on %s; A: %s, B: %s\n' "$op" "$step" "${*:+$* }" "$side" "$rc" \
        "$(awk "BEGIN { print $end - $start }")" "$where" "$(state_on "$A")" "$(state_on "$B")" >&2
    # (what A's restart found: a stream still going, or one complete)
    [ "$side" = b ] || tail -n "+$lines" "$REMVIRTD_DIR/remvirtd.log" | grep -h "had migrated when\|Resumed\|resume" |
        cut -d' ' -f5- >&2 || true
    [ "$where" = a ] || back_to_a
    b_empty || fail "$op:$step: B is not empty after it"
}

#     side op               step where A's def B's def
crash b    migrate-prepare  1    a     yes     ""
crash a    migrate-perform  1    a     yes     ""
crash a    migrate-perform  2    a     yes     ""
crash b    migrate-finish   1    a     yes     ""
crash b    migrate-finish   2    b     yes     no
crash b    migrate-finish   3    b     yes     yes
crash a    migrate-confirm  1    b     yes     yes
crash a    migrate-confirm  2    b     ""      yes
# Peer to peer: the source's remvirtd, driving B itself, dies after the
# stream; B destroys its waiting QEMU when that connection closes, and the
# restarted source resumes the guest.
crash a    migrate-perform  2    a     yes     ""      --p2p
grep -q "closed before FINISH3" "$BDIR/remvirtd.log" || fail "p2p: B's QEMU did not go with the source's connection"
# Unarmed now, both: the crash points are past.
kill "$BPID"; wait "$BPID" 2> /dev/null || true; start_b
restart_a

# ---- the link cut: B's end of the veth pair down mid-stream (4 MiB/s:
# the stream takes about 16 s) ----
bg "$OUT/cut" timeout 120 virsh -k 1 -K 3 -q -c "$A" migrate --live --bandwidth 4 g "$B"
MIG=$BG_PID
sent() { virsh -q -c "$A" domjobinfo g 2> /dev/null | grep -q "Memory processed: *[1-9]"; }
wait_for 60 "the stream to begin" sent
ip netns exec $MIG_NS ip link set rvmb down
start=$(date +%s.%N)
if wait "$MIG"; then fail "the migration over a cut link succeeded"; fi
end=$(date +%s.%N)
echo "link cut: virsh migrate failed after $(awk "BEGIN { print $end - $start }") s: $(tr '\n' ' ' < "$OUT/cut.err")" >&2
grep -q "stalled" "$OUT/cut.err" || grep -q "stalled" "$RV_TMP/remvirtd/remvirtd.log" ||
    { show "$OUT/cut.err"; fail "the link cut: A did not cancel the stalled stream"; }
wait_for 30 "g running on A after the cut" run_on "$A"
echo "link cut: A's g is $(virsh -q -c "$A" domstate --reason g) (it never stopped)" >&2
# (B's keepalive gives virsh's connection up, and with it the migration
# that connection prepared: B's QEMU goes while the link is still down)
b_no_qemu() { [ -z "$(qemu_pids "$BDIR/qemu/run/")" ]; }
wait_for 30 "B's waiting QEMU to go after the cut" b_no_qemu
grep -q "closed before FINISH3" "$BDIR/remvirtd.log" || fail "B's QEMU went, but not with the connection"
wait_for 60 "the key on A after the cut" key_on "$A"
ip netns exec $MIG_NS ip link set rvmb up
wait_for 30 "B reachable again" b_up
b_empty || fail "B kept g after the cut"
virsh -q -c "$A" migrate --live g "$B" > "$OUT/again" 2>&1 || { show "$OUT/again"; fail "migrate after the link came back"; }
run_on "$B" && ! run_on "$A" || fail "after the link came back: g not on B alone"
wait_for 60 "the key on B" key_on "$B"

# ---- the destination's job record: from B back to A (16 MiB/s: a few
# seconds); A, the destination, refuses its statistics while the stream
# comes and keeps the completed record after it, as libvirtd 9.0 does
# (side by side below); no JOB_COMPLETED there ----
# dest_job SRC DST DOMAIN OUTPREFIX [virsh migrate options]: the migration,
# with DST's job queries during it and after.
dest_job()
{
    local src=$1 dst=$2 dom=$3 out=$4
    shift 4
    bg "$out-events" stdbuf -oL virsh -c "$dst" event --all --loop --timestamp
    local ev=$BG_PID
    bg "$out-mig" virsh -q -c "$src" migrate --live --bandwidth 16 "$@" "$dom" "$dst"
    local mig=$BG_PID
    _incoming() { virsh -q -c "$src" domjobinfo "$dom" 2> /dev/null | grep -q "Memory processed: *[1-9]"; }
    wait_for 60 "the stream to $dst" _incoming
    virsh -c "$dst" domjobinfo "$dom" > "$out-during" 2>&1 || true
    virsh -c "$dst" domjobabort "$dom" > "$out-abort" 2>&1 || true
    wait "$mig" || { show "$out-mig.err"; fail "$out: the migration failed"; }
    virsh -c "$dst" domjobinfo "$dom" > "$out-after" 2>&1 || true
    virsh -c "$dst" domjobinfo --completed --keep-completed "$dom" > "$out-completed" 2>&1 || true
    sleep 1
    kill "$ev" 2> /dev/null || true
    wait "$ev" 2> /dev/null || true
    grep -q "Operation not supported: migration statistics are available only on the source host" "$out-during" ||
        { show "$out-during"; fail "$out: domjobinfo on the destination during the migration"; }
    grep -q "Job type: *None" "$out-after" || { show "$out-after"; fail "$out: domjobinfo after it"; }
    grep -q "Job type: *Completed" "$out-completed" && grep -q "Operation: *Incoming migration" "$out-completed" &&
        grep -q "Time elapsed: *[1-9]" "$out-completed" && grep -q "Total downtime:" "$out-completed" &&
        grep -q "Memory processed: *[1-9]" "$out-completed" ||
        { show "$out-completed"; fail "$out: domjobinfo --completed on the destination"; }
    ! grep -q "job-completed" "$out-events" || { show "$out-events"; fail "$out: JOB_COMPLETED on the destination"; }
    grep -q "Requested operation is not valid: no job is active on the domain" "$out-abort" ||
        { show "$out-abort"; fail "$out: domjobabort on the destination"; }
    echo "$out: during: $(grep -h error "$out-during"); abort: $(grep -h error "$out-abort")" >&2
    echo "$out: completed on the destination:" >&2
    grep -E "Operation|Time elapsed|Total downtime|Memory processed" "$out-completed" >&2
}
dest_job "$B" "$A" g "$OUT/remvirtd" --migrateuri tcp://10.231.0.1
run_on "$A" && ! run_on "$B" || fail "g not on A alone after the slow migration"
# (peer to peer: the source's thread hands its figures to FINISH3 too)
dest_job "$A" "$B" g "$OUT/remvirtd-p2p" --p2p
run_on "$B" && ! run_on "$A" || fail "g not on B alone after the slow p2p migration"

if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair
shared_guest_xml lg
virsh -q -c "$LA" define "$OUT/lg.xml" > /dev/null
virsh -q -c "$LA" start lg > /dev/null
dest_job "$LA" "$LB" lg "$OUT/libvirtd" --unsafe --migrateuri tcp://10.231.0.2
virsh -q -c "$LB" destroy lg > /dev/null
