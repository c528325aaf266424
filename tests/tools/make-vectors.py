#!/usr/bin/env python3
"""Pick the test vectors of tests/data/libvirt-vectors.txt out of
wire-relay.py capture files.

    make-vectors.py CAPTURE... > tests/data/libvirt-vectors.txt

Each vector is the first captured packet that fits its rule below.  The
header comment of the output says how the captures were made; keep it in
step with what was actually run.
"""

import datetime
import struct
import sys

HEADER = """\
# Packets captured from real libvirt traffic, for tests/unit/test-xdr-vectors.c.
# Client: virsh from Debian 12 libvirt-clients 9.0.0-4+deb12u2; server:
# libvirtd 9.0.0-4+deb12u2 (test:///default driver) on a private socket.
# Captured {date} with tests/tools/wire-relay.py between the two:
#   virsh -c 'test+unix:///default?socket=RELAY' dominfo test
#     (and: list --all, version, nodeinfo, domstate test, dominfo nosuch, domname 1)
# and, for the read-only refusal, tests/tools/rawclient.py on libvirt-sock-ro
# calling DOMAIN_DESTROY test.  Vectors picked by tests/tools/make-vectors.py.
#
# One vector a line: NAME PROCEDURE DIRECTION HEX
#   PROCEDURE  remote program procedure number
#   DIRECTION  call (client to server) or reply
#   HEX        the whole packet, length word included
"""

REMOTE = 0x20008086


def payload_is(hexstr):
    want = bytes.fromhex(hexstr)
    return lambda pkt: pkt[28:] == want


def any_payload(pkt):
    return True


def status_is(status):
    return lambda pkt: struct.unpack(">i", pkt[24:28])[0] == status


# name, procedure, direction (c2s/s2c), predicate over the whole packet
RULES = [
    ("auth_list_call", 66, "c2s", any_payload),
    ("auth_list_reply", 66, "s2c", any_payload),
    ("supports_feature_keepalive_call", 60, "c2s", payload_is("0000000a")),
    ("supports_feature_reply", 60, "s2c", any_payload),
    ("connect_open_call", 1, "c2s", lambda p: p[-4:] == b"\0\0\0\0"),
    ("connect_open_ro_call", 1, "c2s", lambda p: p[-4:] == b"\0\0\0\1"),
    ("connect_open_reply", 1, "s2c", any_payload),
    ("register_close_callback_call", 360, "c2s", any_payload),
    ("domain_lookup_by_name_call", 23, "c2s", payload_is("0000000474657374")),
    ("domain_lookup_by_name_reply", 23, "s2c", status_is(0)),
    ("domain_lookup_by_id_call", 22, "c2s", any_payload),
    ("domain_lookup_by_id_reply", 22, "s2c", any_payload),
    ("domain_get_os_type_reply", 19, "s2c", any_payload),
    ("domain_get_info_call", 16, "c2s", any_payload),
    ("domain_get_info_reply", 16, "s2c", any_payload),
    ("domain_is_persistent_reply", 151, "s2c", any_payload),
    ("domain_has_managed_save_image_call", 183, "c2s", any_payload),
    ("domain_get_security_label_reply", 121, "s2c", any_payload),
    ("node_get_security_model_reply", 122, "s2c", any_payload),
    ("domain_get_messages_reply", 426, "s2c", any_payload),
    ("node_get_info_reply", 6, "s2c", any_payload),
    ("connect_list_all_domains_call", 273, "c2s", any_payload),
    ("connect_list_all_domains_reply", 273, "s2c", any_payload),
    ("domain_get_state_call", 212, "c2s", any_payload),
    ("domain_get_state_reply", 212, "s2c", any_payload),
    ("connect_get_type_reply", 3, "s2c", any_payload),
    ("connect_get_version_reply", 4, "s2c", any_payload),
    ("error_no_domain_reply", 23, "s2c", status_is(1)),
    ("error_operation_denied_reply", 12, "s2c", status_is(1)),
]


def packets(paths):
    for path in paths:
        with open(path, encoding="ascii") as f:
            for line in f:
                _, direction, hexstr = line.split()
                pkt = bytes.fromhex(hexstr)
                prog, _, proc = struct.unpack(">IIi", pkt[4:16])
                if prog == REMOTE:
                    yield proc, direction, pkt


def main(paths):
    captured = list(packets(paths))
    out = [HEADER.format(date=datetime.date.today().isoformat())]
    missing = []
    for name, proc, direction, fits in RULES:
        for p, d, pkt in captured:
            if p == proc and d == direction and fits(pkt):
                kind = "call" if direction == "c2s" else "reply"
                out.append(f"{name} {proc} {kind} {pkt.hex()}\n")
                break
        else:
            missing.append(name)
    if missing:
        sys.exit("no packet in the captures for: " + ", ".join(missing))
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
