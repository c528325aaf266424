#!/usr/bin/env python3
"""A scripted hostile server for tests/integration/test-hostile-server.sh.

    hostile-server.py SOCKET_PATH

Listens on SOCKET_PATH and speaks just enough of the remote protocol for
libremvirt to open a connection (AUTH_LIST offers none, keepalive is
declined, event callbacks are offered), then misbehaves as the scenario
says.  The client names its scenario in the URI's path: CONNECT_OPEN's
name "test:///SCENARIO".  hostile-client.c holds the matching checks.

Every scenario's last REGISTER_ANY gets the honest ID BARRIER_ID followed
by an event for it: once the client has seen that event, its event loop
has dealt with every earlier one (events are delivered in order).

Scenarios, by what REGISTER_ANY gets:
  negative-id       callbackID -1, then an event for -1
  duplicate-id      5, then 5 again (plus an event for 5 after the barrier's reply)
  event-then-error  an event for -1, a pause, then an ERROR reply
  event-then-eof    an event for -1, a pause, then the connection closes
  race              RACE_ROUNDS times: an event for -1 and at once an ERROR reply
  bad-counts        (no registration) CONNECT_EVENT_CONNECTION_CLOSED with
                    reason 99, then CONNECT_NUM_OF_DOMAINS answers -5
  stray-reply       (no registration) CONNECT_NUM_OF_DOMAINS is answered
                    with a serial no call has
  bad-messages      3, then an event for 3 with status ERROR; then
                    CONNECT_NUM_OF_DOMAINS sends three malformed PINGs (status
                    ERROR, version 2, a payload) and one good one, and
                    answers with the number of PONGs that came back

Streams (tests/interop/test-sparse-streams.sh, with rvsh vol-download of
any volume in any pool):
  holes             the download sends "abc", a hole of 5, "de", a hole
                    of 3, then its end, whether the client asked for a
                    sparse stream or not
  bad-hole          the download sends "abc", then a hole of -5
"""

import socket
import struct
import sys
import time

import rawclient as rc
import scripted_server as ss

PROC_NUM_OF_DOMAINS = 51
PROC_SUPPORTS_FEATURE = 60
PROC_REGISTER_ANY = 316
PROC_LIFECYCLE = 318
PROC_CONNECTION_CLOSED = 362
PROC_POOL_LOOKUP_BY_NAME = 84
PROC_VOL_LOOKUP_BY_NAME = 95
PROC_VOL_DOWNLOAD = 209
STREAM, STREAM_HOLE, CONTINUE = 3, 6, 2

FEATURE_EVENT_CALLBACK = 14
FEATURE_CLOSE_CALLBACK = 15


KEEPALIVE_PING = 1
KEEPALIVE_PONG = 2

BARRIER_ID = 7
RACE_ROUNDS = 200       # hostile-client.c's RACE_ROUNDS
UUID = bytes(range(16))


