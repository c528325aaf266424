#!/usr/bin/env python3
"""blockjob-events.py URI: prints "ready" once registered, then one line per
BLOCK_JOB ("block-job DOMAIN PATH TYPE STATUS", the path as given) and
BLOCK_JOB_2 ("block-job-2 DOMAIN TARGET TYPE STATUS") event, until killed."""
import sys
import libvirt

libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(sys.argv[1])


def on_job(_c, dom, path, kind, status, name):
    print(name, dom.name(), path, kind, status, flush=True)


conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB, on_job, "block-job")
conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB_2, on_job, "block-job-2")
print("ready", flush=True)
while True:
    libvirt.virEventRunDefaultImpl()
