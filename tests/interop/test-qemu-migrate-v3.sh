#!/usr/bin/env bash
# The version 3 migration steps with plain arguments (BEGIN3 213,
# PREPARE3 214, PERFORM3 216, FINISH3 217, CONFIRM3 218), as libvirt's
# own client calls them when a daemon says 0 to MIGRATION_PARAMS (13):
# A's remvirtd runs with RV_TEST_NO_MIGRATION_PARAMS=1 (tests/
# migrate-hosts.sh: A and B in two network namespaces), B's does not.
#   - virsh migrate --live A -> B and B -> A: virsh drives the plain steps
#     (its log, and the procedure numbers each remvirtd served);
#   - virsh migrate --p2p from A: one plain PERFORM3 with the destination
#     URI; A drives B (with parameters);
#   - --p2p from B to A: B drives A's plain PREPARE3 and FINISH3 (A
#     offers no parameters; one it has no field for is refused clearly);
#   - --p2p --copy-storage-all A -> B, back with the plain steps copying;
#   - raw plain calls out of turn or with bad arguments: clear errors;
#   - --offline --persistent --undefinesource: to B peer to peer, back
#     with the plain steps;
#   - a stock libvirtd 9.0 at A's address: libvirtd <-> remvirtd B with
#     the plain steps (B then hides feature 13 too), and peer to peer
#     both ways (libvirtd source to remvirtd, remvirtd source to libvirtd).
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

migrate_hosts_up
MIG_A_CONF=('listen_tcp = 1' 'tcp_port = "16509"' 'auth_tcp = "none"'
    'listen_addr = "10.231.0.1"' 'qemu_migration_host = "10.231.0.1"'
    'log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"' "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\"")
RV_TEST_NO_MIGRATION_PARAMS=1 start_remvirtd_qemu "${MIG_A_CONF[@]}"
A=qemu+tcp://10.231.0.1/system
ALOG=$RV_TMP/remvirtd/remvirtd.log
start_b
shared_guest_xml g
virsh -q -c "$A" define "$OUT/g.xml" > /dev/null
virsh -q -c "$A" start g > /dev/null

