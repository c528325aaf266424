#!/usr/bin/env bash
# Real virt-admin (Debian's libvirt-clients) against remvirtd's admin
# socket: srv-list, srv-threadpool-info, srv-clients-info, client-list,
# client-info, client-disconnect (of a client in the middle of a packet),
# srv-clients-set (below the current count: those in stay, new ones are
# refused), daemon-log-filters, daemon-log-outputs (taking effect at
# once), srv-update-tls without TLS; and each socket refusing the other's
# tool.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virt-admin
requires virsh
requires "$PYTHON3" --version
start_remvirtd 'log_filters = "2:server"'

va()
{
    virt-admin -c "$REMVIRTD_ADMIN_URI" "$@"
}

# va_fails WORDS CMD...: virt-admin fails and its error says WORDS.
va_fails()
{
    local want=$1 out
    shift
    if out=$(va "$@" 2>&1); then
        fail "virt-admin $* succeeded: $out"
    fi
    grep -qF -- "$want" <<<"$out" || fail "virt-admin $*: expected '$want' in: $out"
    echo "ok   virt-admin $* fails: $(tail -1 <<<"$out")"
}

expect_line()
{
    has_line "$1" "$2" || { cat "$1" >&2; fail "expected the line '$2' in $3"; }
}

out=$RV_TMP/out
va version > "$out"
expect_line "$out" "Running against daemon: 9.0.0" "virt-admin version"

va srv-list > "$out"
expect_line "$out" " 0    libvirtd" "srv-list"
expect_line "$out" " 1    admin" "srv-list"
echo "ok   srv-list: libvirtd and admin"

va srv-threadpool-info libvirtd > "$out"
for field in minWorkers maxWorkers nWorkers freeWorkers prioWorkers jobQueueDepth; do
    grep -qE "^$field +: 0$" "$out" || { cat "$out" >&2; fail "srv-threadpool-info: $field is not 0"; }
done
echo "ok   srv-threadpool-info: one loop thread, no workers"
va_fails "no worker pool" srv-threadpool-set libvirtd --max-workers 5
va_fails "No server named 'nosuch'" srv-threadpool-info nosuch

# Two clients that hold their connections: one read-write, one read-only.
# Each ends when the daemon closes its connection.
hold='import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
s.recv(1)'
bg "$RV_TMP/rw" "$PYTHON3" -c "$hold" "$REMVIRTD_SOCK"
rw_pid=$BG_PID
bg "$RV_TMP/ro" "$PYTHON3" -c "$hold" "$REMVIRTD_SOCK_RO"
ro_pid=$BG_PID
wait_for "$RV_TIMEOUT" "the two clients" grep -qs connected "$RV_TMP/rw" "$RV_TMP/ro"
two_clients() { [ "$(va client-list libvirtd | grep -c ' unix ')" = 2 ]; }
wait_for "$RV_TIMEOUT" "client-list to show both clients" two_clients

va srv-clients-info libvirtd > "$out"
for line in "nclients_max        : 5000" "nclients            : 2" \
            "nclients_unauth_max : 20" "nclients_unauth     : 0"; do
    expect_line "$out" "$line" "srv-clients-info"
done
echo "ok   srv-clients-info: 2 of 5000, 0 of 20 anonymous"

# Each client's info; which id is which shows in unix_process_id.
for id in $(va client-list libvirtd | awk '$2 == "unix" { print $1 }'); do
    va client-info libvirtd "$id" > "$out"
    expect_line "$out" "id             : $id" "client-info $id"
    expect_line "$out" "transport      : unix" "client-info $id"
    expect_line "$out" "unix_user_id   : $(id -u)" "client-info $id"
    expect_line "$out" "unix_group_id  : $(id -g)" "client-info $id"
    grep -qE '^connection_time: [0-9]{4}-[0-9]{2}-[0-9]{2} ' "$out" || fail "client-info $id: no time"
    if has_line "$out" "unix_process_id: $rw_pid"; then
        expect_line "$out" "readonly       : no" "client-info of the read-write client"
        rw_id=$id
    elif has_line "$out" "unix_process_id: $ro_pid"; then
        expect_line "$out" "readonly       : yes" "client-info of the read-only client"
        ro_id=$id
    else
        cat "$out" >&2
        fail "client-info $id: neither client's pid ($rw_pid, $ro_pid)"
    fi
done
[ -n "${rw_id:-}" ] && [ -n "${ro_id:-}" ] || fail "client-list did not list both clients"
echo "ok   client-info: transport, read-only, uid, gid and pid of both clients"
va_fails "No client with matching ID '999999'" client-info libvirtd 999999

# The admin server lists its own clients: this virt-admin among them.
va client-list admin > "$out"
grep -q ' unix ' "$out" || { cat "$out" >&2; fail "client-list admin is empty"; }
echo "ok   client-list admin: virt-admin itself"

va client-disconnect libvirtd "$ro_id" > "$out"
expect_line "$out" "Client '$ro_id' disconnected" "client-disconnect"
finish "$ro_pid" || fail "the disconnected client did not see its connection close"
va client-list libvirtd > "$out"
if grep -qE "^ $ro_id +unix" "$out"; then
    fail "client $ro_id is still listed after client-disconnect"
fi
echo "ok   client-disconnect: the client is gone from client-list"
kill "$rw_pid"
finish "$rw_pid" || true

