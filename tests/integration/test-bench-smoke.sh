#!/usr/bin/env bash
# The GetInfo benchmark still runs: --quick makes 1,000 calls each way and
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
