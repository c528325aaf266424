#!/usr/bin/env bash
# Stream packets byte by byte (docs/wire-protocol.md, "Streams"): an
# upload and a download exchange exactly as libvirtd's; and what a peer
# may get wrong: a stream packet for no stream (dropped), a hole on a
# stream that is not sparse, a data packet over 1 MiB, data sent on a
# download (each fails that stream only, with a STREAM ERROR, and the
# abort that follows is answered), more streams than a connection may
# open, a client gone with a download under way.  The connection (and
# the daemon) keep serving throughout.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
requires virsh
start_remvirtd
virsh -q -c "$REMVIRTD_URI" vol-create-as default-pool w 1M >/dev/null
virsh -q -c "$REMVIRTD_URI" vol-create-as default-pool huge 1G >/dev/null

rawpy "$REMVIRTD_SOCK" <<'PY'
import struct
import sys

import rawclient as rc
import rv_protocol as rv

STREAM, HOLE, CONTINUE = rv.RV_STREAM, rv.RV_STREAM_HOLE, rv.RV_CONTINUE
path = sys.argv[1]
c = rc.Client(path)
c.open_connection()
pool = rc.xdr_string("default-pool")


def vol(name):
    # rv_nonnull_storage_vol: pool, name, key.
    return pool + rc.xdr_string(name) + rc.xdr_string("/default-pool/" + name)


def span(offset, length):
    return struct.pack(">QQI", offset, length, 0)


def stream(serial, proc, status, data=b"", mtype=STREAM):
    c.send(rc.packet(proc, data, serial=serial, mtype=mtype, status=status))


def must(cond, what):
    if not cond:
        raise SystemExit(f"FAIL: {what}")


def expect(serial, proc, mtype, status, data=None, what=""):
    hdr, body = c.recv_packet()
    must((hdr.serial, hdr.proc, hdr.type, hdr.status) == (serial, proc, mtype, status),
             f"{what}: got serial {hdr.serial} proc {hdr.proc} type {hdr.type} "
             f"status {hdr.status}, wanted {serial} {proc} {mtype} {status}")
    if data is not None:
        must(body == data, f"{what}: payload {body[:40]!r}, wanted {data[:40]!r}")
    return body


UP, DOWN = rc.PROC_STORAGE_VOL_UPLOAD, rc.PROC_STORAGE_VOL_DOWNLOAD

# Upload: REPLY, our data, our OK, its empty STREAM OK.
s = c.send_call(UP, vol("w") + span(0, 0))
expect(s, UP, rc.REPLY, rc.STATUS_OK, b"", "upload reply")
stream(s, UP, CONTINUE, b"abc")
stream(s, UP, CONTINUE, b"de")
stream(s, UP, rc.STATUS_OK)
expect(s, UP, STREAM, rc.STATUS_OK, b"", "upload finish")
print("ok   upload: reply, data, finish answered with an empty STREAM OK")

# Download: REPLY, data, an empty CONTINUE (the end), our OK, its OK.
s = c.send_call(DOWN, vol("w") + span(1, 4))
expect(s, DOWN, rc.REPLY, rc.STATUS_OK, b"", "download reply")
expect(s, DOWN, STREAM, CONTINUE, b"bcde", "download data")
expect(s, DOWN, STREAM, CONTINUE, b"", "download end")
stream(s, DOWN, rc.STATUS_OK)
expect(s, DOWN, STREAM, rc.STATUS_OK, b"", "download finish")
print("ok   download: data, an empty CONTINUE at the end, finish answered")

# A stream packet for no stream: dropped, the next call is answered.
stream(999, UP, CONTINUE, b"stray")
stream(s, DOWN, rc.STATUS_ERROR)
rc.expect_usable(c, "after stream packets for no stream")
print("ok   stream packets for no stream are dropped")


def fails_then_abort(proc, args, send, what):
    s = c.send_call(proc, args)
    expect(s, proc, rc.REPLY, rc.STATUS_OK, b"", what)
    send(s)
    while True:     # a download may have data in flight before the error
        hdr, body = c.recv_packet()
        if hdr.type == STREAM and hdr.status == CONTINUE:
            continue
        must((hdr.serial, hdr.type, hdr.status) == (s, STREAM, rc.STATUS_ERROR),
                 f"{what}: got type {hdr.type} status {hdr.status}, wanted a STREAM ERROR")
        err = rc.decode_error(body)
        break
    stream(s, proc, rc.STATUS_ERROR)
    only_reply_next(f"{what}, then an abort")
    print(f"ok   {what}: {err['message']}")


def only_reply_next(what):
    """The next packet is the reply to a new call: a failed stream's error
    is its last packet (libvirt's client drops its connection on a second
    answer to a finish or abort that crossed the error)."""
    h = c.send_call(rc.PROC_CONNECT_GET_HOSTNAME)
    hdr, body = c.recv_packet()
    must((hdr.serial, hdr.type, hdr.status) == (h, rc.REPLY, rc.STATUS_OK),
         f"{what}: got serial {hdr.serial} type {hdr.type} status {hdr.status}, "
         f"wanted only the reply to call {h}")


fails_then_abort(UP, vol("w") + span(0, 0),
                 lambda s: stream(s, UP, rc.STATUS_OK, struct.pack(">qI", 10, 0), mtype=HOLE),
                 "a hole on a stream that is not sparse")
fails_then_abort(UP, vol("w") + span(0, 0),
                 lambda s: stream(s, UP, CONTINUE, b"x" * (1024 * 1024 + 1)),
                 "a data packet over 1 MiB")
fails_then_abort(DOWN, vol("w") + span(0, 8),
                 lambda s: stream(s, DOWN, CONTINUE, b"x"),
                 "data sent on a download")

# A finish that crosses the server's error (virsh's upload past a
# volume's end, when its finish leaves before the error arrives): the
# error answers it, nothing else follows.
s = c.send_call(UP, vol("w") + span(0, 0))
expect(s, UP, rc.REPLY, rc.STATUS_OK, b"", "an upload")
c.send(rc.packet(UP, b"x" * (1024 * 1024 + 1), serial=s, mtype=STREAM, status=CONTINUE)
       + rc.packet(UP, b"", serial=s, mtype=STREAM, status=rc.STATUS_OK))
expect(s, UP, STREAM, rc.STATUS_ERROR, None, "a finish crossing the error")
only_reply_next("a finish crossing the error")
print("ok   a finish that crossed the error gets the error only")

# At most 16 streams on one connection.
opened = []
for i in range(16):
    s = c.send_call(UP, vol("w") + span(0, 0))
    expect(s, UP, rc.REPLY, rc.STATUS_OK, b"", f"stream {i + 1}")
    opened.append(s)
hdr, body = c.call(UP, vol("w") + span(0, 0))
must(hdr.status == rc.STATUS_ERROR, "a 17th stream opened")
print(f"ok   a 17th stream is refused: {rc.decode_error(body)['message']}")
for s in opened:
    stream(s, UP, rc.STATUS_ERROR)
    expect(s, UP, STREAM, rc.STATUS_OK, b"", "abort")
rc.expect_usable(c, "after 16 aborts")

# A client that goes with a 1 GiB download under way.
d = rc.Client(path)
d.open_connection()
s = d.send_call(DOWN, vol("huge") + span(0, 0))
d.recv_packet()
d.recv_packet()
d.close()
rc.expect_usable(c, "after a client left mid-download")
print("ok   a client that leaves mid-download costs the others nothing")
PY
