#!/usr/bin/python3
"""NETWORK_DEFINE_XML_FLAGS and NETWORK_CREATE_XML_FLAGS (virsh net-define
--validate and net-create --validate call them) as python3-libvirt calls
them, against libvirtd or remvirtd, either driver: no flags, VALIDATE, an
unknown flag, XML that is not a network, and what was defined or started.

    network-flags-checks.py URI DIR

Prints one line per call (transcript.py) for the tests to compare between
the daemons.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

import libvirt  # noqa: E402

VALIDATE = 1
conn = libvirt.open(sys.argv[1])
# (Created on a host bridge that exists: rvnfbr0, made by the QEMU test.)
XML = "<network><name>{}</name><forward mode='bridge'/><bridge name='{}'/></network>"

show("define, no flags", lambda: conn.networkDefineXMLFlags(XML.format("nf1", "rvnf1"), 0).name())
show("define, validate", lambda: conn.networkDefineXMLFlags(XML.format("nf2", "rvnf2"), VALIDATE).name())
show("define, bad flag", lambda: conn.networkDefineXMLFlags(XML.format("nf3", "rvnf3"), 2))
show("define, not a network", lambda: conn.networkDefineXMLFlags("<domain/>", VALIDATE))
show("defined", lambda: sorted(n.name() for n in conn.listAllNetworks(
    libvirt.VIR_CONNECT_LIST_NETWORKS_PERSISTENT) if n.name().startswith("nf")))
show("inactive", lambda: conn.networkLookupByName("nf2").isActive())
for name in ("nf1", "nf2"):
    show("undefine", lambda: conn.networkLookupByName(name).undefine())
show("create, bad flag", lambda: conn.networkCreateXMLFlags(XML.format("nf4", "rvnfbr0"), 2))
show("create, validate", lambda: conn.networkCreateXMLFlags(XML.format("nf5", "rvnfbr0"), VALIDATE).name())
show("created", lambda: [(n.isActive(), n.isPersistent(), n.bridgeName())
                         for n in [conn.networkLookupByName("nf5")]])
show("destroy", lambda: conn.networkLookupByName("nf5").destroy())
show("create, no flags", lambda: conn.networkCreateXMLFlags(XML.format("nf6", "rvnfbr0"), 0).name())
show("destroy", lambda: conn.networkLookupByName("nf6").destroy())
show("gone", lambda: conn.networkLookupByName("nf6"))
