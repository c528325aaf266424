"""One line per call for the transcripts the interop tests compare between
libvirtd and remvirtd: its result, or its error's code, domain and message.
Imported by save-checks.py, dump-checks.py, metadata-checks.py, the
checks of the newer setters (rename, lifecycle, perf, save-params) and
test-qemu-vs-libvirtd.sh."""

import libvirt

libvirt.registerErrorHandler(lambda ctx, err: None, None)


def show(what, fn):
    try:
        result = fn()
    except libvirt.libvirtError as e:
        result = f"error {e.get_error_code()} {e.get_error_domain()}: {e}"
    print(f"{what}: {result}", flush=True)


def domain_xml(conn, name):
    """A small shut-off guest called name for conn's driver: a diskless
    TCG guest of 64 MiB for the QEMU drivers, else a test driver's."""
    if conn.getType() == "QEMU":
        return (f"<domain type='qemu'><name>{name}</name><memory unit='MiB'>64</memory>"
                "<vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>"
                "<devices/></domain>")
    return (f"<domain type='test'><name>{name}</name><memory unit='KiB'>65536</memory>"
            "<vcpu>1</vcpu><os><type>hvm</type></os></domain>")


def open_recording(uri):
    """uri opened with an event loop on a thread of its own: (conn, finish),
    finish() printing the lifecycle events that came ("events:", then one
    "name event detail" line each) once the last ones had time to come."""
    import threading
    import time
    libvirt.virEventRegisterDefaultImpl()
    conn = libvirt.open(uri)
    events = []
    conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                lambda c, d, ev, detail, opaque:
                                events.append(f"{d.name()} {ev} {detail}"), None)
    running = [True]

    def loop():
        while running[0]:
            libvirt.virEventRunDefaultImpl()

    def finish():
        time.sleep(0.5)
        running[0] = False
        print("events:")
        print("\n".join(events))
    threading.Thread(target=loop, daemon=True).start()
    return conn, finish
