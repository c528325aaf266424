"""A python3-libvirt client that starts a guest with
VIR_DOMAIN_START_AUTODESTROY and then waits for its end (closed, killed or
stopped by the test):
    autodestroy-client.py URI NAME xml|flags|plain ACTION
xml: createXML(XML on stdin, AUTODESTROY); flags: the defined domain NAME,
createWithFlags(AUTODESTROY); plain: createWithFlags(0), a control.
ACTION close: close the connection, then sleep; exit: leave without
closing; wait: sleep until killed.  Prints "started ID" once it runs."""
import sys
import threading
import time

import libvirt

uri, name, how, action = sys.argv[1:5]
# An event loop, as virsh and virt-manager have: the client then takes
# part in keepalive, so that the daemon can tell when it falls silent.
libvirt.virEventRegisterDefaultImpl()
threading.Thread(target=lambda: [libvirt.virEventRunDefaultImpl() for _ in iter(int, 1)],
                 daemon=True).start()
conn = libvirt.open(uri)
if how == "xml":
    dom = conn.createXML(sys.stdin.read(), libvirt.VIR_DOMAIN_START_AUTODESTROY)
else:
    dom = conn.lookupByName(name)
    dom.createWithFlags(libvirt.VIR_DOMAIN_START_AUTODESTROY if how == "flags" else 0)
print("started", dom.ID(), flush=True)
if action == "close":
    del dom     # it holds the connection open: closed only when both go
    conn.close()
    time.sleep(3600)
elif action == "exit":
    sys.exit(0)
else:
    time.sleep(3600)
