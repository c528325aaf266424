#!/usr/bin/python3
"""Connection, list, storage and host calls of issue 29 on a QEMU
driver, with a directory pool "tp" at POOLDIR (made by the caller,
running) holding a 1 MiB raw volume "v1" that begins "remvirt-peek",
and a running guest "hd" whose disk vda it is.

    host-checks.py URI POOLDIR

Prints each call's result, or its error's code, domain and message, for
test-qemu-calls.sh to compare between libvirtd's QEMU driver and
remvirtd's.  Numbers that move on their own (free memory, KSM's
counters) are printed as their type only.
"""

import os
import sys
import threading

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

conn = libvirt.open(sys.argv[1])
pooldir = sys.argv[2]
XML = ("<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory>"
       "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>")

show("secure", conn.isSecure)
show("defined", lambda: (conn.numOfDefinedDomains(), sorted(conn.listDefinedDomains())))
show("define validate", lambda: conn.defineXMLFlags(XML % "hc1", libvirt.VIR_DOMAIN_DEFINE_VALIDATE).name())
show("define bad flag", lambda: conn.defineXMLFlags(XML % "hc2", 8).name())
show("defined", lambda: (conn.numOfDefinedDomains(), sorted(conn.listDefinedDomains())))
show("undefine", lambda: conn.lookupByName("hc1").undefine())
show("defined", lambda: (conn.numOfDefinedDomains(), sorted(conn.listDefinedDomains())))
show("pool by target", lambda: conn.storagePoolLookupByTargetPath(pooldir).name())
show("pool by target/", lambda: conn.storagePoolLookupByTargetPath(pooldir + "/").name())
show("pool by //target", lambda: conn.storagePoolLookupByTargetPath("/" + pooldir).name())
show("pool by other", lambda: conn.storagePoolLookupByTargetPath(pooldir + "x").name())
vol = conn.storagePoolLookupByName("tp").storageVolLookupByName("v1")
show("vol info", vol.info)
show("vol info flags 0", lambda: vol.infoFlags(0))
show("vol info physical", lambda: vol.infoFlags(libvirt.VIR_STORAGE_VOL_GET_PHYSICAL))
show("vol info bad flag", lambda: vol.infoFlags(2))
show("free 2 MiB pages", lambda: conn.getFreePages([2048], 0, 1, 0))
show("free 1 GiB pages cells 0-7", lambda: conn.getFreePages([1048576], 0, 8, 0))
show("free base pages", lambda: {c: {k: type(v).__name__ for k, v in p.items()}
                                 for c, p in conn.getFreePages([4], 0, 1, 0).items()})
show("free bad page size", lambda: conn.getFreePages([3], 0, 1, 0))
show("free bad cell", lambda: conn.getFreePages([4], 9, 1, 0))
show("memory parameters", lambda: sorted((k, type(v).__name__)
                                         for k, v in conn.getMemoryParameters(0).items()))
scan = conn.getMemoryParameters(0)["shm_pages_to_scan"]
show("set pages to scan (as it is)", lambda: conn.setMemoryParameters({"shm_pages_to_scan": scan}, 0))
show("set a counter", lambda: conn.setMemoryParameters({"shm_full_scans": 1}, 0))
show("set bad flag", lambda: conn.setMemoryParameters({"shm_pages_to_scan": scan}, 1))

hd = conn.lookupByName("hd")
show("block peek", lambda: hd.blockPeek("vda", 0, 12, 0))
show("block peek by path", lambda: hd.blockPeek(pooldir + "/v1", 8, 4, 0))
show("block peek past the end", lambda: hd.blockPeek("vda", 1048570, 16, 0))
show("block peek no disk", lambda: hd.blockPeek("vdz", 0, 4, 0))
# The largest a caller asks for, and peeks from threads at once (remvirtd
# reads them off its loop and answers each when its read is done).
show("block peek 64 KiB", lambda: (lambda b: (len(b), b[:12], b[12:].count(0)))(
    hd.blockPeek("vda", 0, 65536, 0)))


def peeks_at_once():
    offsets = [0, 4, 8, 1048560]
    got = {}
    threads = [threading.Thread(target=lambda o=o: got.__setitem__(o, hd.blockPeek("vda", o, 4, 0)))
               for o in offsets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [got.get(o) for o in offsets]


show("block peeks from 4 threads", peeks_at_once)
show("block stats flags", lambda: sorted((k, type(v).__name__)
                                         for k, v in hd.blockStatsFlags("vda", 0).items()))
show("block stats flags no disk", lambda: hd.blockStatsFlags("vdz", 0))
show("disk errors", lambda: hd.diskErrors(0))
show("cpu stats total", lambda: [sorted((k, type(v).__name__) for k, v in p.items())
                                 for p in hd.getCPUStats(True, 0)])
show("memory peek", lambda: len(hd.memoryPeek(0, 64, libvirt.VIR_MEMORY_PHYSICAL)))
show("memory peek no flag", lambda: hd.memoryPeek(0, 64, 0))
