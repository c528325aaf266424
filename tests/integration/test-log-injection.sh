#!/usr/bin/env bash
# A SASL user name is the peer's to choose, and remvirtd logs the name of
# a failed login.  One with a newline and a terminal escape sequence must
# stay inside its own log line, escaped: it cannot forge a line that
# looks like remvirtd's, nor clear the screen of whoever tails the log.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires saslpasswd2
requires "$PYTHON3" --version

remvirtd_sasl_db plain alice
start_remvirtd 'auth_unix_rw = "sasl"' 'log_level = 2'

# AUTH_SASL_INIT, then AUTH_SASL_START with PLAIN: authzid NUL authcid
# NUL password, the authcid carrying a whole forged line.
rawpy "$REMVIRTD_SOCK" <<'PY' || fail "the raw SASL client"
import sys
import rawclient as rc

FORGED = ("eve\n2026-11-25 05:00:00.000+0000: 1: info : forged : "
          "client 7: authenticated as alice\r\x1b[2J\x1b]0;pwned\x07")
c = rc.Client(sys.argv[1])
c.call_ok(rc.PROC_AUTH_LIST)
c.call_ok(rc.PROC_AUTH_SASL_INIT)
data = b"\0" + FORGED.encode() + b"\0wrong"
# char data<>: rpcgen sends each byte as a 4-byte int.
args = rc.xdr_string("PLAIN") + rc.xdr_int(0) + rc.xdr_uint(len(data))
args += b"".join(rc.xdr_int(b) for b in data)
hdr, body = c.call(rc.PROC_AUTH_SASL_START, args)
rc.check(hdr.status == rc.STATUS_ERROR, "the forged name does not get in")
PY

wait_for 5 "the failed login in the log" grep -q "SASL authentication as 'eve" "$REMVIRTD_LOG" ||
    fail "the log does not name the failed login"
grep -qF "SASL authentication as 'eve\\n2026-11-25 05:00:00.000+0000: 1: info : forged : client 7: authenticated as alice\\r\\x1b[2J\\x1b]0;pwned\\x07' failed" \
    "$REMVIRTD_LOG" || { cat "$REMVIRTD_LOG" >&2; fail "the user name is not escaped in the log"; }
if grep -q "^2026-11-25 05:00:00.000+0000: 1: info : forged" "$REMVIRTD_LOG"; then
    fail "the user name forged a log line"
fi
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$REMVIRTD_LOG"; then
    fail "the log holds control characters"
fi
echo "ok: the forged user name is one escaped log line"
