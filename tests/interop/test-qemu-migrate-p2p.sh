#!/usr/bin/env bash
# Peer-to-peer live migration between two remvirtds (tests/
# migrate-hosts.sh: A and B in two network namespaces, qemu+tcp):
# `virsh migrate --live --p2p g qemu+tcp://B/system` makes one call to A,
# whose remvirtd opens B itself and drives PREPARE3/FINISH3 there.
#   - failures leave the guest running on A alone: B unreachable, B's
#     prepare refused (a disk missing there),
#     B's remvirtd killed while the stream comes, A's QEMU killed while it
#     goes (at the end);
#   - A to B: runs on B, its memory (the agent's in-RAM SSH keys) came
#     along, its counter on the console went on (counter_continued); events A Suspended/Stopped Migrated, B Started/Resumed Migrated;
#   - back to A with --persistent;
#   - nova's call (its own code: LibvirtDriver's default flags
#     UNDEFINE_SOURCE|PERSIST_DEST|PEER2PEER|LIVE and Guest.migrate's
#     migrateToURI3 params) moves it to B with its definition;
#   - back to A over qemu+unix (B's remvirtd opens A's socket).
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

source "$(dirname "$0")/../migrate-hosts.sh"

requires "$SYSTEM_PYTHON3" -c 'import libvirt, nova.virt.libvirt.guest'
migrate_pair_up

bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp
EVA=$BG_PID
key_guest_up "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPeerToPeerPeerToPeerPeerToPeer00000 rv@p2p"

# ---- failures: the guest stays on A ----
if virsh -q -c "$A" migrate --live --p2p g qemu+tcp://10.231.0.2:16599/system > "$OUT/unreach" 2>&1; then
    fail "p2p migration to an unreachable destination succeeded"
fi
grep -qi "connect" "$OUT/unreach" || { show "$OUT/unreach"; fail "unreachable: no reason given"; }
on_a_alone "unreachable destination"

# (the same domain, its UUID: another is refused at once)
virsh -q -c "$A" dumpxml --inactive g | sed "s|$SHARED/g.qcow2|$SHARED/missing.qcow2|" > "$OUT/g-missing.xml"
if virsh -q -c "$A" migrate --live --p2p g "$B" --xml "$OUT/g-missing.xml" > "$OUT/refused" 2>&1; then
    fail "p2p migration to a destination without the disk succeeded"
fi
grep -q "missing.qcow2" "$OUT/refused" || { show "$OUT/refused"; fail "prepare refused: no reason given"; }
on_a_alone "prepare refused"

# a persistent_xml of another domain: refused by B's PREPARE3
sed "s|<name>g</name>|<name>other</name>|" "$OUT/g.xml" > "$OUT/g-other.xml"
if virsh -q -c "$A" migrate --live --p2p --persistent --persistent-xml "$OUT/g-other.xml" g "$B" > "$OUT/other" 2>&1; then
    fail "p2p migration with another domain's persistent XML succeeded"
fi
grep -q "persistent_xml names another domain" "$OUT/other" || { show "$OUT/other"; fail "persistent_xml: no clear error"; }
on_a_alone "persistent_xml of another domain"

# raw PERFORM3 calls with PEER2PEER and bad arguments: clear errors
rawpy "$REMVIRTD_SOCK" > "$OUT/raw" 2>&1 <<'PY' || { show "$OUT/raw"; fail "raw p2p calls"; }
import sys
import rawclient as rc

a = rc.Client(sys.argv[1]); a.open_connection("qemu:///system")
g = a.lookup("g")
def perform(dconnuri, params, flags, codes, what):
    serial = a.send_call(rc.PROC_DOMAIN_MIGRATE_PERFORM3_PARAMS,
                         g + rc.xdr_opt_string(dconnuri) + params + rc.xdr_uint(0) + rc.xdr_uint(flags))
    hdr, body = a.recv_reply()
    rc.expect_error_reply(hdr, body, serial, codes, what)
NOPARAMS = rc.xdr_uint(0)
perform(None, NOPARAMS, 1 | 2, {rc.ERR_INVALID_ARG}, "PEER2PEER without a destination URI")
perform("", NOPARAMS, 1 | 2, {rc.ERR_INVALID_ARG}, "PEER2PEER with an empty destination URI")
perform("qemu+tcp://10.231.0.2/system", rc.xdr_uint(1) + rc.xdr_string("destination_xml") + rc.xdr_int(1) + rc.xdr_int(5),
        1 | 2, {rc.ERR_INVALID_ARG}, "PEER2PEER with a destination_xml that is not a string")
perform("qemu+tcp://10.231.0.2/system", NOPARAMS, 1 | 2 | 4 | 64, {rc.ERR_ARGUMENT_UNSUPPORTED},
        "PEER2PEER tunnelled with a storage copy")
perform("bogus+nothing://x/", NOPARAMS, 1 | 2, None, "PEER2PEER to a URI nobody can open")
rc.expect_usable(a, "A")
PY
cat "$OUT/raw" >&2
on_a_alone "raw p2p calls"

