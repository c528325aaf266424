#!/usr/bin/env python3
"""The domain events a running guest's daemon sends for real actions,
through python3-libvirt's event loop (virEventRegisterDefaultImpl and
domainEventRegisterAny for every event ID), printed one per line with the
values that differ from run to run masked, so that the output for
remvirtd and for libvirtd can be compared.

usage: qemu-events-checks.py URI DOMAIN

DOMAIN is defined and shut off, with a VNC display, an IDE cdrom hdc
with a medium, a virtio disk vda, the guest agent channel and a balloon;
its guest runs the test agent.  This starts it and, in order:
  agent    the guest's agent opens its port: AGENT_LIFECYCLE connected
  metadata DOMAIN_SET_METADATA description (live), title (live and config)
  tunable  vcpupin 0 (live), emulatorpin (live), blkdeviotune vda (live)
  graphics a VNC client connects, initialises (no auth) and leaves
  tray     the cdrom's medium ejected (update-device, live)
  balloon  setmem 80 MiB (live): the last BALLOON_CHANGE's size
then destroys it.
"""
import socket
import sys
import threading
import time
import xml.etree.ElementTree as ET

import libvirt

uri, name = sys.argv[1], sys.argv[2]
libvirt.virEventRegisterDefaultImpl()
lock = threading.Condition()
seen = []


def loop():
    while True:
        libvirt.virEventRunDefaultImpl()


threading.Thread(target=loop, daemon=True).start()
conn = libvirt.open(uri)
dom = conn.lookupByName(name)

NAMES = {getattr(libvirt, n): n[len("VIR_DOMAIN_EVENT_ID_"):] for n in dir(libvirt)
         if n.startswith("VIR_DOMAIN_EVENT_ID_") and n != "VIR_DOMAIN_EVENT_ID_LAST"}
# Lifecycle, reboot, block job and job events are other tests' business.
SKIP = {"LIFECYCLE", "REBOOT", "BLOCK_JOB", "BLOCK_JOB_2", "JOB_COMPLETED",
        "MIGRATION_ITERATION"}


def mask(ev, args):
    if ev == "GRAPHICS":
        phase, local, remote, auth, subject = args
        remote = dict(remote, service="PORT")
        return (phase, sorted(local.items()), sorted(remote.items()), auth, subject)
    return args


def record(ev):
    def cb(conn_, d, *args):
        with lock:
            seen.append((ev, d.name(), mask(ev, args[:-1])))
            lock.notify_all()
    return cb


for eid, ev in sorted(NAMES.items()):
    if ev not in SKIP:
        conn.domainEventRegisterAny(None, eid, record(ev), None)


def wait(what, pred, timeout=180):
    deadline = time.time() + timeout
    with lock:
        while not pred():
            left = deadline - time.time()
            if left <= 0:
                sys.exit(f"qemu-events-checks: timed out waiting for {what}; seen: {seen}")
            lock.wait(left)


def take(what, ev, count=1, pred=lambda e: True):
    """The next count events of kind ev (that pred accepts), once they
    came; others seen meanwhile are printed too, in order, but for the
    balloon's changes while the guest boots and the agent's port: the
    test guest's agent reopens it every second while no host side is
    connected (remvirtd connects for an exchange only, libvirtd stays)."""
    wait(what, lambda: sum(1 for e in seen if e[0] == ev and pred(e)) >= count)
    with lock:
        got = list(seen)
        seen.clear()
    for e in got:
        if e[0] == ev or e[0] not in ("BALLOON_CHANGE", "AGENT_LIFECYCLE"):
            print(what + ":", e[0], e[1], e[2])


dom.create()
# Not connected at the start; connected once the guest's agent runs.
take("agent", "AGENT_LIFECYCLE", pred=lambda e: e[2][0] == libvirt.VIR_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_CONNECTED)
# The balloon settles at its start size (96 MiB).
wait("balloon at boot", lambda: any(e[0] == "BALLOON_CHANGE" and abs(e[2][0] - 98304) <= 1024
                                    for e in seen))
with lock:
    seen.clear()

dom.setMetadata(libvirt.VIR_DOMAIN_METADATA_DESCRIPTION, "events test", None, None,
                libvirt.VIR_DOMAIN_AFFECT_LIVE)
take("metadata", "METADATA_CHANGE")
dom.setMetadata(libvirt.VIR_DOMAIN_METADATA_TITLE, "events", None, None,
                libvirt.VIR_DOMAIN_AFFECT_LIVE | libvirt.VIR_DOMAIN_AFFECT_CONFIG)
take("metadata", "METADATA_CHANGE")

dom.pinVcpuFlags(0, (True,), libvirt.VIR_DOMAIN_AFFECT_LIVE)
take("tunable", "TUNABLE")
dom.pinEmulator((True,), libvirt.VIR_DOMAIN_AFFECT_LIVE)
take("tunable", "TUNABLE")
dom.setBlockIoTune("vda", {"total_bytes_sec": 10485760}, libvirt.VIR_DOMAIN_AFFECT_LIVE)
take("tunable", "TUNABLE")

port = int(ET.fromstring(dom.XMLDesc()).find("devices/graphics").get("port"))
vnc = socket.create_connection(("127.0.0.1", port))
version = vnc.recv(12)
vnc.sendall(version)
ntypes = vnc.recv(1)[0]
types = vnc.recv(ntypes)
assert 1 in types, f"VNC without security type None: {types!r}"
vnc.sendall(b"\x01")
assert vnc.recv(4) == b"\0\0\0\0", "VNC security result"
vnc.sendall(b"\x01")            # ClientInit, shared
vnc.recv(24)                    # ServerInit (its head)
take("graphics", "GRAPHICS", 2)
vnc.close()
take("graphics", "GRAPHICS")

cdrom = "<disk type='file' device='cdrom'><target dev='hdc' bus='ide'/></disk>"
dom.updateDeviceFlags(cdrom, libvirt.VIR_DOMAIN_AFFECT_LIVE)
take("tray", "TRAY_CHANGE", 2)         # opened, then closed empty

dom.setMemoryFlags(80 * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
wait("balloon", lambda: any(e[0] == "BALLOON_CHANGE" and e[2][0] <= 80 * 1024 + 1024
                            for e in seen))
with lock:
    last = [e for e in seen if e[0] == "BALLOON_CHANGE"][-1]
    others = [e for e in seen if e[0] not in ("BALLOON_CHANGE", "AGENT_LIFECYCLE")]
    seen.clear()
for e in others:
    print("balloon:", e[0], e[1], e[2])
print("balloon:", last[0], last[1], "down to 80 MiB" if abs(last[2][0] - 81920) <= 1024
      else last[2])

dom.destroy()
time.sleep(1)
with lock:
    for e in seen:
        if e[0] != "AGENT_LIFECYCLE":
            print("destroy:", e[0], e[1], e[2])
conn.close()
