#!/usr/bin/env bash
# libremvirt against a real libvirtd over TLS (same test PKI): rvsh sees
# what virsh sees, and libvirtd's refusal of a DN outside its allowed list
# reaches rvsh as a clear error.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires certtool
requires virsh

pki=$RV_TMP/pki
make_pki "$pki"
port=$(free_port)
start_libvirtd 'listen_tls = 1' 'listen_tcp = 0' "tls_port = \"$port\"" 'auth_tls = "none"' \
    "ca_file = \"$pki/server/cacert.pem\"" "cert_file = \"$pki/server/servercert.pem\"" \
    "key_file = \"$pki/server/serverkey.pem\"" \
    'tls_allowed_dn_list = ["C=GB,O=remvirt,CN=client*"]'
wait_for 10 "libvirtd's TLS port" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" ||
    fail "libvirtd does not listen on TLS port $port"

uri="test+tls://localhost:$port/default?pkipath=$pki/client"
virsh -c "$uri" list --all > "$RV_TMP/virsh.out" || fail "virsh over TLS to libvirtd"
$RVSH -c "$uri" list --all > "$RV_TMP/rvsh.out" || fail "rvsh over TLS to libvirtd"
diff -u "$RV_TMP/virsh.out" "$RV_TMP/rvsh.out" || fail "rvsh and virsh disagree over TLS"
for cmd in "dominfo test" "domstate test" "nodeinfo" "hostname"; do
    # shellcheck disable=SC2086 # cmd is split into words on purpose
    virsh -c "$uri" $cmd > "$RV_TMP/v" && $RVSH -c "$uri" $cmd > "$RV_TMP/r" ||
        fail "'$cmd' over TLS"
    # CPU time moves between the two calls.
    diff -u <(grep -v '^CPU time' "$RV_TMP/v") <(grep -v '^CPU time' "$RV_TMP/r") ||
        fail "'$cmd' differs over TLS"
done

if out=$($RVSH -c "test+tls://localhost:$port/default?pkipath=$pki/client-intruder" list 2>&1); then
    fail "libvirtd let a DN outside its list in"
fi
grep -qF "the server refused our certificate" <<<"$out" || fail "intruder: '$out'"
if out=$($RVSH -c "test+tls://127.0.0.2:$port/default?pkipath=$pki/client" list 2>&1); then
    fail "rvsh accepted libvirtd's certificate for the wrong host"
fi
grep -qF "does not match the host name '127.0.0.2'" <<<"$out" || fail "host mismatch: '$out'"
