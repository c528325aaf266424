#!/usr/bin/env bash
# The read-only socket refuses every procedure that changes state with
# VIR_ERR_OPERATION_DENIED (29), even when the client did not ask for a
# read-only connection; queries still work, the connection stays usable,
# and nothing changed.  The read-write socket allows the same calls.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" <<'PY'
import sys
import rawclient as rc
import rv_protocol as rv

rw_path, ro_path = sys.argv[1:]
XML = ("<domain type='test'><name>rotest</name>"
       "<uuid>5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d01</uuid>"
       "<memory>262144</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>")

ro = rc.Client(ro_path)
ro.open_connection(flags=0)     # the socket, not the flag, makes it read-only
dom = ro.lookup("test")

flags = rc.xdr_uint(0)
denied = [
    ("DOMAIN_CREATE", 9, dom),
    ("DOMAIN_CREATE_XML", 10, rc.xdr_string(XML) + flags),
    ("DOMAIN_DEFINE_XML", 11, rc.xdr_string(XML)),
    ("DOMAIN_DESTROY", 12, dom),
    ("DOMAIN_REBOOT", 27, dom + flags),
    ("DOMAIN_RESUME", 28, dom),
    ("DOMAIN_SHUTDOWN", 33, dom),
    ("DOMAIN_SUSPEND", 34, dom),
    ("DOMAIN_UNDEFINE", 35, dom),
    ("DOMAIN_CREATE_WITH_FLAGS", 196, dom + flags),
    ("DOMAIN_UNDEFINE_FLAGS", 231, dom + flags),
    ("DOMAIN_DESTROY_FLAGS", 234, dom + flags),
    ("DOMAIN_SHUTDOWN_FLAGS", 258, dom + flags),
]
for name, proc, args in denied:
    serial = ro.send_call(proc, args)
    hdr, body = ro.recv_reply()
    rc.expect_error_reply(hdr, body, serial, {rc.ERR_OPERATION_DENIED}, f"read-only {name}")
    rc.expect_usable(ro, f"read-only socket after {name}")

# Queries are fine, and the domain is untouched.
info = rc.Unpacker(ro.call_ok(rc.PROC_DOMAIN_GET_INFO, dom))
rc.check(info.uint() == rv.RV_DOMAIN_RUNNING, "read-only: test is still running")
listing = rc.Unpacker(ro.call_ok(rc.PROC_CONNECT_LIST_ALL_DOMAINS, rc.xdr_int(1) + rc.xdr_uint(0)))
count = listing.uint()
names = [listing.domain()["name"] for _ in range(count)]
rc.check(names == ["test"], f"read-only: domains {names} (nothing was defined)")

# The read-write socket allows a state change (so the refusals above are
# about the socket, not the calls).
rw = rc.Client(rw_path)
rw.open_connection()
rw.call_ok(rc.PROC_DOMAIN_SUSPEND, dom)
rc.check(rc.Unpacker(rw.call_ok(rc.PROC_DOMAIN_GET_INFO, dom)).uint() == rv.RV_DOMAIN_PAUSED,
         "read-write: suspend works (state paused)")
rw.call_ok(rc.PROC_DOMAIN_RESUME, dom)
rc.check(rc.Unpacker(rw.call_ok(rc.PROC_DOMAIN_GET_INFO, dom)).uint() == rv.RV_DOMAIN_RUNNING,
         "read-write: resume works (state running)")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
