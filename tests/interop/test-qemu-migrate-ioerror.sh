#!/usr/bin/env bash
# `virsh migrate --abort-on-error` (VIR_MIGRATE_ABORT_ON_ERROR) between
# two remvirtds (tests/migrate-hosts.sh): the guest (remvirt.diskwrite=on)
# writes to its virtio disk all the time; the disk's raw image is on a
# small tmpfs both hosts see, with error_policy='stop'.  Once the
# (bandwidth-limited) migration runs, the tmpfs is filled: the guest's
# next write fails (ENOSPC), QEMU pauses it (paused (I/O error)) and the
# source cancels the migration:
#   - the source's error is libvirtd's ("job 'migration out' failed due
#     to I/O error"): virsh shows it peer to peer; managed direct its
#     client may show the destination's FINISH3 error instead (below);
#   - the guest stays on A, paused (I/O error), no job; B has nothing;
#   - with the space back, `virsh resume` runs it on A again;
# managed direct, then peer to peer (--p2p).
# Then, where libvirtd's QEMU driver runs here, the same between two stock
# libvirtd 9.0 side by side: the same error and the same state.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

requires_root
requires mount --version
# The small file system first: B's remvirtd (ip netns exec) gets a copy
# of the mounts as they are when it starts.
SMALL=$SHARED/small
mkdir -p "$SMALL"
mount -t tmpfs -o size=64m tmpfs "$SMALL" || skip "cannot mount a tmpfs"
_umount() { umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true; }
cleanup_fn _umount "$SMALL"
migrate_pair_up

# ioerror_guest_xml NAME: $OUT/NAME.xml, the test guest writing to a
# 128 MiB sparse raw image in $SMALL (64 MiB), which stops it on a failed write.
ioerror_guest_xml()
{
    truncate -s 128M "$SMALL/$1.raw"
    local disk="<disk type='file' device='disk'><driver name='qemu' type='raw' error_policy='stop'/><source file='$SMALL/$1.raw'/><target dev='vda' bus='virtio'/></disk>"
    qemu_guest_xml "$1" | sed -e "s|<devices>|<devices>$disk|" \
        -e "s|panic=-1</cmdline>|panic=-1 remvirt.diskwrite=on</cmdline>|" > "$OUT/$1.xml"
}
fill() { dd if=/dev/zero of="$SMALL/fill" bs=64k 2> /dev/null || true; }
unfill() { rm -f "$SMALL/fill"; }
# writing URI NAME: the guest writes (its console says so, its image grows).
writing()
{
    local before
    before=$(du -k "$SMALL/$2.raw" | cut -f1)
    sleep 1
    [ "$(du -k "$SMALL/$2.raw" | cut -f1)" -gt "$before" ]
}
# abort_on_error_leg URI DEST NAME ERRFILE [ARGS]: NAME migrated from URI
# to DEST with --abort-on-error at 1 MiB/s; the tmpfs filled once the
# job runs; the migration fails (its output in ERRFILE).
abort_on_error_leg()
{
    local uri=$1 dest=$2 name=$3 out=$4
    shift 4
    _has_job() { virsh -q -c "$uri" domjobinfo "$name" 2> /dev/null | grep -q "Job type: *Unbounded"; }
    bg "$out" virsh -q -c "$uri" migrate --live --abort-on-error --bandwidth 1 "$@" "$name" "$dest"
    local mig=$BG_PID
    wait_for 60 "the migration job of $name" _has_job
    fill
    if wait "$mig"; then fail "$name: the migration went on after the guest's I/O error"; fi
    cat "$out" "$out.err" > "$out.all"
    echo "$uri: $(cat "$out.all")" >&2
}

ioerror_guest_xml e
virsh -q -c "$A" create "$OUT/e.xml" > /dev/null
wait_for 120 "e writing to its disk" writing "$A" e
bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp

