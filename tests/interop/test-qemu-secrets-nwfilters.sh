#!/usr/bin/env bash
# Secrets, network filters and host interfaces on the QEMU driver, with
# none defined (test-qemu-secrets-define.sh defines them): virsh and
# python3-libvirt must see what libvirtd's QEMU host with none answers
# (empty lists, "not found" lookups, the same flag checks), byte for
# byte; the host's interfaces
# (sysfs) looked up by name and MAC and described as libvirtd's udev
# backend describes them.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'

# virsh steps and python3-libvirt calls, the same for both daemons.
qsteps=(
    "secret-list"
    "secret-list --ephemeral"
    "secret-list --private --no-ephemeral"
    "secret-dumpxml 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "secret-get-value 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "nwfilter-list"
    "nwfilter-dumpxml no-such-filter"
    "nwfilter-dumpxml 0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f"
    "nwfilter-binding-list"
    "iface-mac nosuch"
    "iface-name 00:11:22:33:44:55"
    "iface-dumpxml nosuch"
    "iface-dumpxml .."
)
# The host's interfaces (sysfs) by name and by MAC, and their XML.
for i in /sys/class/net/*; do
    qsteps+=("iface-mac ${i##*/}" "iface-name $(cat "$i/address")" "iface-dumpxml ${i##*/}"
             "iface-dumpxml ${i##*/} --inactive")
done
qpy()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys, libvirt
libvirt.registerErrorHandler(lambda ctx, err: None, None)
c = libvirt.open(sys.argv[1])
uuid = '0a81f5b2-8403-7b23-c8d6-21ccc2f80d6f'
def show(what, f):
    try:
        print(what, repr(f()))
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
show('listAllSecrets', lambda: c.listAllSecrets(0))
show('listAllSecrets 15', lambda: c.listAllSecrets(15))
show('listAllSecrets 16', lambda: c.listAllSecrets(16))
show('numOfSecrets', c.numOfSecrets)
show('listSecrets', c.listSecrets)
show('secretLookupByUUIDString', lambda: c.secretLookupByUUIDString(uuid))
show('secretLookupByUsage', lambda: c.secretLookupByUsage(libvirt.VIR_SECRET_USAGE_TYPE_VOLUME, '/x'))
show('listAllNWFilters', lambda: c.listAllNWFilters(0))
show('listAllNWFilters 1', lambda: c.listAllNWFilters(1))
show('numOfNWFilters', c.numOfNWFilters)
show('listNWFilters', c.listNWFilters)
show('nwfilterLookupByName', lambda: c.nwfilterLookupByName('clean-traffic'))
show('nwfilterLookupByUUIDString', lambda: c.nwfilterLookupByUUIDString(uuid))
show('listAllNWFilterBindings', lambda: c.listAllNWFilterBindings(0))
show('listAllNWFilterBindings 1', lambda: c.listAllNWFilterBindings(1))
show('nwfilterBindingLookupByPortDev', lambda: c.nwfilterBindingLookupByPortDev('vnet0'))
# Sorted: the two list sysfs in different orders.
for i in sorted(c.listAllInterfaces(0), key=lambda i: i.name()):
    show('interface ' + i.name(), lambda: (c.interfaceLookupByName(i.name()).MACString(),
                                           c.interfaceLookupByMACString(i.MACString()).name(),
                                           i.XMLDesc(0) == i.XMLDesc(1)))
show('interfaceLookupByName nosuch', lambda: c.interfaceLookupByName('nosuch'))
show('interfaceLookupByMACString nosuch', lambda: c.interfaceLookupByMACString('00:11:22:33:44:55'))
show('interface XMLDesc 2', lambda: c.listAllInterfaces(0)[0].XMLDesc(2))
PY
}

# transcript URI: each step's output, error and exit status.
transcript()
{
    local step rc
    for step in "${qsteps[@]}"; do
        rc=0
        # Word splitting on purpose: each step is a command and its arguments.
        # shellcheck disable=SC2086
        virsh -c "$1" $step >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== virsh %s\n' "$step"
        cat "$RV_TMP/out"
        echo "--- stderr"
        cat "$RV_TMP/err"
        echo "--- exit status $rc"
    done
    qpy "$1"
}

start_libvirtd_qemu
transcript "$LIBVIRTD_QEMU_URI" > "$RV_TMP/libvirtd.txt" 2>&1
start_remvirtd_qemu
transcript "$QEMU_URI" > "$RV_TMP/remvirtd.txt" 2>&1

if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh and python3-libvirt see remvirtd's QEMU driver (+++) differently from libvirtd's (---)"
    exit 1
fi
grep -q "Secret not found" "$RV_TMP/remvirtd.txt" || fail "no secret lookup was answered"
echo "ok   secrets, nwfilters and interfaces: the QEMU driver answers as libvirtd's ($(wc -l < "$RV_TMP/remvirtd.txt") lines)"
