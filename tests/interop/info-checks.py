#!/usr/bin/python3
"""What virsh cannot ask of a domain's information calls: flags beyond
virsh's, and the parameter counts.  With a defined, shut off domain "d"
whose interface 52:54:00:11:22:34 is a bridge's.

    info-checks.py URI

Prints each call's result, or its error's code, domain and message, for
test-qemu-info.sh to compare between libvirtd's QEMU driver and remvirtd's.
"""

import os
import sys

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

LIVE, CONFIG = libvirt.VIR_DOMAIN_AFFECT_LIVE, libvirt.VIR_DOMAIN_AFFECT_CONFIG
conn = libvirt.open(sys.argv[1])
d = conn.lookupByName("d")
MAC = "52:54:00:11:22:34"

show("max vcpus", d.maxVcpus)
for t in (None, "qemu", "QEMU", "kvm", "xen"):
    show(f"connection max vcpus {t}", lambda: conn.getMaxVcpus(t))
show("control info", lambda: d.controlInfo(0))
show("control info bad flag", lambda: d.controlInfo(1))
show("iothreads config", lambda: d.ioThreadInfo(CONFIG))
show("iothreads live", lambda: d.ioThreadInfo(LIVE))
show("iothreads bad flag", lambda: d.ioThreadInfo(8))
show("perf config", lambda: sorted(d.perfEvents(CONFIG).items()))
show("perf live", lambda: d.perfEvents(LIVE))
show("perf live and config", lambda: d.perfEvents(LIVE | CONFIG))
show("block info vda", lambda: d.blockInfo("vda"))
show("block info bad flag", lambda: d.blockInfo("vda", 1))
show("sysinfo bad flag", lambda: conn.getSysinfo(1))
show("fsinfo bad flag", lambda: d.fsInfo(1))
show("iface params", lambda: d.interfaceParameters(MAC, 0))
show("iface params config", lambda: d.interfaceParameters(MAC, CONFIG))
show("iface params live", lambda: d.interfaceParameters(MAC, LIVE))
show("iface params live and config", lambda: d.interfaceParameters(MAC, LIVE | CONFIG))
show("iface params unknown", lambda: d.interfaceParameters("vnet77", 0))
show("set iface bad flag", lambda: d.setInterfaceParameters(MAC, {"inbound.average": 5}, 4))
show("set iface peak alone", lambda: d.setInterfaceParameters(MAC, {"inbound.peak": 7}, CONFIG))
show("iface params", lambda: d.interfaceParameters(MAC, 0))
show("set iface floor", lambda: d.setInterfaceParameters(MAC, {"inbound.floor": 9}, CONFIG))
show("iface params", lambda: d.interfaceParameters(MAC, 0))
show("set iface outbound 0", lambda: d.setInterfaceParameters(MAC, {"outbound.average": 0}, CONFIG))
show("iface params", lambda: d.interfaceParameters(MAC, 0))
