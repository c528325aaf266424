#!/usr/bin/env bash
# Live migration between two remvirtds, each a "host" of its own: this
# test's network namespace (A, 10.231.0.1) and one it makes (B,
# 10.231.0.2) joined by a veth pair, each remvirtd with its own state
# directories, reached over qemu+tcp (auth none, private addresses).  The
# test guest's disk is in a directory both see.  `virsh migrate --live`
# (managed direct: BEGIN3 ... CONFIRM3) moves it from A to B:
#   - it runs on B, not on A (shut off (migrated), transient there);
#   - its memory came along: the SSH keys its agent keeps in RAM are there,
#     and the counter it prints on its console went on (counter_continued);
#   - events: A Suspended/Stopped Migrated, B Started/Resumed Migrated;
#   - domjobinfo on A answers during a (bandwidth-limited) migration;
#   - a destination that cannot start it (a disk missing there) and an
#     abort (domjobabort) mid-migration leave it running on A alone;
#   - back to A with --persistent (--migrateuri naming A's address), then
#     to B with --persistent --undefinesource: the definition moves.
# Then, where libvirtd's QEMU driver runs here, the same migration between
# two stock libvirtds in the same two namespaces, for the figures: total
# time and QEMU's downtime, printed beside remvirtd's.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

migrate_pair_up

bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp
EVA=$BG_PID
bg "$OUT/events-b" virsh -c "$B" event --all --loop --timestamp
EVB=$BG_PID

agent_guest_up "$A" g "$OUT/g.xml"
KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMigratedMigratedMigratedMigrated00000 rv@migrate"
echo "$KEY" > "$OUT/key"
virsh -q -c "$A" set-user-sshkeys g root --file "$OUT/key" > /dev/null
virsh -q -c "$A" get-user-sshkeys g root | grep -qF "$KEY" || fail "the key is not in the guest"

# ---- a destination that cannot start it: the disk is not there ----
# (the same domain: its UUID; another would be refused at BEGIN3)
virsh -q -c "$A" dumpxml --inactive g | sed "s|$SHARED/g.qcow2|$SHARED/missing.qcow2|" > "$OUT/g-missing.xml"
if virsh -q -c "$A" migrate --live g "$B" --xml "$OUT/g-missing.xml" > "$OUT/fail1" 2>&1; then
    fail "migration to a destination without the disk succeeded"
fi
grep -q "missing.qcow2" "$OUT/fail1" || { show "$OUT/fail1"; fail "prepare failure: no reason given"; }
[ "$(virsh -q -c "$A" domstate g)" = running ] || fail "g is not running on A after the failed prepare"
[ -z "$(virsh -q -c "$B" list --all --name)" ] || fail "B kept a domain after the failed prepare"
[ -z "$(qemu_pids "$BDIR/qemu/run/")" ] || fail "B kept a QEMU after the failed prepare"

# ---- abort mid-migration (1 MiB/s: it takes a while) ----
bg "$OUT/abort" virsh -q -c "$A" migrate --live --bandwidth 1 g "$B"
MIG=$BG_PID
has_job() { virsh -q -c "$A" domjobinfo g 2> /dev/null | grep -q "Job type: *Unbounded"; }
wait_for 60 "the migration job on A" has_job
virsh -c "$A" domjobinfo g > "$OUT/jobinfo" 2>&1
grep -q "Operation: *Outgoing migration" "$OUT/jobinfo" || { show "$OUT/jobinfo"; fail "domjobinfo during migration"; }
grep -q "Memory processed:" "$OUT/jobinfo" || { show "$OUT/jobinfo"; fail "domjobinfo has no progress"; }
virsh -q -c "$A" domjobabort g
if wait "$MIG"; then fail "the aborted migration succeeded"; fi
grep -q "operation aborted: job 'migration out' canceled by client" "$OUT/abort.err" ||
    { show "$OUT/abort.err"; fail "abort: not libvirt's words"; }
wait_for 30 "g running on A after the abort" run_a
wait_for 30 "B without g after the abort" b_empty

