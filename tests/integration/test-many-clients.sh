#!/usr/bin/env bash
# 1000 clients connect and leave, 50 at a time, in four ways: silently,
# after opening the connection, mid-packet, and right after a call whose
# reply they never read.  Afterwards a normal call works, and the daemon
# holds as many file descriptors as before (no leaked connections).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
requires test -d /proc/self/fd
start_remvirtd

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_PID" <<'PY'
import os, sys, time
import rawclient as rc

path, pid = sys.argv[1], int(sys.argv[2])

def daemon_fds():
    return len(os.listdir(f"/proc/{pid}/fd"))

keeper = rc.Client(path)
keeper.open_connection()
rc.expect_usable(keeper, "before the crowd")
fds_before = daemon_fds()

lookup = rc.packet(rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("test"), serial=5)
start = time.monotonic()
total = 0
for batch in range(20):
    clients = [rc.Client(path) for _ in range(50)]
    for i, c in enumerate(clients):
        kind = (batch + i) % 4
        if kind == 1:
            c.open_connection()
        elif kind == 2:
            c.send(lookup[:17])
        elif kind == 3:
            c.open_connection()
            c.send(lookup)
    for c in clients:
        c.close()
    total += len(clients)
elapsed = time.monotonic() - start
rc.check(total == 1000, f"1000 clients came and went in {elapsed:.2f} s")

rc.expect_usable(keeper, "the client that stayed")
fresh = rc.Client(path)
fresh.open_connection()
body = fresh.lookup("test")
rc.check(rc.Unpacker(body).domain()["id"] == 1, "a new client gets domain test")
fresh.close()

# The daemon notices the closes asynchronously; give it a moment.
deadline = time.monotonic() + 5
while daemon_fds() > fds_before and time.monotonic() < deadline:
    time.sleep(0.1)
rc.check(daemon_fds() == fds_before,
         f"daemon holds {daemon_fds()} fds, as before the crowd ({fds_before})")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
