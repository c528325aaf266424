#!/usr/bin/env python3
"""bench/idle_clients: what idle clients cost a daemon, side by side.

For each server given as NAME=SOCKET:PID it measures, in one run:
  - a busy client's DOMAIN_GET_INFO round trip (p50, p99, max over
    --calls calls) with no other client connected;
  - the daemon's resident memory (VmRSS) before and after --clients more
    clients connect, open test:///default and make one call, then go quiet:
    KiB per idle client;
  - the busy client's round trip again while they are all held.
The client is Python on raw sockets (tests/tools/rawclient.py), so its
round trips carry Python's own cost: compare columns, not absolutes.
Run it through bench/run-idle-clients.sh, which starts the daemons.
"""
import argparse
import os
import resource
import sys
import time

import rawclient as rc


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def getinfo_latencies(client, dom, calls):
    payload = dom
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        client.call_ok(rc.PROC_DOMAIN_GET_INFO, payload)
        times.append(time.perf_counter() - t0)
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1e6
    return pick(0.5), pick(0.99), times[-1] * 1e6


def measure(name, sock, pid, clients, calls):
    busy = rc.Client(sock)
    busy.open_connection()
    dom = busy.lookup("test")       # the wire domain, the GET_INFO argument
    getinfo_latencies(busy, dom, calls)     # warm-up, not counted
    alone = getinfo_latencies(busy, dom, calls)
    before = rss_kib(pid)
    held, refused = [], None
    t0 = time.monotonic()
    for i in range(clients):
        c = rc.Client(sock)
        try:
            c.open_connection()
            c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)
        except Exception as e:          # the server's limit: report where
            refused = f"client {i + 1} refused: {e}"
            c.close()
            break
        held.append(c)
    connect_s = time.monotonic() - t0
    time.sleep(1.0)
    after = rss_kib(pid)
    crowded = getinfo_latencies(busy, dom, calls)
    for c in held:
        c.close()
    busy.close()
    return {
        "name": name, "held": len(held), "refused": refused,
        "per_client_kib": (after - before) / max(1, len(held)),
        "rss_before": before, "rss_after": after, "connect_s": connect_s,
        "alone": alone, "crowded": crowded,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("servers", nargs="+", metavar="NAME=SOCKET:PID")
    ap.add_argument("--clients", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=5000)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.clients + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    results = []
    for spec in a.servers:
        name, rest = spec.split("=", 1)
        sock, pid = rest.rsplit(":", 1)
        print(f"{name}: {a.clients} idle clients ...", flush=True)
        results.append(measure(name, sock, int(pid), a.clients, a.calls))
    print()
    print(f"{'server':<10} {'idle held':>9} {'KiB/client':>10} {'RSS MiB':>15}"
          f" {'GetInfo us p50/p99/max alone':>30} {'with the idle clients':>24}")
    for r in results:
        fmt = lambda t: f"{t[0]:.0f}/{t[1]:.0f}/{t[2]:.0f}"
        print(f"{r['name']:<10} {r['held']:>9} {r['per_client_kib']:>10.2f}"
              f" {r['rss_before'] / 1024:>6.1f} -> {r['rss_after'] / 1024:<6.1f}"
              f" {fmt(r['alone']):>30} {fmt(r['crowded']):>24}")
        if r["refused"]:
            print(f"  {r['name']}: stopped at its limit: {r['refused']}")
    print("target: remvirtd <= 2 KiB per idle client at 10,000, and its p50/p99"
          " with them within noise of alone (reported, not judged)")


if __name__ == "__main__":
    sys.exit(main())
