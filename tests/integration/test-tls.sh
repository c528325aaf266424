#!/usr/bin/env bash
# TLS end to end against remvirtd with a certtool-made PKI: the good paths
# (rvsh and virsh, by name and by IPv4/IPv6 address), every refusal named
# on the side that refuses, the start-up check of the daemon's own
# certificate, and stalled handshakes that are dropped without holding up
# anyone else: not the loop, and not the one work thread that runs the
# handshakes' steps (work_threads = 1); strangers past
# max_anonymous_clients are closed at once with a reason in the log.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires certtool

pki=$RV_TMP/pki
make_pki "$pki"

# tls_lines SET: the config lines for the server file set SET.
tls_lines()
{
    echo "ca_file = \"$pki/$1/cacert.pem\""
    echo "cert_file = \"$pki/$1/servercert.pem\""
    echo "key_file = \"$pki/$1/serverkey.pem\""
    echo "crl_file = \"$pki/$1/cacrl.pem\""
}

port=$(free_port)
mapfile -t server_tls < <(tls_lines server)
start_remvirtd 'listen_tls = 1' "tls_port = \"$port\"" "${server_tls[@]}" 'log_level = 2' \
    'tls_allowed_dn_list = ["C=GB,O=remvirt,CN=client*"]' 'tls_handshake_timeout = 2' \
    'work_threads = 1' 'max_anonymous_clients = 3'
$RVSH -c "$REMVIRTD_URI" list --all > "$RV_TMP/unix.out"

uri() # uri CLIENT-SET [HOST] [EXTRA-PARAMS]
{
    echo "test+tls://${2:-localhost}:$port/default?pkipath=$pki/$1${3:+&$3}"
}

for host in localhost 127.0.0.1 '[::1]'; do
    $RVSH -c "$(uri client "$host")" list --all > "$RV_TMP/tls.out" || fail "rvsh over TLS to $host"
    cmp -s "$RV_TMP/unix.out" "$RV_TMP/tls.out" || fail "TLS to $host lists something else"
done
grep -q "certificate DN C=GB,O=remvirt,CN=client1" "$REMVIRTD_LOG" ||
    fail "the log does not show the client's DN"
# A change over TLS is seen over the Unix socket.
$RVSH -c "$(uri client)" suspend test >/dev/null
[ "$($RVSH -c "$REMVIRTD_URI" domstate test)" = paused ] || fail "suspend over TLS was not seen"
$RVSH -c "$REMVIRTD_URI" resume test >/dev/null

if command -v virsh >/dev/null; then
    virsh -c "$(uri client)" list --all > "$RV_TMP/virsh.out" || fail "virsh over TLS failed"
    cmp -s "$RV_TMP/unix.out" "$RV_TMP/virsh.out" || fail "virsh over TLS lists something else"
    # virsh names its own reason when the server refuses it.
    if out=$(virsh -c "$(uri client-intruder)" list 2>&1); then
        fail "virsh with a DN outside the list got in"
    fi
fi

# expect_refusal CLIENT-SET CLIENT-WORDS [LOG-WORDS] [HOST] [PARAMS]
expect_refusal()
{
    local out
    if out=$($RVSH -c "$(uri "$1" "${4:-}" "${5:-}")" list 2>&1); then
        fail "client set $1 got in"
    fi
    grep -qiF -- "$2" <<<"$out" || fail "$1: '$out' does not say '$2'"
    if [ -n "${3:-}" ]; then
        wait_for 5 "the log to say '$3'" grep -qiF -- "$3" "$REMVIRTD_LOG" ||
            fail "$1: the log does not say '$3'"
    fi
}

refused="the server refused our certificate"
# The server refuses these clients and logs why.  A client checks its own
# certificate first, as libvirt's does; no_sanity=1 lets these three past
# that so that the server is the one to judge them.
expect_refusal client-expired "$refused" "expired" localhost no_sanity=1
expect_refusal client-notyet "$refused" "not yet active" localhost no_sanity=1
expect_refusal client-foreign "$refused" "not signed by a known CA" localhost no_sanity=1
expect_refusal client-revoked "$refused" "revoked"
expect_refusal client-nocert "$refused" "sent no certificate"
expect_refusal client-intruder "$refused" "'C=GB,O=remvirt,CN=intruder' is not in tls_allowed_dn_list"
# The client refuses the server and says why.
expect_refusal client-foreignca "unknown CA"
# Without no_sanity the client refuses to present an expired certificate.
expect_refusal client-expired "clientcert.pem has expired"
expect_refusal client "does not match the host name '127.0.0.2'" "" 127.0.0.2
# As in libvirt, only a non-zero number turns no_verify on.
expect_refusal client "does not match the host name '127.0.0.2'" "" 127.0.0.2 no_verify=no
# no_verify=1 skips the client's checks of the server (not the server's).
$RVSH -c "$(uri client 127.0.0.2 no_verify=1)" list >/dev/null || fail "no_verify=1 with a host mismatch"
$RVSH -c "$(uri client-foreignca localhost no_verify=1)" list >/dev/null ||
    fail "no_verify=1 with an unknown CA"

