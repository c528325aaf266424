#!/usr/bin/env bash
# Live migration's capability flags and TLS (issue 30) between two
# remvirtds on the two "hosts" of tests/migrate-hosts.sh, QEMU's own state
# read back through a QMP monitor of the test's own (with_test_qmp; the
# destination's XML names another socket):
#   - refusals with libvirtd 9.0's words (observed): a tuning without its
#     feature, an unknown or repeated compression method, --zerocopy;
#     QEMU's refusal of a value (at the source, at the destination);
#     the guest runs on A alone after each;
#   - A to B with --auto-converge (initial, increment), --compressed
#     --comp-methods mt,xbzrle (level, threads, dthreads, XBZRLE cache)
#     and --tls, slowed down (--bandwidth 1) to read the source's QEMU
#     during the migration (capabilities, parameters, tls-creds,
#     tls-hostname, the credentials object as the client), then sped up
#     (migrate-setspeed); the destination's QEMU has the capabilities and
#     parameters both ends share (not auto-converge, the source's alone),
#     its TLS object gone after the stream; the guest's memory came along
#     (the SSH key its agent keeps);
#   - B to A peer to peer (B's remvirtd calls A's PREPARE3 with the
#     flags and parameters) with --parallel --parallel-connections 3
#     --tls: multifd and its channels on A's QEMU;
#   - --tls to a B without certificates: refused with QEMU's words, the
#     guest runs on A, B has nothing, A's QEMU has no TLS object left;
#   - A's remvirtd killed during a --tls migration and started again: the
#     migration is called off and the TLS object a killed remvirtd left
#     is removed at reattach.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

requires certtool --version
migrate_hosts_up
# ---- a CA and one certificate for both hosts' addresses (server and
# client: each host is either end) ----
P=$RV_TMP/mtls NOCERT=$RV_TMP/mtls-none
mkdir -p "$P" "$NOCERT"
(
    cd "$P"
    certtool --generate-privkey --key-type rsa --bits 2048 --outfile ca-key.pem 2> /dev/null
    printf 'cn = rv-migrate-ca\nca\ncert_signing_key\nexpiration_days = 2\n' > ca.info
    certtool --generate-self-signed --load-privkey ca-key.pem --template ca.info --outfile ca-cert.pem 2> /dev/null
    certtool --generate-privkey --key-type rsa --bits 2048 --outfile server-key.pem 2> /dev/null
    printf 'cn = rvmig\nip_address = 10.231.0.1\nip_address = 10.231.0.2\ntls_www_server\ntls_www_client\nencryption_key\nsigning_key\nexpiration_days = 2\n' > host.info
    certtool --generate-certificate --load-privkey server-key.pem --load-ca-certificate ca-cert.pem \
        --load-ca-privkey ca-key.pem --template host.info --outfile server-cert.pem 2> /dev/null
    cp server-key.pem client-key.pem
    cp server-cert.pem client-cert.pem
) || fail "certtool"
echo "qemu_migrate_tls_x509_cert_dir = \"$P\"" >> "$BDIR/remvirtd.conf"
MIG_A_CONF=('listen_tcp = 1' 'tcp_port = "16509"' 'auth_tcp = "none"'
    'listen_addr = "10.231.0.1"' 'qemu_migration_host = "10.231.0.1"'
    "qemu_migrate_tls_x509_cert_dir = \"$P\""
    'log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"' "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\"")
start_remvirtd_qemu "${MIG_A_CONF[@]}"
A=qemu+tcp://10.231.0.1/system
start_b
shared_guest_xml g
QA=$OUT/a.qmp QB=$OUT/b.qmp
with_test_qmp "$QA" < "$OUT/g.xml" > "$OUT/g-a.xml"
grep -q "$QA" "$OUT/g-a.xml" || fail "no test monitor in g-a.xml"

# tq SOCKET: QEMU's migration state as "name=value" lines: capabilities,
# parameters, and tls-object=yes/no.
tq()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import json, socket, sys
# (all asked at once, the answers matched by id; events skipped)
asks = [("qmp_capabilities", {}), ("query-migrate-capabilities", {}),
        ("query-migrate-parameters", {}), ("qom-list", {"path": "/objects"})]
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall("".join(json.dumps({"execute": c, "arguments": a, "id": i}) + "\n"
                  for i, (c, a) in enumerate(asks)).encode())
got = {}
for line in s.makefile("r"):
    m = json.loads(line)
    if "id" in m:
        got[m["id"]] = m.get("return", m.get("error"))
    if len(got) == len(asks):
        break
for c in got[1]:
    print("%s=%s" % (c["capability"], str(c["state"]).lower()))
for k, v in sorted(got[2].items()):
    print("%s=%s" % (k, v))
