#!/usr/bin/env bash
# A client that sends and never reads cannot grow remvirtd's memory: every
# byte queued for it (PONGs, error replies, replies) counts against one
# output cap, at which remvirtd stops reading it; one that stays there past
# client_output_timeout is closed with a log line.  Keepalive-program
# packets of any type but MESSAGE close the client at once, unanswered.
#
# Flooders try to send 256 MiB each (PINGs, or packets of an unknown
# program that each draw an error reply) on the read-only Unix socket, on
# TCP before authentication and on TCP after it, two at once, while a
# well-behaved client keeps calling.  remvirtd's RSS must grow by less
# than 64 MiB in all (two clients at the 8 MiB cap, one at the 64 KiB
# pre-authentication cap, plus input buffers and allocator slack).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version

run_phase()
{
    local phase=$1 auth_tcp=$2 port
    port=$(free_port)
    start_remvirtd 'listen_tcp = 1' 'listen_addr = "127.0.0.1"' "tcp_port = \"$port\"" \
        "auth_tcp = \"$auth_tcp\"" 'client_output_timeout = 3' 'keepalive_interval = -1' \
        'log_level = 2'
    rawpy "$phase" "$REMVIRTD_PID" "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$port" \
        "$REMVIRTD_LOG" <<'PY'
import os, select, socket, sys, threading, time
import procstat
import rawclient as rc

phase, pid, rw, ro, port, log = sys.argv[1:]
tcp = ("127.0.0.1", int(port))
FLOOD = 256 << 20
MiB = 1 << 20

def rss():
    return procstat.rss(pid)

def log_has(words):
    with open(log, errors="replace") as f:
        return any(all(w in line for w in words) for line in f)

def wait_log(words, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log_has(words):
            return True
        time.sleep(0.1)
    return False

ping = rc.packet(rc.rv.RV_KEEPALIVE_PROC_PING, prog=rc.KEEPALIVE_PROGRAM,
                 vers=rc.rv.RV_KEEPALIVE_VERSION, mtype=rc.MESSAGE, serial=0)
unknown_prog = rc.packet(1, prog=0x12345678, vers=1, serial=7)

class Flooder(threading.Thread):
    """Sends `pkt` over and over, never reading, until FLOOD bytes are
    out, the daemon has taken nothing for 5 s, or it closed the connection
    (for staying at the cap: checked below).  Not 1 s: on a loaded machine
    the daemon may not run for that long before the kernel's buffers and
    its own output queue are full, and the flood would end too early."""
    def __init__(self, name, client, pkt):
        super().__init__(daemon=True)
        self.name, self.client, self.pkt = name, client, pkt
        self.sent, self.error = 0, None

    def run(self):
        s = self.client.sock
        s.setblocking(False)
        block = memoryview(self.pkt * ((1 << 20) // len(self.pkt)))
        off = 0
        try:
            while self.sent < FLOOD:
                _, w, _ = select.select([], [s], [], 5)
                if not w:
                    return          # the daemon stopped reading
                try:
                    n = s.send(block[off:])
                except BlockingIOError:
                    continue
                self.sent += n
                off = (off + n) % len(block)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except OSError as e:
            self.error = e

def flooder(name, where, pkt, open_first):
    c = rc.Client(where, timeout=30)
    # Little kernel buffering on our side, so the daemon's queue is what fills.
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    if open_first:
        c.open_connection()
    return Flooder(name, c, pkt)

good = rc.Client(rw, timeout=30)
good.open_connection()
base = rss()

if phase == "preauth":
    # auth_tcp = "sasl": the TCP flooder is a stranger.
    floods = [flooder("ro-unix PINGs", ro, ping, True),
              flooder("tcp PINGs before auth", tcp, ping, False)]
else:
    floods = [flooder("tcp PINGs after auth", tcp, ping, True),
              flooder("tcp unknown-program calls after auth", tcp, unknown_prog, True)]
for f in floods:
    f.start()

# The well-behaved client is served throughout.
calls, slowest = 0, 0.0
while any(f.is_alive() for f in floods):
    t = time.monotonic()
    good.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)
    slowest = max(slowest, time.monotonic() - t)
    calls += 1
    time.sleep(0.05)
grown = rss() - base
rc.check(slowest < 2.0, f"{phase}: {calls} calls of another client answered during the flood "
                        f"(slowest {slowest * 1000:.0f} ms)")
for f in floods:
    rc.check(f.error is None, f"{f.name}: no send error while flooding ({f.error})")
    rc.check(f.sent < 64 * MiB, f"{f.name}: remvirtd stopped reading after {f.sent / MiB:.1f} MiB "
                                f"of the {FLOOD // MiB} MiB")
rc.check(grown < 64 * MiB, f"{phase}: remvirtd grew by {grown / MiB:.1f} MiB (bound 64 MiB)")

# At the cap past client_output_timeout (3 s): closed, and the log says why.
# The unknown-program flooder is held by max_client_requests instead (five
# small error replies): stopped, but holding too little to be closed.
for f in floods:
    if f.pkt is unknown_prog:
        rc.check(not f.client.wait_closed(0.5), f"{f.name}: left open, at max_client_requests")
        f.client.close()
        continue
    if isinstance(f.client.sock.getsockname(), tuple):
        who = f"127.0.0.1:{f.client.sock.getsockname()[1]}"
    else:
        who = f"pid {os.getpid()} "
    rc.check(wait_log([who, "left unread for 3 s", "closing it"], 20),
             f"{f.name}: closed for output left unread, the log says so")
    f.client.sock.setblocking(True)
    rc.check(f.client.wait_closed(10), f"{f.name}: the connection is closed")
    f.client.close()
rc.expect_usable(good, f"{phase}: after the flooders are gone")

# A peer that takes a few bytes now and then is not reading: paused at
# the output cap, it reads 512 bytes every half second (1 KiB/s, far
# under the 64 KiB per client_output_timeout that counts as reading) and
# is closed all the same.  Such trickles once restarted the deadline each
# time, holding its output for good.
if phase == "after":
    t = flooder("unix PINGs read in trickles", rw, ping, True)
    s = t.client.sock
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    s.setblocking(False)
    # PINGs until the socket takes nothing for 1 s (the trickles start
    # well inside the 3 s; if the daemon was only slow, they go on until
    # it pauses, and the same must happen).
    while select.select([], [s], [], 1)[1]:
        try:
            s.send(ping * 64)
        except BlockingIOError:
            pass
    closed, started = False, time.monotonic()
    while time.monotonic() - started < 20 and not closed:
        time.sleep(0.5)
        try:
            closed = s.recv(512) == b""
        except BlockingIOError:
            pass
        except ConnectionResetError:
            closed = True
        if not closed:
            closed = log_has([f"pid {os.getpid()} ", "left unread for 3 s", "closing it"])
    rc.check(closed, "a peer reading 512 bytes every 0.5 s: closed for output left unread "
                     f"(after {time.monotonic() - started:.1f} s)")
    t.client.close()

    # A slow honest reader is not closed: 2 MiB of PONGs (twice what its
    # calls may leave unread) read at 64 KiB every 0.25 s take some 8 s,
    # far past the 3 s client_output_timeout, every one arriving.
    slow = rc.Client(rw, timeout=30)
    slow.open_connection()
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    npings = (2 * MiB) // len(ping)
    sender = threading.Thread(target=lambda: slow.sock.sendall(ping * npings), daemon=True)
    sender.start()
    got, started = 0, time.monotonic()
    slow.sock.settimeout(10)
    try:
        while got < npings * len(ping):
            chunk = slow.sock.recv(64 * 1024)
            if not chunk:
                break
            got += len(chunk)
            time.sleep(0.25)
    except (ConnectionResetError, socket.timeout):
        pass
    rc.check(got == npings * len(ping),
             f"a peer reading 64 KiB every 0.25 s: all {npings} PONGs came "
             f"({got} of {npings * len(ping)} bytes in {time.monotonic() - started:.1f} s)")
    rc.expect_usable(slow, "the slow reader after its PONGs")
    slow.close()

# Keepalive packets of any type but MESSAGE: closed at once, unanswered.
for mtype in (rc.CALL, rc.REPLY, 3, 4, 5):
    for where, open_first in ((ro, True), (tcp, phase != "preauth")):
        c = rc.Client(where, timeout=10)
        if open_first:
            c.open_connection()
        pkt = rc.packet(rc.rv.RV_KEEPALIVE_PROC_PING, prog=rc.KEEPALIVE_PROGRAM,
                        vers=rc.rv.RV_KEEPALIVE_VERSION, mtype=mtype, serial=1)
        try:
            c.send(pkt * 1000)
        except (BrokenPipeError, ConnectionResetError):
            pass
        got = b""
        try:
            while True:
                chunk = c.sock.recv(65536)
                if not chunk:
                    break
                got += chunk
        except ConnectionResetError:
            pass
        c.close()
        rc.check(got == b"", f"{phase}: keepalive packets of type {mtype} on "
                             f"{'tcp' if where == tcp else 'ro-unix'}: closed, no answer")
rc.check(log_has(["keepalive packet of type 3 (only MESSAGE is allowed)"]),
         "the log says why such a client was closed")
rc.expect_usable(good, f"{phase}: at the end")
good.close()
PY
    stop_remvirtd
}

run_phase preauth sasl
run_phase after none
