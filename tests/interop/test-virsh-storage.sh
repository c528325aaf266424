#!/usr/bin/env bash
# virsh's pool-* and vol-* commands, virsh pool-event and python3-libvirt's
# storage calls against remvirtd and against libvirtd's test driver: the
# same commands must print the same, byte for byte (the socket path
# aside).  rvsh's storage commands and pool-event must print what virsh
# prints.  As in
# test-virsh-networks.sh, libvirtd's test driver forgets its state when
# its last client leaves, so each sequence that builds on earlier state
# runs in one virsh and puts things back as it found them.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
# Fixed UUIDs, or each server would pick its own.
cat > "$xmldir/p1.xml" <<XML
<pool type='dir'>
  <name>rvp1</name>
  <uuid>7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c01</uuid>
  <capacity>5</capacity>
  <target>
    <path>/var/lib/rvp1//</path>
    <permissions><mode>755</mode><owner>0</owner><group>0</group><label>a&lt;b</label></permissions>
  </target>
</pool>
XML
cat > "$xmldir/fs.xml" <<XML
<pool type='fs'>
  <name>rvfs</name>
  <uuid>7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c02</uuid>
  <source><device path='/dev/sdb1'/></source>
  <target><path>/mnt/rvfs</path></target>
</pool>
XML
cat > "$xmldir/netfs.xml" <<XML
<pool type='netfs'>
  <name>rvnfs</name>
  <uuid>7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c03</uuid>
  <source><host name='nfs.example.com' port='2049'/><dir path='/export'/><format type='nfs'/></source>
  <target><path>/mnt/rvnfs</path></target>
</pool>
XML
cat > "$xmldir/lvm.xml" <<XML
<pool type='logical'>
  <name>rvlvm</name>
  <uuid>7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c04</uuid>
  <target><path>/dev/rvlvm</path></target>
</pool>
XML
cat > "$xmldir/transient.xml" <<XML
<pool type='dir'>
  <name>rvtr</name>
  <uuid>7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c05</uuid>
  <target><path>/rvtr</path></target>
</pool>
XML
cat > "$xmldir/vol1.xml" <<XML
<volume>
  <name>vol1.img</name>
  <capacity unit='M'>10</capacity>
  <allocation>0</allocation>
</volume>
XML
cat > "$xmldir/vol2.xml" <<XML
<volume type='file'>
  <name>vol2.qcow2</name>
  <key>ignored</key>
  <capacity unit='GiB'>1</capacity>
  <allocation unit='KiB'>4</allocation>
  <target>
    <path>/ignored</path>
    <format type='qcow2'/>
    <permissions><mode>0644</mode><owner>107</owner><group>107</group></permissions>
  </target>
</volume>
XML
cat > "$xmldir/blk.xml" <<XML
<volume type='block'>
  <name>blk</name>
  <capacity unit='KB'>1</capacity>
  <allocation unit='k'>1</allocation>
  <target><format type='qcow2'/></target>
</volume>
XML
# What virt-manager sends for a new disk, and the qcow2 options around it.
cat > "$xmldir/vm.xml" <<XML
<volume>
  <name>vm1.qcow2</name>
  <capacity>21474836480</capacity>
  <allocation>0</allocation>
  <target>
    <format type="qcow2"/>
    <compat>1.1</compat>
    <features>
      <lazy_refcounts/>
    </features>
  </target>
  <backingStore><path>/default-pool/base.img</path><format type='raw'/></backingStore>
