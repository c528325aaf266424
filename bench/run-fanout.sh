#!/usr/bin/env bash
# Event fan-out against a private remvirtd and a private libvirtd, side by
# side in one run (bench/fanout; see its header for the method).
#
#   bench/run-fanout.sh [--builddir DIR] [--quick] [--no-libvirt | --libvirt-sock PATH]
#                       [--placement unpinned|split|both] [-- FANOUT-OPTIONS...]
#
# Builds nothing: DIR (default ./build) must hold remvirtd and bench/fanout.
# The daemons and their temp files come from the test suite's
# tests/functions.sh; whatever the script starts it stops at exit.  A
# private libvirtd needs root and libvirtd installed; without them, or with
# --no-libvirt, only remvirtd is measured.  --libvirt-sock measures a
# libvirtd that already runs instead (the domain 'test' of its test driver
# gets suspended and resumed).
#
# For N = 10, 100 and 1000 subscribers it prints, per server, the
# microseconds from a suspend or resume until the first and the last
# subscriber has the lifecycle event (median and p90 of 50 interleaved
# rounds), with libvirtd/remvirtd ratios, once through libremvirt's event
# loop and once through a minimal raw-socket client.  It does so in two
# placements: unpinned (wherever the scheduler runs daemons and client)
# and split (both daemons on CPU 0, the client on CPU 1, as if on machines
# of their own; needs two CPUs and daemons this script started).  Under
# a minute in all.  --quick is the smoke run the test suite uses
# (unpinned, N = 10, 3 rounds).
# Options after -- go to bench/fanout (--clients N,N,..., --rounds N,
# --client lib|raw|both).  Exit status: 0 when every subscriber got every
# event, whatever the timings.
set -euo pipefail

builddir=./build
quick=
use_libvirt=yes
libvirt_sock=
placement=both
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --builddir=*) builddir=${1#*=}; shift ;;
    --quick) quick=--quick; shift ;;
    --no-libvirt) use_libvirt=; shift ;;
    --libvirt-sock) libvirt_sock=${2:?--libvirt-sock needs a path}; shift 2 ;;
    --libvirt-sock=*) libvirt_sock=${1#*=}; shift ;;
    --placement) placement=${2:?--placement needs unpinned, split or both}; shift 2 ;;
    --placement=*) placement=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-fanout: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$builddir/bench/fanout" ] ||
    { echo "run-fanout: $builddir/bench/fanout not found: build it first" >&2; exit 1; }
case $placement in
unpinned|split|both) ;;
*) echo "run-fanout: --placement is unpinned, split or both, not '$placement'" >&2; exit 2 ;;
esac
[ -z "$quick" ] || placement=unpinned
if [ -n "$libvirt_sock" ] && [ -z "$use_libvirt" ]; then
    echo "run-fanout: --libvirt-sock and --no-libvirt contradict each other" >&2
    exit 2
fi
source "$(dirname "$0")/bench-env.sh"

# Each subscriber is a socket in bench/fanout and in the daemon it talks
# to (up to 10,000 per server with --clients 10000); the daemons inherit
# this limit.
want_files=32768
# root may raise the hard limit too.
ulimit -Hn "$want_files" 2>/dev/null || true
hard_files=$(ulimit -Hn)
if [ "$hard_files" != unlimited ] && [ "$hard_files" -lt "$want_files" ]; then
    want_files=$hard_files
fi
[ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -ge "$want_files" ] || ulimit -n "$want_files"

start_remvirtd 'max_clients = 20000'
daemons=("$REMVIRTD_PID")
args=(--remvirt-sock "$REMVIRTD_SOCK")
if [ -n "$libvirt_sock" ]; then
    [ -S "$libvirt_sock" ] || fail "--libvirt-sock $libvirt_sock is not a socket"
    args+=(--libvirt-sock "$libvirt_sock")
    daemons=()      # not ours to pin
elif [ -n "$use_libvirt" ]; then
    if [ "$(id -u)" = 0 ] && libvirtd --version >/dev/null 2>&1; then
        start_libvirtd 'max_clients = 20000'
        args+=(--libvirt-sock "$LIBVIRTD_SOCK")
        daemons+=("$LIBVIRTD_PID")
    else
        echo "no private libvirtd (needs root and libvirtd installed):" \
             "the libvirtd columns are skipped"
    fi
fi
fanout=$abs_top_builddir/bench/fanout

if [ "$placement" != split ]; then
    echo "== unpinned: the scheduler places the daemons and the client"
    "$fanout" "${args[@]}" ${quick:+"$quick"} "$@"
fi
if [ "$placement" != unpinned ]; then
    if [ "$(nproc)" -lt 2 ]; then
        echo "== split skipped: it needs two CPUs"
    elif [ ${#daemons[@]} -eq 0 ]; then
        echo "== split skipped: only daemons this script started are pinned"
    else
        # -a: every thread, and the threads libvirtd starts later inherit it.
        for pid in "${daemons[@]}"; do
            taskset -a -p -c 0 "$pid" >/dev/null || fail "cannot pin pid $pid to CPU 0"
        done
        echo
        echo "== split: the daemons on CPU 0, the client on CPU 1"
        taskset -c 1 "$fanout" "${args[@]}" "$@"
    fi
fi
