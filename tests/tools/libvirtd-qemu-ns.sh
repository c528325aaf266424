#!/bin/sh
# libvirtd-qemu-ns.sh DIR [ARG...]: run by tests/functions.sh's start_libvirtd_qemu
# inside a private mount namespace (unshare --mount).  Gives libvirtd's
# QEMU driver directories of its own there, so it neither sees nor
# touches the host's (or another test's) libvirt state: tmpfs on /run,
# /var/lib, /var/cache and /etc/libvirt, DIR/log on /var/log/libvirt,
# and a qemu.conf that needs no virtlogd (stdio_handler file) and runs
# QEMU as root (/dev/kvm is root's here), with the lines of
# RV_LIBVIRTD_QEMU_CONF if set.  Then libvirtd with
# DIR/libvirtd.conf and the ARGs (--listen) under tests/tools/subreaper.py.
set -eu
dir=$1
shift
for d in /run/libvirt /var/lib/libvirt /var/cache/libvirt /etc/libvirt; do
    mkdir -p "$d"
    mount -t tmpfs tmpfs "$d"
done
mkdir -p "$dir/log" /var/log/libvirt
mount --bind "$dir/log" /var/log/libvirt
cat > /etc/libvirt/qemu.conf <<CONF
stdio_handler = "file"
user = "root"
group = "root"
namespaces = [ ]
remember_owner = 0
${RV_LIBVIRTD_QEMU_CONF:-}
CONF
exec python3 "$(dirname "$0")/subreaper.py" libvirtd -f "$dir/libvirtd.conf" -p "$dir/libvirtd.pid" "$@"
