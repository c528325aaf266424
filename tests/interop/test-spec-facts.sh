#!/usr/bin/env bash
# The facts docs/wire-protocol.md states about both servers, checked
# against remvirtd and libvirtd with raw packets, so that the spec cannot
# go stale silently.  Where the servers differ on purpose, the check says
# which does what (and the spec says the same).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires libvirtd
start_remvirtd
start_libvirtd

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" "$LIBVIRTD_SOCK_RO" <<'PY'
import sys
import rawclient as rc
from rawclient import check, xdr_int, xdr_uint, xdr_string, xdr_domain

def error(client, proc, payload, what):
    serial = client.send_call(proc, payload)
    hdr, body = client.recv_reply()
    return rc.expect_error_reply(hdr, body, serial, None, what)

def expect(client, proc, payload, code, domain, message, what):
    """An ERROR reply with this code, domain and message, int1 = int2 = -1."""
    e = error(client, proc, payload, what)
    check((e["code"], e["domain"], e["message"]) == (code, domain, message),
          f"{what}: {code}/{domain} {message!r} (got {e['code']}/{e['domain']} {e['message']!r})")
    check((e["int1"], e["int2"]) == (-1, -1), f"{what}: int1 and int2 are -1")
    return e

def feature(client, f):
    u = rc.Unpacker(client.call_ok(rc.PROC_CONNECT_SUPPORTS_FEATURE, xdr_int(f)))
    return u.int()

FEATURES = [-1, 0, 1, 8, 9, 11, 14, 15, 16, 9999]

