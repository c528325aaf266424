#!/usr/bin/python3
"""DOMAIN_RENAME as python3-libvirt calls it, against libvirtd or remvirtd,
the QEMU driver or the test driver (told apart by the connection's type):
the refusals (flags, itself, a name taken, '/', running, transient, managed
save image, snapshots), the rename and what follows it, and the lifecycle
events.

    rename-checks.py URI DIR

Prints one line per call (transcript.py) for test-qemu-rename.sh and
test-test-transcripts.sh to compare between the daemons.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import domain_xml, open_recording, show  # noqa: E402

conn, finish = open_recording(sys.argv[1])
qemu = conn.getType() == "QEMU"



a = conn.defineXML(domain_xml(conn, "ra"))
conn.defineXML(domain_xml(conn, "rb"))
show("bad flag", lambda: a.rename("rz", 1))
show("to itself", lambda: a.rename("ra", 0))
show("name taken", lambda: a.rename("rb", 0))
show("slash", lambda: a.rename("r/z", 0))
show("empty", lambda: a.rename("", 0))
a.setAutostart(1)
show("rename", lambda: a.rename("rc", 0))
show("handle's name", a.name)
show("old name", lambda: conn.lookupByName("ra").name())
c = conn.lookupByName("rc")
show("new name", c.name)
show("same uuid", lambda: c.UUIDString() == a.UUIDString())
show("autostart kept", c.autostart)
show("name in the XML", lambda: "<name>rc</name>" in c.XMLDesc(0))
show("persistent", c.isPersistent)
show("old name free again", lambda: conn.defineXML(domain_xml(conn, "ra")).name())
show("back", lambda: c.rename("rd", 0))
show("list", lambda: sorted(d.name() for d in conn.listAllDomains(0) if d.name().startswith("r")))

uuid = c.UUIDString()
c = conn.lookupByUUIDString(uuid)
c.create()
show("running", lambda: c.rename("re", 0))
c.suspend()
show("paused", lambda: c.rename("re", 0))
c.destroy()
t = conn.createXML(domain_xml(conn, "rt"), 0)
show("transient", lambda: t.rename("ru", 0))
t.destroy()
c.create()
c.managedSave(0)
show("managed save image", lambda: c.rename("re", 0))
c = conn.lookupByUUIDString(uuid)
show("name now", c.name)
c.managedSaveRemove(0)
if not qemu:
    # (The QEMU driver's snapshot of a diskless guest: test-qemu-rename.sh.)
    c.snapshotCreateXML("<domainsnapshot><name>s1</name></domainsnapshot>", 0)
    show("with a snapshot", lambda: c.rename("rf", 0))
    c = conn.lookupByUUIDString(uuid)
    show("snapshot kept", lambda: c.snapshotListNames(0))
show("undefine", lambda: c.undefineFlags(0 if qemu else 3))
finish()
