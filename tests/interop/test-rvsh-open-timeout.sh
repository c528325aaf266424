#!/usr/bin/env bash
# Opening a connection to a daemon that is stopped (SIGSTOP: its socket
# still accepts, nothing answers) gives up with a clear error instead of
# hanging: after 30 s by default, after REMVIRT_OPEN_TIMEOUT seconds when
# that is set.  Once the daemon goes on, the same command works.
# (`timeout` only catches a hang here; the figures are not timed.)
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$RVSH" ] || fail "$RVSH is not built"
start_remvirtd
_cont() { kill -CONT "$1" 2>/dev/null || true; }
kill -STOP "$REMVIRTD_PID"
cleanup_fn _cont "$REMVIRTD_PID"

rc=0
REMVIRT_OPEN_TIMEOUT=2 timeout 60 "$RVSH" -c "$REMVIRTD_URI" list --all > "$RV_TMP/out" 2>&1 || rc=$?
[ "$rc" != 124 ] || fail "rvsh hung against a stopped daemon (REMVIRT_OPEN_TIMEOUT=2)"
[ "$rc" != 0 ] || fail "rvsh succeeded against a stopped daemon: $(cat "$RV_TMP/out")"
grep -q "failed to connect" "$RV_TMP/out" && grep -q "no answer within 2 s" "$RV_TMP/out" ||
    fail "rvsh said: $(cat "$RV_TMP/out")"
echo "ok   REMVIRT_OPEN_TIMEOUT=2: rvsh gives up: $(tail -1 "$RV_TMP/out")"

rc=0
timeout 120 "$RVSH" -c "$REMVIRTD_URI" list --all > "$RV_TMP/out" 2>&1 || rc=$?
[ "$rc" != 124 ] || fail "one-shot rvsh hung against a stopped daemon"
grep -q "no answer within 30 s" "$RV_TMP/out" || fail "rvsh said: $(cat "$RV_TMP/out")"
echo "ok   by default: rvsh gives up after 30 s"

kill -CONT "$REMVIRTD_PID"
REMVIRT_OPEN_TIMEOUT=2 "$RVSH" -c "$REMVIRTD_URI" list --all > "$RV_TMP/out" 2>&1 ||
    fail "rvsh failed against the daemon going on: $(cat "$RV_TMP/out")"
grep -q " test " "$RV_TMP/out" || fail "rvsh list: $(cat "$RV_TMP/out")"
echo "ok   the daemon going on: rvsh works"
