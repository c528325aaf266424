#!/usr/bin/python3
"""DOMAIN_SET_LIFECYCLE_ACTION as python3-libvirt calls it, against
libvirtd or remvirtd, the QEMU driver or the test driver (told apart by
the connection's type): the refusals (type, action, a core dump on
power-off or reboot, flags, live on a shut-off domain, config on a
transient one), the actions in the definition and in the running domain,
and (QEMU) what a reset does once on_reboot is destroy.

    lifecycle-checks.py URI DIR

Prints one line per call (transcript.py) for test-qemu-lifecycle-action.sh
and test-test-transcripts.sh to compare between the daemons.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import domain_xml, show  # noqa: E402

import libvirt  # noqa: E402

LIVE, CONFIG = libvirt.VIR_DOMAIN_AFFECT_LIVE, libvirt.VIR_DOMAIN_AFFECT_CONFIG
POWEROFF, REBOOT, CRASH = 0, 1, 2
DESTROY, RESTART, RENAME_RESTART, PRESERVE, CORE_DESTROY, CORE_RESTART = range(6)
conn = libvirt.open(sys.argv[1])
qemu = conn.getType() == "QEMU"



def actions(dom, flags=0):
    return " ".join(re.findall(r"<on_\w+>[\w-]+<", dom.XMLDesc(flags)))


d = conn.defineXML(domain_xml(conn, "lc"))
show("actions", lambda: actions(d))
show("bad type", lambda: d.setLifecycleAction(3, DESTROY, 0))
show("bad action", lambda: d.setLifecycleAction(POWEROFF, 6, 0))
show("coredump on poweroff", lambda: d.setLifecycleAction(POWEROFF, CORE_DESTROY, 0))
show("coredump on reboot", lambda: d.setLifecycleAction(REBOOT, CORE_RESTART, 0))
show("bad flag", lambda: d.setLifecycleAction(CRASH, DESTROY, 4))
show("live, shut off", lambda: d.setLifecycleAction(CRASH, DESTROY, LIVE))
if not qemu:
    # (remvirtd's QEMU driver makes no core dump on a crash: refused there.)
    show("crash coredump-restart", lambda: d.setLifecycleAction(CRASH, CORE_RESTART, 0))
show("poweroff preserve", lambda: d.setLifecycleAction(POWEROFF, PRESERVE, CONFIG))
show("reboot destroy", lambda: d.setLifecycleAction(REBOOT, DESTROY, 0))
show("actions", lambda: actions(d))
show("reboot restart", lambda: d.setLifecycleAction(REBOOT, RESTART, 0))
show("poweroff rename-restart", lambda: d.setLifecycleAction(POWEROFF, RENAME_RESTART, 0))
show("actions", lambda: actions(d))
show("poweroff destroy", lambda: d.setLifecycleAction(POWEROFF, DESTROY, 0))
show("start", lambda: d.create())
show("live crash preserve", lambda: d.setLifecycleAction(CRASH, PRESERVE, LIVE))
show("live reboot destroy", lambda: d.setLifecycleAction(REBOOT, DESTROY, 0))
show("live and config poweroff restart", lambda: d.setLifecycleAction(POWEROFF, RESTART, LIVE | CONFIG))
show("live actions", lambda: actions(d))
show("config actions", lambda: actions(d, libvirt.VIR_DOMAIN_XML_INACTIVE))
if qemu:
    # on_reboot destroy, live: a reset stops the guest now.
    show("reset", lambda: d.reset(0))
    for _ in range(100):
        if not d.isActive():
            break
        time.sleep(0.1)
    show("state after the reset", d.state)
    show("start again", lambda: d.create())
    show("live reboot destroy", lambda: d.setLifecycleAction(REBOOT, DESTROY, LIVE))
    show("live reboot restart", lambda: d.setLifecycleAction(REBOOT, RESTART, LIVE))
    show("reset", lambda: d.reset(0))
    time.sleep(1)
    show("state after the reset", d.state)
show("destroy", lambda: d.destroy())
t = conn.createXML(domain_xml(conn, "lct"), 0)
show("config, transient", lambda: t.setLifecycleAction(CRASH, DESTROY, CONFIG))
show("transient live", lambda: t.setLifecycleAction(CRASH, PRESERVE, 0))
show("transient actions", lambda: actions(t))
t.destroy()
show("undefine", lambda: d.undefine())
