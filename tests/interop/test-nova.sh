#!/usr/bin/env bash
# nova's libvirt driver (Debian 12's python3-nova 26, in-process:
# tests/interop/nova-host.py) against remvirtd's QEMU driver and against
# libvirtd's, on this host: what nova-compute does at start and in its
# periodic update (init_host, get_available_resource,
# update_provider_tree) must work and read the same host from both: the
# vCPUs, memory, NUMA cells with their CPUs and memory, the CPU's arch,
# vendor, model, topology and features, the placement inventory and traits
# (issue 29: update_provider_tree failed on a capabilities <host> with no
# <topology><cells>).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c 'import nova.virt.libvirt.driver'
start_libvirtd_qemu
start_remvirtd_qemu
nova() { env PYTHONDONTWRITEBYTECODE=1 "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/nova-host.py" "$@"; }
mkdir -p "$RV_TMP/nova-lv" "$RV_TMP/nova-rv"
nova "$LIBVIRTD_QEMU_URI" "$RV_TMP/nova-lv" > "$RV_TMP/libvirtd.out" 2> "$RV_TMP/libvirtd.err" ||
    { cat "$RV_TMP/libvirtd.err"; fail "nova against libvirtd"; }
nova "$QEMU_URI" "$RV_TMP/nova-rv" > "$RV_TMP/remvirtd.out" 2> "$RV_TMP/remvirtd.err" ||
    { tail -30 "$RV_TMP/remvirtd.err"; fail "nova against remvirtd"; }
grep -q "^numa cells [1-9]" "$RV_TMP/remvirtd.out" || fail "nova read no NUMA cell from remvirtd"
# Traits that follow from what remvirtd's QEMU driver does not run (its
# domain capabilities leave them out, as they should): the vmware video
# model and floppy and SCSI disk buses (docs/compatibility.md).
for trait in COMPUTE_GRAPHICS_MODEL_VMVGA COMPUTE_STORAGE_BUS_FDC COMPUTE_STORAGE_BUS_SCSI; do
    sed -i "/^traits /s/ $trait\b//" "$RV_TMP/libvirtd.out" "$RV_TMP/remvirtd.out"
done
same "$RV_TMP/libvirtd.out" "$RV_TMP/remvirtd.out" "nova's view of the host as through libvirtd"
cat "$RV_TMP/remvirtd.out"
