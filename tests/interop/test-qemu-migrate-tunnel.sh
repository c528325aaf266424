#!/usr/bin/env bash
# Tunnelled live migration between two remvirtds (tests/migrate-hosts.sh:
# A and B in two network namespaces, qemu+tcp): `virsh migrate --live
# --p2p --tunnelled g qemu+tcp://B/system`; A's remvirtd calls B's
# PREPARE_TUNNEL3_PARAMS and QEMU's stream goes through that call's data
# stream, not QEMU to QEMU.
#   - refusals: --tunnelled without --p2p, PREPARE3 with TUNNELLED,
#     PREPARE_TUNNEL3 without it, B's prepare refused (a disk missing);
#   - domjobabort in the middle, B's remvirtd killed in the middle, and
#     B's remvirtd stopped then the job aborted: the guest runs on A alone;
#   - keepalive: B's remvirtd stopped mid-migration (tunnelled and plain
#     peer to peer), or B's link down (tunnelled), fails it within the
#     bound, the guest runs on at A;
#   - A to B: runs on B with its memory (the agent's in-RAM SSH keys);
#     events; the stream went through the daemons (A migrated to fd:, B's
#     QEMU took fd:); back to A, tunnelled too;
#   - A's remvirtd has the same descriptors and threads before and after;
#   - B hiding MIGRATION_PARAMS: bad plain PREPARE_TUNNEL3 calls refused,
#     A's source tunnels with PREPARE_TUNNEL3 and FINISH3;
#   - the same between two stock libvirtd 9.0, events and timing printed;
#     then libvirtd to remvirtd and remvirtd to libvirtd, tunnelled, and
#     libvirtd to a remvirtd hiding MIGRATION_PARAMS (the plain steps),
#     and libvirtd's source with B stopped mid-migration (its keepalive's
#     failure timed beside A's).
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

source "$(dirname "$0")/../migrate-hosts.sh"

migrate_pair_up

bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp
EVA=$BG_PID
key_guest_up "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITunnelledTunnelledTunnelled00000 rv@tunnel"
# A's remvirtd's descriptors and threads (the migration's go with it;
# counted after the first peer-to-peer migration, which starts the thread
# of the destinations' keepalive, for the daemon's life).
fds_a() { ls "/proc/$REMVIRTD_PID/fd" | wc -l; }
threads_a() { ls "/proc/$REMVIRTD_PID/task" | wc -l; }

# ---- refusals ----
migrate_refused "tunnelled without --p2p" "peer2peer|peer-to-peer" --live --tunnelled g "$B"

rawpy "$REMVIRTD_SOCK" > "$OUT/raw" 2>&1 <<'PY' || { show "$OUT/raw"; fail "raw tunnelled calls"; }
import sys
import rawclient as rc

a = rc.Client(sys.argv[1]); a.open_connection("qemu:///system")
g = a.lookup("g")
NOPARAMS = rc.xdr_uint(0)
def call(proc, payload, codes, what):
    serial = a.send_call(proc, payload)
    hdr, body = a.recv_reply()
    rc.expect_error_reply(hdr, body, serial, codes, what)
XML = rc.xdr_uint(1) + rc.xdr_string("destination_xml") + rc.xdr_int(7) + rc.xdr_string("<domain/>")
# PERFORM3 tunnelled without PEER2PEER
call(rc.PROC_DOMAIN_MIGRATE_PERFORM3_PARAMS,
     g + rc.xdr_opt_string(None) + NOPARAMS + rc.xdr_uint(0) + rc.xdr_uint(1 | 4),
     {rc.ERR_ARGUMENT_UNSUPPORTED}, "PERFORM3 tunnelled without PEER2PEER")
# PREPARE3 (no stream) with TUNNELLED; PREPARE_TUNNEL3 without it
call(303, XML + rc.xdr_uint(0) + rc.xdr_uint(1 | 2 | 4), {rc.ERR_OPERATION_INVALID},
     "PREPARE3 with TUNNELLED")