</volume>
XML
qvol()
{
    echo "<volume><name>$1</name><capacity>1024</capacity><target><format type='$2'/>$3</target>$4</volume>" \
        > "$xmldir/$1.xml"
}
qvol qa qcow2 "<features><lazy_refcounts/></features>" ""
qvol qb qcow2 "<compat>x.y</compat>" ""
qvol qc qcow2 "<features><bogus/></features>" ""
qvol qd raw "<compat>1.1</compat><features><lazy_refcounts/></features>" ""
qvol qe qcow2 "" "<backingStore><path>/b</path></backingStore>"
qvol qf qcow2 "" "<backingStore><format type='qcow2'/></backingStore>"
qvol qg qcow2 "" "<backingStore><path>/b</path><format type='bogus'/></backingStore>"
qvol qh qcow2 "<permissions><mode>0600</mode></permissions><compat>0.10</compat><features/>" \
    "<backingStore><path>/b</path><format type='qcow2'/><permissions><mode>0600</mode><owner>1</owner></permissions></backingStore>"
qvol qk qcow2 "<compat>1</compat>" ""
qvol ql qcow2 "<compat>1.1.1</compat>" ""
# Bad input: each gives its own error, the same from both daemons.
echo '<nosuch/>' > "$xmldir/wrongroot.xml"
echo 'garbage<' > "$xmldir/garbage.xml"
printf '<pool type="dir">\n  <name>x</name>\n  <target><path>/x</path></target>\n</pol>\n' \
    > "$xmldir/unclosed.xml"
echo '<pool type="dir"><target><path>/x</path></target></pool>' > "$xmldir/noname.xml"
echo '<pool type="dir"><name>nt</name></pool>' > "$xmldir/notarget.xml"
echo '<pool><name>nt</name><target><path>/x</path></target></pool>' > "$xmldir/notype.xml"
echo '<pool type="bogus"><name>nt</name><target><path>/x</path></target></pool>' > "$xmldir/badtype.xml"
echo '<pool type="dir"><name>bu</name><uuid>not-a-uuid</uuid><target><path>/x</path></target></pool>' \
    > "$xmldir/baduuid.xml"
echo '<pool type="dir"><name>bad/name</name><target><path>/x</path></target></pool>' > "$xmldir/badname.xml"
echo "<pool type='fs'><name>f</name><target><path>/f</path></target></pool>" > "$xmldir/fsnodev.xml"
echo "<pool type='netfs'><name>f</name><source><dir path='/x'/></source><target><path>/f</path></target></pool>" \
    > "$xmldir/nfsnohost.xml"
echo '<pool type="dir"><name>default-pool</name><target><path>/x</path></target></pool>' > "$xmldir/clash.xml"
echo '<pool type="dir"><name>clash2</name><uuid>dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566</uuid><target><path>/x</path></target></pool>' \
    > "$xmldir/clash2.xml"
# default-pool's name and UUID with another path, and default-pool itself.
echo '<pool type="dir"><name>default-pool</name><uuid>dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566</uuid><target><path>/y</path></target></pool>' \
    > "$xmldir/same.xml"
echo '<pool type="dir"><name>default-pool</name><uuid>dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566</uuid><target><path>/default-pool</path></target></pool>' \
    > "$xmldir/default.xml"
echo '<volume><capacity>1</capacity></volume>' > "$xmldir/vnoname.xml"
echo '<volume><name>nocap</name></volume>' > "$xmldir/vnocap.xml"
echo '<volume><name>badcap</name><capacity>abc</capacity></volume>' > "$xmldir/vbadcap.xml"
echo "<volume><name>badunit</name><capacity unit='xx'>1</capacity></volume>" > "$xmldir/vbadunit.xml"
echo "<volume><name>big</name><capacity unit='T'>200</capacity></volume>" > "$xmldir/vbig.xml"
echo "<volume><name>fmt</name><capacity>1</capacity><target><format type='bogus'/></target></volume>" \
    > "$xmldir/vbadfmt.xml"

