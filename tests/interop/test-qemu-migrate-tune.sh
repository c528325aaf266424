#!/usr/bin/env bash
# The migration tuning calls (issue 30) on remvirtd's QEMU driver, side by
# side with libvirtd's (start_libvirtd_qemu): the same steps on both with
# the same guest, the transcripts compared.
#   - virsh migrate-setmaxdowntime / migrate-getmaxdowntime /
#     migrate-setspeed / migrate-getspeed (--postcopy too) /
#     migrate-compcache / migrate-postcopy on a shut off guest, on the
#     running guest (values set and read back, the limits refused), after
#     the guest's restart (what is kept), and on a read-only connection;
#   - a dump (a migration to a file, unlimited) leaves QEMU the kept
#     bandwidth, not QEMU's default;
#   - the same with python3-libvirt (migtune-checks.py), with QEMU's own
#     parameters (query-migrate-parameters) after each change: the values
#     reach QEMU in its units (bytes/s, ms, bytes), and the refusals
#     (flags, ranges) give the same error code, domain and message;
#   - the daemon's own answers, raw (rawclient.py), which libvirt's client
#     library keeps virsh and python from reaching or hides: each call on
#     the read-only socket, the getters' refusals of unknown flags.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
CHECKS=$top_srcdir/tests/interop/migtune-checks.py

steps_off=(
    "define g.xml"
    "migrate-getmaxdowntime g"
    "migrate-setmaxdowntime g 100"
    "migrate-getspeed g"
    "migrate-setspeed g 100"
    "migrate-getspeed g"
    "migrate-getspeed g --postcopy"
    "migrate-setspeed g 50 --postcopy"
    "migrate-compcache g"
    "migrate-compcache g --size 1048576"
    "migrate-postcopy g"
    "ro:migrate-getspeed g"
    "ro:migrate-setspeed g 10"
)
steps_on=(
    "migrate-getspeed g"
    "migrate-getmaxdowntime g"
    "migrate-setmaxdowntime g 1000"
    "migrate-getmaxdowntime g"
    "migrate-setmaxdowntime g 0"
    "migrate-setmaxdowntime g 2000001"
    "migrate-setspeed g 8796093022208"
    "migrate-setspeed g 8796093022207"
    "migrate-getspeed g"
    "migrate-setspeed g 200"
    "migrate-getspeed g"
    "migrate-getspeed g --postcopy"
    "migrate-setspeed g 1000 --postcopy"
    "migrate-getspeed g --postcopy"
    "migrate-setspeed g 17592186044416 --postcopy"
    "migrate-compcache g"
    "migrate-compcache g --size 1048576"
    "migrate-compcache g --size 1000"
    "migrate-compcache g"
    "migrate-postcopy g"
    "ro:migrate-getmaxdowntime g"
    "ro:migrate-setmaxdowntime g 500"
    "ro:migrate-compcache g"
    "ro:migrate-postcopy g"
    "destroy g"
    "start g"
    "migrate-getmaxdowntime g"
    "migrate-getspeed g"
    "migrate-getspeed g --postcopy"
    "migrate-compcache g"
    "destroy g"
    "migrate-getspeed g"
    "undefine g"
)

