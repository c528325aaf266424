#!/usr/bin/env bash
# Backup jobs on the QEMU driver, side by side with libvirtd's QEMU
# driver, on a running test guest (TCG) with a qcow2 vda and a raw vdb:
# backup-checks.py's transcript through python3-libvirt (full push
# backups to qcow2 and raw targets and with every default, the targets
# compared with the disks; pull backups over a Unix socket and TCP, the
# NBD exports read and compared, the job's info and statistics, abort;
# BLOCK_JOB, BLOCK_JOB_2 and JOB_COMPLETED; errors that change nothing),
# then virsh's backup-begin, backup-dumpxml (also read-only), domjobinfo,
# domjobabort, blockjob --info and --abort;
# each compared with libvirtd's; incremental push and pull backups from a
# checkpoint (the guest's writes made through a QMP monitor of the test's
# own), a checkpoint made with a backup, an aborted one, errors, compared
# with libvirtd's.  Then remvirtd alone: a block copy on a disk under
# backup refused; remvirtd killed during an incremental pull backup, the
# guest still running with its checkpoints, and the next backup working;
# killed at checkpoint-create:2 of a backup with a checkpoint, and the
# same backup again; the guest destroyed during a pull, and a backup of
# it started again.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires nbdinfo --version
start_both_qemu backup

boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    rm -f "$2"/*
    qemu-img create -q -f qcow2 "$2/vda.qcow2" 64M
    qemu-io -f qcow2 -c "write -P 7 1M 2M" -c "write -P 9 40M 1M" "$2/vda.qcow2" > /dev/null
    qemu-img create -q -f raw "$2/vdb.img" 16M
    qemu-io -f raw -c "write -P 5 0 1M" "$2/vdb.img" > /dev/null
    chmod 666 "$2"/*
    qemu_guest_xml g | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/vda.qcow2'/><target dev='vda' bus='virtio'/></disk><disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$2/vdb.img'/><target dev='vdb' bus='virtio'/></disk><serial type='pty'/>|" |
        with_test_qmp "$2/t.qmp" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"

checks()    # URI DIR PORT
{
    "$SYSTEM_PYTHON3" "$(dirname "$0")/backup-checks.py" "$1" "$2" "$3" > "$OUT/py" 2>&1 ||
        { cat "$OUT/py"; fail "backup-checks.py against $1"; }
    sed "s|$2|DIR|g" "$OUT/py"
}
port=$((20000 + RANDOM % 20000))
checks "$LIBVIRTD_QEMU_URI" "$LV" "$port" > "$OUT/libvirtd.py.txt"
checks "$QEMU_URI" "$RV" "$port" > "$OUT/remvirtd.py.txt"
same "$OUT/libvirtd.py.txt" "$OUT/remvirtd.py.txt" "python3-libvirt backups and their events as against libvirtd"
for what in "push: vda target: same content" "push: vdb target: same content" \
    "pull: export content: same content" "pull tcp: vdb export content: same content"; do
    grep -qF "$what" "$OUT/remvirtd.py.txt" || fail "not in the transcript: $what"
done

# run ARGS...: virsh ARGS on the caller's $u, in a transcript.
run()
{
    local rc=0
    virsh -c "$u" "$@" > "$OUT/o" 2> "$OUT/e" || rc=$?
    echo "=== virsh $*"
    sed -e "s/index='[0-9]*'/index='N'/" -e 's/^\(Time elapsed: *\)[0-9]* */\1N /' "$OUT/o"
    echo "--- stderr"
    cat "$OUT/e"
    echo "--- exit status $rc"
}