# "ro:" runs the step on the read-only socket.
steps=(
    "pool-define p1.xml; pool-list --all; pool-list --inactive; pool-info rvp1;
     pool-dumpxml rvp1; pool-build rvp1; pool-start rvp1; pool-list; pool-info rvp1;
     pool-autostart rvp1; pool-list --all --autostart; pool-info rvp1;
     pool-autostart rvp1 --disable; pool-start rvp1; pool-undefine rvp1; pool-build rvp1;
     pool-delete rvp1; pool-refresh rvp1; pool-destroy rvp1; pool-destroy rvp1;
     pool-refresh rvp1; pool-delete rvp1; pool-undefine rvp1; pool-list --all"
    "pool-create transient.xml; pool-list --all --transient; pool-info rvtr;
     pool-autostart rvtr; pool-undefine rvtr; pool-destroy rvtr; pool-list --all"
    "pool-define fs.xml; pool-define netfs.xml; pool-define lvm.xml; pool-dumpxml rvfs;
     pool-dumpxml rvnfs; pool-dumpxml rvlvm; pool-list --all --details;
     pool-list --all --type dir; pool-list --all --type fs,netfs; pool-list --all --type logical;
     pool-start rvlvm; vol-create rvlvm blk.xml; vol-dumpxml blk --pool rvlvm;
     vol-info blk --pool rvlvm; pool-destroy rvlvm; vol-list rvlvm; vol-info blk --pool rvlvm;
     pool-undefine rvfs; pool-undefine rvnfs; pool-undefine rvlvm"
    "vol-create default-pool vol1.xml; vol-create default-pool vol2.xml; vol-list default-pool;
     vol-list default-pool --details; vol-info vol1.img --pool default-pool;
     vol-dumpxml vol1.img --pool default-pool; vol-dumpxml vol2.qcow2 --pool default-pool;
     vol-path vol1.img --pool default-pool; vol-key vol1.img --pool default-pool;
     vol-name /default-pool/vol2.qcow2; vol-pool /default-pool/vol1.img;
     pool-info default-pool; pool-dumpxml default-pool; vol-info /default-pool/vol1.img;
     vol-clone vol1.img vol3 --pool default-pool; vol-dumpxml vol3 --pool default-pool;
     vol-create default-pool vol1.xml; vol-create default-pool blk.xml;
     vol-dumpxml blk --pool default-pool; vol-resize vol1.img 20M --pool default-pool;
     vol-wipe vol1.img --pool default-pool; vol-delete vol1.img --pool default-pool;
     vol-delete vol1.img --pool default-pool; vol-create-as default-pool as1 1G --format raw;
     vol-dumpxml as1 --pool default-pool; pool-refresh default-pool;
     vol-delete as1 --pool default-pool; vol-delete blk --pool default-pool;
     vol-delete vol3 --pool default-pool; vol-delete /default-pool/vol2.qcow2;
     vol-list default-pool; pool-info default-pool"
    "vol-create default-pool vm.xml; vol-dumpxml vm1.qcow2 --pool default-pool;
     vol-info vm1.qcow2 --pool default-pool; vol-delete vm1.qcow2 --pool default-pool"
    "vol-create default-pool qa.xml; vol-dumpxml qa --pool default-pool; vol-create default-pool qb.xml; vol-dumpxml qb --pool default-pool; vol-create default-pool qc.xml; vol-dumpxml qc --pool default-pool; vol-create default-pool qd.xml; vol-dumpxml qd --pool default-pool; vol-create default-pool qe.xml; vol-dumpxml qe --pool default-pool; vol-create default-pool qf.xml; vol-dumpxml qf --pool default-pool; vol-create default-pool qg.xml; vol-dumpxml qg --pool default-pool; vol-create default-pool qh.xml; vol-dumpxml qh --pool default-pool; vol-create default-pool qk.xml; vol-dumpxml qk --pool default-pool; vol-create default-pool ql.xml; vol-dumpxml ql --pool default-pool;
     vol-list default-pool --details; vol-delete qa --pool default-pool;
     vol-delete qd --pool default-pool; vol-delete qe --pool default-pool;
     vol-delete qf --pool default-pool; vol-delete qh --pool default-pool"
    "pool-list"
    "pool-list --all --details"
    "pool-list --name"
    "pool-list --uuid --all"
    "pool-info default-pool"
    "pool-dumpxml default-pool"
    "pool-uuid default-pool"
    "pool-name dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566"
    "pool-info dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566"
    "vol-list default-pool"
    # Failures: the messages come from the servers' error replies.
    "pool-info nosuch"
    "pool-dumpxml nosuch"
    "pool-name 7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3cff"
    "pool-start nosuch"
    "pool-start default-pool"
    "pool-build default-pool"
    "pool-delete default-pool"
    "pool-undefine default-pool"
    "pool-dumpxml --inactive default-pool"
    "vol-list nosuch"
    "vol-info nosuch --pool default-pool"
    "vol-info /nosuch"
    "vol-info vol --pool nosuch"
    "vol-create nosuch vol1.xml"
    "pool-define wrongroot.xml"
    "pool-define garbage.xml"
    "pool-define unclosed.xml"
    "pool-define noname.xml"
    "pool-define notarget.xml"
    "pool-define notype.xml"
    "pool-define badtype.xml"
    "pool-define baduuid.xml"
    "pool-define badname.xml"
    "pool-define fsnodev.xml"
    "pool-define nfsnohost.xml"
    "pool-define clash.xml"
    "pool-define clash2.xml"
    "pool-create clash.xml"
    "vol-create default-pool wrongroot.xml"
    "vol-create default-pool garbage.xml"
    "vol-create default-pool vnoname.xml"
    "vol-create default-pool vnocap.xml"
    "vol-create default-pool vbadcap.xml"
    "vol-create default-pool vbadunit.xml"
    "vol-create default-pool vbig.xml"
    "vol-create default-pool vbadfmt.xml"
    "ro:pool-list --all"
    "ro:pool-info default-pool"
    "ro:pool-dumpxml default-pool"
    "ro:vol-list default-pool"
    "ro:pool-destroy default-pool"
    "ro:pool-define p1.xml"
    "ro:pool-autostart default-pool"
    "ro:vol-create default-pool vol1.xml"
    # Redefining and re-creating a pool as libvirt's test driver does: the
    # running definition stays; creating an inactive one makes it transient.
    # Then default-pool is put back (remvirtd keeps state between clients).
    "pool-create same.xml; pool-define same.xml; pool-dumpxml default-pool;
     pool-destroy default-pool; pool-dumpxml default-pool; pool-create same.xml;
     pool-info default-pool; pool-dumpxml default-pool; pool-destroy default-pool;
     pool-list --all; pool-define default.xml; pool-start default-pool"
    # Nothing left over.
    "pool-list --all"
    "pool-info default-pool"
    "pool-dumpxml default-pool"
    "vol-list default-pool"
)

