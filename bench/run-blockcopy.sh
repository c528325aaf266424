#!/usr/bin/env bash
# Block copy of a 1 GiB disk to pivot, remvirtd's QEMU driver beside
# libvirtd's: one booted test guest (TCG) on each with a second disk vdb
# of 1 GiB of random data (raw), copied by bench/blockcopy_pivot.py
# (BLOCK_COPY, the READY event, BLOCK_JOB_ABORT with PIVOT) --runs times
# on each in turn; prints each run's seconds, then min/median/max of each
# and of the ratios remvirtd/libvirtd pair by pair.
#
#   bench/run-blockcopy.sh [--builddir DIR] [--runs N] [-- COMMAND ...]
#
# With a COMMAND, that runs instead of the loop, with RV_URI and LV_URI
# exported (the two daemons' URIs) and BLOCKCOPY (the helper's path), and
# the guests up: to time the helper with another harness.
# Figures, not verdicts: the exit status is 0 when every run ran.
set -euo pipefail

builddir=./build
runs=5
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-blockcopy: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
start_libvirtd_qemu
start_remvirtd_qemu
chmod 755 "$RV_TMP"
copy=("$SYSTEM_PYTHON3" "$abs_top_srcdir/bench/blockcopy_pivot.py")

boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    head -c 1G /dev/urandom > "$2/data.a.img"
    chmod 666 "$2/data.a.img"
    qemu_guest_xml g "" | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$2/data.a.img'/><target dev='vdb' bus='virtio'/></disk><serial type='file'><source path='$2/console'/></serial>|" > "$2/g.xml"
    virsh -q -c "$1" create "$2/g.xml" > /dev/null
}
booted() { grep -q "remvirt-test-guest: ready" "$1/console" 2> /dev/null; }
boot "$LIBVIRTD_QEMU_URI" "$RV_TMP/lv"
boot "$QEMU_URI" "$RV_TMP/rv"
wait_for 120 "libvirtd's guest to boot" booted "$RV_TMP/lv"
wait_for 120 "remvirtd's guest to boot" booted "$RV_TMP/rv"

if [ $# -gt 0 ]; then
    RV_URI=$QEMU_URI LV_URI=$LIBVIRTD_QEMU_URI BLOCKCOPY=$abs_top_srcdir/bench/blockcopy_pivot.py "$@"
    exit 0
fi
rv=() lv=()
for ((i = 1; i <= runs; i++)); do
    lv+=("$("${copy[@]}" "$LIBVIRTD_QEMU_URI" g vdb)")
    rv+=("$("${copy[@]}" "$QEMU_URI" g vdb)")
    echo "run $i: libvirtd ${lv[-1]} s, remvirtd ${rv[-1]} s"
done
"$SYSTEM_PYTHON3" - "${lv[*]}" "${rv[*]}" <<'PY'
import statistics
import sys
lv = [float(x) for x in sys.argv[1].split()]
rv = [float(x) for x in sys.argv[2].split()]
ratio = [r / l for r, l in zip(rv, lv)]
for what, v in (("libvirtd", lv), ("remvirtd", rv), ("remvirtd/libvirtd", ratio)):
    print(f"{what}: min {min(v):.3f} median {statistics.median(v):.3f} max {max(v):.3f}")
PY
