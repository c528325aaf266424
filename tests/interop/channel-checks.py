"""DOMAIN_OPEN_CHANNEL through python3-libvirt against one daemon; prints
one line per check, the same for libvirtd and remvirtd
(test-qemu-channel.sh compares them).

usage: channel-checks.py URI DIR XML_TEMPLATE
  DIR: where the guest's channel sockets go (this side's own)
  XML_TEMPLATE: a guest definition with @BIND@ and @LISTEN@ for the paths
  of its bind-mode and connect-mode channels

The connect-mode channel's far end is this script: it listens there and
echoes in upper case what any connection sends, so the stream's data can
be seen going both ways (libvirtd connects a channel's stream to its
socket path whatever the mode, and so does remvirtd)."""
import os
import signal
import socket
import sys
import threading

import libvirt

uri, where, template = sys.argv[1:4]
libvirt.registerErrorHandler(lambda *a: None, None)
signal.alarm(120)       # a hung stream ends the test


def echo(conn):
    while True:
        data = conn.recv(4096)
        if not data:
            break
        conn.sendall(data.upper())
    conn.close()


listen_path = os.path.join(where, "listen.sock")
srv = socket.socket(socket.AF_UNIX)
srv.bind(listen_path)
srv.listen(8)
threading.Thread(target=lambda: [threading.Thread(target=echo, args=(srv.accept()[0],),
                                                  daemon=True).start() for _ in iter(int, 1)],
                 daemon=True).start()

conn = libvirt.open(uri)
with open(template) as f:
    xml = f.read().replace("@BIND@", os.path.join(where, "bind.sock")).replace("@LISTEN@", listen_path)
dom = conn.createXML(xml, 0)


def err(e):
    return f"error {e.get_error_code()} {e.get_error_domain()} {e.get_error_message()}"


def open_channel(name, flags=0):
    st = conn.newStream(0)
    dom.openChannel(name, st, flags)
    return st


def roundtrip(st, text):
    st.send(text)
    got = b""
    while len(got) < len(text):
        more = st.recv(len(text) - len(got))
        if not isinstance(more, bytes) or not more:
            break
        got += more
    return got


first = open_channel("org.test.connect")
print("by port name:", roundtrip(first, b"ping\n"))
try:
    open_channel("org.test.connect")
    print("a second session opened")
except libvirt.libvirtError as e:
    print("a second session:", err(e))
forced = open_channel("org.test.connect", libvirt.VIR_DOMAIN_CHANNEL_FORCE)
print("FORCE:", roundtrip(forced, b"again\n"))
try:
    print("the forced-out session's data:", first.recv(16))
except libvirt.libvirtError as e:
    print("the forced-out session:", err(e))
try:
    first.abort()
except libvirt.libvirtError:
    pass                # it failed already
forced.finish()
by_alias = open_channel("channel1")
print("by alias:", roundtrip(by_alias, b"alias\n"))
by_alias.finish()
default = open_channel(None)
print("no name: the first channel opens")
default.abort()

for what, call in [
    ("no such channel", lambda: open_channel("nosuch")),
    ("flags 2", lambda: open_channel("org.test.connect", 2)),
]:
    try:
        call()
        print(what, "worked")
    except libvirt.libvirtError as e:
        print(what, err(e))
dom.destroy()
try:
    open_channel("org.test.connect")
    print("destroyed (transient: gone): worked")
except libvirt.libvirtError as e:
    print("destroyed (transient: gone):", err(e))
