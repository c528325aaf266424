#!/usr/bin/env bash
# Post-copy live migration and virsh's timeout actions (issue 30) between
# two remvirtds on two "hosts" (tests/migrate-hosts.sh), then the same
# steps between two stock libvirtd 9.0 in the same two namespaces; the
# lifecycle events and the states seen are compared:
#   - `migrate --live --postcopy`, then `migrate-postcopy` on the source:
#     source paused (post-copy), Suspended Post-copy; destination running
#     (post-copy), Resumed Post-copy; the guest's memory (an SSH key its
#     agent keeps in RAM) arrives;
#   - `--postcopy-after-precopy` (virsh switches at the
#     MIGRATION_ITERATION event of the second pass);
#   - `--timeout 1 --timeout-postcopy` and `--timeout 1` (suspend: virsh
#     suspends the source mid-migration; the migration completes);
#   - the POSTCOPY_RESUME flag refused;
#   - a post-copy failure (the destination's QEMU killed after the
#     switch): the guest cannot run on the source any more: paused
#     (post-copy failed) there, as libvirtd leaves it.
# Migrations are slowed by --bandwidth / --postcopy-bandwidth (MiB/s) so
# that each phase lasts a few seconds on the 128 MiB test guest.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"
source "$(dirname "$0")/../migrate-postcopy.sh"

KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPostcopyPostcopyPostcopyPostcopy00000 rv@postcopy"

# run_side A B DIR MIGRATEURI_A MIGRATEURI_B KILL_B_QEMU: every step on one pair of daemons.
run_side()
{
    local UA=$1 UB=$2
    D=$3
    local ua=$4 ub=$5 killb=$6
    side_begin "$UA" "$UB" "$D"
    {
        echo "== postcopy, migrate-postcopy"
        scenario pc "$UA" "$UB" "--postcopy --bandwidth 8 --postcopy-bandwidth 16 --migrateuri $ub" switch_now
        show_run pc
        key_check "$UB"
        echo "== postcopy-after-precopy"
        # (whether virsh's switch at the second pass comes before the
        # stream's end is a race with either daemon: states and events
        # not compared)
        local from=$(wc -l < "$D/events-a") fromb=$(wc -l < "$D/events-b")
        scenario ppc "$UB" "$UA" "--postcopy --postcopy-after-precopy --bandwidth 32 --migrateuri $ua"
        cat "$D/ppc.result"
        show_run ppc > "$D/ppc.shown"
        sleep 0.5
        echo "$from $(wc -l < "$D/events-a") $fromb $(wc -l < "$D/events-b")" > "$D/ppc.events"
        key_check "$UA"
        echo "== timeout-postcopy"
        scenario tpc "$UA" "$UB" "--postcopy --timeout 1 --timeout-postcopy --bandwidth 8 --postcopy-bandwidth 16 --migrateuri $ub"
        show_run tpc
        key_check "$UB"
        echo "== timeout-suspend"
        scenario ts "$UB" "$UA" "--timeout 1 --bandwidth 16 --migrateuri $ua"
        show_run ts
        key_check "$UA"
        echo "== postcopy-resume"
        virsh -q -c "$UA" migrate --live --unsafe --postcopy --postcopy-resume g "$UB" --migrateuri "$ub" 2>&1 | sed 's/^/  /' || true
        state "$UA"
        echo "== postcopy failure"
        postcopy_failure "$UA" "$UB" "$ub" "$killb"
        virsh -q -c "$UA" resume g 2>&1 | head -2 || true
        virsh -q -c "$UA" destroy g || true
        virsh -q -c "$UA" undefine g || true
    } > "$D/transcript" 2>&1 || { show "$D/transcript"; fail "the steps on $UA"; }
    # (those of the post-copy-after-precopy migration left out)
    read -r a0 a1 b0 b1 < "$D/ppc.events"
    sed "$((a0 + 1)),${a1}d" "$D/events-a" > "$D/events-a.cut"
    sed "$((b0 + 1)),${b1}d" "$D/events-b" > "$D/events-b.cut"
    side_end .cut
}