# ---- the steps called out of turn or with bad arguments (raw calls):
# clear errors, and g runs on A as before ----
virsh -q -c "$A" dumpxml g > "$OUT/g-live.xml"
rawpy "$REMVIRTD_SOCK" "$BDIR/remvirt-sock" "$OUT/g-live.xml" > "$OUT/raw" 2>&1 <<'PY' ||
import sys
import rawclient as rc

def params(**kv):
    out = rc.xdr_uint(len(kv))
    for k, v in kv.items():
        out += rc.xdr_string(k) + rc.xdr_int(7) + rc.xdr_string(v)
    return out

NOCOOKIE = rc.xdr_uint(0)
a = rc.Client(sys.argv[1]); a.open_connection("qemu:///system")
b = rc.Client(sys.argv[2]); b.open_connection("qemu:///system")
xml = open(sys.argv[3]).read()
g = a.lookup("g")

def expect(client, proc, payload, codes, what):
    serial = client.send_call(proc, payload)
    hdr, body = client.recv_reply()
    rc.expect_error_reply(hdr, body, serial, codes, what)

expect(a, rc.PROC_DOMAIN_MIGRATE_CONFIRM3_PARAMS, g + params() + NOCOOKIE + rc.xdr_uint(1) + rc.xdr_int(0),
       {rc.ERR_OPERATION_INVALID}, "CONFIRM3 success with no completed migration")
expect(a, rc.PROC_DOMAIN_MIGRATE_PERFORM3_PARAMS, g + rc.xdr_opt_string(None) + params() + NOCOOKIE + rc.xdr_uint(1),
       {rc.ERR_INVALID_ARG}, "PERFORM3 without migrate_uri")
expect(a, rc.PROC_DOMAIN_MIGRATE_PERFORM3_PARAMS,
       g + rc.xdr_opt_string("qemu+tcp://10.231.0.2/system") + params(migrate_uri="tcp:10.231.0.2:1") + NOCOOKIE + rc.xdr_uint(1),
       {rc.ERR_INVALID_ARG}, "PERFORM3 with a destination URI but no PEER2PEER")
expect(a, rc.PROC_DOMAIN_MIGRATE_BEGIN3_PARAMS, g + params() + rc.xdr_uint(1 | 4),
       {rc.ERR_ARGUMENT_UNSUPPORTED}, "BEGIN3 tunnelled")
expect(a, rc.PROC_DOMAIN_MIGRATE_BEGIN3_PARAMS, g + params() + rc.xdr_uint(1 << 30),
       {rc.ERR_INVALID_ARG}, "BEGIN3 unknown flag")
expect(b, rc.PROC_DOMAIN_MIGRATE_PREPARE3_PARAMS, params() + NOCOOKIE + rc.xdr_uint(1),
       {rc.ERR_INVALID_ARG}, "PREPARE3 without the domain XML")
expect(b, rc.PROC_DOMAIN_MIGRATE_PREPARE3_PARAMS, params(destination_xml="<domain") + NOCOOKIE + rc.xdr_uint(1),
       None, "PREPARE3 with broken XML")
expect(b, rc.PROC_DOMAIN_MIGRATE_PREPARE3_PARAMS, params(destination_xml=xml, migrate_uri="rdma:x") + NOCOOKIE + rc.xdr_uint(1),
       {rc.ERR_INVALID_ARG}, "PREPARE3 with a URI it cannot listen on")
expect(b, rc.PROC_DOMAIN_MIGRATE_FINISH3_PARAMS, params(destination_xml=xml) + NOCOOKIE + rc.xdr_uint(1) + rc.xdr_int(0),
       {rc.ERR_NO_DOMAIN}, "FINISH3 with no incoming migration")
a.call_ok(rc.PROC_DOMAIN_MIGRATE_CONFIRM3_PARAMS, g + params() + NOCOOKIE + rc.xdr_uint(1) + rc.xdr_int(1))
rc.check(True, "CONFIRM3 cancelled on a running guest: nothing to do")
rc.expect_usable(a, "A")
rc.expect_usable(b, "B")
PY
    { show "$OUT/raw"; fail "raw migration calls"; }
