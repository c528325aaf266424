#!/usr/bin/env bash
# Stream throughput side by side: `virsh vol-upload` and `vol-download` of
# a 48 MiB file, against remvirtd's test driver (in-memory volumes) and
# (as root, with libvirtd installed) against a private libvirtd's dir pool
# (a file in a temporary directory).  Prints the best of --runs runs for
# each as MiB/s, and remvirtd's speed as a multiple of libvirtd's.  The
# volumes differ (memory against a file in the page cache), so this
# measures the stream path and its flow control, not storage.
#
#   bench/run-vol-stream.sh [--builddir DIR] [--runs N] [--no-libvirt]
set -euo pipefail

builddir=./build
runs=3
use_libvirt=yes
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --no-libvirt) use_libvirt=; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-vol-stream: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"

size_mib=48
data=$RV_TMP/data
head -c $((size_mib * 1024 * 1024)) /dev/urandom > "$data"

# best SECONDS-VAR CMD...: the shortest wall time of `runs` runs.
best()
{
    local t0 t1 dt min=
    for _ in $(seq "$runs"); do
        t0=$(date +%s.%N)
        "$@" > /dev/null
        t1=$(date +%s.%N)
        dt=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$min" ] || [ "$(echo "$dt < $min" | bc -l)" = 1 ]; then min=$dt; fi
    done
    echo "$min"
}

# measure NAME URI POOL: upload and download MiB/s.
measure()
{
    local name=$1 uri=$2 pool=$3 up down
    virsh -q -c "$uri" vol-create-as "$pool" bench 64M > /dev/null
    up=$(best virsh -q -c "$uri" vol-upload --pool "$pool" bench "$data")
    down=$(best virsh -q -c "$uri" vol-download --pool "$pool" bench "$RV_TMP/out" --length $((size_mib * 1024 * 1024)))
    cmp "$data" "$RV_TMP/out" || fail "$name: the download differs from the upload"
    virsh -q -c "$uri" vol-delete --pool "$pool" bench > /dev/null
    printf '%-9s upload %7.1f MiB/s   download %7.1f MiB/s\n' "$name" \
        "$(echo "$size_mib / $up" | bc -l)" "$(echo "$size_mib / $down" | bc -l)"
    eval "${name}_up=$up ${name}_down=$down"
}

echo "virsh vol-upload / vol-download of $size_mib MiB, best of $runs"
start_remvirtd
measure remvirtd "$REMVIRTD_URI" default-pool
if [ -n "$use_libvirt" ] && [ "$(id -u)" -eq 0 ] && command -v libvirtd > /dev/null; then
    start_libvirtd
    mkdir -p "$RV_TMP/pool"
    lv="qemu+unix:///system?socket=$LIBVIRTD_SOCK"
    virsh -q -c "$lv" pool-create-as benchpool dir --target "$RV_TMP/pool" > /dev/null
    measure libvirtd "$lv" benchpool
    virsh -q -c "$lv" pool-destroy benchpool > /dev/null
    printf 'remvirtd / libvirtd: upload %.2fx, download %.2fx (speed)\n' \
        "$(echo "$libvirtd_up / $remvirtd_up" | bc -l)" "$(echo "$libvirtd_down / $remvirtd_down" | bc -l)"
fi
