#!/usr/bin/env bash
# The QEMU driver's directory storage pools on real files, through virsh
# and python3-libvirt: pool-define-as, pool-build (mkdir), pool-start,
# vol-create-as raw (a file of that size) and qcow2 (qemu-img, answered
# later), vol-list/info/dumpxml/path/key, lookups by path and key, files
# put there from outside found by pool-refresh (qcow2 told from raw by
# its header), vol-clone (qemu-img convert), vol-resize, vol-wipe,
# vol-delete; a guest whose disk is a volume starts; pool-info's figures
# are the file system's; definitions, activity and autostart survive a
# restart of remvirtd; the pool events in order; clear errors.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires qemu-img --version
[ -x "$RVSH" ] || fail "$RVSH is not built"
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
VQ=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
POOL=$RV_TMP/images/p1
mkdir -p "$OUT"

expect()
{
    local want=$1 got
    shift
    got=$("$@" 2>&1) || fail "'$*' failed: $got"
    got=$(echo "$got" | sed '/^$/d')
    [ "$got" = "$want" ] || fail "'$*' printed '$got', expected '$want'"
    echo "ok   $* -> $want"
}

# expect_error TEXT COMMAND...: the command fails and says TEXT.
expect_error()
{
    local want=$1 got
    shift
    got=$("$@" 2>&1) && fail "'$*' succeeded: $got"
    grep -qF -- "$want" <<< "$got" || fail "'$*' said '$got', expected '$want'"
    echo "ok   $* fails: $want"
}

bg "$OUT/events" virsh -c "$QEMU_URI" pool-event --loop --event lifecycle
bg "$OUT/refresh" virsh -c "$QEMU_URI" pool-event --loop --event refresh
_subscribed()
{
    "${V[@]}" pool-define-as warm dir --target "$RV_TMP/warm" > /dev/null 2>&1
    "${V[@]}" pool-undefine warm > /dev/null 2>&1
    grep -q "storage pool warm:" "$OUT/events"
}
wait_for 30 "virsh pool-event to see a definition" _subscribed

# ---- a pool from nothing
expect "Pool p1 defined" "${V[@]}" pool-define-as p1 dir --target "$POOL"
expect_error "No such file or directory" "${V[@]}" pool-start p1
expect "Pool p1 built" "${V[@]}" pool-build p1
[ -d "$POOL" ] || fail "pool-build made no $POOL"
expect "Pool p1 started" "${V[@]}" pool-start p1
"${V[@]}" pool-list --all > "$OUT/pools"
grep -Eq '^ *p1 +active +no$' "$OUT/pools" || { show "$OUT/pools"; fail "p1 not listed active"; }

# ---- volumes: raw at once, qcow2 through qemu-img
expect "Vol a.img created" "${V[@]}" vol-create-as p1 a.img 8M --format raw
[ "$(stat -c %s "$POOL/a.img")" = 8388608 ] || fail "a.img is not 8 MiB"
expect "Vol b.qcow2 created" "${V[@]}" vol-create-as p1 b.qcow2 16M --format qcow2
qemu-img info --output=json "$POOL/b.qcow2" > "$OUT/b.json"
grep -q '"format": "qcow2"' "$OUT/b.json" || { show "$OUT/b.json"; fail "b.qcow2 is no qcow2"; }
grep -q '"virtual-size": 16777216' "$OUT/b.json" || { show "$OUT/b.json"; fail "b.qcow2 not 16 MiB"; }
expect_error "exists already" "${V[@]}" vol-create-as p1 a.img 1M
expect_error "exists already" "${V[@]}" vol-create-as p1 b.qcow2 1M --format qcow2
[ "$(stat -c %s "$POOL/a.img")" = 8388608 ] || fail "a second create touched a.img"

"${V[@]}" vol-list p1 > "$OUT/vols"
for v in a.img b.qcow2; do
    grep -Eq "^ *$v +$POOL/$v\$" "$OUT/vols" || { show "$OUT/vols"; fail "vol-list lacks $v"; }
