#!/usr/bin/env bash
# The QEMU driver's directory pools side by side with libvirtd 9.0's
# storage driver: one virsh sequence (pool-define-as, pool-build,
# pool-start, pool-info, vol-create-as raw and qcow2, a clash, vol-list,
# vol-info, vol-dumpxml, vol-clone, vol-resize up and below the
# allocation, vol-wipe, pool-dumpxml, pool-undefine while active,
# vol-delete, pool-destroy, pool-delete, pool-undefine) against both
# prints the same, once paths, uuids, owners and timestamps are set
# aside.  libvirtd runs as qemu:///session of user nobody (its files
# under the test's directory, nothing of the host's touched); remvirtd
# as the test's user.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires virsh
requires libvirtd --version
requires setpriv --version
requires qemu-img --version
start_remvirtd_qemu
OUT=$RV_TMP/out
mkdir -p "$OUT"

# libvirtd for user nobody, its XDG directories in the test's.
LV=$RV_TMP/lv-session
mkdir -p "$LV/run" "$RV_TMP/plv" "$RV_TMP/prv"
chmod 755 "$RV_TMP"
chown -R 65534:65534 "$LV" "$RV_TMP/plv"
setpriv --reuid=65534 --regid=65534 --clear-groups \
    env HOME="$LV" XDG_RUNTIME_DIR="$LV/run" XDG_CONFIG_HOME="$LV/config" \
    XDG_CACHE_HOME="$LV/cache" XDG_DATA_HOME="$LV/data" \
    libvirtd --timeout 300 </dev/null >"$LV/stdout" 2>&1 &
LV_PID=$!
_stop_lv() { kill "$LV_PID" 2>/dev/null || true; wait "$LV_PID" 2>/dev/null || true; }
cleanup_fn _stop_lv
LV_SOCK=$LV/run/libvirt/libvirt-sock
_lv_ready() { [ -S "$LV_SOCK" ] && virsh -c "qemu+unix:///session?socket=$LV_SOCK" version >/dev/null 2>&1; }
wait_for 60 "libvirtd (session of nobody)" _lv_ready || { show "$LV/stdout"; fail "libvirtd did not start"; }

# sequence URI DIR: the commands and what they print, DIR and the
# file-system-dependent values normalised.
sequence()
{
    local uri=$1 dir=$2
    v()
    {
        echo "\$ virsh $*" | sed "s#$dir#DIR#g"
        { virsh -c "$uri" "$@" 2>&1 || true; } | sed -e "s#$dir#DIR#g" \
            -e 's#<owner>[0-9]*</owner>#<owner>N</owner>#' -e 's#<group>[0-9]*</group>#<group>N</group>#' \
            -e 's#<\([amcb]time\)>[0-9.]*</#<\1>T</#' -e 's#^UUID: .*#UUID: U#' \
            -e '/^\(Capacity\|Allocation\|Available\):/d'
    }
    v pool-define-as cmp dir --target "$dir/cmp"
    v pool-build cmp
    v pool-start cmp
    v pool-info cmp
    v vol-create-as cmp a.img 8M --format raw
    v vol-create-as cmp b.qcow2 16M --format qcow2
    v vol-create-as cmp a.img 1M
    v vol-list cmp
    v vol-info --pool cmp a.img
    v vol-info --pool cmp b.qcow2
    v vol-dumpxml --pool cmp a.img
    v vol-clone --pool cmp b.qcow2 c.qcow2
    v vol-resize --pool cmp a.img 16M
    v vol-resize --pool cmp a.img 1M
    v vol-wipe --pool cmp a.img
    v vol-info --pool cmp c.qcow2
    v pool-undefine cmp
    for vol in a.img b.qcow2 c.qcow2; do v vol-delete --pool cmp "$vol"; done
    v vol-info --pool cmp a.img
    v pool-destroy cmp
    v pool-delete cmp
    v pool-undefine cmp
    v pool-list --all
}

# Pool directories of the same length: virsh's tables are as wide as their paths.
sequence "qemu+unix:///session?socket=$LV_SOCK" "$RV_TMP/plv" > "$OUT/libvirtd"
sequence "$QEMU_URI" "$RV_TMP/prv" > "$OUT/remvirtd"
if ! diff -u "$OUT/libvirtd" "$OUT/remvirtd"; then
    fail "virsh prints differently against remvirtd's QEMU driver than against libvirtd's storage driver"
fi
echo "ok   $(grep -c '^\$ virsh' "$OUT/remvirtd") virsh storage commands print the same against both"
