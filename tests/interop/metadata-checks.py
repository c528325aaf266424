#!/usr/bin/python3
"""Title, description and IS_UPDATED on test:///default's domain "test".

    metadata-checks.py URI

Prints each call's result, or its error's code, domain and message, for
test-test-transcripts.sh to compare between libvirtd's test driver and
remvirtd's.  Leaves "test" as it found it (running, no title).
"""

import os
import sys

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

conn = libvirt.open(sys.argv[1])
d = conn.lookupByName("test")
T = libvirt.VIR_DOMAIN_METADATA_TITLE
D = libvirt.VIR_DOMAIN_METADATA_DESCRIPTION
LIVE, CONFIG = libvirt.VIR_DOMAIN_AFFECT_LIVE, libvirt.VIR_DOMAIN_AFFECT_CONFIG



show("updated", d.isUpdated)
show("get title", lambda: d.metadata(T, None, 0))
show("set title with a newline", lambda: d.setMetadata(T, "a\nb", None, None, 0))
show("set title", lambda: d.setMetadata(T, "T1", None, None, 0))
show("get title", lambda: d.metadata(T, None, 0))
show("get title config", lambda: d.metadata(T, None, CONFIG))
show("get title live and config", lambda: d.metadata(T, None, LIVE | CONFIG))
show("set description live and config", lambda: d.setMetadata(D, "D <&> 1\nline 2", None, None,
                                                              LIVE | CONFIG))
show("get description config", lambda: d.metadata(D, None, CONFIG))
show("get description live", lambda: d.metadata(D, None, LIVE))
show("xml has them", lambda: "<title>T1</title>" in d.XMLDesc(0) and
     "<description>D &lt;&amp;&gt; 1\nline 2</description>" in d.XMLDesc(0))
show("inactive xml has the description only",
     lambda: ("<title>" in d.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE),
              "<description>" in d.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)))
show("set bad flag", lambda: d.setMetadata(D, "x", None, None, 4))
show("get bad flag", lambda: d.metadata(D, None, 4))
show("set bad type", lambda: d.setMetadata(7, "x", None, None, 0))
show("get bad type", lambda: d.metadata(7, None, 0))
show("remove description", lambda: d.setMetadata(D, None, None, None, LIVE | CONFIG))
show("get description", lambda: d.metadata(D, None, 0))
show("remove title with ''", lambda: d.setMetadata(T, "", None, None, 0))
show("get title", lambda: d.metadata(T, None, 0))
show("updated", d.isUpdated)
t = conn.createXML("<domain type='test'><name>md1</name><memory>1024</memory>"
                   "<os><type>hvm</type></os></domain>", 0)
show("transient config", lambda: t.setMetadata(T, "x", None, None, CONFIG))
show("transient live", lambda: t.setMetadata(T, "x", None, None, 0))
show("transient get", lambda: t.metadata(T, None, 0))
t.destroy()
d2 = conn.defineXML("<domain type='test'><name>md2</name><uuid>4b030f69-4533-4b3b-adaa-c6042b24c0b8</uuid><title>old</title><memory>1024</memory>"
                    "<os><type>hvm</type></os></domain>")
show("inactive get", lambda: d2.metadata(T, None, 0))
show("inactive set live", lambda: d2.setMetadata(T, "x", None, None, LIVE))
show("inactive set", lambda: d2.setMetadata(T, "new", None, None, 0))
show("inactive get", lambda: d2.metadata(T, None, 0))
show("inactive updated", d2.isUpdated)
d2.undefine()
show("gone", lambda: d2.metadata(T, None, 0))
