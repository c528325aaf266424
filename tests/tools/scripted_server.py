"""What the scripted servers that test libremvirt share
(tests/integration/hostile-server.py, reader-race-server.py): a peer that
reads whole packets and answers them, the opening of a connection, and a
Unix socket listener with a thread per client."""

import os
import socket
import struct
import threading

import rawclient as rc

PROC_REGISTER_CLOSE = 360
PROC_UNREGISTER_CLOSE = 361
ERR_INTERNAL = 1
FROM_REMOTE = 13


class Peer:
    """One client's connection; the scenario is the name CONNECT_OPEN
    carried ("test:///SCENARIO")."""

    def __init__(self, sock):
        self.sock = sock
        self.inbuf = b""
        self.scenario = ""

    def recv_packet(self):
        """(Header, body), or None when the client has gone."""
        while True:
            if len(self.inbuf) >= 4:
                length = int.from_bytes(self.inbuf[:4], "big")
                if len(self.inbuf) >= length:
                    pkt, self.inbuf = self.inbuf[:length], self.inbuf[length:]
                    return rc.Header(*struct.unpack(">IIiiIi", pkt[4:28])), pkt[28:]
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.inbuf += chunk

    def reply(self, hdr, payload=b"", serial=None):
        self.sock.sendall(rc.packet(hdr.proc, payload, mtype=rc.REPLY,
                                    serial=hdr.serial if serial is None else serial))

    def error(self, hdr, message):
        self.sock.sendall(rc.packet(hdr.proc, rc.xdr_error(ERR_INTERNAL, FROM_REMOTE, message),
                                    mtype=rc.REPLY, serial=hdr.serial,
                                    status=rc.STATUS_ERROR))

    def message(self, proc, payload, **kw):
        self.sock.sendall(rc.packet(proc, payload, mtype=rc.MESSAGE, serial=1, **kw))

    def opening(self, hdr, body):
        """Answer a call of the connection's opening or closing (no
        authentication, CONNECT_OPEN names the scenario); False if hdr is
        none of those."""
        p = hdr.proc
        if hdr.prog != rc.REMOTE_PROGRAM or hdr.type != rc.CALL:
            return False
        if p == rc.PROC_AUTH_LIST:
            self.reply(hdr, rc.xdr_uint(1) + rc.xdr_int(0))     # none
        elif p == rc.PROC_CONNECT_OPEN:
            name = rc.Unpacker(body).opt_string() or ""
            self.scenario = name.split("///", 1)[-1]
            self.reply(hdr)
        elif p in (PROC_REGISTER_CLOSE, PROC_UNREGISTER_CLOSE, rc.PROC_CONNECT_CLOSE):
            self.reply(hdr)
        else:
            return False
        return True


    def serve(self):
        """Answer each call: the opening's here, the rest with the
        subclass's answer(hdr, body), which returns False to hang up."""
        while True:
            got = self.recv_packet()
            if got is None:
                return
            hdr, body = got
            if not self.opening(hdr, body) and self.answer(hdr, body) is False:
                return


def serve(path, peer_class, ended=(OSError,)):
    """Listen on the Unix socket path, say "ready", and serve each client
    with peer_class(sock).serve() in a thread of its own; an exception of
    the ended kinds ends that client's connection only."""
    def handle(sock):
        try:
            peer_class(sock).serve()
        except ended as e:
            print(f"connection ended: {e}", flush=True)
        finally:
            sock.close()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    try:
        while True:
            sock, _ = listener.accept()
            threading.Thread(target=handle, args=(sock,), daemon=True).start()
    except KeyboardInterrupt:
        os._exit(0)
