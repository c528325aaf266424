#!/usr/bin/env python3
"""An old client's view of domain events: python3-libvirt against a
daemon that does not offer REMOTE_EVENT_CALLBACK (feature 14), as a
daemon older than libvirt 1.3.3 would not.  libvirt's client then
registers with the legacy procedures (CONNECT_DOMAIN_EVENT_REGISTER for
conn.domainEventRegister, CONNECT_DOMAIN_EVENT_REGISTER_ANY for
domainEventRegisterAny) and gets the legacy messages (DOMAIN_EVENT_*).

usage: legacy-events.py SOCKET PROXY-SOCKET URI OUT

A proxy on PROXY-SOCKET passes every packet between the client and the
daemon on SOCKET, answers "no" for feature 14 in the daemon's stead, and
logs each procedure as "call N" or "message N" to OUT.procs.  The client
(in this process) opens URI (which names PROXY-SOCKET), registers and prints each event to OUT, one a line,
until it is killed.
"""
import os
import socket
import struct
import sys
import threading

import libvirt

daemon_sock, proxy_sock, uri, out = sys.argv[1:5]
log = open(out + ".procs", "w", buffering=1)
FEATURE_CALLS = set()           # serials of CONNECT_SUPPORTS_FEATURE(14)


def packets(sock):
    buf = b""
    while True:
        while len(buf) < 4 or len(buf) < struct.unpack(">I", buf[:4])[0]:
            data = sock.recv(65536)
            if not data:
                return
            buf += data
        n = struct.unpack(">I", buf[:4])[0]
        yield bytearray(buf[:n])
        buf = buf[n:]


def pump(src, dst, to_daemon):
    for p in packets(src):
        prog, vers, proc, typ, serial, status = struct.unpack(">IIiiIi", bytes(p[4:28]))
        if prog == 0x20008086:
            if to_daemon and typ == 0:
                log.write(f"call {proc}\n")
                if proc == 60 and struct.unpack(">i", bytes(p[28:32]))[0] == 14:
                    FEATURE_CALLS.add(serial)
            elif not to_daemon and typ == 1 and proc == 60 and serial in FEATURE_CALLS:
                if status == 0:
                    p[28:32] = struct.pack(">i", 0)
            elif not to_daemon and typ == 2:
                log.write(f"message {proc}\n")
        dst.sendall(p)
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve():
    lst = socket.socket(socket.AF_UNIX)
    lst.bind(proxy_sock)
    lst.listen(4)
    while True:
        c, _ = lst.accept()
        d = socket.socket(socket.AF_UNIX)
        d.connect(daemon_sock)
        threading.Thread(target=pump, args=(c, d, True), daemon=True).start()
        threading.Thread(target=pump, args=(d, c, False), daemon=True).start()


threading.Thread(target=serve, daemon=True).start()
while not os.path.exists(proxy_sock):
    pass

libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
res = open(out, "w", buffering=1)


def show(kind):
    def cb(conn_, dom, *args):
        res.write(f"{kind} {dom.name()} {args[:-1]}\n")
    return cb


conn.domainEventRegister(show("lifecycle(legacy register)"), None)
for eid, kind in [(libvirt.VIR_DOMAIN_EVENT_ID_RTC_CHANGE, "rtc-change"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_WATCHDOG, "watchdog"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_IO_ERROR, "io-error"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_IO_ERROR_REASON, "io-error-reason"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_PMSUSPEND, "pm-suspend"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_PMWAKEUP, "pm-wakeup"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_TRAY_CHANGE, "tray-change"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_BALLOON_CHANGE, "balloon-change"),
                  (libvirt.VIR_DOMAIN_EVENT_ID_METADATA_CHANGE, "metadata-change")]:
    conn.domainEventRegisterAny(None, eid, show(kind), None)
res.write("registered\n")
while True:
    libvirt.virEventRunDefaultImpl()
