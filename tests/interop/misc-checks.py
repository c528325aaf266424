#!/usr/bin/python3
"""The QEMU driver's smaller calls as python3-libvirt makes them, for
test-qemu-misc-calls.sh to compare between libvirtd and remvirtd: the
arguments virsh does not send (flags, states, vcpu maps, lengths),
GET_SECURITY_LABEL_LIST shut off and running, XML_FROM_NATIVE.

    misc-checks.py URI DIR   (DIR: an empty directory for a pool)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import domain_xml, show  # noqa: E402

import libvirt  # noqa: E402

conn = libvirt.open(sys.argv[1])
d = conn.defineXML(domain_xml(conn, "mc").replace("<vcpu>1</vcpu>", "<vcpu current='1'>2</vcpu>"))
show("labels, shut off", lambda: d.securityLabelList())
show("setvcpu bad flag", lambda: d.setVcpu("1", 1, 8))
show("setvcpu state 2", lambda: d.setVcpu("1", 2, 0))
show("setvcpu state -1", lambda: d.setVcpu("1", -1, 0))
show("setvcpu ''", lambda: d.setVcpu("", 1, 0))
show("setvcpu '1-'", lambda: d.setVcpu("1-", 1, 0))
show("setvcpu '^0'", lambda: d.setVcpu("^0", 1, 0))
show("setvcpu '0-1,^0,^1'", lambda: d.setVcpu("0-1,^0,^1", 1, 0))
show("setvcpu 99999999", lambda: d.setVcpu("99999999", 1, 0))
show("dirty rate bad flag", lambda: d.startDirtyRateCalc(1, 16))
show("dirty rate -1", lambda: d.startDirtyRateCalc(-1, 0))
show("dirty rate 61", lambda: d.startDirtyRateCalc(61, 0))
show("dirty rate, shut off", lambda: d.startDirtyRateCalc(1, 0))
show("dirty rate bitmap and ring", lambda: d.startDirtyRateCalc(1, 3))
show("dirty rate bitmap 0 s", lambda: d.startDirtyRateCalc(0, 1))
show("dirty rate bitmap, shut off", lambda: d.startDirtyRateCalc(1, 1))
show("dirty rate ring, shut off", lambda: d.startDirtyRateCalc(1, 2))
xml = d.XMLDesc(0)
show("to native bad flag", lambda: conn.domainXMLToNative("qemu-argv", xml, 1))
show("to native xen-xl", lambda: conn.domainXMLToNative("xen-xl", xml, 0))
show("to native no name", lambda: conn.domainXMLToNative("qemu-argv", "<domain type='qemu'/>", 0))
show("from native qemu-argv", lambda: conn.domainXMLFromNative("qemu-argv", "/usr/bin/qemu-system-x86_64", 0))
show("from native bogus", lambda: conn.domainXMLFromNative("bogus", "x", 0))
pool = conn.storagePoolCreateXML("<pool type='dir'><name>mcp</name><target><path>%s</path></target></pool>"
                                  % sys.argv[2], 0)
vol = pool.createXML("<volume><name>w</name><capacity>65536</capacity></volume>", 0)
for algorithm, flags in [(0, 1), (10, 0), (-1, 0), (9, 0), (1, 0), (0, 0)]:
    show(f"wipe pattern {algorithm} flags {flags}", lambda: vol.wipePattern(algorithm, flags))
show("wipe flags 1", lambda: vol.wipe(1))
show("pool destroy", lambda: pool.destroy())
show("start", lambda: d.create())
show("labels, running", lambda: d.securityLabelList())
show("label", lambda: d.securityLabel())
show("setvcpu 0 off, live", lambda: d.setVcpu("0", 0, libvirt.VIR_DOMAIN_AFFECT_LIVE))
show("setvcpu 0 on, live", lambda: d.setVcpu("0", 1, libvirt.VIR_DOMAIN_AFFECT_LIVE))
show("setvcpu 2 on, live", lambda: d.setVcpu("2", 1, libvirt.VIR_DOMAIN_AFFECT_LIVE))
show("destroy", lambda: d.destroy())
show("undefine", lambda: d.undefine())