done
"${V[@]}" vol-info --pool p1 b.qcow2 > "$OUT/info"
has_line "$OUT/info" "Type:           file" || { show "$OUT/info"; fail "vol-info type"; }
has_line "$OUT/info" "Capacity:       16.00 MiB" || { show "$OUT/info"; fail "vol-info capacity"; }
"${V[@]}" vol-dumpxml --pool p1 b.qcow2 > "$OUT/b.xml"
grep -q "<format type='qcow2'/>" "$OUT/b.xml" || { show "$OUT/b.xml"; fail "vol-dumpxml format"; }
grep -q "<path>$POOL/b.qcow2</path>" "$OUT/b.xml" || { show "$OUT/b.xml"; fail "vol-dumpxml path"; }
expect "$POOL/a.img" "${V[@]}" vol-path --pool p1 a.img
expect "$POOL/a.img" "${V[@]}" vol-key --pool p1 a.img
expect "a.img" "${V[@]}" vol-name "$POOL/a.img"
expect "p1" "${V[@]}" vol-pool "$POOL/a.img"

# ---- files put there from outside appear after a refresh
qemu-img create -q -f qcow2 "$POOL/outside.qcow2" 24M
truncate -s 3M "$POOL/outside.raw"
mkfifo "$POOL/a-fifo"
mkdir "$POOL/a-dir"
expect_error "Storage volume not found" "${V[@]}" vol-info --pool p1 outside.raw
expect "Pool p1 refreshed" "${V[@]}" pool-refresh p1
"${V[@]}" vol-info --pool p1 outside.qcow2 > "$OUT/info"
has_line "$OUT/info" "Capacity:       24.00 MiB" || { show "$OUT/info"; fail "outside.qcow2 capacity"; }
"${V[@]}" vol-dumpxml --pool p1 outside.raw > "$OUT/raw.xml"
grep -q "<format type='raw'/>" "$OUT/raw.xml" || { show "$OUT/raw.xml"; fail "outside.raw not raw"; }
grep -q "<capacity unit='bytes'>3145728</capacity>" "$OUT/raw.xml" || fail "outside.raw capacity"
[ "$("${VQ[@]}" vol-list p1 | wc -l)" = 4 ] || { "${V[@]}" vol-list p1; fail "not 4 volumes (fifo or dir listed?)"; }
rm "$POOL/a-fifo"
rmdir "$POOL/a-dir"

# ---- clone, resize, wipe
expect "Vol c.qcow2 cloned from b.qcow2" "${V[@]}" vol-clone --pool p1 b.qcow2 c.qcow2
qemu-img info --output=json "$POOL/c.qcow2" > "$OUT/c.json"
grep -q '"virtual-size": 16777216' "$OUT/c.json" || fail "the clone is not a 16 MiB image"
expect "Size of volume 'a.img' successfully changed to 16M" "${V[@]}" vol-resize --pool p1 a.img 16M
[ "$(stat -c %s "$POOL/a.img")" = 16777216 ] || fail "a.img was not resized"
expect_error "can't shrink capacity" "${V[@]}" vol-resize --pool p1 a.img 1M
expect "Size of volume 'b.qcow2' successfully changed to 32M" "${V[@]}" vol-resize --pool p1 b.qcow2 32M
qemu-img info --output=json "$POOL/b.qcow2" > "$OUT/b.json"
grep -q '"virtual-size": 33554432' "$OUT/b.json" || fail "b.qcow2 was not resized"
printf 'data' | dd of="$POOL/a.img" conv=notrunc status=none
expect "Vol a.img wiped" "${V[@]}" vol-wipe --pool p1 a.img
[ "$(head -c 4 "$POOL/a.img" | od -An -c | tr -d ' ')" = '\0\0\0\0' ] || fail "a.img not wiped"
[ "$(stat -c %s "$POOL/a.img")" = 16777216 ] || fail "vol-wipe changed a.img's size"

