#!/usr/bin/python3
"""The everyday calls of issue 29 on test:///default's domain "test".

    calls-checks.py URI

Prints each call's result, or its error's code, domain and message, for
test-test-transcripts.sh to compare between libvirtd's test driver and
remvirtd's.  A screenshot's image is each driver's own picture: only its
type and that it is a PNG are printed.  Leaves "test" running as found.
"""

import os
import sys

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

conn = libvirt.open(sys.argv[1])
d = conn.lookupByName("test")
K = libvirt
XML = "<domain type='test'><name>%s</name><memory>1024</memory><os><type>hvm</type></os></domain>"


def screenshot():
    st = conn.newStream(0)
    mime = d.screenshot(st, 0, 0)
    data = bytearray()
    st.recvAll(lambda s, buf, acc: acc.extend(buf), data)
    st.finish()
    return mime, bytes(data[:8]) == b"\x89PNG\r\n\x1a\n"


def all_steps():
    show("send-key linux", lambda: d.sendKey(K.VIR_KEYCODE_SET_LINUX, 0, [30, 31], 2, 0))
    show("send-key usb", lambda: d.sendKey(K.VIR_KEYCODE_SET_USB, 10, [4], 1, 0))
    show("send-key qnum", lambda: d.sendKey(K.VIR_KEYCODE_SET_QNUM, 0, [0xc8], 1, 0))
    show("send-key atset3", lambda: d.sendKey(K.VIR_KEYCODE_SET_ATSET3, 0, [28], 1, 0))
    show("send-key bad usb", lambda: d.sendKey(K.VIR_KEYCODE_SET_USB, 0, [500], 1, 0))
    show("send-key bad codeset", lambda: d.sendKey(42, 0, [1], 1, 0))
    show("send-key bad flag", lambda: d.sendKey(0, 0, [1], 1, 1))
    show("inject-nmi", lambda: d.injectNMI(0))
    show("inject-nmi bad flag", lambda: d.injectNMI(4))
    show("screenshot", screenshot)
    show("fsfreeze", lambda: d.fsFreeze(None, 0))
    show("fsfreeze again", lambda: d.fsFreeze(None, 0))
    show("fsthaw", lambda: d.fsThaw(None, 0))
    show("fsfreeze /", lambda: d.fsFreeze(["/"], 0))
    show("fsfreeze /boot /", lambda: d.fsFreeze(["/boot", "/"], 0))
    show("fsfreeze /x", lambda: d.fsFreeze(["/x"], 0))
    show("fsthaw /", lambda: d.fsThaw(["/"], 0))
    show("fsthaw", lambda: d.fsThaw(None, 0))
    show("fsfreeze bad flag", lambda: d.fsFreeze(None, 1))
    show("fstrim", lambda: d.fSTrim(None, 0, 0))
    show("fstrim /boot", lambda: d.fSTrim("/boot", 0, 0))
    show("fstrim /x", lambda: d.fSTrim("/x", 0, 0))
    show("fstrim bad flag", lambda: d.fSTrim(None, 0, 1))
    show("set password", lambda: d.setUserPassword("root", "x", 0))
    show("set password crypted", lambda: d.setUserPassword("root", "x", 1))
    show("set password bad flag", lambda: d.setUserPassword("root", "x", 2))
    # Not in libvirt's test driver: refused as it refuses them.
    show("guest vcpus", lambda: d.guestVcpus(0))
    show("set guest vcpus", lambda: d.setGuestVcpus("0", 1, 0))
    show("guest info", lambda: d.guestInfo(0, 0))
    show("ssh keys", lambda: d.authorizedSSHKeysGet("root", 0))
    show("ssh keys set", lambda: d.authorizedSSHKeysSet("root", ["k"], 0))
    show("agent timeout", lambda: d.agentSetResponseTimeout(5, 0))
    show("pm suspend", lambda: d.pMSuspendForDuration(0, 0, 0))
    show("pm wakeup", lambda: d.pMWakeup(0))
    show("secure", conn.isSecure)
    show("defined", lambda: (conn.numOfDefinedDomains(), conn.listDefinedDomains()))
    show("define validate", lambda: conn.defineXMLFlags(XML % "cc1", 1).name())
    show("define bad flag", lambda: conn.defineXMLFlags(XML % "cc2", 8).name())
    show("defined", lambda: (conn.numOfDefinedDomains(), conn.listDefinedDomains()))
    show("undefine", lambda: conn.lookupByName("cc1").undefine())
    show("pool by target", lambda: conn.storagePoolLookupByTargetPath("/default-pool").name())
    show("node memory parameters", lambda: conn.getMemoryParameters(0))
    show("disk errors", lambda: d.diskErrors(0))
    show("cpu stats total", lambda: d.getCPUStats(True, 0))
    show("cpu stats per CPU", lambda: d.getCPUStats(False, 0))
    show("memory peek virtual", lambda: d.memoryPeek(300, 8, 1))
    show("memory peek physical", lambda: d.memoryPeek(0, 4, 2))
    show("memory peek no flag", lambda: d.memoryPeek(0, 4, 0))
    show("block peek", lambda: d.blockPeek("vda", 0, 4, 0))
    show("block stats flags", lambda: d.blockStatsFlags("vda", 0))
    d.destroy()
    show("disk errors inactive", lambda: d.diskErrors(0))
    show("cpu stats inactive", lambda: d.getCPUStats(True, 0))
    show("memory peek inactive", lambda: d.memoryPeek(0, 4, 1))
    show("defined", lambda: (conn.numOfDefinedDomains(), conn.listDefinedDomains()))
    show("send-key inactive", lambda: d.sendKey(0, 0, [30], 1, 0))
    show("inject-nmi inactive", lambda: d.injectNMI(0))
    show("screenshot inactive", screenshot)
    show("fsfreeze inactive", lambda: d.fsFreeze(None, 0))
    show("fsthaw inactive", lambda: d.fsThaw(None, 0))
    show("fstrim inactive", lambda: d.fSTrim(None, 0, 0))
    show("set password inactive", lambda: d.setUserPassword("root", "x", 0))
    d.create()


all_steps()