# Limits and disconnects with clients that make calls.
rawpy "$REMVIRTD_SOCK" "$REMVIRTD_ADMIN_URI" "$REMVIRTD_URI" <<'PY'
import subprocess, sys, time
import rawclient as rc

path, admin_uri, uri = sys.argv[1:]

def va(*args, ok=True):
    run = subprocess.run(["virt-admin", "-c", admin_uri] + list(args), capture_output=True,
                         text=True, timeout=60)
    if ok and run.returncode != 0:
        raise SystemExit(f"FAIL: virt-admin {' '.join(args)}: {run.stderr.strip()}")
    return run

def newest_client_id():
    rows = [l.split() for l in va("client-list", "libvirtd").stdout.splitlines()]
    return max(int(r[0]) for r in rows if len(r) > 1 and r[1] == "unix")

# Lowering max_clients below the count: those in stay, the next is refused.
a, b = rc.Client(path), rc.Client(path)
a.open_connection()
b.open_connection()
va("srv-clients-set", "libvirtd", "--max-clients", "1", "--max-unauth-clients", "1")
info = va("srv-clients-info", "libvirtd").stdout
rc.check("nclients_max        : 1" in info and "nclients            : 2" in info,
         "srv-clients-set lowered max_clients to 1 with 2 clients in")
rc.expect_usable(a, "the first client after the limit fell")
rc.expect_usable(b, "the second client after the limit fell")
c = rc.Client(path)
rc.check(c.wait_closed(5), "a new client is refused (closed at once) at the new limit")
c.close()
run = subprocess.run(["virsh", "-c", uri, "hostname"], capture_output=True, text=True, timeout=60)
said = (run.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
rc.check(run.returncode != 0, "virsh at the new limit fails: " + said)
# virt-admin checks the two given together; one alone is the server's to check.
bad = va("srv-clients-set", "libvirtd", "--max-unauth-clients", "20", ok=False)
rc.check(bad.returncode != 0 and "authentication must not be less" in bad.stderr,
         "max_anonymous_clients above max_clients is refused as libvirtd refuses it")
va("srv-clients-set", "libvirtd", "--max-clients", "5000", "--max-unauth-clients", "20")
c = rc.connect_when_admitted(path, 5, "after the limit was raised again")
rc.expect_usable(c, "a new client after the limit was raised again")
c.close()
b.close()

# A client in the middle of a call (half a packet sent) is disconnected.
mid = rc.Client(path)
mid.open_connection()
pkt = rc.packet(rc.PROC_CONNECT_GET_HOSTNAME, serial=mid.next_serial())
mid.send(pkt[:len(pkt) // 2])
mid_id = newest_client_id()
out = va("client-disconnect", "libvirtd", str(mid_id)).stdout
rc.check(f"Client '{mid_id}' disconnected" in out, f"client-disconnect {mid_id}: {out.strip()}")
rc.check(mid.wait_closed(5), "the client in the middle of a packet sees its connection closed")
rc.expect_usable(a, "another client after the disconnect")
PY

# Logging settings take effect at once, without a restart.
va daemon-log-filters --filters "1:server.dispatch 2:server"
va daemon-log-filters > "$out"
expect_line "$out" " Logging filters: 1:*server.dispatch* 2:*server* " "daemon-log-filters"
debug_log=$RV_TMP/debug.log
va daemon-log-outputs --outputs "1:file:$debug_log 3:stderr"
va daemon-log-outputs > "$out"
expect_line "$out" " Logging outputs: 1:file:$debug_log 3:stderr" "daemon-log-outputs"
virsh -c "$REMVIRTD_URI" hostname > /dev/null
dispatch_logged() { grep -qs "rvs_dispatch_frame_program" "$debug_log"; }
wait_for "$RV_TIMEOUT" "debug lines of server.dispatch in $debug_log" dispatch_logged
echo "ok   daemon-log-filters and -outputs: server.dispatch's debug lines reach the new file"
va_fails "invalid argument" daemon-log-filters --filters "9:x"
va_fails "invalid argument" daemon-log-outputs --outputs "1:bogus"
va daemon-log-filters > "$out"
expect_line "$out" " Logging filters: 1:*server.dispatch* 2:*server* " "filters after a refused change"
va daemon-log-filters --filters ""
va daemon-log-filters > "$out"
expect_line "$out" " Logging filters: " "daemon-log-filters after clearing them"
va daemon-log-outputs --outputs "2:file:$REMVIRTD_LOG"
echo "ok   refused settings keep the old ones; empty filters clear them"

va_fails "no tls service found" srv-update-tls libvirtd

# Each socket serves its own program only.
if out=$(virt-admin -c "remvirtd:///system?socket=$REMVIRTD_SOCK" srv-list 2>&1); then
    fail "virt-admin on the read-write socket succeeded: $out"
fi
grep -q "cannot find program" <<<"$out" || fail "virt-admin on remvirt-sock: $out"
echo "ok   virt-admin on remvirt-sock is refused: $(tail -1 <<<"$out")"
if out=$(virsh -c "test+unix:///default?socket=$REMVIRTD_ADMIN_SOCK" hostname 2>&1); then
    fail "virsh on the admin socket succeeded: $out"
fi
grep -q "cannot find program" <<<"$out" || fail "virsh on remvirt-admin-sock: $out"
echo "ok   virsh on remvirt-admin-sock is refused: $(tail -1 <<<"$out")"

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
