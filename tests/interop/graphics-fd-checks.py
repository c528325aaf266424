"""DOMAIN_OPEN_GRAPHICS_FD and DOMAIN_OPEN_GRAPHICS through python3-libvirt,
and descriptor passing on the wire, against one daemon; prints one line
per check, the same for libvirtd and remvirtd (test-qemu-graphics-fd.sh
compares them).

usage: graphics-fd-checks.py URI SOCKET URI_NAME
  URI       a qemu+unix URI of the daemon (guests: vnc running with VNC,
            nog running without graphics, off defined and shut off)
  SOCKET    the daemon's read-write Unix socket, for the raw packets
  URI_NAME  what CONNECT_OPEN names (qemu:///system)
"""
import os
import socket
import struct
import sys

import libvirt

uri, sock_path, uri_name = sys.argv[1:4]
libvirt.registerErrorHandler(lambda *a: None, None)
BANNER = b"RFB 003.008\n"


def banner(fd_or_sock):
    """The first 12 bytes the VNC server sends (bounded wait)."""
    s = fd_or_sock if isinstance(fd_or_sock, socket.socket) else socket.socket(fileno=fd_or_sock)
    s.settimeout(20)
    data = b""
    while len(data) < len(BANNER):
        more = s.recv(len(BANNER) - len(data))
        if not more:
            break
        data += more
    s.close()
    return data


def err(e):
    return f"error {e.get_error_code()} {e.get_error_domain()} {e.get_error_message()}"


conn = libvirt.open(uri)
vnc = conn.lookupByName("vnc")

print("openGraphicsFD(0):", banner(vnc.openGraphicsFD(0, 0)))
print("openGraphicsFD(0, SKIPAUTH):",
      banner(vnc.openGraphicsFD(0, libvirt.VIR_DOMAIN_OPEN_GRAPHICS_SKIPAUTH)))
a, b = socket.socketpair()
vnc.openGraphics(0, b.fileno(), 0)
b.close()       # QEMU has its own copy now
print("openGraphics(0, socketpair end):", banner(a))

# Several at once on one connection: each gets its own display client.
fds = [vnc.openGraphicsFD(0, 0) for _ in range(3)]
print("three openGraphicsFD:", [banner(fd) for fd in fds])

a, b = socket.socketpair()
for what, call in [
    ("openGraphicsFD(1)", lambda: vnc.openGraphicsFD(1, 0)),
    ("openGraphicsFD(0, flags 2)", lambda: vnc.openGraphicsFD(0, 2)),
    ("openGraphics(5)", lambda: vnc.openGraphics(5, a.fileno(), 0)),
    ("no graphics: openGraphicsFD(0)", lambda: conn.lookupByName("nog").openGraphicsFD(0, 0)),
    ("shut off: openGraphicsFD(0)", lambda: conn.lookupByName("off").openGraphicsFD(0, 0)),
]:
    try:
        call()
        print(what, "worked")
    except libvirt.libvirtError as e:
        print(what, err(e))

ro = libvirt.openReadOnly(uri)
try:
    ro.lookupByName("vnc").openGraphicsFD(0, 0)
    print("read-only openGraphicsFD worked")
except libvirt.libvirtError as e:
    print("read-only openGraphicsFD", err(e))
ro.close()

# ---- the wire, by hand ----
PROG, CALL, REPLY, CALL_WITH_FDS, REPLY_WITH_FDS = 0x20008086, 0, 1, 4, 5
OPEN, GET_TYPE, SUPPORTS_FEATURE, LOOKUP, OPEN_GRAPHICS, OPEN_GRAPHICS_FD = 1, 3, 60, 23, 249, 343


def xstr(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


class Raw:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(20)
        self.s.connect(sock_path)
        self.serial = 0

    def send(self, proc, body=b"", fds=None, mtype=None):
        self.serial += 1
        mtype = mtype if mtype is not None else (CALL_WITH_FDS if fds is not None else CALL)
        if fds is not None:
            body = struct.pack(">I", len(fds)) + body
        pkt = struct.pack(">IIiiIi", PROG, 1, proc, mtype, self.serial, 0) + body
        self.s.sendall(struct.pack(">I", len(pkt) + 4) + pkt)
        for fd in fds or []:
            # libvirt's way: one byte per descriptor, after the packet.
            socket.send_fds(self.s, [b"\0"], [fd])

    def recv_exact(self, n):
        data = b""
        while len(data) < n:
            more = self.s.recv(n - len(data))
            if not more:
                raise EOFError(f"end of file after {len(data)} of {n} bytes")
            data += more
        return data

    def reply(self):
        """(type, status, payload, fds) of the next packet."""
        n = struct.unpack(">I", self.recv_exact(4))[0]
        pkt = self.recv_exact(n - 4)
        _, _, _, mtype, _, status = struct.unpack(">IIiiIi", pkt[:24])
        payload, fds = pkt[24:], []
        if mtype == REPLY_WITH_FDS:
            count = struct.unpack(">I", payload[:4])[0]
            payload = payload[4:]
            for _ in range(count):
                msg, got, _, _ = socket.recv_fds(self.s, 1, 1)
                fds += got
        return mtype, status, payload, fds

    def call(self, proc, body=b"", fds=None, mtype=None):
        self.send(proc, body, fds, mtype)
        return self.reply()


def error_text(payload):
    code, dom, flag = struct.unpack(">iiI", payload[:12])
    n = struct.unpack(">I", payload[12:16])[0] if flag else 0
    return f"error {code} {dom} {payload[16:16 + n].decode()}"


def show(what, r):
    mtype, status, payload, fds = r
    text = error_text(payload) if status == 1 else f"ok {payload.hex()}"
    print(f"raw {what}: type {mtype} status {status} fds {len(fds)} {text}")
    return fds


def open_fd_count():
    return len(os.listdir("/proc/self/fd"))


raw = Raw()
raw.call(OPEN, struct.pack(">I", 1) + xstr(uri_name) + struct.pack(">I", 0))
show("SUPPORTS_FEATURE FD_PASSING", raw.call(SUPPORTS_FEATURE, struct.pack(">i", 8)))
mtype, status, dom, _ = raw.call(LOOKUP, xstr("vnc"))
args = dom + struct.pack(">II", 0, 0)
got = show("OPEN_GRAPHICS_FD", raw.call(OPEN_GRAPHICS_FD, args))
print("raw OPEN_GRAPHICS_FD's descriptor:", banner(got[0]) if got else None)
show("OPEN_GRAPHICS as a plain CALL", raw.call(OPEN_GRAPHICS, args))
a, b = socket.socketpair()
show("OPEN_GRAPHICS with one descriptor", raw.call(OPEN_GRAPHICS, args, fds=[b.fileno()]))
b.close()
print("raw OPEN_GRAPHICS's socket:", banner(a))
# A descriptor sent to a call that takes none: the call runs as usual.
r, w = os.pipe()
show("GET_TYPE with one descriptor", raw.call(GET_TYPE, fds=[r]))
os.close(r)
# The daemon let go of it: the pipe's read end is closed everywhere, so
# writing gets EPIPE (bounded: the write end is non-blocking).
os.set_blocking(w, False)
try:
    os.write(w, b"x")
    print("raw the descriptor GET_TYPE got: still open in the daemon")
except BrokenPipeError:
    print("raw the descriptor GET_TYPE got: closed by the daemon")
os.close(w)
show("GET_TYPE after", raw.call(GET_TYPE))