# The procedures a remvirtd served (its dispatch log) since mark_logs.
mark_logs() { AL=$(wc -l < "$ALOG"); BL=$(wc -l < "$BDIR/remvirtd.log"); }
served() # LOG FROM-LINE: the migration procedure numbers, in order
{
    tail -n +$(($2 + 1)) "$1" | sed -n 's/.* proc=\(21[3-8]\|30[2-7]\) .*type=0 .*/\1/p' | uniq | tr '\n' ' '
}
steps() { sed -n 's/.*virDomainMigrateVersion3Full:[0-9]* : \([A-Za-z0-9]*\) .*/\1/p' "$1" | tr '\n' ' '; }
on_b() { [ "$(virsh -q -c "$B" domstate g)" = running ] && [ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" = 0 ]; }

now_ms() { date +%s%3N; }
# ---- managed direct, A -> B: the plain steps ----
mark_logs
T0=$(now_ms)
LIBVIRT_LOG_FILTERS="1:libvirt" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/ab.log" \
    virsh -q -c "$A" migrate --live g "$B" > "$OUT/ab" 2>&1 ||
    { show "$OUT/ab"; show "$ALOG"; fail "A -> B with the plain steps"; }
echo "remvirtd -> remvirtd, plain steps: virsh migrate --live took $(($(now_ms) - T0)) ms" >&2
[ "$(steps "$OUT/ab.log")" = "Begin3 Prepare3 Perform3 Finish3 Confirm3 " ] || { steps "$OUT/ab.log" >&2; fail "virsh's steps"; }
grep -q "virDomainMigrateBegin3Params" "$OUT/ab.log" && fail "virsh used the steps with parameters"
[ "$(served "$ALOG" "$AL")" = "213 216 218 " ] || { served "$ALOG" "$AL" >&2; fail "A did not serve BEGIN3, PERFORM3, CONFIRM3"; }
[ "$(served "$BDIR/remvirtd.log" "$BL")" = "214 217 " ] || { served "$BDIR/remvirtd.log" "$BL" >&2; fail "B did not serve PREPARE3, FINISH3"; }
on_b || fail "A -> B: g is not running on B alone"
virsh -q -c "$B" domstate --reason g | grep -q "running (migrated)" || fail "B's reason"
[ "$(virsh -q -c "$A" domstate g)" = "shut off" ] || fail "A: g is not shut off"

# ---- B -> A with --persistent --undefinesource (plain: A has no params) ----
virsh -q -c "$A" undefine g > /dev/null
mark_logs
virsh -q -c "$B" migrate --live --persistent --undefinesource g "$A" > "$OUT/ba" 2>&1 ||
    { show "$OUT/ba"; show "$ALOG"; fail "B -> A with the plain steps"; }
[ "$(served "$ALOG" "$AL")" = "214 217 " ] || fail "A did not serve PREPARE3, FINISH3"
run_a || fail "B -> A: g not running on A"
b_empty || fail "B -> A: B kept g"
[ "$(virsh -q -c "$A" dominfo g | sed -n 's/^Persistent: *//p')" = yes ] || fail "g is not persistent on A"

# ---- peer to peer from A: one plain PERFORM3, A drives B ----
mark_logs
LIBVIRT_LOG_FILTERS="1:libvirt" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/p2p.log" \
    virsh -q -c "$A" migrate --live --p2p g "$B" > "$OUT/p2p" 2>&1 ||
    { show "$OUT/p2p"; show "$ALOG"; fail "A -> B peer to peer, plain PERFORM3"; }
[ "$(served "$ALOG" "$AL")" = "216 " ] || { served "$ALOG" "$AL" >&2; fail "A did not serve one PERFORM3"; }
[ "$(served "$BDIR/remvirtd.log" "$BL")" = "303 306 " ] || fail "A did not drive B with PREPARE3_PARAMS, FINISH3_PARAMS"
on_b || fail "p2p: g is not running on B alone"

# ---- peer to peer from B to A: A offers no parameters, so B drives
# A's plain PREPARE3 and FINISH3; a parameter they have no field for is
# refused first, the guest staying on B ----
if virsh -q -c "$B" migrate --live --p2p --persistent --persistent-xml "$OUT/g.xml" g "$A" > "$OUT/p2p-refused" 2>&1; then
    fail "p2p with persistent_xml to a destination without MIGRATION_PARAMS succeeded"
fi
grep -q "'persistent_xml' has no field" "$OUT/p2p-refused" || { show "$OUT/p2p-refused"; fail "p2p persistent_xml to A: no clear reason"; }
on_b || fail "refused p2p: g not running on B alone"
mark_logs
virsh -q -c "$B" migrate --live --p2p --bandwidth 200 g "$A" > "$OUT/p2p-back" 2>&1 ||
    { show "$OUT/p2p-back"; show "$BDIR/remvirtd.log"; fail "B -> A peer to peer with A's plain steps"; }
[ "$(served "$ALOG" "$AL")" = "214 217 " ] || { served "$ALOG" "$AL" >&2; fail "B did not drive A's plain PREPARE3, FINISH3"; }
run_a && b_empty || fail "p2p B -> A: g not on A alone"

# ---- peer to peer with a storage copy (A -> B: B's image elsewhere),
# and back managed with the plain steps, copied again ----
qemu-img create -q -f qcow2 "$SHARED/g-b.qcow2" 16M
virsh -q -c "$A" dumpxml --inactive g | sed "s|$SHARED/g.qcow2|$SHARED/g-b.qcow2|" > "$OUT/g-b.xml"
virsh -q -c "$A" migrate --live --p2p --copy-storage-all --xml "$OUT/g-b.xml" g "$B" > "$OUT/p2p-copy" 2>&1 ||
    { show "$OUT/p2p-copy"; show "$ALOG"; fail "p2p --copy-storage-all"; }
on_b || fail "p2p copy: g is not running on B alone"
virsh -q -c "$B" domblklist g | grep -q "g-b.qcow2" || fail "p2p copy: B's disk is not its own image"
virsh -q -c "$B" dumpxml --migratable g | sed "s|$SHARED/g-b.qcow2|$SHARED/g.qcow2|" > "$OUT/g-a.xml"
virsh -q -c "$B" migrate --live --copy-storage-all --xml "$OUT/g-a.xml" g "$A" > "$OUT/copy-back" 2>&1 ||
    { show "$OUT/copy-back"; show "$ALOG"; fail "plain steps with --copy-storage-all"; }
run_a && b_empty || fail "copy back: g not on A alone"
virsh -q -c "$A" domblklist g | grep -q "/g.qcow2" || fail "copy back: A's disk is not its own image"

# ---- raw plain calls: out of turn, bad arguments ----
rawpy "$REMVIRTD_SOCK" > "$OUT/raw" 2>&1 <<'PY' || { show "$OUT/raw"; fail "raw plain calls"; }
import struct, sys
import rawclient as rc

def uhyper(v): return struct.pack(">Q", v)
NOCOOKIE = rc.xdr_uint(0)
a = rc.Client(sys.argv[1]); a.open_connection("qemu:///system")
g = a.lookup("g")
def err(proc, payload, codes, what):
    serial = a.send_call(proc, payload)
    hdr, body = a.recv_reply()
    return rc.expect_error_reply(hdr, body, serial, codes, what)
def begin3(flags, xmlin=None): return g + rc.xdr_opt_string(xmlin) + uhyper(flags) + rc.xdr_opt_string(None) + uhyper(0)
err(rc.PROC_DOMAIN_MIGRATE_BEGIN3, begin3(1 << 40 | 1), {rc.ERR_INVALID_ARG}, "BEGIN3 with flags over 32 bits")
err(rc.PROC_DOMAIN_MIGRATE_BEGIN3, begin3(1 | 4), {rc.ERR_ARGUMENT_UNSUPPORTED}, "BEGIN3 tunnelled")
e = err(rc.PROC_DOMAIN_MIGRATE_BEGIN3, begin3(1, "<domain type='qemu'><name>g</name><uuid>00000000-0000-4000-8000-000000000001</uuid><memory>65536</memory><os><type>hvm</type></os></domain>"),
        None, "BEGIN3 with another domain's XML")
rc.check("uuid does not match" in e["message"], "BEGIN3 another UUID: " + e["message"])
err(rc.PROC_DOMAIN_MIGRATE_BEGIN3, begin3(1) + b"\0\0", {rc.ERR_RPC}, "BEGIN3 with bytes left over")
err(rc.PROC_DOMAIN_MIGRATE_PREPARE3, NOCOOKIE + rc.xdr_opt_string(None) + uhyper(1) + rc.xdr_opt_string(None) + uhyper(0) + rc.xdr_string("<domain"),
    None, "PREPARE3 with broken XML")
err(rc.PROC_DOMAIN_MIGRATE_PREPARE3, NOCOOKIE + rc.xdr_opt_string("udp:x") + uhyper(1) + rc.xdr_opt_string(None) + uhyper(0) + rc.xdr_string("<domain/>"),
    {rc.ERR_INVALID_ARG}, "PREPARE3 with a bad URI")
err(rc.PROC_DOMAIN_MIGRATE_PERFORM3, g + rc.xdr_opt_string(None) + NOCOOKIE + rc.xdr_opt_string(None) + rc.xdr_opt_string("bogus") + uhyper(1) + rc.xdr_opt_string(None) + uhyper(0),
    {rc.ERR_INVALID_ARG}, "PERFORM3 to a URI that is not tcp:")
err(rc.PROC_DOMAIN_MIGRATE_PERFORM3, g + rc.xdr_opt_string(None) + NOCOOKIE + rc.xdr_opt_string(None) + rc.xdr_opt_string("tcp:10.231.0.2:49300") + uhyper(1) + rc.xdr_opt_string(None) + uhyper(1 << 60),
    {rc.ERR_OVERFLOW}, "PERFORM3 with a bandwidth too large")
err(rc.PROC_DOMAIN_MIGRATE_FINISH3, rc.xdr_string("g") + NOCOOKIE + rc.xdr_opt_string(None) + rc.xdr_opt_string(None) + uhyper(1) + rc.xdr_int(0),
    {rc.ERR_NO_DOMAIN}, "FINISH3 with no incoming migration")
err(rc.PROC_DOMAIN_MIGRATE_FINISH3, rc.xdr_string("nosuch") + NOCOOKIE + rc.xdr_opt_string(None) + rc.xdr_opt_string(None) + uhyper(1) + rc.xdr_int(0),
    {rc.ERR_NO_DOMAIN}, "FINISH3 of an unknown domain")
err(rc.PROC_DOMAIN_MIGRATE_CONFIRM3, g + NOCOOKIE + uhyper(1) + rc.xdr_int(0), None, "CONFIRM3 success out of turn")
rc.expect_usable(a, "A")
PY
cat "$OUT/raw" >&2
run_a || fail "raw calls: g is not running on A"
virsh -q -c "$A" domjobinfo g | grep -q "Job type: *None" || fail "raw calls left a job"

# ---- offline: the definition to B peer to peer, back with the plain
# steps (their FINISH3 names the domain only) ----
virsh -q -c "$A" destroy g > /dev/null
virsh -q -c "$A" migrate --offline --persistent --undefinesource --p2p g "$B" > "$OUT/off-p2p" 2>&1 ||
    { show "$OUT/off-p2p"; show "$ALOG"; fail "p2p --offline"; }
[ -z "$(virsh -q -c "$A" list --all --name)" ] || fail "p2p offline: A kept g"
[ "$(virsh -q -c "$B" domstate g)" = "shut off" ] || fail "p2p offline: g is not defined (shut off) on B"
[ -z "$(qemu_pids "$BDIR/qemu/run/")" ] || fail "p2p offline: B started a QEMU"
mark_logs
virsh -q -c "$B" migrate --offline --persistent --undefinesource g "$A" > "$OUT/off-back" 2>&1 ||
    { show "$OUT/off-back"; show "$ALOG"; fail "plain steps --offline"; }
[ "$(served "$ALOG" "$AL")" = "214 217 " ] || fail "offline: A did not serve the plain PREPARE3, FINISH3"
[ "$(virsh -q -c "$A" domstate g)" = "shut off" ] || fail "plain offline: g is not defined on A"
b_empty || fail "plain offline: B kept g"
# a plain offline FINISH3 that no PREPARE3 came before: nothing defined
rawpy "$REMVIRTD_SOCK" > "$OUT/raw-off" 2>&1 <<'PY' || { show "$OUT/raw-off"; fail "raw offline FINISH3"; }
import struct, sys
import rawclient as rc
a = rc.Client(sys.argv[1]); a.open_connection("qemu:///system")
serial = a.send_call(rc.PROC_DOMAIN_MIGRATE_FINISH3, rc.xdr_string("nosuch") + rc.xdr_uint(0) + rc.xdr_opt_string(None)
                     + rc.xdr_opt_string(None) + struct.pack(">Q", 1 << 10 | 1 << 3) + rc.xdr_int(0))
hdr, body = a.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_NO_DOMAIN}, "offline FINISH3 with nothing prepared")
PY
[ "$(virsh -q -c "$A" list --all --name | grep -c .)" = 1 ] || fail "the refused offline FINISH3 defined something"

