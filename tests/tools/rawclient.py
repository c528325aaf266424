#!/usr/bin/env python3
"""A raw libvirt-protocol client for tests that need to misbehave.

Builds packets byte by byte (so tests can send truncated, oversized or
garbage ones), reads whole replies with a timeout and decodes the few
reply bodies the tests check.  Standard library only.

    import rawclient as rc
    c = rc.Client(path)
    c.open_connection()                     # AUTH_LIST + CONNECT_OPEN
    hdr, body = c.call(rc.PROC_CONNECT_GET_HOSTNAME)
    err = rc.decode_error(body)             # when hdr.status == rc.STATUS_ERROR
"""

import collections
import select
import socket
import struct
import time

# The wire's numbers come from the .x files through the generator
# (BUILDDIR/python/rv_protocol.py, on PYTHONPATH: tests/functions.sh's
# rawpy puts it there).
import rv_protocol as rv

REMOTE_PROGRAM = rv.RV_REMOTE_PROGRAM
REMOTE_VERSION = rv.RV_REMOTE_VERSION
KEEPALIVE_PROGRAM = rv.RV_KEEPALIVE_PROGRAM

CALL, REPLY, MESSAGE = rv.RV_CALL, rv.RV_REPLY, rv.RV_MESSAGE
STATUS_OK, STATUS_ERROR = rv.RV_OK, rv.RV_ERROR

# PROC_CONNECT_OPEN, PROC_DOMAIN_GET_INFO, ...: every procedure of rv_remote.x.
globals().update({"PROC_" + name[len("RV_PROC_"):]: value
                  for name, value in vars(rv).items() if name.startswith("RV_PROC_")})

# ERR_NO_SUPPORT, ERR_RPC, ...: every error code (rv_values.x's
# rv_error_number), and FROM_RPC, FROM_DOMAIN, ...: every error domain.
globals().update({"ERR_" + name[len("RV_ERROR_"):]: value
                  for name, value in vars(rv).items()
                  if name.startswith("RV_ERROR_")
                  and not name.startswith(("RV_ERROR_FROM_", "RV_ERROR_LEVEL_"))})
globals().update({"FROM_" + name[len("RV_ERROR_FROM_"):]: value
                  for name, value in vars(rv).items() if name.startswith("RV_ERROR_FROM_")})

PACKET_MAX = rv.RV_PACKET_MAX   # header and payload, not the length word

Header = collections.namedtuple("Header", "prog vers proc type serial status")


def header_bytes(prog, vers, proc, mtype, serial, status):
    return struct.pack(">IIiiIi", prog, vers, proc, mtype, serial, status)


def packet(proc, payload=b"", serial=1, prog=REMOTE_PROGRAM, vers=REMOTE_VERSION,
           mtype=CALL, status=STATUS_OK):
    """A whole packet, length word included."""
    body = header_bytes(prog, vers, proc, mtype, serial, status) + payload
    return struct.pack(">I", len(body) + 4) + body


# ---- XDR encoding of arguments ----

def xdr_int(v):
    return struct.pack(">i", v)


def xdr_uint(v):
    return struct.pack(">I", v)


def xdr_string(s):
    data = s.encode() if isinstance(s, str) else s
    return struct.pack(">I", len(data)) + data + b"\0" * (-len(data) % 4)


def xdr_opt_string(s):
    return xdr_int(0) if s is None else xdr_int(1) + xdr_string(s)


def xdr_domain(name, uuid, dom_id):
    """remote_nonnull_domain; uuid is 16 bytes."""
    assert len(uuid) == 16
    return xdr_string(name) + uuid + xdr_int(dom_id)


# ---- XDR decoding of replies ----

