#!/usr/bin/env bash
# Out of file descriptors: with its fd limit cut to 64, remvirtd meets a
# flood of 100 clients.  accept() fails with EMFILE while connections wait
# in the backlog; the daemon must not spin on its ever-readable listener,
# must keep serving the clients it has, and must take the waiting ones in
# once fds free up.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
requires prlimit --version
start_remvirtd 'max_clients = 1000'
prlimit --pid "$REMVIRTD_PID" --nofile=64:64

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_PID" <<'PY'
import os, socket, sys, time
import rawclient as rc

path, pid = sys.argv[1], int(sys.argv[2])

def cpu_seconds():
    # utime + stime of the daemon, in clock ticks, from /proc.
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

first = rc.Client(path)
first.open_connection()

flood = []
for _ in range(100):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)          # completes in the backlog even if not accepted
    flood.append(s)
time.sleep(0.5)

busy_before = cpu_seconds()
time.sleep(2)
busy = cpu_seconds() - busy_before
rc.check(busy < 0.5, f"remvirtd idles while out of fds (used {busy:.2f} s of CPU in 2 s)")
rc.expect_usable(first, "a client connected before the flood")

for s in flood:
    s.close()
# The listeners rest 0.5 s after EMFILE; then new clients get in again.
c = rc.connect_when_admitted(path, 10, "after the flood left")
rc.expect_usable(c, "a new client after the flood")
PY

remvirtd_alive || fail "remvirtd died"
grep -q "pausing accepts" "$REMVIRTD_LOG" || fail "the log does not say accepts were paused"
stop_remvirtd
