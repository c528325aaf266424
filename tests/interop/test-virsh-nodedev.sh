#!/usr/bin/env bash
# Host devices of the test driver: virsh's nodedev-* commands and
# python3-libvirt's node device calls against remvirtd and against
# libvirtd's test driver must print the same (lists sorted: libvirtd's
# come in hash-table order).
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
)

transcript()
{
    local step rc
    for step in "${steps[@]}"; do
        rc=0
        virsh -c "$1" "$step" >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== virsh %s\n' "$step"
        cat "$RV_TMP/out"
        echo "--- stderr"
        cat "$RV_TMP/err"
        echo "--- exit status $rc"
    done
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
conn.close()
PY
}

start_libvirtd
transcript "$LIBVIRTD_URI" > "$RV_TMP/libvirtd.txt"
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    pycheck "$LIBVIRTD_URI" > "$RV_TMP/py-libvirtd.txt" 2>&1
fi
stop_libvirtd

start_remvirtd
transcript "$REMVIRTD_URI" > "$RV_TMP/remvirtd.txt"
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
[ "$status" -eq 0 ] || fail "node device commands against remvirtd do not match libvirtd"
echo "virsh: ${#steps[@]} nodedev-* commands and python3-libvirt's node device calls print" \
     "the same against remvirtd and libvirtd"
