#!/usr/bin/env bash
# The facts docs/wire-protocol.md states about both servers, checked
# against remvirtd and libvirtd 9.0 with raw packets (spec-facts.py), so
# that the spec cannot go stale silently.  Where the servers differ on
# purpose, the check says which does what (and the spec says the same).
#
# Statements about libvirtd that other tests show against libvirtd:
#   section 5, NO_SUPPORT in the API's error domain: test-no-support.sh
#   section 9.1, the event callbacks' IDs and events through libvirt's
#     client: test-events-interop.sh
#   section 13, streams (libvirtd's storage driver): the packets of an
#     upload and a download (13.5), 262120 bytes of data per packet,
#     STREAM_HOLE byte for byte, the answers to a hole on a stream that
#     is not sparse and to malformed holes: test-sparse-streams.sh;
#     aborts: test-stream-abort.sh
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires libvirtd
start_remvirtd
start_libvirtd

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" "$LIBVIRTD_SOCK_RO" \
    < "$top_srcdir/tests/interop/spec-facts.py"

# Section 5: a call that needs authentication, before it.  Both daemons
# again, with SASL on their read-write socket.
stop_remvirtd
stop_libvirtd
sasl_db libvirt digest-md5 "fred=pw"
remvirtd_sasl_db digest-md5 "fred=pw"
start_remvirtd 'auth_unix_rw = "sasl"'
start_libvirtd 'auth_unix_rw = "sasl"'
rawpy "$REMVIRTD_SOCK" "$LIBVIRTD_SOCK" <<'PY'
import sys
import rawclient as rc

for server, path in (("remvirtd", sys.argv[1]), ("libvirtd", sys.argv[2])):
    c = rc.Client(path)
    u = rc.Unpacker(c.call_ok(rc.PROC_AUTH_LIST))
    rc.check([u.int() for _ in range(u.uint())] == [rc.rv.RV_AUTH_SASL], f"{server}: AUTH_LIST offers SASL")
    for proc in (rc.PROC_CONNECT_OPEN, rc.PROC_CONNECT_GET_HOSTNAME):
        serial = c.send_call(proc, rc.xdr_opt_string("test:///default") + rc.xdr_uint(0)
                             if proc == rc.PROC_CONNECT_OPEN else b"")
        hdr, body = c.recv_reply()
        e = rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, f"{server}: procedure {proc} before auth")
        rc.check((e["domain"], e["message"]) == (rc.FROM_RPC, "authentication required"),
                 f"{server}: procedure {proc} before auth: 39/7 'authentication required' ({e['message']!r})")
    c.call_ok(rc.PROC_AUTH_LIST)
    print(f"ok   {server}: the connection stays open")
PY
