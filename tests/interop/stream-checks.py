#!/usr/bin/python3
"""Stream edge cases through python3-libvirt (test-stream-abort.sh).

    stream-checks.py URI POOL VOL edges     abort both ways, errors, reuse
    stream-checks.py URI POOL VOL hold N    start a download, read N bytes,
                                            print "holding", then sleep
    stream-checks.py URI POOL VOL slow N    read N bytes of a download in
                                            64 KiB steps, a pause each

The checks in "edges" hold for libvirtd's dir pools as for remvirtd.
"""

import sys
import time

import libvirt

uri, pool_name, vol_name, what = sys.argv[1:5]
conn = libvirt.open(uri)
vol = conn.storagePoolLookupByName(pool_name).storageVolLookupByName(vol_name)


def expect_error(fn, code, what):
    try:
        fn()
    except libvirt.libvirtError as e:
        if e.get_error_code() != code:
            sys.exit(f"FAIL: {what}: error code {e.get_error_code()} ({e}), not {code}")
        print(f"ok   {what}: {e}")
        return
    sys.exit(f"FAIL: {what}: no error")


def edges():
    # The client aborts an upload after some data, then a download after
    # its first packet: both answered, the connection goes on.
    st = conn.newStream(0)
    vol.upload(st, 0, 0, 0)
    st.send(b"a" * 100000)
    st.abort()
    print("ok   upload aborted by the client")
    st = conn.newStream(0)
    vol.download(st, 0, 0, 0)
    first = st.recv(65536)
    if not first:
        sys.exit("FAIL: download gave no data")
    st.abort()
    print("ok   download aborted by the client")
    # The server fails a stream (data past the length asked for): the
    # client's finish reports the server's error.
    st = conn.newStream(0)
    vol.upload(st, 0, 10, 0)

    def send_too_much():
        st.send(b"b" * 100)
        st.finish()
    expect_error(send_too_much, libvirt.VIR_ERR_SYSTEM_ERROR, "upload past its length")
    # Two streams at once on one connection, and the connection still
    # serves calls in between.
    up, down = conn.newStream(0), conn.newStream(0)
    vol.upload(up, 0, 6, 0)
    vol.download(down, 0, 6, 0)
    up.send(b"xyzxyz")
    conn.getVersion()
    got = b""
    while True:
        d = down.recv(6)
        if not d:
            break
        got += d
    down.finish()
    up.finish()
    if len(got) != 6:
        sys.exit(f"FAIL: concurrent download gave {len(got)} bytes")
    print("ok   an upload and a download at once")
    st = conn.newStream(0)
    vol.download(st, 0, 6, 0)
    d = st.recv(6)
    st.finish() if not st.recv(6) else None
    if d != b"xyzxyz":
        sys.exit(f"FAIL: the upload wrote {d!r}")
    print("ok   the upload's data reads back")


def hold(n):
    st = conn.newStream(0)
    vol.download(st, 0, 0, 0)
    got = 0
    while got < n:
        got += len(st.recv(65536))
    print("holding", flush=True)
    time.sleep(600)


def slow(n):
    st = conn.newStream(0)
    vol.download(st, 0, 0, 0)
    got = 0
    while got < n:
        d = st.recv(65536)
        if not d:
            sys.exit("FAIL: the download ended early")
        got += len(d)
        time.sleep(0.005)
    st.abort()
    print(f"ok   read {got} bytes slowly")


if what == "edges":
    edges()
elif what == "hold":
    hold(int(sys.argv[5]))
elif what == "slow":
    slow(int(sys.argv[5]))
else:
    sys.exit(f"unknown check {what}")
