#!/usr/bin/env bash
# Plain TCP (IPv4 and IPv6) and the ext transport: rvsh and virsh reach
# remvirtd and see what the Unix socket shows; failures name their cause.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires nc -h

port=$(free_port)
start_remvirtd 'listen_tcp = 1' 'auth_tcp = "none"' "tcp_port = \"$port\"" 'log_level = 2'
$RVSH -c "$REMVIRTD_URI" list --all > "$RV_TMP/unix.out"
grep -q ' test ' "$RV_TMP/unix.out" || fail "the Unix listing lacks the test domain"

for uri in "test+tcp://127.0.0.1:$port/default" "test+tcp://[::1]:$port/default" \
           "test+tcp://localhost:$port/default" \
           "test+ext:///default?command=nc%20-U%20$REMVIRTD_SOCK"; do
    $RVSH -c "$uri" list --all > "$RV_TMP/net.out" || fail "rvsh -c $uri failed"
    cmp -s "$RV_TMP/unix.out" "$RV_TMP/net.out" || fail "$uri lists something else"
done
grep -q "connected on tcp 0.0.0.0:$port from 127.0.0.1:" "$REMVIRTD_LOG" ||
    fail "the log does not show the IPv4 client's address"
grep -q "connected on tcp \[::\]:$port from \[::1\]:" "$REMVIRTD_LOG" ||
    fail "the log does not show the IPv6 client's address"

# A change over TCP is seen over the Unix socket: one daemon, one state.
$RVSH -c "test+tcp://127.0.0.1:$port/default" suspend test >/dev/null
[ "$($RVSH -c "$REMVIRTD_URI" domstate test)" = paused ] || fail "suspend over TCP was not seen"
$RVSH -c "$REMVIRTD_URI" resume test >/dev/null

if command -v virsh >/dev/null; then
    virsh -c "test+tcp://127.0.0.1:$port/default" list --all > "$RV_TMP/virsh.out" ||
        fail "virsh over TCP failed"
    cmp -s "$RV_TMP/unix.out" "$RV_TMP/virsh.out" || fail "virsh over TCP lists something else"
    info=$(virsh -c "test+tcp://127.0.0.1:$port/default" dominfo test) || fail "virsh dominfo over TCP"
    grep -q '^State: *running' <<<"$info" || fail "virsh dominfo over TCP: $info"
fi

expect_failure()
{
    local uri=$1 words=$2 out
    if out=$($RVSH -c "$uri" list 2>&1); then
        fail "$uri should fail"
    fi
    grep -qF -- "$words" <<<"$out" || fail "$uri: '$out' does not say '$words'"
}

closed=$(free_port)
expect_failure "test+tcp://127.0.0.1:$closed/default" "cannot connect to '127.0.0.1' port $closed: Connection refused"
expect_failure "test+tcp://no-such-host.invalid:$port/default" "cannot resolve host 'no-such-host.invalid'"
expect_failure "test+ext:///default?command=exit%203" "the command exited with status 3"
expect_failure "test+ext:///default" "needs a command parameter"

# listen_addr limits the addresses.
stop_remvirtd
port=$(free_port)
start_remvirtd 'listen_tcp = 1' 'auth_tcp = "none"' "tcp_port = \"$port\"" 'listen_addr = "127.0.0.1"'
$RVSH -c "test+tcp://127.0.0.1:$port/default" list --all >/dev/null || fail "listen_addr 127.0.0.1"
expect_failure "test+tcp://[::1]:$port/default" "Connection refused"
remvirtd_alive || fail "remvirtd died"
