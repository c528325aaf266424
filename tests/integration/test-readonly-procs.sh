#!/usr/bin/env bash
# Every procedure protocol/rv_remote.x annotates "@readonly deny" is refused
# on a read-only connection, both kinds: the read-only socket, and the
# read-write socket after CONNECT_OPEN with RV_CONNECT_RO.  The list comes
# from the .x at test time (read here without gen/rvgen.py, so a generator
# bug cannot hide itself), so a new state-changing procedure is covered
# the day it is annotated.  For each one:
#   - garbage arguments get VIR_ERR_OPERATION_DENIED naming the procedure:
#     the check comes before decoding (decoding first gives an RPC error,
#     which the read-write control below shows);
#   - valid arguments get the same refusal, and nothing changed;
#   - the connection still answers;
#   - on a read-write connection the same garbage gets the decode error,
#     not 29, so a server that refused everything would fail (and the
#     read-write connection does change state: it sets the scene).
# Every "@readonly allow" procedure gets past the check on both kinds of
# read-only connection, and run there with valid arguments changes nothing
# (which catches a state-changing procedure annotated "allow").
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$top_srcdir/protocol/rv_remote.x" "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" <<'PY'
import collections
import os
import re
import sys
import rawclient as rc

xdr_path, rw_path, ro_path = sys.argv[1:]

FROM_RPC, FROM_DOMAIN = rc.FROM_RPC, rc.FROM_DOMAIN


def fail(what):
    raise SystemExit(f"FAIL: {what}")


def passed(what):
    """Report a step whose checks (which fail on their own) all held."""
    print(f"ok   {what}")


# ---- what rv_remote.x says

with open(xdr_path, encoding="utf-8") as f:
    XDR_TEXT = f.read()

# served: remvirtd has a handler (@stubs both or server);
# before_auth: @auth none, the authentication exchange itself.
Proc = collections.namedtuple("Proc", "number readonly served before_auth")

ENUM_TOKEN = re.compile(r"""
    \s+
  | /\*(?P<comment>.*?)\*/
  | //(?P<line_comment>[^\n]*)
  | (?P<name>RV_PROC_\w+)\s*=\s*(?P<number>\d+)\s*,?
""", re.S | re.X)


def annotation(name, note, key, values):
    found = re.findall(r"@%s\s+(\S+)" % key, note)
    if len(found) != 1 or found[0] not in values:
        fail(f"{name}: @{key} must appear once as one of {values}: {note!r}")
    return found[0]


def read_procedures(text):
    """{name without RV_PROC_: Proc} from enum rv_remote_procedure."""
    m = re.search(r"\benum\s+rv_remote_procedure\s*\{(.*?)\}\s*;", text, re.S)
    if not m:
        fail(f"{xdr_path} has no enum rv_remote_procedure")
    body, pos, comments, procs = m.group(1), 0, [], {}
    while pos < len(body):
        t = ENUM_TOKEN.match(body, pos)
        if not t:
            fail(f"cannot read enum rv_remote_procedure near {body[pos:pos + 60]!r}")
        pos = t.end()
        if t.group("name") is None:
            if t.group("comment") is not None or t.group("line_comment") is not None:
                comments.append(t.group("comment") or t.group("line_comment"))
            continue
        name = t.group("name")[len("RV_PROC_"):]
        notes = [c for c in comments if "@" in c]
        comments = []
        if len(notes) != 1:
            fail(f"{name}: {len(notes)} annotation comments above it, expected 1")
        if name in procs:
            fail(f"{name} appears twice")
        procs[name] = Proc(
            int(t.group("number")),
            annotation(name, notes[0], "readonly", ("allow", "deny")),
            annotation(name, notes[0], "stubs", ("both", "server", "client", "none"))
            in ("both", "server"),
            annotation(name, notes[0], "auth", ("none", "required")) == "none")
    return procs


def read_arg_fields(text, name):
    """[(type, field)] of struct rv_<name>_args; [] when it has none."""
    m = re.search(r"\bstruct\s+rv_%s_args\s*\{(.*?)\}\s*;" % name.lower(), text, re.S)
    if not m:
        return []
    fields = []
    for decl in re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S).split(";"):
        if decl.strip():
            d = re.fullmatch(r"\s*(.+?)\s+(\w+)\s*([<\[].*)?", decl, re.S)
            if not d:
                fail(f"cannot read the field {decl.strip()!r} of rv_{name.lower()}_args")
            # A bounded or fixed array keeps its bound in the type.
            fields.append((" ".join(d.group(1).split()) + (d.group(3) or ""), d.group(2)))
    return fields


