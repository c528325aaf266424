#!/usr/bin/env bash
# Keepalive on libremvirt's side: with the daemon SIGSTOPped, a call
# returns an error instead of hanging, the close callback says
# keepalive, and later calls on the dead connection fail at once; once
# continued, the daemon notices the client gone and serves new ones.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$EVENT_CLIENT" ] || fail "$EVENT_CLIENT is not built"
[ -x "$RVSH" ] || fail "$RVSH is not built"
OUT=$RV_TMP/out
mkdir -p "$OUT"

start_remvirtd "keepalive_interval = 1" "keepalive_count = 2"
URI=$REMVIRTD_URI

_continue()
{
    kill -CONT "$1" 2>/dev/null
    return 0
}

mkfifo "$RV_TMP/go"
# Read-write, so that neither open waits for the other end.
exec {go_fd}<> "$RV_TMP/go"
bg "$OUT/ds" event_client "$URI" daemon-stop < "$RV_TMP/go"; ds=$BG_PID
wait_for $((10 * RV_SLOW)) "event-client to be ready" has_line "$OUT/ds" ready ||
    { show "$OUT/ds"; fail "event-client daemon-stop did not start"; }
# Registered after stop_remvirtd, so it runs first: a stopped daemon
# cannot take its SIGTERM.
cleanup_fn _continue "$REMVIRTD_PID"
kill -STOP "$REMVIRTD_PID"
echo go >&"$go_fd"
exec {go_fd}>&-
# 1 s x 2 pings: the call has failed long before this.
finish "$ds" || { show "$OUT/ds"; fail "event-client daemon-stop exited $?"; }
kill -CONT "$REMVIRTD_PID"
show "$OUT/ds"
call=$(grep '^get_info: ' "$OUT/ds")
took=$(sed -n 's/^get_info: rc -1 after \([0-9]*\.[0-9]\) s; error 39: .*keepalive.*/\1/p' <<< "$call")
[ -n "$took" ] || fail "the blocked call did not fail with a keepalive error (RPC, 39): $call"
[ "${took%.*}" -lt $((10 * RV_SLOW)) ] || fail "the blocked call took ${took}s to fail"
echo "ok   the call failed after ${took}s instead of hanging: ${call#*error }"
grep -qx 'close callback: reason 2 after [0-9.]* s' "$OUT/ds" ||
    fail "the close callback did not report RV_CONNECT_CLOSE_REASON_KEEPALIVE (2)"
grep -qx 'alive: 0' "$OUT/ds" || fail "rv_connect_is_alive does not say 0 on the dead connection"
grep -qx 'num_of_domains: rc -1 after 0\.[0-9] s; error [1-9][0-9]*' "$OUT/ds" ||
    fail "a call on the dead connection does not fail at once"
echo "ok   close callback reason KEEPALIVE; the dead connection fails later calls at once"

# Continued, the daemon notices the client gone and serves new ones.
[ "$("$RVSH" -q -c "$URI" domstate test)" = running ] || fail "the daemon does not answer after SIGCONT"
remvirtd_alive || fail "remvirtd died"
stop_remvirtd
