#!/usr/bin/python3
# Device hotplug as nova and virt-manager wait for it: ROUNDS times, attach
# a virtio disk to the running domain "g" (--live) and wait for its
# DEVICE_ADDED event, then detach it and wait for DEVICE_REMOVED (the
# guest's ACPI eject included).  Prints the milliseconds from each call to
# its event, min / median / max, for bench/run-hotplug.sh.
#
#   hotplug-events.py URI IMAGE [ROUNDS]
import statistics
import sys
import threading
import time

import libvirt

uri, image = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
dom = conn.lookupByName("g")
seen = []
cond = threading.Condition()


def on_event(kind):
    def cb(conn, dom, alias, opaque):
        with cond:
            seen.append((kind, time.monotonic()))
            cond.notify_all()
    return cb


conn.domainEventRegisterAny(dom, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_ADDED, on_event("added"), None)
conn.domainEventRegisterAny(dom, libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED, on_event("removed"), None)
threading.Thread(target=lambda: [libvirt.virEventRunDefaultImpl() for _ in iter(int, 1)],
                 daemon=True).start()


def timed(call, kind):
    with cond:
        del seen[:]
    t0 = time.monotonic()
    call()
    with cond:
        if not cond.wait_for(lambda: any(k == kind for k, _ in seen), 60):
            sys.exit(f"no {kind} event within 60 s")
        return (next(t for k, t in seen if k == kind) - t0) * 1000


xml = (f"<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='{image}'/>"
       "<target dev='vdb' bus='virtio'/></disk>")
ms = {"added": [], "removed": []}
for _ in range(rounds):
    ms["added"].append(timed(lambda: dom.attachDeviceFlags(xml, libvirt.VIR_DOMAIN_AFFECT_LIVE), "added"))
    time.sleep(0.5)     # the guest takes the disk in before it is asked to let go
    ms["removed"].append(timed(lambda: dom.detachDeviceFlags(xml, libvirt.VIR_DOMAIN_AFFECT_LIVE), "removed"))
for kind, v in ms.items():
    print(f"{kind:8s} ms  min {min(v):7.1f}  median {statistics.median(v):7.1f}  max {max(v):7.1f}")
