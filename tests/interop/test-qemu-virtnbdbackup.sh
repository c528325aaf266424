#!/usr/bin/env bash
# virtnbdbackup (a real client of the backup API: a pull backup over a
# Unix socket, the export read with libnbd) against remvirtd and libvirtd
# side by side: a `-l copy` full backup of the running test guest, then
# virtnbdrestore of it; the restored disk holds what the guest's holds,
# and both daemons' backups have data files of one size.  virtnbdbackup takes
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
    qemu_guest_xml g | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/vda.qcow2'/><target dev='vda' bus='virtio'/></disk><serial type='pty'/>|" > "$2/g.xml"
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

run()       # NAME SOCKET DIR
{
    local t0 t1 t2
    t0=$(date +%s.%N)
    as_system "$2" virtnbdbackup -U qemu:///system -d g -l copy -o "$3/bk" -S "$3" -n > "$3/backup.log" 2>&1 ||
        { cat "$3/backup.log"; fail "virtnbdbackup against $1"; }
    t1=$(date +%s.%N)
    as_system "$2" virtnbdrestore -U qemu:///system -i "$3/bk" -o "$3/rs" -n > "$3/restore.log" 2>&1 ||
        { cat "$3/restore.log"; fail "virtnbdrestore of $1's backup"; }
    t2=$(date +%s.%N)
    qemu-img compare -U -f qcow2 -F qcow2 "$3/vda.qcow2" "$3/rs/vda.qcow2" > /dev/null ||
        fail "the disk restored from $1's backup differs from the guest's"
    printf '%-8s backup %.2f s, %s bytes (data file %s); restore %.2f s\n' "$1" \
        "$(awk "BEGIN { print $t1 - $t0 }")" "$(du -sb "$3/bk" | cut -f1)" "$(stat -c %s "$3/bk/vda.copy.data")" \
        "$(awk "BEGIN { print $t2 - $t1 }")"
}

LV=$OUT/libvirtd RV=$OUT/remvirtd
boot "$LIBVIRTD_QEMU_URI" "$LV"
boot "$QEMU_URI" "$RV"
run libvirtd "$LIBVIRTD_SOCK" "$LV"
run remvirtd "$REMVIRTD_SOCK" "$RV"
# (the data files' stream headers differ: each names its own backup)
[ "$(stat -c %s "$LV/bk/vda.copy.data")" = "$(stat -c %s "$RV/bk/vda.copy.data")" ] ||
    fail "the backups' data files differ in size"
[ "$(virsh -c "$QEMU_URI" domjobinfo g --completed | grep -c Backup)" = 1 ] || fail "no completed backup job"
echo "ok   virtnbdbackup -l copy and virtnbdrestore against remvirtd as against libvirtd"