# The changes a pool-event subscriber sees, each by a virsh of its own.
changes=(
    "pool-define transient.xml"
    "pool-build rvtr"
    "pool-start rvtr"
    "pool-refresh rvtr"
    "pool-destroy rvtr"
    "pool-delete rvtr"
    "pool-undefine rvtr"
    "pool-create transient.xml"
    "pool-refresh default-pool"
    "pool-destroy rvtr"
)
_warm_once()
{
    local uri=$1 f
    shift
    (cd "$xmldir" && virsh -q -c "$uri" "pool-define p1.xml; pool-undefine rvp1") >/dev/null 2>&1
    for f; do
        grep -q "for storage pool rvp1: Undefined" "$f" || return 1
    done
}
# events URI NAME: `virsh pool-event --loop` for lifecycle and refresh
# events while the changes run.
events()
{
    local uri=$1 out=$RV_TMP/events-$2
    bg "$out-lifecycle" virsh -c "$uri" pool-event --event lifecycle --loop
    local life=$BG_PID
    bg "$out-refresh" virsh -c "$uri" pool-event --event refresh --loop
    local refresh=$BG_PID rvsh_pids=() watched=("$out-lifecycle")
    # Against remvirtd, rvsh pool-event watches too, both kinds.
    if [ "$2" = remvirtd ]; then
        bg "$RV_TMP/rvsh-lifecycle" "$RVSH" -c "$uri" pool-event --loop
        rvsh_pids+=("$BG_PID")
        bg "$RV_TMP/rvsh-refresh" "$RVSH" -c "$uri" pool-event --event refresh --loop
        rvsh_pids+=("$BG_PID")
        watched+=("$RV_TMP/rvsh-lifecycle")
    fi
    wait_for $((30 * RV_SLOW)) "pool-event to see the warm-up" _warm_once "$uri" "${watched[@]}"
    local change
    for change in "${changes[@]}"; do
        # Word splitting on purpose: each change is a command and its argument.
        # shellcheck disable=SC2086
        (cd "$xmldir" && virsh -q -c "$uri" $change) >/dev/null ||
            fail "virsh $change failed against $uri"
    done
    wait_for $((10 * RV_SLOW)) "pool-event to see the last change" \
        grep -q "for storage pool rvtr: Stopped" "$out-lifecycle"
    wait_for $((10 * RV_SLOW)) "pool-event to see the last refresh" \
        grep -q "for storage pool default-pool" "$out-refresh"
    kill -INT "$life" "$refresh"
    finish "$life" || true
    finish "$refresh" || true
    if [ "${#rvsh_pids[@]}" -gt 0 ]; then
        wait_for $((10 * RV_SLOW)) "rvsh pool-event to see the last change" \
            grep -q "for storage pool rvtr: Stopped" "$RV_TMP/rvsh-lifecycle"
        wait_for $((10 * RV_SLOW)) "rvsh pool-event to see the last refresh" \
            grep -q "for storage pool default-pool" "$RV_TMP/rvsh-refresh"
        kill -INT "${rvsh_pids[@]}"
        local pid
        for pid in "${rvsh_pids[@]}"; do
            finish "$pid" || true
        done
    fi
    # The warm-up's events and the count of events differ.
    cat "$out-lifecycle" "$out-refresh" |
        grep -v -e 'for storage pool rvp1' -e '^events received' > "$RV_TMP/events-$2.txt"
}

