#!/usr/bin/env bash
# Truncated packets and clients that vanish mid-packet: the daemon keeps
# serving everyone else.  A packet that arrives in pieces (one byte at a
# time, or split inside the length word) is still read whole.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import sys, time
import rawclient as rc

path = sys.argv[1]
bystander = rc.Client(path)
bystander.open_connection()

lookup = rc.packet(rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("test"), serial=9)

# Vanish after every possible prefix of a valid call: inside the length
# word, inside the header, inside the payload.
for cut in (1, 2, 3, 4, 5, 16, 27, 28, 30, len(lookup) - 1):
    c = rc.Client(path)
    c.open_connection()
    c.send(lookup[:cut])
    c.close()
rc.expect_usable(bystander, "after clients vanished mid-packet")

# The same before CONNECT_OPEN, and a length word promising far more
# than ever comes.
for data in (lookup[:10], b"\x00\x10\x00\x00" + lookup[4:]):
    c = rc.Client(path)
    c.send(data)
    c.close()
rc.expect_usable(bystander, "after unopened clients vanished mid-packet")

# A client that stops mid-packet but stays connected does not hold up
# the others; when the rest arrives it gets its answer.
slow = rc.Client(path)
slow.open_connection()
slow.send(lookup[:20])
rc.expect_usable(bystander, "while another client is mid-packet")
slow.send(lookup[20:])
hdr, body = slow.recv_reply()
rc.check(hdr.serial == 9 and hdr.status == rc.STATUS_OK, "the split call is answered")
rc.check(rc.Unpacker(body).domain()["name"] == "test", "the split call's reply is right")

# One byte at a time.
for i in range(len(lookup)):
    slow.send(lookup[i:i + 1])
    time.sleep(0.002)
hdr, body = slow.recv_reply()
rc.check(hdr.serial == 9 and hdr.status == rc.STATUS_OK, "a call sent byte by byte is answered")

# Two calls in one write, the second cut short, then completed.
two = rc.packet(rc.PROC_CONNECT_GET_HOSTNAME, serial=10) + lookup
slow.send(two[:40])
hdr, _ = slow.recv_reply()
rc.check(hdr.serial == 10, "first of two calls in one write answered at once")
slow.send(two[40:])
hdr, _ = slow.recv_reply()
rc.check(hdr.serial == 9, "second call answered once complete")

# A truncated payload inside a whole frame is a decode error, not a
# broken connection: the length word is honest, the XDR is short.
short = rc.packet(rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("test")[:6], serial=11)
slow.send(short)
hdr, body = slow.recv_reply()
rc.expect_error_reply(hdr, body, 11, {rc.ERR_RPC}, "call with a cut XDR payload")
rc.expect_usable(slow, "after the cut payload")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
