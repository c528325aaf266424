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
