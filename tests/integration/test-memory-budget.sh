#!/usr/bin/env bash
# The memory budget (issue 27), scaled down: each user may make remvirtd
# hold 6 MiB, read-only clients together 8 MiB.
#  1. An unprivileged user (uid 65534) opens 10 read-only connections that
#     each declare a 32 MiB packet, send 3 MiB of it and stall: remvirtd
#     grows by about its 6 MiB, not 30 MiB, and closes the connections
#     that would pass it with a warning naming the client and the budget.
#     Meanwhile root, another user, is served on the read-only socket.
#  2. root stalls in packets on the read-only socket too: the read-only
#     total stops it (a warning names that budget), while a root client on
#     the read-write socket, outside that total, is served.
#  3. Everyone closes: the memory goes back.
#  4. uid 65534's 10 read-only connections flood PINGs and never read:
#     2 MiB of PONGs each would be 20 MiB; remvirtd holds its 6 MiB.
#  5. On TCP without authentication all clients share one bucket: 4 that
#     stall in packets meet its 6 MiB.
# Memory is the kernel's VmRSS; skipped under valgrind and ASan, which
# keep freed memory on purpose (the closes and warnings are checked there
# too).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires "$PYTHON3" --version
measure_memory=1
if [ -n "${RV_VALGRIND:-}" ] || ldd "$REMVIRTD" 2>/dev/null | grep libasan >/dev/null; then
    measure_memory=0
fi
port=$(free_port)
start_remvirtd 'memory_budget_user_bytes = 6291456' 'memory_budget_readonly_bytes = 8388608' \
    'max_client_output_bytes = 2097152' 'keepalive_interval = -1' 'client_output_timeout = 60' \
    'listen_tcp = 1' 'listen_addr = "127.0.0.1"' "tcp_port = \"$port\"" 'auth_tcp = "none"'
# uid 65534 must reach the read-only socket through the test's directory.
chmod 755 "$RV_TMP" "$REMVIRTD_DIR"

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_PID" "$REMVIRTD_LOG" "$measure_memory" \
    "$port" <<'PY'
import os, selectors, socket, struct, sys, time
import procstat
import rawclient as rc

rw, ro, pid, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
measure, port = sys.argv[5] == "1", int(sys.argv[6])
MiB = 1 << 20

def rss():
    return procstat.rss(pid)

def fds():
    return procstat.fds(pid)

def log_lines(*words):
    with open(log, errors="replace") as f:
        return [line for line in f if all(w in line for w in words)]

STALL_HEAD = struct.pack(">I", rc.PACKET_MAX + 4) + rc.header_bytes(
    rc.REMOTE_PROGRAM, rc.REMOTE_VERSION, rc.PROC_CONNECT_GET_HOSTNAME, rc.CALL, 1, 0)
PING = rc.packet(rc.rv.RV_KEEPALIVE_PROC_PING, prog=rc.KEEPALIVE_PROGRAM,
                 vers=rc.rv.RV_KEEPALIVE_VERSION, mtype=rc.MESSAGE, serial=0)

def flood(socks, head, block, total):
    """Send head, then block over and over (total bytes in all) on every
    socket without reading, until each is done, closed by the daemon, or
    nothing moved for 2 s.  Returns how many the daemon closed."""
    sel = selectors.DefaultSelector()
    left, gone = {}, set()
    for s in socks:
        s.sendall(head)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_WRITE)
        left[s] = total
    last = time.monotonic()
    while sel.get_map() and time.monotonic() - last < 2:
        for key, _ in sel.select(0.2):
            s = key.fileobj
            try:
                n = s.send(block[:min(len(block), left[s])])
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                sel.unregister(s)
                gone.add(s)
                continue
            last = time.monotonic()
            left[s] -= n
            if left[s] == 0:
                sel.unregister(s)
    sel.close()
    # The daemon may still be reading what the kernel buffered (TCP's
    # buffers take megabytes): count until no more close for a second.
    deadline = time.monotonic() + 10
    count, since = -1, time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < 1:
        gone |= {s for s in socks if s not in gone and eof(s)}
        if len(gone) != count:
            count, since = len(gone), time.monotonic()
        time.sleep(0.1)
    return len(gone)

def eof(s):
    """Whether the daemon closed s (what it sent first is read and dropped)."""
    try:
        while True:
            if not s.recv(1 << 20):
                return True
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True

def as_nobody(work):
    """Run work() in a child as uid 65534; it reports a line, then holds
    its connections until told to go.  Returns (report, go)."""
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(r)
        os.close(go_w)
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        socks, line = work()
        os.write(w, line.encode())
        os.close(w)
        os.read(go_r, 1)
        for s in socks:
            s.close()
        os._exit(0)
    os.close(w)
    os.close(go_r)
    report = b""
    while True:
        chunk = os.read(r, 256)
        if not chunk:
            break
        report += chunk
    os.close(r)

    def go():
        os.write(go_w, b"x")
        os.close(go_w)
        os.waitpid(child, 0)
    return report.decode(), go

