#!/usr/bin/env bash
# The loop's worst pass under load: a private remvirtd (QEMU driver) with
# the loop stall detector on (RV_LOOP_STALL_MS, server/loop_stall.c: every
# pass of the loop through its callbacks longer than MS of wall time is
# logged with the loop thread's CPU time in it), a fresh one for each of
# three loads (bench/loop-stall-load.py, through python3-libvirt):
#   churn    10 threads each defining, starting, destroying and undefining
#            a TCG guest of its own, over and over;
#   storms   a thread per family (domain, network, pool, volume, secret,
#            nwfilter, snapshot) defining and undefining, over and over;
#   uploads  2 threads each uploading 16 MiB into a volume, over and over;
#   tls      4 threads each connecting over TLS (certtool-made certificates,
#            the client's verified), asking the host name and closing,
#            over and over.
# For each: what the load did, how many passes took MS or more of wall
# time, the worst of them by wall time and by the loop's own CPU time,
# and how many spent MS or more on the CPU (the loop's own work: a long
# pass with little CPU is the machine taking the CPU away).  Passes from
# the daemon's start-up are left out.
#
# The whole suite is the fourth run: tests/functions.sh appends the
# detector's lines of every daemon a test started to the file named by
# RV_STALL_LOG, each line after the test's name, so
#     RV_LOOP_STALL_MS=1 RV_STALL_LOG=/tmp/stalls tests/check.sh --no-deps
# and then --suite-log /tmp/stalls prints the same figures for it.
#
#   bench/run-loop-stalls.sh [--builddir DIR] [--seconds S] [--ms MS]
#                            [--only churn|storms|uploads|tls] [--suite-log FILE]
#
# Figures, not verdicts: the exit status is 0 when every load ran.
set -euo pipefail

builddir=./build
seconds=20
ms=1
only=
suite_log=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --ms) ms=${2:?--ms needs a number}; shift 2 ;;
    --only) only=${2:?--only needs a load}; shift 2 ;;
    --suite-log) suite_log=${2:?--suite-log needs a file}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-loop-stalls: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
load=("$SYSTEM_PYTHON3" "$abs_top_srcdir/bench/loop-stall-load.py")

# summary LABEL [suite]: the detector's lines on stdin, each "... loop
# stall: W ms ... (pass N): C ms on the CPU, ..." (with suite: after the
# test's name and a colon).
summary()
{
    awk -v label="$1" -v ms="$ms" -v suite="${2:-}" '
        match($0, /loop stall: [0-9.]+ ms/) {
            wall = substr($0, RSTART + 12, RLENGTH - 15) + 0
            if (!match($0, /: [0-9.]+ ms on the CPU/)) next
            cpu = substr($0, RSTART + 2, RLENGTH - 16) + 0
            who = $0; sub(/: .*/, "", who)
            n++
            if (wall > wmax) { wmax = wall; wcpu = cpu }
            if (cpu > cmax || n == 1) { cmax = cpu; cwall = wall; cwho = who }
            if (cpu >= ms) over++
        }
        END {
            if (!n) { printf "  %-8s no pass of %s ms or more\n", label, ms; exit }
            printf "  %-8s %d passes of %s ms or more; the longest %.1f ms (%.1f on the CPU); the most CPU %.1f ms (%.1f ms long)%s; %d with %s ms or more of CPU\n",
                label, n, ms, wmax, wcpu, cmax, cwall, suite ? " in " cwho : "", over + 0, ms
        }'
}

one()
{
    local name=$1 from
    shift
    RV_LOOP_STALL_MS=$ms start_remvirtd_qemu ${daemon_conf[@]+"${daemon_conf[@]}"}
    mkdir -p "$RV_TMP/$name"
    sleep 1     # the start-up's passes (the driver's first scan) are not the load's
    from=$(($(wc -l < "$REMVIRTD_LOG") + 1))
    "${load[@]}" "$QEMU_URI" "$@" --seconds "$seconds" --dir "$RV_TMP/$name" || status=1
    tail -n +"$from" "$REMVIRTD_LOG" | summary "$name"
    stop_remvirtd
    rm -rf "${QEMU_DIR:?}" "${RV_TMP:?}/$name"
}

status=0
daemon_conf=()
echo "loop passes of $ms ms or more (wall), $seconds s of each load; load average $(cut -d' ' -f1-3 /proc/loadavg)"
case $only in ''|churn) one churn churn ;; esac
case $only in ''|storms) one storms storm ;; esac
case $only in ''|uploads) one uploads upload ;; esac
case $only in
''|tls)
    if command -v certtool > /dev/null; then
        make_pki "$RV_TMP/pki"
        port=$(free_port)
        daemon_conf=('listen_tls = 1' "tls_port = \"$port\"" 'max_anonymous_clients = 64'
                     "ca_file = \"$RV_TMP/pki/server/cacert.pem\""
                     "cert_file = \"$RV_TMP/pki/server/servercert.pem\""
                     "key_file = \"$RV_TMP/pki/server/serverkey.pem\"")
        kind=session
        [ "$(id -u)" -ne 0 ] || kind=system
        one tls tls --tls-uri "qemu+tls://localhost:$port/$kind?pkipath=$RV_TMP/pki/client"
        daemon_conf=()
    else
        echo "  tls      skipped: no certtool"
    fi ;;
esac
if [ -n "$suite_log" ]; then
    echo "suite: $(cut -d: -f1 "$suite_log" | sort -u | wc -l) tests logged passes"
    summary suite suite < "$suite_log"
fi
exit "$status"
