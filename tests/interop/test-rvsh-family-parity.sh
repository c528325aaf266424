#!/usr/bin/env bash
# rvsh's node device, interface, secret, nwfilter and storage commands
# print what virsh prints: each command runs through virsh and through
# rvsh against the same daemon, and stdout, stderr and the exit status
# must be equal byte for byte.  Against remvirtd's test driver, against
# libvirtd's test driver (when it can run here: the same data), and,
# for the storage commands and the host's devices, against remvirtd's
# QEMU driver (a directory pool with raw and qcow2 volumes through
# qemu-img; nodedev-list on the real sysfs).  Commands that change
# state run once through each tool on objects of their own (VVV in the
# names for virsh, RRR for rvsh) and the outputs are compared with those
# names made equal.  --json is parsed and checked against the
# facts of the virsh table.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
[ -x "$RVSH" ] || fail "$RVSH is not built"
OUT=$RV_TMP/parity
mkdir -p "$OUT"
compared=0

# run_both URI VIRSH-ARGS RVSH-ARGS: each tool's stdout, stderr, status
# into $OUT/{v,r}.{out,err,rc}.
run_both()
{
    local uri=$1 vargs=$2 rargs=$3 rc
    rc=0; eval "virsh -c \"\$uri\" $vargs" > "$OUT/v.out" 2> "$OUT/v.err" || rc=$?
    echo "$rc" > "$OUT/v.rc"
    rc=0; eval "\"\$RVSH\" -c \"\$uri\" $rargs" > "$OUT/r.out" 2> "$OUT/r.err" || rc=$?
    echo "$rc" > "$OUT/r.rc"
}

# check_same WHAT: the two runs printed the same and ended the same.
check_same()
{
    local f
    for f in out err rc; do
        if ! diff -u "$OUT/v.$f" "$OUT/r.$f" >&2; then
            fail "$1: rvsh's $f differs from virsh's (diff above: - virsh, + rvsh)"
        fi
    done
    compared=$((compared + 1))
}

# parity URI ARGS...: one command, words as given, through both tools.
parity()
{
    local uri=$1 args
    shift
    printf -v args '%q ' "$@"
    run_both "$uri" "$args" "$args"
    check_same "$*"
}

# parity_own URI CMD-WITH-@: a command that changes state; @ becomes VVV
# for virsh and RRR for rvsh, and the outputs are compared with both
# turned into @ again (and the new objects' UUIDs into UUID).
parity_own()
{
    local uri=$1 cmd=$2
    run_both "$uri" "${cmd//@/VVV}" "${cmd//@/RRR}"
    local uuid='[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}'
    sed -i "s/VVV/@/g; s/$uuid/UUID/g" "$OUT/v.out" "$OUT/v.err"
    sed -i "s/RRR/@/g; s/$uuid/UUID/g" "$OUT/r.out" "$OUT/r.err"
    check_same "$cmd"
}

# The commands both test drivers answer alike (reading, and the errors).
test_driver_reads()
{
    local u=$1
    parity "$u" nodedev-list
    parity "$u" nodedev-list --all
    parity "$u" nodedev-list --tree
    parity "$u" nodedev-list --cap net,system
    parity "$u" nodedev-list --cap nosuchcap
    parity "$u" nodedev-list --tree --cap pci
    parity "$u" nodedev-dumpxml computer
    parity "$u" nodedev-dumpxml nosuch
    parity "$u" iface-list
    parity "$u" iface-list --all
    parity "$u" iface-list --inactive
    parity "$u" iface-dumpxml eth1
    parity "$u" iface-dumpxml aa:bb:cc:dd:ee:ff
    parity "$u" iface-dumpxml eth1 --inactive
    parity "$u" iface-dumpxml nosuch
    parity "$u" iface-mac eth1
    parity "$u" iface-mac nosuch
    parity "$u" iface-mac aa:bb:cc:dd:ee:ff
    parity "$u" iface-name aa:bb:cc:dd:ee:ff
    parity "$u" iface-name 00:00:00:00:00:01
    parity "$u" iface-name eth1
    parity "$u" secret-list
    parity "$u" secret-dumpxml 11111111-2222-3333-4444-555555555555
    parity "$u" secret-dumpxml nosuch
    parity "$u" nwfilter-list
    parity "$u" nwfilter-dumpxml nosuch
    parity "$u" nwfilter-binding-list
    parity "$u" net-dhcp-leases default
    parity "$u" net-dhcp-leases default --mac 52:54:00:00:00:01
    parity "$u" net-dhcp-leases nosuch
    parity "$u" find-storage-pool-sources logical
    parity "$u" find-storage-pool-sources dir
    parity "$u" find-storage-pool-sources-as logical
    parity "$u" find-storage-pool-sources-as netfs
    parity "$u" find-storage-pool-sources-as netfs myhost
    parity "$u" find-storage-pool-sources-as netfs myhost --port 2049
    parity "$u" find-storage-pool-sources-as iscsi myhost --port 3260 --initiator iqn.2026-01.x
    parity "$u" vol-create-as default-pool c.img 10M --print-xml
    parity "$u" vol-create-as default-pool c.img 1GiB --format qcow2 --allocation 1k --print-xml
    parity "$u" vol-create-as default-pool c.img 10MB --print-xml
    parity "$u" vol-create-as default-pool c.img 10X
    parity "$u" vol-create-as default-pool c.img 100e
    parity "$u" vol-create-as default-pool c.img -1
    parity "$u" vol-create-as nosuch c.img 10M
    parity "$u" vol-create-as default-pool
    parity "$u" vol-create-from default-pool
    parity "$u" vol-clone nosuch x --pool default-pool
    parity "$u" vol-resize nosuch 5M --pool default-pool
    parity "$u" vol-resize x -5M --pool default-pool
    parity "$u" vol-wipe x --pool default-pool --algorithm nosuch
    parity "$u" pool-define-as p dir --target /x --print-xml
    parity "$u" pool-define-as p dir --source-host h --source-path /p --source-dev /dev/x \
        --source-name n --source-format f --target /t --print-xml
    parity "$u" pool-create-as default-pool dir --target /x
}

