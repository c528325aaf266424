"""A domain's device events as a client waits for them, for the hotplug
tests and bench/hotplug-events.py: DEVICE_ADDED and DEVICE_REMOVED,
recorded as (kind, alias, monotonic time) by a thread that runs libvirt's
default event loop.  event_loop() must come before libvirt.open()."""
import threading
import time

import libvirt


def event_loop():
    libvirt.virEventRegisterDefaultImpl()
    threading.Thread(target=lambda: [libvirt.virEventRunDefaultImpl() for _ in iter(int, 1)],
                     daemon=True).start()


class DeviceEvents:
    def __init__(self, conn, dom):
        self.seen = []
        self.cond = threading.Condition()
        for kind, event_id in (("added", libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_ADDED),
                               ("removed", libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED)):
            conn.domainEventRegisterAny(dom, event_id, self._recorder(kind), None)

    def _recorder(self, kind):
        def cb(conn, dom, alias, opaque):
            with self.cond:
                self.seen.append((kind, alias, time.monotonic()))
                self.cond.notify_all()
        return cb

    def wait(self, kind, alias=None, since=0.0, timeout=60):
        """The first such event (of alias, when given) at or after since,
        or None after timeout seconds."""
        def first():
            return next((e for e in self.seen
                         if e[0] == kind and (alias is None or e[1] == alias) and e[2] >= since), None)
        with self.cond:
            return self.cond.wait_for(first, timeout)
