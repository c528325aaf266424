#!/usr/bin/env bash
# Peer-to-peer live migration (issue 30) over the destination URIs other
# than qemu+tcp: A's remvirtd, the p2p source, opens B's remvirtd as a
# libvirt client does (tests/migrate-hosts.sh's two hosts):
#   - qemu+tls://B/system: B listens on TLS (a CA and certificates made
#     here with certtool); A finds its client certificate where libvirt's
#     client looks for root (/etc/pki/CA/cacert.pem, /etc/pki/libvirt/
#     clientcert.pem, private/clientkey.pem: an overlay over this test's
#     own /etc view), or in the URI's pkipath=;
#   - a client certificate from another CA (A's sanity check), none at
#     all (B refuses it), a B certificate A's CA does not know: the
#     migration fails with a clear error and the guest runs on A alone;
#   - qemu+ssh://root@B/system: an sshd in B's namespace, A's remvirtd
#     logging in with a key: ~/.ssh/id_ed25519 and ~/.ssh/known_hosts of
#     A's remvirtd (root: an overlay over this test's view of its home),
#     or keyfile=, known_hosts= (socket= names B's socket);
#     a host key that does not match or is not known, a key sshd does
#     not accept (and no password asked on a terminal), a key
#     file that does not exist: clear errors, the guest on A alone.
#   - with a stock libvirtd 9.0 at A's address over qemu+tls, both ways.
# Each success is checked on both hosts and the guest goes back to A
# (B's remvirtd, p2p over qemu+tcp) for the next.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

requires certtool --version
requires /usr/sbin/sshd -V
requires ssh-keygen
migrate_pair_up

# ---- the PKI: our CA, B's server certificate (10.231.0.2), A's client
# certificate; a foreign CA with a client certificate and a server one ----
P=$RV_TMP/p2ppki
mkdir -p "$P"/{client,foreign,nocert,otherca}
(
    cd "$P"
    ct() { certtool "$@" 2> /dev/null; }
    for ca in ca fca; do
        ct --generate-privkey --key-type rsa --bits 2048 --outfile $ca-key.pem
        printf 'cn = rv-%s\nca\ncert_signing_key\nexpiration_days = 2\n' $ca > $ca.info
        ct --generate-self-signed --load-privkey $ca-key.pem --template $ca.info --outfile $ca-cert.pem
    done
    cert() # NAME CA TEMPLATE-LINES
    {
        ct --generate-privkey --key-type rsa --bits 2048 --outfile "$1-key.pem"
        printf '%s\nexpiration_days = 2\nencryption_key\nsigning_key\n' "$3" > "$1.info"
        ct --generate-certificate --load-privkey "$1-key.pem" --load-ca-certificate "$2-cert.pem" \
            --load-ca-privkey "$2-key.pem" --template "$1.info" --outfile "$1-cert.pem"
    }
    cert server ca $'cn = rvmig\nip_address = 10.231.0.1\nip_address = 10.231.0.2\ntls_www_server'
    cert client ca $'cn = rvmig-a\ntls_www_client'
    cert fclient fca $'cn = rvmig-a\ntls_www_client'
    cp ca-cert.pem client/cacert.pem; cp client-cert.pem client/clientcert.pem; cp client-key.pem client/clientkey.pem
    cp ca-cert.pem foreign/cacert.pem; cp fclient-cert.pem foreign/clientcert.pem; cp fclient-key.pem foreign/clientkey.pem
    cp ca-cert.pem nocert/cacert.pem
    cp fca-cert.pem otherca/cacert.pem
) || fail "certtool"

# libvirt's client places, for root, in this test's own view of /etc
# (the namespace is private: an overlay over /etc changes nothing outside)
ETCU=$RV_TMP/etc-upper ETCW=$RV_TMP/etc-work
mkdir -p "$ETCU" "$ETCW"
if mount -t overlay overlay -o "lowerdir=/etc,upperdir=$ETCU,workdir=$ETCW" /etc 2> "$OUT/overlay.err"; then
    cleanup_fn umount -l /etc
    mkdir -p /etc/pki/CA /etc/pki/libvirt/private
    cp "$P/ca-cert.pem" /etc/pki/CA/cacert.pem
    cp "$P/client-cert.pem" /etc/pki/libvirt/clientcert.pem
    cp "$P/client-key.pem" /etc/pki/libvirt/private/clientkey.pem
    ETC_PKI=1
else
    echo "no overlay over /etc ($(cat "$OUT/overlay.err")): the default places are not tried" >&2
    ETC_PKI=
fi

# B started again, listening on TLS too
cat >> "$BDIR/remvirtd.conf" <<EOF
listen_tls = 1
tls_port = "16514"
auth_tls = "none"
ca_file = "$P/ca-cert.pem"
cert_file = "$P/server-cert.pem"
key_file = "$P/server-key.pem"
EOF
restart_b