# python3-libvirt's view of the same pools and volumes.
pycheck()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys, time, libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(sys.argv[1])
def t(what, f):
    try:
        print(what, f())
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
for p in sorted(conn.listAllStoragePools(), key=lambda p: p.name()):
    print(p.name(), p.UUIDString(), p.isActive(), p.isPersistent(), p.autostart(), p.info())
print(conn.numOfStoragePools(), conn.numOfDefinedStoragePools(), conn.listStoragePools(),
      conn.listDefinedStoragePools())
pool = conn.storagePoolLookupByName('default-pool')
print(pool.XMLDesc(0), end='')
print(conn.storagePoolLookupByUUIDString('dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566').name())
t('lookup nosuch', lambda: conn.storagePoolLookupByName('nosuch'))
t('uuid nosuch', lambda: conn.storagePoolLookupByUUIDString('7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3cff'))
t('define bad root', lambda: conn.storagePoolDefineXML('<nosuch/>'))
t('define garbage', lambda: conn.storagePoolDefineXML('garbage<'))
t('xml flags', lambda: pool.XMLDesc(1))
t('list flags', lambda: conn.listAllStoragePools(1 << 20))
t('start active', lambda: pool.create())
for kind, spec, flags in (('logical', None, 0), ('netfs', None, 0),
                          ('netfs', "<source><host name='nfs.example.com'/></source>", 0),
                          ('netfs', '<source>', 0), ('netfs', '<nosuch/>', 0), ('fs', None, 0),
                          ('dir', None, 0), ('bogus', None, 0), ('logical', None, 1)):
    t(f'sources {kind} {spec} {flags}', lambda: conn.findStoragePoolSources(kind, spec, flags))
