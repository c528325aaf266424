#!/usr/bin/python3
"""Block jobs on a running QEMU guest, through python3-libvirt.

    blockjob-checks.py URI DIR

The guest g runs with vda on DIR/top.qcow2 over DIR/mid.qcow2 over
DIR/base.img.  Prints a transcript (each call's result or error, the
BLOCK_JOB and BLOCK_JOB_2 events that came, the disk's source live and in
the definition) that test-qemu-blockjobs.sh compares between libvirtd's
QEMU driver and remvirtd's, DIR masked.
"""

import os
import re
import sys
import threading
import time

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

uri, tmp = sys.argv[1], sys.argv[2]
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
events = []
lock = threading.Lock()


def on_event(kind):
    def cb(c, d, disk, typ, status, opaque):
        with lock:
            events.append(f"{kind} {d.name()} {disk.replace(tmp, 'DIR')} type {typ} status {status}")
    return cb


conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB, on_event("BLOCK_JOB"), None)
conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB_2, on_event("BLOCK_JOB_2"), None)


def loop():
    while True:
        libvirt.virEventRunDefaultImpl()


threading.Thread(target=loop, daemon=True).start()
dom = conn.lookupByName("g")


def masked(fn):
    def run():
        return str(fn()).replace(tmp, "DIR")
    return run


def wait_event(status, timeout=20):
    """Print the events that came until one with this status (both kinds)."""
    end = time.time() + timeout
    while time.time() < end:
        with lock:
            if sum(1 for e in events if e.endswith(f"status {status}")) >= 2:
                got = list(events)
                events.clear()
                break
        time.sleep(0.05)
    else:
        with lock:
            got = list(events)
            events.clear()
        got.append(f"(no status {status} event in {timeout} s)")
    for e in sorted(got):
        print(f"  event: {e}", flush=True)


def source(flags=0):
    xml = dom.XMLDesc(flags)
    disk = re.search(r"<disk[^>]*>.*?<target dev='vda'", xml, re.S).group(0)
    return re.search(r"<source file='([^']*)'", disk).group(1).replace(tmp, "DIR")


def info():
    i = dom.blockJobInfo("vda", 0)
    return {k: i[k] for k in ("type", "bandwidth")} if i else i


def show_sources():
    show("live source", source)
    show("defined source", lambda: source(libvirt.VIR_DOMAIN_XML_INACTIVE))


dest = f"{tmp}/copy.qcow2"
dest_xml = f"<disk type='file'><source file='{dest}'/><driver type='qcow2'/></disk>"

# Errors first: no job, unknown disk, bad flags.
show("job info, no job", lambda: dom.blockJobInfo("vda", 0))
show("abort, no job", lambda: dom.blockJobAbort("vda", 0))
show("set speed, no job", lambda: dom.blockJobSetSpeed("vda", 1, 0))
show("job info, unknown disk", lambda: dom.blockJobInfo("vdz", 0))
show("pull, unknown disk", lambda: dom.blockPull("vdz", 0, 0))
show("resize, unknown disk", lambda: dom.blockResize("vdz", 1024, 0))
show("commit active without flag", lambda: dom.blockCommit("vda", None, None, 0, 0))

# Resize: KiB, then bytes.


def capacity():
    stats = conn.domainListGetStats([dom], libvirt.VIR_DOMAIN_STATS_BLOCK)[0][1]
    return stats["block.0.capacity"]


show("resize 16 MiB (KiB)", lambda: dom.blockResize("vda", 16384, 0))
show("capacity", capacity)
show("resize 20 MiB (bytes)", lambda: dom.blockResize("vda", 20 << 20, libvirt.VIR_DOMAIN_BLOCK_RESIZE_BYTES))
show("capacity", capacity)

# Inactive commit: mid into base; then the active layer into mid, pivoted.
show("commit mid into base", lambda: dom.blockCommit("vda", f"{tmp}/base.img", f"{tmp}/mid.qcow2", 0, 0))
wait_event(0)
show("commit active (shallow)", lambda: dom.blockCommit(
    "vda", None, None, 0, libvirt.VIR_DOMAIN_BLOCK_COMMIT_ACTIVE | libvirt.VIR_DOMAIN_BLOCK_COMMIT_SHALLOW))
wait_event(3)
show("job info, ready", info)
show("pull while a job runs", lambda: dom.blockPull("vda", 0, 0))
show("abort pivot", lambda: dom.blockJobAbort("vda", libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT))
wait_event(0)
show_sources()

# Copy: refused for a persistent domain unless the job is transient;
# finished without a pivot, then again with one.
params = {libvirt.VIR_DOMAIN_BLOCK_COPY_BANDWIDTH: 512 << 20}
TRANSIENT = libvirt.VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB
show("copy, persistent domain", lambda: dom.blockCopy("vda", dest_xml, params, 0))
show("copy, finish", lambda: dom.blockCopy("vda", dest_xml, params, TRANSIENT))
wait_event(3)
show("copy again while one runs", lambda: dom.blockCopy("vda", dest_xml, {}, TRANSIENT))
show("job info", info)
show("set speed 100 MiB/s", lambda: dom.blockJobSetSpeed("vda", 100, 0))
show("job info", info)
show("abort (finish)", lambda: dom.blockJobAbort("vda", 0))
wait_event(2)
show_sources()
show("copy to an existing file", lambda: dom.blockCopy("vda", dest_xml, params, TRANSIENT))
dest = f"{tmp}/copy2.qcow2"
dest_xml = dest_xml.replace("copy.qcow2", "copy2.qcow2")
show("copy, pivot", lambda: dom.blockCopy("vda", dest_xml, params, libvirt.VIR_DOMAIN_BLOCK_COPY_SHALLOW
                                          | TRANSIENT))
wait_event(3)
show("abort pivot async", lambda: dom.blockJobAbort(
    "vda", libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT | libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_ASYNC))
wait_event(0)
show_sources()

# Pull base.img into copy.qcow2 (rebase without COPY is a pull).
show("rebase (pull)", lambda: dom.blockRebase("vda", None, 0, 0))
wait_event(0)
show("pivot a finished pull", lambda: dom.blockJobAbort("vda", libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT))

# Rebase with COPY: refused while the domain is persistent; then, as
# nova swaps a volume, the domain undefined and a raw copy pivoted.
raw = f"{tmp}/copy.raw"
show("rebase copy, persistent domain", lambda: dom.blockRebase(
    "vda", raw, 0, libvirt.VIR_DOMAIN_BLOCK_REBASE_COPY))
show("undefine", lambda: dom.undefine())
show("rebase copy raw", lambda: dom.blockRebase(
    "vda", raw, 0, libvirt.VIR_DOMAIN_BLOCK_REBASE_COPY | libvirt.VIR_DOMAIN_BLOCK_REBASE_COPY_RAW))
wait_event(3)
show("abort pivot", lambda: dom.blockJobAbort("vda", libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT))
wait_event(0)
show("live source", source)
show("pull, no backing file", lambda: dom.blockPull("vda", 0, 0))
wait_event(0)