# ---- a guest whose disk is a volume
qemu_domain_xml g1 "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$POOL/b.qcow2'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/g1.xml"
"${V[@]}" define "$OUT/g1.xml" > /dev/null
expect "Domain 'g1' started" "${V[@]}" start g1
expect "running" "${V[@]}" domstate g1
"${V[@]}" destroy g1 > /dev/null
"${V[@]}" undefine g1 > /dev/null

# ---- python3-libvirt: the figures, lookups, a qcow2 volume from XML
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    "$SYSTEM_PYTHON3" - "$QEMU_URI" "$POOL" <<'PY' || fail "python3-libvirt checks failed"
import os, sys, libvirt
conn = libvirt.open(sys.argv[1])
pool_dir = sys.argv[2]
p = conn.storagePoolLookupByName("p1")
state, capacity, allocation, available = p.info()
vfs = os.statvfs(pool_dir)
assert state == libvirt.VIR_STORAGE_POOL_RUNNING, state
assert capacity == vfs.f_blocks * vfs.f_frsize, (capacity, vfs.f_blocks * vfs.f_frsize)
assert 0 < available <= capacity and allocation <= capacity
names = sorted(v.name() for v in p.listAllVolumes())
assert names == ["a.img", "b.qcow2", "c.qcow2", "outside.qcow2", "outside.raw"], names
v = p.createXML("""<volume><name>d.qcow2</name><capacity unit='M'>4</capacity>
  <target><format type='qcow2'/></target></volume>""", 0)
assert v.path() == pool_dir + "/d.qcow2", v.path()
assert conn.storageVolLookupByKey(v.key()).name() == "d.qcow2"
assert conn.storageVolLookupByPath(v.path()).storagePoolLookupByVolume().name() == "p1"
assert v.info() [1] == 4 << 20, v.info()
v.delete(0)
assert not os.path.exists(pool_dir + "/d.qcow2")
try:
    conn.storagePoolDefineXML("<pool type='logical'><name>lv</name><target><path>/dev/lv</path></target></pool>", 0)
    raise SystemExit("a logical pool was accepted")
except libvirt.libvirtError as e:
    assert e.get_error_code() == libvirt.VIR_ERR_OPERATION_UNSUPPORTED, e.get_error_code()
print("ok   python3-libvirt: info from statvfs, lookups, createXML qcow2, delete, errors")
PY
else
    echo "python3-libvirt not available: its checks are skipped"
fi

# ---- definitions, activity and autostart survive a restart
expect "Pool p1 marked as autostarted" "${V[@]}" pool-autostart p1
expect "Pool p2 defined" "${V[@]}" pool-define-as p2 dir --target "$RV_TMP/images/p2"
expect "Pool p2 built" "${V[@]}" pool-build p2
stop_remvirtd
start_remvirtd_qemu
"${V[@]}" pool-list --all > "$OUT/pools"
grep -Eq '^ *p1 +active +yes$' "$OUT/pools" || { show "$OUT/pools"; fail "p1 not active, autostart after restart"; }
grep -Eq '^ *p2 +inactive +no$' "$OUT/pools" || { show "$OUT/pools"; fail "p2 not inactive after restart"; }
[ "$("${VQ[@]}" vol-list p1 | wc -l)" = 5 ] || { "${V[@]}" vol-list p1; fail "p1's volumes after restart"; }

# ---- a pool redefined while it runs keeps its directory until it stops
P2=$RV_TMP/images/p2
expect "Pool p2 started" "${V[@]}" pool-start p2
"${V[@]}" pool-dumpxml p2 | sed "s#<path>$P2</path>#<path>$P2-new</path>#" > "$OUT/p2-new.xml"
grep -q "$P2-new" "$OUT/p2-new.xml" || fail "p2's XML has no target path"
expect "Pool p2 defined from $OUT/p2-new.xml" "${V[@]}" pool-define "$OUT/p2-new.xml"
"${V[@]}" pool-dumpxml p2 > "$OUT/p2.xml"
grep -q "<path>$P2</path>" "$OUT/p2.xml" || { show "$OUT/p2.xml"; fail "running p2 changed its directory"; }
"${V[@]}" pool-dumpxml --inactive p2 > "$OUT/p2.xml"
grep -q "<path>$P2-new</path>" "$OUT/p2.xml" || { show "$OUT/p2.xml"; fail "p2's next definition"; }
expect "Pool p2 destroyed" "${V[@]}" pool-destroy p2
"${V[@]}" pool-dumpxml p2 > "$OUT/p2.xml"
grep -q "<path>$P2-new</path>" "$OUT/p2.xml" || { show "$OUT/p2.xml"; fail "stopped p2 kept its old directory"; }

