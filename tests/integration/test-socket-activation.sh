#!/usr/bin/env bash
# remvirtd started by socket activation, as the systemd units run it but
# without a running systemd: tests/tools/socket-manager.py holds the
# three Unix sockets (as socket units do) and passes them, named
# remvirtd.socket, remvirtd-ro.socket and remvirtd-admin.socket, through
# systemd-socket-activate (Debian's systemd package), which starts
# remvirtd on the first connection.  Checked: nothing runs before a
# client comes; that client is served (virsh on the read-write socket,
# rvsh on the read-only one, which refuses changes); the admin socket
# serves virt-admin; remvirtd creates no socket of its own;
# sd_notify READY=1, RELOADING=1/READY=1 around SIGHUP, STOPPING=1;
# --timeout makes it exit once the last client has gone, leaving the
# sockets; the next connection starts it again and is served.  Then the
# refusals: a socket of the wrong kind under a name, garbage in
# LISTEN_FDS, fds that are not there.  Last, remvirtd-tcp.socket served
# with listen_tcp = 0, beside a read-only socket remvirtd makes itself.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires systemd-socket-activate
requires virsh
requires virt-admin
requires "$PYTHON3" --version
[ -x "$REMVIRTD" ] || fail "$REMVIRTD is not built"

dir=$RV_TMP/act
mkdir -p "$dir"
rw=$dir/remvirt-sock ro=$dir/remvirt-sock-ro admin=$dir/remvirt-admin-sock
pidfile=$dir/remvirtd.pid
log=$dir/remvirtd.log
REMVIRTD_LOG=$log           # shown if the test fails
cat > "$dir/remvirtd.conf" <<EOF
unix_sock_dir = "$dir/own"
log_level = 2
log_outputs = "2:file:$log"
EOF
uri="test+unix:///default?socket=$rw"
uri_ro="test+unix:///default?socket=$ro"

# RV_VALGRIND is a command prefix: split into words on purpose.
# shellcheck disable=SC2086
"$PYTHON3" "$top_srcdir/tests/tools/socket-manager.py" "$dir" \
    remvirtd.socket="$rw" remvirtd-ro.socket="$ro" remvirtd-admin.socket="$admin" -- \
    ${RV_VALGRIND:-} "$REMVIRTD" -f "$dir/remvirtd.conf" --pidfile "$pidfile" --timeout 2 \
    </dev/null >"$dir/manager.out" 2>"$dir/manager.err" &
manager=$!
stop_manager()
{
    [ -n "$manager" ] || return 0
    local pid=$manager
    manager=
    kill -TERM "$pid" 2>/dev/null || true
    wait_for "$RV_TIMEOUT" "the socket manager to stop" _rv_gone "$pid" || {
        kill -KILL "$pid" 2>/dev/null; cat "$dir/manager.err" >&2; return 1; }
    wait "$pid" 2>/dev/null || true
    # Every remvirtd it ran exited 0 (SIGTERM included); under valgrind:
    # no errors, no leaks.
    if grep -v '^exit 0$' "$dir/runs"; then
        cat "$dir/manager.err" >&2
        echo "a remvirtd exited with an error (above)" >&2
        return 1
    fi
}
cleanup_fn stop_manager
wait_for "$RV_TIMEOUT" "the activation sockets" test -S "$admin"

sleep 0.3
[ ! -e "$pidfile" ] || fail "remvirtd started before any client connected"
echo "ok   nothing runs before the first connection"

# A client that stays connected (raw, without a word of protocol) keeps
# remvirtd from its idle exit while the rest is checked.
"$PYTHON3" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(3600)' "$rw" </dev/null >"$dir/holder.out" 2>&1 &
holder=$!
cleanup_fn _rv_bg_kill "$holder"
wait_for "$RV_TIMEOUT" "the first connection to start remvirtd" test -s "$pidfile"
pid1=$(cat "$pidfile")
wait_for "$RV_TIMEOUT" "READY=1" has_line "$dir/notify" "READY=1"
echo "ok   the first connection started remvirtd (pid $pid1), which said READY=1"

