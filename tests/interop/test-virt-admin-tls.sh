#!/usr/bin/env bash
# virt-admin srv-update-tls against remvirtd listening on TLS: new
# certificate files take effect for the clients that come next, a TLS
# client already in stays (and client-info shows its transport and DN), and
# files that do not load are refused with the previous ones kept.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virt-admin
requires virsh
requires certtool
pki=$RV_TMP/pki
make_pki "$pki"

# The daemon reads its TLS files from live/, which the test swaps.
live=$RV_TMP/live
use_set()
{
    mkdir -p "$live"
    cp "$pki/$1/cacert.pem" "$pki/$1/servercert.pem" "$pki/$1/serverkey.pem" \
        "$pki/$1/cacrl.pem" "$live/"
}
use_set server
port=$(free_port)
start_remvirtd 'listen_tls = 1' "tls_port = \"$port\"" "ca_file = \"$live/cacert.pem\"" \
    "cert_file = \"$live/servercert.pem\"" "key_file = \"$live/serverkey.pem\"" \
    "crl_file = \"$live/cacrl.pem\""
uri="test+tls://localhost:$port/default?pkipath=$pki/client"

va()
{
    virt-admin -c "$REMVIRTD_ADMIN_URI" "$@"
}

$RVSH -c "$uri" hostname > /dev/null || fail "rvsh over TLS before any update"

# A TLS client that stays connected across the updates.
bg "$RV_TMP/held" virsh -c "$uri" event --all --loop
held=$BG_PID
# Output is captured before grep reads it: grep -q may stop reading early.
tls_listed() { grep -q ' tls ' <<<"$(va client-list libvirtd)"; }
wait_for "$RV_TIMEOUT" "the held TLS client in client-list" tls_listed
id=$(va client-list libvirtd | awk '$2 == "tls" { print $1 }')
va client-info libvirtd "$id" > "$RV_TMP/info"
has_line "$RV_TMP/info" "transport      : tls" || fail "client-info: not tls"
has_line "$RV_TMP/info" "tls_x509_dname : C=GB,O=remvirt,CN=client1" ||
    { cat "$RV_TMP/info" >&2; fail "client-info: no DN"; }
grep -qE '^sock_addr +: (127\.0\.0\.1|::1|\[::1\]):[0-9]+$' "$RV_TMP/info" ||
    { cat "$RV_TMP/info" >&2; fail "client-info: no address"; }
echo "ok   client-info of a TLS client: transport, DN and address"

# A certificate for another host: new clients of localhost now fail.
use_set server-otherhost
va srv-update-tls libvirtd > /dev/null
if out=$($RVSH -c "$uri" hostname 2>&1); then
    fail "rvsh to localhost succeeded with otherhost's certificate"
fi
echo "ok   after srv-update-tls new clients see the new certificate: $(tail -1 <<<"$out")"

# Files that do not load: refused, the last good ones kept.
echo garbage > "$live/servercert.pem"
if out=$(va srv-update-tls libvirtd 2>&1); then
    fail "srv-update-tls accepted a broken certificate"
fi
echo "ok   a broken certificate is refused: $(tail -1 <<<"$out")"
use_set server
va srv-update-tls libvirtd > /dev/null
$RVSH -c "$uri" hostname > /dev/null || fail "rvsh over TLS after restoring the files"
echo "ok   the original files back: new clients get in again"

kill -0 "$held" 2>/dev/null || { show "$RV_TMP/held"; fail "the held TLS client was dropped"; }
grep -qE "^ $id +tls" <<<"$(va client-list libvirtd)" || fail "client $id is gone from client-list"
echo "ok   the TLS client connected before the updates is still there"

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
