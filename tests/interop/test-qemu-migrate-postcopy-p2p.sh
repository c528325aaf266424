#!/usr/bin/env bash
# Post-copy with peer-to-peer migration (issue 30; nova's
# live_migration_permit_post_copy: migrateToURI3 with PEER2PEER|POSTCOPY,
# then migrate-postcopy on the source) between two remvirtds on two
# "hosts" (tests/migrate-hosts.sh), then the same between two stock
# libvirtd 9.0; the states seen and the lifecycle events are compared:
#   - `migrate --live --p2p --postcopy`, then `migrate-postcopy` on the
#     source: the source's thread drives the destination as virsh does in
#     the managed migration (FINISH3 after the switch, CONFIRM3 once the
#     stream is complete); the guest's memory (an SSH key its agent keeps
#     in RAM) arrives;
#   - `--p2p --postcopy --timeout 1 --timeout-postcopy`, back;
#   - a post-copy failure (the destination's QEMU killed after the
#     switch): the call fails and the source stays paused (post-copy
#     failed).
# remvirtd alone: tunnelled post-copy is refused with a clear error.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"
source "$(dirname "$0")/../migrate-postcopy.sh"

KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPostcopyPeerToPeerPostcopyPeer00000 rv@pcp2p"

# run_side A B DIR MIGRATEURI_A MIGRATEURI_B KILL_B_QEMU: every step on one
# pair of daemons (A, B: their URIs, the peer-to-peer destinations too).
run_side()
{
    local UA=$1 UB=$2
    D=$3
    local ua=$4 ub=$5 killb=$6
    side_begin "$UA" "$UB" "$D"
    {
        echo "== p2p postcopy, migrate-postcopy"
        scenario pc "$UA" "$UB" "--p2p --postcopy --bandwidth 8 --postcopy-bandwidth 16 --migrateuri $ub" switch_now
        show_run pc
        key_check "$UB"
        echo "== p2p timeout-postcopy"
        scenario tpc "$UB" "$UA" "--p2p --postcopy --timeout 1 --timeout-postcopy --bandwidth 8 --postcopy-bandwidth 16 --migrateuri $ua"
        show_run tpc
        key_check "$UA"
        echo "== p2p postcopy failure"
        postcopy_failure "$UA" "$UB" "$ub" "$killb" "--p2p "
        virsh -q -c "$UA" destroy g || true
        virsh -q -c "$UA" undefine g || true
    } > "$D/transcript" 2>&1 || { show "$D/transcript"; fail "the steps on $UA"; }
    side_end
}

migrate_pair_up

# ---- remvirtd alone: tunnelled post-copy refused, nothing changed ----
agent_guest_up "$A" g "$OUT/g.xml"
migrate_refused "tunnelled post-copy" "argument unsupported: .*not tunnelled" \
    --live --p2p --tunnelled --postcopy g "$B"
virsh -q -c "$A" destroy g > /dev/null
virsh -q -c "$A" undefine g > /dev/null
echo "ok   tunnelled post-copy refused"

run_side "$A" "$B" "$OUT/remvirtd" tcp://10.231.0.1 tcp://10.231.0.2 kill_rb
cat "$OUT/remvirtd/transcript" >&2
T=$OUT/remvirtd/transcript
[ "$(grep -c '^ok$' "$T")" = 2 ] || { show "$RV_TMP/remvirtd/remvirtd.log"; fail "a migration failed (above)"; }
[ "$(grep -c '^key there$' "$T")" = 2 ] || fail "the guest's memory did not arrive every time (above)"
grep -q "^running (post-copy)$" "$T" || fail "the destination never ran post-copy"
grep -q "^paused (post-copy failed)$" "$T" || fail "post-copy failure: the source is not paused (post-copy failed)"
grep -qx "failed" "$T" || fail "post-copy failure: the call succeeded"
grep -q "^failed: .*" "$OUT/remvirtd/pf.result" && cat "$OUT/remvirtd/pf.result" >&2
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "A kept a QEMU"
virsh -q -c "$B" destroy g > /dev/null 2>&1 || true
echo "ok   remvirtd: p2p post-copy"

if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair
run_side "$LA" "$LB" "$OUT/libvirtd" tcp://10.231.0.1 tcp://10.231.0.2 kill_lb
cat "$OUT/libvirtd/transcript" >&2
cat "$OUT/libvirtd/pf.result" >&2
for side in remvirtd libvirtd; do echo "$side:" >&2; cat "$OUT/$side/times" >&2; done
for s in a b; do echo "libvirtd events $s:" >&2; cat "$OUT/libvirtd/lifecycle-$s" >&2; done
same "$OUT/libvirtd/transcript" "$OUT/remvirtd/transcript" "p2p post-copy: states as libvirtd's"
same "$OUT/libvirtd/lifecycle-a" "$OUT/remvirtd/lifecycle-a" "p2p post-copy: A's lifecycle events"
same "$OUT/libvirtd/lifecycle-b" "$OUT/remvirtd/lifecycle-b" "p2p post-copy: B's lifecycle events"
echo "ok   p2p post-copy migration"
