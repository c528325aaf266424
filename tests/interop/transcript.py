"""One line per call for the transcripts the interop tests compare between
libvirtd and remvirtd: its result, or its error's code, domain and message.
Imported by save-checks.py, metadata-checks.py and test-qemu-vs-libvirtd.sh."""

import libvirt

libvirt.registerErrorHandler(lambda ctx, err: None, None)


def show(what, fn):
    try:
        result = fn()
    except libvirt.libvirtError as e:
        result = f"error {e.get_error_code()} {e.get_error_domain()}: {e}"
    print(f"{what}: {result}", flush=True)