# ---- an sshd in B's namespace (port 22 there), root logging in with a key ----
S=$RV_TMP/p2psshd
mkdir -p "$S"
[ -d /run/sshd ] || mkdir -m 0755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -C rv-b-host -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -C rv-other-host -f "$S/other_host_key"
ssh-keygen -q -t ed25519 -N '' -C rv-a-root -f "$S/id_a"
ssh-keygen -q -t ed25519 -N '' -C rv-stranger -f "$S/id_stranger"
cp "$S/id_a.pub" "$S/authorized_keys"
echo "10.231.0.2 $(cut -d' ' -f1,2 "$S/host_key.pub")" > "$S/known_hosts"
echo "10.231.0.2 $(cut -d' ' -f1,2 "$S/other_host_key.pub")" > "$S/wrong_known_hosts"
cat > "$S/sshd_config" <<EOF
ListenAddress 10.231.0.2:22
HostKey $S/host_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM no
SetEnv PATH=$top_builddir:/usr/bin:/bin
LogLevel VERBOSE
EOF
ip netns exec $MIG_NS /usr/sbin/sshd -D -e -f "$S/sshd_config" < /dev/null 2> "$S/sshd.log" &
SSHDPID=$!
stop_p2p_sshd() { kill "$SSHDPID" 2> /dev/null || true; wait "$SSHDPID" 2> /dev/null || true; }
cleanup_fn stop_p2p_sshd
sshd_up() { grep -qs "Server listening on 10.231.0.2 port 22" "$S/sshd.log"; }
wait_for 30 "sshd in B's namespace" sshd_up || { show "$S/sshd.log"; fail "sshd did not start"; }

# ---- the guest, on A ----
virsh -q -c "$A" define "$OUT/g.xml" > /dev/null
virsh -q -c "$A" start g > /dev/null