seen = []
cbs = [conn.storagePoolEventRegisterAny(None, libvirt.VIR_STORAGE_POOL_EVENT_ID_LIFECYCLE,
                                        lambda c, p, ev, det, o: seen.append((p.name(), ev, det)),
                                        None),
       conn.storagePoolEventRegisterAny(pool, libvirt.VIR_STORAGE_POOL_EVENT_ID_REFRESH,
                                        lambda c, p, o: seen.append((p.name(), 'refresh')), None)]
vol = pool.createXML("<volume><name>pyv</name><capacity unit='M'>8</capacity>"
                     "<allocation unit='M'>2</allocation></volume>", 0)
print(vol.name(), vol.key(), vol.path(), vol.info(), pool.info())
print(vol.XMLDesc(0), end='')
clone = pool.createXMLFrom("<volume><name>pyc</name><capacity>4096</capacity></volume>", vol, 0)
print(sorted(v.name() for v in pool.listAllVolumes()), sorted(pool.listVolumes()), pool.numOfVolumes())
print(conn.storageVolLookupByKey('/default-pool/pyc').name(),
      conn.storageVolLookupByPath('/default-pool/pyv').name(),
      pool.storageVolLookupByName('pyc').storagePoolLookupByVolume().name())
t('vol exists', lambda: pool.createXML("<volume><name>pyv</name><capacity>1</capacity></volume>"))
t('vol too big', lambda: pool.createXML("<volume><name>big</name><capacity unit='T'>200</capacity></volume>"))
t('vol bad unit', lambda: pool.createXML("<volume><name>u</name><capacity unit='xx'>1</capacity></volume>"))
t('vol bad format', lambda: pool.createXML("<volume><name>f</name><capacity>1</capacity>"
                                          "<target><format type='bogus'/></target></volume>"))
t('vol by name nosuch', lambda: pool.storageVolLookupByName('nosuch'))
t('vol by key nosuch', lambda: conn.storageVolLookupByKey('nosuch'))
t('vol by path nosuch', lambda: conn.storageVolLookupByPath('/nosuch'))
t('clone of nosuch', lambda: pool.createXMLFrom("<volume><name>c2</name><capacity>1</capacity></volume>",
                                               pool.storageVolLookupByName('nosuch'), 0))
t('resize', lambda: vol.resize(1 << 30))
t('wipe', lambda: vol.wipe())
t('refresh', lambda: pool.refresh(0))
t('build active', lambda: pool.build(0))
t('delete active', lambda: pool.delete(0))
t('list vols flags', lambda: pool.listAllVolumes(1))
pyp = conn.storagePoolDefineXML("<pool type='dir'><name>pyp</name>"
                                "<uuid>7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c21</uuid>"
                                "<target><path>/pyp</path></target></pool>", 0)
pyp.build(0)
t('build flags', lambda: pyp.build(libvirt.VIR_STORAGE_POOL_BUILD_OVERWRITE))
t('vols of inactive', lambda: pyp.listAllVolumes())
t('num vols of inactive', lambda: pyp.numOfVolumes())
t('vol in inactive', lambda: pyp.createXML("<volume><name>x</name><capacity>1</capacity></volume>"))
pyp.create(0)
pyp.setAutostart(1)
print(pyp.autostart(), pyp.isActive(), pyp.info())
print(sorted(p.name() for p in conn.listAllStoragePools(libvirt.VIR_CONNECT_LIST_STORAGE_POOLS_AUTOSTART)))
print(sorted(p.name() for p in conn.listAllStoragePools(libvirt.VIR_CONNECT_LIST_STORAGE_POOLS_DIR |
                                                        libvirt.VIR_CONNECT_LIST_STORAGE_POOLS_TRANSIENT)))
