#!/usr/bin/env bash
# What hostile clients on the read-only socket make remvirtd hold, under
# the three floods of issue 27, each on a daemon started for it (so its
# peak is that flood's): 32 connections that send PINGs and never read,
# 256 connections x 64 MiB of PINGs, and 100 connections that each send
# 31 MiB of a declared 32 MiB packet and stall.  bench/memory_budget.py
# prints the peak RSS, the RSS with the flood held and after it.
#
#   bench/run-memory-budget.sh [--builddir DIR] [--remvirtd PATH] [--floods 'quiet ping stall']
#                              [--clients N] [--quick] [-- remvirtd.conf lines]
#
# --remvirtd runs another build's daemon (say main's) with this tree's
# flooders, for before and after; --clients replaces each flood's number
# of connections; --quick (for the test suite) floods 4 connections with
# 4 MiB each, once; lines after -- go into its remvirtd.conf.
set -euo pipefail

builddir=./build
floods="quiet ping stall"
daemon=
clients=()
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --remvirtd) daemon=${2:?--remvirtd needs a path}; shift 2 ;;
    --floods) floods=${2:?--floods needs a list}; shift 2 ;;
    --clients) clients=(--clients "${2:?--clients needs a number}"); shift 2 ;;
    --quick) clients=(--clients 4 --bytes 4 --rounds 1 --idle 1); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-memory-budget: unknown option '$1'" >&2; exit 2 ;;
    esac
done
abs_top_builddir=$(cd "$builddir" && pwd)
abs_top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
export abs_top_builddir abs_top_srcdir
if [ -n "$daemon" ]; then
    REMVIRTD=$(cd "$(dirname "$daemon")" && pwd)/$(basename "$daemon")
    export REMVIRTD
fi
source "$abs_top_srcdir/tests/functions.sh"

echo "remvirtd: ${REMVIRTD:-$abs_top_builddir/remvirtd}"
for flood in $floods; do
    # keepalive off: the flooders never asked for it, and the output
    # timeout long enough that no flooder is closed for idling mid-run.
    start_remvirtd 'keepalive_interval = -1' 'client_output_timeout = 120' "$@"
    rawpy "$flood" "$REMVIRTD_SOCK_RO" "$REMVIRTD_PID" "${clients[@]}" \
        < "$abs_top_srcdir/bench/memory_budget.py"
    stop_remvirtd
done
