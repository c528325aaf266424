#!/usr/bin/env bash
# Block jobs on the QEMU driver, side by side with libvirtd's QEMU driver,
# on a booted test guest (TCG) whose vda is a qcow2 chain
# (top.qcow2 > mid.qcow2 > base.img): blockjob-checks.py's transcript
# through python3-libvirt (resize, commit inactive and active with pivot,
# copy finished and pivoted, rebase as pull and as copy, job info, speed,
# abort, their errors, and the BLOCK_JOB and BLOCK_JOB_2 events each step
# sends), then virsh's blockcopy --wait --pivot / --finish, blockcommit
# --top and --active --pivot, blockpull --wait, blockjob and blockresize,
# a copy of a hotplugged disk, disk-only snapshots (--no-metadata) and
# their overlays committed; each compared with libvirtd's (the
# guests' directories masked); a hotplugged disk's counters.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu blockjobs

# vda: a chain of three, with data in each layer.
images()    # DIR
{
    rm -f "$1"/*.img "$1"/*.qcow2 "$1"/*.raw
    qemu-img create -q -f raw "$1/extra.img" 8M
    qemu-img create -q -f raw "$1/base.img" 8M
    qemu-img create -q -f qcow2 -b "$1/base.img" -F raw "$1/mid.qcow2"
    qemu-img create -q -f qcow2 -b "$1/mid.qcow2" -F qcow2 "$1/top.qcow2"
    qemu-io -f raw -c "write -P 1 0 1M" "$1/base.img" > /dev/null
    qemu-io -f qcow2 -c "write -P 2 1M 1M" "$1/mid.qcow2" > /dev/null
    qemu-io -f qcow2 -c "write -P 3 2M 1M" "$1/top.qcow2" > /dev/null
    chmod 666 "$1"/*
}
boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    images "$2"
    qemu_guest_xml g "" | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/top.qcow2'/><target dev='vda' bus='virtio'/></disk><serial type='file'><source path='$2/console'/></serial>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}
booted() { grep -q "remvirt-test-guest: ready" "$1/console" 2> /dev/null; }
restart()   # URI DIR: the guest again on new images
{
    virsh -q -c "$1" destroy g > /dev/null
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    images "$2"
    : > "$2/console"
    virsh -q -c "$1" start g > /dev/null
    wait_for 120 "the guest to boot again" booted "$2"
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"
wait_for 120 "libvirtd's guest to boot" booted "$LV"
wait_for 120 "remvirtd's guest to boot" booted "$RV"

checks()    # URI DIR
{
    "$SYSTEM_PYTHON3" "$(dirname "$0")/blockjob-checks.py" "$1" "$2" > "$OUT/py" 2>&1 ||
        { cat "$OUT/py"; fail "blockjob-checks.py against $1"; }
    sed "s|$2|DIR|g" "$OUT/py"
}
checks "$LIBVIRTD_QEMU_URI" "$LV" > "$OUT/libvirtd.py.txt"
checks "$QEMU_URI" "$RV" > "$OUT/remvirtd.py.txt"
same "$OUT/libvirtd.py.txt" "$OUT/remvirtd.py.txt" "python3-libvirt block jobs and their events as against libvirtd"
grep -q "live source: DIR/copy.raw" "$OUT/remvirtd.py.txt" || fail "the last pivot did not reach the live XML"

transcript()    # URI DIR
{
    local u=$1 d=$2 rc
    run() {
        rc=0
        virsh -c "$u" "$@" > "$OUT/o" 2> "$OUT/e" || rc=$?
        echo "=== virsh $*"
        # (progress lines are rewritten in place: only the last counts)
        tr '\r' '\n' < "$OUT/o" | grep -v '^Block \(Copy\|Commit\|Pull\): \[' || true
        echo "--- stderr"
        # (libvirt's job names are its own; a progress figure is a moment's)
        tr '\r' '\n' < "$OUT/e" | sed -e "s/block job '[^']*'/block job JOB/" -e 's/\[ *[0-9]* %\]/[N %]/'
        echo "--- exit status $rc"
    }
    run blockresize g vda 24M
    run blockjob g vda --info
    run blockjob g vdz --info
    run blockcommit g vda --top "$d/mid.qcow2" --wait
    run blockcommit g vda --active --pivot --wait
    run domblklist g
    run blockpull g vda --wait
    run blockcopy g vda "$d/c1.qcow2" --format qcow2 --shallow --wait --finish
    run blockcopy g vda "$d/c1.qcow2" --format qcow2 --shallow --wait --finish --transient-job
    run domblklist g
    run blockcopy g vda "$d/c1.qcow2" --format qcow2 --shallow --wait --pivot --transient-job
    run domblklist g
    run blockcopy g vda "$d/c2.img" --bandwidth 50 --granularity 65536 --buf-size 1048576 --wait --pivot --transient-job
    run domblklist g
    run blockcopy g vda "$d/c3.qcow2" --format qcow2 --shallow --bandwidth 1 --transient-job
    run blockjob g vda --info --bytes
    run blockjob g vda --bandwidth 2
    run blockjob g vda --info
    run blockjob g vda --pivot
    run blockjob g vda --abort
    run blockjob g vda --info
    run domblklist g
    run domblklist g --inactive
    # A hotplugged disk (QEMU knows its drive by its device only): its
    # counters, and a copy pivoted.
    run attach-disk g "$d/extra.img" vdb --live
    run blockcopy g vdb "$d/extra2.img" --wait --pivot --transient-job
    run domblklist g
    # Disk-only external snapshots (as nova takes them: no metadata), the
    # overlays then committed back.
    run snapshot-create-as g s1 --disk-only --no-metadata --diskspec "vda,file=$d/s1.qcow2" --diskspec vdb,snapshot=no
    run domblklist g
    run snapshot-create-as g s2 --disk-only --no-metadata
    run snapshot-create-as g s2 --disk-only --no-metadata
    run domblklist g
    run domblklist g --inactive
    run snapshot-list g --name
    run blockcommit g vda --active --pivot --wait
    run blockcommit g vdb --active --shallow --pivot --wait
    run domblklist g
}
restart "$LIBVIRTD_QEMU_URI" "$LV"
restart "$QEMU_URI" "$RV"
transcript "$LIBVIRTD_QEMU_URI" "$LV" | sed "s|$LV|DIR|g" > "$OUT/libvirtd.txt"
transcript "$QEMU_URI" "$RV" | sed "s|$RV|DIR|g" > "$OUT/remvirtd.txt"
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "virsh blockcopy, blockjob and blockresize as against libvirtd"
grep -q "Successfully pivoted" "$OUT/remvirtd.txt" || fail "no pivot in the virsh transcript"
grep -q "DIR/c2.img" "$OUT/remvirtd.txt" || fail "the pivot to c2.img is not in domblklist"
# (the guest's own reads of the new disk differ from run to run)
virsh -c "$QEMU_URI" domblkstat g vdb > "$OUT/o" || fail "domblkstat of a hotplugged disk"
grep -q "vdb rd_req" "$OUT/o" || fail "no counters for the hotplugged disk: $(cat "$OUT/o")"
virsh -c "$QEMU_URI" domstats g --block > "$OUT/o"
grep -q "block.1.name=vdb" "$OUT/o" && grep -q "block.1.rd.reqs=" "$OUT/o" ||
    fail "no block.1 counters for the hotplugged disk: $(cat "$OUT/o")"
# The images each QEMU still holds open: after the pivots above, only the
# disks' chains as they are now.  A node left behind would hold its file
# (an unlinked one's dirty pages get written back for nothing).
held()      # DIR
{
    local p
    for p in $(pgrep -f qemu-system); do
        ls -l "/proc/$p/fd" 2> /dev/null | grep -o " $1/.*" || true
    done | sed "s| $1/| DIR/|" | sort -u
}
held "$LV" > "$OUT/libvirtd.held"
held "$RV" > "$OUT/remvirtd.held"
grep -q . "$OUT/remvirtd.held" || fail "remvirtd's QEMU holds no image open"
same "$OUT/libvirtd.held" "$OUT/remvirtd.held" "the images QEMU holds open after the block jobs, as under libvirtd"