pyp.destroy()
pyp.delete(0)
pyp.undefine()
vol.delete(0)
clone.delete(0)
t('deleted vol', lambda: vol.info())
print(pool.info())
libvirt.virEventAddTimeout(100, lambda timer, opaque: None, None)  # wake the loop
deadline = time.time() + 10
while len(seen) < 7 and time.time() < deadline:
    libvirt.virEventRunDefaultImpl()
print('events', seen)
for cb in cbs:
    conn.storagePoolEventDeregisterAny(cb)
conn.close()
PY
}

start_libvirtd
virsh_transcript "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" "$xmldir" | sockets_as_word "$LIBVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" \
    > "$RV_TMP/libvirtd.txt"
events "$LIBVIRTD_URI" libvirtd
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    pycheck "$LIBVIRTD_URI" > "$RV_TMP/py-libvirtd.txt" 2>&1
fi
stop_libvirtd

start_remvirtd
virsh_transcript "$REMVIRTD_URI" "$REMVIRTD_URI_RO" "$xmldir" | sockets_as_word "$REMVIRTD_SOCK_RO" "$REMVIRTD_SOCK" \
    > "$RV_TMP/remvirtd.txt"
events "$REMVIRTD_URI" remvirtd
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    pycheck "$REMVIRTD_URI" > "$RV_TMP/py-remvirtd.txt" 2>&1
fi

# rvsh prints what virsh prints, one command at a time against remvirtd
# (which keeps its state between connections).
rvsh_steps=(
    "pool-list" "pool-list --all" "pool-info default-pool" "pool-dumpxml default-pool"
    "vol-list default-pool" "pool-define p1.xml" "pool-list --all" "pool-list --inactive"
    "pool-info rvp1" "pool-dumpxml rvp1" "pool-start rvp1" "pool-start rvp1" "pool-info rvp1"
    "pool-autostart rvp1" "pool-list --all" "pool-autostart rvp1 --disable"
    "vol-create rvp1 vol1.xml" "vol-create rvp1 vol2.xml" "vol-create rvp1 vol1.xml"
    "vol-list rvp1" "vol-info vol1.img --pool rvp1" "vol-info /var/lib/rvp1/vol2.qcow2"
    "vol-dumpxml vol2.qcow2 --pool rvp1" "vol-path vol1.img --pool rvp1" "pool-info rvp1"
    "vol-key vol1.img --pool rvp1" "vol-name /var/lib/rvp1/vol1.img"
    "vol-pool /var/lib/rvp1/vol1.img" "vol-name /nosuch" "vol-name --pool rvp1 vol1.img"
    "pool-uuid rvp1" "pool-name 7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c01" "pool-name rvp1"
    "pool-uuid nosuch" "pool-build rvp1" "pool-refresh rvp1" "pool-delete rvp1"
    "vol-delete vol1.img --pool rvp1" "vol-delete /var/lib/rvp1/vol2.qcow2"
    "vol-info nosuch --pool rvp1" "vol-info /nosuch" "vol-info nosuch --pool nosuch"
    "pool-undefine rvp1" "pool-destroy rvp1" "pool-destroy rvp1" "pool-refresh rvp1"
    "pool-build rvp1" "pool-delete rvp1" "pool-undefine rvp1"
    "pool-create transient.xml" "pool-create transient.xml" "pool-destroy rvtr"
    "pool-create wrongroot.xml" "pool-build nosuch"
    "pool-info nosuch" "pool-start nosuch" "pool-info 7b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3cff"
    "pool-info dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566" "pool-define wrongroot.xml"
    "pool-define garbage.xml" "pool-define clash.xml" "vol-create default-pool vbadunit.xml"
    "vol-create nosuch vol1.xml" "vol-create default-pool /nonexistent.xml" "pool-list --all"
)
for tool in virsh "$RVSH"; do
    for step in "${rvsh_steps[@]}"; do
        rc=0
        # Word splitting on purpose: each step is a command and its options.
        # shellcheck disable=SC2086
        (cd "$xmldir" && "$tool" -c "$REMVIRTD_URI" $step) >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== %s\n' "$step"
        cat "$RV_TMP/out"
        echo "--- stderr"
        cat "$RV_TMP/err"
        echo "--- exit status $rc"
    done > "$RV_TMP/tool-$(basename "$tool").txt"
