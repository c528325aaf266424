#!/usr/bin/env bash
# Descriptor passing in the RPC layer, from a client that misbehaves
# (the test driver, raw packets): whatever a client sends, remvirtd holds
# no descriptor longer than the call it came with, holds at most 32 for a
# client, and keeps serving the others.
#   - CALL_WITH_FDS with its descriptors on carrier bytes (libvirt's way),
#     pipelined: each call runs and its descriptors are closed after it;
#   - descriptors attached to an ordinary CALL's bytes: the call runs,
#     the descriptors are closed;
#   - more than 32 descriptors in one message, a count over 32, carrier
#     bytes without descriptors, a CALL_WITH_FDS too short for its count:
#     that client is closed;
#   - before authentication (SASL socket) a descriptor closes the client;
#   - on a read-only connection OPEN_GRAPHICS is refused as libvirtd
#     refuses it, its descriptor closed;
#   - FD_PASSING answers 1 on a Unix socket;
# and at the end remvirtd has as many descriptors open as at the start.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd 'auth_unix_ro = "sasl"'

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_PID" <<'PY2'
import os
import socket
import struct
import sys

import rawclient as rc

rw, sasl, pid = sys.argv[1:]
CALL_WITH_FDS, REPLY = 4, 1


def daemon_fds():
    return len(os.listdir(f"/proc/{pid}/fd"))


def with_fds(c, proc, payload, fds, carriers=True):
    """A CALL_WITH_FDS; its descriptors each on a carrier byte after it."""
    serial = c.next_serial()
    c.send(rc.packet(proc, struct.pack(">I", len(fds)) + payload, serial=serial,
                     mtype=CALL_WITH_FDS))
    for fd in fds:
        if carriers:
            socket.send_fds(c.sock, [b"\0"], [fd])
        else:
            c.send(b"\0")
    return serial


def pipe_closed_in_daemon(r, w):
    """Our read end is closed here; the write end says whether the daemon
    still has a copy (EPIPE once none is left)."""
    os.close(r)
    os.set_blocking(w, False)
    try:
        os.write(w, b"x")
        return False
    except BrokenPipeError:
        return True
    finally:
        os.close(w)


base = daemon_fds()
c = rc.Client(rw)
c.open_connection()
hdr, body = c.call(rc.PROC_CONNECT_SUPPORTS_FEATURE, rc.xdr_int(8))
rc.check(body == rc.xdr_int(1), "FD_PASSING answers 1 on the Unix socket")

# Pipelined: three calls with 1, 2 and 0 descriptors in one go.
pipes = [os.pipe() for _ in range(3)]
serials = [with_fds(c, rc.PROC_CONNECT_GET_HOSTNAME, b"", [pipes[0][0]]),
           with_fds(c, rc.PROC_CONNECT_GET_HOSTNAME, b"", [pipes[1][0], pipes[2][0]]),
           with_fds(c, rc.PROC_CONNECT_GET_HOSTNAME, b"", [])]
for s in serials:
    hdr, body = c.recv_reply()
    rc.check(hdr.serial == s and hdr.status == rc.STATUS_OK and hdr.type == REPLY,
             f"pipelined CALL_WITH_FDS serial {s} answered")
rc.check(all(pipe_closed_in_daemon(r, w) for r, w in pipes),
         "the descriptors of calls that take none are closed after them")

# Descriptors on an ordinary CALL's own bytes.
r, w = os.pipe()
serial = c.next_serial()
socket.send_fds(c.sock, [rc.packet(rc.PROC_CONNECT_GET_HOSTNAME, serial=serial)], [r])
hdr, body = c.recv_reply()
rc.check(hdr.serial == serial and hdr.status == rc.STATUS_OK, "a CALL carrying a descriptor runs")
rc.check(pipe_closed_in_daemon(r, w), "its descriptor is closed")
rc.expect_usable(c, "after stray descriptors")

# OPEN_GRAPHICS on the test driver: NO_SUPPORT, the descriptor closed.
dom = c.lookup("test")
r, w = os.pipe()
serial = with_fds(c, rc.PROC_DOMAIN_OPEN_GRAPHICS, dom + rc.xdr_uint(0) + rc.xdr_uint(0), [r])
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_NO_SUPPORT}, "the test driver's OPEN_GRAPHICS")
rc.check(pipe_closed_in_daemon(r, w), "its descriptor is closed")

# A read-only connection: refused as any call that changes state.
ro = rc.Client(rw)
ro.open_connection(flags=1)
r, w = os.pipe()
serial = with_fds(ro, rc.PROC_DOMAIN_OPEN_GRAPHICS, dom + rc.xdr_uint(0) + rc.xdr_uint(0), [r])
hdr, body = ro.recv_reply()
err = rc.expect_error_reply(hdr, body, serial, {rc.ERR_OPERATION_DENIED},
                            "OPEN_GRAPHICS on a read-only connection")
rc.check(err["message"] == "operation forbidden: read only access prevents virDomainOpenGraphics",
         "... with libvirtd's words")
rc.check(pipe_closed_in_daemon(r, w), "its descriptor is closed")
ro.close()

# Clients that break the rules are closed; the others go on.
def closed_after(what, act):
    x = rc.Client(rw)
    x.open_connection()
    act(x)
    rc.check(x.wait_closed(10), f"{what}: the client is closed")
    x.close()

many = [os.pipe() for _ in range(40)]
closed_after("40 descriptors in one message",
             lambda x: socket.send_fds(x.sock, [rc.packet(rc.PROC_CONNECT_GET_HOSTNAME)],
                                       [p[0] for p in many]))
closed_after("a CALL_WITH_FDS counting 33",
             lambda x: x.send(rc.packet(rc.PROC_CONNECT_GET_HOSTNAME, struct.pack(">I", 33),
                                        mtype=CALL_WITH_FDS)))
closed_after("carrier bytes without descriptors",
             lambda x: with_fds(x, rc.PROC_CONNECT_GET_HOSTNAME, b"", [many[0][0]],
                                carriers=False))
closed_after("a CALL_WITH_FDS without its count",
             lambda x: x.send(rc.packet(rc.PROC_CONNECT_GET_HOSTNAME, mtype=CALL_WITH_FDS)))
# 40 held at once (on the bytes of a packet not yet whole): over the
# limit of what a client's calls may claim.
half = rc.packet(rc.PROC_CONNECT_GET_HOSTNAME)
closed_after("40 descriptors held", lambda x: [
    socket.send_fds(x.sock, [half[:10]], [p[0] for p in many[:20]]),
    socket.send_fds(x.sock, [half[10:20]], [p[0] for p in many[20:]])])
for r, w in many:
    os.close(r)
    os.close(w)

# Before authentication (the SASL socket): a descriptor closes the client.
a = rc.Client(sasl)
r, w = os.pipe()
socket.send_fds(a.sock, [rc.packet(rc.PROC_AUTH_LIST, serial=1)], [r])
rc.check(a.wait_closed(10), "a descriptor before authentication closes the client")
rc.check(pipe_closed_in_daemon(r, w), "... and is closed")
a.close()

rc.expect_usable(c, "the well-behaved client")
c.close()
# Give the daemon a moment to close the clients that went.
import time
deadline = time.monotonic() + 10
while daemon_fds() != base and time.monotonic() < deadline:
    time.sleep(0.1)
rc.check(daemon_fds() == base, f"remvirtd holds {daemon_fds()} descriptors, as at the start ({base})")
PY2
