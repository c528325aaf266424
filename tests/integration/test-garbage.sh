#!/usr/bin/env bash
# Well-framed calls to known procedures whose payload is garbage: each
# gets an error reply and the connection stays usable.  Then a few
# hundred seeded random payloads: every one is answered in order, with
# either a result or a well-formed error.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import random, struct, sys
import rawclient as rc

c = rc.Client(sys.argv[1])
c.open_connection()
test_dom = c.lookup("test")

cases = [
    ("DOMAIN_GET_INFO with 7 bytes of 0xff", rc.PROC_DOMAIN_GET_INFO, b"\xff" * 7),
    ("DOMAIN_GET_INFO with no payload", rc.PROC_DOMAIN_GET_INFO, b""),
    ("LOOKUP_BY_NAME, string length 0xffffffff", rc.PROC_DOMAIN_LOOKUP_BY_NAME,
     b"\xff\xff\xff\xfftest"),
    ("LOOKUP_BY_NAME, string length over the 4 MiB bound", rc.PROC_DOMAIN_LOOKUP_BY_NAME,
     struct.pack(">I", 4 * 1024 * 1024 + 1) + b"test"),
    ("LOOKUP_BY_NAME, string cut short", rc.PROC_DOMAIN_LOOKUP_BY_NAME,
     struct.pack(">I", 100) + b"test"),
    ("LOOKUP_BY_UUID with 15 bytes", 24, b"\x01" * 15),
    # Stricter than libvirtd 9.0, which ignores bytes after the arguments.
    ("LIST_ALL_DOMAINS with 4 trailing bytes", rc.PROC_CONNECT_LIST_ALL_DOMAINS,
     rc.xdr_int(1) + rc.xdr_uint(3) + b"\0\0\0\0"),
    ("DOMAIN_GET_INFO with the domain cut in its uuid", rc.PROC_DOMAIN_GET_INFO,
     test_dom[:12]),
]
for what, proc, payload in cases:
    serial = c.send_call(proc, payload)
    hdr, body = c.recv_reply()
    rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, what)
    rc.expect_usable(c, f"after {what}")

# Well-formed arguments naming things that do not exist, or XML that is
# not XML: errors from the driver, not from the decoder.
forged = rc.xdr_domain("nosuch", b"\x42" * 16, 77)
serial = c.send_call(rc.PROC_DOMAIN_GET_INFO, forged)
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_NO_DOMAIN}, "GET_INFO of a forged domain")
serial = c.send_call(rc.PROC_DOMAIN_DESTROY, forged)
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_NO_DOMAIN}, "DESTROY of a forged domain")
for what, xml in [("binary", bytes(range(256))), ("empty", b""), ("cut", b"<domain type='test'><na"),
                  ("deep", b"<a>" * 5000 + b"</a>" * 5000)]:
    serial = c.send_call(rc.PROC_DOMAIN_CREATE_XML, rc.xdr_string(xml) + rc.xdr_uint(0))
    hdr, body = c.recv_reply()
    rc.expect_error_reply(hdr, body, serial, None, f"CREATE_XML of {what} XML")
rc.expect_usable(c, "after the driver errors")

# Seeded random payloads for every procedure but OPEN and CLOSE.
procs = [3, 4, 6, 7, 9, 10, 11, 12, 14, 15, 16, 19, 22, 23, 24, 27, 28, 33, 34, 35, 37,
         51, 59, 60, 66, 110, 121, 122, 150, 151, 157, 183, 187, 196, 212, 231, 234, 258,
         273, 344, 360, 361, 426]
rng = random.Random(20260101)
answered = errors = 0
for i in range(400):
    proc = rng.choice(procs)
    n = rng.choice([0, 4, 8, 12, 24, 28, 40, 64, rng.randrange(0, 300)])
    payload = bytes(rng.randrange(256) for _ in range(n))
    if rng.random() < 0.5 and n >= 4:
        # Small leading words reach further into the decoders than random ones.
        payload = struct.pack(">I", rng.randrange(0, 40)) + payload[4:]
    serial = c.send_call(proc, payload)
    hdr, body = c.recv_reply()
    if hdr.serial != serial or hdr.proc != proc:
        raise SystemExit(f"FAIL: random call {i} (proc {proc}, {payload.hex()}): "
                         f"reply serial {hdr.serial} proc {hdr.proc}")
    if hdr.status == rc.STATUS_ERROR:
        rc.decode_error(body)
        errors += 1
    answered += 1
rc.check(answered == 400, f"400 random calls answered ({errors} with an error)")
rc.check(c.lookup("test") == test_dom, "domain test unchanged by the random calls")
rc.expect_usable(c, "after the random calls")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