def read_const(text, name):
    m = re.search(r"\bconst\s+%s\s*=\s*(\w+)\s*;" % name, text)
    if not m:
        fail(f"{xdr_path} has no const {name}")
    return int(m.group(1), 0)


PROCS = read_procedures(XDR_TEXT)
NUM = {name: p.number for name, p in PROCS.items()}
# The refusal names the libvirt API, as libvirtd's does.
with open(os.path.join(os.path.dirname(xdr_path), "libvirt-remote-procs.tsv"), encoding="utf-8") as f:
    ROWS = [cols for cols in (line.rstrip("\n").split("\t") for line in f
                              if not line.startswith("#")) if len(cols) >= 4]
API = {cols[1]: cols[2] for cols in ROWS}
# ...from its API's module, as libvirtd: NETWORK for virNetwork*, STORAGE for
# virStorage*, DOMAIN_SNAPSHOT (35) and DOMAIN_CHECKPOINT (69) for the
# snapshot and checkpoint calls, NODEDEV (22),
# SECRET (30) and NWFILTER (33) for theirs, DOMAIN otherwise.
MODULE_DOMAIN = {"network": rc.FROM_NETWORK, "storage": rc.FROM_STORAGE, "snapshot": 35, "checkpoint": 69,
                 "nodedev": 22, "secret": 30, "nwfilter": 33}
ERR_DOMAIN = {cols[1]: MODULE_DOMAIN.get(cols[3], FROM_DOMAIN) for cols in ROWS}
DENY = sorted((n for n, p in PROCS.items() if p.readonly == "deny"), key=NUM.get)
ALLOW = sorted((n for n, p in PROCS.items() if p.readonly == "allow"), key=NUM.get)
CONNECT_RO = read_const(XDR_TEXT, "RV_CONNECT_RO")
XML_SECURE = read_const(XDR_TEXT, "RV_DOM_XML_SECURE")

# The parser must have found the procedures it is meant to, or every loop
# below could run over nothing.  MANAGED_SAVE_REMOVE is pinned because it
# is the one state change the valid-argument run below cannot see (no
# procedure here makes a managed save image to remove).
rc.check(len(PROCS) == len(re.findall(r"\bRV_PROC_\w+\s*=", XDR_TEXT)),
         f"every RV_PROC_ value in rv_remote.x was read ({len(PROCS)})")
known = {"DOMAIN_CREATE_XML": (10, "deny"), "DOMAIN_DEFINE_XML": (11, "deny"),
         "DOMAIN_DESTROY": (12, "deny"), "DOMAIN_UNDEFINE": (35, "deny"),
         "DOMAIN_MANAGED_SAVE_REMOVE": (184, "deny"),
         "CONNECT_OPEN": (1, "allow"), "DOMAIN_GET_INFO": (16, "allow"),
         "CONNECT_LIST_ALL_DOMAINS": (273, "allow")}
rc.check(all(n in PROCS and PROCS[n][:2] == v for n, v in known.items()),
         f"the parse agrees on {', '.join(known)}")
rc.check(len(DENY) >= 4 and len(ALLOW) >= 3,
         f"{len(DENY)} state-changing procedures: {' '.join(DENY)}")
rc.check(CONNECT_RO == 1, "RV_CONNECT_RO is libvirt's VIR_CONNECT_RO (1)")

# ---- connections and the state to guard

# No procedure's arguments decode from this: XDR comes in 4-byte units,
# so 7 bytes never do, whatever the types.
GARBAGE = b"\xff\xff\xff\xff\xde\xad\xbe"


def domain_xml(name, uuid):
    return ("<domain type='test'><name>%s</name><uuid>%s</uuid><memory>131072</memory>"
            "<vcpu>1</vcpu><os><type>hvm</type></os></domain>" % (name, uuid))


# What a define or create that got through would leave behind.
PROBE_NAME = "ro-procs-probe"
PROBE_XML = domain_xml(PROBE_NAME, "0b6f1c3e-2a4d-4e5f-8a9b-3c7d1e2f4a60")
PROBE_NET_XML = (f"<network><name>{PROBE_NAME}</name>"
                 "<uuid>0b6f1c3e-2a4d-4e5f-8a9b-3c7d1e2f4a61</uuid></network>")
