#!/usr/bin/env bash
# rvadm prints what virt-admin prints, command for command, against
# remvirtd's admin socket (the errors apart: virt-admin adds a line of its
# own before the daemon's); bad arguments get a clear error.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virt-admin
requires "$PYTHON3" --version
RVADM=$top_builddir/rvadm
[ -x "$RVADM" ] || fail "$RVADM is not built"
start_remvirtd

hold='import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
while s.recv(4096):
    pass'
bg "$RV_TMP/held" "$PYTHON3" -c "$hold" "$REMVIRTD_SOCK_RO"
wait_for "$RV_TIMEOUT" "the held client" grep -qs connected "$RV_TMP/held"
id=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" client-list libvirtd | awk '$2 == "unix" { print $1 }')
[ -n "$id" ] || fail "rvadm client-list does not show the held client"

same()
{
    local rv va
    rv=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" "$@" 2>&1) || fail "rvadm $* failed: $rv"
    va=$(virt-admin -c "$REMVIRTD_ADMIN_URI" "$@" 2>&1) || fail "virt-admin $* failed: $va"
    if [ "$rv" != "$va" ]; then
        echo "---- rvadm:" >&2; echo "$rv" >&2; echo "---- virt-admin:" >&2; echo "$va" >&2
        fail "rvadm $* differs from virt-admin"
    fi
    echo "ok   rvadm $*: as virt-admin"
}

same srv-list
same srv-threadpool-info libvirtd
same srv-clients-info libvirtd
same client-list libvirtd
same client-info libvirtd "$id"
same srv-clients-set libvirtd --max-clients 100 --max-unauth-clients 10
same srv-clients-info libvirtd
same daemon-log-filters --filters "1:server.admin"
same daemon-log-filters
same daemon-log-outputs --outputs "2:file:$REMVIRTD_LOG"
same daemon-log-outputs
# The other way round: what rvadm sets, virt-admin sees.
"$RVADM" -s "$REMVIRTD_ADMIN_SOCK" daemon-log-filters --filters "" > /dev/null
out=$(virt-admin -c "$REMVIRTD_ADMIN_URI" daemon-log-filters)
grep -qx " Logging filters: " <<<"$out" || fail "virt-admin does not see the filters rvadm cleared"
out=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" client-disconnect libvirtd "$id")
[ "$out" = "Client '$id' disconnected" ] || fail "rvadm client-disconnect said: $out"
gone() { ! grep -qE "^ $id +unix" <<<"$(virt-admin -c "$REMVIRTD_ADMIN_URI" client-list libvirtd)"; }
wait_for "$RV_TIMEOUT" "client $id to leave client-list" gone
echo "ok   rvadm client-disconnect: $out, and virt-admin no longer lists it"

# Errors: the daemon's message, exit status 1.
expect_error()
{
    local want=$1 out
    shift
    if out=$("$RVADM" -s "$REMVIRTD_ADMIN_SOCK" "$@" 2>&1); then
        fail "rvadm $* succeeded: $out"
    fi
    grep -qF -- "$want" <<<"$out" || fail "rvadm $*: expected '$want' in: $out"
    echo "ok   rvadm $* fails: $out"
}
expect_error "No client with matching ID '999999'" client-info libvirtd 999999
expect_error "No server named 'nosuch'" srv-clients-info nosuch
expect_error "no tls service found" srv-update-tls libvirtd
expect_error "requires <server>" client-list
expect_error "is not a number" client-info libvirtd 12x
expect_error "unknown command" no-such-command
if out=$("$RVADM" -s "$REMVIRTD_SOCK" srv-list 2>&1); then
    fail "rvadm on the read-write socket succeeded: $out"
fi
grep -q "cannot find program" <<<"$out" || fail "rvadm on remvirt-sock: $out"
echo "ok   rvadm on remvirt-sock is refused: $out"

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
