#!/usr/bin/env bash
# Live migration with non-shared storage (`virsh migrate --copy-storage-all`)
# between two remvirtds on two "hosts" (tests/migrate-hosts.sh: two network
# namespaces).  Each host keeps the guest's qcow2 in a directory of its own
# (the destination's image made beforehand, as libvirtd 9.0 needs for a
# plain file outside any pool; its path given with --xml); the destination
# QEMU exports it over NBD and the source QEMU mirrors its disk into it
# before the memory goes:
#   - the destination QEMU killed in the middle of the copy, and
#     domjobabort in the middle of it: the guest runs on A with its own
#     disk, B has no domain and no QEMU;
#   - A to B, then back to A: the guest's memory came along
#     (its agent's SSH key), and after it is shut down the two hosts'
#     images are equal (qemu-img compare), holding the data put in first;
#   - the job lock from BEGIN3 (CHANGE_PROTECTION) to CONFIRM3 or the
#     client's disconnect: libvirtd's error for other changes;
#   - --copy-storage-inc (with --suspend) onto an overlay of the same base;
#   - --offline --persistent --undefinesource: the definition moves;
#   - events on both ends printed beside libvirtd's;
# then, where libvirtd's QEMU driver runs here, the same copy between two
# stock libvirtds in the same namespaces, for the times.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

migrate_pair_up

OUT=$RV_TMP/migrate
HA=$RV_TMP/host-a
HB=$RV_TMP/host-b
mkdir -p "$OUT" "$HA" "$HB"
# 8 MiB of data in a 32 MiB disk: 8 s of copy at 1 MiB/s.
head -c 8M /dev/urandom > "$OUT/data.raw"
truncate -s 32M "$OUT/data.raw"
qemu-img convert -q -O qcow2 "$OUT/data.raw" "$HA/g.qcow2"
qemu-img create -q -f qcow2 "$HB/g.qcow2" 32M
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
disk() { echo "<disk type='file' device='disk'><driver name='qemu' type='qcow2' cache='none'/><source file='$1'/><target dev='vda' bus='virtio'/></disk>"; }
qemu_guest_xml g | sed "s|<devices>|<devices>$(disk "$HA/g.qcow2")$CHANNEL|" > "$OUT/g-a.xml"

bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp
EVA=$BG_PID
bg "$OUT/events-b" virsh -c "$B" event --all --loop --timestamp
EVB=$BG_PID

agent_guest_up "$A" g "$OUT/g-a.xml"
# The destination's XML: the same domain (its UUID), B's image.
virsh -q -c "$A" dumpxml --inactive g > "$OUT/g-a.xml"
sed "s|$HA/g.qcow2|$HB/g.qcow2|" "$OUT/g-a.xml" > "$OUT/g-b.xml"
if virsh -q -c "$A" migrate --live --copy-storage-all g "$B" --xml <(sed '/<uuid>/d' "$OUT/g-b.xml") > "$OUT/nouuid" 2>&1; then
    fail "a destination XML without the domain's UUID was taken"
