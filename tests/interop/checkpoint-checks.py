#!/usr/bin/python3
"""Domain checkpoints as python3-libvirt calls them, against libvirtd or
remvirtd, the test driver or the QEMU driver (told apart by the
connection's type): creation (names, disks, flags), the XML with and
without the domain, lookups, parents, the list calls with their flags,
deletion (CHILDREN, CHILDREN_ONLY, METADATA_ONLY) and the refusals.

    checkpoint-checks.py URI DIR

For QEMU, DIR holds the guest's two qcow2 disks, a.qcow2 and b.qcow2.
Prints one line per call (transcript.py) for test-test-transcripts.sh and
test-qemu-checkpoints.sh to compare between the daemons; creation times
are printed as T.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libvirt  # noqa: E402
from transcript import show  # noqa: E402

conn = libvirt.open(sys.argv[1])
qemu = conn.getType() == "QEMU"

if qemu:
    DOM = ("<domain type='qemu'><name>ckpy</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>"
           "<os><type arch='x86_64' machine='pc'>hvm</type></os><devices>" +
           "".join(f"<disk type='file' device='disk'><driver name='qemu' type='qcow2'/>"
                   f"<source file='{sys.argv[2]}/{f}.qcow2'/><target dev='vd{f}' bus='virtio'/></disk>"
                   for f in "ab") + "</devices></domain>")
else:
    DOM = ("<domain type='test'><name>ckpy</name><memory unit='KiB'>65536</memory>"
           "<vcpu>1</vcpu><os><type>hvm</type></os><devices>"
           "<disk type='file' device='disk'><source file='/ck-a.img'/><target dev='vda' bus='virtio'/></disk>"
           "<disk type='file' device='disk'><source file='/ck-b.img'/><target dev='vdb' bus='virtio'/></disk>"
           "</devices></domain>")
# The QEMU drivers' domain XML differs between the daemons: left out.
WHOLE = libvirt.VIR_DOMAIN_CHECKPOINT_XML_NO_DOMAIN if qemu else 0


def xml(text):
    text = re.sub(r"<uuid>[-0-9a-f]+</uuid>", "<uuid>U</uuid>", text)
    return re.sub(r"<creationTime>\d+</creationTime>", "<creationTime>T</creationTime>", text)


def names(cps):
    return " ".join(sorted(c.getName() for c in cps))


def order(cps):
    return " ".join(c.getName() for c in cps)


def ck(name, disks="", desc=""):
    d = f"<description>{desc}</description>" if desc else ""
    return f"<domaincheckpoint><name>{name}</name>{d}{disks}</domaincheckpoint>"


dom = conn.defineXML(DOM)
show("none yet", lambda: names(dom.listAllCheckpoints(0)))
show("inactive", lambda: dom.checkpointCreateXML(ck("x"), 0))
dom.create()
show("bad create flag", lambda: dom.checkpointCreateXML(ck("x"), 0x100))
show("not xml", lambda: dom.checkpointCreateXML("<domaincheckpoint>", 0))
show("wrong root", lambda: dom.checkpointCreateXML("<domainsnapshot/>", 0))
show("no such disk", lambda: dom.checkpointCreateXML(
    ck("x", "<disks><disk name='vdz'/></disks>"), 0))
show("redefine", lambda: dom.checkpointCreateXML(ck("x"), libvirt.VIR_DOMAIN_CHECKPOINT_CREATE_REDEFINE))
show("c1", lambda: dom.checkpointCreateXML(ck("c1", desc="first &amp; &lt;one&gt;"), 0).getName())
show("c1 again", lambda: dom.checkpointCreateXML(ck("c1"), 0))
show("c2", lambda: dom.checkpointCreateXML(
    ck("c2", "<disks><disk name='vdb' checkpoint='no'/></disks>"), 0).getName())
show("c3", lambda: dom.checkpointCreateXML(
    ck("c3", "<disks><disk name='vda' bitmap='other'/></disks>"), 0).getName())
if qemu:    # (its bitmaps are named after their checkpoint)
    show("c3 again", lambda: dom.checkpointCreateXML(
        ck("c3", "<disks><disk name='vda' bitmap='c3'/></disks>"), 0).getName())
c1 = dom.checkpointLookupByName("c1")
c2 = dom.checkpointLookupByName("c2")
show("c1 xml", lambda: xml(c1.getXMLDesc(WHOLE)))
show("c2 xml no domain", lambda: xml(c2.getXMLDesc(libvirt.VIR_DOMAIN_CHECKPOINT_XML_NO_DOMAIN)))
show("c3 xml secure no domain", lambda: xml(dom.checkpointLookupByName("c3").getXMLDesc(
    libvirt.VIR_DOMAIN_CHECKPOINT_XML_SECURE | libvirt.VIR_DOMAIN_CHECKPOINT_XML_NO_DOMAIN)))
show("xml size", lambda: xml(c2.getXMLDesc(libvirt.VIR_DOMAIN_CHECKPOINT_XML_SIZE |
                                            libvirt.VIR_DOMAIN_CHECKPOINT_XML_NO_DOMAIN)))
show("xml bad flag", lambda: c2.getXMLDesc(0x80))
show("lookup missing", lambda: dom.checkpointLookupByName("nope"))
show("lookup bad flag", lambda: dom.checkpointLookupByName("c1", 1))
show("parent of c2", lambda: c2.getParent().getName())
show("parent of c1", lambda: c1.getParent())
show("parent bad flag", lambda: c2.getParent(1))
show("name", c2.getName)
show("domain", lambda: c2.domain().name())
# c4 under c3; then a second root is impossible (each new one goes under
# the newest), so deleting builds the shapes.
show("c4", lambda: dom.checkpointCreateXML(ck("c4"), 0).getName())
if not qemu:    # (remvirtd's QEMU driver does not count them: docs/compatibility.md)
    show("domains with checkpoints", lambda: sorted(d.name() for d in conn.listAllDomains(
        libvirt.VIR_CONNECT_LIST_DOMAINS_HAS_CHECKPOINT)))
    show("domains without", lambda: "ckpy" in [d.name() for d in conn.listAllDomains(
        libvirt.VIR_CONNECT_LIST_DOMAINS_NO_CHECKPOINT)])
L = libvirt
for label, flags in (("all", 0), ("roots", L.VIR_DOMAIN_CHECKPOINT_LIST_ROOTS),
                     ("leaves", L.VIR_DOMAIN_CHECKPOINT_LIST_LEAVES),
                     ("no leaves", L.VIR_DOMAIN_CHECKPOINT_LIST_NO_LEAVES),
                     ("both leaves", L.VIR_DOMAIN_CHECKPOINT_LIST_LEAVES |
                      L.VIR_DOMAIN_CHECKPOINT_LIST_NO_LEAVES),
                     ("bad flag", 0x40)):
    show(f"list {label}", lambda: names(dom.listAllCheckpoints(flags)))
show("list topological", lambda: order(dom.listAllCheckpoints(L.VIR_DOMAIN_CHECKPOINT_LIST_TOPOLOGICAL)))
for label, flags in (("children", 0), ("descendants", L.VIR_DOMAIN_CHECKPOINT_LIST_DESCENDANTS),
                     ("descendants leaves", L.VIR_DOMAIN_CHECKPOINT_LIST_DESCENDANTS |
                      L.VIR_DOMAIN_CHECKPOINT_LIST_LEAVES),
                     ("topological", L.VIR_DOMAIN_CHECKPOINT_LIST_DESCENDANTS |
                      L.VIR_DOMAIN_CHECKPOINT_LIST_TOPOLOGICAL),
                     ("bad flag", 0x40)):
    show(f"c1 {label}", lambda: names(c1.listAllChildren(flags)))
show("delete bad flag", lambda: c2.delete(0x80))
show("delete both children flags", lambda: c2.delete(
    L.VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN | L.VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY))
show("delete c2", lambda: c2.delete(0))
show("c3's parent now", lambda: dom.checkpointLookupByName("c3").getParent().getName())
show("c5 goes under c4", lambda: dom.checkpointCreateXML(ck("c5"), 0).getParent().getName())
show("delete c3 children only", lambda: dom.checkpointLookupByName("c3").delete(
    L.VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY))
show("after", lambda: names(dom.listAllCheckpoints(0)))
show("c6 goes under c3", lambda: dom.checkpointCreateXML(ck("c6"), 0).getParent().getName())
show("delete c1 metadata only", lambda: c1.delete(L.VIR_DOMAIN_CHECKPOINT_DELETE_METADATA_ONLY))
show("roots now", lambda: names(dom.listAllCheckpoints(L.VIR_DOMAIN_CHECKPOINT_LIST_ROOTS)))
show("deleted handle", lambda: c1.getXMLDesc(0))
show("delete c3 and children", lambda: dom.checkpointLookupByName("c3").delete(
    L.VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN))
show("none left", lambda: names(dom.listAllCheckpoints(0)))
show("no name", lambda: dom.checkpointCreateXML("<domaincheckpoint/>", 0).getName().isdigit())
for cp in dom.listAllCheckpoints(0):
    cp.delete(0)
show("c7", lambda: dom.checkpointCreateXML(ck("c7"), 0).getName())
show("quiesce", lambda: dom.checkpointCreateXML(ck("c8"), L.VIR_DOMAIN_CHECKPOINT_CREATE_QUIESCE).getName())
dom.destroy()
show("inactive list", lambda: names(dom.listAllCheckpoints(0)))
show("inactive delete", lambda: dom.checkpointLookupByName("c7").delete(0))
show("undefine with checkpoints", lambda: dom.undefine())
show("undefine flag", lambda: dom.undefineFlags(L.VIR_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA))
show("gone", lambda: conn.lookupByName("ckpy"))
