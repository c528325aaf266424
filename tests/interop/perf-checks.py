#!/usr/bin/python3
"""DOMAIN_SET_PERF_EVENTS as python3-libvirt calls it, against libvirtd or
remvirtd, either driver: flags, events
enabled and disabled in the definition (read back by GET_PERF_EVENTS and
in the XML), and live on a running domain (the QEMU drivers refuse it
where the host has no perf events for them).

    perf-checks.py URI DIR

Prints one line per call (transcript.py) for test-qemu-setters.sh and
test-test-transcripts.sh to compare between the daemons.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import domain_xml, show  # noqa: E402

import libvirt  # noqa: E402

LIVE, CONFIG = libvirt.VIR_DOMAIN_AFFECT_LIVE, libvirt.VIR_DOMAIN_AFFECT_CONFIG
conn = libvirt.open(sys.argv[1])
d = conn.defineXML(domain_xml(conn, "pf"))


def enabled(flags=0):
    return sorted(k for k, v in d.perfEvents(flags).items() if v)


def perf_xml(flags=0):
    return re.findall(r"<event name='[^']*' enabled='[^']*'/>", d.XMLDesc(flags))


show("bad flag", lambda: d.setPerfEvents({"cmt": True}, 8))
show("live, shut off", lambda: d.setPerfEvents({"cmt": True}, LIVE))
show("live and config", lambda: d.setPerfEvents({"cmt": True}, LIVE | CONFIG))
show("enable two", lambda: d.setPerfEvents({"cpu_cycles": True, "instructions": True}, 0))
show("enabled", enabled)
show("in the XML", perf_xml)
show("disable one", lambda: d.setPerfEvents({"instructions": False}, CONFIG))
show("enabled", lambda: enabled(CONFIG))
show("in the XML", perf_xml)
show("start with cpu_cycles", lambda: d.create())
show("disable it", lambda: d.setPerfEvents({"cpu_cycles": False}, 0))
show("start", lambda: d.create())
show("live enable", lambda: d.setPerfEvents({"page_faults": True}, LIVE))
show("live enable cpu_cycles", lambda: d.setPerfEvents({"cpu_cycles": True}, LIVE))
show("live enabled", lambda: enabled(LIVE))
show("config enabled", lambda: enabled(CONFIG))
show("config enable while running", lambda: d.setPerfEvents({"task_clock": True}, CONFIG))
show("config enabled", lambda: enabled(CONFIG))
show("destroy", lambda: d.destroy())
show("enabled", enabled)
show("undefine", lambda: d.undefine())
