#!/usr/bin/env bash
# GetInfo over Unix, TCP, TLS and SSH against one private remvirtd, side by
# side in one run (bench/transports; see its header for the method).
#
#   bench/run-transports.sh [--builddir DIR] [--quick] [-- TRANSPORTS-OPTIONS...]
#
# Builds nothing: DIR (default ./build) must hold remvirtd, rvsh and
# bench/transports.  It makes a test PKI with certtool (gnutls-bin) and,
# as root with openssh-server installed, starts a private sshd on a
# loopback port; everything it starts is stopped at exit.  The daemons and
# their temp files come from the test suite's tests/functions.sh.  TLS is
# judged against at most 1.5x Unix per call.  unix+loop is the Unix socket
# with an event loop registered (events and keepalive on), the price of
# the loop per call.  --quick is a smoke run.
# Options after -- go to bench/transports (--calls N, --rounds N).
set -euo pipefail

builddir=./build
quick=
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --builddir=*) builddir=${1#*=}; shift ;;
    --quick) quick=--quick; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-transports: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$builddir/bench/transports" ] ||
    { echo "run-transports: $builddir/bench/transports not found: build it first" >&2; exit 1; }
source "$(dirname "$0")/bench-env.sh"

pki=$RV_TMP/pki
bash "$top_srcdir/tests/tools/make-pki.sh" "$pki" >/dev/null
tcp_port=$(free_port)
tls_port=$(free_port)
start_remvirtd 'listen_tcp = 1' 'auth_tcp = "none"' "tcp_port = \"$tcp_port\"" 'listen_tls = 1' \
    "tls_port = \"$tls_port\"" "ca_file = \"$pki/server/cacert.pem\"" \
    "cert_file = \"$pki/server/servercert.pem\"" "key_file = \"$pki/server/serverkey.pem\""

uris=(
    "unix=$REMVIRTD_URI"
    "unix+loop=$REMVIRTD_URI"
    "tcp=test+tcp://127.0.0.1:$tcp_port/default"
    "tls=test+tls://localhost:$tls_port/default?pkipath=$pki/client"
)
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ]; then
    start_sshd
    uris+=("ssh=test+ssh://root@127.0.0.1:$SSHD_PORT/default?keyfile=$SSH_CLIENT_KEY&known_hosts=$SSH_KNOWN_HOSTS&socket=$REMVIRTD_SOCK&proxy=native")
else
    echo "no sshd (needs root and openssh-server): the ssh row is skipped"
fi
"$abs_top_builddir/bench/transports" ${quick:+"$quick"} "$@" "${uris[@]}"