# on_b: g runs on B (migrated), shut off on A, one QEMU, on B.
on_b()
{
    [ "$(virsh -q -c "$B" domstate --reason g)" = "running (migrated)" ] || fail "$1: g is not running (migrated) on B"
    [ "$(virsh -q -c "$A" domstate g)" = "shut off" ] || fail "$1: g is not shut off on A"
    [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "$1: A kept a QEMU"
    [ "$(qemu_pids "$BDIR/qemu/run/" | wc -l)" = 1 ] || fail "$1: not one QEMU on B"
}
# back_to_a WHAT: B's remvirtd migrates g back peer to peer (qemu+tcp).
back_to_a()
{
    virsh -q -c "$B" migrate --live --p2p g "$A" > "$OUT/back" 2>&1 || { show "$OUT/back"; fail "$1: back to A"; }
    wait_for 30 "B without g" b_empty
    on_a_alone "$1: back on A"
}
# p2p_ok WHAT URI: A to B over URI, then back.
p2p_ok()
{
    local t0 t1
    t0=$(date +%s.%N)
    virsh -q -c "$A" migrate --live --p2p g "$2" > "$OUT/ok" 2>&1 ||
        { show "$OUT/ok"; show "$RV_TMP/remvirtd/remvirtd.log"; fail "$1: virsh migrate --p2p $2"; }
    t1=$(date +%s.%N)
    echo "$1: virsh migrate --p2p took $(awk "BEGIN { print $t1 - $t0 }") s" >&2
    on_b "$1"
    back_to_a "$1"
}
# p2p_refused WHAT URI PATTERN: A to B over URI fails with PATTERN (grep
# -E) in virsh's error; the guest runs on A alone.
p2p_refused()
{
    if virsh -q -c "$A" migrate --live --p2p g "$2" > "$OUT/refused" 2>&1; then
        fail "$1: the migration succeeded"
    fi
    grep -qE -- "$3" "$OUT/refused" || { show "$OUT/refused"; fail "$1: no clear error ($3)"; }
    echo "$1: $(tr '\n' ' ' < "$OUT/refused")" >&2
    on_a_alone "$1"
}

# ---- TLS ----
TLS=qemu+tls://10.231.0.2/system
if [ -n "$ETC_PKI" ]; then
    p2p_ok "TLS, libvirt's default certificate places" "$TLS"
fi
p2p_ok "TLS, pkipath=" "$TLS?pkipath=$P/client"
# (its own CA file checked first, as libvirt's client does: A says so)
p2p_refused "TLS, a client certificate from another CA" "$TLS?pkipath=$P/foreign" \
    "client's certificate .*/foreign/clientcert.pem is not signed by a known CA"
# (B's to refuse: a client without a certificate tries, as libvirt's does)
p2p_refused "TLS, no client certificate" "$TLS?pkipath=$P/nocert" "server refused our certificate"
p2p_refused "TLS, B's certificate from a CA A does not trust" "$TLS?pkipath=$P/otherca" "certificate"
p2p_refused "TLS, B listening on TLS elsewhere" "qemu+tls://10.231.0.2:16599/system?pkipath=$P/client" "connect"

# ---- SSH ----
SSH="qemu+ssh://root@10.231.0.2/system?socket=$BDIR/remvirt-sock"
# root's own places: ~/.ssh/id_ed25519 and ~/.ssh/known_hosts of A's
# remvirtd's home (an overlay over this test's view of it)
HOMEU=$RV_TMP/home-upper HOMEW=$RV_TMP/home-work
mkdir -p "$HOMEU" "$HOMEW"
if [ -d "$HOME" ] && [ "$HOME" != / ] && [ ! -e "$HOME/.ssh/id_ed25519" ] &&
    mount -t overlay overlay -o "lowerdir=$HOME,upperdir=$HOMEU,workdir=$HOMEW" "$HOME" 2> "$OUT/overlay.err"; then
    unmount_home() { umount -l "$HOME" 2> /dev/null || true; }
    cleanup_fn unmount_home
    mkdir -p -m 700 "$HOME/.ssh"
    cp "$S/id_a" "$HOME/.ssh/id_ed25519"
    cat "$S/known_hosts" >> "$HOME/.ssh/known_hosts"
    p2p_ok "SSH, root's own key and known_hosts" "$SSH&sshauth=privkey"
    unmount_home
else
    echo "no overlay over $HOME: ~/.ssh is not tried" >&2
fi
p2p_ok "SSH, a key" "$SSH&keyfile=$S/id_a&known_hosts=$S/known_hosts"
p2p_refused "SSH, a host key that does not match" "$SSH&keyfile=$S/id_a&known_hosts=$S/wrong_known_hosts" \
    "host key|known_hosts"
: > "$S/empty_known_hosts"
p2p_refused "SSH, B's host key unknown" "$SSH&keyfile=$S/id_a&known_hosts=$S/empty_known_hosts" \
    "host key|known_hosts"
# (sshd takes passwords: the daemon asks nobody for one, on a terminal
# it may have or not, and says so)
p2p_refused "SSH, a key sshd does not accept" "$SSH&keyfile=$S/id_stranger&known_hosts=$S/known_hosts" \
    "authentication failed .*id_stranger rejected.*password \\(no_tty forbids asking for it\\)"
p2p_refused "SSH, a key file that does not exist" "$SSH&keyfile=$S/nothing&known_hosts=$S/known_hosts&sshauth=privkey" \
    "nothing|key"

virsh -q -c "$A" destroy g > /dev/null

# ---- a stock libvirtd 9.0 at A's address (TLS on port 16515, the same
# server certificate), over qemu+tls both ways: libvirtd's client takes
# the same client certificate, from the same places, and remvirtd's ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd part skipped: $why" >&2
    exit 0
fi
start_libvirtd_qemu 'listen_tls = 1' 'tls_port = "16515"' 'auth_tls = "none"' \
    'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' 'listen_addr = "10.231.0.1"' \
    'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000a"' \
    "ca_file = \"$P/ca-cert.pem\"" "cert_file = \"$P/server-cert.pem\"" "key_file = \"$P/server-key.pem\""
LA=qemu+tcp://10.231.0.1:16510/system
PKI=
[ -n "$ETC_PKI" ] || PKI="?pkipath=$P/client"
virsh -q -c "$LA" create "$OUT/g.xml" > /dev/null
la_empty() { [ -z "$(virsh -q -c "$LA" list --name)" ]; }
virsh -q -c "$LA" migrate --live --p2p --unsafe g "$TLS$PKI" > "$OUT/lb" 2>&1 ||
    { show "$OUT/lb"; show "$BDIR/remvirtd.log"; fail "libvirtd --p2p -> remvirtd B over TLS"; }
[ "$(virsh -q -c "$B" domstate --reason g)" = "running (migrated)" ] || fail "libvirtd -> B over TLS: g is not running on B"
la_empty || fail "libvirtd -> B over TLS: libvirtd kept g"
virsh -q -c "$B" migrate --live --p2p --unsafe --migrateuri tcp://10.231.0.1 g "qemu+tls://10.231.0.1:16515/system$PKI" > "$OUT/bl" 2>&1 ||
    { show "$OUT/bl"; show "$BDIR/remvirtd.log"; fail "remvirtd B --p2p -> libvirtd over TLS"; }
[ "$(virsh -q -c "$LA" domstate g)" = running ] || fail "B -> libvirtd over TLS: g is not running on libvirtd"
b_empty || fail "B -> libvirtd over TLS: B kept g"
echo "libvirtd <-> remvirtd peer to peer over qemu+tls: both ways" >&2
virsh -q -c "$LA" destroy g > /dev/null
