#!/usr/bin/env bash
# bench/define-load against private remvirtds, side by side in one run:
# GetInfo latency on the test driver, idle and while clients define QEMU
# domains in a loop (each define an fsync'd file).  With --old REMVIRTD
# (e.g. a build from before the definition writes left the loop), that
# binary first, then this build's.  The QEMU config dir is on the disk
# under --state-dir (default: the test's temp dir), where fsync costs.
#
#   bench/run-define-load.sh [--builddir DIR] [--old REMVIRTD] [--quick]
#                            [-- DEFINE-LOAD-OPTIONS...]
set -euo pipefail

builddir=./build
old=
calls=()
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --old) old=${2:?--old needs a remvirtd binary}; shift 2 ;;
    --quick) calls=(--calls 2000); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-define-load: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$builddir/bench/define-load" ] ||
    { echo "run-define-load: $builddir/bench/define-load not found: build it first" >&2; exit 1; }
abs_top_builddir=$(cd "$builddir" && pwd)
abs_top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
export abs_top_builddir abs_top_srcdir
new=$abs_top_builddir/remvirtd
source "$abs_top_srcdir/tests/functions.sh"

run_one()
{
    REMVIRTD=$2
    echo "== $1 ($2)"
    start_remvirtd_qemu
    "$abs_top_builddir/bench/define-load" --test-uri "$REMVIRTD_URI" --qemu-uri "$QEMU_URI" \
        "${calls[@]}" "${@:3}"
    stop_remvirtd
    rm -rf "$QEMU_DIR"
}
if [ -n "$old" ]; then
    run_one old "$old" "$@"
fi
run_one new "$new" "$@"