done

status=0
if ! diff -u "$RV_TMP/tool-virsh.txt" "$RV_TMP/tool-rvsh.txt"; then
    echo "rvsh's pool-*/vol-* output differs from virsh's (--- virsh, +++ rvsh)"
    status=1
fi
(cd "$xmldir" && "$RVSH" -c "$REMVIRTD_URI" vol-create default-pool vol1.xml) >/dev/null ||
    { echo "rvsh vol-create failed"; status=1; }
jsoncheck()
{
    local expr=$1
    shift
    "$RVSH" -c "$REMVIRTD_URI" "$@" --json > "$RV_TMP/json" &&
        "$SYSTEM_PYTHON3" -c "import json, sys; d = json.load(open(sys.argv[1])); assert $expr, d" \
            "$RV_TMP/json" ||
        { echo "rvsh $* --json: not the expected JSON"; cat "$RV_TMP/json"; status=1; }
}
jsoncheck 'd[0]["name"] == "default-pool" and d[0]["state"] == "active" and d[0]["persistent"] is True' \
    pool-list --all
jsoncheck 'd["state"] == "running" and d["capacity"] == 100 << 30 and d["allocation"] == 0' \
    pool-info default-pool
jsoncheck 'd == [{"name": "vol1.img", "path": "/default-pool/vol1.img"}]' vol-list default-pool
jsoncheck 'd["type"] == "file" and d["capacity"] == 10 << 20 and d["allocation"] == 0' \
    vol-info vol1.img --pool default-pool
"$RVSH" -c "$REMVIRTD_URI" vol-delete vol1.img --pool default-pool >/dev/null ||
    { echo "rvsh vol-delete failed"; status=1; }
if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh pool-*/vol-* output differs (--- libvirtd, +++ remvirtd)"
    status=1
fi
if ! diff -u "$RV_TMP/events-libvirtd.txt" "$RV_TMP/events-remvirtd.txt"; then
    echo "virsh pool-event output differs (--- libvirtd, +++ remvirtd)"
    status=1
fi
[ "$(grep -c "^event '" "$RV_TMP/events-remvirtd.txt")" -eq "${#changes[@]}" ] ||
    { cat "$RV_TMP/events-remvirtd.txt"; echo "pool-event saw other than one event a change"; status=1; }
grep "^event '" "$RV_TMP/events-remvirtd.txt" > "$RV_TMP/events-virsh-lines"
cat "$RV_TMP/rvsh-lifecycle" "$RV_TMP/rvsh-refresh" | grep "^event '" |
    grep -v 'for storage pool rvp1' > "$RV_TMP/events-rvsh-lines" || true
if ! diff -u "$RV_TMP/events-virsh-lines" "$RV_TMP/events-rvsh-lines"; then
    echo "rvsh pool-event prints other events than virsh pool-event (--- virsh, +++ rvsh)"
    status=1
fi
if [ -f "$RV_TMP/py-libvirtd.txt" ] &&
   ! diff -u "$RV_TMP/py-libvirtd.txt" "$RV_TMP/py-remvirtd.txt"; then
    echo "python3-libvirt's storage calls differ (--- libvirtd, +++ remvirtd)"
    status=1
fi
[ "$status" -eq 0 ] || fail "storage commands against remvirtd do not match libvirtd"
echo "virsh: ${#steps[@]} pool-*/vol-* sequences, pool-event (${#changes[@]} changes) and" \
     "python3-libvirt print the same against remvirtd and libvirtd;" \
     "rvsh prints what virsh prints for ${#rvsh_steps[@]} commands and pool-event"