virsh -c "$uri" list --all > "$dir/list" 2>&1 || { cat "$dir/list" >&2; fail "virsh on the activated socket"; }
grep -qE '^ 1 +test +running$' "$dir/list" || { cat "$dir/list" >&2; fail "virsh list: no domain test"; }
echo "ok   virsh is served on remvirtd.socket"

"$RVSH" -c "$uri_ro" list --all > "$dir/list-ro" 2>&1 || { cat "$dir/list-ro" >&2; fail "rvsh on the read-only socket"; }
grep -qE '^ 1 +test +running$' "$dir/list-ro" || { cat "$dir/list-ro" >&2; fail "rvsh list: no domain test"; }
if virsh -c "$uri_ro" suspend test > "$dir/suspend" 2>&1; then
    fail "a change went through on remvirtd-ro.socket"
fi
grep -q "read only\|read-only\|Operation not allowed\|operation forbidden" "$dir/suspend" || {
    cat "$dir/suspend" >&2; fail "remvirtd-ro.socket refused for another reason"; }
echo "ok   rvsh is served on remvirtd-ro.socket, which is read-only"

virt-admin -c "remvirtd:///system?socket=$admin" srv-list > "$dir/srv-list" 2>&1 || {
    cat "$dir/srv-list" >&2; fail "virt-admin on remvirtd-admin.socket failed"; }
grep -q libvirtd "$dir/srv-list" || { cat "$dir/srv-list" >&2; fail "srv-list shows no server"; }
echo "ok   virt-admin is served on remvirtd-admin.socket"

[ ! -e "$dir/own" ] || fail "remvirtd made sockets of its own in unix_sock_dir"
for unit in remvirtd.socket remvirtd-ro.socket remvirtd-admin.socket; do
    grep -q "listening on .*($unit" "$log" || fail "the log does not say remvirtd took $unit"
done
echo "ok   remvirtd took the three sockets by name and made none itself"

kill -HUP "$pid1"
wait_for "$RV_TIMEOUT" "RELOADING=1 after SIGHUP" grep -q '^RELOADING=1 MONOTONIC_USEC=[0-9]*$' "$dir/notify"
wait_for "$RV_TIMEOUT" "READY=1 after the reload" \
    sh -c "sed -n '/^RELOADING=1/,\$p' '$dir/notify' | grep -qx READY=1"
kill -0 "$pid1" 2>/dev/null || fail "remvirtd did not survive SIGHUP"
echo "ok   SIGHUP: RELOADING=1, then READY=1, and remvirtd goes on"

# The last client leaves: remvirtd exits on its own after --timeout.
kill "$holder"
wait "$holder" 2>/dev/null || true
wait_for $((RV_TIMEOUT + 2)) "the idle exit" _rv_gone "$pid1"
wait_for "$RV_TIMEOUT" "the exit to be recorded" test -s "$dir/runs"
has_line "$dir/runs" "exit 0" || { cat "$dir/runs" >&2; fail "the idle exit was not status 0"; }
has_line "$dir/notify" "STOPPING=1" || fail "no STOPPING=1 before the idle exit"
grep -q "no clients for 2 s (--timeout): exiting" "$log" || fail "the log does not say why remvirtd exited"
[ -S "$rw" ] && [ -S "$ro" ] && [ -S "$admin" ] || fail "remvirtd removed systemd's sockets"
echo "ok   no clients for 2 s: remvirtd exited 0 and left the sockets"

# The next connection starts it again, and is served.
virsh -c "$uri" dominfo test > "$dir/dominfo" 2>&1 || { cat "$dir/dominfo" >&2; fail "virsh after the idle exit"; }
grep -qE '^State: +running$' "$dir/dominfo" || { cat "$dir/dominfo" >&2; fail "virsh dominfo after the restart"; }
pid2=$(cat "$pidfile")
[ "$pid2" != "$pid1" ] || fail "the same remvirtd answered after its idle exit"
echo "ok   the next connection started a new remvirtd (pid $pid2) and was served"
stop_manager