PROBE_POOL_XML = (f"<pool type='dir'><name>{PROBE_NAME}</name>"
                  "<uuid>0b6f1c3e-2a4d-4e5f-8a9b-3c7d1e2f4a63</uuid>"
                  "<target><path>/ro-probe</path></target></pool>")
PROBE_VOL_XML = f"<volume><name>{PROBE_NAME}</name><capacity>1024</capacity></volume>"

rw = rc.Client(rw_path, timeout=60)
rw.open_connection()
ro_socket = rc.Client(ro_path, timeout=60)
ro_socket.open_connection(flags=0)      # the socket alone makes it read-only
ro_flag = rc.Client(rw_path, timeout=60)
ro_flag.open_connection(flags=CONNECT_RO)
READ_ONLY = [(ro_socket, "read-only socket"),
             (ro_flag, "read-write socket opened read-only")]

# Domains in three states, so that whatever a procedure would do to one
# shows: test (running), a transient one paused, a defined one not running.
# Made on the read-write connection, which shows that it may change state.
RUNNING = rw.lookup("test")
PAUSED = rw.call_ok(NUM["DOMAIN_CREATE_XML"], rc.xdr_string(
    domain_xml("ro-procs-paused", "0b6f1c3e-2a4d-4e5f-8a9b-3c7d1e2f4a61")) + rc.xdr_uint(0))
rw.call_ok(NUM["DOMAIN_SUSPEND"], PAUSED)
INACTIVE = rw.call_ok(NUM["DOMAIN_DEFINE_XML"], rc.xdr_string(
    domain_xml("ro-procs-inactive", "0b6f1c3e-2a4d-4e5f-8a9b-3c7d1e2f4a62")))
TARGETS = [RUNNING, PAUSED, INACTIVE]
# libvirt's default pool (active) with a volume: a change to either would show.
DEFAULT_POOL = rc.xdr_string("default-pool") + bytes.fromhex("dfe224cb28fb8dd0c4b264eb3f0f4566")
rw.call_ok(NUM["STORAGE_VOL_CREATE_XML"], DEFAULT_POOL + rc.xdr_string(
    "<volume><name>ro-procs-vol</name><capacity>4096</capacity></volume>") + rc.xdr_uint(0))
# A snapshot of the running domain: reverting to it or deleting it would show.
rw.call_ok(NUM["DOMAIN_SNAPSHOT_CREATE_XML"], RUNNING + rc.xdr_string(
    "<domainsnapshot><name>ro-procs-snap</name></domainsnapshot>") + rc.xdr_uint(0))


