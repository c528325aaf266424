#!/usr/bin/env bash
# SASL against remvirtd with a real sasldb (saslpasswd2), driven by virsh
# (libvirt's own client) and by rvsh: SCRAM-SHA-256 over Unix and TLS,
# DIGEST-MD5 over plain TCP with the security layer on (the bytes on the
# wire are not plain text), and every failure refused cleanly while other
# clients carry on: wrong password, unknown user, a user outside
# sasl_allowed_username_list, a mechanism not offered, a client that
# stalls mid-exchange.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
# Under ASan, cyrus's DIGEST-MD5 plugin leaks inside OpenSSL (see
# tests/cyrus-sasl.lsan); full stacks let the suppression see that.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/cyrus-sasl.lsan:fast_unwind_on_malloc=0"
requires saslpasswd2
requires certtool
requires virsh

remvirtd_sasl_db "scram-sha-256 digest-md5" alice carol

pki=$RV_TMP/pki
make_pki "$pki"
tcp=$(free_port)
tls=$(free_port)
start_remvirtd 'auth_unix_rw = "sasl"' 'listen_tcp = 1' "tcp_port = \"$tcp\"" 'auth_tcp = "sasl"' \
    'listen_tls = 1' "tls_port = \"$tls\"" 'auth_tls = "sasl"' \
    "ca_file = \"$pki/server/cacert.pem\"" "cert_file = \"$pki/server/servercert.pem\"" \
    "key_file = \"$pki/server/serverkey.pem\"" \
    'sasl_allowed_username_list = ["alice", "bob*"]' 'auth_timeout = 3' 'log_level = 2'

# auth_file USER PASSWORD: a libvirt-format auth file (virsh reads it
# through LIBVIRT_AUTH_FILE, rvsh through REMVIRT_AUTH_FILE).
auth_file()
{
    local f=$RV_TMP/auth-$1-$2.conf
    printf '[credentials-t]\nauthname=%s\npassword=%s\n\n[auth-libvirt-default]\ncredentials=t\n' \
        "$1" "$2" > "$f"
    echo "$f"
}
good=$(auth_file alice pw-alice)

unix_uri="test+unix:///default?socket=$REMVIRTD_SOCK"
tcp_uri="test+tcp://127.0.0.1:$tcp/default"
tls_uri="test+tls://localhost:$tls/default?pkipath=$pki/client"

# virsh_as AUTHFILE URI CMD...
virsh_as()
{
    local f=$1 uri=$2
    shift 2
    LIBVIRT_AUTH_FILE=$f virsh -c "$uri" "$@" </dev/null
}
rvsh_as()
{
    local f=$1 uri=$2
    shift 2
    REMVIRT_AUTH_FILE=$f "$RVSH" -c "$uri" "$@" </dev/null
}

# ---- good paths: the same listing over every socket, with both clients
expected=$(virsh_as "$good" "$unix_uri&auth=sasl.SCRAM-SHA-256" list --all) ||
    fail "virsh with SCRAM-SHA-256 over Unix"
grep -q ' test ' <<<"$expected" || fail "the listing lacks the test domain: $expected"
for uri in "$tls_uri&auth=sasl.SCRAM-SHA-256" "$tcp_uri"; do
    out=$(virsh_as "$good" "$uri" list --all) || fail "virsh over $uri"
    [ "$out" = "$expected" ] || fail "virsh over $uri lists something else"
    out=$(rvsh_as "$good" "$uri" list --all) || fail "rvsh over $uri"
    [ "$out" = "$expected" ] || fail "rvsh over $uri lists something else"
done
out=$(rvsh_as "$good" "$unix_uri&auth=sasl.SCRAM-SHA-256" list --all) || fail "rvsh with SCRAM over Unix"
[ "$out" = "$expected" ] || fail "rvsh over Unix lists something else"
wait_for 5 "the log to name alice" grep -q "SASL user alice): authenticated with SASL" "$REMVIRTD_LOG" ||
    fail "the log does not show the SASL user"
