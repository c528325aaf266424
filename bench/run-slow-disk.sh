#!/usr/bin/env bash
# Does a slow disk under remvirtd's state reach another client?  GetInfo
# latency (p50/p99/max, microseconds) on a defined QEMU guest, from a
# connection of its own, while the define/undefine storm of every family
# (bench/loop-stall-load.py storm) writes definitions, pools and volumes,
# with the QEMU driver's state (config, run and save dirs, the pools) on
# an ext4 file system on a loop device, side by side in one run:
#   idle   the loop device as it is, and no storm: the baseline;
#   fast   the loop device as it is;
#   slow   the same device throttled to --iops reads and writes a second
#          (cgroup v1 blkio throttle on the loop device; remvirtd and its
#          helpers run in that cgroup, so every fsync and every read that
#          misses the page cache waits its turn).
# The three take turns for --rounds rounds, each on a fresh remvirtd;
# printed per round, then the medians of the rounds' p99 ratios slow/fast
# and slow/idle (the goal of issue 31: at most 1.2).  On the slow disk the
# storm gets far less done (each of its writes waits on the disk), so
# fast has the more CPU load of the two and slow/idle is the fairer
# figure: a loop that waited on the disk would show p99s of the disk's
# 100 ms per write.  First a 4 KiB write with fsync in each
# cgroup, to show how slow the slow disk is.  Needs root, losetup,
# mkfs.ext4 and the blkio controller mounted at /sys/fs/cgroup/blkio.
#
#   bench/run-slow-disk.sh [--builddir DIR] [--rounds N] [--calls N] [--seconds S]
#                          [--iops N]
#
# Each phase makes --calls GetInfo calls and lasts --seconds at least
# (defaults 20000 and 10).
#
# Figures, not verdicts: the exit status is 0 when every round ran.
set -euo pipefail

builddir=./build
rounds=3
calls=20000
seconds=10
iops=10
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --calls) calls=${2:?--calls needs a number}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --iops) iops=${2:?--iops needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-slow-disk: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
requires_root
requires losetup --version
requires mkfs.ext4 -V
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
blkio=/sys/fs/cgroup/blkio
[ -e "$blkio/blkio.throttle.write_iops_device" ] || skip "no cgroup v1 blkio throttle at $blkio"
load=("$SYSTEM_PYTHON3" "$abs_top_srcdir/bench/loop-stall-load.py")

# The disk: a loop device with ext4, mounted under the temp dir.
truncate -s 256M "$RV_TMP/disk.img"
mkfs.ext4 -q -F "$RV_TMP/disk.img"
dev=$(losetup -f --show "$RV_TMP/disk.img")
cleanup_fn losetup -d "$dev"
mnt=$RV_TMP/disk
mkdir -p "$mnt"
mount "$dev" "$mnt"
cleanup_fn umount "$mnt"
majmin="$((16#$(stat -c %t "$dev"))):$((16#$(stat -c %T "$dev")))"

# A cgroup per way (the fast one without a limit, so the two differ only
# in the throttle); a process is moved back to the root before they go.
for way in fast slow; do
    mkdir -p "$blkio/remvirt-bench-$$-$way"
    cleanup_fn rmdir "$blkio/remvirt-bench-$$-$way"
done
echo "$majmin $iops" > "$blkio/remvirt-bench-$$-slow/blkio.throttle.write_iops_device"
echo "$majmin $iops" > "$blkio/remvirt-bench-$$-slow/blkio.throttle.read_iops_device"
to_cgroup() { echo "${2:-$BASHPID}" > "$blkio${1:+/remvirt-bench-$$-$1}/cgroup.procs"; }

fsync_ms()
{
    (
        to_cgroup "$1"
        local t0 t1 i
        t0=$(date +%s%N)
        for i in 1 2 3 4 5; do
            dd if=/dev/zero of="$mnt/probe$i" bs=4k count=1 conv=fsync status=none
        done
        t1=$(date +%s%N)
        rm -f "$mnt"/probe?
        echo "$(((t1 - t0) / 5000000))"
    )
}
echo "$dev ($majmin), ext4; a 4 KiB write and fsync, mean of 5: fast $(fsync_ms fast) ms, slow $(fsync_ms slow) ms (${iops} IOPS)"
echo "GetInfo on a defined QEMU guest, $calls calls and $seconds s at least, while every family's objects are defined and undefined; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# one WAY: a remvirtd in WAY's cgroup (idle: fast's, without the storm)
# with its state on the disk; prints its line and leaves the p99 (us) in
# $RV_TMP/p99.
one()
{
    local way=$1 state=$mnt/$1 out pid=
    mkdir -p "$state"
    to_cgroup "${way/idle/fast}" $$
    start_remvirtd "qemu_config_dir = \"$state/etc\"" "qemu_run_dir = \"$state/run\"" \
        "qemu_save_dir = \"$state/save\""
    to_cgroup "" $$
    local kind=session uri
    [ "$(id -u)" -ne 0 ] || kind=system
    uri="qemu+unix:///$kind?socket=$REMVIRTD_SOCK"
    qemu_domain_xml probe > "$RV_TMP/probe.xml"
    virsh -q -c "$uri" define "$RV_TMP/probe.xml" > /dev/null
    mkdir -p "$state/pools"
    : > "$RV_TMP/storm.out"
    if [ "$way" != idle ]; then
        "${load[@]}" "$uri" storm --seconds 3600 --dir "$state/pools" > "$RV_TMP/storm.out" 2>&1 &
        pid=$!
        sleep 2
    fi
    out=$("${load[@]}" "$uri" getinfo --domain probe --calls "$calls" --seconds "$seconds")
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    stop_remvirtd
    rm -rf "$state"
    echo "$out" | awk -v way="$way" -v f="$RV_TMP/p99" '{
        printf "  %-5s p50 %8.1f  p99 %8.1f  max %10.1f us\n", way, $5, $7, $9; print $7 > f }'
    sed -n 's/^/        /p' "$RV_TMP/storm.out"
}

# median LABEL RATIO...
median()
{
    local label=$1
    shift
    printf '%s\n' "$@" | sort -g | awk -v label="$label" '{ v[NR] = $1 } END {
        printf "%s p99, median of %d rounds: %.2f (min %.2f, max %.2f)\n", label, NR,
            v[int((NR + 1) / 2)], v[1], v[NR] }'
}

vs_fast=()
vs_idle=()
for r in $(seq "$rounds"); do
    echo "round $r"
    for way in idle fast slow; do
        one "$way"
        eval "$way=\$(cat \"\$RV_TMP/p99\")"
    done
    vs_fast+=("$(echo "$slow / $fast" | bc -l)")
    vs_idle+=("$(echo "$slow / $idle" | bc -l)")
    printf '  p99 slow/fast %.2f, slow/idle %.2f\n' "${vs_fast[-1]}" "${vs_idle[-1]}"
done
median "slow/fast" "${vs_fast[@]}"
median "slow/idle" "${vs_idle[@]}"