objs = [o["name"] for o in got[3]]
print("tls-object=%s" % ("yes" if "objlibvirt_migrate_tls0" in objs else "no"))
PY
}
# expect_state FILE LINE...: each "name=value" LINE is in FILE.
expect_state()
{
    local f=$1 line
    shift
    for line in "$@"; do
        grep -qxF "$line" "$f" || { show "$f"; fail "$f: not $line"; }
    done
}

agent_guest_up "$A" g "$OUT/g-a.xml"
KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMigratedCapsCapsCapsCapsCaps0000000 rv@caps"
echo "$KEY" > "$OUT/key"
virsh -q -c "$A" set-user-sshkeys g root --file "$OUT/key" > /dev/null
key_on() { virsh -q -c "$1" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
virsh -q -c "$A" dumpxml --inactive g | sed "s|$QA|$QB|" > "$OUT/g-b.xml"

# ---- refusals: libvirtd 9.0's words (compared with libvirtd's at the
# end); nothing starts, or what started goes ----
# refused OPTIONS...: the migration fails, its error line kept in
# $OUT/refusals, and g runs on A alone.
refused()
{
    if virsh -q -c "$A" migrate --live g "$B" --xml "$OUT/g-b.xml" "$@" > "$OUT/refused" 2>&1; then
        fail "migrate $* succeeded"
    fi
    echo "$*: $(grep -m1 '^error: ' "$OUT/refused" | sed 's/^error: //')" >> "$OUT/refusals"
    run_a || fail "g is not running on A after migrate $*"
    wait_for 30 "B empty after migrate $*" b_empty
}
REFUSALS=(
    "--comp-mt-level 3"
    "--compressed --comp-mt-threads 2"
    "--compressed --comp-xbzrle-cache 16777216"
    "--parallel-connections 3"
    "--auto-converge-initial 30"
    "--compressed --comp-methods foo"
    "--compressed --comp-methods mt,mt"
    "--zerocopy"
    # QEMU's own range checks: the source's parameter (B's QEMU, started
    # at PREPARE3, goes), then the destination's
    "--auto-converge --auto-converge-initial 200"
    "--parallel --parallel-connections 0"
)
for r in "${REFUSALS[@]}"; do
    # shellcheck disable=SC2086
    refused $r
done
cp "$OUT/refusals" "$OUT/refusals-remvirtd"
for words in "Turn multithread compression on to tune it" "Turn xbzrle compression on to tune it" \
    "Turn parallel migration on to tune it" "Turn auto convergence on to tune it" \
    "Unsupported compression method 'foo'" "Compression method 'mt' is specified twice" \
    "zero-copy is only available for parallel migration" \
    "unable to execute QEMU command 'migrate-set-parameters': Parameter 'cpu_throttle_initial' expects" \
    "unable to execute QEMU command 'migrate-set-parameters': Parameter 'multifd_channels' expects"; do
    grep -qF "$words" "$OUT/refusals" || { show "$OUT/refusals"; fail "no refusal says '$words'"; }
done
: > "$OUT/refusals"
refused --zerocopy --parallel
grep -qF "remvirtd does not do zero-copy migration" "$OUT/refusals" || { show "$OUT/refusals"; fail "--zerocopy --parallel"; }
echo "ok   refusals" >&2

# ---- A to B: auto-converge, mt and xbzrle compression, TLS ----
has_job() { virsh -q -c "$A" domjobinfo g 2> /dev/null | grep -q "Job type: *Unbounded"; }
bg "$OUT/m1" virsh -q -c "$A" migrate --live g "$B" --xml "$OUT/g-b.xml" --bandwidth 1 --tls \
    --auto-converge --auto-converge-initial 30 --auto-converge-increment 5 \
    --compressed --comp-methods mt,xbzrle --comp-mt-level 3 --comp-mt-threads 2 --comp-mt-dthreads 3 \
    --comp-xbzrle-cache 16777216
MIG=$BG_PID
wait_for 60 "the migration job on A" has_job
tq "$QA" > "$OUT/a-during"
virsh -q -c "$A" migrate-setspeed g 8796093022207 > /dev/null
wait "$MIG" || { show "$OUT/m1.err"; show "$BDIR/remvirtd.log"; fail "migrate with --tls --auto-converge --compressed"; }
expect_state "$OUT/a-during" auto-converge=true xbzrle=true compress=true multifd=false \
    cpu-throttle-initial=30 cpu-throttle-increment=5 compress-level=3 compress-threads=2 \
    decompress-threads=3 xbzrle-cache-size=16777216 tls-creds=objlibvirt_migrate_tls0 \
    tls-hostname=10.231.0.2 tls-object=yes
[ "$(virsh -q -c "$B" domstate g)" = running ] || fail "g is not running on B"
tq "$QB" > "$OUT/b-after"
expect_state "$OUT/b-after" auto-converge=false xbzrle=true compress=true multifd=false \
    compress-level=3 compress-threads=2 decompress-threads=3 xbzrle-cache-size=16777216 \
    tls-creds= tls-object=no
wait_for 60 "the guest's key, in its memory, on B" key_on "$B"
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "A kept a QEMU"
echo "ok   A to B: auto-converge, mt and xbzrle compression, TLS" >&2

# ---- B to A: parallel (multifd) with TLS ----
virsh -q -c "$B" dumpxml --inactive g | sed "s|$QB|$QA|" > "$OUT/g-back.xml"
virsh -q -c "$B" migrate --live --p2p g "$A" --xml "$OUT/g-back.xml" --migrateuri tcp://10.231.0.1 \
    --parallel --parallel-connections 3 --tls > "$OUT/m2" 2>&1 || { show "$OUT/m2"; fail "migrate --p2p --parallel --tls"; }
run_a || fail "g is not running on A after the parallel migration"
tq "$QA" > "$OUT/a-after"
expect_state "$OUT/a-after" multifd=true multifd-channels=3 xbzrle=false compress=false \
    auto-converge=false tls-creds= tls-object=no
wait_for 60 "the guest's key on A" key_on "$A"
wait_for 30 "B empty after the migration back" b_empty
echo "ok   B to A, peer to peer: parallel, TLS" >&2

# ---- --tls to a destination without certificates ----
sed -i "s|^qemu_migrate_tls_x509_cert_dir = .*|qemu_migrate_tls_x509_cert_dir = \"$NOCERT\"|" "$BDIR/remvirtd.conf"
restart_b
: > "$OUT/refusals"
refused --tls
grep -qF "internal error: unable to execute QEMU command 'object-add': Unable to access credentials $NOCERT/ca-cert.pem" "$OUT/refusals" ||
    { show "$OUT/refusals"; fail "--tls without certificates"; }
cat "$OUT/refusals" >> "$OUT/refusals-remvirtd"
tq "$QA" > "$OUT/a-refused"
expect_state "$OUT/a-refused" tls-creds= tls-object=no
key_on "$A" || fail "the guest's key on A after the refused TLS migration"
echo "ok   --tls refused by a destination without certificates" >&2

# ---- A's remvirtd killed during a TLS migration ----
sed -i "s|^qemu_migrate_tls_x509_cert_dir = .*|qemu_migrate_tls_x509_cert_dir = \"$P\"|" "$BDIR/remvirtd.conf"
restart_b
bg "$OUT/m3" virsh -q -c "$A" migrate --live g "$B" --xml "$OUT/g-b.xml" --bandwidth 1 --tls
MIG=$BG_PID
wait_for 60 "the migration job on A" has_job
tq "$QA" > "$OUT/a-before-kill"
expect_state "$OUT/a-before-kill" tls-object=yes
restart_a
if wait "$MIG"; then fail "the migration whose source daemon died succeeded"; fi
wait_for 60 "g running on A after A's restart" run_a
wait_for 60 "B empty after A's restart" b_empty
tq "$QA" > "$OUT/a-reattached"
expect_state "$OUT/a-reattached" tls-creds= tls-object=no
key_on "$A" || fail "the guest's key on A after A's restart"
echo "ok   a TLS object left by a killed remvirtd removed at reattach" >&2
virsh -q -c "$A" destroy g > /dev/null
virsh -q -c "$A" undefine g > /dev/null

# ---- the same refusals between two stock libvirtds (B without
# certificates): the same words ----
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side by side skipped: $why" >&2
    exit 0
fi
export RV_LIBVIRTD_QEMU_CONF="migrate_tls_x509_cert_dir = \"$NOCERT\""
start_libvirtd_pair
A=$LA B=$LB
virsh -q -c "$A" define "$OUT/g.xml" > /dev/null
virsh -q -c "$A" start g > /dev/null
virsh -q -c "$A" dumpxml --inactive g > "$OUT/g-b.xml"
b_empty() { [ -z "$(virsh -q -c "$B" list --all --name)" ]; }
: > "$OUT/refusals"
for r in "${REFUSALS[@]}" "--tls"; do
    # shellcheck disable=SC2086
    refused --unsafe --migrateuri tcp://10.231.0.2 $r
done
sed 's/^--unsafe --migrateuri tcp:\/\/10.231.0.2 //' "$OUT/refusals" > "$OUT/refusals-libvirtd"
same "$OUT/refusals-libvirtd" "$OUT/refusals-remvirtd" "refusals: remvirtd's words as libvirtd's"
virsh -q -c "$A" destroy g > /dev/null
virsh -q -c "$A" undefine g > /dev/null