class Unpacker:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def _take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError(f"reply body ends at {len(self.data)} bytes, "
                             f"needed {self.pos + n}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int(self):
        return struct.unpack(">i", self._take(4))[0]

    def uint(self):
        return struct.unpack(">I", self._take(4))[0]

    def uhyper(self):
        return struct.unpack(">Q", self._take(8))[0]

    def string(self):
        n = self.uint()
        data = self._take(n)
        self._take(-n % 4)
        # Servers echo names from requests; those may be any bytes.
        return data.decode(errors="replace")

    def opt_string(self):
        return self.string() if self.int() else None

    def opaque(self, n):
        return self._take(n)

    def domain(self):
        return {"name": self.string(), "uuid": self.opaque(16), "id": self.int()}

    def opt_domain(self):
        return self.domain() if self.int() else None

    def done(self):
        if self.pos != len(self.data):
            raise ValueError(f"{len(self.data) - self.pos} trailing bytes in reply body")


def xdr_error(code, domain, message):
    """A remote_error (code, domain, message, level error, no domain,
    str1-3, int1-2 or network), for a server's ERROR reply."""
    return (xdr_int(code) + xdr_int(domain) + xdr_opt_string(message) + xdr_int(2) +
            xdr_int(0) * 4 + xdr_int(0) * 2 + xdr_int(0))


def decode_error(body):
    """The remote_error of a reply with status ERROR, as a dict."""
    u = Unpacker(body)
    err = {"code": u.int(), "domain": u.int(), "message": u.opt_string(),
           "level": u.int(), "dom": u.opt_domain(), "str1": u.opt_string(),
           "str2": u.opt_string(), "str3": u.opt_string(), "int1": u.int(),
           "int2": u.int()}
    if u.int():
        err["net"] = {"name": u.string(), "uuid": u.opaque(16)}
    else:
        err["net"] = None
    u.done()
    return err


class Closed(Exception):
    """The server closed the connection."""


class Client:
    def __init__(self, path, timeout=10.0):
        """path: a Unix socket's path, or (host, port) for TCP."""
        if isinstance(path, tuple):
            self.sock = socket.create_connection(path, timeout=timeout)
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(path)
        self.timeout = timeout
        self.serial = 0
        self.inbuf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def next_serial(self):
        self.serial += 1
        return self.serial

    def send_call(self, proc, payload=b"", **kw):
        """Send one CALL; returns its serial."""
        serial = kw.pop("serial", None)
        if serial is None:
            serial = self.next_serial()
        self.send(packet(proc, payload, serial=serial, **kw))
        return serial

    def _fill(self, need, deadline):
        while len(self.inbuf) < need:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply within {self.timeout} s")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise Closed("server closed the connection")
            self.inbuf += chunk

    def recv_packet(self):
        """The next whole packet as (Header, body); raises Closed at EOF."""
        deadline = time.monotonic() + self.timeout
        self._fill(4, deadline)
        length = struct.unpack(">I", self.inbuf[:4])[0]
        if length < 28 or length > PACKET_MAX + 4:
            raise ValueError(f"server sent a packet length of {length}")
        self._fill(length, deadline)
        pkt, self.inbuf = self.inbuf[:length], self.inbuf[length:]
        hdr = Header(*struct.unpack(">IIiiIi", pkt[4:28]))
        return hdr, pkt[28:]

    def recv_reply(self):
        """The next REPLY, skipping MESSAGEs (keepalive, events)."""
        while True:
            hdr, body = self.recv_packet()
            if hdr.type == REPLY:
                return hdr, body

    def call(self, proc, payload=b"", **kw):
        serial = self.send_call(proc, payload, **kw)
        hdr, body = self.recv_reply()
        if hdr.serial != serial:
            raise ValueError(f"reply serial {hdr.serial} does not match call {serial}")
        return hdr, body

    def call_ok(self, proc, payload=b""):
        """A call that must succeed; returns the body."""
        hdr, body = self.call(proc, payload)
        if hdr.status != STATUS_OK:
            raise RuntimeError(f"procedure {proc} failed: {decode_error(body)}")
        return body

    def open_connection(self, uri="test:///default", flags=0):
        self.call_ok(PROC_AUTH_LIST)
        self.call_ok(PROC_CONNECT_OPEN, xdr_opt_string(uri) + xdr_uint(flags))

    def wait_closed(self, timeout=None):
        """True if the server closes the connection within timeout seconds
        (data it sends first is discarded)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return False
            try:
                if not self.sock.recv(65536):
                    return True
            except ConnectionResetError:
                return True

    def lookup(self, name):
        """DOMAIN_LOOKUP_BY_NAME; returns the payload bytes of the domain."""
        body = self.call_ok(PROC_DOMAIN_LOOKUP_BY_NAME, xdr_string(name))
        Unpacker(body).domain()     # validates the reply's shape
        return body


class TLSSocket:
    """The socket calls Client makes, over a TLS session driven through
    memory BIOs (so that a test decides when records go out): each
    sendall is one TLS record; pipeline() queues records that go out
    together with flush()."""
    def __init__(self, port, pki, rcvbuf=4096, timeout=30.0):
        import ssl
        self._ssl = ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(pki + "/cacert.pem")
        ctx.load_cert_chain(pki + "/clientcert.pem", pki + "/clientkey.pem")
        self.raw = socket.socket()
        if rcvbuf:
            self.raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.raw.settimeout(timeout)
        self.raw.connect(("127.0.0.1", port))
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._receive_more()

    def _receive_more(self):
        self.raw.sendall(self.outgoing.read())
        data = self.raw.recv(65536)
        if not data:
            raise Closed("server closed the connection")
        self.incoming.write(data)

    def pipeline(self, data):
        self.tls.write(data)

    def flush(self):
        self.raw.sendall(self.outgoing.read())

    def sendall(self, data):
        self.pipeline(data)
        self.flush()

    def recv(self, n):
        while True:
            try:
                return self.tls.read(n)
            except self._ssl.SSLWantReadError:
                self._receive_more()

    def settimeout(self, t):
        self.raw.settimeout(t)


def tls_client(port, pki, rcvbuf=4096, timeout=30.0):
    """A Client over TLS to 127.0.0.1:port with pki's client certificate,
    past the go-ahead byte; its sock is a TLSSocket."""
    c = Client.__new__(Client)
    c.sock, c.timeout, c.serial, c.inbuf = TLSSocket(port, pki, rcvbuf, timeout), timeout, 0, b""
    if c.sock.recv(1) != b"\x01":
        raise Closed("no go-ahead byte")
    return c


def connect_when_admitted(path, timeout, what):
    """A client that has opened a connection, retrying while the daemon
    turns new clients away (at max_clients, or out of fds); ends the test
    with FAIL if none gets in within timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        c = Client(path)
        try:
            c.open_connection()
            return c
        except (Closed, ConnectionResetError, BrokenPipeError):
            c.close()
            if time.monotonic() > deadline:
                raise SystemExit(f"FAIL: no client admitted within {timeout} s {what}")
            time.sleep(0.1)


# ---- assertions for the test scripts ----

def check(cond, what):
    """Print 'ok' for a passing check; end the test with FAIL otherwise."""
    if not cond:
        raise SystemExit(f"FAIL: {what}")
    print(f"ok   {what}")


def expect_error_reply(hdr, body, serial, codes, what):
    """hdr/body must be a REPLY with status ERROR to `serial` whose error
    code is one of `codes` (None: any code); returns the decoded error."""
    check(hdr.type == REPLY and hdr.status == STATUS_ERROR,
          f"{what}: REPLY with status ERROR (got type {hdr.type} status {hdr.status})")
    check(hdr.serial == serial, f"{what}: reply serial {hdr.serial} == {serial}")
    err = decode_error(body)
    message = err["message"] or ""
    if len(message) > 120:
        message = message[:120] + "..."
    if codes is None:
        check(err["code"] != ERR_OK, f"{what}: error code {err['code']} ({message!r})")
    else:
        check(err["code"] in codes,
              f"{what}: error code {err['code']} in {sorted(codes)} ({message!r})")
    return err


def expect_usable(client, what):
    """The connection still answers a plain call."""
    body = client.call_ok(PROC_CONNECT_GET_HOSTNAME)
    u = Unpacker(body)
    name = u.string()
    u.done()
    check(len(name) > 0, f"{what}: connection still answers (hostname {name!r})")
