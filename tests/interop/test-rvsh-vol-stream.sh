#!/usr/bin/env bash
# rvsh vol-upload and vol-download (libremvirt's streams) against remvirtd
# and against libvirtd's own storage driver (a dir pool): uploads of 0, 1,
# odd and several MiB come back byte for byte, what rvsh uploads virsh
# downloads the same and the other way round, and rvsh's errors are
# virsh's.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root
[ -x "$RVSH" ] || fail "$RVSH is not built"

data=$RV_TMP/data
mkdir -p "$data"
: > "$data/s0"
head -c 1 /dev/urandom > "$data/s1"
head -c 65537 /dev/urandom > "$data/s65537"
head -c $((6 * 1024 * 1024 + 5)) /dev/urandom > "$data/s6m"

# check URI POOL: round trips through rvsh, and across rvsh and virsh.
check()
{
    local uri=$1 pool=$2 out=$RV_TMP/out-$3 f size
    mkdir -p "$out"
    virsh -q -c "$uri" vol-create-as "$pool" rvs 8M >/dev/null
    for f in s0 s1 s65537 s6m; do
        size=$(stat -c %s "$data/$f")
        "$RVSH" -c "$uri" vol-upload --pool "$pool" rvs "$data/$f"
        [ "$size" -gt 0 ] || continue
        "$RVSH" -c "$uri" vol-download --pool "$pool" rvs "$out/$f" --length "$size"
        cmp "$data/$f" "$out/$f" || fail "$uri: rvsh round trip of $f"
        virsh -q -c "$uri" vol-download --pool "$pool" rvs "$out/$f.virsh" --length "$size"
        cmp "$data/$f" "$out/$f.virsh" || fail "$uri: rvsh uploaded $f, virsh downloaded other bytes"
    done
    virsh -q -c "$uri" vol-upload --pool "$pool" rvs "$data/s65537" --offset 1000
    "$RVSH" -c "$uri" vol-download --pool "$pool" rvs "$out/at1000" --offset 1000 --length 65537
    cmp "$data/s65537" "$out/at1000" || fail "$uri: virsh uploaded at 1000, rvsh downloaded other bytes"
    "$RVSH" -c "$uri" vol-download --pool "$pool" rvs "$out/whole"
    [ "$(stat -c %s "$out/whole")" -eq $((8 * 1024 * 1024)) ] || fail "$uri: whole download size"

    # Errors as virsh prints them: no such volume (and no file left).
    local tool
    for tool in virsh "$RVSH"; do
        "$tool" -c "$uri" vol-download --pool "$pool" nosuch "$out/none" > "$out/err.$(basename "$tool")" 2>&1 &&
            fail "$tool downloaded a volume that is not there"
        [ ! -e "$out/none" ] || fail "$tool left the file of a failed download"
    done
    grep -v '^$' "$out/err.virsh" > "$out/err.virsh.txt" || true
    grep -v '^$' "$out/err.rvsh" > "$out/err.rvsh.txt" || true
    same "$out/err.virsh.txt" "$out/err.rvsh.txt" "rvsh vol-download of a missing volume ($3)"
    virsh -q -c "$uri" vol-delete --pool "$pool" rvs >/dev/null
    echo "ok   rvsh round trips through $3"
}

start_remvirtd
check "$REMVIRTD_URI" default-pool remvirtd
# Past the end of the volume: the server's error, after virsh's words.
virsh -q -c "$REMVIRTD_URI" vol-create-as default-pool tiny 100 >/dev/null
for tool in virsh "$RVSH"; do
    "$tool" -c "$REMVIRTD_URI" vol-upload --pool default-pool tiny "$data/s65537" \
        > "$RV_TMP/over.$(basename "$tool")" 2>&1 && fail "$tool uploaded past the volume's end"
    grep -v '^$' "$RV_TMP/over.$(basename "$tool")" > "$RV_TMP/over.$(basename "$tool").txt" || true
done
same "$RV_TMP/over.virsh.txt" "$RV_TMP/over.rvsh.txt" "rvsh vol-upload past the volume's end"

start_libvirtd
lv_qemu="qemu+unix:///system?socket=$LIBVIRTD_SOCK"
mkdir -p "$RV_TMP/pool"
virsh -q -c "$lv_qemu" pool-create-as rvstreampool dir --target "$RV_TMP/pool" >/dev/null
check "$lv_qemu" rvstreampool libvirtd
virsh -q -c "$lv_qemu" pool-destroy rvstreampool >/dev/null