# Refusals, each a clear message and status 1, never a socket served
# for what it is not.  A listening Unix socket is put at fd 3 and the
# variables are set as a service manager would.
refused()
{
    local what=$1 expect=$2 vars=$3 out=$dir/refused.out status=0
    rm -f "$dir/bad-sock"
    "$PYTHON3" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.execvp("sh", ["sh", "-c", sys.argv[2] + " exec \"$0\" -f \"$1\""] + sys.argv[3:])' \
        "$dir/bad-sock" "LISTEN_PID=\$\$ $vars" "$REMVIRTD" "$dir/remvirtd.conf" \
        > "$out" 2>&1 || status=$?
    [ "$status" = 1 ] || { cat "$out" >&2; fail "$what: exit status $status, not 1"; }
    grep -qF "$expect" "$out" || { cat "$out" >&2; fail "$what: not the expected message"; }
    echo "ok   $what: refused ($expect)"
}
refused "a Unix socket passed as remvirtd-tcp.socket" \
    "remvirtd-tcp.socket (fd 3) must listen on a TCP port" \
    "LISTEN_FDS=1 LISTEN_FDNAMES=remvirtd-tcp.socket"
refused "LISTEN_FDS that is not a number" "LISTEN_FDS '1x' is not a number" \
    "LISTEN_FDS=1x LISTEN_FDNAMES=remvirtd.socket"
refused "more fds than sockets passed" "fd 4 (remvirtd-ro.socket) is not a listening stream socket" \
    "LISTEN_FDS=2 LISTEN_FDNAMES=remvirtd.socket:remvirtd-ro.socket"

# A TCP socket passed as remvirtd-tcp.socket is served although
# listen_tcp is 0 (enabling the socket unit is the switch), with
# auth_tcp's authentication; a socket not passed (the read-only one)
# remvirtd creates itself.
port=$(free_port)
cat > "$dir/tcp.conf" <<CONF
unix_sock_dir = "$dir/own"
auth_tcp = "none"
log_level = 2
log_outputs = "2:file:$log"
CONF
# shellcheck disable=SC2086
systemd-socket-activate -l "$dir/tcp-rw" -l "127.0.0.1:$port" \
    --fdname=remvirtd.socket:remvirtd-tcp.socket \
    ${RV_VALGRIND:-} "$REMVIRTD" -f "$dir/tcp.conf" --timeout 1 \
    </dev/null >"$dir/tcp.out" 2>&1 &
tcp_pid=$!
cleanup_fn _rv_bg_kill "$tcp_pid"
wait_for "$RV_TIMEOUT" "the TCP activation socket" test -S "$dir/tcp-rw"
virsh -c "test+tcp://127.0.0.1:$port/default" list --all > "$dir/tcp-list" 2>&1 ||
    { cat "$dir/tcp-list" "$dir/tcp.out" >&2; fail "virsh over the activated TCP socket"; }
grep -qE '^ 1 +test +running$' "$dir/tcp-list" || { cat "$dir/tcp-list" >&2; fail "virsh list over TCP"; }
grep -q "listening on tcp 127.0.0.1:$port (remvirtd-tcp.socket), auth none" "$log" ||
    fail "the log does not say remvirtd took remvirtd-tcp.socket"
echo "ok   remvirtd-tcp.socket is served (listen_tcp = 0), virsh over TCP"
status=0
finish "$tcp_pid" || status=$?
[ "$status" = 0 ] || { cat "$dir/tcp.out" >&2; fail "after --timeout 1: status $status"; }
# What was not passed (remvirtd-ro.socket) it made itself, and removed.
grep -q "listening on $dir/own/remvirt-sock-ro (mode 0777, read-only)" "$log" ||
    fail "remvirtd did not make the read-only socket that was not passed"
[ ! -e "$dir/own/remvirt-sock" ] && [ ! -e "$dir/own/remvirt-sock-ro" ] ||
    fail "remvirtd made a read-write socket, or left its read-only one"
echo "ok   it made the read-only socket that was not passed, and left after --timeout 1 (status 0)"
