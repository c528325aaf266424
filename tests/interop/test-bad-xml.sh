#!/usr/bin/env bash
# Bad XML of every definition family (domains, networks, pools, volumes,
# secrets, network filters, node devices, snapshots, devices, interfaces)
# against the QEMU driver and the test driver (bad-xml-checks.py): each
# malformed document is refused, the daemon stays up and keeps no refused
# document (the node device calls kept every one whose root was not
# <device>); a newline in a volume or nwfilter name is refused; a NUL
# byte inside any wire string is refused, not read up to it.  Run under
# valgrind or the sanitizers (make check-valgrind, tests/check.sh --asan),
# every error path these take is also checked for leaks at the daemon's
# exit.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c "import libvirt"
start_remvirtd_qemu
"$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/bad-xml-checks.py" "$QEMU_URI" "$RV_TMP/pool-qemu" \
    "$REMVIRTD_PID"
"$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/bad-xml-checks.py" "$REMVIRTD_URI" \
    "$RV_TMP/pool-test" "$REMVIRTD_PID"

# A NUL inside a string: refused by the decoder for every procedure, so no
# lookup of "test\0..." finds "test".
rawpy "$REMVIRTD_SOCK" <<'PY'
import struct, sys
import rawclient as rc

def string(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)

c = rc.Client(sys.argv[1])
c.open_connection()
hdr, body = c.call(rc.PROC_DOMAIN_LOOKUP_BY_NAME, string(b"test"))
rc.check(hdr.status == rc.STATUS_OK, "domain test is there")
for proc, name in [(rc.PROC_DOMAIN_LOOKUP_BY_NAME, b"test\0../x"),
                   (rc.PROC_NETWORK_LOOKUP_BY_NAME, b"default\0x"),
                   (rc.PROC_STORAGE_POOL_LOOKUP_BY_NAME, b"default-pool\0"),
                   (rc.PROC_CONNECT_GET_CAPABILITIES, b"")]:
    payload = string(name) if name else b""
    hdr, body = c.call(proc, payload)
    if not name:
        rc.check(hdr.status == rc.STATUS_OK, "the connection still serves")
        continue
    rc.check(hdr.status == rc.STATUS_ERROR, "lookup of %r is refused" % name)
    err = rc.decode_error(body)
    rc.check(err["code"] == rc.ERR_RPC and "a string holds a NUL byte" in err["message"],
             "lookup of %r: %s" % (name, err["message"]))
print("ok   a NUL inside a string is refused for lookups of domains, networks, pools")
PY
