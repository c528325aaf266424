#!/usr/bin/env python3
"""Load for bench/run-loop-stalls.sh and bench/run-slow-disk.sh: a remvirtd
QEMU driver kept busy one way for a while, through python3-libvirt.

  loop-stall-load.py URI churn  [--threads N] [--seconds S]
  loop-stall-load.py URI storm  [--seconds S] --dir DIR
  loop-stall-load.py URI upload [--threads N] [--seconds S] --dir DIR [--mib M]
  loop-stall-load.py URI getinfo --domain NAME [--calls N] [--seconds S]
  loop-stall-load.py URI tls --tls-uri TLS-URI [--threads N] [--seconds S]

churn: N threads (default 10), a connection each, each defining, starting,
destroying and undefining a TCG guest of its own over and over.
storm: a thread per family (domain, network, pool, volume, secret,
nwfilter, snapshot), each defining and undefining objects of its family
over and over; pools, volumes and the snapshots' qcow2 disk in DIR.
upload: N threads (default 2) each uploading M MiB (default 16) into a
volume of a pool in DIR over and over (vol-upload through a stream).
tls: N threads (default 4) each opening a connection over TLS (a full
handshake, the client's certificate checked), asking the host name and
closing it, over and over.
getinfo: GetInfo calls on one domain (a connection of its own), N of them
and for S seconds at least, then their latency p50/p99/max in microseconds.
SIGINT or SIGTERM ends a load before its time.  Each load prints what it did ("storm: 1234 operations (domain 180, ...)");
an error ends it with status 1.
"""
import argparse
import os
import signal
import subprocess
import sys
import threading
import time

import libvirt

libvirt.registerErrorHandler(lambda *_: None, None)

# SIGINT or SIGTERM ends a load early, as its time running out does.
stopped = threading.Event()


def going(until):
    return time.monotonic() < until and not stopped.is_set()


def guest_xml(name, disk=None):
    devices = ("<disk type='file' device='disk'><driver name='qemu' type='qcow2'/>"
               "<source file='%s'/><target dev='vda' bus='virtio'/></disk>" % disk
               if disk else "")
    return ("<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory>"
            "<vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>"
            "<devices>%s</devices></domain>" % (name, devices))


def churn(conn, i, until, count):
    name = "stall-churn-%d" % i
    while going(until):
        dom = conn.defineXML(guest_xml(name))
        dom.create()
        dom.destroy()
        dom.undefine()
        count["guest cycles"] += 1


def storm_family(conn, family, directory, until, count):
    n = 0
    pool = None
    if family == "volume":
        path = os.path.join(directory, "storm-vols")
        os.makedirs(path, exist_ok=True)
        pool = conn.storagePoolCreateXML(
            "<pool type='dir'><name>storm-vols</name><target><path>%s</path></target></pool>"
            % path, 0)
    if family == "snapshot":
        # An internal snapshot of a shut-off guest needs a qcow2 disk.
        disk = os.path.join(directory, "snap.qcow2")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", disk, "16M"], check=True)
        dom = conn.defineXML(guest_xml("stall-snap", disk))
    try:
        while going(until):
            n += 1
            name = "storm-%s-%d" % (family, n)
            if family == "domain":
                conn.defineXML(guest_xml(name)).undefine()
            elif family == "network":
                conn.networkDefineXML("<network><name>%s</name></network>" % name).undefine()
            elif family == "pool":
                path = os.path.join(directory, name)
                conn.storagePoolDefineXML(
                    "<pool type='dir'><name>%s</name><target><path>%s</path></target></pool>"
                    % (name, path), 0).undefine()
            elif family == "volume":
                pool.createXML("<volume><name>%s</name><capacity unit='KiB'>64</capacity>"
                               "<target><format type='raw'/></target></volume>" % name,
                               0).delete(0)
            elif family == "secret":
                conn.secretDefineXML(
                    "<secret ephemeral='no' private='no'><usage type='volume'>"
                    "<volume>/storm/%s</volume></usage></secret>" % name, 0).undefine()
            elif family == "nwfilter":
                conn.nwfilterDefineXML(
                    "<filter name='%s'><rule action='drop' direction='in' priority='500'>"
                    "<all/></rule></filter>" % name).undefine()
            elif family == "snapshot":
                dom.snapshotCreateXML("<domainsnapshot><name>%s</name></domainsnapshot>"
                                      % name, 0).delete(0)
            count[family] += 1
    finally:
        if pool is not None:
            pool.destroy()
        if family == "snapshot":
            dom.undefine()


