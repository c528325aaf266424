#!/usr/bin/env bash
# The scale benchmarks side by side: a private remvirtd and (as root, with
# libvirtd installed) a private libvirtd, then
#   bench/throughput  GetInfo calls/s with calls in flight: a raw pipelined
#                     floor, remvirtd with a raw pipelined client,
#                     libremvirt's asynchronous calls on one connection and
#                     on four, and libremvirt / libvirt with --threads
#                     threads on one connection and on a connection each;
#   bench/churn       connect-open-GetInfo-close cycles/s by 16 clients, and
#                     the daemons' fds and memory before and after.
# Idle clients and event fan-out have their own runners
# (run-idle-clients.sh, run-fanout.sh -- --clients 10000).
#
#   bench/run-scale.sh [--builddir DIR] [--no-libvirt] [--quick]
#                      [--threads N] [--cycles N]
set -euo pipefail

builddir=./build
use_libvirt=yes
quick=
threads=8
cycles=100000
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --no-libvirt) use_libvirt=; shift ;;
    --quick) quick=yes; cycles=1000; shift ;;
    --threads) threads=${2:?--threads needs a number}; shift 2 ;;
    --cycles) cycles=${2:?--cycles needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-scale: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
for prog in throughput churn; do
    [ -x "$abs_top_builddir/bench/$prog" ] || fail "bench/$prog is not built (make bench/$prog)"
done

start_remvirtd
throughput_args=(--remvirt-sock "$REMVIRTD_SOCK" --threads "$threads")
churn_args=(--remvirt-sock "$REMVIRTD_SOCK" --remvirt-pid "$REMVIRTD_PID" --cycles "$cycles")
if [ -n "$use_libvirt" ]; then
    if [ "$(id -u)" = 0 ] && libvirtd --version >/dev/null 2>&1; then
        start_libvirtd
        throughput_args+=(--libvirt-sock "$LIBVIRTD_SOCK")
        churn_args+=(--libvirt-sock "$LIBVIRTD_SOCK" --libvirt-pid "$LIBVIRTD_PID")
    else
        echo "no private libvirtd (needs root and libvirtd installed): its rows are skipped"
    fi
fi
[ -z "$quick" ] || throughput_args+=(--quick)
"$abs_top_builddir/bench/throughput" "${throughput_args[@]}"
echo
"$abs_top_builddir/bench/churn" "${churn_args[@]}"