call(304, XML + rc.xdr_uint(0) + rc.xdr_uint(1 | 2), {rc.ERR_INVALID_ARG},
     "PREPARE_TUNNEL3 without TUNNELLED")
# PREPARE_TUNNEL3 with a storage copy; with bad XML
call(304, XML + rc.xdr_uint(0) + rc.xdr_uint(1 | 2 | 4 | 64), {rc.ERR_ARGUMENT_UNSUPPORTED},
     "PREPARE_TUNNEL3 with a storage copy")
call(304, XML + rc.xdr_uint(0) + rc.xdr_uint(1 | 2 | 4), None, "PREPARE_TUNNEL3 of '<domain/>'")
rc.expect_usable(a, "A")
PY
on_a_alone "raw tunnelled calls"

virsh -q -c "$A" dumpxml --inactive g | sed "s|$SHARED/g.qcow2|$SHARED/missing.qcow2|" > "$OUT/g-missing.xml"
migrate_refused "B's prepare refused" "missing.qcow2" --live --p2p --tunnelled g "$B" --xml "$OUT/g-missing.xml"
FDS0=$(fds_a)
THREADS0=$(threads_a)

# ---- domjobabort in the middle (16 MiB/s: a few seconds) ----
has_job() { virsh -c "$A" domjobinfo g 2> /dev/null | grep -q "Operation: *Outgoing migration"; }
bg "$OUT/abort" virsh -q -c "$A" migrate --live --p2p --tunnelled --bandwidth 16 g "$B"
MIG=$BG_PID
wait_for 60 "the tunnelled migration job on A" has_job
sleep 0.5
virsh -q -c "$A" domjobabort g > /dev/null
if finish "$MIG"; then fail "the aborted tunnelled migration succeeded"; fi
grep -q "canceled by client" "$OUT/abort.err" || { show "$OUT/abort.err"; fail "aborted: no clear error"; }
wait_for 30 "B without g after the abort" b_empty
wait_for 30 "g running on A after the abort" run_a
on_a_alone "aborted"

# ---- B's remvirtd killed while the stream comes ----
bg "$OUT/cut" virsh -q -c "$A" migrate --live --p2p --tunnelled --bandwidth 16 g "$B"
MIG=$BG_PID
wait_for 60 "the tunnelled migration job on A" has_job
sleep 0.5
kill -KILL "$BPID"
wait "$BPID" 2> /dev/null || true
if finish "$MIG"; then fail "the tunnelled migration whose destination daemon died succeeded"; fi
grep -q "error: " "$OUT/cut.err" || { show "$OUT/cut.err"; fail "destination killed: no error"; }
echo "destination killed: $(grep 'error: ' "$OUT/cut.err" | tail -1)" >&2
wait_for 60 "g running on A after B's daemon died" run_a
start_b
wait_for 30 "B without g after its restart" b_empty
# B's remvirtd's descriptors now (a destination's tunnels go with them)
fds_b() { ls "/proc/$BPID/fd" | wc -l; }
FDSB0=$(fds_b)
wait_for 60 "the guest's key on A after the cut migration" agent_on "$A"
on_a_alone "destination killed"
wait_for 10 "A's migration threads gone" eval '[ "$(threads_a)" -le "$THREADS0" ]'
[ "$(fds_a)" -le "$FDS0" ] || { ls -l "/proc/$REMVIRTD_PID/fd" >&2; fail "A's remvirtd has $(fds_a) descriptors, $FDS0 before the failures"; }

# ---- B's remvirtd stopped (SIGSTOP) while the stream comes, then
# domjobabort: A's thread, stuck sending to B, has its connection cut
# 10 s after the migration failed; the guest runs on at A, and B,
# continued, drops its QEMU (the stream's connection is gone) ----
bg "$OUT/stopped" virsh -q -c "$A" migrate --live --p2p --tunnelled --bandwidth 16 g "$B"
MIG=$BG_PID
wait_for 60 "the tunnelled migration job on A" has_job
kill -STOP "$BPID"
sleep 2
virsh -q -c "$A" domjobabort g > /dev/null
t0=$(date +%s)
if finish "$MIG"; then fail "the aborted migration to a stopped destination succeeded"; fi
echo "stopped destination, aborted: answered after $(( $(date +%s) - t0 )) s: $(grep 'error: ' "$OUT/stopped.err" | tail -1)" >&2
wait_for 30 "g running on A after the abort" run_a
kill -CONT "$BPID"
wait_for 60 "B without g once continued" b_empty
on_a_alone "stopped destination"
grep -q "took nothing of the migration stream" "$OUT/stopped.err" || { show "$OUT/stopped.err"; fail "A did not cut the stuck connection"; }