# B's remvirtd killed while the stream comes (16 MiB/s: a few seconds):
# A's FINISH3 fails (or the stream does) and A runs the guest on.
bg "$OUT/cut" virsh -q -c "$A" migrate --live --p2p --bandwidth 16 g "$B"
MIG=$BG_PID
has_job() { virsh -c "$A" domjobinfo g 2> /dev/null | grep -q "Operation: *Outgoing migration"; }
wait_for 60 "the p2p migration job on A" has_job
# (meanwhile a second migration, or a managed one's BEGIN3, is refused)
if virsh -q -c "$A" migrate --live --p2p g "$B" > "$OUT/second" 2>&1; then fail "a second p2p migration began"; fi
grep -q "busy with another job" "$OUT/second" || { show "$OUT/second"; fail "second p2p migration: not 'busy'"; }
if virsh -q -c "$A" migrate --live g "$B" > "$OUT/second" 2>&1; then fail "a managed migration began during a p2p one"; fi
grep -q "busy with another job" "$OUT/second" || { show "$OUT/second"; fail "BEGIN3 during p2p: not 'busy'"; }
kill -KILL "$BPID"
wait "$BPID" 2> /dev/null || true
if wait "$MIG"; then fail "the p2p migration whose destination daemon died succeeded"; fi
grep -q "destination" "$OUT/cut.err" || { show "$OUT/cut"; fail "destination killed: no clear error"; }
wait_for 60 "g running on A after B's daemon died" run_a
start_b
wait_for 30 "B without g after its restart" b_empty
wait_for 60 "the guest's key on A after the cut migration" agent_on "$A"
on_a_alone "destination killed"

# ---- A to B, peer to peer ----
bg "$OUT/events-b" virsh -c "$B" event --all --loop --timestamp
EVB=$BG_PID
capture_console g "$OUT/console-a"
start=$(date +%s.%N)
LIBVIRT_LOG_FILTERS="1:libvirt 1:remote" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/virsh.log" \
    virsh -q -c "$A" migrate --live --p2p g "$B" > "$OUT/migrate" 2>&1 ||
    { show "$OUT/migrate"; show "$RV_TMP/remvirtd/remvirtd.log"; fail "virsh migrate --p2p"; }
end=$(date +%s.%N)
echo "remvirtd: virsh migrate --p2p took $(awk "BEGIN { print $end - $start }") s" >&2
# virsh made the one call: PERFORM3_PARAMS with the destination's URI.
grep -o "virDomainMigrate[A-Za-z0-9]*" "$OUT/virsh.log" | sort -u > "$OUT/steps"
grep -q "virDomainMigrateUnmanagedParams" "$OUT/steps" || { show "$OUT/steps"; fail "virsh did not migrate peer to peer"; }
grep -q "virDomainMigrateVersion3Full" "$OUT/steps" && { show "$OUT/steps"; fail "virsh drove the steps itself"; }
capture_console g "$OUT/console-b" "$BDIR/qemu/run"
counter_continued "$OUT/console-a" "$OUT/console-b"
on_b_migrated
sleep 1
kill "$EVA" "$EVB" 2> /dev/null || true
check_migrated_events "$OUT/events-a" "$OUT/events-b"
echo "events on A:" >&2; cut -d' ' -f3- "$OUT/events-a" >&2
echo "events on B:" >&2; cut -d' ' -f3- "$OUT/events-b" >&2

# ---- back to A, peer to peer, made persistent there; its client killed
# in the middle (16 MiB/s): B's remvirtd completes it all the same ----
# (with a persistent XML of its own: the definition A keeps has its description)
virsh -q -c "$B" dumpxml --migratable g | sed "s|<name>g</name>|<name>g</name><description>kept on A</description>|" > "$OUT/g-persist.xml"
bg "$OUT/back" virsh -q -c "$B" migrate --live --p2p --persistent --persistent-xml "$OUT/g-persist.xml" --bandwidth 16 g "$A"
MIG=$BG_PID
b_job() { virsh -c "$B" domjobinfo g 2> /dev/null | grep -q "Operation: *Outgoing migration"; }
wait_for 60 "the p2p migration job on B" b_job
kill -KILL "$MIG"
wait "$MIG" 2> /dev/null || true
wait_for 60 "g running on A again" run_a
b_gone() { [ -z "$(virsh -q -c "$B" list --all --name)" ]; }
wait_for 30 "g gone from B" b_gone
virsh -q -c "$A" dumpxml --inactive g | grep -q "<description>kept on A</description>" ||
    fail "A's definition is not the persistent XML given"
virsh -q -c "$A" dumpxml g | grep -q "<description>" && fail "the persistent XML changed the running guest"
[ "$(virsh -q -c "$A" dominfo g | sed -n 's/^Persistent: *//p')" = yes ] || fail "g is not persistent on A"
b_empty || fail "B kept the transient g"
wait_for 60 "the guest's key on A again" agent_on "$A"

# ---- nova's call: its flags and migrateToURI3 params, to B ----
"$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/migrate-p2p-nova.py" "$A" g "$B" tcp://10.231.0.2 \
    > "$OUT/nova" 2>&1 || { show "$OUT/nova"; fail "nova-style migrateToURI3"; }