migrate_pair_up
run_side "$A" "$B" "$OUT/remvirtd" tcp://10.231.0.1 tcp://10.231.0.2 kill_rb
cat "$OUT/remvirtd/transcript" >&2
T=$OUT/remvirtd/transcript
[ "$(grep -c '^ok$' "$T")" = 4 ] || fail "a migration failed (above)"
[ "$(grep -c '^key there$' "$T")" = 4 ] || fail "the guest's memory did not arrive every time (above)"
grep -q "^running (post-copy)$" "$T" || fail "the destination never ran post-copy"
grep -q "^paused (post-copy failed)$" "$T" || fail "post-copy failure: the source is not paused (post-copy failed)"
# (virsh's --postcopy-after-precopy listens for these: the source's passes)
grep -q "migration-iteration' for domain 'g': iteration: '2'" "$OUT/remvirtd/events-b" ||
    { show "$OUT/remvirtd/events-b"; fail "no MIGRATION_ITERATION 2 from B"; }

# ---- A's remvirtd killed (SIGKILL) and started again after the switch:
# nothing is undone (a cancelled post-copy stream would leave the guest
# whole nowhere): QEMU's stream goes on, the guest arrives on B, A keeps
# its QEMU paused (post-copy failed) for the administrator ----
agent_guest_up "$A" g "$OUT/g.xml"
virsh -q -c "$A" set-user-sshkeys g root --file "$OUT/key" > /dev/null
bg "$OUT/restart" virsh -q -c "$A" migrate --live --postcopy --bandwidth 8 --postcopy-bandwidth 4 g "$B" --migrateuri tcp://10.231.0.2
MIG=$BG_PID
switch_now "$A"
wait_for 60 "post-copy on B" pc_running "$B" || fail "B does not run g post-copy"
restart_a
wait "$MIG" || true     # (its CONFIRM3 lost A's connection)
wait_for 60 "the key on B after A's restart" key_on "$B" || fail "g's memory did not reach B"
b_migrated() { [ "$(state "$B")" = "running (migrated)" ]; }
wait_for 60 "g running (migrated) on B" b_migrated || fail "B: $(state "$B")"
[ "$(state "$A")" = "paused (post-copy failed)" ] || fail "A after its restart: $(state "$A")"
virsh -q -c "$A" destroy g > /dev/null
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "A kept a QEMU"
virsh -q -c "$A" undefine g > /dev/null
virsh -q -c "$B" destroy g > /dev/null
echo "ok   A's remvirtd restarted after the switch: g on B, A paused (post-copy failed)"

if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair
run_side "$LA" "$LB" "$OUT/libvirtd" tcp://10.231.0.1 tcp://10.231.0.2 kill_lb
cat "$OUT/libvirtd/transcript" >&2
for side in remvirtd libvirtd; do
    [ -d "$OUT/$side" ] || continue
    echo "$side: --postcopy-after-precopy (not compared):" >&2; cat "$OUT/$side/ppc.shown" >&2
    echo "$side:" >&2; cat "$OUT/$side/times" >&2
done
for s in a b; do echo "libvirtd events $s:" >&2; cat "$OUT/libvirtd/lifecycle-$s" >&2; done
same "$OUT/libvirtd/transcript" "$OUT/remvirtd/transcript" "post-copy and timeouts: states as libvirtd's"
same "$OUT/libvirtd/lifecycle-a" "$OUT/remvirtd/lifecycle-a" "post-copy and timeouts: A's lifecycle events"
same "$OUT/libvirtd/lifecycle-b" "$OUT/remvirtd/lifecycle-b" "post-copy and timeouts: B's lifecycle events"
echo "ok   post-copy migration and timeout actions"
