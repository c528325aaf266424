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
# each compared with libvirtd's.  Then remvirtd alone: a block copy on a
# disk under backup refused; a non-empty checkpoint XML refused;
# remvirtd killed during a pull backup, the guest still running, and the
# next backup working; the guest destroyed during a pull, and a backup
# of it started again.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

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
    qemu_guest_xml g | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/vda.qcow2'/><target dev='vda' bus='virtio'/></disk><disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$2/vdb.img'/><target dev='vdb' bus='virtio'/></disk><serial type='pty'/>|" > "$2/g.xml"
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

transcript()    # URI DIR READ-ONLY-URI
{
    local u=$1 d=$2 rc
    run() {
        rc=0
        virsh -c "$u" "$@" > "$OUT/o" 2> "$OUT/e" || rc=$?
        echo "=== virsh $*"
        sed -e "s/index='[0-9]*'/index='N'/" -e 's/^\(Time elapsed: *\)[0-9]* */\1N /' "$OUT/o"
        echo "--- stderr"
        cat "$OUT/e"
        echo "--- exit status $rc"
    }
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

# remvirtd alone: an incremental backup from a checkpoint that exists is
# refused as not supported yet, and changes nothing.
virsh -q -c "$QEMU_URI" checkpoint-create-as g c1 --diskspec vda --diskspec vdb,checkpoint=no --diskspec vdc,checkpoint=no > /dev/null
echo "<domainbackup><incremental>c1</incremental></domainbackup>" > "$RV/inc.xml"
ls "$RV" > "$OUT/before"
rc=0
virsh -c "$QEMU_URI" backup-begin g "$RV/inc.xml" > "$OUT/o" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "incremental backup of disk 'vda' (from checkpoint 'c1') is not supported yet" "$OUT/o" ||
    fail "an incremental backup: $(cat "$OUT/o")"
ls "$RV" | diff "$OUT/before" - || fail "a refused incremental backup changed files"
[ "$(virsh -c "$QEMU_URI" domjobinfo g | grep -c None)" = 1 ] || fail "a refused incremental backup left a job"

# remvirtd alone: a checkpoint with the backup is refused.
echo "<domaincheckpoint/>" > "$RV/cp.xml"
rc=0
virsh -c "$QEMU_URI" backup-begin g --checkpointxml "$RV/cp.xml" > "$OUT/o" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "not supported" "$OUT/o" || fail "a checkpoint with a backup: $(cat "$OUT/o")"

# (stopped and started again: under make check-valgrind, the leaks of
# everything above are counted here)
stop_remvirtd
start_remvirtd_qemu
virsh -q -c "$QEMU_URI" list > /dev/null

# remvirtd killed during a pull backup: the guest runs on; a restarted
# remvirtd cancels the backup left in QEMU, and the next one works.
cat > "$RV/pk.xml" <<XML
<domainbackup mode='pull'><server transport='unix' socket='$RV/k.sock'/><disks><disk name='vda' type='file'><scratch file='$RV/k.qcow2'/></disk><disk name='vdb' backup='no'/></disks></domainbackup>
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
virsh -q -c "$QEMU_URI" domjobabort g > /dev/null
echo "ok   a backup killed with remvirtd was cancelled; the next one works"

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