transcript()    # URI DIR READ-ONLY-URI
{
    local u=$1 d=$2 rc
    cat > "$d/pull.xml" <<XML
<domainbackup mode='pull'><server transport='unix' socket='$d/v.sock'/><disks><disk name='vda' type='file'><scratch file='$d/s.qcow2'/></disk><disk name='vdb' backup='no'/></disks></domainbackup>
XML
    run backup-dumpxml g
    run backup-begin g "$d/pull.xml"
    run backup-dumpxml g
    run domjobinfo g
    run domjobabort g
    sleep 1
    run domjobinfo g --completed
    run backup-dumpxml g
    run domjobabort g
    # The backup's job on a disk, as a block job: its info, its abort.
    rm -f "$d/s.qcow2"
    run backup-begin g "$d/pull.xml"
    run blockjob g vda --info
    run blockjob g vdb --info
    u=$3 run backup-dumpxml g
    u=$3 run backup-begin g
    run blockjob g vda --abort
    sleep 1
    run domjobinfo g --completed
    run domjobabort g
}
transcript "$LIBVIRTD_QEMU_URI" "$LV" "$LIBVIRTD_QEMU_URI_RO" | sed "s|$LV|DIR|g" > "$OUT/libvirtd.txt"
transcript "$QEMU_URI" "$RV" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" | sed "s|$RV|DIR|g" > "$OUT/remvirtd.txt"
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "virsh backup-begin, backup-dumpxml, domjobinfo and domjobabort as against libvirtd"

# No backup leaves an image open in QEMU.
for p in $(qemu_pids "$QEMU_DIR/run"); do
    ! ls -l "/proc/$p/fd" 2> /dev/null | grep -E "$RV/(b-|s\.|scratch)" || fail "QEMU still holds a backup file open"
done

# remvirtd alone: a block job on a disk a backup reads is refused (libvirtd
# starts it: the backup's job sees the disk change under it).
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pull.xml" > /dev/null
rc=0
virsh -c "$QEMU_URI" blockcopy g vda "$RV/c.qcow2" --transient-job > "$OUT/o" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "already in active block job" "$OUT/o" || fail "a copy under a backup: $(cat "$OUT/o")"
virsh -q -c "$QEMU_URI" domjobabort g > /dev/null
[ ! -e "$RV/c.qcow2" ] || fail "the refused copy left its file"