start_remvirtd
test_driver_reads "$REMVIRTD_URI"
echo "ok   remvirtd's test driver: $compared commands as virsh prints them"

# Changes, on remvirtd's test driver (it keeps state between connections).
U=$REMVIRTD_URI
parity_own "$U" "vol-create-as default-pool @.img 10M"
parity_own "$U" "vol-create-as default-pool q@.qcow2 20M --format qcow2 --backing-vol @.img --backing-vol-format raw"
parity_own "$U" "vol-create-as default-pool @.img 10M"
parity_own "$U" "vol-clone @.img c@.img --pool default-pool"
parity_own "$U" "vol-clone @.img c@.img --pool default-pool"
parity_own "$U" "vol-resize @.img 20M --pool default-pool"
parity_own "$U" "vol-wipe @.img --pool default-pool"
parity_own "$U" "vol-info c@.img --pool default-pool"
for who in VVV RRR; do
    echo "<volume><name>f$who.img</name><capacity>1048576</capacity></volume>" \
        > "$RV_TMP/from-$who.xml"
done
parity_own "$U" "vol-create-from default-pool $RV_TMP/from-@.xml @.img --inputpool default-pool"
parity_own "$U" "vol-create-from default-pool $RV_TMP/from-@.xml nosuch --inputpool default-pool"
parity_own "$U" "pool-define-as p@ dir --target $RV_TMP/p@"
parity_own "$U" "pool-create-as c@ dir --target $RV_TMP/c@"
parity_own "$U" "pool-create-as c@ dir --target $RV_TMP/c@"
parity "$U" vol-list default-pool
parity "$U" pool-list --all
echo "ok   remvirtd's test driver: volumes and pools made alike ($compared compared so far)"

# --json: the same facts as the tables.
"$RVSH" -c "$U" iface-list --all --json > "$OUT/iface.json"
virsh -c "$U" iface-list --all > "$OUT/iface.txt"
"$PYTHON3" - "$OUT/iface.json" "$OUT/iface.txt" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
rows = [l.split() for l in open(sys.argv[2]).read().splitlines()[2:] if l.strip()]
want = [{"name": r[0], "state": r[1], "mac": r[2]} for r in rows]
if got != want or not want:
    sys.exit(f"FAIL: iface-list --json gave {got}, the table says {want}")
print(f"ok   iface-list --json: {len(got)} interface(s) as in the table")
PY
stop_remvirtd

if [ "$(id -u)" -eq 0 ] && command -v libvirtd > /dev/null; then
    start_libvirtd
    before=$compared
    test_driver_reads "$LIBVIRTD_URI"
    echo "ok   libvirtd's test driver: $((compared - before)) commands as virsh prints them"
    stop_libvirtd
else
    echo "---- libvirtd's test driver: not here (needs root and libvirtd)"
fi

if ! command -v qemu-system-x86_64 > /dev/null || ! command -v qemu-img > /dev/null; then
    echo "---- QEMU driver pass: qemu-system-x86_64 or qemu-img is missing"
    echo "ok   $compared commands compared"
    exit 0
