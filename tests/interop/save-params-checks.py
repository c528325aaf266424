#!/usr/bin/python3
"""DOMAIN_SAVE_PARAMS and DOMAIN_RESTORE_PARAMS as python3-libvirt calls
them, against libvirtd or remvirtd: the parameters' check (an unknown
one), the flags', a save without "file" (a managed save), a save to
a file and its restore (paused, running), a restore without "file".  The
test drivers have neither call (NO_SUPPORT on both daemons).

    save-params-checks.py URI DIR [managed]

Prints one line per call (transcript.py) for test-qemu-setters.sh and
test-test-transcripts.sh to compare between the daemons.  With "managed",
only the save without "file" (a managed save) and the start after it:
libvirtd 9.0's QEMU driver returns from that save with the domain still
locked, and every later call on the domain waits for ever, so that part
is remvirtd's alone.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import domain_xml, show  # noqa: E402

import libvirt  # noqa: E402

RUNNING, PAUSED = libvirt.VIR_DOMAIN_SAVE_RUNNING, libvirt.VIR_DOMAIN_SAVE_PAUSED
conn = libvirt.open(sys.argv[1])
qemu = conn.getType() == "QEMU"
image = os.path.join(sys.argv[2], "sp.img")
if os.path.exists(image):
    os.unlink(image)
if qemu:
    d = conn.defineXML(domain_xml(conn, "sp"))
    d.create()
else:
    d = conn.lookupByName("test")


def settle(want):
    for _ in range(100 if qemu else 0):
        if d.state()[0] == want:
            break
        time.sleep(0.1)
    return d.state()


if not qemu:
    # Neither test driver has them: the refusals only.
    show("save", lambda: d.saveParams({"file": image}, 0))
    show("restore", lambda: conn.restoreParams({"file": image}, 0))
    sys.exit(0)
if sys.argv[3:] == ["managed"]:
    show("save, no file (managed)", lambda: d.saveParams({}, 0))
    show("state", lambda: settle(libvirt.VIR_DOMAIN_SHUTOFF))
    show("managed save image", lambda: d.hasManagedSaveImage(0))
    show("start", lambda: d.create())
    show("state", lambda: settle(libvirt.VIR_DOMAIN_RUNNING))
    show("destroy", lambda: d.destroy())
    if qemu:
        d.undefine()
    sys.exit(0)
show("save, unknown parameter", lambda: d.saveParams({"file": image, "bogus": "x"}, 0))
show("save, running and paused", lambda: d.saveParams({"file": image}, RUNNING | PAUSED))
show("save, bad flag", lambda: d.saveParams({"file": image}, 8))
show("save to a file", lambda: d.saveParams({"file": image}, PAUSED))
show("state", lambda: settle(libvirt.VIR_DOMAIN_SHUTOFF))
show("restore, no file", lambda: conn.restoreParams({}, 0))
show("restore, unknown parameter", lambda: conn.restoreParams({"file": image, "x": "y"}, 0))
show("restore, running and paused", lambda: conn.restoreParams({"file": image}, RUNNING | PAUSED))
show("restore, paused", lambda: conn.restoreParams({"file": image}, 0))
# (The state only: libvirtd says paused (migration), remvirtd paused
# (user), as after DOMAIN_RESTORE_FLAGS.)
show("state", lambda: settle(libvirt.VIR_DOMAIN_PAUSED)[0])
show("destroy", lambda: d.destroy())
show("restore, running", lambda: conn.restoreParams({"file": image}, RUNNING))
show("state", lambda: settle(libvirt.VIR_DOMAIN_RUNNING))
if qemu:
    d.destroy()
    d.undefine()
