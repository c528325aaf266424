#!/usr/bin/env python3
"""bench/memory_budget: what hostile read-only clients make a daemon hold.

One flood per run, on a daemon started for it (bench/run-memory-budget.sh
starts one per flood, so VmHWM is that flood's peak):
  quiet     --clients connections (default 32) send PINGs and never read
            their PONGs, each until the daemon has taken --bytes (default
            64 MiB) or takes nothing more;
  ping      the same with 256 connections;
  stall     --clients connections (default 100) each declare a packet of
            the largest length (32 MiB), send --bytes of it (default
            31 MiB) and stall.
It prints the daemon's RSS before, its peak (VmHWM), its RSS with the
flood held, how many flooders it closed, and its RSS once every flooder
has gone (the memory it gave back).  Not a timed test: the figures are
the kernel's, compare them between builds.
"""
import argparse
import selectors
import socket
import struct
import sys
import time

import procstat
import rawclient as rc

MiB = 1 << 20


def flood(socks, data_for, target, idle):
    """Send data_for(i) (repeated) on every socket without reading, until
    each has sent target bytes, been closed by the daemon, or nothing
    moved for idle seconds.  Returns (bytes sent, sockets closed)."""
    sel = selectors.DefaultSelector()
    sent = [0] * len(socks)
    blocks = [memoryview(data_for(i)) for i in range(len(socks))]
    offs = [0] * len(socks)
    closed = 0
    for i, s in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_WRITE, i)
    last_move = time.monotonic()
    while sel.get_map() and time.monotonic() - last_move < idle:
        for key, _ in sel.select(timeout=0.2):
            i = key.data
            s = socks[i]
            block = blocks[i]
            try:
                n = s.send(block[offs[i]:offs[i] + min(len(block) - offs[i], target - sent[i])])
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                sel.unregister(s)
                closed += 1
                continue
            sent[i] += n
            offs[i] = (offs[i] + n) % len(block)
            last_move = time.monotonic()
            if sent[i] >= target:
                sel.unregister(s)
    sel.close()
    return sum(sent), closed


def closed_by_daemon(socks):
    """Sockets the daemon has closed (EOF or reset while reading what it
    queued for them)."""
    n = 0
    for s in socks:
        try:
            s.setblocking(False)
            while True:
                chunk = s.recv(1 << 20)
                if not chunk:
                    n += 1
                    break
        except BlockingIOError:
            pass
        except (ConnectionResetError, BrokenPipeError):
            n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("flood", choices=("quiet", "ping", "stall"))
    ap.add_argument("sock")
    ap.add_argument("pid", type=int)
    ap.add_argument("--clients", type=int)
    ap.add_argument("--bytes", type=int, help="bytes each flooder sends (MiB)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="floods one after another (the figures are the last's)")
    ap.add_argument("--idle", type=float, default=3.0,
                    help="seconds without progress that end a flood")
    a = ap.parse_args()
    clients = a.clients or {"quiet": 32, "ping": 256, "stall": 100}[a.flood]
    target = (a.bytes or {"quiet": 64, "ping": 64, "stall": 31}[a.flood]) * MiB

    fds0 = procstat.fds(a.pid)
    rss0 = procstat.rss(a.pid)
    for _ in range(a.rounds):
        line = one_round(a, clients, target, fds0)
    print(f"{a.flood:5} {clients:4} clients x {target // MiB:3} MiB, {a.rounds} rounds: "
          f"RSS before {rss0 / MiB:6.1f} MiB, {line}")
    sys.stdout.flush()


def one_round(a, clients, target, fds0):
    socks = []
    for _ in range(clients):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(a.sock)
        socks.append(s)

    if a.flood == "stall":
        # The largest length the wire allows, then all but the last MiB.
        head = struct.pack(">I", rc.PACKET_MAX + 4) + rc.header_bytes(
            rc.REMOTE_PROGRAM, rc.REMOTE_VERSION, rc.PROC_CONNECT_GET_HOSTNAME, rc.CALL, 1, 0)
        body = b"\0" * MiB

        def data_for(i):
            return body
        for s in socks:
            s.sendall(head)
        send = target - len(head)
    else:
        send = target
        ping = rc.packet(rc.rv.RV_KEEPALIVE_PROC_PING, prog=rc.KEEPALIVE_PROGRAM,
                         vers=rc.rv.RV_KEEPALIVE_VERSION, mtype=rc.MESSAGE, serial=0)
        block = ping * (MiB // len(ping))

        def data_for(i):
            return block
    t0 = time.monotonic()
    sent, refused = flood(socks, data_for, send, a.idle)
    took = time.monotonic() - t0
    time.sleep(0.5)
    held = procstat.rss(a.pid)
    peak = procstat.rss(a.pid, "VmHWM")
    closed = max(refused, closed_by_daemon(socks))
    # A client that comes during the flood and stays: what the daemon
    # allocates for it lies above the flood's buffers in its heap.
    keeper = rc.Client(a.sock)
    try:
        keeper.open_connection()
        keeper.call_ok(rc.PROC_CONNECT_GET_CAPABILITIES)
    except rc.Closed:           # refused: its user's budget is exhausted
        keeper.close()
        keeper = None
    for s in socks:
        s.close()
    deadline = time.monotonic() + 30
    while procstat.fds(a.pid) > fds0 + (keeper is not None) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)         # remvirtd trims its heap a second after closes
    if keeper:
        keeper.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)
    after = procstat.rss(a.pid)
    if keeper:
        keeper.close()
    return (f"peak {peak / MiB:7.1f} MiB, held {held / MiB:7.1f} MiB, after close "
            f"{after / MiB:6.1f} MiB; sent {sent / MiB:6.0f} MiB in {took:4.1f} s, "
            f"{closed} flooders closed by the daemon")




if __name__ == "__main__":
    main()
