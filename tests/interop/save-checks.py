#!/usr/bin/python3
"""Save, restore and managed save on test:///default, through python3-libvirt.

    save-checks.py URI DIR

Prints a transcript (each call's result, or its error's code, domain and
message; the lifecycle events that came) that test-test-transcripts.sh compares
between libvirtd's test driver and remvirtd's.  Image files go in DIR.
The calls, not virsh: virsh's save and managedsave poll the job on a
second thread and can wait forever on libvirtd when the save ends at once.
"""

import os
import sys

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import open_recording, show  # noqa: E402

uri, tmp = sys.argv[1], sys.argv[2]
conn, finish = open_recording(uri)



def state(name):
    return lambda: conn.lookupByName(name).state()


xml = """<domain type='test'><name>sv1</name>
<uuid>7c1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7a11</uuid>
<memory>1048576</memory><os><type>hvm</type></os></domain>"""
image = f"{tmp}/sv1.save"
d = conn.defineXML(xml)
show("start", lambda: d.create())
show("autostart", lambda: (d.setAutostart(1), d.autostart())[1])
show("save", lambda: d.save(image))
show("state", state("sv1"))
show("save again", lambda: d.save(image))
show("save with dxml", lambda: d.saveFlags(image, xml, 0))
show("save running flag", lambda: d.saveFlags(image, None, 2))
show("restore paused flag", lambda: conn.restoreFlags(image, None, 4))
show("restore with dxml", lambda: conn.restoreFlags(image, xml, 0))
show("restore", lambda: conn.restore(image))
show("state", state("sv1"))
show("restore while running", lambda: conn.restore(image))
show("restore missing", lambda: conn.restore(f"{tmp}/nosuch.save"))
with open(f"{tmp}/junk.save", "w") as f:
    f.write("junk")
# libvirtd's message ends with strerror(errno), and at the end of the file
# errno is whatever its worker thread last left there ("Success",
# "Protocol not available", ...): the message up to it is compared.


def restore_short():
    try:
        conn.restore(f"{tmp}/junk.save")
    except libvirt.libvirtError as e:
        head = str(e).rsplit("': ", 1)[0] + "': ERRNO"
        return f"error {e.get_error_code()} {e.get_error_domain()}: {head}"
    return "restored"


show("restore short", restore_short)
with open(f"{tmp}/xml.save", "w") as f:
    f.write(xml)
show("restore not an image", lambda: conn.restore(f"{tmp}/xml.save"))
show("save to missing dir", lambda: d.save(f"{tmp}/nosuch/sv1.save"))
show("managed save bad flag", lambda: d.managedSave(8))
show("managed save", lambda: d.managedSave(libvirt.VIR_DOMAIN_SAVE_BYPASS_CACHE))
show("state", state("sv1"))
show("has image", lambda: d.hasManagedSaveImage(0))
show("has image bad flag", lambda: d.hasManagedSaveImage(1))
show("managed list", lambda: [x.name() for x in conn.listAllDomains(
    libvirt.VIR_CONNECT_LIST_DOMAINS_MANAGEDSAVE)])
show("managed save stopped", lambda: d.managedSave(0))
show("undefine with image", lambda: d.undefine())
show("start", lambda: d.create())
show("state", state("sv1"))
show("has image", lambda: d.hasManagedSaveImage(0))
show("managed save paused flag", lambda: d.managedSave(libvirt.VIR_DOMAIN_SAVE_PAUSED))
show("remove image", lambda: d.managedSaveRemove(0))
show("has image", lambda: d.hasManagedSaveImage(0))
show("managed save", lambda: d.managedSave(0))
show("undefine with flag", lambda: d.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE))
show("restore undefined", lambda: conn.restore(image))
show("persistent", lambda: conn.lookupByName("sv1").isPersistent())
show("reset", lambda: conn.lookupByName("sv1").reset(0))
show("reset bad flag", lambda: conn.lookupByName("sv1").reset(1))
t = conn.lookupByName("sv1")
show("transient managed save", lambda: t.managedSave(0))
show("transient save", lambda: t.save(image))
show("list", lambda: sorted(x.name() for x in conn.listAllDomains(0)))
show("restore transient", lambda: conn.restore(image))
show("destroy", lambda: conn.lookupByName("sv1").destroy())
show("list", lambda: sorted(x.name() for x in conn.listAllDomains(0)))
finish()
