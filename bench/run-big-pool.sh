#!/usr/bin/env bash
# The loop's longest pass while a directory pool of N files (default
# 100,000) starts and refreshes, against this build's remvirtd and, with
# --vs BINARY, another one (an older build) side by side in one run, each
# with the loop stall detector on (RV_LOOP_STALL_MS, server/loop_stall.c):
# for each daemon, the wall time of pool-create and of pool-refresh (the
# call's round trip) and the longest pass of the loop through its
# callbacks during each (the other clients' worst wait), from --rounds
# rounds, interleaved.
#
#   bench/run-big-pool.sh [--builddir DIR] [--files N] [--rounds N] [--vs BINARY]
set -euo pipefail

builddir=./build
files=100000
rounds=3
other=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --files) files=${2:?--files needs a number}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --vs) other=${2:?--vs needs a remvirtd binary}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-big-pool: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
export RV_LOOP_STALL_MS=1      # every pass of 1 ms or more is logged

dir=$RV_TMP/pool
mkdir -p "$dir"
(cd "$dir" && seq -f 'v%06g' 1 "$files" | xargs touch)

# longest LOG FROM-LINE: the longest stall logged after line FROM-LINE.
longest()
{
    tail -n +"$2" "$1" | sed -n 's/.*loop stall: \([0-9.]*\) ms.*/\1/p' | sort -g | tail -1 |
        grep . || echo "<1"
}

# one NAME BINARY: a round against that remvirtd.
one()
{
    local name=$1 t0 t1 from create refresh
    REMVIRTD=$2 start_remvirtd_qemu 'log_outputs = "3:file:'"$RV_TMP"'/remvirtd/remvirtd.log"'
    local V=(virsh -q -c "$QEMU_URI")
    from=$(($(wc -l < "$REMVIRTD_LOG") + 1))
    t0=$(date +%s.%N)
    "${V[@]}" pool-create-as big dir --target "$dir" > /dev/null
    t1=$(date +%s.%N)
    create="$(echo "$t1 - $t0" | bc -l | xargs printf %.3f) s, longest pass $(longest "$REMVIRTD_LOG" "$from") ms"
    from=$(($(wc -l < "$REMVIRTD_LOG") + 1))
    t0=$(date +%s.%N)
    "${V[@]}" pool-refresh big > /dev/null
    t1=$(date +%s.%N)
    refresh="$(echo "$t1 - $t0" | bc -l | xargs printf %.3f) s, longest pass $(longest "$REMVIRTD_LOG" "$from") ms"
    count=$("${V[@]}" pool-info big | awk '/^Volumes|^Allocation/ {print}' | head -1)
    "${V[@]}" pool-destroy big > /dev/null
    stop_remvirtd
    printf '%-10s create %-40s refresh %s\n' "$name" "$create" "$refresh"
}

echo "pool of $files files, $rounds rounds"
for _ in $(seq "$rounds"); do
    one this "$abs_top_builddir/remvirtd"
    [ -z "$other" ] || one other "$other"
done