def snapshot():
    """What a state change could touch: every domain, its state, its
    definition and its flags, as the read-write connection sees them."""
    u = rc.Unpacker(rw.call_ok(NUM["CONNECT_LIST_ALL_DOMAINS"], rc.xdr_int(1) + rc.xdr_uint(0)))
    doms = [u.domain() for _ in range(u.uint())]
    u.uint()
    u.done()
    seen = {}
    for d in doms:
        wire = rc.xdr_domain(d["name"], d["uuid"], d["id"])
        info = rc.Unpacker(rw.call_ok(NUM["DOMAIN_GET_INFO"], wire))
        # cpuTime, last in the reply, moves on its own.
        facts = {"uuid": d["uuid"].hex(), "id": d["id"], "state": info.uint(),
                 "maxMem": info.uhyper(), "memory": info.uhyper(), "nrVirtCpu": info.uint()}
        flags0 = rc.xdr_uint(0)
        for proc, args in (("DOMAIN_IS_PERSISTENT", wire), ("DOMAIN_GET_AUTOSTART", wire),
                           ("DOMAIN_HAS_MANAGED_SAVE_IMAGE", wire + flags0)):
            facts[proc] = rc.Unpacker(rw.call_ok(NUM[proc], args)).int()
        facts["xml"] = rc.Unpacker(rw.call_ok(NUM["DOMAIN_GET_XML_DESC"], wire + flags0)).string()
        snaps = rc.Unpacker(rw.call_ok(NUM["DOMAIN_SNAPSHOT_LIST_NAMES"],
                                       wire + rc.xdr_int(1000) + flags0))
        facts["snapshots"] = sorted(snaps.string() for _ in range(snaps.uint()))
        seen[d["name"]] = facts
    # The networks too: each one's state, flags and definition.
    u = rc.Unpacker(rw.call_ok(NUM["CONNECT_LIST_ALL_NETWORKS"], rc.xdr_int(1) + rc.xdr_uint(0)))
    nets = [(u.string(), u.opaque(16)) for _ in range(u.uint())]
    for name, uuid in nets:
        wire = rc.xdr_string(name) + uuid
        facts = {"uuid": uuid.hex()}
        for proc in ("NETWORK_IS_ACTIVE", "NETWORK_IS_PERSISTENT", "NETWORK_GET_AUTOSTART"):
            facts[proc] = rc.Unpacker(rw.call_ok(NUM[proc], wire)).int()
        facts["xml"] = rc.Unpacker(rw.call_ok(NUM["NETWORK_GET_XML_DESC"],
                                              wire + rc.xdr_uint(0))).string()
        seen["network " + name] = facts
    # The storage pools: each one's state, flags, definition and volumes.
    u = rc.Unpacker(rw.call_ok(NUM["CONNECT_LIST_ALL_STORAGE_POOLS"],
                               rc.xdr_int(1) + rc.xdr_uint(0)))
    pools = [(u.string(), u.opaque(16)) for _ in range(u.uint())]
    for name, uuid in pools:
        wire = rc.xdr_string(name) + uuid
        facts = {"uuid": uuid.hex()}
        for proc in ("STORAGE_POOL_IS_ACTIVE", "STORAGE_POOL_IS_PERSISTENT",
                     "STORAGE_POOL_GET_AUTOSTART"):
            facts[proc] = rc.Unpacker(rw.call_ok(NUM[proc], wire)).int()
        facts["xml"] = rc.Unpacker(rw.call_ok(NUM["STORAGE_POOL_GET_XML_DESC"],
                                              wire + rc.xdr_uint(0))).string()
        if facts["STORAGE_POOL_IS_ACTIVE"]:
            v = rc.Unpacker(rw.call_ok(NUM["STORAGE_POOL_LIST_ALL_VOLUMES"],
                                       wire + rc.xdr_int(1) + rc.xdr_uint(0)))
            vols = [(v.string(), v.string(), v.string()) for _ in range(v.uint())]
            facts["volumes"] = [rc.Unpacker(rw.call_ok(
                NUM["STORAGE_VOL_GET_XML_DESC"],
                b"".join(rc.xdr_string(x) for x in vol) + rc.xdr_uint(0))).string()
                for vol in vols]
        seen["pool " + name] = facts
    return seen


BEFORE = snapshot()
rc.check([BEFORE.get(n, {}).get("state") for n in ("test", "ro-procs-paused", "ro-procs-inactive")]
         == [1, 3, 5], "domains running, paused and shut off to start with")
rc.check(PROBE_NAME not in BEFORE, f"no domain {PROBE_NAME} to start with")


def unchanged(what):
    now = snapshot()
    if now == BEFORE:
        return
    changes = [f"domain {n} {'appeared' if n in now else 'vanished'}"
               for n in sorted(set(now) ^ set(BEFORE))]
    changes += [f"{n} {key}: {BEFORE[n][key]!r:.60} -> {now[n][key]!r:.60}"
                for n in sorted(set(now) & set(BEFORE)) for key in BEFORE[n]
                if now[n][key] != BEFORE[n][key]]
    fail(f"{what} changed state: {'; '.join(changes)}")