class Peer(ss.Peer):
    def __init__(self, sock):
        super().__init__(sock)
        self.registrations = 0

    def event(self, callback_id, **kw):
        # SUSPENDED (3), PAUSED (0) for a domain "test" with id 1
        self.message(PROC_LIFECYCLE, rc.xdr_int(callback_id) +
                     rc.xdr_domain("test", UUID, 1) + rc.xdr_int(3) + rc.xdr_int(0), **kw)

    def count_pongs(self):
        """Three malformed PINGs and a good one; the PONGs that come back."""
        # libremvirt skips a PONG while another thread is writing a frame
        # (that frame is sign of life enough), and the call that brought
        # us here may still hold its write lock: let it finish first.
        time.sleep(0.5)
        ping = dict(prog=rc.KEEPALIVE_PROGRAM, mtype=rc.MESSAGE, serial=0)
        self.sock.sendall(rc.packet(KEEPALIVE_PING, status=rc.STATUS_ERROR, **ping) +
                          rc.packet(KEEPALIVE_PING, vers=2, **ping) +
                          rc.packet(KEEPALIVE_PING, b"junk", **ping) +
                          rc.packet(KEEPALIVE_PING, **ping))
        pongs = 0
        self.sock.settimeout(1.5)
        try:
            while True:
                got = self.recv_packet()
                if got is None:
                    break
                hdr, _ = got
                if hdr.prog == rc.KEEPALIVE_PROGRAM and hdr.proc == KEEPALIVE_PONG:
                    pongs += 1
        except socket.timeout:
            pass
        self.sock.settimeout(None)
        return pongs

    def barrier(self, hdr):
        self.reply(hdr, rc.xdr_int(BARRIER_ID))
        self.event(BARRIER_ID)

    def register_any(self, hdr):
        """Returns False when the connection is to end now."""
        self.registrations += 1
        n, s = self.registrations, self.scenario
        if s == "negative-id" and n == 1:
            self.reply(hdr, rc.xdr_int(-1))
            self.event(-1)
        elif s == "duplicate-id" and n <= 2:
            self.reply(hdr, rc.xdr_int(5))
        elif s == "duplicate-id" and n == 3:
            self.barrier(hdr)
            self.event(5)
            self.event(BARRIER_ID)
        elif s in ("event-then-error", "event-then-eof") and n == 1:
            self.event(-1)
            # Long enough for the client's loop to take the event while
            # the registration is still in flight.
            time.sleep(0.5)
            if s.endswith("eof"):
                return False
            self.error(hdr, "registration refused by the hostile server")
        elif s == "bad-messages" and n == 1:
            self.reply(hdr, rc.xdr_int(3))
            self.event(3, status=rc.STATUS_ERROR)
        elif s == "race" and n <= RACE_ROUNDS:
            self.event(-1)
            self.error(hdr, "registration refused by the hostile server")
        else:
            self.barrier(hdr)
        return True

    def download(self, hdr):
        """The stream scenarios' download: REPLY, then their packets."""
        self.reply(hdr)

        def stream(mtype, payload=b""):
            self.sock.sendall(rc.packet(PROC_VOL_DOWNLOAD, payload, mtype=mtype,
                                        serial=hdr.serial, status=CONTINUE))
        stream(STREAM, b"abc")
        if self.scenario == "bad-hole":
            stream(STREAM_HOLE, struct.pack(">qI", -5, 0))
            return
        stream(STREAM_HOLE, struct.pack(">qI", 5, 0))
        stream(STREAM, b"de")
        stream(STREAM_HOLE, struct.pack(">qI", 3, 0))
        stream(STREAM)

    def answer(self, hdr, body):
        p = hdr.proc
        if hdr.type == STREAM:
            # The client's finish or abort: the stream is gone.
            if hdr.status != CONTINUE:
                self.sock.sendall(rc.packet(p, mtype=STREAM, serial=hdr.serial,
                                            status=rc.STATUS_OK))
        elif p == PROC_SUPPORTS_FEATURE:
            feature = rc.Unpacker(body).int()
            on = feature == FEATURE_EVENT_CALLBACK or (
                feature == FEATURE_CLOSE_CALLBACK and self.scenario == "bad-counts")
            self.reply(hdr, rc.xdr_int(1 if on else 0))
        elif p == PROC_REGISTER_ANY:
            return self.register_any(hdr)
        elif p == PROC_NUM_OF_DOMAINS and self.scenario == "bad-counts":
            self.message(PROC_CONNECTION_CLOSED, rc.xdr_int(99))
            self.reply(hdr, rc.xdr_int(-5))
        elif p == PROC_NUM_OF_DOMAINS and self.scenario == "bad-messages":
            self.reply(hdr, rc.xdr_int(self.count_pongs()))
        elif p == PROC_NUM_OF_DOMAINS and self.scenario == "stray-reply":
            self.reply(hdr, rc.xdr_int(1), serial=hdr.serial + 1000)
        elif p == PROC_POOL_LOOKUP_BY_NAME:
            self.reply(hdr, rc.xdr_string(rc.Unpacker(body).string()) + UUID)
        elif p == PROC_VOL_LOOKUP_BY_NAME:
            u = rc.Unpacker(body)
            pool, _ = u.string(), u.opaque(16)
            name = u.string()
            self.reply(hdr, rc.xdr_string(pool) + rc.xdr_string(name) +
                       rc.xdr_string(f"/{pool}/{name}"))
        elif p == PROC_VOL_DOWNLOAD and self.scenario in ("holes", "bad-hole"):
            self.download(hdr)
        else:
            self.error(hdr, f"the hostile server does not do procedure {p}")


if __name__ == "__main__":
    ss.serve(sys.argv[1], Peer)
