#!/usr/bin/python3
"""One block copy of a disk to pivot, through python3-libvirt.

    blockcopy_pivot.py URI DOMAIN DISK

The disk's source is FILE.a.img or FILE.b.img: it is copied (raw, full,
a transient job) to the other name, which is removed first; once the
job is READY (the BLOCK_JOB_2 event) the copy is pivoted to
(BLOCK_JOB_ABORT with PIVOT, waited for).  Prints the seconds from the
call to the pivot's answer.  bench/run-blockcopy.sh runs it.
"""

import os
import re
import sys
import threading
import time

import libvirt

uri, name, disk = sys.argv[1:4]
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
dom = conn.lookupByName(name)
ready = threading.Event()


def on_job(c, d, dst, typ, status, opaque):
    if dst == disk and status == libvirt.VIR_DOMAIN_BLOCK_JOB_READY:
        ready.set()


conn.domainEventRegisterAny(dom, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB_2, on_job, None)
threading.Thread(target=lambda: [libvirt.virEventRunDefaultImpl() for _ in iter(int, 1)], daemon=True).start()
xml = dom.XMLDesc(0)
block = next(b for b in re.findall(r"<disk .*?</disk>", xml, re.S) if f"<target dev='{disk}'" in b)
source = re.search(r"<source file='([^']*)'", block).group(1)
dest = source[:-5] + ("b" if source.endswith(".a.img") else "a") + ".img"
if os.path.exists(dest):
    os.unlink(dest)
t0 = time.monotonic()
dom.blockCopy(disk, f"<disk type='file'><source file='{dest}'/><driver type='raw'/></disk>", {},
              libvirt.VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB)
if not ready.wait(600):
    sys.exit("no READY event in 600 s")
dom.blockJobAbort(disk, libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT)
print(f"{time.monotonic() - t0:.3f}")