VALUE_OF_TYPE = {
    "rv_uuid": rc.Unpacker(RUNNING).domain()["uuid"],
    "rv_string": rc.xdr_opt_string(None),
    "rv_domain": rc.xdr_uint(0),        # optional domain: absent
    "rv_network": rc.xdr_uint(0),       # optional network: absent
    # libvirt's default test network (active): a change would show.
    "rv_nonnull_network": rc.xdr_string("default") +
                          bytes.fromhex("dd8fe8846c02601e7551cca97df1c5df"),
    "rv_storage_pool": rc.xdr_uint(0),  # optional pool: absent
    "rv_node_device": rc.xdr_uint(0),   # optional node device: absent
    "rv_nonnull_storage_pool": DEFAULT_POOL,
    "rv_nonnull_domain_snapshot": rc.xdr_string("ro-procs-snap") + RUNNING,
    # (a checkpoint the domain has not: refused before any lookup)
    "rv_nonnull_domain_checkpoint": rc.xdr_string("ro-procs-checkpoint") + RUNNING,
    "rv_nonnull_storage_vol": rc.xdr_string("default-pool") + rc.xdr_string("ro-procs-vol") +
                              rc.xdr_string("/default-pool/ro-procs-vol"),
    "unsigned hyper": rc.xdr_uint(0) + rc.xdr_uint(1 << 20),
    # A guest clock (DOMAIN_SET_TIME): 2009-02-13, seconds since the epoch.
    "hyper": rc.xdr_uint(0) + rc.xdr_uint(1234567890),
    # libvirt's test host interface.
    "rv_nonnull_interface": rc.xdr_string("eth1") + rc.xdr_string("aa:bb:cc:dd:ee:ff"),
    # No secret or filter exists: lookups and XML fail, nothing changes.
    "rv_nonnull_secret": bytes(16) + rc.xdr_int(1) + rc.xdr_string("/test"),
    "rv_nonnull_nwfilter": rc.xdr_string("test") + bytes(16),
    "rv_secret": rc.xdr_uint(0),        # optional secret: absent
    "rv_nonnull_nwfilter_binding": rc.xdr_string("vnet0") + rc.xdr_string("test"),
    "unsigned int": rc.xdr_uint(0),
    "int": rc.xdr_int(0),
}


def valid_args(name):
    """Valid argument payloads built from the procedure's argument struct,
    one per target domain if it takes a domain: a state change would hit
    one of them, or define or start a new one."""
    fields = read_arg_fields(XDR_TEXT, name)
    takes_domain = any(xdr_type == "rv_nonnull_domain" for xdr_type, _ in fields)
    payloads = []
    for dom in TARGETS if takes_domain else [None]:
        payload = b""
        for xdr_type, field in fields:
            if xdr_type == "rv_nonnull_domain":
                payload += dom
            elif xdr_type.endswith(">"):        # variable-length: empty
                payload += rc.xdr_uint(0)
            elif xdr_type == "rv_nonnull_string":
                xml = PROBE_NET_XML if name.startswith("NETWORK_") else PROBE_XML
                if name.startswith("STORAGE_"):
                    xml = PROBE_VOL_XML if name.startswith("STORAGE_VOL_") else PROBE_POOL_XML
                payload += rc.xdr_string(xml if "xml" in field else "test")
            elif xdr_type in VALUE_OF_TYPE:
                payload += VALUE_OF_TYPE[xdr_type]
            else:
                fail(f"{name}.{field} has type {xdr_type!r}: teach valid_args a valid value")
        payloads.append(payload)
    return payloads


def error_of(client, proc, payload, what):
    """The decoded error of a call that must fail."""
    hdr, body = client.call(proc, payload)
    if hdr.status != rc.STATUS_ERROR:
        fail(f"{what}: the call succeeded")
    return rc.decode_error(body)


def expect_denied(client, name, payload, what):
    err = error_of(client, NUM[name], payload, what)
    # (a migration step has no public API: libvirt names its internal
    # function, virDomainMigrateBegin3Params)
    api = API[name] if API[name] != '-' or not name.startswith('DOMAIN_MIGRATE_') else \
        'vir' + ''.join(w.capitalize() for w in name.split('_'))
    want = f"operation forbidden: read only access prevents {api}"
    domain = ERR_DOMAIN[name]
    if (err["code"], err["domain"], err["message"]) != (rc.ERR_OPERATION_DENIED, domain, want):
        fail(f"{what}: expected error {rc.ERR_OPERATION_DENIED} in domain {domain} with {want!r}, got "
             f"{err['code']} in domain {err['domain']}: {err['message']!r}")


def expect_decode_error(client, name, what):
    """Garbage arguments got past any read-only check to the decoder."""
    err = error_of(client, NUM[name], GARBAGE, what)
    if err["code"] != rc.ERR_RPC or err["domain"] != FROM_RPC or name not in (err["message"] or ""):
        fail(f"{what}: expected an RPC error (39) about decoding {name}, got "
             f"{err['code']} in domain {err['domain']}: {err['message']!r}")
    return err["message"]


# ---- procedures remvirtd does not serve (@stubs client or none)

