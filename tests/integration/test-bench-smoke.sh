#!/usr/bin/env bash
# The benchmarks still run: --quick makes 1,000 calls each way and
# judges no timings (speed is judged by the full benchmark, never by a
# test).  It fails only if a call, a connection or the set-up fails.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$top_builddir/bench/getinfo" ] || fail "bench/getinfo is not built"
out=$RV_TMP/bench.out
bash "$abs_top_srcdir/bench/run-getinfo.sh" --builddir "$top_builddir" --quick --no-libvirt \
    > "$out" 2>&1 || { cat "$out"; fail "the benchmark's quick run failed"; }
cat "$out"
grep -q "^pinned" "$out" || fail "the benchmark printed no results"

# The transports benchmark: a quick GetInfo over Unix, TCP, TLS (and SSH
# where sshd can run).
[ -x "$top_builddir/bench/transports" ] || fail "bench/transports is not built"
bash "$abs_top_srcdir/bench/run-transports.sh" --builddir "$top_builddir" --quick \
    > "$out" 2>&1 || { cat "$out"; fail "the transports benchmark's quick run failed"; }
cat "$out"
for t in unix tcp tls; do
    grep -q "^$t " "$out" || fail "the transports benchmark printed no $t row"
done

# The fan-out benchmark: 10 subscribers, 3 rounds, through libremvirt and
# through its raw client (and libvirtd too where one can be started).
# Every subscriber must get every event, or it fails.
[ -x "$top_builddir/bench/fanout" ] || fail "bench/fanout is not built"
bash "$abs_top_srcdir/bench/run-fanout.sh" --builddir "$top_builddir" --quick \
    > "$out" 2>&1 || { cat "$out"; fail "the fan-out benchmark's quick run failed"; }
cat "$out"
for client in libremvirt raw; do
    grep -q "^$client  *10 |" "$out" || fail "the fan-out benchmark printed no $client row"
done

# The scale benchmarks: throughput with calls in flight and connection
# churn (1,000 cycles), against remvirtd and libvirtd where one can run.
for prog in throughput churn; do
    [ -x "$top_builddir/bench/$prog" ] || fail "bench/$prog is not built"
done
bash "$abs_top_srcdir/bench/run-scale.sh" --builddir "$top_builddir" --quick \
    > "$out" 2>&1 || { cat "$out"; fail "the scale benchmarks' quick run failed"; }
cat "$out"
grep -q "remvirtd, raw pipelined client" "$out" || fail "the throughput benchmark printed no rows"
grep -q "threads' wakeup floor (no socket) *[1-9][0-9]*/s" "$out" ||
    fail "the throughput benchmark printed no wakeup floor"
grep -q "^  remvirtd  *[0-9]" "$out" || fail "the churn benchmark printed no remvirtd row"

# The daemon's CPU per call with libvirt's client, and the floor under it
# (a loop with no work), against remvirtd's test driver only.
if ldconfig -p | grep -q 'libvirt\.so\.0 '; then
    bash "$abs_top_srcdir/bench/run-daemon-cpu.sh" --builddir "$top_builddir" --no-qemu \
        --no-libvirt --calls 200 --rounds 1 > "$out" 2>&1 ||
        { cat "$out"; fail "the daemon-cpu benchmark failed"; }
    cat "$out"
    grep -q "^  remvirtd-test  *[0-9.]* /" "$out" || fail "the daemon-cpu benchmark printed no remvirtd row"
    grep -q "^  floor (empty loop) *[0-9.]* /" "$out" ||
        fail "the daemon-cpu benchmark printed no floor"
fi

# Idle clients: 200 of them, against remvirtd only (libvirtd takes long
# to accept many).
bash "$abs_top_srcdir/bench/run-idle-clients.sh" --builddir "$top_builddir" --no-libvirt \
    -- --clients 200 --calls 200 > "$out" 2>&1 || { cat "$out"; fail "the idle-clients benchmark failed"; }
cat "$out"
grep -q "^remvirtd  *200 " "$out" || fail "the idle-clients benchmark printed no remvirtd row"

# The memory-budget benchmark: its three floods, small, against remvirtd.
bash "$abs_top_srcdir/bench/run-memory-budget.sh" --builddir "$top_builddir" --quick \
    > "$out" 2>&1 || { cat "$out"; fail "the memory-budget benchmark's quick run failed"; }
cat "$out"
for flood in quiet ping stall; do
    grep -q "^$flood  *4 clients .* peak .* after close" "$out" ||
        fail "the memory-budget benchmark printed no $flood row"
done

# The event-loop benchmark: 500 pipes, a few iterations each way; every
# callback must run, or it fails.
[ -x "$top_builddir/bench/eventloop" ] || fail "bench/eventloop is not built"
"$top_builddir/bench/eventloop" --iterations 50 --rounds 1 > "$out" 2>&1 ||
    { cat "$out"; fail "the event-loop benchmark's quick run failed"; }
cat "$out"
for way in libev remvirtd libremvirt; do
    grep -q "^$way  *[0-9]" "$out" || fail "the event-loop benchmark printed no $way row"
done

# The logging benchmark: GetInfo against remvirtd with debug compiled out,
# filtered out, to a file and to a stand-in journal.
bash "$abs_top_srcdir/bench/run-logging.sh" --builddir "$top_builddir" --quick \
    > "$out" 2>&1 || { cat "$out"; fail "the logging benchmark's quick run failed"; }
cat "$out"
for way in compiled-out filtered-out debug-file debug-journal; do
    grep -q "^$way  *[0-9]" "$out" || fail "the logging benchmark printed no $way row"
done

# The loop stall benchmarks (python3-libvirt): each load for 2 s, and the
# slow disk (as root, with the blkio throttle) with one short round.
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null && qemu-system-x86_64 --version >/dev/null 2>&1; then
    bash "$abs_top_srcdir/bench/run-loop-stalls.sh" --builddir "$top_builddir" --seconds 2 \
        > "$out" 2>&1 || { cat "$out"; fail "the loop stall benchmark failed"; }
    cat "$out"
    for load in churn storms uploads; do
        grep -q "^  $load  " "$out" || fail "the loop stall benchmark printed no $load row"
    done
    if [ "$(id -u)" = 0 ] && [ -e /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device ] &&
       command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null; then
        bash "$abs_top_srcdir/bench/run-slow-disk.sh" --builddir "$top_builddir" --rounds 1 \
            --calls 200 --seconds 1 > "$out" 2>&1 || { cat "$out"; fail "the slow-disk benchmark failed"; }
        cat "$out"
        grep -q "^slow/idle p99, median of 1 rounds: [0-9]" "$out" ||
            fail "the slow-disk benchmark printed no ratio"
    fi
fi
