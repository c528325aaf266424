#!/usr/bin/env bash
# The loop's passes under pipelined large replies over TLS (test-tls's
# load, repeated): one TLS connection sends twelve GET_XML_DESC calls of
# a 1 MB domain at once, reads the replies, ROUNDS times, on a fresh
# remvirtd with RV_LOOP_STALL_MS=MS.  Prints how many passes the loop
# stall detector logged and those with MS or more of the loop's CPU.
#
#   bench/run-tls-pipeline.sh [--builddir DIR] [--remvirtd PATH] [--rounds N]
#                             [--rcvbuf BYTES] [--ms MS]
#
# --rcvbuf sets the client's SO_RCVBUF (test-tls uses 4096, which makes
# each 16 KiB record's sendmsg slow on loopback; 0: the system default).
# --remvirtd runs another build's daemon (say main's).  Figures, not
# verdicts.
set -euo pipefail

builddir=./build
daemon=
rounds=5
rcvbuf=4096
ms=1
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --remvirtd) daemon=${2:?--remvirtd needs a path}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --rcvbuf) rcvbuf=${2:?--rcvbuf needs a number}; shift 2 ;;
    --ms) ms=${2:?--ms needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-tls-pipeline: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
[ -z "$daemon" ] || REMVIRTD=$daemon
requires certtool

pki=$RV_TMP/pki
make_pki "$pki"
port=$(free_port)
RV_LOOP_STALL_MS=$ms start_remvirtd 'listen_tls = 1' "tls_port = \"$port\"" \
    "ca_file = \"$pki/server/cacert.pem\"" "cert_file = \"$pki/server/servercert.pem\"" \
    "key_file = \"$pki/server/serverkey.pem\"" 'log_level = 2'
from=$(($(wc -l < "$REMVIRTD_LOG") + 1))
rawpy "$port" "$pki/client" "$rounds" "$rcvbuf" <<'PY'
import sys, time
import rawclient as rc
port, pki, rounds, rcvbuf = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = rc.tls_client(port, pki, rcvbuf=rcvbuf)
c.open_connection()
xml = ("<domain type='test'><name>bigreply</name><description>" + "x" * 1000000 +
       "</description><memory>1024</memory><os><type>hvm</type></os></domain>")
dom = c.call_ok(rc.PROC_DOMAIN_DEFINE_XML, rc.xdr_string(xml))
for r in range(rounds):
    for i in range(12):
        c.sock.pipeline(rc.packet(rc.PROC_DOMAIN_GET_XML_DESC, dom + rc.xdr_uint(0), serial=100 + i))
    c.sock.flush()
    time.sleep(0.3)
    for i in range(12):
        hdr, body = c.recv_reply()
        assert (hdr.serial, hdr.status) == (100 + i, rc.STATUS_OK), f"reply {i}: {hdr}"
c.call_ok(rc.PROC_DOMAIN_UNDEFINE, dom)
PY
tail -n +"$from" "$REMVIRTD_LOG" | grep -o "[0-9.]* ms on the CPU" |
    awk -v ms="$ms" -v rounds="$rounds" '
        { n++; if ($1 >= ms) { over++; list = list " " $1 } }
        END { printf "%d x 12 pipelined 1 MB replies over TLS: %d passes of %s ms or more logged, %d with %s ms or more of CPU%s\n",
                     rounds, n, ms, over, ms, over ? ":" list : "" }'
stop_remvirtd