# Stalled handshakes: one sends nothing, one stops inside its hello.  Both
# are closed after tls_handshake_timeout (2 s), and meanwhile others work:
# GetInfo on the Unix socket answers at once and a TLS client gets in
# (its steps share the one work thread).  With them a third stranger makes
# max_anonymous_clients (3): a fourth is closed at once.
rawpy "$port" "$RVSH" "$(uri client)" "$REMVIRTD_SOCK" <<'PY' || fail "stalled handshakes"
import socket, subprocess, sys, time
import rawclient as rc
port, rvsh, uri, sock = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
local = rc.Client(sock)
local.open_connection()
dom = local.lookup("test")
silent = socket.create_connection(("127.0.0.1", port))
partial = socket.create_connection(("127.0.0.1", port))
partial.sendall(bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]))   # a record header and one byte
start = time.monotonic()
slowest = 0
for i in range(200):
    t = time.monotonic()
    local.call_ok(rc.PROC_DOMAIN_GET_INFO, dom)
    slowest = max(slowest, time.monotonic() - t)
rc.check(slowest < 0.5, f"GetInfo beside stalled handshakes (slowest {slowest * 1000:.1f} ms)")
subprocess.run([rvsh, "-c", uri, "list"], check=True, stdout=subprocess.DEVNULL, timeout=10)
rc.check(time.monotonic() - start < 1.5, "a TLS client got in beside stalled handshakes")
third = socket.create_connection(("127.0.0.1", port))
time.sleep(0.2)
fourth = socket.create_connection(("127.0.0.1", port))
fourth.settimeout(1)
rc.check(fourth.recv(100) == b"", "a stranger past max_anonymous_clients is closed at once")
for s in (silent, partial):
    s.settimeout(10)
    assert s.recv(100) == b"", "the server sent something to a stalled client"
elapsed = time.monotonic() - start
assert 1.5 < elapsed < 6, f"stalled clients closed after {elapsed:.1f} s, not about 2"
local.call_ok(rc.PROC_DOMAIN_GET_INFO, dom)
PY
grep -q "max_anonymous_clients (3) are still authenticating" "$REMVIRTD_LOG" ||
    fail "the log does not name max_anonymous_clients"
grep -q "no TLS handshake within 2 s" "$REMVIRTD_LOG" || fail "the log does not name the timeout"
remvirtd_alive || fail "remvirtd died"
$RVSH -c "$REMVIRTD_URI" list >/dev/null || fail "remvirtd stopped serving"

# max_client_requests over TLS: calls that the daemon's TLS layer has read
# but not handed on when it stops reading do not make the fd readable
# again; once the replies are read, it must still answer them.
rawpy "$port" "$pki/client" <<'PY' || fail "pipelined calls over TLS past max_client_requests"
import sys, time
import rawclient as rc
port, pki = int(sys.argv[1]), sys.argv[2]
# A small receive buffer: replies back up soon.
c = rc.tls_client(port, pki, rcvbuf=4096)
c.open_connection()
xml = ("<domain type='test'><name>bigreply</name><description>" + "x" * 1000000 +
       "</description><memory>1024</memory><os><type>hvm</type></os></domain>")
dom = c.call_ok(rc.PROC_DOMAIN_DEFINE_XML, rc.xdr_string(xml))
# 12 GET_XML_DESC calls, a record each, in one segment: one recv takes
# them all, and after a megabyte reply (RVS_CALLS_OUTPUT_MAX) the daemon
# stops reading with the rest still inside its TLS layer.
for i in range(12):
    c.sock.pipeline(rc.packet(rc.PROC_DOMAIN_GET_XML_DESC, dom + rc.xdr_uint(0), serial=100 + i))
c.sock.flush()
time.sleep(1)
for i in range(12):
    hdr, body = c.recv_reply()
    assert (hdr.serial, hdr.status) == (100 + i, rc.STATUS_OK), f"reply {i}: {hdr}"
    assert len(body) > 1000000, f"reply {i} holds {len(body)} bytes"
c.call_ok(rc.PROC_DOMAIN_UNDEFINE, dom)
PY
stop_remvirtd

# The daemon checks its own certificate at start and says what is wrong.
# start_fails SET WORDS [extra config lines]
start_fails()
{
    local set=$1 words=$2 conf=$RV_TMP/bad.conf out
    shift 2
    mkdir -p "$RV_TMP/bad"
    { tls_lines "$set"; echo "unix_sock_dir = \"$RV_TMP/bad\""; echo 'listen_tls = 1'
      echo "tls_port = \"$(free_port)\""; printf '%s\n' "$@"; } > "$conf"
    if out=$(timeout 20 "$REMVIRTD" -f "$conf" 2>&1); then
        fail "remvirtd started with the $set certificate"
    fi
    grep -qiF -- "$words" <<<"$out" || fail "$set: '$out' does not say '$words'"
}
start_fails server-expired "expired"
start_fails server-notyet "not yet active"
start_fails server-purpose "purpose"
start_fails server-foreign "$pki/server-foreign/servercert.pem"

# tls_no_sanity_certificate lets it start anyway; then the client refuses.
port=$(free_port)
mapfile -t server_tls < <(tls_lines server-expired)
start_remvirtd 'listen_tls = 1' "tls_port = \"$port\"" "${server_tls[@]}" \
    'tls_no_sanity_certificate = 1'
expect_refusal client "the server's certificate has expired"
$RVSH -c "$REMVIRTD_URI" list >/dev/null || fail "remvirtd stopped serving"
