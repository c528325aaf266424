#!/usr/bin/env python3
"""A guest's watchdog firing, as a client sees it: python3-libvirt starts
the domain in XMLFILE (the test guest, which arms its watchdog and lets
it run out) with WATCHDOG and LIFECYCLE callbacks registered, waits for
the first WATCHDOG event, and prints it and the lifecycle events (as
numbers) of the two seconds after it (with "resumes": of the time
until the guest resumes, as after a dump, and up to that one), then the
domain's state and reason; the domain is destroyed and undefined after.

usage: watchdog-events.py URI XMLFILE [resumes]
"""
import sys
import threading
import time

import libvirt

uri, xmlfile = sys.argv[1:3]
resumes = sys.argv[3:4] == ["resumes"]
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
events = []
seen = threading.Event()
resumed = threading.Event()


def on_watchdog(conn, dom, action, opaque):
    if not seen.is_set():
        events.append("watchdog %s action %d" % (dom.name(), action))
    seen.set()


def on_lifecycle(conn, dom, event, detail, opaque):
    if seen.is_set() and not resumed.is_set():
        events.append("lifecycle %s event %d detail %d" % (dom.name(), event, detail))
        if event == libvirt.VIR_DOMAIN_EVENT_RESUMED and resumes:
            resumed.set()


def loop():
    while True:
        libvirt.virEventRunDefaultImpl()


threading.Thread(target=loop, daemon=True).start()
ids = [conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_WATCHDOG, on_watchdog, None),
       conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, on_lifecycle, None)]
dom = conn.defineXML(open(xmlfile).read())
dom.create()
try:
    if not seen.wait(300):
        sys.exit("no watchdog event in 300 s")
    if resumes and not resumed.wait(240):
        sys.exit("not resumed in 240 s: %s" % events)
    time.sleep(2)
    for line in events:
        print(line)
    print("state", dom.state())
finally:
    for i in ids:
        conn.domainEventDeregisterAny(i)
    dom.destroy()
    dom.undefine()