# Incremental backups: checkpoints, one made with a backup, the guest's
# writes, push and pull backups from a checkpoint (the newest and an older
# one), what they hold, an aborted one and the next.
incremental()   # URI DIR
{
    local u=$1 d=$2
    done_job() { virsh -c "$u" domjobinfo g | grep -q None; }
    allocated() {   # the ranges a qcow2 holds itself (not from its backing file)
        echo "--- $1 holds"
        qemu-img map -U -f qcow2 --output=json "$1" |
            "$SYSTEM_PYTHON3" -c 'import json,sys; [print(e["start"], e["length"]) for e in json.load(sys.stdin) if e["depth"] == 0 and e["data"]]'
    }
    rm -f "$d"/i*.qcow2 "$d/is.qcow2"
    local no="<disk name='vdb' checkpoint='no'/><disk name='vdc' checkpoint='no'/>"
    echo "<domaincheckpoint><name>c1</name><disks><disk name='vda'/>$no</disks></domaincheckpoint>" > "$d/c1.xml"
    echo "<domaincheckpoint><name>c2</name><disks><disk name='vda'/>$no</disks></domaincheckpoint>" > "$d/c2.xml"
    run checkpoint-create g "$d/c1.xml"
    guest_disk_write "$d/t.qmp" vda.qcow2 5M 3
    # A push from c1, c2 made with it.
    echo "<domainbackup><incremental>c1</incremental><disks><disk name='vda' type='file'><target file='$d/i1.qcow2'/></disk><disk name='vdb' backup='no'/><disk name='vdc' backup='no'/></disks></domainbackup>" > "$d/i1.xml"
    run backup-begin g "$d/i1.xml" --checkpointxml "$d/c2.xml"
    wait_for 30 "the incremental push to end" done_job
    run checkpoint-list g --name --topological
    allocated "$d/i1.qcow2"
    qemu-img compare -U "$d/i1.qcow2" "$d/vda.qcow2" > /dev/null && echo "i1 reads as the disk"
    guest_disk_write "$d/t.qmp" vda.qcow2 9M 4
    # A pull from c1 (older than c2: both writes), aborted.
    echo "<domainbackup mode='pull'><incremental>c1</incremental><server transport='unix' socket='$d/i.sock'/><disks><disk name='vda' type='file'><scratch file='$d/is.qcow2'/></disk><disk name='vdb' backup='no'/><disk name='vdc' backup='no'/></disks></domainbackup>" > "$d/ip.xml"
    run backup-begin g "$d/ip.xml"
    run backup-dumpxml g
    echo "--- the export's dirty bitmap"
    nbdinfo --map=qemu:dirty-bitmap:backup-vda "nbd+unix:///vda?socket=$d/i.sock"
    qemu-img compare -U -f qcow2 -F raw "$d/vda.qcow2" "nbd+unix:///vda?socket=$d/i.sock" > /dev/null &&
        echo "the export reads as the disk"
    run domjobabort g
    wait_for 30 "the aborted pull to end" done_job
    # The next one, from c2 (the second write only).
    echo "<domainbackup><incremental>c2</incremental><disks><disk name='vda' type='file'><target file='$d/i2.qcow2'/></disk><disk name='vdb' backup='no'/><disk name='vdc' backup='no'/></disks></domainbackup>" > "$d/i2.xml"
    run backup-begin g "$d/i2.xml"
    wait_for 30 "the second push to end" done_job
    allocated "$d/i2.qcow2"
    # Errors: no such checkpoint; a checkpoint that exists made with a backup.
    sed 's/c2/nosuch/' "$d/i2.xml" > "$d/i3.xml"
    run backup-begin g "$d/i3.xml"
    rm -f "$d/i2.qcow2"
    run backup-begin g "$d/i2.xml" --checkpointxml "$d/c1.xml"
    run domjobinfo g
    run checkpoint-list g --name --topological
}
incremental "$LIBVIRTD_QEMU_URI" "$LV" | sed "s|$LV|DIR|g" > "$OUT/libvirtd.inc.txt"
incremental "$QEMU_URI" "$RV" | sed "s|$RV|DIR|g" > "$OUT/remvirtd.inc.txt"
same "$OUT/libvirtd.inc.txt" "$OUT/remvirtd.inc.txt" "incremental backups, a checkpoint made with one, as against libvirtd"
for what in "i1 reads as the disk" "the export reads as the disk" "5242880     1048576    1  dirty"; do
    grep -qF "$what" "$OUT/remvirtd.inc.txt" || fail "not in the incremental transcript: $what"
done

# (stopped and started again: under make check-valgrind, the leaks of
# everything above are counted here)
stop_remvirtd
start_remvirtd_qemu
virsh -q -c "$QEMU_URI" list > /dev/null

# remvirtd killed during an incremental pull backup: the guest runs on
# with its checkpoints; a restarted remvirtd cancels the backup left in
# QEMU, and the next incremental one works.
cat > "$RV/pk.xml" <<XML
<domainbackup mode='pull'><incremental>c1</incremental><server transport='unix' socket='$RV/k.sock'/><disks><disk name='vda' type='file'><scratch file='$RV/k.qcow2'/></disk><disk name='vdb' backup='no'/></disks></domainbackup>
XML
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pk.xml" > /dev/null
pids=$(qemu_pids "$QEMU_DIR/run")
kill_remvirtd
start_remvirtd_qemu
virsh -q -c "$QEMU_URI" list > /dev/null
[ "$(virsh -c "$QEMU_URI" domstate g)" = running ] || fail "the guest is not running after remvirtd's restart"
[ "$(qemu_pids "$QEMU_DIR/run")" = "$pids" ] || fail "the guest's QEMU changed across the restart"
left()  { ! ls -l "/proc/$pids/fd" 2> /dev/null | grep -q "$RV/k.qcow2"; }
wait_for 30 "the old backup's scratch to be let go" left
rm -f "$RV/k.qcow2"
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pk.xml" > "$OUT/o" 2>&1 || fail "a backup after the restart: $(cat "$OUT/o")"
qemu-img compare -U -f qcow2 -F raw "$RV/vda.qcow2" "nbd+unix:///vda?socket=$RV/k.sock" > /dev/null ||
    fail "the export after the restart differs from the disk"
