#!/bin/sh
# Where remvirtd spends a GetInfo call: `perf record -g` on a private
# remvirtd while bench/getinfo drives it, then a flame graph.
#
#   bench/run-profile.sh [--builddir DIR] [--outdir DIR] [--calls N]
#
# Writes to --outdir (default ./profile): perf.data, report.txt (perf
# report --stdio, the hottest call chains) and, when Debian's flamegraph
# package is installed (stackcollapse-perf and flamegraph), remvirtd.svg.
# Frame pointers are always on in remvirt's build, so perf walks whole
# stacks (--call-graph fp).  Says plainly and exits 0 when perf cannot
# record here (not installed, or perf_event_open refused: a container, a
# VM without a PMU, kernel.perf_event_paranoid) or when flamegraph is
# missing; exits 1 only when the benchmark itself fails.
set -eu

builddir=./build
outdir=./profile
calls=20000

usage() {
    sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --outdir) outdir=${2:?--outdir needs a directory}; shift 2 ;;
    --calls) calls=${2:?--calls needs a number}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-profile: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

fail() { echo "run-profile: $*" >&2; exit 1; }

getinfo=$builddir/bench/getinfo
remvirtd=$builddir/remvirtd
[ -x "$getinfo" ] || fail "$getinfo not found: build it first"
[ -x "$remvirtd" ] || fail "$remvirtd not found: build it first"
mkdir -p "$outdir"

if ! command -v perf > /dev/null; then
    echo "run-profile: perf is not installed (Debian package linux-perf): no profile"
    exit 0
fi
if ! perf record -q -g -o "$outdir/probe.data" -- true > "$outdir/probe.err" 2>&1; then
    echo "run-profile: perf record is not supported here: $(head -n 3 "$outdir/probe.err" | tr '\n' ' ')"
    rm -f "$outdir/probe.data" "$outdir/probe.err"
    exit 0
fi
rm -f "$outdir/probe.data" "$outdir/probe.err"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-bench-profile.XXXXXX")
perf_pid=
daemon_pid=
stop() {
    kill -"$2" "$1" 2>/dev/null || return 0
    for _ in $(seq 100); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    [ -z "$perf_pid" ] || stop "$perf_pid" INT
    [ -z "$daemon_pid" ] || stop "$daemon_pid" TERM
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat > "$tmp/remvirtd.conf" <<EOF
unix_sock_dir = "$tmp"
EOF
"$remvirtd" -f "$tmp/remvirtd.conf" --pidfile "$tmp/pid" > "$tmp/stderr" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
    [ -S "$tmp/remvirt-sock" ] && break
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/stderr" >&2; fail "remvirtd exited"; }
    sleep 0.1
done

perf record -q --call-graph fp -F 2000 -p "$daemon_pid" -o "$outdir/perf.data" \
    > "$tmp/perf.out" 2>&1 &
perf_pid=$!
sleep 0.5
"$getinfo" --remvirt-sock "$tmp/remvirt-sock" --calls "$calls" --rounds 1 > "$outdir/getinfo.txt" 2>&1 ||
    { cat "$outdir/getinfo.txt" >&2; fail "getinfo failed"; }
stop "$perf_pid" INT
perf_pid=

perf report -q --stdio --no-children -i "$outdir/perf.data" --percent-limit 1 \
    > "$outdir/report.txt" 2> /dev/null || fail "perf report failed"
echo "run-profile: remvirtd recorded while GetInfo ran ($calls calls per domain): $outdir/perf.data"
echo "run-profile: the hottest functions: $outdir/report.txt"
sed -n '1,12p' "$outdir/report.txt" | grep -v '^$' | head -n 8

collapse=$(command -v stackcollapse-perf || command -v stackcollapse-perf.pl || true)
flame=$(command -v flamegraph || command -v flamegraph.pl || true)
if [ -z "$collapse" ] || [ -z "$flame" ]; then
    echo "run-profile: no flame graph: stackcollapse-perf and flamegraph (Debian package flamegraph) are not installed"
    exit 0
fi
perf script -i "$outdir/perf.data" 2> /dev/null | "$collapse" | "$flame" --title "remvirtd: GetInfo" \
    > "$outdir/remvirtd.svg" || fail "rendering the flame graph failed"
echo "run-profile: flame graph: $outdir/remvirtd.svg"
