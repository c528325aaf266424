#!/usr/bin/env bash
# Host devices of the test driver: virsh's nodedev-* commands and
# python3-libvirt's node device calls against remvirtd and against
# libvirtd's test driver must print the same (lists sorted: libvirtd's
# come in hash-table order), with a vHBA created and destroyed (and its
# lifecycle events) and the define calls libvirtd's test driver lacks.
# libvirtd's test driver forgets what was created when its last client
# leaves, remvirtd's does not: each sequence that changes devices runs in
# one virsh (or python) connection and puts them back as they were.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

steps=(
    # virsh 9.0 asks for active devices, which libvirt's test driver refuses.
    "nodedev-list"
    "nodedev-list --cap scsi_host"
    "nodedev-dumpxml computer"
    "nodedev-dumpxml scsi_host1"
    "nodedev-dumpxml scsi_host11"
    "nodedev-dumpxml scsi_host2"
    "nodedev-info computer"
    "nodedev-info scsi_host11"
    "nodedev-dumpxml nosuch"
    "nodedev-info nosuch"
    # Created and destroyed in one connection; errors; the calls of the
    # define family that libvirtd's test driver does not have.
    "nodedev-create vhba.xml; nodedev-dumpxml scsi_host12; nodedev-info scsi_host12;
     nodedev-create vhba2.xml; nodedev-dumpxml scsi_host12; nodedev-destroy scsi_host12;
     nodedev-dumpxml scsi_host12; nodedev-destroy computer; nodedev-dumpxml computer"
    "nodedev-create no-wwnn.xml"
    "nodedev-create bad-parent.xml"
    "nodedev-create not-vport.xml"
    "nodedev-create mdev.xml"
    "nodedev-create garbage.xml"
    "nodedev-create no-caps.xml"
    "nodedev-create bad-cap.xml"
    "nodedev-destroy nosuch"
    "nodedev-define vhba.xml"
    "nodedev-undefine scsi_host1"
    "nodedev-start scsi_host1"
    "nodedev-autostart scsi_host1"
    "nodedev-autostart --disable scsi_host1"
    "ro:nodedev-create vhba.xml"
    "ro:nodedev-destroy scsi_host11"
)
dir=$RV_TMP/cwd
mkdir -p "$dir"
fc_xml()
{
    printf "<device>%s<capability type='scsi_host'><capability type='fc_host'>%s</capability></capability></device>\n" "$1" "$2"
}
fc_xml "<parent>scsi_host1</parent>" "<wwnn>2000000012341111</wwnn><wwpn>1000000012341111</wwpn>" > "$dir/vhba.xml"
fc_xml "<parent wwnn='2000000056785678' wwpn='1000000056785678'/>" \
    "<wwnn>2000000012342222</wwnn><wwpn>1000000012342222</wwpn>" > "$dir/vhba2.xml"
fc_xml "<parent>scsi_host1</parent>" "<wwpn>1000000012341111</wwpn>" > "$dir/no-wwnn.xml"
fc_xml "<parent>nosuch</parent>" "<wwnn>2000000012341111</wwnn><wwpn>1000000012341111</wwpn>" \
    > "$dir/bad-parent.xml"
fc_xml "<parent>scsi_host11</parent>" "<wwnn>2000000012341111</wwnn><wwpn>1000000012341111</wwpn>" \
    > "$dir/not-vport.xml"
printf "<device><parent>computer</parent><capability type='mdev'><type id='nvidia-11'/></capability></device>" \
    > "$dir/mdev.xml"
printf 'not xml' > "$dir/garbage.xml"
printf '<device><parent>scsi_host1</parent></device>' > "$dir/no-caps.xml"
printf "<device><capability type='bogus'/></device>" > "$dir/bad-cap.xml"

transcript()
{
    virsh_transcript "$1" "$2" "$dir"
    # Lifecycle events of a vHBA created and destroyed (by another client,
    # while the listener keeps libvirtd's test driver state).
    virsh -c "$1" nodedev-event --event lifecycle --loop --timeout 3 > "$RV_TMP/events" 2>&1 &
    local listener=$!
    sleep 1
    (cd "$dir" && virsh -c "$1" "nodedev-create vhba.xml; nodedev-destroy scsi_host12") > /dev/null
    wait "$listener" || true
    echo "=== nodedev-event --event lifecycle"
    cat "$RV_TMP/events"
}

pycheck()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys, libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
conn = libvirt.open(sys.argv[1])
def t(what, f):
    try:
        print(what, f())
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
for cap in (None, 'system', 'scsi_host', 'fc_host', 'vports', 'vport_ops', 'net', 'bogus'):
    t(f'num {cap}', lambda: conn.numOfDevices(cap, 0))
    t(f'list {cap}', lambda: sorted(conn.listDevices(cap, 0)))