# raw_calls SOCKET SOCKET_RO: one line per call, its answer or error.
raw_calls()
{
    rawpy "$1" "$2" <<'PY'
import sys
import rawclient as rc

u = rc.xdr_uint
hyper = lambda n: n.to_bytes(8, "big")
for sock in sys.argv[1:3]:
    ro = "ro " if sock == sys.argv[2] else ""
    c = rc.Client(sock)
    c.open_connection("qemu:///system", 1 if ro else 0)
    dom = c.lookup("g")
    for what, proc, body in (
            ("get downtime", rc.PROC_DOMAIN_MIGRATE_GET_MAX_DOWNTIME, dom + u(0)),
            ("get downtime flags 1", rc.PROC_DOMAIN_MIGRATE_GET_MAX_DOWNTIME, dom + u(1)),
            ("get speed", rc.PROC_DOMAIN_MIGRATE_GET_MAX_SPEED, dom + u(0)),
            ("get speed postcopy", rc.PROC_DOMAIN_MIGRATE_GET_MAX_SPEED, dom + u(1)),
            ("get cache", rc.PROC_DOMAIN_MIGRATE_GET_COMPRESSION_CACHE, dom + u(0)),
            ("get cache flags 1", rc.PROC_DOMAIN_MIGRATE_GET_COMPRESSION_CACHE, dom + u(1)),
            ("set downtime 700", rc.PROC_DOMAIN_MIGRATE_SET_MAX_DOWNTIME, dom + hyper(700) + u(0)),
            ("set speed 5", rc.PROC_DOMAIN_MIGRATE_SET_MAX_SPEED, dom + hyper(5) + u(0)),
            ("set speed 2**64-1", rc.PROC_DOMAIN_MIGRATE_SET_MAX_SPEED, dom + hyper(2**64 - 1) + u(1)),
            ("set cache 2**64-1", rc.PROC_DOMAIN_MIGRATE_SET_COMPRESSION_CACHE,
             dom + hyper(2**64 - 1) + u(0)),
            ("set downtime 2**64-1", rc.PROC_DOMAIN_MIGRATE_SET_MAX_DOWNTIME,
             dom + hyper(2**64 - 1) + u(0)),
            ("start post-copy", rc.PROC_DOMAIN_MIGRATE_START_POST_COPY, dom + u(0))):
        hdr, reply = c.call(proc, body)
        if hdr.status == rc.STATUS_ERROR:
            e = rc.decode_error(reply)
            print(f'raw {ro}{what}: {e["code"]} {e["domain"]} {e["message"]}')
        else:
            print(f'raw {ro}{what}: ok {reply.hex()}')
    c.close()
PY
}

# run_all URI URI_RO DIR: every step on one daemon, into DIR/transcript.
run_all()
{
    local U=$1 R=$2 D=$3
    mkdir -p "$D"
    # a second QMP monitor: the test's own view of QEMU's parameters
    qemu_domain_xml g "" | sed "s|<domain type='qemu'>|<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>|;
        s|</devices>|</devices><qemu:commandline><qemu:arg value='-qmp'/><qemu:arg value='unix:$D/test.qmp,server=on,wait=off'/></qemu:commandline>|" \
        > "$D/g.xml"
    grep -q "test.qmp" "$D/g.xml" || fail "no second monitor in g.xml"
    {
        steps=("${steps_off[@]}")
        virsh_transcript "$U" "$R" "$D"
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" off
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" ro
        virsh -q -c "$U" start g > /dev/null
        echo "(started)"
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" restarted
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" running
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" ro
        raw_calls "${U#*socket=}" "${R#*socket=}"
        virsh -q -c "$U" destroy g > /dev/null
        virsh -q -c "$U" start g > /dev/null
        echo "(destroyed and started)"
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" restarted
        virsh -q -c "$U" dump g "$D/g.core" > /dev/null
        rm -f "$D/g.core"
        echo "(dumped)"
        "$SYSTEM_PYTHON3" "$CHECKS" "$U" "$R" "$D/test.qmp" restarted
        steps=("${steps_on[@]}")
        virsh_transcript "$U" "$R" "$D"
    } > "$D/transcript" 2>&1
}

start_remvirtd_qemu
OUT=$RV_TMP/mt
run_all "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" "$OUT/remvirtd"
if why=$(libvirtd_qemu_why_not); then
    cat "$OUT/remvirtd/transcript"
    echo "libvirtd side skipped: $why"
else
    start_libvirtd_qemu
    run_all "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" "$OUT/libvirtd"
    same "$OUT/libvirtd/transcript" "$OUT/remvirtd/transcript" \
        "virsh and python3-libvirt migration tuning: remvirtd as libvirtd"
fi
echo "ok   migration tuning calls"