for server, rw, ro in [("remvirtd", sys.argv[1], sys.argv[2]),
                       ("libvirtd", sys.argv[3], sys.argv[4])]:
    libvirtd = server == "libvirtd"
    not_open = "internal error: hypervisor connection not open"
    print(f"---- {server}")

    # Section 7: before CONNECT_OPEN only AUTH_*, CONNECT_OPEN,
    # CONNECT_CLOSE and CONNECT_SUPPORTS_FEATURE(10) are answered.
    c = rc.Client(rw)
    c.call_ok(rc.PROC_AUTH_LIST)
    check(feature(c, rc.rv.RV_FEATURE_PROGRAM_KEEPALIVE) == 1, f"{server}: feature 10 before open is 1")
    for f in FEATURES:
        expect(c, rc.PROC_CONNECT_SUPPORTS_FEATURE, xdr_int(f), rc.ERR_INTERNAL_ERROR,
               rc.FROM_RPC, not_open, f"{server}: feature {f} before open")
    for proc in (rc.PROC_CONNECT_GET_TYPE, rc.PROC_CONNECT_REGISTER_CLOSE_CALLBACK):
        expect(c, proc, b"", rc.ERR_INTERNAL_ERROR, rc.FROM_RPC, not_open,
               f"{server}: procedure {proc} before open")
    expect(c, rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY, xdr_int(0) + xdr_int(0),
           rc.ERR_INTERNAL_ERROR, rc.FROM_RPC, not_open, f"{server}: event registration before open")
    # Section 5: a number outside every table.
    expect(c, 9999, b"", rc.ERR_RPC, rc.FROM_RPC, "unknown procedure: 9999",
           f"{server}: unknown procedure before open")
    c.close()

    c = rc.Client(rw)
    c.open_connection()
    # Section 7: features after CONNECT_OPEN.  Both say yes to 9 (string
    # typed parameters); libvirtd also to 8 (fd passing) and 16 (its test
    # driver's network update order); remvirtd to neither of those.
    for f in FEATURES + [10]:
        want = 1 if f in (9, 10, 14, 15) or (libvirtd and f in (8, 16)) else 0
        check(feature(c, f) == want, f"{server}: feature {f} after open is {want}")
    expect(c, rc.PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE, b"", rc.ERR_RPC, rc.FROM_RPC,
           f"unknown procedure: {rc.PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE}",
           f"{server}: a CALL of an event's number")

    # Section 9.1: event registration errors; the first callbackID.
    for ev in (-1, 27):
        expect(c, rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY, xdr_int(ev) + xdr_int(0),
               rc.ERR_INTERNAL_ERROR, rc.FROM_RPC, f"internal error: unsupported event ID {ev}",
               f"{server}: event ID {ev}")
    u = rc.Unpacker(c.call_ok(rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY,
                              xdr_int(0) + xdr_int(0)))
    first = u.int()
    check(first == 0, f"{server}: the first callbackID is {first} (both servers start at 0)")
    # The same eventID again: remvirtd gives a new callbackID, libvirtd refuses.
    hdr, body = c.call(rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY, xdr_int(0) + xdr_int(0))
    if libvirtd:
        e = rc.decode_error(body)
        check(hdr.status == rc.STATUS_ERROR and (e["code"], e["domain"], e["message"]) ==
              (rc.ERR_INVALID_ARG, rc.FROM_NONE, "invalid argument: event callback already tracked"),
              f"{server}: a second registration of eventID 0 is refused with 8/0")
    else:
        second = rc.Unpacker(body).int() if hdr.status == rc.STATUS_OK else None
        check(second == first + 1, f"{server}: a second registration of eventID 0 gets callbackID {second}")
        c.call_ok(rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY, xdr_int(second))
    expect(c, rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY, xdr_int(999),
           rc.ERR_INTERNAL_ERROR, rc.FROM_RPC,
           "internal error: domain event callback 999 not registered",
           f"{server}: deregistering an unknown callbackID")
    c.call_ok(rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY, xdr_int(first))

    # Section 9: small results.
    u = rc.Unpacker(c.call_ok(rc.PROC_CONNECT_GET_TYPE))
    check(u.string() == "TEST", f"{server}: CONNECT_GET_TYPE is TEST")
    u = rc.Unpacker(c.call_ok(rc.PROC_CONNECT_GET_LIB_VERSION))
    check(u.uhyper() == 9000000, f"{server}: CONNECT_GET_LIB_VERSION is 9000000 (9.0.0)")
    u = rc.Unpacker(c.call_ok(rc.PROC_NODE_GET_INFO))
    model = bytes(u.int() for _ in range(32))
    check(model == b"i686" + b"\0" * 28, f"{server}: NODE_GET_INFO model 'i686', NUL-padded to 32 chars")

    # Section 8 of procedures: a domain argument is found by its UUID alone.
    dom = rc.Unpacker(c.lookup("test")).domain()
    for what, arg in [("a wrong name", xdr_domain("nosuch", dom["uuid"], dom["id"])),
                      ("a wrong id", xdr_domain("test", dom["uuid"], 77))]:
        c.call_ok(rc.PROC_DOMAIN_GET_INFO, arg)
        print(f"ok   {server}: DOMAIN_GET_INFO with {what} and the right UUID succeeds")
    e = error(c, rc.PROC_DOMAIN_GET_INFO, xdr_domain("test", b"\x11" * 16, dom["id"]),
              f"{server}: the right name, a wrong UUID")
    check((e["code"], e["domain"]) == (rc.ERR_NO_DOMAIN, rc.FROM_TEST), f"{server}: wrong UUID gets 42/12")

    # DOMAIN_DEFINE_XML: the smallest definition, and what each missing
    # element gets.
    def xml(name="spec", memory="<memory>262144</memory>", os="<os><type>hvm</type></os>",
            root="<domain type='test'>"):
        return f"{root}{name and f'<name>{name}</name>'}{memory}{os}</domain>"
    body = c.call_ok(rc.PROC_DOMAIN_DEFINE_XML, xdr_string(xml()))
    spec = rc.Unpacker(body).domain()
    check(spec["name"] == "spec" and spec["id"] == -1, f"{server}: name, memory and os type define a domain")
    for what, text, code, domain in [
            ("no name", xml(name=""), rc.ERR_NO_NAME, rc.FROM_DOMAIN),
            ("an empty name", xml(name="", memory="<name></name><memory>262144</memory>"),
             rc.ERR_NO_NAME, rc.FROM_DOMAIN),
            ("a malformed uuid", xml(name="x", memory="<uuid>xyz</uuid><memory>262144</memory>"),
             rc.ERR_INTERNAL_ERROR, rc.FROM_DOMAIN),
            ("memory 0", xml(name="x", memory="<memory>0</memory>"), rc.ERR_XML_ERROR, rc.FROM_DOMAIN),
            ("no memory", xml(name="x", memory=""), rc.ERR_XML_ERROR, rc.FROM_DOMAIN),
            ("no os type", xml(name="x", os=""), rc.ERR_XML_ERROR, rc.FROM_DOMAIN),
            ("no type attribute", xml(name="x", root="<domain>"), rc.ERR_INTERNAL_ERROR, rc.FROM_DOMAIN),
            ("not XML", "hello", rc.ERR_XML_DETAIL, rc.FROM_DOMAIN),
            ("another root", "<foo/>", rc.ERR_XML_ERROR, rc.FROM_XML),
            ("the name of another domain", xml(name="test"), rc.ERR_OPERATION_FAILED, rc.FROM_DOMAIN)]:
        e = error(c, rc.PROC_DOMAIN_DEFINE_XML, xdr_string(text), f"{server}: define with {what}")
        check((e["code"], e["domain"]) == (code, domain),
              f"{server}: define with {what} gets {code}/{domain} ({e['code']}/{e['domain']})")

    # DOMAIN_CREATE returns nothing; CREATE_WITH_FLAGS returns the domain.
    arg = xdr_domain("spec", spec["uuid"], -1)
    check(c.call_ok(rc.PROC_DOMAIN_CREATE, arg) == b"", f"{server}: DOMAIN_CREATE returns nothing")
    c.call_ok(rc.PROC_DOMAIN_DESTROY, arg)
    running = rc.Unpacker(c.call_ok(rc.PROC_DOMAIN_CREATE_WITH_FLAGS, arg + xdr_uint(0))).domain()
    check(running["id"] > 0, f"{server}: CREATE_WITH_FLAGS returns the domain with its id {running['id']}")
    c.call_ok(rc.PROC_DOMAIN_DESTROY, arg)
    c.call_ok(rc.PROC_DOMAIN_UNDEFINE, arg)

    # Section 5: a second CONNECT_OPEN.
    open_args = rc.xdr_opt_string("test:///default") + xdr_uint(0)
    expect(c, rc.PROC_CONNECT_OPEN, open_args, rc.ERR_INTERNAL_ERROR, rc.FROM_RPC,
           "internal error: connection already open", f"{server}: a second CONNECT_OPEN")
    if libvirtd:
        expect(c, rc.PROC_CONNECT_GET_HOSTNAME, b"", rc.ERR_INTERNAL_ERROR, rc.FROM_RPC, not_open,
               f"{server}: after a second CONNECT_OPEN the connection is not open")
    else:
        rc.expect_usable(c, f"{server}: after a second CONNECT_OPEN")

    # Section 7: after CONNECT_CLOSE's reply libvirtd closes at once;
    # remvirtd waits for the client.
    c.call_ok(rc.PROC_CONNECT_CLOSE)
    closed = c.wait_closed(2.0)
    check(closed == libvirtd, f"{server}: closes after CONNECT_CLOSE's reply: {closed}")
    c.close()

    # Section 8: the read-only refusal.
    r = rc.Client(ro)
    r.open_connection()
    dom = rc.Unpacker(r.lookup("test")).domain()
    expect(r, rc.PROC_DOMAIN_DESTROY, xdr_domain("test", dom["uuid"], dom["id"]),
           rc.ERR_OPERATION_DENIED, rc.FROM_DOMAIN,
           "operation forbidden: read only access prevents virDomainDestroy",
           f"{server}: DOMAIN_DESTROY read-only")
    r.close()
PY