cat "$OUT/nova" >&2
[ -z "$(virsh -q -c "$A" list --all --name)" ] || fail "nova: A kept g's definition"
[ -f "$QEMU_DIR/etc/g.xml" ] && fail "nova: A kept g.xml"
[ "$(virsh -q -c "$B" domstate g)" = running ] || fail "nova: g is not running on B"
[ "$(virsh -q -c "$B" dominfo g | sed -n 's/^Persistent: *//p')" = yes ] || fail "nova: g is not persistent on B"
[ -f "$BDIR/qemu/etc/g.xml" ] || fail "nova: B has no g.xml"
wait_for 60 "the guest's key, in its memory, on B" agent_on "$B"
[ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)$(qemu_pids "$BDIR/qemu/run/" | wc -l)" = 01 ] ||
    fail "not exactly one QEMU (on B) after nova's migration"

# ---- back to A over another of libremvirt's transports: B's remvirtd
# opens A's Unix socket (both namespaces share the file system) ----
virsh -q -c "$B" migrate --live --p2p --persistent --undefinesource g "qemu+unix:///system?socket=$REMVIRTD_SOCK" \
    > "$OUT/unix" 2>&1 || { show "$OUT/unix"; show "$BDIR/remvirtd.log"; fail "p2p over qemu+unix"; }
run_a || fail "qemu+unix: g is not running on A"
[ -z "$(virsh -q -c "$B" list --all --name)" ] || fail "qemu+unix: B kept g"
wait_for 60 "the guest's key on A after the p2p over qemu+unix" agent_on "$A"

# ---- the source's QEMU killed in the middle of a p2p migration: the
# call fails, B's waiting QEMU goes (FINISH3 cancelled), A's remvirtd
# carries on ----
bg "$OUT/gone" virsh -q -c "$A" migrate --live --p2p --bandwidth 16 g "$B"
MIG=$BG_PID
wait_for 60 "the p2p migration job on A" has_job
kill -KILL $(qemu_pids "$QEMU_DIR/run/")
if wait "$MIG"; then fail "the p2p migration of a killed guest succeeded"; fi
grep -q "error: " "$OUT/gone.err" || { show "$OUT/gone"; fail "killed source: no error"; }
cat "$OUT/gone.err" >&2
wait_for 30 "B without g after the source's QEMU died" b_empty
src_off() { [ "$(virsh -q -c "$A" domstate g)" = "shut off" ]; }
wait_for 30 "g shut off on A" src_off
virsh -q -c "$A" undefine g > /dev/null

# ---- the same between two stock libvirtds: what a libvirtd source asks
# its destination (B's log of the API calls made there), printed for
# docs/wire-protocol.md and checked against what remvirtd does ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair 'log_filters = "1:libvirt"' "log_outputs = \"1:file:$RV_TMP/libvirtd-b/calls.log\""
qemu-img create -q -f qcow2 "$SHARED/lg.qcow2" 16M
sed "s|<name>g</name>|<name>lg</name>|; s|$SHARED/g.qcow2|$SHARED/lg.qcow2|" "$OUT/g.xml" > "$OUT/lg.xml"
virsh -q -c "$LA" define "$OUT/lg.xml" > /dev/null
virsh -q -c "$LA" start lg > /dev/null
: > "$LBDIR/calls.log"
start=$(date +%s.%N)
virsh -q -c "$LA" migrate --live --p2p --unsafe lg "$LB" --migrateuri tcp://10.231.0.2 > "$OUT/lmigrate" 2>&1 ||
    { show "$OUT/lmigrate"; fail "libvirtd: virsh migrate --p2p"; }
end=$(date +%s.%N)
echo "libvirtd: virsh migrate --p2p took $(awk "BEGIN { print $end - $start }") s" >&2
[ "$(virsh -q -c "$LB" domstate lg)" = running ] || fail "libvirtd: lg is not running on B"
sed -n 's/.* : \(virConnectSupportsFeature\|virDomainMigrate[A-Za-z0-9]*\|virConnectOpenAuth\):[0-9]* : \(.*\)/\1 \2/p' \
    "$LBDIR/calls.log" | sed 's/conn=0x[0-9a-f]*, //; s/=0x[0-9a-f]\{6,\}//g' | uniq > "$OUT/lcalls"
echo "libvirtd source -> libvirtd destination, the calls B saw:" >&2
cut -c1-200 "$OUT/lcalls" >&2
# What remvirtd's qemu_migrate_p2p.c does too: features 4, 6, 13, then
# Prepare3Params and Finish3Params.
for f in 4 6 13; do
    grep -q "^virConnectSupportsFeature feature=$f\b" "$OUT/lcalls" || fail "libvirtd did not ask feature $f"
done
[ "$(grep -o '^virDomainMigrate[A-Za-z0-9]*' "$OUT/lcalls" | uniq | tr '\n' ' ')" = "virDomainMigratePrepare3Params virDomainMigrateFinish3Params " ] ||
    fail "libvirtd's steps on its destination are not Prepare3Params, Finish3Params"
virsh -q -c "$LB" destroy lg > /dev/null