# Nothing to refuse: no connection of any kind can run them.
for name, p in PROCS.items():
    if not p.served:
        for client, kind in READ_ONLY + [(rw, "read-write")]:
            err = error_of(client, p.number, GARBAGE, f"{kind} {name}")
            if err["code"] != rc.ERR_RPC or err["message"] != f"unknown procedure: {p.number}":
                fail(f"{kind} {name}: not served, expected unknown procedure, got {err}")
        passed(f"{name} ({p.number}): not served, an unknown procedure on every connection")

# ---- each state-changing procedure

for name in DENY:
    if not PROCS[name].served:
        continue
    for client, kind in READ_ONLY:
        expect_denied(client, name, GARBAGE, f"{kind} {name} with garbage arguments")
        for args in valid_args(name):
            expect_denied(client, name, args, f"{kind} {name} with valid arguments")
        unchanged(f"{kind} {name}")
        rc.expect_usable(client, f"{name} ({NUM[name]}) refused on the {kind} (garbage and "
                                 "valid arguments), state unchanged")
    message = expect_decode_error(rw, name, f"read-write {name} with garbage arguments")
    unchanged(f"read-write {name} with garbage arguments")
    passed(f"{name} ({NUM[name]}) on read-write: decoded, not refused ({message!r})")

# ---- each procedure that may run read-only

for name in ALLOW:
    p = PROCS[name]
    if not p.served:
        continue
    outcomes = []
    for client, kind in READ_ONLY:
        expect_decode_error(client, name, f"{kind} {name} with garbage arguments")
        # The authentication procedures are left out here: valid arguments
        # start an exchange whose failure may end the connection.
        if p.before_auth:
            continue
        for args in valid_args(name):
            hdr, body = client.call(p.number, args)
            if hdr.status == rc.STATUS_OK:
                outcomes.append("ok")
            else:
                err = rc.decode_error(body)
                if err["code"] == rc.ERR_OPERATION_DENIED:
                    fail(f"{kind} {name} with valid arguments: refused: {err['message']!r}")
                outcomes.append(f"error {err['code']}")
            if name == "CONNECT_CLOSE":
                # Open again, without the flag: it must stay read-only (below).
                client.call_ok(NUM["CONNECT_OPEN"], rc.xdr_opt_string("test:///default") +
                               rc.xdr_uint(0))
        unchanged(f"{kind} {name} with valid arguments")
    passed(f"{name} ({p.number}) gets past the read-only check on both kinds of connection"
           + (f"; valid arguments: {', '.join(outcomes)}, state unchanged" if outcomes else ""))

# ---- ways around it that must not work

# The CONNECT_CLOSE step above reopened both without the flag: still
# read-only.
for client, kind in READ_ONLY:
    expect_denied(client, "DOMAIN_DESTROY", RUNNING, f"{kind} reopened without the flag")
unchanged("DOMAIN_DESTROY after reopening")
passed("CONNECT_CLOSE and CONNECT_OPEN without the flag leave both read-only")

# Secrets in the XML stay out of read-only hands; without the flag the
# same query works.
for client, kind in READ_ONLY:
    err = error_of(client, NUM["DOMAIN_GET_XML_DESC"], RUNNING + rc.xdr_uint(XML_SECURE),
                   f"{kind} secure XML")
    rc.check(err["code"] == rc.ERR_OPERATION_DENIED,
             f"{kind}: DOMAIN_GET_XML_DESC with the secure flag refused ({err['message']!r})")
    xml = rc.Unpacker(client.call_ok(NUM["DOMAIN_GET_XML_DESC"], RUNNING + rc.xdr_uint(0))).string()
    rc.check("<name>test</name>" in xml, f"{kind}: DOMAIN_GET_XML_DESC without it works")
rw.call_ok(NUM["DOMAIN_GET_XML_DESC"], RUNNING + rc.xdr_uint(XML_SECURE))

# ---- afterwards

for client, kind in READ_ONLY:
    state = rc.Unpacker(client.call_ok(NUM["DOMAIN_GET_INFO"], RUNNING)).uint()
    rc.check(state == 1, f"{kind}: still answers queries after all that (test is running)")
unchanged("the whole run")
served = {name for name, p in PROCS.items() if p.served}
passed(f"{len(served & set(DENY))} state-changing procedures refused on both kinds of "
       f"read-only connection, {len(served & set(ALLOW))} others allowed")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
