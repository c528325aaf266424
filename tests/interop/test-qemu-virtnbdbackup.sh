#!/usr/bin/env bash
# virtnbdbackup (a real client of the backup API: a pull backup over a
# Unix socket, the export read with libnbd) against remvirtd and libvirtd
# side by side: a `-l copy` full backup of the running test guest, then
# virtnbdrestore of it; a `-l full`, `-l inc`, `-l inc` chain (checkpoints
# virtnbdbackup.0-2) with the guest's writes between them, restored; a
# `-t raw -l full` backup and what `-t raw -l inc` says.  The restored
# disks hold what the guest's holds, and both daemons' backups have data
# files of one size.  virtnbdbackup takes
# a URI with a transport for a remote host (it asks for a password), so
# each run sees its daemon's socket as /run/libvirt/libvirt-sock in a
# mount namespace of its own.  Prints each side's times and sizes.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virtnbdbackup --version
requires virtnbdrestore --version
start_both_qemu virtnbdbackup

boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu-img create -q -f qcow2 "$2/vda.qcow2" 64M
    qemu-io -f qcow2 -c "write -P 7 1M 2M" -c "write -P 9 40M 1M" "$2/vda.qcow2" > /dev/null
    chmod 666 "$2"/*
    qemu_guest_xml g | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/vda.qcow2'/><target dev='vda' bus='virtio'/></disk><serial type='pty'/>|" |
        with_test_qmp "$2/t.qmp" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}

as_system()     # SOCKET COMMAND...: COMMAND with qemu:///system on SOCKET
{
    local sock=$1
    shift
    unshare --mount --propagation private sh -c \
        'mount -t tmpfs tmpfs /run/libvirt && ln -s "$0" /run/libvirt/libvirt-sock && exec "$@"' "$sock" "$@"
}

SECONDS_OF() { awk "BEGIN { printf \"%.2f\", $2 - $1 }"; }

backup()    # NAME SOCKET DIR LOG ARGS...: virtnbdbackup, its time and size printed
{
    local name=$1 sock=$2 dir=$3 log=$4 t0 t1
    shift 4
    t0=$(date +%s.%N)
    as_system "$sock" virtnbdbackup -U qemu:///system -d g -S "$dir" -n "$@" > "$dir/$log.log" 2>&1 ||
        { cat "$dir/$log.log"; fail "virtnbdbackup $* against $name"; }
    t1=$(date +%s.%N)
    printf '%-8s %-28s %6s s\n' "$name" "backup $log" "$(SECONDS_OF "$t0" "$t1")"
}

restore()   # NAME SOCKET DIR BACKUPDIR: restored, compared with the guest's disk
{
    local t0 t1
    t0=$(date +%s.%N)
    rm -rf "$3/rs"
    as_system "$2" virtnbdrestore -U qemu:///system -i "$4" -o "$3/rs" -n > "$3/restore.log" 2>&1 ||
        { cat "$3/restore.log"; fail "virtnbdrestore of $1's $4"; }
    t1=$(date +%s.%N)
    qemu-img compare -U -f qcow2 -F qcow2 "$3/vda.qcow2" "$3/rs/vda.qcow2" > /dev/null ||
        fail "the disk restored from $1's $4 differs from the guest's"
    printf '%-8s %-28s %6s s, backup %s bytes\n' "$1" "restore ${4##*/}" "$(SECONDS_OF "$t0" "$t1")" \
        "$(du -sb "$4" | cut -f1)"
}

run()       # NAME URI SOCKET DIR
{
    local n=$1 u=$2 s=$3 d=$4
    backup "$n" "$s" "$d" copy -l copy -o "$d/bk"
    restore "$n" "$s" "$d" "$d/bk"
    # A chain in stream format: full (checkpoint virtnbdbackup.0), the
    # guest's writes, incremental (virtnbdbackup.1), again (.2).
    backup "$n" "$s" "$d" full -l full -o "$d/chain"
    guest_disk_write "$d/t.qmp" vda.qcow2 5M 3
    backup "$n" "$s" "$d" inc1 -l inc -o "$d/chain"
    guest_disk_write "$d/t.qmp" vda.qcow2 9M 4
    guest_disk_write "$d/t.qmp" vda.qcow2 41M 6
    backup "$n" "$s" "$d" inc2 -l inc -o "$d/chain"
    restore "$n" "$s" "$d" "$d/chain"
    # The data an incremental backup holds: what the guest wrote since.
    stat -c '%n %s' "$d"/chain/vda.*.data | sed "s|$d/chain/||" > "$d/sizes"
    # Raw format: a full backup, then what virtnbdbackup says of an incremental one.
    # (a raw backup is the disk's image itself: virtnbdrestore reads streams only)
    backup "$n" "$s" "$d" raw-full -t raw -l full -o "$d/raw"
    qemu-img compare -U -f raw -F qcow2 "$d/raw/vda.full.data" "$d/vda.qcow2" > /dev/null ||
        fail "$n's raw full backup differs from the guest's disk"
    guest_disk_write "$d/t.qmp" vda.qcow2 13M 8
    rc=0
    as_system "$s" virtnbdbackup -U qemu:///system -d g -S "$d" -n -t raw -l inc -o "$d/raw" > "$d/raw-inc.log" 2>&1 ||
        rc=$?
    echo "$rc $(grep -o 'ERROR.*' "$d/raw-inc.log" | sed 's/\[.*\]: //' | tail -1)" > "$d/raw-inc"
    virsh -c "$u" checkpoint-list g --name | sort > "$d/checkpoints"
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"
run libvirtd "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_SOCK" "$LV"
run remvirtd "$QEMU_URI" "$REMVIRTD_SOCK" "$RV"
# (the data files' stream headers differ: each names its own backup)
[ "$(stat -c %s "$LV/bk/vda.copy.data")" = "$(stat -c %s "$RV/bk/vda.copy.data")" ] ||
    fail "the backups' data files differ in size"
same "$LV/sizes" "$RV/sizes" "the chain's data files of one size on both"
cat "$RV/sizes"
same "$LV/raw-inc" "$RV/raw-inc" "an incremental raw backup as against libvirtd"
same "$LV/checkpoints" "$RV/checkpoints" "the checkpoints virtnbdbackup made as against libvirtd"
[ "$(virsh -c "$QEMU_URI" domjobinfo g --completed | grep -c Backup)" = 1 ] || fail "no completed backup job"
echo "ok   virtnbdbackup copy, full and incremental chains (stream, raw) and virtnbdrestore against remvirtd as against libvirtd"