# ---- keepalive on the destination's connection: A with 1 s and 2 PINGs
# (qemu_keepalive_interval, _count; default 5 and 5), B's remvirtd stopped
# (SIGSTOP) or its link down mid-migration, no domjobabort: the migration fails on its own
# within about 3 s, the guest runs on at A; B, continued, cleans up ----
MIG_A_CONF+=('qemu_keepalive_interval = 1' 'qemu_keepalive_count = 2')
restart_a
wait_for 30 "g running on A after A's restart" run_a
kill "$EVA" 2> /dev/null || true      # (its connection went with the daemon)
bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp
EVA=$BG_PID
# stopped_dest WHAT HOW MIGRATE-ARGS...: the migration with B stopped
# (HOW: "stop", its remvirtd SIGSTOPped; "link", its link down) once its
# job runs at A.  (4 MiB/s: the stream alone would take 15 s, and B's
# QEMU, not stopped, would take all of it without the cancel.)
b_stop() { if [ "$1" = link ]; then ip netns exec $MIG_NS ip link set rvmb down; else kill -STOP "$BPID"; fi; }
b_cont() { if [ "$1" = link ]; then ip netns exec $MIG_NS ip link set rvmb up; else kill -CONT "$BPID"; fi; }
stopped_dest()
{
    local what=$1 how=$2 t0 took
    shift 2
    bg "$OUT/ka" virsh -q -c "$A" migrate --live --p2p "$@" --bandwidth 4 g "$B"
    MIG=$BG_PID
    wait_for 60 "the $what migration job on A" has_job
    b_stop "$how"
    t0=$(now_ms)
    if finish "$MIG"; then b_cont "$how"; fail "$what: the migration succeeded"; fi
    took=$(( $(now_ms) - t0 ))
    echo "$what: failed after $took ms: $(grep 'error: ' "$OUT/ka.err" | tail -1)" >&2
    grep -q "did not answer keepalive" "$OUT/ka.err" || { b_cont "$how"; show "$OUT/ka.err"; fail "$what: not the keepalive's error"; }
    [ "$took" -le 8000 ] || { b_cont "$how"; fail "$what: failed after $took ms, past the keepalive's bound"; }
    wait_for 30 "$what: g running on A" run_a || { b_cont "$how"; fail "$what: g does not run on A"; }
    b_cont "$how"
    wait_for 60 "$what: B without g once back" b_empty
    on_a_alone "$what"
    wait_for 10 "$what: B's descriptors as before" eval '[ "$(fds_b)" -le "$FDSB0" ]' ||
        { ls -l "/proc/$BPID/fd" >&2; fail "$what: B's remvirtd has $(fds_b) descriptors, $FDSB0 before"; }
}
now_ms() { date +%s%3N; }
stopped_dest "tunnelled, destination stopped" stop --tunnelled
stopped_dest "plain peer-to-peer, destination stopped" stop
stopped_dest "tunnelled, destination's link down" link --tunnelled
FDS0=$(fds_a)
THREADS0=$(threads_a)

# ---- A to B, tunnelled ----
bg "$OUT/events-b" virsh -c "$B" event --all --loop --timestamp
EVB=$BG_PID
start=$(date +%s.%N)
virsh -q -c "$A" migrate --live --p2p --tunnelled g "$B" > "$OUT/migrate" 2>&1 ||
    { show "$OUT/migrate"; show "$RV_TMP/remvirtd/remvirtd.log"; show "$BDIR/remvirtd.log"; fail "virsh migrate --p2p --tunnelled"; }
