#!/usr/bin/python3
# Device hotplug as nova and virt-manager wait for it: ROUNDS times, attach
# a virtio disk to the running domain "g" (--live) and wait for its
# DEVICE_ADDED event, then detach it and wait for DEVICE_REMOVED (the
# guest's ACPI eject included).  Prints the milliseconds from each call to
# its event, min / median / max, for bench/run-hotplug.sh.
#
#   hotplug-events.py URI IMAGE [ROUNDS]
import os
import statistics
import sys
import time

import libvirt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
from device_events import DeviceEvents, event_loop     # noqa: E402

uri, image = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
event_loop()
conn = libvirt.open(uri)
dom = conn.lookupByName("g")
events = DeviceEvents(conn, dom)


def timed(call, kind):
    t0 = time.monotonic()
    call()
    e = events.wait(kind, since=t0)
    if not e:
        sys.exit(f"no {kind} event within 60 s")
    return (e[2] - t0) * 1000


xml = (f"<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='{image}'/>"
       "<target dev='vdb' bus='virtio'/></disk>")
ms = {"added": [], "removed": []}
for _ in range(rounds):
    ms["added"].append(timed(lambda: dom.attachDeviceFlags(xml, libvirt.VIR_DOMAIN_AFFECT_LIVE), "added"))
    time.sleep(0.5)     # the guest takes the disk in before it is asked to let go
    ms["removed"].append(timed(lambda: dom.detachDeviceFlags(xml, libvirt.VIR_DOMAIN_AFFECT_LIVE), "removed"))
for kind, v in ms.items():
    print(f"{kind:8s} ms  min {min(v):7.1f}  median {statistics.median(v):7.1f}  max {max(v):7.1f}")
