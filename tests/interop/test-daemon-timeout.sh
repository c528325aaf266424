#!/usr/bin/env bash
# virt-admin daemon-timeout (CONNECT_SET_DAEMON_TIMEOUT) against remvirtd:
# a connected client keeps it up, the last one leaving starts the wait, and
# it then exits cleanly (status 0, sockets removed); 0 turns the timeout
# off again.  rvadm daemon-timeout prints what virt-admin prints.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virt-admin
requires "$PYTHON3" --version
RVADM=$top_builddir/rvadm
[ -x "$RVADM" ] || fail "$RVADM is not built"

hold='import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
sys.stdin.read()'

# 1. A held client keeps remvirtd up past the timeout; its leaving ends it.
start_remvirtd
mkfifo "$RV_TMP/release"
bg "$RV_TMP/held" "$PYTHON3" -c "$hold" "$REMVIRTD_SOCK_RO" < <(cat "$RV_TMP/release")
holder=$BG_PID
wait_for "$RV_TIMEOUT" "the held client" grep -qs connected "$RV_TMP/held"
va=$(virt-admin -c "$REMVIRTD_ADMIN_URI" daemon-timeout --timeout 1 2>&1) ||
    fail "virt-admin daemon-timeout failed: $va"
echo "ok   virt-admin daemon-timeout --timeout 1 accepted"
sleep 2.5
remvirtd_alive || fail "remvirtd exited while a client was connected"
echo "ok   a connected client keeps remvirtd up past the timeout"
echo > "$RV_TMP/release"
wait "$holder" 2>/dev/null || true
pid=$REMVIRTD_PID
wait_for $((RV_TIMEOUT * 2)) "remvirtd to exit once idle" _rv_gone "$pid" ||
    fail "remvirtd did not exit after the last client left"
stop_remvirtd || fail "the idle exit was not clean"
echo "ok   the last client leaving starts the timeout; remvirtd exits cleanly"

# 2. rvadm sets it too, with virt-admin's output; 0 turns it off.
start_remvirtd
rv=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" daemon-timeout 1 2>&1) || fail "rvadm daemon-timeout: $rv"
va=$(virt-admin -c "$REMVIRTD_ADMIN_URI" daemon-timeout --timeout 0 2>&1) || fail "virt-admin: $va"
[ "$rv" = "$va" ] || fail "rvadm printed '$rv', virt-admin '$va'"
sleep 2.5
remvirtd_alive || fail "remvirtd exited after daemon-timeout 0"
echo "ok   daemon-timeout 0 keeps remvirtd running; rvadm prints what virt-admin prints"

# 3. Bad values are refused by the tools, clearly.
if out=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" daemon-timeout soon 2>&1); then
    fail "rvadm accepted a timeout of 'soon'"
fi
grep -q "timeout 'soon' is not a number" <<<"$out" || fail "rvadm's error: $out"
if out=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" daemon-timeout 4294967296 2>&1); then
    fail "rvadm accepted a timeout over 32 bits"
fi
grep -q "out of range" <<<"$out" || fail "rvadm's error: $out"
remvirtd_alive || fail "remvirtd died"
echo "ok   bad timeouts get clear errors"
