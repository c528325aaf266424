#!/usr/bin/env python3
"""Check libvirt's procedure tables, protocol/libvirt-remote-procs.tsv
and protocol/libvirt-admin-procs.tsv.

    check-proc-table.py [--api-xml FILE] [--admin-api-xml FILE]
                        [--capture FILE]...

Each table is a comment header, then NUMBER<TAB>NAME<TAB>API lines.
Checks:
  - every line has three fields; NUMBER is a positive integer, NAME is
    upper case with underscores, API is '-' or a function name;
  - numbers are unique and increasing, names are unique;
  - every API exists in libvirt-api.xml / libvirt-admin-api.xml (from
    Debian's libvirt-dev) when that file is present (skipped otherwise);
  - every API follows the naming rule written in the table's header
    (prefix + CamelCase of NAME, compared without case), and every '-'
    is one of the rule's exceptions;
  - every procedure of enum rv_remote_procedure in protocol/rv_remote.x
    has the same number and name as in the remote table.
With --capture (a wire-relay.py record), it also prints each program
and procedure seen in the capture with its name from the tables and
fails if a number is not in the table or if an error reply saying
"not supported by the connection driver: FUNC" names another function
than the table's API of its procedure.

Exit status 0 when every check passes, 1 otherwise.  Standard library
only.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REMOTE_TABLE = os.path.join(TOP, "protocol", "libvirt-remote-procs.tsv")
ADMIN_TABLE = os.path.join(TOP, "protocol", "libvirt-admin-procs.tsv")
RV_REMOTE_X = os.path.join(TOP, "protocol", "rv_remote.x")
API_XML = "/usr/share/libvirt/api/libvirt-api.xml"
ADMIN_API_XML = "/usr/share/libvirt/api/libvirt-admin-api.xml"

REMOTE_PROGRAM = 0x20008086
ADMIN_PROGRAM = 0x06900690

NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*[A-Z0-9]$")
API_RE = re.compile(r"^vir[A-Za-z0-9]+$")

# The remote table's rule: procedures with no public function ('-').
NO_API_RES = [
    re.compile(r"^AUTH_"),
    re.compile(r"^(DOMAIN|NETWORK|STORAGE_POOL|NODE_DEVICE|SECRET|CONNECT)_EVENT_"),
    re.compile(r"^DOMAIN_MIGRATE_(BEGIN|PREPARE|PERFORM|FINISH|CONFIRM)"),
    re.compile(r"^CONNECT_SUPPORTS_FEATURE$"),
]
# ... and procedures whose public function is not named after them.
API_EXCEPTIONS = {
    "CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY": "virConnectDomainEventRegisterAny",
    "CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY": "virConnectDomainEventDeregisterAny",
}

errors = 0


def error(where, msg):
    global errors
    errors += 1
    print(f"{where}: {msg}", file=sys.stderr)


def read_table(path):
    """Return the list of (lineno, number, name, api, module) of a table file."""
    rows = []
    rel = os.path.relpath(path, TOP)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or not lines[0].startswith("# number name api module"):
        error(f"{rel}:1", "the first line is not the '# number name api module' header")
    for lineno, line in enumerate(lines, 1):
        where = f"{rel}:{lineno}"
        if line.startswith("#"):
            if lineno != 1:
                error(where, "a comment after the header")
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            error(where, f"{len(fields)} tab-separated fields, not 4")
            continue
        num, name, api, module = fields
        if not re.fullmatch(r"[1-9][0-9]*", num):
            error(where, f"number {num!r} is not a positive integer")
            continue
        if not NAME_RE.match(name):
            error(where, f"name {name!r} is not upper case with underscores")
        if api != "-" and not API_RE.match(api):
            error(where, f"api {api!r} is neither '-' nor a function name")
        if (module == "-") != (api == "-"):
            error(where, f"module {module!r} with api {api!r}: '-' goes with '-' only")
        rows.append((lineno, int(num), name, api, module))
    return rows


def check_order(rel, rows):
    last = 0
    names = {}
    for lineno, num, name, _, _ in rows:
        if num <= last:
            error(f"{rel}:{lineno}", f"number {num} after {last}: not increasing (or repeated)")
        last = max(last, num)
        if name in names:
            error(f"{rel}:{lineno}", f"name {name} repeats line {names[name]}")
        names.setdefault(name, lineno)


def api_modules(path):
    """Each function's module: its file without 'libvirt-' and 'domain-'
    ('admin' for the admin library)."""
    root = ET.parse(path).getroot()
    return {f.get("name"): ("admin" if "admin" in os.path.basename(path) else
                            f.get("file").replace("libvirt-", "").replace("domain-", ""))
            for f in root.iter("function")}


def check_apis(rel, rows, xml_path, prefix, with_exceptions):
    if os.path.exists(xml_path):
        known = api_modules(xml_path)
        print(f"{rel}: checking API names against {xml_path} ({len(known)} functions)")
    else:
        known = None
        print(f"{rel}: {xml_path} is absent (apt-get install libvirt-dev): "
              "API names not checked against it")
    for lineno, num, name, api, module in rows:
        where = f"{rel}:{lineno}"
        no_api = with_exceptions and any(r.match(name) for r in NO_API_RES)
        if api == "-":
            if not no_api:
                error(where, f"{name} has no API but is not one of the header's exceptions")
            continue
        if no_api:
            error(where, f"{name} is one of the header's '-' exceptions but names {api}")
        expected = API_EXCEPTIONS.get(name) if with_exceptions else None
        if expected is not None:
            if api != expected:
                error(where, f"{name}: api {api}, the header's exception says {expected}")
        elif api.lower() != (prefix + name.replace("_", "")).lower():
            error(where, f"{name}: api {api} is not {prefix} + CamelCase of the name")
        if known is not None and api not in known:
            error(where, f"{api} is not a function of {os.path.basename(xml_path)}")
        elif known is not None and known[api] != module:
            error(where, f"{api} is in module {known[api]}, not {module}")


def check_rv_remote(rows):
    rel = os.path.relpath(RV_REMOTE_X, TOP)
    by_num = {num: name for _, num, name, _, _ in rows}
    by_name = {name: num for _, num, name, _, _ in rows}
    with open(RV_REMOTE_X, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"enum\s+rv_remote_procedure\s*\{(.*?)\}", text, re.S)
    if not m:
        error(rel, "no enum rv_remote_procedure")
        return
    body_start = text.count("\n", 0, m.start(1)) + 1
    count = 0
    for i, line in enumerate(m.group(1).split("\n")):
        e = re.match(r"\s*RV_PROC_([A-Z0-9_]+)\s*=\s*([0-9]+)\s*,?\s*$", line)
        if not e:
            continue
        count += 1
        where = f"{rel}:{body_start + i}"
        name, num = e.group(1), int(e.group(2))
        if num not in by_num:
            error(where, f"RV_PROC_{name} = {num}: libvirt has no procedure {num}")
        elif by_num[num] != name:
            error(where, f"RV_PROC_{name} = {num}: libvirt's procedure {num} is {by_num[num]}")
        elif by_name.get(name) != num:
            error(where, f"RV_PROC_{name} = {num}: libvirt's {name} is {by_name.get(name)}")
    if count == 0:
        error(rel, "enum rv_remote_procedure has no RV_PROC_ entries")
    print(f"{rel}: {count} procedures of enum rv_remote_procedure compared with the remote table")


def check_no_support(where, table, proc, payload):
    """An error reply that says 'not supported by the connection driver:
    FUNC' must name the table's API of its procedure."""
    table_name, names, apis = table
    if len(payload) < 12 or payload[8:12] != b"\0\0\0\1":
        return                                  # no message
    size = int.from_bytes(payload[12:16], "big")
    message = payload[16:16 + size].decode("utf-8", "replace")
    m = re.search(r"not supported by the connection driver: (\w+)", message)
    if not m:
        return
    if apis.get(proc) != m.group(1):
        error(where, f"{table_name} procedure {proc} ({names.get(proc)}): the server named "
                     f"{m.group(1)}, the table says {apis.get(proc)}")
    else:
        print(f"{where}: {table_name} {proc} {names[proc]}: NO_SUPPORT names {m.group(1)} as the table does")


def check_capture(path, tables):
    """Name the (program, procedure) pairs seen in a wire-relay.py record."""
    seen = {}
    with open(path, encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 3:
                continue
            conn, direction, hexdata = parts
            pkt = bytes.fromhex(hexdata)
            if len(pkt) < 28:
                continue
            prog = int.from_bytes(pkt[4:8], "big")
            proc = int.from_bytes(pkt[12:16], "big", signed=True)
            ptype = int.from_bytes(pkt[16:20], "big")
            if prog not in tables:
                continue
            key = (prog, proc, direction, ptype)
            seen.setdefault(key, f"{path}:{lineno}")
            status = int.from_bytes(pkt[24:28], "big")
            if direction == "s2c" and ptype == 1 and status == 1:
                check_no_support(f"{path}:{lineno}", tables[prog], proc, pkt[28:])
    for (prog, proc, direction, ptype), where in sorted(seen.items()):
        table_name, names, _ = tables[prog]
        kind = {0: "CALL", 1: "REPLY", 2: "MESSAGE", 3: "STREAM", 4: "CALL_WITH_FDS",
                5: "REPLY_WITH_FDS", 6: "STREAM_HOLE"}.get(ptype, str(ptype))
        if proc not in names:
            error(where, f"{table_name} procedure {proc} ({direction} {kind}) is not in the table")
        else:
            print(f"{path}: {table_name} {proc:4d} {direction} {kind:8s} {names[proc]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--api-xml", default=API_XML)
    ap.add_argument("--admin-api-xml", default=ADMIN_API_XML)
    ap.add_argument("--capture", action="append", default=[],
                    help="a wire-relay.py record whose procedures to name")
    args = ap.parse_args()

    remote = read_table(REMOTE_TABLE)
    admin = read_table(ADMIN_TABLE)
    for path, rows in ((REMOTE_TABLE, remote), (ADMIN_TABLE, admin)):
        rel = os.path.relpath(path, TOP)
        check_order(rel, rows)
        print(f"{rel}: {len(rows)} procedures, {rows[0][1] if rows else '-'}.."
              f"{rows[-1][1] if rows else '-'}, {sum(1 for r in rows if r[3] == '-')} without an API")
    check_apis(os.path.relpath(REMOTE_TABLE, TOP), remote, args.api_xml, "vir", True)
    check_apis(os.path.relpath(ADMIN_TABLE, TOP), admin, args.admin_api_xml, "virAdm", False)
    check_rv_remote(remote)

    tables = {
        REMOTE_PROGRAM: ("remote", {num: name for _, num, name, _, _ in remote},
                         {num: api for _, num, _, api, _ in remote}),
        ADMIN_PROGRAM: ("admin", {num: name for _, num, name, _, _ in admin},
                        {num: api for _, num, _, api, _ in admin}),
    }
    for path in args.capture:
        check_capture(path, tables)

    if errors:
        print(f"check-proc-table: {errors} error(s)", file=sys.stderr)
        return 1
    print("check-proc-table: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
