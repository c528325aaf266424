#!/usr/bin/env python3
"""Write the hand-made seeds of the client fuzzer (tests/fuzz/corpus/client/
crafted-*) from a recorded remvirtd session: paths a recording against
a default server does not take.

    craft-client-seeds.py tests/fuzz/corpus/client

crafted-keepalive-events  a PING after CONNECT_OPEN's reply, the first
                          lifecycle event ahead of REGISTER_ANY's reply,
                          CONNECTION_CLOSED before CONNECT_CLOSE's reply
crafted-event-overtakes-failed-register
                          an event for callback -1 ahead of an ERROR reply
                          to REGISTER_ANY
crafted-sasl-plain        the server offers only SASL, mechanism PLAIN,
                          done in one START; then the session goes on
crafted-sasl-scram        SASL with SCRAM-SHA-256: a START reply that asks
                          for more, a STEP that claims completion
"""

import os
import struct
import sys

REMOTE, KEEPALIVE = 0x20008086, 0x6B656570
CALL, REPLY, MESSAGE = 0, 1, 2
AUTH_LIST, SASL_INIT, SASL_START, SASL_STEP = 66, 67, 68, 69
REGISTER_ANY, DEREGISTER_ANY, CONNECT_CLOSE, CONNECTION_CLOSED = 316, 317, 2, 362


def frames(data):
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack(">I", data[off:off + 4])
        out.append(bytearray(data[off:off + n]))
        off += n
    return out


def header(f):
    return struct.unpack(">IIIiII", f[4:28])   # prog, vers, proc, type, serial, status


def frame(prog, proc, ftype, serial, payload=b""):
    body = struct.pack(">IIIiII", prog, 1, proc, ftype, serial, 0) + payload
    return bytearray(struct.pack(">I", 4 + len(body)) + body)


def xdr_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def renumber(fs, shift):
    """Replies move `shift` serials on (the SASL calls came first)."""
    for f in fs:
        prog, vers, proc, ftype, serial, status = header(f)
        if ftype == REPLY:
            f[20:24] = struct.pack(">I", serial + shift)
    return fs


def main():
    out_dir = sys.argv[1]
    base = frames(open(os.path.join(out_dir, "session-remvirtd-1"), "rb").read())
    types = [header(f)[3] for f in base]

    # keepalive and events out of their usual places
    fs = [bytearray(f) for f in base]
    event = next(f for f, t in zip(fs, types) if t == MESSAGE)
    fs = [f for f, t in zip(fs, types) if t != MESSAGE]
    at = [header(f)[2] for f in fs].index(1) + 1                 # after CONNECT_OPEN
    fs.insert(at, frame(KEEPALIVE, 1, MESSAGE, 0))
    at = [header(f)[2] for f in fs].index(REGISTER_ANY)          # ahead of its reply
    fs.insert(at, event)
    fs.insert(at + 2, event)
    at = [header(f)[2] for f in fs].index(CONNECT_CLOSE)
    fs.insert(at, frame(REMOTE, CONNECTION_CLOSED, MESSAGE, 0, struct.pack(">i", 1)))
    write(out_dir, "crafted-keepalive-events", fs)

    # an event for callback -1 overtakes an ERROR reply to REGISTER_ANY:
    # the registration fails, so its callback must never run
    fs = [bytearray(f) for f in base if header(f)[3] != MESSAGE]
    at = [header(f)[2] for f in fs].index(REGISTER_ANY)
    stray = bytearray(event)
    stray[28:32] = struct.pack(">i", -1)
    reply = fs[at]
    err = (struct.pack(">ii", 1, 10) + struct.pack(">I", 1) + xdr_string("no") +
           struct.pack(">i", 2) + struct.pack(">I", 0) * 4 + struct.pack(">ii", 0, 0) +
           struct.pack(">I", 0))
    failed = frame(REMOTE, REGISTER_ANY, REPLY, header(reply)[4], err)
    failed[24:28] = struct.pack(">I", 1)        # status ERROR
    fs[at:at + 1] = [stray, failed]
    # ...and the application, having no callback ID, deregisters nothing
    at = [header(f)[2] for f in fs].index(DEREGISTER_ANY)
    fs = fs[:at] + renumber(fs[at + 1:], -1)
    write(out_dir, "crafted-event-overtakes-failed-register", fs)

    rest = [bytearray(f) for f in base[1:]]
    auth_sasl = frame(REMOTE, AUTH_LIST, REPLY, 1, struct.pack(">II", 1, 1))
    # PLAIN: INIT, START (complete), then the session two serials on
    fs = [auth_sasl,
          frame(REMOTE, SASL_INIT, REPLY, 2, xdr_string("PLAIN")),
          frame(REMOTE, SASL_START, REPLY, 3, struct.pack(">ii", 1, 1) + struct.pack(">I", 0))]
    write(out_dir, "crafted-sasl-plain", fs + renumber(rest, 2))

    # SCRAM: START wants more, STEP says done; the server's words are made up
    rest = [bytearray(f) for f in base[1:]]
    first = b"r=fuzzfuzzfuzzfuzzfuzz,s=c2FsdHNhbHRzYWx0,i=4096"
    fs = [auth_sasl,
          frame(REMOTE, SASL_INIT, REPLY, 2, xdr_string("SCRAM-SHA-256,DIGEST-MD5")),
          frame(REMOTE, SASL_START, REPLY, 3, struct.pack(">ii", 0, 0) + xdr_string(first.decode())),
          frame(REMOTE, SASL_STEP, REPLY, 4, struct.pack(">ii", 1, 0) + xdr_string("v=AAAA"))]
    write(out_dir, "crafted-sasl-scram", fs + renumber(rest, 3))


def write(out_dir, name, fs):
    with open(os.path.join(out_dir, name), "wb") as f:
        for fr in fs:
            f.write(fr)


if __name__ == "__main__":
    main()
