#!/bin/sh
# private-root.sh DIR UNDER BIND... -- CMD ARG...: run by `unshare --mount
# --propagation private`, so that its mounts are its own.  CMD runs in a
# chroot whose root is an overlay: this machine's root over UNDER (a
# directory whose files show where the machine has none), with every change
# written to a tmpfs on DIR that goes with the namespace.  Its /proc, /sys
# and /dev are the machine's; /run and /tmp are new and empty; each BIND
# directory is the machine's own at the same path (writes go through).
# Only the root file system is overlaid: on a machine whose /usr, /etc or
# /var is a mount of its own, those would be the machine's.
set -eu
dir=$1 under=$2
shift 2
mkdir -p "$dir"
mount -t tmpfs tmpfs "$dir"
mkdir "$dir/upper" "$dir/work" "$dir/root"
# A copy: overlayfs refuses a layer inside another (UNDER inside /).
cp -a "$under" "$dir/under"
root=$dir/root
mount -t overlay overlay -o "lowerdir=/:$dir/under,upperdir=$dir/upper,workdir=$dir/work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=755 tmpfs "$root/run"
mkdir "$root/run/lock"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
while [ "$1" != -- ]; do
    mkdir -p "$root$1"
    mount --bind "$1" "$root$1"
    shift
done
shift
exec chroot "$root" "$@"