def connect(path, n):
    out = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        out.append(s)
    return out

def stall_as_nobody():
    socks = connect(ro, 10)
    closed = flood(socks, STALL_HEAD, b"\0" * MiB, 3 * MiB)
    return socks, f"{closed}"

# One client served first: the loop runs and the drivers are set up.
first = rc.Client(ro)
first.open_connection()
first.close()
fds0 = procstat.steady_fds(pid)
rss0 = rss()

# 1. An unprivileged user's stalled packets.
report, nobody_go = as_nobody(stall_as_nobody)
closed = int(report)
grown = rss() - rss0
print(f"uid 65534, 10 stalled packets: daemon grew {grown / MiB:.1f} MiB, {closed} closed")
if measure:
    rc.check(grown < 12 * MiB, f"30 MiB of stalled packets grew remvirtd by {grown / MiB:.1f} MiB "
             "(< 12 MiB: uid 65534's budget is 6 MiB)")
rc.check(closed >= 7, f"remvirtd closed {closed} of the 10 connections (>= 7: 6 MiB holds two)")
lines = log_lines("uid 65534", "memory budget of uid 65534 (memory_budget_user_bytes = 6291456",
                  "packet", "closing it")
rc.check(len(lines) == closed, f"one warning per closed connection names it, its packet and "
         f"uid 65534's budget ({len(lines)} for {closed}): {lines[:1]}")
other = rc.Client(ro)
other.open_connection()
rc.expect_usable(other, "root on the read-only socket while uid 65534's budget is spent")
other.close()

# 2. The read-only total: uid 65534 holds up to 6 MiB of its 8 MiB.
root_socks = connect(ro, 4)
root_closed = flood(root_socks, STALL_HEAD, b"\0" * MiB, 3 * MiB)
print(f"root, 4 stalled read-only packets: {root_closed} closed")
rc.check(root_closed >= 2, f"the read-only total closed {root_closed} of root's 4 (>= 2)")
lines = log_lines("uid 0", "memory budget of read-only clients "
                  "(memory_budget_readonly_bytes = 8388608")
rc.check(len(lines) >= 1, "a warning names the read-only clients' budget")
writer = rc.Client(rw)
writer.open_connection()
rc.expect_usable(writer, "root on the read-write socket while the read-only budget is spent")
writer.close()
if measure:
    grown = rss() - rss0
    rc.check(grown < 14 * MiB, f"remvirtd holds {grown / MiB:.1f} MiB more (< 14 MiB: read-only "
             "clients may make it hold 8 MiB)")

# 3. Everyone goes: the memory comes back.
nobody_go()
for s in root_socks:
    s.close()
deadline = time.monotonic() + 10
while fds() > fds0 and time.monotonic() < deadline:
    time.sleep(0.05)
rc.check(fds() == fds0, f"the daemon holds {fds()} fds again, as before ({fds0})")
time.sleep(1.5)         # the trim runs a second after the closes
back = rss() - rss0
print(f"after every flooder closed: {back / MiB:+.1f} MiB")
if measure:
    rc.check(back < 3 * MiB, f"remvirtd gave the memory back ({back / MiB:+.1f} MiB, < 3 MiB)")

# 4. PINGs from connections that never read.
def ping_as_nobody():
    socks = connect(ro, 10)
    closed = flood(socks, b"", PING * 4096, 4 * MiB)
    time.sleep(0.5)
    return socks, f"{closed} {rss()}"

report, nobody_go = as_nobody(ping_as_nobody)
closed, held = map(int, report.split())
grown = held - rss0
print(f"uid 65534, 10 PING floods: daemon grew {grown / MiB:.1f} MiB, {closed} closed")
if measure:
    rc.check(grown < 12 * MiB, f"PONGs nobody reads grew remvirtd by {grown / MiB:.1f} MiB "
             "(< 12 MiB: uid 65534's budget is 6 MiB; 10 x 2 MiB without it)")
rc.check(closed >= 5, f"remvirtd closed {closed} of the 10 (>= 5)")
rc.check(log_lines("uid 65534", "output it leaves unread", "memory_budget_user_bytes"),
         "a warning names a client whose unread output passed uid 65534's budget")
nobody_go()

# 5. TCP, no authentication: one bucket for all such clients.
tcp = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
tcp_closed = flood(tcp, STALL_HEAD, b"\0" * MiB, 3 * MiB)
print(f"4 stalled packets on TCP: {tcp_closed} closed")
rc.check(tcp_closed >= 2, f"remvirtd closed {tcp_closed} of the 4 TCP connections (>= 2)")
rc.check(log_lines("127.0.0.1:", "memory budget of network clients without an identity "
                   "(memory_budget_user_bytes = 6291456"),
         "a warning names a TCP client and the budget of network clients without an identity")
for s in tcp:
    s.close()
last = rc.Client(ro)
last.open_connection()
rc.expect_usable(last, "a read-only client after the floods")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