t('num flags', lambda: conn.numOfDevices(None, 1))
F = {name: getattr(libvirt, 'VIR_CONNECT_LIST_NODE_DEVICES_' + name)
     for name in ('CAP_SYSTEM', 'CAP_SCSI_HOST', 'CAP_FC_HOST', 'CAP_VPORTS', 'CAP_NET',
                  'CAP_PCI_DEV', 'ACTIVE', 'INACTIVE')}
t('all', lambda: sorted(d.name() for d in conn.listAllDevices(0)))
for name, flag in F.items():
    t(f'all {name}', lambda: sorted(d.name() for d in conn.listAllDevices(flag)))
t('all system|fc', lambda: sorted(d.name() for d in conn.listAllDevices(
    F['CAP_SYSTEM'] | F['CAP_FC_HOST'])))
for name in ('computer', 'scsi_host1', 'scsi_host11', 'scsi_host2'):
    d = conn.nodeDeviceLookupByName(name)
    print(name, d.parent(), d.numOfCaps(), d.listCaps())
    print(d.XMLDesc(0), end='')
t('xml flags', lambda: conn.nodeDeviceLookupByName('computer').XMLDesc(1))
t('lookup nosuch', lambda: conn.nodeDeviceLookupByName('nosuch'))
t('active', lambda: conn.nodeDeviceLookupByName('computer').isActive())
t('by wwn', lambda: conn.nodeDeviceLookupSCSIHostByWWN('2000000012341234', '1000000012341234', 0))
for name in ('computer', 'scsi_host1'):
    d = conn.nodeDeviceLookupByName(name)
    for call in ('isActive', 'isPersistent', 'autostart'):
        t(f'{name} {call}', getattr(d, call))
    t(f'{name} setAutostart', lambda: d.setAutostart(1))
    t(f'{name} create', lambda: d.create(0))
    t(f'{name} undefine', lambda: d.undefine(0))
vhba = ("<device><parent>scsi_host2</parent><capability type='scsi_host'><capability type='fc_host'>"
        "<wwnn>2000000012343333</wwnn><wwpn>1000000012343333</wwpn></capability></capability></device>")
t('create flags', lambda: conn.nodeDeviceCreateXML(vhba, 2))
t('define', lambda: conn.nodeDeviceDefineXML(vhba, 0))
d = conn.nodeDeviceCreateXML(vhba, 0)
print('created', d.name(), d.parent(), d.listCaps(), sorted(x.name() for x in conn.listAllDevices(0)))
print(d.XMLDesc(0), end='')
t('destroy', d.destroy)
t('destroy again', d.destroy)
conn.close()
PY
}

start_libvirtd
transcript "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" | sockets_as_word "$LIBVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" \
    > "$RV_TMP/libvirtd.txt"
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    pycheck "$LIBVIRTD_URI" > "$RV_TMP/py-libvirtd.txt" 2>&1
fi
stop_libvirtd

start_remvirtd
transcript "$REMVIRTD_URI" "$REMVIRTD_URI_RO" | sockets_as_word "$REMVIRTD_SOCK_RO" "$REMVIRTD_SOCK" \
    > "$RV_TMP/remvirtd.txt"
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    pycheck "$REMVIRTD_URI" > "$RV_TMP/py-remvirtd.txt" 2>&1
fi

status=0
if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh nodedev-* output differs (--- libvirtd, +++ remvirtd)"
    status=1
fi
if [ -f "$RV_TMP/py-libvirtd.txt" ] &&
   ! diff -u "$RV_TMP/py-libvirtd.txt" "$RV_TMP/py-remvirtd.txt"; then
    echo "python3-libvirt's node device calls differ (--- libvirtd, +++ remvirtd)"
    status=1
fi
grep -q "<name>scsi_host11</name>" "$RV_TMP/remvirtd.txt" || { echo "no device XML"; status=1; }
grep -q "Node device scsi_host12 created from vhba.xml" "$RV_TMP/remvirtd.txt" &&
    grep -q "event 'lifecycle' for node device scsi_host12: Deleted" "$RV_TMP/remvirtd.txt" ||
    { echo "no vHBA created, destroyed and told of"; status=1; }
[ "$status" -eq 0 ] || fail "node device commands against remvirtd do not match libvirtd"
echo "virsh: ${#steps[@]} nodedev-* commands and python3-libvirt's node device calls print" \
     "the same against remvirtd and libvirtd"
