#!/usr/bin/env bash
# bench/qemu-load against a private remvirtd (see bench/qemu-load.c's
# header): GetInfo latency on the test driver, idle and while 10 clients
# start and destroy QEMU guests, side by side in one run; and the time to
# start 10 guests one after the other and all at once.
#
#   bench/run-qemu-load.sh [--builddir DIR] [--quick] [-- QEMU-LOAD-OPTIONS...]
#
# Builds nothing: DIR (default ./build) must hold remvirtd and
# bench/qemu-load.  The daemon, its QEMU directories and every QEMU come
# from tests/functions.sh's helpers and go at exit.  --quick: 1000 calls.
# libvirtd's QEMU driver is not measured side by side yet.
set -euo pipefail

builddir=./build
calls=()
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --builddir=*) builddir=${1#*=}; shift ;;
    --quick) calls=(--calls 1000); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-qemu-load: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$builddir/bench/qemu-load" ] ||
    { echo "run-qemu-load: $builddir/bench/qemu-load not found: build it first" >&2; exit 1; }
abs_top_builddir=$(cd "$builddir" && pwd)
abs_top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
export abs_top_builddir abs_top_srcdir
source "$abs_top_srcdir/tests/functions.sh"

start_remvirtd_qemu
for i in $(seq 1 10); do
    qemu_domain_xml "bench-q$i" > "$RV_TMP/q$i.xml"
    "$RVSH" -q -c "$QEMU_URI" define "$RV_TMP/q$i.xml" > /dev/null
done
"$abs_top_builddir/bench/qemu-load" --test-uri "$REMVIRTD_URI" --qemu-uri "$QEMU_URI" \
    "${calls[@]}" "$@"
