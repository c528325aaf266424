#!/usr/bin/python3
"""Core dumps, job calls and a save image's XML on test:///default, through
python3-libvirt.

    dump-checks.py URI DIR

Prints a transcript (each call's result, or its error's code, domain and
message; the files made; the lifecycle events that came) that
test-test-transcripts.sh compares between libvirtd's test driver and
remvirtd's.  Dump files go in DIR.
"""

import os
import sys

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import open_recording, show  # noqa: E402

uri, tmp = sys.argv[1], sys.argv[2]
conn, finish = open_recording(uri)


def dump_file(name):
    path = f"{tmp}/{name}"
    with open(path, 'rb') as f:
        return f"{f.read()!r} mode {oct(os.stat(path).st_mode & 0o777)}"


xml = """<domain type='test'><name>dp1</name>
<uuid>7c1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7a22</uuid>
<memory>1048576</memory><os><type>hvm</type></os></domain>"""
d = conn.defineXML(xml)
show("dump inactive", lambda: d.coreDump(f"{tmp}/a.core", 0))
show("start", lambda: d.create())
show("dump", lambda: d.coreDump(f"{tmp}/a.core", 0))
show("file", lambda: dump_file("a.core"))
show("dump bypass cache", lambda: d.coreDump(f"{tmp}/b.core", libvirt.VIR_DUMP_BYPASS_CACHE))
show("dump live", lambda: d.coreDump(f"{tmp}/c.core", libvirt.VIR_DUMP_LIVE))
show("dump memory-only", lambda: d.coreDump(f"{tmp}/c.core", libvirt.VIR_DUMP_MEMORY_ONLY))
show("dump reset", lambda: d.coreDump(f"{tmp}/c.core", libvirt.VIR_DUMP_RESET))
show("dump crash+live", lambda: d.coreDump(f"{tmp}/c.core",
                                           libvirt.VIR_DUMP_CRASH | libvirt.VIR_DUMP_LIVE))
show("dump format 9", lambda: d.coreDumpWithFormat(f"{tmp}/c.core", 9, 0))
show("dump no directory", lambda: d.coreDump("/nonexistent/c.core", 0))
show("dump format raw", lambda: d.coreDumpWithFormat(f"{tmp}/d.core", 0, 0))
show("job info", lambda: d.jobInfo())
show("job stats", lambda: d.jobStats())
show("abort job", lambda: d.abortJob())
show("save", lambda: d.save(f"{tmp}/dp1.img"))
show("image xml", lambda: conn.saveImageGetXMLDesc(f"{tmp}/dp1.img", 0))
show("image xml secure", lambda: len(conn.saveImageGetXMLDesc(f"{tmp}/dp1.img",
                                                               libvirt.VIR_DOMAIN_SAVE_IMAGE_XML_SECURE)))
show("image xml flag 2", lambda: conn.saveImageGetXMLDesc(f"{tmp}/dp1.img", 2))
show("image xml no file", lambda: conn.saveImageGetXMLDesc(f"{tmp}/nosuch.img", 0))
show("managed save xml", lambda: d.managedSaveGetXMLDesc(0))
show("restore", lambda: conn.restore(f"{tmp}/dp1.img"))
show("dump crash", lambda: d.coreDump(f"{tmp}/e.core", libvirt.VIR_DUMP_CRASH))
show("state", lambda: d.state())
show("files", lambda: sorted(os.listdir(tmp)))
show("undefine", lambda: d.undefine())
finish()
