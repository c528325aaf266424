#!/usr/bin/env bash
# Before authentication (auth_unix_rw = "sasl"): only procedures 66-70 run
# and nothing else is decoded; packets are capped at 64 KiB; a client that
# does not authenticate within auth_timeout is dropped; past
# max_anonymous_clients strangers are refused at once while clients of a
# socket without SASL (and those already in) carry on.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd 'auth_unix_rw = "sasl"' 'auth_unix_ro = "none"' 'auth_timeout = 2' \
    'max_anonymous_clients = 3' 'log_level = 2'

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_LOG" <<'PY'
import struct, time
import rawclient as rc

rw, ro, log = __import__("sys").argv[1:]

def logged(words, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log, errors="replace") as f:
            if any(words in line for line in f):
                return True
        time.sleep(0.1)
    return False

# AUTH_LIST offers SASL, and the SASL procedures are reachable.
c = rc.Client(rw)
body = c.call_ok(rc.PROC_AUTH_LIST)
u = rc.Unpacker(body)
n = u.uint()
types = [u.int() for _ in range(n)]
u.done()
rc.check(types == [1], f"AUTH_LIST offers SASL only ({types})")

# Anything else gets "authentication required" and is not decoded: its
# arguments are garbage and the error is still the auth one.
for proc in (rc.PROC_CONNECT_OPEN, rc.PROC_DOMAIN_DESTROY, rc.PROC_CONNECT_GET_HOSTNAME):
    serial = c.send_call(proc, b"\xff" * 37)
    hdr, body = c.recv_reply()
    err = rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, f"procedure {proc} before auth")
    rc.check("authentication required" in (err["message"] or ""), f"procedure {proc}: message says why")

# A packet just under 64 KiB is read (and refused for want of auth); one
# over it closes the connection before it is buffered.
serial = c.send_call(rc.PROC_CONNECT_OPEN, b"\0" * (65536 - 28))
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, "a 64 KiB packet before auth")
c.send(struct.pack(">I", 65537) + b"\0" * 100)
rc.check(c.wait_closed(5), "a packet over 64 KiB before auth closes the connection")
c.close()
rc.check(logged("exceeds"), "the log names the oversized packet")

# auth_timeout = 2: a client that never authenticates is dropped.
idle = rc.Client(rw)
start = time.monotonic()
rc.check(idle.wait_closed(10), "an idle anonymous client is closed")
took = time.monotonic() - start
rc.check(1.5 < took < 6, f"after about auth_timeout ({took:.1f} s)")
idle.close()
rc.check(logged("not authenticated within auth_timeout (2 s)"), "the log names auth_timeout")

# max_anonymous_clients = 3: a 4th stranger is closed at once, and the
# read-only socket (auth "none") still lets clients in and serves them.
three = [rc.Client(rw) for _ in range(3)]
for t in three:
    t.call_ok(rc.PROC_AUTH_LIST)
fourth = rc.Client(rw)
rc.check(fourth.wait_closed(1.5), "a 4th anonymous client is refused at once")
fourth.close()
rc.check(logged("max_anonymous_clients (3)"), "the log names max_anonymous_clients")
ok = rc.Client(ro)
ok.open_connection()
rc.expect_usable(ok, "a client on a socket without SASL gets in past the limit")
# Once the strangers go (or time out), new ones are admitted again.
for t in three:
    t.close()
time.sleep(0.5)
again = rc.Client(rw)
again.call_ok(rc.PROC_AUTH_LIST)
rc.check(True, "room for anonymous clients again after they left")
again.close()
ok.close()
PY
remvirtd_alive || fail "remvirtd died"