fi
grep -q "uuid does not match" "$OUT/nouuid" || { show "$OUT/nouuid"; fail "--xml without the UUID: no clear error"; }
KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStorageStorageStorageStorage000000 rv@storage"
echo "$KEY" > "$OUT/key"
virsh -q -c "$A" set-user-sshkeys g root --file "$OUT/key" > /dev/null
agent_a() { virsh -q -c "$A" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
agent_b() { virsh -q -c "$B" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
agent_a || fail "the key is not in the guest"
has_job() { virsh -q -c "$A" domjobinfo g 2> /dev/null | grep -q "Job type: *Unbounded"; }
run_a() { [ "$(virsh -q -c "$A" domstate g)" = running ]; }
b_empty() { [ -z "$(virsh -q -c "$B" list --all --name)" ] && [ -z "$(qemu_pids "$BDIR/qemu/run/")" ]; }

# ---- the destination's QEMU killed during the copy (1 MiB/s) ----
bg "$OUT/cut" virsh -q -c "$A" migrate --live --copy-storage-all --bandwidth 1 g "$B" --xml "$OUT/g-b.xml"
MIG=$BG_PID
wait_for 60 "the migration job on A" has_job
b_qemu() { [ -n "$(qemu_pids "$BDIR/qemu/run/")" ]; }
wait_for 30 "B's incoming QEMU" b_qemu
sleep 1
kill -KILL $(qemu_pids "$BDIR/qemu/run/")
if wait "$MIG"; then fail "the migration whose destination QEMU died succeeded"; fi
echo "the copy cut short: $(tr '\n' ' ' < "$OUT/cut.err")" >&2
wait_for 30 "g running on A after the cut copy" run_a
wait_for 30 "B without g after the cut copy" b_empty
agent_a || fail "the guest on A lost its key after the cut copy"

# ---- domjobabort during the copy ----
bg "$OUT/abort" virsh -q -c "$A" migrate --live --copy-storage-all --bandwidth 1 g "$B" --xml "$OUT/g-b.xml"
MIG=$BG_PID
wait_for 60 "the migration job on A" has_job
sleep 1
# the disks' progress, as libvirtd shows it (File ... and Data ...)
virsh -c "$A" domjobinfo g > "$OUT/copyinfo" 2>&1
grep -q "File total: *32.000 MiB" "$OUT/copyinfo" || { show "$OUT/copyinfo"; fail "domjobinfo during the copy"; }
grep -q "File processed:" "$OUT/copyinfo" || { show "$OUT/copyinfo"; fail "domjobinfo during the copy: no progress"; }
echo "remvirtd: domjobinfo during the copy:" >&2; cat "$OUT/copyinfo" >&2
virsh -q -c "$A" domjobabort g
if wait "$MIG"; then fail "the aborted copy succeeded"; fi
# (libvirtd 9.0's words for an abort during the copy, observed below)
grep -q "operation aborted: migration out: canceled by client" "$OUT/abort.err" ||
    { show "$OUT/abort.err"; fail "abort during the copy: not libvirt's words"; }
wait_for 30 "g running on A after the abort" run_a
wait_for 30 "B without g after the abort" b_empty

# ---- A's remvirtd killed during the copy: the guest runs on there with
# its own disk; restarted, it migrates it again (the copy's leftovers in
# its QEMU are in nobody's way) ----
bg "$OUT/akill" virsh -q -c "$A" migrate --live --copy-storage-all --bandwidth 1 g "$B" --xml "$OUT/g-b.xml"
MIG=$BG_PID
wait_for 60 "the migration job on A" has_job
sleep 1
kill "$EVA" 2> /dev/null || true
restart_a
if wait "$MIG"; then fail "the migration whose source daemon died succeeded"; fi
echo "A's daemon killed during the copy: $(tr '\n' ' ' < "$OUT/akill.err")" >&2
bg "$OUT/events-a" virsh -c "$A" event --all --loop --timestamp
EVA=$BG_PID
wait_for 30 "g running on A after its daemon's restart" run_a
if ! wait_for 30 "B without g after A's daemon died" b_empty; then
    echo "B keeps its incoming g (nobody called FINISH3): destroyed by hand" >&2
    virsh -q -c "$B" destroy g > /dev/null
fi
agent_a || fail "the guest on A lost its key after its daemon's restart"

# ---- refused: both copy flags; a disk the domain has not ----
if virsh -q -c "$A" migrate --live --copy-storage-all --migrate-disks vdz g "$B" --xml "$OUT/g-b.xml" > "$OUT/nodisk" 2>&1; then
    fail "a copy of a disk the domain has not succeeded"
fi
grep -q "disk target vdz not found" "$OUT/nodisk" || { show "$OUT/nodisk"; fail "--migrate-disks vdz: no clear error"; }
run_a || fail "g is not running on A after the refused calls"
wait_for 30 "B without g after the refused calls" b_empty

# ---- the job lock: BEGIN3 with CHANGE_PROTECTION holds the domain until
# CONFIRM3 or the client's disconnect; other changes fail with libvirtd's
# words (libvirtd 9.0, observed: it waits 30 s for its state change lock,
# then says this; remvirtd says it at once), suspend and queries go on ----
rawpy "$REMVIRTD_SOCK" "$A" > "$OUT/lock" 2>&1 <<'PY' || { show "$OUT/lock"; fail "the job lock"; }
import subprocess, sys
import rawclient as rc

def virsh(*args):
    p = subprocess.run(["virsh", "-q", "-c", sys.argv[2]] + list(args), capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout + p.stderr

NOPARAMS = rc.xdr_uint(0)
LOCKED = "Timed out during operation: cannot acquire state change lock (held by monitor=remoteDispatchDomainMigrateBegin3Params)"
a = rc.Client(sys.argv[1]); a.open_connection("qemu:///system")
g = a.lookup("g")
a.call_ok(rc.PROC_DOMAIN_MIGRATE_BEGIN3_PARAMS, g + NOPARAMS + rc.xdr_uint(1 | 256))
for args in (("setvcpus", "g", "1", "--config"), ("shutdown", "g"), ("undefine", "g"), ("reboot", "g")):
    code, out = virsh(*args)
    rc.check(code != 0 and LOCKED in out, "%s during the migration: %s" % (" ".join(args), out.strip()))
code, out = virsh("domjobinfo", "g")
rc.check(code == 0, "domjobinfo during the migration: " + out)
b = rc.Client(sys.argv[1]); b.open_connection("qemu:///system")
serial = b.send_call(rc.PROC_DOMAIN_MIGRATE_BEGIN3_PARAMS, g + NOPARAMS + rc.xdr_uint(1 | 256))
hdr, body = b.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_OPERATION_INVALID}, "a second BEGIN3")
rc.check(b"another migration job is already running for domain 'g'" in body, "a second BEGIN3's words")
# CONFIRM3 (cancelled) lets go
a.call_ok(rc.PROC_DOMAIN_MIGRATE_CONFIRM3_PARAMS, g + NOPARAMS + rc.xdr_uint(0) + rc.xdr_uint(1 | 256) + rc.xdr_int(1))
code, out = virsh("setvcpus", "g", "1", "--config")
rc.check(code == 0, "setvcpus after CONFIRM3: " + out)
# and so does the client's disconnect
b.call_ok(rc.PROC_DOMAIN_MIGRATE_BEGIN3_PARAMS, g + NOPARAMS + rc.xdr_uint(1 | 256))
code, out = virsh("setvcpus", "g", "1", "--config")
rc.check(code != 0 and LOCKED in out, "setvcpus during the second migration: " + out)
b.close()
import time
for _ in range(50):
    code, out = virsh("setvcpus", "g", "1", "--config")
    if code == 0:
        break
    time.sleep(0.1)
rc.check(code == 0, "setvcpus after the client went: " + out)
PY
cat "$OUT/lock" >&2
run_a || fail "g is not running on A after the job lock's calls"

# ---- A to B ----
start=$(date +%s.%N)
echo "remvirtd: migration from $(date -u +%T.%3N)" >&2
virsh -q -c "$A" migrate --live --copy-storage-all g "$B" --xml "$OUT/g-b.xml" > "$OUT/migrate" 2>&1 ||
    { show "$OUT/migrate"; show "$BDIR/remvirtd.log"; fail "virsh migrate --copy-storage-all"; }
end=$(date +%s.%N)
echo "remvirtd: migration until $(date -u +%T.%3N)" >&2
echo "remvirtd: virsh migrate --copy-storage-all took $(awk "BEGIN { print $end - $start }") s" >&2
[ "$(virsh -q -c "$B" domstate g)" = running ] || fail "g is not running on B"
[ "$(virsh -q -c "$A" domstate g)" = "shut off" ] || fail "A: g is not shut off"
virsh -q -c "$B" domblklist g | grep -qF "$HB/g.qcow2" || fail "B's g does not use B's image"
wait_for 60 "the guest's key, in its memory, on B" agent_b
virsh -c "$A" domjobinfo --completed g 2>&1 | grep -E "Time elapsed|Memory processed" >&2 || true

# ---- back to A, its disk copied back ----
virsh -q -c "$B" migrate --live --copy-storage-all --migrateuri tcp://10.231.0.1 g "$A" --xml "$OUT/g-a.xml" \
    > "$OUT/back" 2>&1 || { show "$OUT/back"; show "$RV_TMP/remvirtd/remvirtd.log"; fail "migrate back"; }
[ "$(virsh -q -c "$A" domstate g)" = running ] || fail "g is not running on A again"
b_empty || fail "B kept the transient g"
wait_for 60 "the guest's key on A again" agent_a
sleep 1
kill "$EVA" "$EVB" 2> /dev/null || true
virsh -q -c "$A" destroy g > /dev/null
qemu-img compare -q "$HA/g.qcow2" "$HB/g.qcow2" || fail "the hosts' images differ"
qemu-img compare -q -f raw -F qcow2 "$OUT/data.raw" "$HB/g.qcow2" || fail "B's image has not the data"
grep -q "lifecycle.*g.*Stopped Migrated" "$OUT/events-a" || { show "$OUT/events-a"; fail "A: Stopped Migrated"; }
grep -q "lifecycle.*g.*Resumed Migrated" "$OUT/events-b" || { show "$OUT/events-b"; fail "B: Resumed Migrated"; }
echo "events on A:" >&2; cut -d' ' -f2- "$OUT/events-a" >&2
echo "events on B:" >&2; cut -d' ' -f2- "$OUT/events-b" >&2
grep -q "job-completed.*'g'" "$OUT/events-a" || { show "$OUT/events-a"; fail "A: no job-completed event"; }
grep -q "block-job-2.*'g': Block Copy for vda ready" "$OUT/events-a" || { show "$OUT/events-a"; fail "A: no Block Copy ready"; }

# ---- --copy-storage-inc: both hosts have an overlay on the same base
# (a template both see); only the overlay's data goes ----
qemu-img convert -q -O qcow2 "$OUT/data.raw" "$RV_TMP/base.qcow2"
qemu-img create -q -f qcow2 -b "$RV_TMP/base.qcow2" -F qcow2 "$HA/inc.qcow2"
qemu-img create -q -f qcow2 -b "$RV_TMP/base.qcow2" -F qcow2 "$HB/inc.qcow2"
qemu-io -f qcow2 -c "write -P 0x5a 1M 2M" "$HA/inc.qcow2" > /dev/null
sed "s|$HA/g.qcow2|$HA/inc.qcow2|" "$OUT/g-a.xml" > "$OUT/inc-a.xml"
sed "s|$HA/g.qcow2|$HB/inc.qcow2|" "$OUT/g-a.xml" > "$OUT/inc-b.xml"
virsh -q -c "$A" define "$OUT/inc-a.xml" > /dev/null
virsh -q -c "$A" start g > /dev/null
virsh -q -c "$A" migrate --live --suspend --copy-storage-inc g "$B" --xml "$OUT/inc-b.xml" > "$OUT/inc" 2>&1 ||
    { show "$OUT/inc"; fail "virsh migrate --copy-storage-inc"; }
# (--suspend: it stays paused there)
[ "$(virsh -q -c "$B" domstate g)" = paused ] || fail "g is not paused on B after --copy-storage-inc --suspend"
virsh -q -c "$B" destroy g > /dev/null
qemu-img compare -q "$HA/inc.qcow2" "$HB/inc.qcow2" || fail "--copy-storage-inc: the hosts' images differ"
[ "$(qemu-img info --output=json "$HB/inc.qcow2" | sed -n 's/.*"backing-filename": "\(.*\)".*/\1/p')" = "$RV_TMP/base.qcow2" ] ||
    fail "--copy-storage-inc: B's overlay lost its backing file"

# ---- offline: the shut-off guest's definition moves, nothing runs ----
if virsh -q -c "$A" migrate --offline g "$B" > "$OUT/offline-np" 2>&1; then
    fail "an offline migration without --persistent succeeded"
fi
echo "offline without --persistent: $(cat "$OUT/offline-np")" >&2
grep -q "persistent" "$OUT/offline-np" || { show "$OUT/offline-np"; fail "--offline without --persistent: no clear error"; }
virsh -q -c "$A" migrate --offline --persistent --undefinesource g "$B" > "$OUT/offline" 2>&1 ||
    { show "$OUT/offline"; fail "virsh migrate --offline --persistent --undefinesource"; }
[ -z "$(virsh -q -c "$A" list --all --name)" ] || fail "A kept g after the offline migration"
[ "$(virsh -q -c "$B" domstate g)" = "shut off" ] || fail "B: g is not defined, shut off"
[ -f "$BDIR/qemu/etc/g.xml" ] || fail "B has no g.xml after the offline migration"
[ -z "$(qemu_pids "$BDIR/qemu/run/")$(qemu_pids "$QEMU_DIR/run/")" ] || fail "a QEMU runs after the offline migration"
virsh -q -c "$B" undefine g > /dev/null

# ---- the same between two stock libvirtds, for the times ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
start_libvirtd_pair
qemu-img convert -q -O qcow2 "$OUT/data.raw" "$HA/lg.qcow2"
qemu-img create -q -f qcow2 "$HB/lg.qcow2" 32M
sed "s|<name>g</name>|<name>lg</name>|; s|$HA/g.qcow2|$HA/lg.qcow2|; /<uuid>/d" "$OUT/g-a.xml" > "$OUT/lg-a.xml"
bg "$OUT/levents-a" virsh -c "$LA" event --all --loop --timestamp
LEVA=$BG_PID
bg "$OUT/levents-b" virsh -c "$LB" event --all --loop --timestamp
LEVB=$BG_PID
agent_guest_up "$LA" lg "$OUT/lg-a.xml"
virsh -q -c "$LA" dumpxml --inactive lg | sed "s|$HA/lg.qcow2|$HB/lg.qcow2|" > "$OUT/lg-b.xml"
# an abort during the copy, for the words and the events
bg "$OUT/labort" virsh -q -c "$LA" migrate --live --unsafe --copy-storage-all --bandwidth 1 lg "$LB" \
    --migrateuri tcp://10.231.0.2 --xml "$OUT/lg-b.xml"
MIG=$BG_PID
lhas_job() { virsh -q -c "$LA" domjobinfo lg 2> /dev/null | grep -q "Job type: *Unbounded"; }
ljob_or_over() { lhas_job || ! kill -0 "$MIG" 2> /dev/null; }
wait_for 60 "libvirtd's migration job on A" ljob_or_over
sleep 2
virsh -q -c "$LA" domjobinfo lg >&2 || true
virsh -q -c "$LA" domjobabort lg || true
wait "$MIG" || true
echo "libvirtd: the abort during the copy: $(cat "$OUT/labort.err")" >&2
lrun_a() { [ "$(virsh -q -c "$LA" domstate lg)" = running ]; }
wait_for 30 "lg running on libvirtd A after the abort" lrun_a
start=$(date +%s.%N)
echo "libvirtd: migration from $(date -u +%T.%3N)" >&2
virsh -q -c "$LA" migrate --live --unsafe --copy-storage-all lg "$LB" --migrateuri tcp://10.231.0.2 \
    --xml "$OUT/lg-b.xml" > "$OUT/lmigrate" 2>&1 || { show "$OUT/lmigrate"; fail "libvirtd: virsh migrate --copy-storage-all"; }
end=$(date +%s.%N)
echo "libvirtd: migration until $(date -u +%T.%3N)" >&2
echo "libvirtd: virsh migrate --copy-storage-all took $(awk "BEGIN { print $end - $start }") s" >&2
[ "$(virsh -q -c "$LB" domstate lg)" = running ] || fail "libvirtd: lg is not running on B"
virsh -c "$LA" domjobinfo --completed lg 2>&1 | grep -E "Time elapsed|Memory processed|error" >&2 || true
sleep 1
kill "$LEVA" "$LEVB" 2> /dev/null || true
echo "libvirtd events on A:" >&2; cut -d' ' -f2- "$OUT/levents-a" >&2
echo "libvirtd events on B:" >&2; cut -d' ' -f2- "$OUT/levents-b" >&2
virsh -q -c "$LB" destroy lg > /dev/null
qemu-img compare -q "$HA/lg.qcow2" "$HB/lg.qcow2" || fail "libvirtd: the hosts' images differ"