def upload(conn, i, directory, mib, until, count):
    path = os.path.join(directory, "upload-%d" % i)
    os.makedirs(path, exist_ok=True)
    pool = conn.storagePoolCreateXML(
        "<pool type='dir'><name>upload-%d</name><target><path>%s</path></target></pool>"
        % (i, path), 0)
    size = mib << 20
    vol = pool.createXML("<volume><name>v</name><capacity unit='B'>%d</capacity>"
                         "<target><format type='raw'/></target></volume>" % size, 0)
    chunk = os.urandom(256 << 10)
    try:
        while going(until):
            st = conn.newStream(0)
            vol.upload(st, 0, size, 0)
            sent = 0
            while sent < size:
                sent += st.send(chunk[:min(len(chunk), size - sent)])
            st.finish()
            count["uploads"] += 1
            count["MiB"] += mib
    finally:
        vol.delete(0)
        pool.destroy()


def tls_connect(conn, uri, until, count):
    while going(until):
        c = libvirt.open(uri)
        c.getHostname()
        c.close()
        count["handshakes"] += 1


def run_threads(uri, targets):
    """targets: (function, args) run each in a thread with a connection of its own."""
    errors = []

    def one(fn, args):
        try:
            conn = libvirt.open(uri)
            try:
                fn(conn, *args)
            finally:
                conn.close()
        except Exception as e:  # reported, and the status says so
            errors.append("%s: %s" % (fn.__name__, e))

    threads = [threading.Thread(target=one, args=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        # With a timeout: a signal taken by another thread runs its handler
        # only once the main thread wakes.
        while t.is_alive():
            t.join(0.1)
    return errors


def getinfo(uri, name, calls, seconds):
    conn = libvirt.open(uri)
    dom = conn.lookupByName(name)
    lat = []
    until = time.monotonic() + seconds
    while len(lat) < calls or time.monotonic() < until:
        t0 = time.perf_counter()
        dom.info()
        lat.append((time.perf_counter() - t0) * 1e6)
    lat.sort()
    print("getinfo: %d calls, p50 %.1f p99 %.1f max %.1f us"
          % (calls, lat[len(lat) // 2], lat[int(len(lat) * 0.99)], lat[-1]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("uri")
    p.add_argument("load", choices=["churn", "storm", "upload", "getinfo", "tls"])
    p.add_argument("--threads", type=int)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--dir")
    p.add_argument("--mib", type=int, default=16)
    p.add_argument("--domain")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--tls-uri")
    a = p.parse_args()
    if a.load == "getinfo":
        getinfo(a.uri, a.domain, a.calls, a.seconds)
        return 0
    until = time.monotonic() + a.seconds
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    families = ["domain", "network", "pool", "volume", "secret", "nwfilter", "snapshot"]
    count = {}
    if a.load == "churn":
        n = a.threads or 10
        count["guest cycles"] = 0
        targets = [(churn, (i, until, count)) for i in range(n)]
    elif a.load == "tls":
        count["handshakes"] = 0
        targets = [(tls_connect, (a.tls_uri, until, count)) for i in range(a.threads or 4)]
    elif a.load == "storm":
        for f in families:
            count[f] = 0
        targets = [(storm_family, (f, a.dir, until, count)) for f in families]
    else:
        n = a.threads or 2
        count["uploads"] = count["MiB"] = 0
        targets = [(upload, (i, a.dir, a.mib, until, count)) for i in range(n)]
    t0 = time.monotonic()
    errors = run_threads(a.uri, targets)
    total = sum(v for k, v in count.items() if k != "MiB")
    print("%s: %d operations in %.1f s (%s)" % (a.load, total, time.monotonic() - t0,
          ", ".join("%s %d" % kv for kv in count.items())))
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
