#!/usr/bin/env python3
"""Record libvirt-protocol traffic between a client and a server.

Listens on a Unix socket, connects every accepted client to the server's
Unix socket, forwards bytes both ways unchanged and writes each whole
packet (length word included) to the record file as one line:

    CONN DIR HEX

CONN counts accepted connections from 1; DIR is c2s (client to server)
or s2c.  Packets are cut by their length word, so a packet split across
reads is still one line.  Runs until SIGTERM/SIGINT; with --once it
stops after the first connection closes.

    wire-relay.py --listen /tmp/relay/sock --server /tmp/lv/libvirt-sock \
                  --out capture.txt
"""

import argparse
import os
import selectors
import signal
import socket
import sys

# Larger than any libvirt packet (32 MiB plus the length word): a longer
# length word means the stream is not libvirt's and framing stops.
PACKET_MAX = 32 * 1024 * 1024 + 4


class Direction:
    """One direction of one relayed connection."""

    def __init__(self, conn_id, name, src, dst, out):
        self.conn_id = conn_id
        self.name = name
        self.src = src
        self.dst = dst
        self.out = out
        self.pending = bytearray()
        self.framing = True

    def feed(self, data):
        self.dst.sendall(data)
        if not self.framing:
            return
        self.pending += data
        while len(self.pending) >= 4:
            length = int.from_bytes(self.pending[:4], "big")
            if length < 4 or length > PACKET_MAX:
                print(f"relay: conn {self.conn_id} {self.name}: length word "
                      f"{length} is not a packet; no longer recording", file=sys.stderr)
                self.framing = False
                self.pending.clear()
                return
            if len(self.pending) < length:
                return
            packet = bytes(self.pending[:length])
            del self.pending[:length]
            self.out.write(f"{self.conn_id} {self.name} {packet.hex()}\n")
            self.out.flush()


def relay(listen_path, server_path, out, once):
    try:
        os.unlink(listen_path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(listen_path)
    listener.listen(16)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    conns = 0
    peers = {}  # socket -> (Direction reading from it, the other socket)

    def close_pair(sock):
        direction, other = peers.pop(sock)
        peers.pop(other, None)
        for s in (sock, other):
            sel.unregister(s)
            s.close()
        if direction.pending:
            print(f"relay: conn {direction.conn_id} {direction.name}: "
                  f"{len(direction.pending)} bytes of an unfinished packet dropped",
                  file=sys.stderr)

    try:
        while True:
            for key, _ in sel.select():
                sock = key.fileobj
                if sock is listener:
                    client, _ = listener.accept()
                    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    try:
                        server.connect(server_path)
                    except OSError as e:
                        print(f"relay: cannot reach {server_path}: {e}", file=sys.stderr)
                        client.close()
                        server.close()
                        continue
                    conns += 1
                    peers[client] = (Direction(conns, "c2s", client, server, out), server)
                    peers[server] = (Direction(conns, "s2c", server, client, out), client)
                    sel.register(client, selectors.EVENT_READ, None)
                    sel.register(server, selectors.EVENT_READ, None)
                    continue
                if sock not in peers:
                    continue
                direction, _ = peers[sock]
                try:
                    data = sock.recv(65536)
                    if data:
                        direction.feed(data)
                except OSError:
                    data = b""
                if not data:
                    close_pair(sock)
                    if once and not peers:
                        return
    finally:
        sel.close()
        listener.close()
        try:
            os.unlink(listen_path)
        except FileNotFoundError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", required=True, help="Unix socket to create for clients")
    ap.add_argument("--server", required=True, help="the server's Unix socket")
    ap.add_argument("--out", required=True, help="record file (appended to)")
    ap.add_argument("--once", action="store_true",
                    help="exit after the first connection closes")
    args = ap.parse_args()

    # SIGTERM ends the loop through KeyboardInterrupt so the socket is removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with open(args.out, "a", encoding="ascii") as out:
        try:
            relay(args.listen, args.server, out, args.once)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
