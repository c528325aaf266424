#!/usr/bin/env python3
"""A scripted server for tests/integration/test-client-concurrency.sh.

    shuffle-server.py SOCKET_PATH SEED

Listens on SOCKET_PATH and speaks just enough of the remote protocol for
libremvirt to open a connection, then answers DOMAIN_LOOKUP_BY_NAME and
DOMAIN_GET_INFO out of order: it gathers the calls that arrive together
(until the socket has been quiet for a moment, or 64 are waiting) and
answers them shuffled (random.Random(SEED)), now and then after a pause,
so that a reply often reaches a reader that is not its caller.  Each
answer is derived from its own call, so a reply handed to the wrong
caller shows:
  DOMAIN_LOOKUP_BY_NAME "NAME"  the domain NAME, id len(NAME) * 1000 + the
                                sum of NAME's bytes, UUID the first 16 bytes
                                of NAME padded with '#'; an ERROR reply
                                "no domain NAME" for a NAME that starts
                                with "err-"
  DOMAIN_GET_INFO of a domain   state running, maxMem = the domain's id,
                                memory = its id + 1, nrVirtCpu 1,
                                cpuTime = its id * 7

The client names its scenario in the URI's path (CONNECT_OPEN's name
"test:///SCENARIO"):
  shuffle  as above, until the client closes
  close    as above, but the connection is closed, unanswered, once
           CLOSE_AFTER calls have come in: every call waiting then must
           fail, and every later one at once
"""

import os
import random
import select
import socket
import struct
import sys
import threading
import time

import rawclient as rc

CLOSE_AFTER = 3000      # client-concurrency.c's CLOSE_AFTER
BATCH_MAX = 64
QUIET = 0.001           # seconds without input that end a batch


def domain_id(name):
    data = name.encode()
    return len(data) * 1000 + sum(data)


def answer(hdr, body):
    """The reply packet to one call."""
    def reply(payload=b"", status=rc.STATUS_OK):
        return rc.packet(hdr.proc, payload, mtype=rc.REPLY, serial=hdr.serial, status=status)
    if hdr.proc == rc.PROC_DOMAIN_LOOKUP_BY_NAME:
        name = rc.Unpacker(body).string()
        if name.startswith("err-"):
            return reply(rc.xdr_error(rc.ERR_NO_DOMAIN, rc.FROM_TEST, f"no domain {name}"),
                         rc.STATUS_ERROR)
        uuid = name.encode()[:16].ljust(16, b"#")
        return reply(rc.xdr_domain(name, uuid, domain_id(name)))
    if hdr.proc == rc.PROC_DOMAIN_GET_INFO:
        dom_id = rc.Unpacker(body).domain()["id"]
        return reply(struct.pack(">iQQiQ", 1, dom_id, dom_id + 1, 1, dom_id * 7))
    if hdr.proc == rc.PROC_AUTH_LIST:
        return reply(rc.xdr_uint(1) + rc.xdr_int(0))        # none
    if hdr.proc == rc.PROC_CONNECT_SUPPORTS_FEATURE:
        return reply(rc.xdr_int(0))
    if hdr.proc in (rc.PROC_CONNECT_OPEN, rc.PROC_CONNECT_CLOSE,
                    rc.PROC_CONNECT_REGISTER_CLOSE_CALLBACK,
                    rc.PROC_CONNECT_UNREGISTER_CLOSE_CALLBACK):
        return reply()
    return reply(rc.xdr_error(rc.ERR_INTERNAL_ERROR, rc.FROM_TEST,
                              f"the shuffle server does not do procedure {hdr.proc}"),
                 rc.STATUS_ERROR)


class Peer:
    def __init__(self, sock, seed):
        self.sock = sock
        self.inbuf = b""
        self.rand = random.Random(seed)
        self.scenario = ""
        self.calls = 0

    def take_packets(self):
        """The whole packets buffered, as (header, body)."""
        out = []
        while len(self.inbuf) >= 4:
            length = int.from_bytes(self.inbuf[:4], "big")
            if len(self.inbuf) < length:
                break
            pkt, self.inbuf = self.inbuf[:length], self.inbuf[length:]
            out.append((rc.Header(*struct.unpack(">IIiiIi", pkt[4:28])), pkt[28:]))
        return out

    def serve(self):
        batch = []
        while True:
            ready, _, _ = select.select([self.sock], [], [], QUIET if batch else None)
            if ready:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                self.inbuf += chunk
                for hdr, body in self.take_packets():
                    if hdr.proc == rc.PROC_CONNECT_OPEN:
                        name = rc.Unpacker(body).opt_string() or ""
                        self.scenario = name.split("///", 1)[-1]
                    if hdr.proc in (rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.PROC_DOMAIN_GET_INFO):
                        self.calls += 1
                        if self.scenario == "close" and self.calls == CLOSE_AFTER:
                            return      # with calls waiting for their answers
                    batch.append(answer(hdr, body))
                if len(batch) < BATCH_MAX:
                    continue
            self.rand.shuffle(batch)
            if self.rand.random() < 0.05:
                time.sleep(self.rand.random() * 0.01)
            self.sock.sendall(b"".join(batch))
            batch = []


def handle(sock, seed):
    try:
        Peer(sock, seed).serve()
    except OSError:
        pass                # the client went away mid-write
    finally:
        sock.close()


def main():
    path, seed = sys.argv[1], int(sys.argv[2])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    n = 0
    while True:
        sock, _ = listener.accept()
        n += 1
        threading.Thread(target=handle, args=(sock, seed + n), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        os._exit(0)
