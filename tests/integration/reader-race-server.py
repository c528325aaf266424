#!/usr/bin/env python3
"""A scripted server for tests/integration/test-client-reader-race.sh.

    reader-race-server.py SOCKET_PATH

Listens on SOCKET_PATH and speaks just enough of the remote protocol for
libremvirt to open a connection (the scenario is CONNECT_OPEN's name,
"test:///SCENARIO").  reader-race-client.c holds the client's half: one
thread calls GET_CAPABILITIES (call A) and reads; while it reads, a
second thread's DOMAIN_DEFINE_XML (call B, 40 KB) is left to it to write,
and the client's send buffer is too small for it.  This server stops
reading after A, so the reader faces a full socket with part of a frame
in hand, and must deliver what comes meanwhile (wait_writable).  The
server looks at its own socket to know where the client is: bytes of B
waiting in its receive queue (SIOCINQ) mean the client is stuck writing
B; an empty send queue (SIOCOUTQ) means the client has read all it was
sent.  Only then does it read again.

Scenarios, by what the server does once it has A:
  partial   sends the first 1000 bytes of A's reply; once B is stuck,
            the rest of it and a PING; once that is read, reads B and
            answers it, followed by PONGs as long as A's reply (a reader
            that kept A's length read them as B's reply: the CI failure)
  ping      sends a PING; once B (and the PONG queued behind it) is
            stuck, A's whole reply and 40 bytes of two PONGs; once that
            is read, reads B, wants the PONG right after it, sends the
            rest of the PONGs and answers B (with an error if the PONG
            did not come)
  withheld  as partial, but answers B only after CONNECT_GET_HOSTNAME,
            which A's thread calls once A has returned: a reader that
            went on waiting after its answer was delivered under it
            never returns
"""

import fcntl
import struct
import sys
import termios
import time

import rawclient as rc
import scripted_server as ss

PROC_GET_CAPABILITIES = 7
PROC_DEFINE_XML = 11
PROC_GET_HOSTNAME = 59
PROC_SUPPORTS_FEATURE = 60
KEEPALIVE_PING, KEEPALIVE_PONG = 1, 2

CAPS_LEN = 20000            # reader-race-client.c's
PARTIAL = 1000
UUID = bytes(range(16))
KEEPALIVE = dict(prog=rc.KEEPALIVE_PROGRAM, mtype=rc.MESSAGE, serial=0)


def caps_text():
    return "".join(chr(ord("a") + i % 26) for i in range(CAPS_LEN))


class Peer(ss.Peer):
    def __init__(self, sock):
        super().__init__(sock)
        self.define = None          # withheld: B's header, answered later
        self.pong_rest = b""

    def queued(self, request):
        buf = bytearray(4)
        fcntl.ioctl(self.sock.fileno(), request, buf)
        return struct.unpack("i", buf)[0]

    def wait_until(self, cond, what):
        # Polls its own socket's queues: what the client does is seen
        # there, not guessed from time.
        deadline = time.monotonic() + 60
        while not cond():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the client never {what}")
            time.sleep(0.001)

    def capabilities(self, hdr):
        """A: start its reply, stall until B is stuck, finish it."""
        whole = rc.packet(hdr.proc, rc.xdr_string(caps_text()), mtype=rc.REPLY,
                          serial=hdr.serial)
        ping = rc.packet(KEEPALIVE_PING, **KEEPALIVE)
        if self.scenario == "ping":
            first, rest = ping, whole
            pongs = rc.packet(KEEPALIVE_PONG, **KEEPALIVE) * 2
            rest += pongs[:40]
            self.pong_rest = pongs[40:]
        else:
            first, rest = whole[:PARTIAL], whole[PARTIAL:] + ping
        self.sock.sendall(first)
        # B's bytes (and, for ping, the PONG behind them) arrive, but the
        # client's send buffer holds only part of B: its writer waits.
        self.wait_until(lambda: self.queued(termios.FIONREAD) > 0, "began to write B")
        self.sock.sendall(rest)
        self.wait_until(lambda: self.queued(termios.TIOCOUTQ) == 0,
                        "read what came while it was writing B")

    def define_xml(self, hdr):
        if self.scenario == "ping":
            got = self.recv_packet()
            pong = got and got[0].prog == rc.KEEPALIVE_PROGRAM and got[0].proc == KEEPALIVE_PONG
            self.sock.sendall(self.pong_rest)
            if not pong:
                self.error(hdr, "the server's PING got no PONG right after the define")
                return
        self.reply(hdr, rc.xdr_domain("raced", UUID, -1))
        if self.scenario == "partial":
            pong = rc.packet(KEEPALIVE_PONG, **KEEPALIVE)
            self.sock.sendall(pong * (CAPS_LEN // len(pong) + 1))

    def answer(self, hdr, body):
        p = hdr.proc
        if hdr.prog == rc.KEEPALIVE_PROGRAM:
            pass
        elif p == PROC_SUPPORTS_FEATURE:
            self.reply(hdr, rc.xdr_int(0))
        elif p == PROC_GET_CAPABILITIES:
            self.capabilities(hdr)
        elif p == PROC_DEFINE_XML and self.scenario == "withheld":
            self.define = hdr
        elif p == PROC_DEFINE_XML:
            self.define_xml(hdr)
        elif p == PROC_GET_HOSTNAME:
            self.reply(hdr, rc.xdr_string("racer"))
            if self.define:
                self.define_xml(self.define)
                self.define = None
        else:
            self.error(hdr, f"the reader-race server does not do procedure {p}")


if __name__ == "__main__":
    ss.serve(sys.argv[1], Peer, ended=(OSError, RuntimeError))
