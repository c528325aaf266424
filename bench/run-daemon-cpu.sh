#!/usr/bin/env bash
# The daemon's CPU per call with libvirt's own client (bench/daemon-cpu),
# side by side in one run: remvirtd's test driver, remvirtd's QEMU driver
# on a running guest (TCG, idling in its firmware), and libvirtd's test
# driver (as root, with libvirtd installed).  Every daemon and the client
# run on one CPU (taskset), so each call also pays the daemon's wakeup.
# GetInfo, GetState and domstats (state, cpu-total, balloon, vcpu) in turn;
# GetInfo's rows end with the floor (daemon-cpu --floor: a daemon's loop
# doing no work, the kernel's share of a call on this machine).
#
#   bench/run-daemon-cpu.sh [--builddir DIR] [--cpu N] [--calls N] [--rounds N]
#                           [--no-libvirt] [--no-qemu] [--callgrind]
#
# --callgrind: remvirtd runs under valgrind's callgrind instead, and what
# is printed is its instructions per GetInfo on the test driver (counted
# between a warm-up and the end of the calls, so start-up and connection
# set-up are left out) and the 25 functions that spend the most of them;
# the profile stays in --outdir (default ./profile) as callgrind.out.
# Builds nothing: DIR (default ./build) must hold remvirtd and
# bench/daemon-cpu.  Daemons and guests go at exit.
set -euo pipefail

builddir=./build
cpu=
calls=20000
rounds=5
use_libvirt=yes
use_qemu=yes
callgrind=
outdir=./profile
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --cpu) cpu=${2:?--cpu needs a CPU number}; shift 2 ;;
    --calls) calls=${2:?--calls needs a number}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --no-libvirt) use_libvirt=; shift ;;
    --no-qemu) use_qemu=; shift ;;
    --callgrind) callgrind=yes; shift ;;
    --outdir) outdir=${2:?--outdir needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-daemon-cpu: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$builddir/bench/daemon-cpu" ] ||
    { echo "run-daemon-cpu: $builddir/bench/daemon-cpu not found: build it first" >&2; exit 1; }
source "$(dirname "$0")/bench-env.sh"
[ -n "$cpu" ] || cpu=$(taskset -pc $$ | sed 's/.*[,: -]//')
bench=("$abs_top_builddir/bench/daemon-cpu")

if [ -n "$callgrind" ]; then
    requires valgrind
    requires callgrind_control
    mkdir -p "$outdir"
    out=$(cd "$outdir" && pwd)/callgrind.out
    rm -f "$out" "$out".*
    RV_VALGRIND="valgrind --tool=callgrind --callgrind-out-file=$out" start_remvirtd
    # Counting starts after the warm-up (a tenth of the calls: the
    # connection set up, caches warm) and the profile is written when the
    # calls end.
    taskset -c "$cpu" "${bench[@]}" --calls "$calls" --rounds 1 \
        --before "callgrind_control -z $REMVIRTD_PID >/dev/null" \
        --after "callgrind_control -d $REMVIRTD_PID >/dev/null" \
        "remvirtd-test,$REMVIRTD_URI,$REMVIRTD_PID,test" > /dev/null
    dump=$(ls -t "$out".* | head -n 1)
    mv "$dump" "$out"
    callgrind_annotate --threshold=100 "$out" > "$out.txt"
    total=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$out.txt" | tr -d ,)
    echo "remvirtd, test driver: $((total / calls)) instructions per GetInfo (callgrind, $calls calls)"
    echo "where they go (exclusive, per call):"
    sed -n '/file:function/,$p' "$out.txt" | sed '1,2d' |
        awk -v n="$calls" -v total="$total" '$1 ~ /^[0-9,]+$/ { v = $1; gsub(",", "", v);
            sub(/^.*%\) +/, "");
            if (v > total / 2) next;    # main and what is below it
            if (++shown <= 25) printf "  %6.0f  %s\n", v / n, $0 }'
    exit 0
fi

# Every thread of a daemon onto the CPU; a thread may end while taskset
# walks them (libvirtd's start-up workers), so try again.
pin() {
    local try
    for try in 1 2 3 4 5; do
        taskset -a -pc "$cpu" "$1" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    fail "cannot pin pid $1 to CPU $cpu"
}

targets=()
if [ -n "$use_qemu" ] && qemu-system-x86_64 --version >/dev/null 2>&1; then
    start_remvirtd_qemu
    qemu_domain_xml cpu-guest > "$RV_TMP/cpu-guest.xml"
    virsh -q -c "$QEMU_URI" define "$RV_TMP/cpu-guest.xml" >/dev/null
    virsh -q -c "$QEMU_URI" start cpu-guest >/dev/null
else
    [ -z "$use_qemu" ] || echo "qemu-system-x86_64 is not installed: no QEMU guest"
    use_qemu=
    start_remvirtd
fi
pin "$REMVIRTD_PID"
targets+=("remvirtd-test,$REMVIRTD_URI,$REMVIRTD_PID,test")
[ -z "$use_qemu" ] || targets+=("remvirtd-qemu-guest,$QEMU_URI,$REMVIRTD_PID,cpu-guest")
if [ -n "$use_libvirt" ]; then
    if [ "$(id -u)" = 0 ] && libvirtd --version >/dev/null 2>&1; then
        start_libvirtd
        pin "$LIBVIRTD_PID"
        targets+=("libvirtd-test,$LIBVIRTD_URI,$LIBVIRTD_PID,test")
    else
        echo "no private libvirtd (needs root and libvirtd installed): its rows are skipped"
    fi
fi
echo "daemons and client on CPU $cpu"
for call in info state stats; do
    # GetInfo's row also has the floor: a loop with no work (daemon-cpu.c).
    floor=()
    [ "$call" != info ] || floor=(--floor)
    taskset -c "$cpu" "${bench[@]}" --calls "$calls" --rounds "$rounds" --call "$call" \
        "${floor[@]}" "${targets[@]}"
done