cat "$OUT/raw" >&2
[ "$(virsh -q -c "$A" domstate g)" = running ] || fail "g is not running on A after the raw calls"
b_empty || fail "B has a domain or a QEMU after the raw calls"

# ---- B's remvirtd killed while the stream comes (16 MiB/s: a few
# seconds): either virsh notices first and aborts the job, or the stream
# completes QEMU to QEMU, FINISH3 cannot be called and virsh confirms it
# cancelled (A's QEMU, stopped, runs again: B's QEMU took no disk lock);
# either way A runs the guest on, and B, restarted, kills the waiting QEMU
# it finds ----
bg "$OUT/cut" virsh -q -c "$A" migrate --live --bandwidth 16 g "$B"
MIG=$BG_PID
wait_for 60 "the migration job on A" has_job
kill -KILL "$BPID"
wait "$BPID" 2> /dev/null || true
if wait "$MIG"; then fail "the migration whose destination daemon died succeeded"; fi
wait_for 60 "g running on A after B's daemon died" run_a
[ "$(qemu_pids "$BDIR/qemu/run/" | wc -l)" -le 1 ] || fail "B has more than one QEMU"
start_b
bg "$OUT/events-b2" virsh -c "$B" event --all --loop --timestamp
EVB=$BG_PID
wait_for 30 "B without g after its restart" b_empty
agent_guest_key_a() { virsh -q -c "$A" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
wait_for 60 "the guest's key on A after the cut migration" agent_guest_key_a

# ---- the migration ----
capture_console g "$OUT/console-a"
start=$(date +%s.%N)
LIBVIRT_LOG_FILTERS="1:libvirt 1:remote" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/virsh.log" \
    virsh -q -c "$A" migrate --live g "$B" > "$OUT/migrate" 2>&1 || { show "$OUT/migrate"; show "$BDIR/remvirtd.log"; fail "virsh migrate"; }
end=$(date +%s.%N)
echo "remvirtd: virsh migrate took $(awk "BEGIN { print $end - $start }") s" >&2
# The client's own log says which way it went: version 3 with parameters.
sed -n 's/.*virDomainMigrateVersion3Full:[0-9]* : \([A-Za-z0-9]*\) .*/\1/p' "$OUT/virsh.log" | tr '\n' ' ' > "$OUT/steps"
[ "$(cat "$OUT/steps")" = "Begin3 Prepare3 Perform3 Finish3 Confirm3 " ] ||
    { show "$OUT/steps"; fail "virsh did not take the version 3 steps"; }
grep -q "Using migration protocol 3 with extensible parameters" "$OUT/virsh.log" || fail "virsh: not the *3_PARAMS steps"
capture_console g "$OUT/console-b" "$BDIR/qemu/run"
counter_continued "$OUT/console-a" "$OUT/console-b"
[ "$(virsh -q -c "$B" domstate g)" = running ] || fail "g is not running on B"
virsh -q -c "$B" domstate --reason g | grep -q "running (migrated)" || fail "B's reason"
[ -z "$(virsh -q -c "$A" list --name)" ] || fail "g still runs on A"
[ "$(virsh -q -c "$A" domstate g)" = "shut off" ] || fail "A: g is not shut off"
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "A kept a QEMU"
[ "$(qemu_pids "$BDIR/qemu/run/" | wc -l)" = 1 ] || fail "B has no QEMU (or more than one)"
agent_a() { virsh -q -c "$A" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
agent_b() { virsh -q -c "$B" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
wait_for 60 "the guest's key, in its memory, on B" agent_b
virsh -q -c "$B" domjobinfo g > /dev/null
# The completed job's figures stay on A (the domain is defined there).
virsh -c "$A" domjobinfo --completed g > "$OUT/completed" 2>&1 || { show "$OUT/completed"; fail "domjobinfo --completed on A"; }
grep -q "Operation: *Outgoing migration" "$OUT/completed" || { show "$OUT/completed"; fail "A's completed job"; }
echo "completed job on A:" >&2; grep -E "Time elapsed|Total downtime|Memory processed" "$OUT/completed" >&2 || true
sleep 1
kill "$EVA" "$EVB" 2> /dev/null || true
check_migrated_events "$OUT/events-a" "$OUT/events-b2"
# ---- back to A, made persistent there (it is defined there already) ----
virsh -q -c "$B" migrate --live --persistent --migrateuri tcp://10.231.0.1 g "$A" > "$OUT/back" 2>&1 || { show "$OUT/back"; fail "migrate back"; }
[ "$(virsh -q -c "$A" domstate g)" = running ] || fail "g is not running on A again"
[ "$(virsh -q -c "$A" dominfo g | sed -n 's/^Persistent: *//p')" = yes ] || fail "g is not persistent on A"
[ -z "$(virsh -q -c "$B" list --all --name)" ] || fail "B kept the transient g"
wait_for 60 "the guest's key on A again" agent_a
# ---- to B with --persistent --undefinesource: its definition moves ----
virsh -q -c "$A" migrate --live --persistent --undefinesource g "$B" > "$OUT/move" 2>&1 ||
    { show "$OUT/move"; fail "migrate --persistent --undefinesource"; }
[ -z "$(virsh -q -c "$A" list --all --name)" ] || fail "A kept g's definition"
[ -f "$QEMU_DIR/etc/g.xml" ] && fail "A kept g.xml"
[ "$(virsh -q -c "$B" dominfo g | sed -n 's/^Persistent: *//p')" = yes ] || fail "g is not persistent on B"
[ -f "$BDIR/qemu/etc/g.xml" ] || fail "B has no g.xml"
wait_for 60 "the guest's key, in its memory, on B" agent_b
[ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)$(qemu_pids "$BDIR/qemu/run/" | wc -l)" = 01 ] ||
    fail "not exactly one QEMU (on B) after the third migration"
# The guest's pause as it saw it: stopped on A to running on B (events'
# times; both daemons share this machine's clock).
ev_time() { date -d "$(grep "$2" "$1" | tail -n 1 | cut -d' ' -f1,2 | sed 's/:$//')" +%s.%N; }
pause() { awk "BEGIN { print $(ev_time "$3" "$4") - $(ev_time "$1" "$2") }"; }
echo "remvirtd: the guest paused $(pause "$OUT/events-a" "Suspended Migrated" "$OUT/events-b2" "Resumed Migrated") s" >&2
echo "events on A:" >&2; cut -d' ' -f3- "$OUT/events-a" >&2
echo "events on B:" >&2; cut -d' ' -f3- "$OUT/events-b2" >&2
virsh -q -c "$B" destroy g > /dev/null
virsh -q -c "$B" undefine g > /dev/null

# ---- the same between two stock libvirtds, for the figures ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair
shared_guest_xml lg
bg "$OUT/levents-a" virsh -c "$LA" event --all --loop --timestamp
bg "$OUT/levents-b" virsh -c "$LB" event --all --loop --timestamp
agent_guest_up "$LA" lg "$OUT/lg.xml"
start=$(date +%s.%N)
virsh -q -c "$LA" migrate --live --unsafe lg "$LB" --migrateuri tcp://10.231.0.2 > "$OUT/lmigrate" 2>&1 ||
    { show "$OUT/lmigrate"; fail "libvirtd: virsh migrate"; }
end=$(date +%s.%N)
echo "libvirtd: virsh migrate took $(awk "BEGIN { print $end - $start }") s" >&2
[ "$(virsh -q -c "$LB" domstate lg)" = running ] || fail "libvirtd: lg is not running on B"
sleep 1
echo "libvirtd: the guest paused $(pause "$OUT/levents-a" "Suspended Migrated" "$OUT/levents-b" "Resumed Migrated") s" >&2
for side in "$LA" "$LB"; do
    echo "libvirtd completed job on ${side%%/system}:" >&2
    virsh -c "$side" domjobinfo --completed lg 2>&1 | grep -E "Time elapsed|Total downtime|Memory processed|error" >&2 || true
done
virsh -q -c "$LB" destroy lg > /dev/null
