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
# Then the same against libvirtd's own QEMU driver (its test driver for
# the GetInfo loop), side by side, when it can run here (as root, with a
# private mount namespace: tests/functions.sh's start_libvirtd_qemu);
# otherwise the reason is printed.  --no-libvirtd: remvirtd only.
# --stalls MS: remvirtd runs with RV_LOOP_STALL_MS=MS (its loop stall
# detector) and the stalls it logged are printed after its figures.
set -euo pipefail

builddir=./build
calls=()
no_libvirtd=
stalls=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --builddir=*) builddir=${1#*=}; shift ;;
    --quick) calls=(--calls 1000); shift ;;
    --no-libvirtd) no_libvirtd=1; shift ;;
    --stalls) stalls=${2:?--stalls needs a number of milliseconds}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-qemu-load: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$builddir/bench/qemu-load" ] ||
    { echo "run-qemu-load: $builddir/bench/qemu-load not found: build it first" >&2; exit 1; }
source "$(dirname "$0")/bench-env.sh"

[ -z "$stalls" ] || export RV_LOOP_STALL_MS=$stalls
start_remvirtd_qemu
unset RV_LOOP_STALL_MS
for i in $(seq 1 10); do
    qemu_domain_xml "bench-q$i" > "$RV_TMP/q$i.xml"
    "$RVSH" -q -c "$QEMU_URI" define "$RV_TMP/q$i.xml" > /dev/null
done
echo "== remvirtd"
"$abs_top_builddir/bench/qemu-load" --test-uri "$REMVIRTD_URI" --qemu-uri "$QEMU_URI" \
    "${calls[@]}" "$@"
if [ -n "$stalls" ]; then
    echo "== remvirtd's loop passes over $stalls ms"
    grep -F 'loop stall:' "$REMVIRTD_LOG" | sed 's/^.*loop stall: //' || echo "none"
fi
stop_remvirtd

# libvirtd's QEMU driver, the same guests and the same loads.
why_not=
if [ -n "$no_libvirtd" ]; then
    why_not="--no-libvirtd"
elif [ "$(id -u)" -ne 0 ]; then
    why_not="needs root"
elif [ ! -e /usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so ]; then
    why_not="libvirt-daemon-driver-qemu is not installed"
elif ! unshare --mount --propagation private true 2>/dev/null; then
    why_not="no private mount namespace (unshare --mount)"
fi
if [ -n "$why_not" ]; then
    echo "== libvirtd: not measured ($why_not)"
    exit 0
fi
start_libvirtd_qemu
for i in $(seq 1 10); do
    "$RVSH" -q -c "$LIBVIRTD_QEMU_URI" define "$RV_TMP/q$i.xml" > /dev/null
done
echo "== libvirtd $(libvirtd --version | awk '{ print $NF }') (QEMU driver; GetInfo on its test driver)"
"$abs_top_builddir/bench/qemu-load" --test-uri "test+unix:///default?socket=$LIBVIRTD_SOCK" \
    --qemu-uri "$LIBVIRTD_QEMU_URI" "${calls[@]}" "$@"