end=$(date +%s.%N)
echo "remvirtd: virsh migrate --p2p --tunnelled took $(awk "BEGIN { print $end - $start }") s" >&2
on_b_migrated
# (through the daemons: QEMU to an fd at A, from an fd at B; no port)
grep -q "migrating to fd:" "$RV_TMP/remvirtd/remvirtd.log" || fail "A's QEMU did not migrate to the tunnel"
grep -q "tunnelled incoming migration prepared" "$BDIR/remvirtd.log" || fail "B prepared no tunnel"
sleep 1
kill "$EVA" "$EVB" 2> /dev/null || true
check_migrated_events "$OUT/events-a" "$OUT/events-b"
echo "events on A:" >&2; cut -d' ' -f3- "$OUT/events-a" | grep -v "^$" | tail -4 >&2
echo "events on B:" >&2; cut -d' ' -f3- "$OUT/events-b" >&2

# ---- back to A, tunnelled (B's remvirtd the source) ----
virsh -q -c "$B" migrate --live --p2p --tunnelled g "$A" > "$OUT/back" 2>&1 ||
    { show "$OUT/back"; fail "tunnelled back to A"; }
run_a || fail "g is not running on A again"
wait_for 30 "B without g" b_empty
wait_for 60 "the guest's key on A again" agent_on "$A"
wait_for 10 "A's migration threads gone" eval '[ "$(threads_a)" -le "$THREADS0" ]'
[ "$(fds_a)" -le "$FDS0" ] || { ls -l "/proc/$REMVIRTD_PID/fd" >&2; fail "A's remvirtd has $(fds_a) descriptors, $FDS0 at first"; }
# (B's first peer-to-peer migration started the loop of its destinations'
# keepalive, which stays: its thread and its wake-up pipe)
[ "$(fds_b)" -le $((FDSB0 + 2)) ] || { ls -l "/proc/$BPID/fd" >&2; fail "B's remvirtd has $(fds_b) descriptors, $FDSB0 before"; }

# ---- B without MIGRATION_PARAMS (feature 13): A's source falls back to
# the plain PREPARE_TUNNEL3 (215) and FINISH3 (217), as libvirtd does;
# first B's refusals of bad plain calls ----
kill "$BPID"; wait "$BPID" 2> /dev/null || true
RV_TEST_NO_MIGRATION_PARAMS=1 start_b
rawpy "$BDIR/remvirt-sock" > "$OUT/raw215" 2>&1 <<'PY' || { show "$OUT/raw215"; fail "raw PREPARE_TUNNEL3 calls"; }
import struct, sys
import rawclient as rc

b = rc.Client(sys.argv[1]); b.open_connection("qemu:///system")
def call(payload, codes, what):
    serial = b.send_call(rc.PROC_DOMAIN_MIGRATE_PREPARE_TUNNEL3, payload)
    hdr, body = b.recv_reply()
    rc.expect_error_reply(hdr, body, serial, codes, what)
# cookie_in, flags (64 bits), dname, resource, dom_xml
def args(flags, xml="<domain/>", dname=None):
    return (rc.xdr_uint(0) + struct.pack(">Q", flags) + rc.xdr_opt_string(dname) +
            struct.pack(">Q", 0) + rc.xdr_string(xml))
call(args(1 | 2), {rc.ERR_INVALID_ARG}, "PREPARE_TUNNEL3 without TUNNELLED")
call(args(1 | 2 | 4 | (1 << 40)), {rc.ERR_INVALID_ARG}, "PREPARE_TUNNEL3 with 64-bit flags")
call(args(1 | 2 | 4 | 64), {rc.ERR_ARGUMENT_UNSUPPORTED}, "PREPARE_TUNNEL3 with a storage copy")
call(args(1 | 2 | 4), None, "PREPARE_TUNNEL3 of '<domain/>'")
call(args(1 | 2 | 4, xml="not xml", dname="x"), None, "PREPARE_TUNNEL3 of 'not xml'")
call(rc.xdr_uint(0) + struct.pack(">Q", 6), {rc.ERR_RPC}, "PREPARE_TUNNEL3 cut short")
rc.expect_usable(b, "B")
PY
b_empty || fail "B's refused PREPARE_TUNNEL3 calls left a domain or a QEMU"
BL=$(wc -l < "$BDIR/remvirtd.log")
virsh -q -c "$A" migrate --live --p2p --tunnelled g "$B" > "$OUT/plain" 2>&1 ||
    { show "$OUT/plain"; show "$BDIR/remvirtd.log"; fail "tunnelled to B without MIGRATION_PARAMS"; }