# ---- a stock libvirtd 9.0 at A's address ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd part skipped: $why" >&2
    exit 0
fi
start_libvirtd_qemu 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
    'listen_addr = "10.231.0.1"' 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000a"'
LA=qemu+tcp://10.231.0.1:16510/system
# B without feature 13 too: libvirtd <-> B with the plain steps
kill "$BPID"; wait "$BPID" 2> /dev/null || true
RV_TEST_NO_MIGRATION_PARAMS=1 start_b
virsh -q -c "$LA" create "$OUT/g.xml" > /dev/null
run_la() { [ "$(virsh -q -c "$LA" domstate g)" = running ]; }
la_empty() { [ -z "$(virsh -q -c "$LA" list --name)" ]; }
mark_logs
virsh -q -c "$LA" migrate --live --unsafe g "$B" > "$OUT/lab" 2>&1 || { show "$OUT/lab"; show "$BDIR/remvirtd.log"; fail "libvirtd -> B, plain"; }
[ "$(served "$BDIR/remvirtd.log" "$BL")" = "214 217 " ] || fail "B did not serve the plain PREPARE3, FINISH3 for libvirtd"
on_b && la_empty || fail "libvirtd -> B: g not on B alone"
mark_logs
virsh -q -c "$B" migrate --live --unsafe --migrateuri tcp://10.231.0.1 g "$LA" > "$OUT/lba" 2>&1 || { show "$OUT/lba"; fail "B -> libvirtd, plain"; }
[ "$(served "$BDIR/remvirtd.log" "$BL")" = "213 216 218 " ] || fail "B did not serve the plain BEGIN3, PERFORM3, CONFIRM3 for libvirtd"
run_la && b_empty || fail "B -> libvirtd: g not on libvirtd alone"
# libvirtd's peer to peer to B: libvirtd drives B's plain PREPARE3, FINISH3
mark_logs
T0=$(now_ms)
virsh -q -c "$LA" migrate --live --p2p --unsafe g "$B" > "$OUT/lpab" 2>&1 || { show "$OUT/lpab"; show "$BDIR/remvirtd.log"; fail "libvirtd --p2p -> B"; }
echo "libvirtd --p2p -> remvirtd (plain steps): $(($(now_ms) - T0)) ms" >&2
[ "$(served "$BDIR/remvirtd.log" "$BL")" = "214 217 " ] || fail "libvirtd's p2p did not use B's plain PREPARE3, FINISH3"
on_b && la_empty || fail "libvirtd --p2p -> B: g not on B alone"
# remvirtd's peer to peer to libvirtd (with parameters there)
T0=$(now_ms)
virsh -q -c "$B" migrate --live --p2p --unsafe --migrateuri tcp://10.231.0.1 g "$LA" > "$OUT/lpba" 2>&1 ||
    { show "$OUT/lpba"; show "$BDIR/remvirtd.log"; fail "B --p2p -> libvirtd"; }
echo "remvirtd --p2p -> libvirtd: $(($(now_ms) - T0)) ms" >&2
run_la && b_empty || fail "B --p2p -> libvirtd: g not on libvirtd alone"
# and libvirtd's peer to peer to B offering parameters
restart_b
mark_logs
virsh -q -c "$LA" migrate --live --p2p --unsafe g "$B" > "$OUT/lpab2" 2>&1 || { show "$OUT/lpab2"; show "$BDIR/remvirtd.log"; fail "libvirtd --p2p -> B (params)"; }
[ "$(served "$BDIR/remvirtd.log" "$BL")" = "303 306 " ] || fail "libvirtd's p2p did not use B's PREPARE3_PARAMS, FINISH3_PARAMS"
on_b && la_empty || fail "libvirtd --p2p -> B (params): g not on B alone"
virsh -q -c "$B" destroy g > /dev/null
