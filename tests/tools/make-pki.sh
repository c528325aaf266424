#!/usr/bin/env bash
# make-pki.sh DIR: a complete test PKI made with certtool (gnutls-bin), laid
# out as ready-made file sets:
#
#   DIR/server*/  cacert.pem servercert.pem serverkey.pem cacrl.pem
#                 (remvirtd's or libvirtd's ca_file, cert_file, key_file,
#                 crl_file; also private/serverkey.pem as libvirt expects)
#   DIR/client*/  cacert.pem clientcert.pem clientkey.pem
#                 (a pkipath for the client; also private/clientkey.pem).
#                 No CRL: client-revoked does not know it was revoked, so
#                 the server is the one to refuse it.
#
#   server             localhost: SAN DNS localhost, IP 127.0.0.1 and ::1
#   server-expired     as server, but expired
#   server-notyet      as server, but not active until 2045
#   server-otherhost   CN and SAN otherhost.example
#   server-foreign     signed by the foreign CA (its CA file is still ours)
#   server-purpose     key purpose TLS client only, no TLS server
#   client             DN C=GB,O=remvirt,CN=client1
#   client-expired     C=GB,O=remvirt,CN=client-expired, expired
#   client-notyet      C=GB,O=remvirt,CN=client-notyet, not yet active
#   client-intruder    C=GB,O=remvirt,CN=intruder (a DN not to allow)
#   client-revoked     C=GB,O=remvirt,CN=client-revoked, in the servers' cacrl.pem
#   client-foreign     C=GB,O=foreign,CN=client1, signed by the foreign CA
#   client-nocert      only cacert.pem: connects without a certificate
#   client-foreignca   trusts only the foreign CA, so every server here is
#                      signed by an unknown CA; its certificate is client's,
#                      sent with our CA cross-signed by the foreign CA, so
#                      it chains to either CA and the server still accepts it
#
# Keys are RSA 2048 (every libvirt client accepts them, and libvirt's own
# key-usage check wants keyEncipherment, which only RSA can use); the
# whole set takes about a second.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
command -v certtool >/dev/null || { echo "certtool not found: install gnutls-bin" >&2; exit 77; }

dir=$1
mkdir -p "$dir/work"
cd "$dir"
work=work

# certtool is chatty on stderr even when all is well; keep it for failures.
log=$work/certtool.log
: > "$log"
tool()
{
    if ! certtool "$@" >>"$log" 2>&1; then
        echo "certtool $* failed:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
}

newkey()
{
    tool --generate-privkey --key-type rsa --bits 2048 --outfile "$work/$1-key.pem"
}

# ca NAME ORGANIZATION
ca()
{
    newkey "$1"
    cat > "$work/$1.tmpl" <<EOT
cn = "$2 test CA"
organization = "$2"
country = GB
ca
cert_signing_key
crl_signing_key
activation_date = "2019-01-01 00:00:00"
expiration_date = "2049-12-31 23:59:59"
EOT
    tool --generate-self-signed --load-privkey "$work/$1-key.pem" \
        --template "$work/$1.tmpl" --outfile "$work/$1-cert.pem"
}

# leaf NAME CA [template lines...]: a certificate signed by CA.
leaf()
{
    local name=$1 ca=$2 line
    shift 2
    newkey "$name"
    {
        echo "signing_key"
        echo "encryption_key"
        for line in "$@"; do
            echo "$line"
        done
    } > "$work/$name.tmpl"
    grep -q '^expiration_date\|^expiration_days' "$work/$name.tmpl" ||
        echo "expiration_days = 3650" >> "$work/$name.tmpl"
    tool --generate-certificate --load-privkey "$work/$name-key.pem" \
        --load-ca-certificate "$work/$ca-cert.pem" --load-ca-privkey "$work/$ca-key.pem" \
        --template "$work/$name.tmpl" --outfile "$work/$name-cert.pem"
}

ca ca remvirt
ca foreign-ca foreign

localhost=('cn = "localhost"' 'organization = "remvirt"' 'country = GB'
           'dns_name = "localhost"' 'ip_address = "127.0.0.1"' 'ip_address = "::1"')
past=('activation_date = "2020-01-01 00:00:00"' 'expiration_date = "2021-01-01 00:00:00"')
future=('activation_date = "2045-01-01 00:00:00"' 'expiration_date = "2046-01-01 00:00:00"')

leaf server ca "${localhost[@]}" tls_www_server
leaf server-expired ca "${localhost[@]}" tls_www_server "${past[@]}"
leaf server-notyet ca "${localhost[@]}" tls_www_server "${future[@]}"
leaf server-otherhost ca 'cn = "otherhost.example"' 'organization = "remvirt"' 'country = GB' \
    'dns_name = "otherhost.example"' tls_www_server
leaf server-foreign foreign-ca "${localhost[@]}" tls_www_server
leaf server-purpose ca "${localhost[@]}" tls_www_client

client_dn()
{
    echo "cn = \"$1\""
    echo "organization = \"${2:-remvirt}\""
    echo "country = GB"
    echo "tls_www_client"
}
mapfile -t dn < <(client_dn client1)
leaf client ca "${dn[@]}"
mapfile -t dn < <(client_dn client-expired)
leaf client-expired ca "${dn[@]}" "${past[@]}"
mapfile -t dn < <(client_dn client-notyet)
leaf client-notyet ca "${dn[@]}" "${future[@]}"
mapfile -t dn < <(client_dn intruder)
leaf client-intruder ca "${dn[@]}"
mapfile -t dn < <(client_dn client-revoked)
leaf client-revoked ca "${dn[@]}"
mapfile -t dn < <(client_dn client1 foreign)
leaf client-foreign foreign-ca "${dn[@]}"

# Our CA's key and name, certified by the foreign CA.
tool --generate-certificate --load-privkey "$work/ca-key.pem" \
    --load-ca-certificate "$work/foreign-ca-cert.pem" --load-ca-privkey "$work/foreign-ca-key.pem" \
    --template "$work/ca.tmpl" --outfile "$work/ca-cross-cert.pem"

cat > "$work/crl.tmpl" <<EOT
crl_next_update = 3650
crl_number = 1
EOT
tool --generate-crl --load-ca-privkey "$work/ca-key.pem" --load-ca-certificate "$work/ca-cert.pem" \
    --load-certificate "$work/client-revoked-cert.pem" --template "$work/crl.tmpl" \
    --outfile "$work/ca-crl.pem"

# layout SET KIND CA CERT: DIR/SET with KIND (server or client) files.
layout()
{
    local set=$1 kind=$2 ca=$3 cert=$4
    mkdir -p "$set/private"
    cp "$work/$ca-cert.pem" "$set/cacert.pem"
    if [ "$kind" = server ]; then
        cp "$work/ca-crl.pem" "$set/cacrl.pem"
    fi
    if [ -n "$cert" ]; then
        cp "$work/$cert-cert.pem" "$set/${kind}cert.pem"
        cp "$work/$cert-key.pem" "$set/${kind}key.pem"
        cp "$work/$cert-key.pem" "$set/private/${kind}key.pem"
        chmod 600 "$set/${kind}key.pem" "$set/private/${kind}key.pem"
    fi
}

for s in server server-expired server-notyet server-otherhost server-foreign server-purpose; do
    layout "$s" server ca "$s"
done
for c in client client-expired client-notyet client-intruder client-revoked client-foreign; do
    layout "$c" client ca "$c"
done
layout client-nocert client ca ""
layout client-foreignca client foreign-ca client
cat "$work/ca-cross-cert.pem" >> client-foreignca/clientcert.pem
