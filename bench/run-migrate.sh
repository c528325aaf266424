#!/usr/bin/env bash
# Live migration, remvirtd beside libvirtd: two "hosts" in two network
# namespaces (tests/migrate-hosts.sh: A 10.231.0.1, B 10.231.0.2), each
# with a remvirtd and a stock libvirtd; the booted test guest (TCG,
# shared qcow2 disk) g on remvirtd A and lg on libvirtd A.  Each round
# moves each guest A -> B -> A with `virsh migrate --live` (managed
# direct; libvirtd needs --unsafe for the directory disk and the
# --migrateuri address), the two daemons in turn; prints each leg's
# wall seconds and, for A -> B, A's "Total downtime" (ms), then min/median/max
# of each and of the ratios remvirtd/libvirtd pair by pair.
#
#   bench/run-migrate.sh [--builddir DIR] [--rounds N] [-- COMMAND ...]
#
# With a COMMAND, that runs instead of the rounds, with RV_A, RV_B, LV_A,
# LV_B exported (the four URIs) and both guests up on A: to time whole
# round trips with another harness, e.g.
#   sh -c 'virsh -q -c $RV_A migrate --live g $RV_B &&
#          virsh -q -c $RV_B migrate --live g $RV_A'
# Figures, not verdicts: the exit status is 0 when every run ran.
set -euo pipefail

builddir=./build
rounds=5
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-migrate: unknown option '$1'" >&2; exit 2 ;;
    esac
done
abs_top_builddir=$(cd "$builddir" && pwd)
export abs_top_builddir
# (a network namespace of its own: the re-run keeps the options)
rv_netns_guest=1
source "$(dirname "$0")/../tests/netns.sh" --builddir "$builddir" --rounds "$rounds" ${1:+--} "$@"
source "$(dirname "$0")/bench-env.sh"
source "$abs_top_srcdir/tests/migrate-hosts.sh"
if why=$(libvirtd_qemu_why_not); then
    echo "run-migrate: no libvirtd to compare with: $why" >&2
    exit 2
fi
migrate_pair_up
start_libvirtd_pair
shared_guest_xml lg
agent_guest_up "$A" g "$OUT/g.xml"
agent_guest_up "$LA" lg "$OUT/lg.xml"

if [ $# -gt 0 ]; then
    RV_A=$A RV_B=$B LV_A=$LA LV_B=$LB "$@"
    exit 0
fi

# leg FROM TO GUEST [ARGS]: "SECONDS DOWNTIME_MS" of one migration.
leg()
{
    local from=$1 to=$2 g=$3 start end down
    shift 3
    start=$(date +%s.%N)
    virsh -q -c "$from" migrate --live "$g" "$to" "$@" > "$OUT/leg" 2>&1 || { show "$OUT/leg"; fail "virsh migrate $g $from -> $to"; }
    end=$(date +%s.%N)
    down=$(virsh -q -c "$from" domjobinfo --completed "$g" 2> /dev/null | sed -n 's/^Total downtime: *\([0-9]*\).*/\1/p')
    echo "$(awk "BEGIN { print $end - $start }") ${down:-0}"
}
rv=() lv=()
for ((i = 1; i <= rounds; i++)); do
    lv+=("$(leg "$LA" "$LB" lg --unsafe --migrateuri tcp://10.231.0.2)")
    lv+=("$(leg "$LB" "$LA" lg --unsafe --migrateuri tcp://10.231.0.1)")
    rv+=("$(leg "$A" "$B" g)")
    rv+=("$(leg "$B" "$A" g)")
    echo "round $i: libvirtd ${lv[-2]} / ${lv[-1]}, remvirtd ${rv[-2]} / ${rv[-1]} (s ms, there / back)"
done
"$SYSTEM_PYTHON3" - "${lv[*]}" "${rv[*]}" <<'PY'
import statistics
import sys
def legs(s):
    v = [float(x) for x in s.split()]
    # (a downtime is read on the source after the leg: only the outward
    # leg's, as the guest is transient on B and gone from it after)
    return v[0::2], v[1::2][0::2]
lv_s, lv_d = legs(sys.argv[1])
rv_s, rv_d = legs(sys.argv[2])
def row(what, v, unit):
    print(f"{what}: min {min(v):.3f} median {statistics.median(v):.3f} max {max(v):.3f} {unit}")
row("libvirtd virsh migrate", lv_s, "s")
row("remvirtd virsh migrate", rv_s, "s")
row("remvirtd/libvirtd virsh migrate", [r / l for r, l in zip(rv_s, lv_s)], "")
row("libvirtd Total downtime", lv_d, "ms")
row("remvirtd Total downtime", rv_d, "ms")
PY
