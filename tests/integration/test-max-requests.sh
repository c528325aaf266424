#!/usr/bin/env bash
# max_client_requests = 2: a client that pipelines 50 calls in one write
# still gets 50 correct replies, in order.  Then one that pipelines 300
# calls with ~3 KB replies and does not read for a while: the daemon stops
# reading it and arms its write watcher, yet keeps serving another client,
# and every reply arrives once the first client reads.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd 'max_client_requests = 2'

rawpy "$REMVIRTD_SOCK" <<'PY'
import sys, time
import rawclient as rc

path = sys.argv[1]
c = rc.Client(path, timeout=30)
c.open_connection()
dom = c.lookup("test")
hostname = c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)

# 50 calls, three kinds, one write.
calls = []
for i in range(50):
    kind = i % 3
    proc = (rc.PROC_CONNECT_GET_HOSTNAME, rc.PROC_DOMAIN_LOOKUP_BY_NAME,
            rc.PROC_DOMAIN_GET_INFO)[kind]
    args = (b"", rc.xdr_string("test"), dom)[kind]
    serial = 1000 + i
    calls.append((serial, proc, rc.packet(proc, args, serial=serial)))
c.send(b"".join(pkt for _, _, pkt in calls))
for serial, proc, _ in calls:
    hdr, body = c.recv_reply()
    if (hdr.serial, hdr.proc, hdr.status) != (serial, proc, rc.STATUS_OK):
        raise SystemExit(f"FAIL: expected OK reply to serial {serial} proc {proc}, "
                         f"got {hdr}")
    if proc == rc.PROC_CONNECT_GET_HOSTNAME:
        ok = body == hostname
    elif proc == rc.PROC_DOMAIN_LOOKUP_BY_NAME:
        ok = body == dom
    else:
        ok = rc.Unpacker(body).uint() == 1
    if not ok:
        raise SystemExit(f"FAIL: reply to serial {serial} has the wrong body {body.hex()}")
rc.check(True, "50 pipelined calls: 50 correct replies in order")

# 300 calls whose replies fill the socket while the client is not reading.
caps = c.call_ok(rc.PROC_CONNECT_GET_CAPABILITIES)
rc.check(len(caps) > 1000, f"capabilities reply is {len(caps)} bytes")
c.send(b"".join(rc.packet(rc.PROC_CONNECT_GET_CAPABILITIES, serial=5000 + i) for i in range(300)))
time.sleep(0.5)

other = rc.Client(path, timeout=5)
other.open_connection()
rc.expect_usable(other, "another client while the first is not reading")

for i in range(300):
    hdr, body = c.recv_reply()
    if hdr.serial != 5000 + i or hdr.status != rc.STATUS_OK or body != caps:
        raise SystemExit(f"FAIL: reply {i} of the 300: {hdr}, {len(body)} bytes")
rc.check(True, "300 pipelined capability calls answered in order once read")
rc.expect_usable(c, "the pipelining client afterwards")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