# ---- the end of a pool
for v in a.img b.qcow2 c.qcow2 outside.qcow2 outside.raw; do
    expect "Vol $v deleted" "${V[@]}" vol-delete --pool p1 "$v"
done
[ -z "$(ls -A "$POOL")" ] || fail "files left in $POOL"
expect_error "still active" "${V[@]}" pool-undefine p1
expect "Pool p1 destroyed" "${V[@]}" pool-destroy p1
expect_error "is not active" "${V[@]}" vol-list p1
expect "Pool p1 deleted" "${V[@]}" pool-delete p1
[ ! -e "$POOL" ] || fail "pool-delete left $POOL"
expect "Pool p1 has been undefined" "${V[@]}" pool-undefine p1
expect "Pool p2 has been undefined" "${V[@]}" pool-undefine p2
[ -z "$("${VQ[@]}" pool-list --all)" ] || fail "pools left"
expect_error "invalid storage pool name '.hidden'" "${V[@]}" pool-define-as .hidden dir --target "$RV_TMP/h"
expect_error "not supported by remvirtd's QEMU driver" "${V[@]}" pool-define-as fs1 fs \
    --source-dev /dev/null --target "$RV_TMP/fs1"
# A type that no driver of remvirt models: an error that names no driver.
expect_error "remvirt does not support storage pools of type 'rbd'" "${V[@]}" pool-define-as rbd1 rbd \
    --source-host localhost --source-name rbdpool

# The events, in order (the first subscriber's connection ended with the
# restart: what it saw is the first part).
sed -n "s/^event 'lifecycle' for storage pool \(p1\): \(.*\)$/\1 \2/p" "$OUT/events" > "$OUT/seen"
printf '%s\n' "p1 Defined" "p1 Created" "p1 Started" > "$OUT/want"
diff -u "$OUT/want" "$OUT/seen" || fail "pool events differ"
grep -q "event 'refresh' for storage pool p1" "$OUT/refresh" || fail "no refresh event"
echo "ok   pool events: $(tr '\n' ',' < "$OUT/seen")"

# ---- virt-manager's default pool: virtinst's own code (the one
# virt-manager runs when it needs a pool) defines, builds, starts and
# autostarts "default" in libvirt's data directory; it is then found.
VIRTINST=/usr/share/virt-manager
if [ -d "$VIRTINST/virtinst" ]; then
    "$SYSTEM_PYTHON3" - "$QEMU_URI" "$VIRTINST" <<'PY' || fail "virtinst's default pool failed"
import os, sys
sys.path.insert(0, sys.argv[2])
import virtinst
from virtinst import StoragePool
conn = virtinst.VirtinstConnection(sys.argv[1])
conn.open(None, None)
existed = os.path.isdir(os.path.join(conn.get_libvirt_data_root_dir(), "images"))
pool = StoragePool.build_default_pool(conn)
p = conn.storagePoolLookupByName("default")
want = os.path.join(conn.get_libvirt_data_root_dir(), "images")
assert p.isActive() and p.autostart(), (p.isActive(), p.autostart())
assert StoragePool.lookup_default_pool(conn).target_path == want
assert os.path.isdir(want)
p.destroy()
p.undefine()
if not existed:
    os.rmdir(want)
print("ok   virtinst's build_default_pool: 'default' at %s, active, autostart" % want)
PY
else
    echo "virtinst not installed: virt-manager's default pool is not tried"
fi