served=$(tail -n +$((BL + 1)) "$BDIR/remvirtd.log" | sed -n 's/.* proc=\(21[3-8]\|30[2-7]\) type=0 .*/\1/p' | tr '\n' ' ')
[ "$served" = "215 217 " ] || fail "B served '$served', not the plain PREPARE_TUNNEL3, FINISH3"
tail -n +$((BL + 1)) "$BDIR/remvirtd.log" | grep -q "proc=215 type=3 " || fail "no stream packets of procedure 215 at B"
on_b_migrated
virsh -q -c "$B" destroy g > /dev/null
virsh -q -c "$A" undefine g > /dev/null

# ---- the same between two stock libvirtds ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
# (their peer-to-peer keepalive as A's: compared below)
RV_LIBVIRTD_QEMU_CONF=$'keepalive_interval = 1\nkeepalive_count = 2' start_libvirtd_pair
qemu-img create -q -f qcow2 "$SHARED/lg.qcow2" 16M
sed "s|<name>g</name>|<name>lg</name>|; s|$SHARED/g.qcow2|$SHARED/lg.qcow2|" "$OUT/g.xml" > "$OUT/lg.xml"
virsh -q -c "$LA" define "$OUT/lg.xml" > /dev/null
virsh -q -c "$LA" start lg > /dev/null
bg "$OUT/levents-a" virsh -c "$LA" event --all --loop --timestamp
LEVA=$BG_PID
bg "$OUT/levents-b" virsh -c "$LB" event --all --loop --timestamp
LEVB=$BG_PID
sleep 1
# tunnel_lg WHAT FROM TO: lg moved tunnelled, timed; it runs at TO alone.
tunnel_lg()
{
    local start end
    start=$(date +%s.%N)
    virsh -q -c "$2" migrate --live --p2p --tunnelled --unsafe lg "$3" > "$OUT/lg-leg" 2>&1 ||
        { show "$OUT/lg-leg"; show "$RV_TMP/remvirtd/remvirtd.log"; fail "$1: virsh migrate --p2p --tunnelled"; }
    end=$(date +%s.%N)
    echo "$1: virsh migrate --p2p --tunnelled took $(awk "BEGIN { print $end - $start }") s" >&2
    [ "$(virsh -q -c "$3" domstate lg)" = running ] || fail "$1: lg is not running at $3"
    [ -z "$(virsh -q -c "$2" list --name)" ] || fail "$1: $2 still runs lg"
}
tunnel_lg libvirtd "$LA" "$LB"
sleep 1
kill "$LEVA" "$LEVB" 2> /dev/null || true
echo "libvirtd events on A:" >&2; cut -d' ' -f3- "$OUT/levents-a" >&2
echo "libvirtd events on B:" >&2; cut -d' ' -f3- "$OUT/levents-b" >&2
grep -q "lifecycle.*lg.*Suspended Migrated" "$OUT/levents-a" || fail "libvirtd A: Suspended Migrated"
grep -q "lifecycle.*lg.*Resumed Migrated" "$OUT/levents-b" || fail "libvirtd B: Resumed Migrated"

