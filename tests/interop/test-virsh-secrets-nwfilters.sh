#!/usr/bin/env bash
# Secrets, network filters and host interfaces: virsh's commands for them
# and python3-libvirt's calls, against remvirtd and against libvirtd's test
# driver; the outputs must be the same, byte for byte (the socket path
# aside).  libvirtd's test driver has no secrets, no filters and no filter
# bindings (defining, setting, undefining and their events answer
# NO_SUPPORT too), and one host interface (eth1).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

steps=(
    "secret-list"
    "secret-list --ephemeral"
    "secret-list --private"
    "secret-list --no-ephemeral --no-private"
    "secret-dumpxml 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "secret-get-value 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "nwfilter-list"
    "nwfilter-dumpxml no-such-filter"
    "nwfilter-dumpxml 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "nwfilter-binding-list"
    "iface-list --all"
    "iface-dumpxml eth1"
    "iface-dumpxml eth1 --inactive"
    "iface-dumpxml nosuch"
    "iface-mac eth1"
    "iface-name aa:bb:cc:dd:ee:ff"
    "iface-name 00:00:00:00:00:00"
    "iface-mac nosuch"
    "ro:secret-list"
    "ro:nwfilter-list"
    "ro:nwfilter-binding-list"
    "ro:iface-dumpxml eth1"
    "ro:iface-mac eth1"
    "secret-define secret.xml"
    "secret-set-value 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f --file value --plain"
    "secret-undefine 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "secret-event --event lifecycle --timeout 1"
    "nwfilter-define filter.xml"
    "nwfilter-undefine no-such-filter"
    "ro:secret-define secret.xml"
    "ro:nwfilter-define filter.xml"
)

pycheck()
{
    "$SYSTEM_PYTHON3" - "$1" "$2" <<'PY'
import sys, libvirt
libvirt.registerErrorHandler(lambda ctx, err: None, None)
conn = libvirt.open(sys.argv[1])
ro = libvirt.openReadOnly(sys.argv[2])
uuid = '0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f'
def show(what, f):
    try:
        print(what, repr(f()))
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
for c, name in ((conn, 'rw'), (ro, 'ro')):
    show(name + ' listAllSecrets', lambda: c.listAllSecrets(0))
    show(name + ' numOfSecrets', c.numOfSecrets)
    show(name + ' listSecrets', c.listSecrets)
    show(name + ' secretLookupByUUIDString', lambda: c.secretLookupByUUIDString(uuid))
    show(name + ' secretLookupByUsage', lambda: c.secretLookupByUsage(libvirt.VIR_SECRET_USAGE_TYPE_VOLUME, '/x'))
    show(name + ' listAllNWFilters', lambda: c.listAllNWFilters(0))
    show(name + ' numOfNWFilters', c.numOfNWFilters)
    show(name + ' listNWFilters', c.listNWFilters)
    show(name + ' nwfilterLookupByName', lambda: c.nwfilterLookupByName('clean-traffic'))
    show(name + ' nwfilterLookupByUUIDString', lambda: c.nwfilterLookupByUUIDString(uuid))
    show(name + ' listAllNWFilterBindings', lambda: c.listAllNWFilterBindings(0))
    show(name + ' nwfilterBindingLookupByPortDev', lambda: c.nwfilterBindingLookupByPortDev('vnet0'))
    show(name + ' secretDefineXML', lambda: c.secretDefineXML('<secret/>', 0))
    show(name + ' nwfilterDefineXML', lambda: c.nwfilterDefineXML("<filter name='f'/>"))
    show(name + ' nwfilterDefineXMLFlags', lambda: c.nwfilterDefineXMLFlags("<filter name='f'/>", 0))
    show(name + ' interfaces', lambda: [(i.name(), i.MACString(), i.XMLDesc(0))
                                        for i in c.listAllInterfaces(0)])
    show(name + ' interfaceLookupByName', lambda: c.interfaceLookupByName('eth1').MACString())
    show(name + ' interfaceLookupByName nosuch', lambda: c.interfaceLookupByName('nosuch'))
    show(name + ' interfaceLookupByMACString', lambda: c.interfaceLookupByMACString('aa:bb:cc:dd:ee:ff').name())
    show(name + ' interfaceLookupByMACString nosuch', lambda: c.interfaceLookupByMACString('00:00:00:00:00:01'))
PY
}

dir=$RV_TMP/cwd
mkdir -p "$dir"
printf "<secret ephemeral='no' private='no'><uuid>0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f</uuid></secret>" \
    > "$dir/secret.xml"
printf 'hunter2' > "$dir/value"
printf "<filter name='f1'><rule action='drop' direction='in'><all/></rule></filter>" > "$dir/filter.xml"

start_libvirtd
virsh_transcript "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" "$dir" | sockets_as_word "$LIBVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" \
    > "$RV_TMP/libvirtd.txt"
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    pycheck "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" > "$RV_TMP/py-libvirtd.txt" 2>&1
fi
stop_libvirtd

start_remvirtd
virsh_transcript "$REMVIRTD_URI" "$REMVIRTD_URI_RO" "$dir" | sockets_as_word "$REMVIRTD_SOCK_RO" "$REMVIRTD_SOCK" \
    > "$RV_TMP/remvirtd.txt"
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    pycheck "$REMVIRTD_URI" "$REMVIRTD_URI_RO" > "$RV_TMP/py-remvirtd.txt" 2>&1
fi

status=0
if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh prints differently against remvirtd (+++) than against libvirtd (---)"
    status=1
fi
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    if ! diff -u "$RV_TMP/py-libvirtd.txt" "$RV_TMP/py-remvirtd.txt"; then
        echo "python3-libvirt sees remvirtd (+++) differently from libvirtd (---)"
        status=1
    fi
else
    echo "# python3-libvirt not installed: its checks skipped"
fi
[ "$status" != 0 ] || echo "ok   virsh and python3-libvirt see the same from both daemons ($(wc -l < "$RV_TMP/remvirtd.txt") lines)"
exit $status
