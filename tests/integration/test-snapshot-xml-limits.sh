#!/usr/bin/env bash
# Hostile snapshot requests against remvirtd's test driver: a DOCTYPE (the
# "billion laughs", an external entity), a request over the 64 KiB bound,
# nesting past libxml2's depth limit, names and descriptions that need
# escaping, maxnames out of range, and the bound on snapshots per domain.
# Each gets its own clear error (never a crash, a hang or a leak: the ASan
# and valgrind runs take this test too), nothing is left behind, and the
# connection keeps working.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import sys
import rawclient as rc

c = rc.Client(sys.argv[1], timeout=60)
c.open_connection()
DOM = c.lookup("test")


def create(xml, flags=0):
    return c.call(rc.PROC_DOMAIN_SNAPSHOT_CREATE_XML, DOM + rc.xdr_string(xml) + rc.xdr_uint(flags))


def refused(hdr_body, code, words, what):
    hdr, body = hdr_body
    rc.check(hdr.status == rc.STATUS_ERROR, f"{what}: refused")
    err = rc.decode_error(body)
    rc.check(err["code"] == code and all(w in (err["message"] or "") for w in words),
             f"{what}: error {err['code']} {(err['message'] or '')[:120]!r}")


def snapshot_count():
    return rc.Unpacker(c.call_ok(rc.PROC_DOMAIN_SNAPSHOT_NUM, DOM + rc.xdr_uint(0))).int()


laughs = ('<?xml version="1.0"?><!DOCTYPE domainsnapshot [<!ENTITY a "aaaaaaaaaa">'
          + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(8))
          + ']><domainsnapshot><name>&i;</name></domainsnapshot>')
refused(create(laughs), rc.ERR_XML_ERROR, ["DOCTYPE"], "the billion laughs")
refused(create('<!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/hostname">]>'
               '<domainsnapshot><name>&e;</name></domainsnapshot>'),
        rc.ERR_XML_ERROR, ["DOCTYPE"], "an external entity")
refused(create('<domainsnapshot><description>' + "d" * 70000 + '</description></domainsnapshot>'),
        rc.ERR_XML_ERROR, ["over the limit of 65536"], "a request over 64 KiB")
refused(create('<domainsnapshot><name>deep</name>' + "<a>" * 2000 + "</a>" * 2000 +
               '</domainsnapshot>'), rc.ERR_XML_DETAIL, ["depth"], "nesting past libxml2's limit")
refused(create('<domainsnapshot><name>x</domainsnapshot>'), rc.ERR_XML_DETAIL,
        ["(domain_snapshot):1:"], "a syntax error")
refused(c.call(rc.PROC_DOMAIN_SNAPSHOT_LIST_NAMES, DOM + rc.xdr_int(-1) + rc.xdr_uint(0)),
        rc.ERR_RPC, ["maxnames -1"], "a negative maxnames")
refused(c.call(rc.PROC_DOMAIN_SNAPSHOT_LIST_NAMES, DOM + rc.xdr_int(1 << 30) + rc.xdr_uint(0)),
        rc.ERR_RPC, ["maxnames"], "a maxnames over the bound")
rc.check(snapshot_count() == 0, "no snapshot made by the refused requests")

# A name and a description that need escaping come back escaped.
hdr, body = create("<domainsnapshot><name>a&lt;b&amp;c&apos;d&quot;e</name>"
                   "<description>&lt;x&gt;</description></domainsnapshot>")
rc.check(hdr.status == rc.STATUS_OK, "a name that needs escaping is taken")
u = rc.Unpacker(body)
name = u.string()
snap = rc.xdr_string(name) + DOM
rc.check(name == "a<b&c'd\"e", f"its name {name!r}")
text = rc.Unpacker(c.call_ok(rc.PROC_DOMAIN_SNAPSHOT_GET_XML_DESC, snap + rc.xdr_uint(0))).string()
rc.check("<name>a&lt;b&amp;c&apos;d&quot;e</name>" in text and
         "<description>&lt;x&gt;</description>" in text, "its XML escapes them")

# At most 1024 snapshots per domain: the 1025th is refused, clearly.
for i in range(1, 1024):
    hdr, body = create(f"<domainsnapshot><name>s{i}</name></domainsnapshot>")
    if hdr.status != rc.STATUS_OK:
        rc.check(False, f"snapshot s{i}: {rc.decode_error(body)['message']}")
rc.check(snapshot_count() == 1024, "1024 snapshots")
refused(create("<domainsnapshot><name>one-too-many</name></domainsnapshot>"),
        rc.ERR_OPERATION_FAILED, ["at most 1024 snapshots"], "the 1025th snapshot")

# Deleting the first with its children takes them all.
c.call_ok(rc.PROC_DOMAIN_SNAPSHOT_DELETE, snap + rc.xdr_uint(1))
rc.check(snapshot_count() == 0, "nothing left afterwards")
rc.expect_usable(c, "the connection still answers")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