grep -q "authenticated with SASL (SSF [1-9]" "$REMVIRTD_LOG" ||
    fail "no SASL session over TCP negotiated a security layer"

# ---- the security layer over TCP: capture what crosses the wire.
relay=$RV_TMP/relay.bin
rawpy "$tcp" "$relay" <<'PY' &
import socket, sys, threading
port, out = int(sys.argv[1]), sys.argv[2]
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
open(out + ".port", "w").write(str(ls.getsockname()[1]))
c, _ = ls.accept()
s = socket.create_connection(("127.0.0.1", port))
captured = []
def pump(a, b):
    while True:
        d = a.recv(65536)
        if not d:
            b.shutdown(socket.SHUT_WR)
            return
        captured.append(d)
        b.sendall(d)
t = [threading.Thread(target=pump, args=p) for p in ((c, s), (s, c))]
for x in t: x.start()
for x in t: x.join()
open(out, "wb").write(b"".join(captured))
PY
relay_pid=$!
wait_for 5 "the relay" test -s "$relay.port" || fail "the capture relay did not start"
xml=$(virsh_as "$good" "test+tcp://127.0.0.1:$(cat "$relay.port")/default" dumpxml test) ||
    fail "virsh through the relay"
wait "$relay_pid" || fail "the relay failed"
grep -q "<name>test</name>" <<<"$xml" || fail "dumpxml through the relay: $xml"
[ -s "$relay" ] || fail "nothing captured"
if grep -aq "<name>test</name>" "$relay" || grep -aq "<domain type" "$relay"; then
    fail "the domain XML crossed TCP in plain text: no SASL security layer"
fi
grep -aq "DIGEST-MD5\|digest-md5" "$relay" || fail "the capture shows no DIGEST-MD5 exchange"

# ---- failures: each refused with AUTH_FAILED, the daemon carries on
# expect_refused NAME WORDS AUTHFILE URI [CLIENT]
expect_refused()
{
    local name=$1 words=$2 f=$3 uri=$4 out
    if out=$(virsh_as "$f" "$uri" list 2>&1); then
        fail "$name: virsh got in"
    fi
    grep -qiF -- "$words" <<<"$out" || fail "$name: virsh said '$out', not '$words'"
    if out=$(rvsh_as "$f" "$uri" list 2>&1); then
        fail "$name: rvsh got in"
    fi
    grep -qiF -- "$words" <<<"$out" || fail "$name: rvsh said '$out', not '$words'"
}
expect_refused "wrong password" "authentication failed" "$(auth_file alice nope)" "$unix_uri"
expect_refused "unknown user" "authentication failed" "$(auth_file mallory pw)" "$tcp_uri"
expect_refused "user outside the allow list" "authentication failed" \
    "$(auth_file carol pw-carol)" "$tls_uri"
wait_for 5 "the log to name the allow list" \
    grep -q "as 'carol' failed: the user is not in sasl_allowed_username_list" "$REMVIRTD_LOG" ||
    fail "the log does not say carol is not allowed"
expect_refused "mechanism not offered" "PLAIN" "$good" "$unix_uri&auth=sasl.PLAIN"

# A client that stalls mid-exchange is dropped at auth_timeout (3 s); a
# good client is served meanwhile.
rawpy "$REMVIRTD_SOCK" <<'PY' || fail "stalled SASL client"
import sys, time
import rawclient as rc
c = rc.Client(sys.argv[1])
c.call_ok(rc.PROC_AUTH_LIST)
c.call_ok(rc.PROC_AUTH_SASL_INIT)  # then nothing more
start = time.monotonic()
rc.check(c.wait_closed(10), "a client stalled mid-SASL is closed")
took = time.monotonic() - start
rc.check(1.5 < took < 6, f"at about auth_timeout ({took:.1f} s)")
PY
out=$(virsh_as "$good" "$unix_uri" list --all) || fail "a good client after the failures"
[ "$out" = "$expected" ] || fail "a good client after the failures lists something else"
remvirtd_alive || fail "remvirtd died"