IOERR="operation failed: job 'migration out' failed due to I/O error"
# A on_a_paused WHAT: e paused (I/O error) on A, no job there, nothing on B.
on_a_paused()
{
    [ "$(virsh -q -c "$A" domstate --reason e)" = "paused (I/O error)" ] ||
        fail "$1: e on A is $(virsh -q -c "$A" domstate --reason e), not paused (I/O error)"
    wait_for 30 "B without e" b_empty
    virsh -q -c "$A" domjobinfo e | grep -q "Job type: *None" || fail "$1: A still has a job"
}
# Managed direct: libvirt's client shows the destination's FINISH3 error
# instead of PERFORM3's when PERFORM3's is VIR_ERR_OPERATION_FAILED from
# the QEMU driver and FINISH3's from it too (the destination may know
# why the stream broke).  Both daemons' destinations answer an error
# there, so virsh may say either; the source's reason is in its log.
abort_on_error_leg "$A" "$B" e "$OUT/rv"
grep -qE "$IOERR|no incoming migration of this domain" "$OUT/rv.all" ||
    { show "$OUT/rv.all"; show "$RV_TMP/remvirtd/remvirtd.log"; fail "managed direct: no reason given"; }
grep -q "migration to .* failed: $IOERR" "$RV_TMP/remvirtd/remvirtd.log" ||
    { show "$RV_TMP/remvirtd/remvirtd.log"; fail "managed direct: A's migration did not fail for the I/O error"; }
on_a_paused "managed direct"
grep -q "lifecycle.*e.*Suspended I/O Error" "$OUT/events-a" || { show "$OUT/events-a"; fail "A: Suspended I/O Error"; }
grep -q "io-error.*e.*pause" "$OUT/events-a" || { show "$OUT/events-a"; fail "A: no io-error event"; }
# With the space back the guest runs on, on A.
unfill
virsh -q -c "$A" resume e > /dev/null
[ "$(virsh -q -c "$A" domstate e)" = running ] || fail "e is not running on A after resume"
wait_for 60 "e writing again" writing "$A" e
echo "ok   --abort-on-error: the I/O error cancelled the migration, e paused (I/O error) on A, resumed there"

# Peer to peer: the source's PERFORM3 answers virsh itself, with its own
# reason.
abort_on_error_leg "$A" "$B" e "$OUT/rvp" --p2p
grep -qF "$IOERR" "$OUT/rvp.all" || { show "$OUT/rvp.all"; fail "p2p: not libvirtd's error"; }
on_a_paused "p2p"
unfill
virsh -q -c "$A" resume e > /dev/null
[ "$(virsh -q -c "$A" domstate e)" = running ] || fail "e is not running on A after resume"
echo "ok   --abort-on-error --p2p: '$IOERR', e paused (I/O error) on A, resumed there"
virsh -q -c "$A" destroy e > /dev/null
rm -f "$SMALL/e.raw"

# ---- the same between two stock libvirtds ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair
ioerror_guest_xml le
virsh -q -c "$LA" create "$OUT/le.xml" > /dev/null
wait_for 120 "le writing to its disk" writing "$LA" le
abort_on_error_leg "$LA" "$LB" le "$OUT/lv" --unsafe --migrateuri tcp://10.231.0.2
grep -qE "$IOERR|qemu unexpectedly closed the monitor" "$OUT/lv.all" ||
    { show "$OUT/lv.all"; fail "libvirtd's error is another: the test's words are out of date"; }
[ "$(virsh -q -c "$LA" domstate --reason le)" = "paused (I/O error)" ] ||
    fail "libvirtd: le on A is $(virsh -q -c "$LA" domstate --reason le)"
[ -z "$(virsh -q -c "$LB" list --all --name)" ] || fail "libvirtd: B kept le"
unfill
virsh -q -c "$LA" destroy le > /dev/null
echo "ok   libvirtd 9.0: the same error, le paused (I/O error) on A"
