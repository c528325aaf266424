#!/usr/bin/env bash
# Hostile storage pool and volume XML against remvirtd's test driver: a
# DOCTYPE (internal entities, an external one naming a local file, the
# "billion laughs"), a document over the 16 KiB bound, nesting past
# libxml2's depth limit, sizes that overflow, names that need escaping,
# list bounds.  Each gets its own clear error (never a crash, a hang or a
# leak: the ASan and valgrind runs take this test too), nothing is left
# behind, and the connection keeps working.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import sys
import rawclient as rc

c = rc.Client(sys.argv[1], timeout=60)
c.open_connection()
POOL = rc.xdr_string("default-pool") + bytes.fromhex("dfe224cb28fb8dd0c4b264eb3f0f4566")


def refused(proc, payload, code, words, what):
    hdr, body = c.call(proc, payload)
    rc.check(hdr.status == rc.STATUS_ERROR, f"{what}: refused")
    err = rc.decode_error(body)
    rc.check(err["code"] == code and all(w in (err["message"] or "") for w in words),
             f"{what}: error {err['code']} {(err['message'] or '')[:120]!r}")


def define_pool(xml, code, words, what):
    refused(rc.PROC_STORAGE_POOL_DEFINE_XML, rc.xdr_string(xml) + rc.xdr_uint(0), code, words,
            what)


def create_vol(xml, code, words, what):
    refused(rc.PROC_STORAGE_VOL_CREATE_XML, POOL + rc.xdr_string(xml) + rc.xdr_uint(0), code,
            words, what)


laughs = ('<?xml version="1.0"?><!DOCTYPE pool [<!ENTITY a "aaaaaaaaaa">'
          + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(8))
          + ']><pool type="dir"><name>&i;</name><target><path>/x</path></target></pool>')
define_pool(laughs, rc.ERR_XML_ERROR, ["DOCTYPE"], "the billion laughs")
define_pool('<!DOCTYPE pool SYSTEM "file:///etc/passwd"><pool type="dir"><name>x</name>'
            '<target><path>/x</path></target></pool>', rc.ERR_XML_ERROR, ["DOCTYPE"],
            "an external DTD")
create_vol('<!DOCTYPE v [<!ENTITY e SYSTEM "file:///etc/hostname">]><volume><name>&e;</name>'
           '<capacity>1</capacity></volume>', rc.ERR_XML_ERROR, ["DOCTYPE"],
           "an external entity in a volume")
define_pool('<pool type="dir"><name>big</name><target><path>/' + "x" * 20000 +
            '</path></target></pool>', rc.ERR_XML_ERROR, ["over the limit of 16384"],
            "pool XML over 16 KiB")
create_vol('<volume><name>' + "v" * 17000 + '</name><capacity>1</capacity></volume>',
           rc.ERR_XML_ERROR, ["over the limit of 16384"], "volume XML over 16 KiB")
define_pool('<pool type="dir"><name>deep</name>' + "<a>" * 2000 + "</a>" * 2000 +
            '<target><path>/x</path></target></pool>', rc.ERR_XML_DETAIL, ["depth"],
            "nesting past libxml2's limit")
for size, unit in (("99999999999999999999", "bytes"), ("20", "EiB"), ("-1", "bytes"),
                   ("0x10", "bytes")):
    create_vol(f"<volume><name>s</name><capacity unit='{unit}'>{size}</capacity></volume>",
               rc.ERR_XML_ERROR, ["malformed capacity element"], f"capacity {size} {unit}")
define_pool('<pool type="dir"><name>p</name><target><path>/x</path><permissions>'
            '<mode>99999</mode></permissions></target></pool>', rc.ERR_XML_ERROR,
            ["malformed octal mode"], "a mode out of range")
define_pool('<pool type="netfs"><name>p</name><source><host name="h" port="70000"/>'
            '<dir path="/e"/></source><target><path>/x</path></target></pool>',
            rc.ERR_XML_ERROR, ["Invalid port number"], "a port out of range")
define_pool('<pool type="iscsi"><name>p</name><target><path>/x</path></target></pool>',
            rc.ERR_CONFIG_UNSUPPORTED, ["type 'iscsi'"], "a pool type not modelled")
refused(rc.PROC_CONNECT_LIST_STORAGE_POOLS, rc.xdr_int(-1), rc.ERR_RPC, ["maxnames -1"],
        "a negative maxnames")
refused(rc.PROC_STORAGE_POOL_LIST_VOLUMES, POOL + rc.xdr_int(1 << 30), rc.ERR_RPC,
        ["maxnames"], "a maxnames over the bound")

# Names that need escaping come back escaped, and parse again.
name = "a<b&c'd\"e"
xml = ("<volume><name>a&lt;b&amp;c&apos;d&quot;e</name><capacity>1</capacity></volume>")
u = rc.Unpacker(c.call_ok(rc.PROC_STORAGE_VOL_CREATE_XML,
                          POOL + rc.xdr_string(xml) + rc.xdr_uint(0)))
vol = (u.string(), u.string(), u.string())
rc.check(vol == ("default-pool", name, "/default-pool/" + name), f"volume {vol!r} created")
wire = b"".join(rc.xdr_string(s) for s in vol)
text = rc.Unpacker(c.call_ok(rc.PROC_STORAGE_VOL_GET_XML_DESC, wire + rc.xdr_uint(0))).string()
rc.check("<name>a&lt;b&amp;c&apos;d&quot;e</name>" in text, "its XML escapes the name")
c.call_ok(rc.PROC_STORAGE_VOL_DELETE, wire + rc.xdr_uint(0))

# Nothing was left behind: one pool, no volumes, all its space free.
u = rc.Unpacker(c.call_ok(rc.PROC_CONNECT_LIST_ALL_STORAGE_POOLS, rc.xdr_int(1) + rc.xdr_uint(0)))
names = [(u.string(), u.opaque(16))[0] for _ in range(u.uint())]
rc.check(names == ["default-pool"], f"pools afterwards: {names}")
rc.check(rc.Unpacker(c.call_ok(rc.PROC_STORAGE_POOL_NUM_OF_VOLUMES, POOL)).int() == 0,
         "no volumes afterwards")
info = rc.Unpacker(c.call_ok(rc.PROC_STORAGE_POOL_GET_INFO, POOL))
rc.check([info.uint(), info.uhyper(), info.uhyper(), info.uhyper()] ==
         [2, 100 << 30, 0, 100 << 30], "default-pool running, 100 GiB free")
rc.expect_usable(c, "the connection still answers")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
