#!/usr/bin/env bash
# What many clients cost the daemon, and that it gets it back:
#  - 1000 clients that opened a connection and made calls, then went
#    quiet, hold no buffers: the daemon grows by well under 3 KiB for each
#    (a client that kept its 16 KiB read buffer cost 8.7 KiB);
#  - 1000 connect-open-call-close cycles by 16 clients at a time leave the
#    daemon's file descriptors where they started and its memory within a
#    small bound of where it was after a warm-up.
# The memory figures are the kernel's (VmRSS), so they are checked only
# when remvirtd runs on the plain allocator: valgrind and ASan keep freed
# memory on purpose (their own checks cover leaks there).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
requires test -r /proc/self/status
start_remvirtd
measure_memory=1
if [ -n "${RV_VALGRIND:-}" ] || ldd "$REMVIRTD" 2>/dev/null | grep libasan >/dev/null; then
    measure_memory=0
fi

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_PID" "$measure_memory" <<'PY'
import os, sys, time
import procstat
import rawclient as rc

path, pid, measure = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"

def rss_kib():
    return procstat.rss(pid) // 1024

def fds():
    return procstat.fds(pid)

def busy_then_quiet(c):
    """Open, then calls whose packets and replies pass through the buffers."""
    c.open_connection()
    c.lookup("test")
    c.call_ok(rc.PROC_CONNECT_GET_CAPABILITIES)   # a reply of a few KiB
    c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)

def settle(target):
    """The daemon sees closes asynchronously: wait until it holds target fds."""
    deadline = time.monotonic() + 10
    while fds() != target and time.monotonic() < deadline:
        time.sleep(0.05)
    return fds()

# The sockets exist before the drivers' set-up ends (the QEMU driver reads
# its binary's answers through a pipe): one client served first means the
# loop runs, so fds0 is the daemon at rest.
first = rc.Client(path)
busy_then_quiet(first)
first.close()
fds0 = procstat.steady_fds(pid)
# Warm up the allocator and the daemon's tables with a first crowd.
warm = [rc.Client(path) for _ in range(100)]
for c in warm:
    busy_then_quiet(c)
for c in warm:
    c.close()
rc.check(settle(fds0) == fds0, f"after the warm-up the daemon holds {fds()} fds, as before ({fds0})")

N = 1000
rss0 = rss_kib()
crowd = []
for _ in range(N):
    c = rc.Client(path)
    busy_then_quiet(c)
    crowd.append(c)
time.sleep(0.2)
per_client = (rss_kib() - rss0) / N
print(f"{N} idle clients: {per_client:.2f} KiB each")
rc.check(fds() == fds0 + N, f"the daemon holds one fd per client ({fds()} = {fds0} + {N})")
if measure:
    rc.check(per_client < 3.0,
             f"an idle client costs {per_client:.2f} KiB (< 3 KiB: it holds no buffers)")
for c in crowd:
    c.close()

def churn(cycles, width=16):
    done = 0
    while done < cycles:
        batch = [rc.Client(path) for _ in range(min(width, cycles - done))]
        for c in batch:
            c.open_connection()
            c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)
        for c in batch:
            c.call_ok(rc.PROC_CONNECT_CLOSE)
            c.close()
        done += len(batch)

churn(500)
rc.check(settle(fds0) == fds0, f"after 500 cycles the daemon holds {fds()} fds, as before ({fds0})")
rss_warm = rss_kib()
churn(1000)
rc.check(settle(fds0) == fds0, f"after 1000 more the daemon holds {fds()} fds, as before ({fds0})")
grown = rss_kib() - rss_warm
print(f"1000 churn cycles: memory {grown:+d} KiB")
if measure:
    rc.check(grown < 256, f"1000 cycles grew the daemon by {grown} KiB (< 256 KiB)")

keeper = rc.Client(path)
keeper.open_connection()
rc.expect_usable(keeper, "a client after the churn")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