# ---- a libvirtd source, a remvirtd destination: libvirtd B drives
# remvirtd A's PREPARE_TUNNEL3_PARAMS and pumps QEMU's stream into it ----
tunnel_lg "libvirtd -> remvirtd" "$LB" "$A"
grep -q "tunnelled incoming migration prepared" "$RV_TMP/remvirtd/remvirtd.log" || fail "A prepared no tunnel for libvirtd"
# What libvirtd's source sent A (its client's calls and stream packets,
# for docs/wire-protocol.md): features, PREPARE_TUNNEL3_PARAMS, the
# stream, FINISH3_PARAMS.
client=$(sed -n 's/.*client \([0-9]*\): prog=0x20008086 vers=1 proc=304 type=0 .*/\1/p' "$RV_TMP/remvirtd/remvirtd.log" | tail -1)
[ -n "$client" ] || fail "no PREPARE_TUNNEL3_PARAMS call from libvirtd in A's log"
sed -n "s/.*client $client: prog=0x20008086 vers=1 proc=\([0-9]*\) type=\([0-9]\) serial=[0-9]* status=\([0-9]\).*/\1 \2 \3/p" \
    "$RV_TMP/remvirtd/remvirtd.log" | uniq -c > "$OUT/lv2rv-calls"
echo "libvirtd source -> remvirtd destination (count, proc, type, status):" >&2
cat "$OUT/lv2rv-calls" >&2
grep -q " 304 3 0$" "$OUT/lv2rv-calls" || fail "libvirtd did not finish the stream"
grep -q " 306 0 0$" "$OUT/lv2rv-calls" || fail "libvirtd did not call FINISH3_PARAMS"

# ---- and back: remvirtd A's peer-to-peer source tunnels into libvirtd B ----
tunnel_lg "remvirtd -> libvirtd" "$A" "$LB"

# ---- libvirtd's source into a remvirtd without MIGRATION_PARAMS: it
# falls back to the plain PREPARE_TUNNEL3 and FINISH3 ----
RV_TEST_NO_MIGRATION_PARAMS=1 restart_a
AL=$(wc -l < "$RV_TMP/remvirtd/remvirtd.log")
tunnel_lg "libvirtd -> remvirtd, plain steps" "$LB" "$A"
tail -n +$((AL + 1)) "$RV_TMP/remvirtd/remvirtd.log" |
    sed -n "s/.* proc=\(21[3-8]\|30[2-7]\) type=\([03]\) serial=[0-9]* status=\([0-9]\).*/\1 \2 \3/p" | uniq -c > "$OUT/lv2rv-plain"
echo "libvirtd source -> remvirtd without parameters (count, proc, type, status):" >&2
cat "$OUT/lv2rv-plain" >&2
grep -q " 215 0 0$" "$OUT/lv2rv-plain" || fail "libvirtd did not call PREPARE_TUNNEL3"
grep -q " 215 3 0$" "$OUT/lv2rv-plain" || fail "libvirtd did not finish the stream of PREPARE_TUNNEL3"
grep -q " 217 0 0$" "$OUT/lv2rv-plain" || fail "libvirtd did not call FINISH3"
grep -q " 30[2-7] " "$OUT/lv2rv-plain" && fail "libvirtd used a step with parameters"

# ---- libvirtd's source (keepalive 1 s x 2 in its qemu.conf) tunnelling
# into B stopped mid-migration, for comparison with A's above ----
tunnel_lg "remvirtd -> libvirtd A" "$A" "$LA"
bg "$OUT/lka" virsh -q -c "$LA" migrate --live --p2p --tunnelled --unsafe --bandwidth 4 lg "$B"
MIG=$BG_PID
la_job() { virsh -c "$LA" domjobinfo lg 2> /dev/null | grep -q "Operation: *Outgoing migration"; }
wait_for 60 "libvirtd's migration job" la_job
kill -STOP "$BPID"
t0=$(now_ms)
if finish "$MIG"; then kill -CONT "$BPID"; fail "libvirtd's migration to a stopped B succeeded"; fi
echo "libvirtd source, tunnelled, destination stopped: failed after $(( $(now_ms) - t0 )) ms: $(grep 'error: ' "$OUT/lka.err" | tail -1)" >&2
kill -CONT "$BPID"
wait_for 30 "lg running on libvirtd A" eval '[ "$(virsh -q -c "$LA" domstate lg)" = running ]'
wait_for 60 "B without lg once continued" eval '[ -z "$(virsh -q -c "$B" list --all --name)" ]'
virsh -q -c "$LA" destroy lg > /dev/null