fi
start_remvirtd_qemu
Q=$QEMU_URI
before=$compared
parity "$Q" nodedev-list
parity "$Q" nodedev-list --tree
parity "$Q" nodedev-list --cap net
parity "$Q" nodedev-list --cap pci,system
parity "$Q" nodedev-dumpxml computer
parity "$Q" iface-list --all
parity "$Q" secret-list
parity "$Q" nwfilter-list
parity "$Q" nwfilter-binding-list
parity "$Q" nwfilter-dumpxml nosuch
parity "$Q" secret-dumpxml 11111111-2222-3333-4444-555555555555
mkdir -p "$RV_TMP/poolVVV" "$RV_TMP/poolRRR"
parity_own "$Q" "pool-create-as pool@ dir --target $RV_TMP/pool@"
for cmd in "vol-create-as pool@ a.raw 10M" \
           "vol-create-as pool@ b.qcow2 20M --format qcow2" \
           "vol-create-as pool@ c.qcow2 20M --format qcow2 --backing-vol b.qcow2 --backing-vol-format qcow2" \
           "vol-info a.raw --pool pool@" \
           "vol-info b.qcow2 --pool pool@" \
           "vol-resize a.raw 20M --pool pool@" \
           "vol-resize a.raw -4M --pool pool@ --shrink" \
           "vol-resize b.qcow2 1M --pool pool@ --delta" \
           "vol-resize a.raw 1M --pool pool@" \
           "vol-info a.raw --pool pool@" \
           "vol-wipe a.raw --pool pool@ --algorithm dod" \
           "vol-wipe a.raw --pool pool@ --algorithm trim" \
           "vol-wipe b.qcow2 --pool pool@ --algorithm nnsa" \
           "vol-wipe a.raw --pool pool@" \
           "vol-clone a.raw a2.raw --pool pool@" \
           "vol-clone b.qcow2 b2.qcow2 --pool pool@" \
           "vol-info a2.raw --pool pool@" \
           "vol-info b2.qcow2 --pool pool@" \
           "vol-list pool@"; do
    parity_own "$Q" "$cmd"
done
# What qemu-img sees: the clone of the qcow2 volume is qcow2, the raw one
# was resized to 16 MiB and wiped (zeros).
qemu-img info "$RV_TMP/poolRRR/b2.qcow2" | grep -q '^file format: qcow2' ||
    fail "vol-clone of a qcow2 volume is not qcow2"
[ "$(stat -c %s "$RV_TMP/poolRRR/a.raw")" -eq $((16 * 1024 * 1024)) ] ||
    fail "vol-resize left a.raw at $(stat -c %s "$RV_TMP/poolRRR/a.raw") bytes"
cmp -s -n $((16 * 1024 * 1024)) "$RV_TMP/poolRRR/a.raw" /dev/zero || fail "vol-wipe left data in a.raw"

"$RVSH" -c "$Q" nodedev-list --tree --json > "$OUT/nodedev.json"
virsh -c "$Q" nodedev-list > "$OUT/nodedev.txt"
"$RVSH" -c "$Q" --json secret-list > "$OUT/secret.json"
"$RVSH" -c "$Q" --json nwfilter-list > "$OUT/nwfilter.json"
"$RVSH" -c "$Q" --json nwfilter-binding-list > "$OUT/binding.json"
"$PYTHON3" - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
devs = json.load(open(os.path.join(out, "nodedev.json")))
names = [l for l in open(os.path.join(out, "nodedev.txt")).read().splitlines() if l]
if [d["name"] for d in devs] != names:
    sys.exit(f"FAIL: nodedev-list --json names {devs} differ from virsh's {names}")
tops = [d["name"] for d in devs if d["parent"] is None]
if tops != ["computer"]:
    sys.exit(f"FAIL: the devices at the top are {tops}, not the computer alone")
known = set(names)
orphans = [d for d in devs if d["parent"] is not None and d["parent"] not in known]
if orphans:
    sys.exit(f"FAIL: parents not listed: {orphans}")
for f in ("secret", "nwfilter", "binding"):
    if json.load(open(os.path.join(out, f + ".json"))) != []:
        sys.exit(f"FAIL: {f} list is not the empty list the QEMU driver has")
print(f"ok   nodedev-list --json: {len(devs)} devices with their parents; empty lists as []")
PY
parity_own "$Q" "pool-destroy pool@"
echo "ok   QEMU driver: $((compared - before)) commands as virsh prints them"
echo "ok   $compared commands compared"
