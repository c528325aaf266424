#!/usr/bin/env bash
# virsh vol-upload and vol-download (STREAM packets) against remvirtd's
# test driver and against libvirtd's own storage driver (a dir pool on
# qemu:///system): the same uploads (sizes 0, 1, odd, several MiB, at an
# offset, a sparse upload) must download as the same bytes from both,
# compared by checksum.  libvirtd's test driver refuses both calls
# (NO_SUPPORT); remvirtd's keeps volume content in memory.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires sha256sum
requires_root

data=$RV_TMP/data
mkdir -p "$data"
head -c 0 /dev/urandom > "$data/s0"
head -c 1 /dev/urandom > "$data/s1"
head -c 4097 /dev/urandom > "$data/s4097"
head -c $((5 * 1024 * 1024 + 3)) /dev/urandom > "$data/s5m"
head -c 1000 /dev/urandom > "$data/at3000"
# A sparse file: data, a 1 MiB hole, data.
head -c 5000 /dev/urandom > "$data/sparse"
truncate -s $((1024 * 1024 + 5000)) "$data/sparse"
head -c 7000 /dev/urandom >> "$data/sparse"

# round_trips URI POOL OUTDIR: a 8 MiB volume rvstream in POOL, each file
# uploaded and downloaded back (--length its size) into OUTDIR; then the
# whole volume.  Leaves the volume deleted.
round_trips()
{
    local uri=$1 pool=$2 out=$3 f
    mkdir -p "$out"
    virsh -q -c "$uri" vol-create-as "$pool" rvstream 8M >/dev/null
    for f in s0 s1 s4097 s5m; do
        virsh -q -c "$uri" vol-upload --pool "$pool" rvstream "$data/$f"
        # --length 0 would mean the whole volume: an empty upload only.
        [ "$f" != s0 ] || { : > "$out/$f"; continue; }
        virsh -q -c "$uri" vol-download --pool "$pool" rvstream "$out/$f" \
            --length "$(stat -c %s "$data/$f")"
        [ "$(sha256sum < "$out/$f")" = "$(sha256sum < "$data/$f")" ] ||
            fail "$uri: $f came back different"
    done
    virsh -q -c "$uri" vol-upload --pool "$pool" rvstream "$data/at3000" --offset 3000
    virsh -q -c "$uri" vol-download --pool "$pool" rvstream "$out/at3000" --offset 3000 \
        --length 1000
    cmp "$data/at3000" "$out/at3000" || fail "$uri: the upload at offset 3000 came back different"
    virsh -q -c "$uri" vol-download --pool "$pool" rvstream "$out/whole"
    [ "$(stat -c %s "$out/whole")" -eq $((8 * 1024 * 1024)) ] ||
        fail "$uri: the whole volume is $(stat -c %s "$out/whole") bytes, not 8 MiB"
    # A hole skips what the volume holds (as libvirtd's files do): into a
    # fresh volume, it reads back as the file.  (libvirtd's file volume
    # also ends where the sparse file ends; a test volume keeps its size.)
    virsh -q -c "$uri" vol-delete --pool "$pool" rvstream >/dev/null
    virsh -q -c "$uri" vol-create-as "$pool" rvstream 8M >/dev/null
    virsh -q -c "$uri" vol-upload --pool "$pool" rvstream "$data/sparse" --sparse
    virsh -q -c "$uri" vol-download --pool "$pool" rvstream "$out/sparse" \
        --length "$(stat -c %s "$data/sparse")"
    cmp "$data/sparse" "$out/sparse" || fail "$uri: the sparse upload came back different"
    virsh -q -c "$uri" vol-delete --pool "$pool" rvstream >/dev/null
    echo "ok   round trips through $uri"
}

start_remvirtd
round_trips "$REMVIRTD_URI" default-pool "$RV_TMP/remvirtd-out"

# Past the volume's end: refused before any data flows.
virsh -q -c "$REMVIRTD_URI" vol-create-as default-pool small 1k >/dev/null
if virsh -q -c "$REMVIRTD_URI" vol-upload --pool default-pool small "$data/s4097" \
        > "$RV_TMP/over.out" 2>&1; then
    fail "uploading 4097 bytes into a 1 KiB volume worked"
fi
grep -q "No space left on device" "$RV_TMP/over.out" || { show "$RV_TMP/over.out"; fail "over-long upload: unexpected error"; }
echo "ok   an upload past the volume's capacity fails"

start_libvirtd
# libvirtd's test driver has no upload or download at all.
if virsh -q -c "$LIBVIRTD_URI" "vol-create-as default-pool rvstream 1M; vol-upload --pool default-pool rvstream $data/s1" \
        > "$RV_TMP/lv-test.out" 2>&1; then
    fail "libvirtd's test driver took an upload"
fi
grep -q "not supported by the connection driver: virStorageVolUpload" "$RV_TMP/lv-test.out" ||
    { show "$RV_TMP/lv-test.out"; fail "libvirtd's test driver: unexpected error"; }

# Its storage driver does: a transient dir pool of the test's own.
lv_qemu="qemu+unix:///system?socket=$LIBVIRTD_SOCK"
mkdir -p "$RV_TMP/pool"
virsh -q -c "$lv_qemu" pool-create-as rvstreampool dir --target "$RV_TMP/pool" \
    > "$RV_TMP/pool.out" 2>&1 || { show "$RV_TMP/pool.out"; fail "libvirtd: no dir pool"; }
round_trips "$lv_qemu" rvstreampool "$RV_TMP/libvirtd-out"
virsh -q -c "$lv_qemu" pool-destroy rvstreampool >/dev/null

for f in s0 s1 s4097 s5m at3000 sparse whole; do
    cmp "$RV_TMP/remvirtd-out/$f" "$RV_TMP/libvirtd-out/$f" ||
        fail "$f: remvirtd and libvirtd downloaded different bytes"
done
echo "ok   remvirtd and libvirtd download the same bytes"