[ "$(nbdinfo --map=qemu:dirty-bitmap:backup-vda "nbd+unix:///vda?socket=$RV/k.sock" | grep -c dirty)" = 2 ] ||
    fail "the export after the restart has not the guest's two writes in its bitmap"
virsh -q -c "$QEMU_URI" domjobabort g > /dev/null
[ "$(virsh -c "$QEMU_URI" checkpoint-list g --name | xargs)" = "c1 c2" ] || fail "the checkpoints after the kill"
echo "ok   an incremental backup killed with remvirtd was cancelled; the checkpoints stay; the next one works"

# remvirtd killed after a push backup's transaction added the checkpoint
# made with it, before its commit (crash point checkpoint-create:2): the
# guest runs on, the checkpoint is not listed, the backup's temporary
# bitmap goes; the same backup and checkpoint again work.
bitmaps() {     # the bitmaps on vda, by the test's monitor
    "$SYSTEM_PYTHON3" - "$RV/t.qmp" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw"); f.readline()
for c in "qmp_capabilities", "query-block":
    f.write(json.dumps({"execute": c}) + "\n"); f.flush()
    while True:
        m = json.loads(f.readline())
        if "return" in m: break
print(" ".join(sorted(b["name"] for d in m["return"] if d.get("device") == "virtio-disk0" or d.get("inserted", {}).get("file", "").endswith("vda.qcow2") for b in d["inserted"].get("dirty-bitmaps", []))))
PY
}
echo "<domaincheckpoint><name>c3</name><disks><disk name='vda'/><disk name='vdb' checkpoint='no'/><disk name='vdc' checkpoint='no'/></disks></domaincheckpoint>" > "$RV/c3.xml"
echo "<domainbackup><incremental>c2</incremental><disks><disk name='vda' type='file'><target file='$RV/k2.qcow2'/></disk><disk name='vdb' backup='no'/><disk name='vdc' backup='no'/></disks></domainbackup>" > "$RV/k2.xml"
done_push() { virsh -c "$QEMU_URI" domjobinfo g | grep -q None; }
wait_for 30 "the aborted pull to end" done_push
stop_remvirtd
RV_CRASH_AT=checkpoint-create:2 start_remvirtd_qemu
rc=0
virsh -c "$QEMU_URI" backup-begin g "$RV/k2.xml" --checkpointxml "$RV/c3.xml" > "$OUT/o" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "remvirtd did not die at checkpoint-create:2 of a backup"
gone() { ! kill -0 "$REMVIRTD_PID" 2> /dev/null; }
wait_for 30 "remvirtd to die at its crash point" gone
grep -qx "remvirtd: crash point checkpoint-create:2" "$REMVIRTD_DIR/stderr" || fail "remvirtd died elsewhere"
wait "$REMVIRTD_PID" 2> /dev/null || true
REMVIRTD_PID=
rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_ADMIN_SOCK" "$REMVIRTD_DIR/remvirtd.pid"
start_remvirtd_qemu
virsh -q -c "$QEMU_URI" list > /dev/null
[ "$(virsh -c "$QEMU_URI" domstate g)" = running ] || fail "the guest is not running after the crash"
[ "$(virsh -c "$QEMU_URI" checkpoint-list g --name | xargs)" = "c1 c2" ] || fail "the checkpoints after the crash"
no_tmp() { [ "$(bitmaps)" = "c1 c2 c3" ]; }
wait_for 30 "the crashed backup's temporary bitmap to go (bitmaps: $(bitmaps))" no_tmp
rm -f "$RV/k2.qcow2"
virsh -q -c "$QEMU_URI" backup-begin g "$RV/k2.xml" --checkpointxml "$RV/c3.xml" > "$OUT/o" 2>&1 ||
    fail "the backup again after the crash: $(cat "$OUT/o")"
wait_for 30 "the push to end" done_push
[ "$(virsh -c "$QEMU_URI" checkpoint-list g --name | xargs)" = "c1 c2 c3" ] || fail "c3 not made the second time"
[ "$(bitmaps)" = "c1 c2 c3" ] || fail "the bitmaps after the second backup: $(bitmaps)"
echo "ok   a backup killed before its checkpoint's commit leaves the guest and its checkpoints whole; it runs again"

# A full target disk (a 1 MiB tmpfs; the push has 4 MiB to write): the
# backup fails, its target removed; the guest runs on, the checkpoint
# made with it stays (it was made at the start, as libvirtd's), and the
# next incremental backup from it works.
mkdir -p "$RV/small"
mount -t tmpfs -o size=1M tmpfs "$RV/small"
cleanup_fn umount "$RV/small"
echo "<domaincheckpoint><name>c4</name><disks><disk name='vda'/><disk name='vdb' checkpoint='no'/><disk name='vdc' checkpoint='no'/></disks></domaincheckpoint>" > "$RV/c4.xml"
sed -e 's|<incremental>c2</incremental>||' -e "s|$RV/k2.qcow2|$RV/small/f.qcow2|" "$RV/k2.xml" > "$RV/f.xml"
virsh -q -c "$QEMU_URI" backup-begin g "$RV/f.xml" --checkpointxml "$RV/c4.xml" > "$OUT/o" 2>&1 ||
    fail "a backup to a small disk did not begin: $(cat "$OUT/o")"
wait_for 30 "the push to a full disk to end" done_push
virsh -c "$QEMU_URI" domjobinfo g --completed > "$OUT/o"
grep -q "Failed" "$OUT/o" || fail "a push to a full disk: $(cat "$OUT/o")"
[ ! -e "$RV/small/f.qcow2" ] || fail "the failed push left its target"
[ "$(virsh -c "$QEMU_URI" domstate g)" = running ] || fail "the guest is not running after a full target disk"
[ "$(virsh -c "$QEMU_URI" checkpoint-list g --name | xargs)" = "c1 c2 c3 c4" ] || fail "the checkpoints after a full disk"
[ "$(bitmaps)" = "c1 c2 c3 c4" ] || fail "the bitmaps after a full disk: $(bitmaps)"
guest_disk_write "$RV/t.qmp" vda.qcow2 20M 5
sed -e 's|<incremental>c2</incremental>|<incremental>c4</incremental>|' -e "s|$RV/k2.qcow2|$RV/k4.qcow2|" "$RV/k2.xml" > "$RV/k4.xml"
virsh -q -c "$QEMU_URI" backup-begin g "$RV/k4.xml" > "$OUT/o" 2>&1 || fail "the incremental after a full disk: $(cat "$OUT/o")"
wait_for 30 "the push after a full disk to end" done_push
[ "$(qemu-img map -U -f qcow2 --output=json "$RV/k4.qcow2" | grep -c '"depth": 0, .*"data": true')" = 1 ] ||
    fail "the incremental after a full disk holds: $(qemu-img map -U -f qcow2 "$RV/k4.qcow2")"
echo "ok   a push to a full disk fails alone: the guest, its checkpoints whole; the next incremental works"

# The guest destroyed during a pull: the backup ends with it (its scratch
# removed), and the guest started again backs up.
rm -f "$RV/k.qcow2"
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pk.xml" > /dev/null
virsh -q -c "$QEMU_URI" destroy g > /dev/null
[ ! -e "$RV/k.qcow2" ] || fail "the scratch of a backup whose guest was destroyed is left"
virsh -q -c "$QEMU_URI" start g > /dev/null
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pk.xml" > "$OUT/o" 2>&1 || fail "a backup after a destroy: $(cat "$OUT/o")"
virsh -q -c "$QEMU_URI" domjobabort g > /dev/null
echo "ok   a guest destroyed during a backup ends it; the next one works"
