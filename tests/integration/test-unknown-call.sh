#!/usr/bin/env bash
# Calls the daemon cannot dispatch get a libvirt-style error reply (REPLY,
# status ERROR, an rv_error) and the connection stays usable: unknown
# program, version or procedure, a wrong message type or status, and a
# call before CONNECT_OPEN.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import sys
import rawclient as rc

# libvirt-wire-facts.md: VIR_ERR_NO_SUPPORT or VIR_ERR_RPC (libvirtd 9.0
# answers VIR_ERR_RPC).
UNDISPATCHABLE = {rc.ERR_NO_SUPPORT, rc.ERR_RPC}

c = rc.Client(sys.argv[1])

# Before CONNECT_OPEN nothing but the opening calls makes sense.
serial = c.send_call(rc.PROC_CONNECT_GET_HOSTNAME)
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, None, "call before CONNECT_OPEN")
c.open_connection()
rc.expect_usable(c, "after the call before CONNECT_OPEN")

cases = [
    ("unknown program", dict(prog=0x12345678)),
    ("unknown version", dict(vers=7)),
    ("unknown procedure 9999", dict(proc=9999)),
    ("procedure 0", dict(proc=0)),
    ("negative procedure", dict(proc=-1)),
    ("procedure 5 (libvirt has it, remvirt does not)", dict(proc=5)),
]
for what, kw in cases:
    proc = kw.pop("proc", rc.PROC_CONNECT_GET_HOSTNAME)
    serial = c.send_call(proc, **kw)
    hdr, body = c.recv_reply()
    rc.expect_error_reply(hdr, body, serial, UNDISPATCHABLE, what)
    rc.expect_usable(c, f"after {what}")

# A client must send CALLs with status OK.
for what, kw in [("type REPLY from the client", dict(mtype=rc.REPLY)),
                 ("type 99", dict(mtype=99)),
                 ("status ERROR on a call", dict(status=rc.STATUS_ERROR)),
                 ("status 7 on a call", dict(status=7))]:
    serial = c.send_call(rc.PROC_CONNECT_GET_HOSTNAME, **kw)
    hdr, body = c.recv_reply()
    rc.expect_error_reply(hdr, body, serial, UNDISPATCHABLE, what)
    rc.expect_usable(c, f"after {what}")

# Error replies keep the order of the calls when pipelined with good ones.
serials = [c.send_call(rc.PROC_CONNECT_GET_HOSTNAME),
           c.send_call(4242),
           c.send_call(rc.PROC_CONNECT_GET_HOSTNAME)]
replies = [c.recv_reply()[0] for _ in serials]
rc.check([h.serial for h in replies] == serials, "pipelined replies in call order")
rc.check([h.status for h in replies] == [rc.STATUS_OK, rc.STATUS_ERROR, rc.STATUS_OK],
         "only the unknown procedure failed")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
