#!/usr/bin/env bash
# The QEMU driver on a full disk: its config directory and its save
# directory are small tmpfs mounts (size=), filled up with a file, and
# every operation that writes there is tried.  Each one either works or
# fails with a reason, and an error means nothing changed: not in memory
# (virsh shows the old state), not on disk (the files are as before), not
# after a restart, not in the qcow2 image (issue 26, bug 3: setmem
# --config, snapshot-create and snapshot-delete answered an error yet
# applied the change).  Once the space is back everything works.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires virsh
requires qemu-img --version
requires qemu-io --version
requires mount --version
OUT=$RV_TMP/out
mkdir -p "$OUT" "$RV_TMP/qemu/etc" "$RV_TMP/qemu/save"
_umount() { umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true; }
for dir in etc save; do
    mount -t tmpfs -o size=4m,mode=0700 tmpfs "$RV_TMP/qemu/$dir" || skip "cannot mount a tmpfs"
    cleanup_fn _umount "$RV_TMP/qemu/$dir"
done
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
ETC=$QEMU_DIR/etc
SAVE=$QEMU_DIR/save
state() { "${V[@]}" domstate --reason "$1" 2>&1 || true; }
fill() { dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null || true; sync; }
unfill() { rm -f "$ETC/fill" "$SAVE/fill"; }
restart() { stop_remvirtd; start_remvirtd_qemu; "${V[@]}" list --all > /dev/null; }
# fails WHAT CMD...: CMD fails and says why (not an empty message).
fails()
{
    local what=$1 got
    shift
    if got=$("$@" 2>&1); then
        fail "$what succeeded on a full disk: $got"
    fi
    grep -Eq "No space left on device|cannot write|Failed to create" <<< "$got" ||
        fail "$what failed without saying why: $got"
    grep -q "failed: *$" <<< "$got" && fail "$what failed with an empty reason: $got"
    return 0
}
# snapshots_in FILE: the internal snapshots of a qcow2 image, sorted.
snapshots_in() { qemu-img snapshot -l "$1" | awk 'NR > 2 {print $2}' | sort | tr '\n' ' '; }
listed() { "${V[@]}" snapshot-list --name "$1" | sed '/^$/d' | sort | tr '\n' ' '; }

qemu-img create -q -f qcow2 "$OUT/d.qcow2" 16M
disk="<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/d.qcow2'/><target dev='vda' bus='virtio'/></disk>"
qemu_domain_xml g "$disk" > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
# Two snapshots, the disk's data telling them apart (a revert is seen).
qemu-io -f qcow2 -c 'write -P 0x11 0 64k' "$OUT/d.qcow2" > /dev/null
"${V[@]}" snapshot-create-as g s0 > /dev/null
qemu-io -f qcow2 -c 'write -P 0x22 0 64k' "$OUT/d.qcow2" > /dev/null
"${V[@]}" snapshot-create-as g s1 > /dev/null
disk_holds() { qemu-io -f qcow2 -r -c "read -P $1 0 64k" "$OUT/d.qcow2" 2>&1 | grep -q "read 65536/65536"; }
"${V[@]}" dumpxml --inactive g > "$OUT/g-before.xml"
cp "$ETC/g.xml" "$OUT/g-file-before.xml"
cp "$ETC/snapshot/g.json" "$OUT/g-json-before"

fill "$ETC"
# ---- definitions: setmem, setmaxmem, setvcpus --config, define (an update and a new one)
fails "setmem --config" "${V[@]}" setmem --config g 40960
fails "setmaxmem" "${V[@]}" setmaxmem --config g 50000
fails "setvcpus --config --maximum" "${V[@]}" setvcpus --config --maximum g 2
sed "s|<memory unit='KiB'>65536<|<memory unit='KiB'>98304<|" "$OUT/g-before.xml" > "$OUT/g96.xml"
fails "define (update)" "${V[@]}" define "$OUT/g96.xml"
qemu_domain_xml h > "$OUT/h.xml"
fails "define (new)" "${V[@]}" define "$OUT/h.xml"
"${V[@]}" dumpxml --inactive g | diff - "$OUT/g-before.xml" > /dev/null ||
    fail "a failed change altered g in memory: $("${V[@]}" dumpxml --inactive g | diff - "$OUT/g-before.xml")"
cmp -s "$ETC/g.xml" "$OUT/g-file-before.xml" || fail "a failed change altered $ETC/g.xml"
! "${V[@]}" domstate h > /dev/null 2>&1 || fail "the failed define of h left h defined"
[ ! -e "$ETC/h.xml" ] || fail "the failed define of h left its file"
echo "ok   setmem/setmaxmem/setvcpus --config and define on a full disk: an error, nothing changed"

# ---- the other families: network, pool, secret (and its value), nwfilter
cat > "$OUT/net.xml" <<XML
<network><name>fullnet</name><forward mode='bridge'/><bridge name='rvfullbr0'/></network>
XML
fails "net-define" "${V[@]}" net-define "$OUT/net.xml"
! "${V[@]}" net-info fullnet > /dev/null 2>&1 || fail "the failed net-define left the network defined"
cat > "$OUT/pool2.xml" <<XML
<pool type='dir'><name>fullpool</name><target><path>$OUT/fullpool</path></target></pool>
XML
fails "pool-define" "${V[@]}" pool-define "$OUT/pool2.xml"
! "${V[@]}" pool-info fullpool > /dev/null 2>&1 || fail "the failed pool-define left the pool defined"
cat > "$OUT/secret.xml" <<XML
<secret ephemeral='no' private='no'><uuid>6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11</uuid><usage type='volume'><volume>/full/vol</volume></usage></secret>
XML
fails "secret-define" "${V[@]}" secret-define "$OUT/secret.xml"
! "${V[@]}" secret-dumpxml 6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11 > /dev/null 2>&1 ||
    fail "the failed secret-define left the secret defined"
cat > "$OUT/filter.xml" <<XML
<filter name='fullfilter' chain='root'><rule action='accept' direction='out'><all/></rule></filter>
XML
fails "nwfilter-define" "${V[@]}" nwfilter-define "$OUT/filter.xml"
! "${V[@]}" nwfilter-dumpxml fullfilter > /dev/null 2>&1 || fail "the failed nwfilter-define left the filter"
for dir in networks storage secrets nwfilter; do
    [ -z "$(find "$ETC/$dir" -type f 2>/dev/null)" ] || fail "failed defines left files in $ETC/$dir: $(ls -a "$ETC/$dir")"
done
echo "ok   net-define, pool-define, secret-define, nwfilter-define on a full disk: an error, nothing defined, no file"

# ---- snapshots: create, delete, revert
fails "snapshot-create" "${V[@]}" snapshot-create-as g s2
[ "$(listed g)" = "s0 s1 " ] || fail "a failed snapshot-create is listed: $(listed g)"
[ "$(snapshots_in "$OUT/d.qcow2")" = "s0 s1 " ] || fail "a failed snapshot-create left the image with: $(snapshots_in "$OUT/d.qcow2")"
fails "snapshot-delete" "${V[@]}" snapshot-delete g s1
[ "$(listed g)" = "s0 s1 " ] || fail "a failed snapshot-delete is not listed: $(listed g)"
[ "$(snapshots_in "$OUT/d.qcow2")" = "s0 s1 " ] || fail "a failed snapshot-delete removed it from the image"
fails "snapshot-revert" "${V[@]}" snapshot-revert g s0
[ "$("${V[@]}" snapshot-current --name g)" = s1 ] || fail "a failed snapshot-revert moved the current snapshot"
disk_holds 0x22 || fail "a failed snapshot-revert reverted the disk"
cmp -s "$ETC/snapshot/g.json" "$OUT/g-json-before" || fail "failed snapshot calls altered the metadata"
echo "ok   snapshot-create, -delete and -revert on a full disk: an error; the list, the current one, the metadata and the image as before"

# ---- what holds after a restart, and a start uses the definition as it was
unfill
restart
"${V[@]}" dumpxml --inactive g | diff - "$OUT/g-before.xml" > /dev/null || fail "after a restart g's definition changed"
[ "$(listed g)" = "s0 s1 " ] || fail "after a restart the snapshots are $(listed g)"
[ "$("${V[@]}" snapshot-current --name g)" = s1 ] && disk_holds 0x22 || fail "after a restart the current snapshot or the disk changed"
"${V[@]}" snapshot-revert g s0 > /dev/null && disk_holds 0x11 || fail "the revert to s0 fails"
"${V[@]}" start g > /dev/null
grep -q "<currentMemory unit='KiB'>65536<" "$QEMU_DIR/run/g.xml" || fail "g started with another memory size"
echo "ok   after a restart: the old definition and snapshots, a revert works, a start uses the old memory"

# ---- a live and config change whose config part cannot be written: the live part is undone
fill "$ETC"
fails "setmem --live --config" "${V[@]}" setmem --live --config g 40960
live_mem() { "${V[@]}" dumpxml g | sed -n "s|.*<currentMemory unit='KiB'>\([0-9]*\)<.*|\1|p"; }
[ "$(live_mem)" = 65536 ] || fail "the failed setmem --live --config left the live memory at $(live_mem)"
"${V[@]}" dumpxml --inactive g | diff - "$OUT/g-before.xml" > /dev/null || fail "the failed setmem --live --config changed the definition"
unfill
echo "ok   setmem --live --config on a full disk: an error, the balloon put back, the definition as before"

# ---- managed save and save to a full disk
fill "$SAVE"
fails "managedsave" "${V[@]}" managedsave g
grep -Eq "^Managed save: +no" <<< "$("${V[@]}" dominfo g)" || fail "dominfo says g has a managed image after the failed managedsave: $(ls -la "$SAVE"; "${V[@]}" dominfo g 2>&1; state g)"
[ "$(state g)" = "running (save canceled)" ] || [ "$(state g)" = "running (booted)" ] ||
    fail "after a failed managedsave g is $(state g)"
[ -z "$(ls "$SAVE" | grep -v '^fill$')" ] || fail "a failed managedsave left files: $(ls "$SAVE")"
fails "save" "${V[@]}" save g "$SAVE/g.img"
[ -z "$(ls "$SAVE" | grep -v '^fill$')" ] || fail "a failed save left files: $(ls "$SAVE")"
# Room for the header, not for the guest's memory: QEMU's migration fails.
truncate -s -256K "$SAVE/fill"
fails "managedsave (room for the header only)" "${V[@]}" managedsave g
[ -z "$(ls "$SAVE" | grep -v '^fill$')" ] || fail "a failed managedsave left files: $(ls "$SAVE")"
case $(state g) in "running"*) ;; *) fail "after a failed managedsave g is $(state g)" ;; esac
grep -Eq "^Managed save: +no" <<< "$("${V[@]}" dominfo g)" || fail "dominfo says g has a managed image"
unfill
echo "ok   managedsave and save on a full disk: an error that says why, the guest runs on, no file left"

# ---- a volume in a pool whose directory is full; a secret's value on a full disk
unfill
"${V[@]}" secret-define "$OUT/secret.xml" > /dev/null
"${V[@]}" secret-set-value 6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11 --base64 Zmlyc3Q= > /dev/null 2>&1 ||
    "${V[@]}" secret-set-value 6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11 Zmlyc3Q= > /dev/null
cat > "$OUT/pool.xml" <<XML
<pool type='dir'><name>sp</name><target><path>$SAVE/pool</path></target></pool>
XML
mkdir -p "$SAVE/pool"
"${V[@]}" pool-define "$OUT/pool.xml" > /dev/null
"${V[@]}" pool-start sp > /dev/null
fill "$ETC"
fill "$SAVE"
if "${V[@]}" secret-set-value 6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11 --base64 c2Vjb25k > "$OUT/sv" 2>&1 ||
   "${V[@]}" secret-set-value 6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11 c2Vjb25k >> "$OUT/sv" 2>&1; then
    fail "secret-set-value succeeded on a full disk: $(cat "$OUT/sv")"
fi
[ "$("${V[@]}" secret-get-value 6bd1a1a2-8d33-4c3e-9a0b-5b1c2e0d9f11)" = Zmlyc3Q= ] ||
    fail "the failed secret-set-value changed the value"
for format in raw qcow2; do
    if got=$("${V[@]}" vol-create-as sp "v$format" 8M --format "$format" --allocation 8M 2>&1); then
        fail "vol-create-as ($format) succeeded on a full disk: $got"
    fi
    ! "${V[@]}" vol-info --pool sp "v$format" > /dev/null 2>&1 || fail "the failed vol-create left v$format listed"
done
[ -z "$(ls -A "$SAVE/pool")" ] || fail "failed vol-creates left files: $(ls -a "$SAVE/pool")"
unfill
"${V[@]}" vol-create-as sp vraw 1M --format raw > /dev/null
echo "ok   secret-set-value and vol-create (raw, qcow2) on a full disk: an error, nothing changed, no file left"

# An upload's data is written by a thread of its own (stream_offload.c):
# a write that fails there still fails the upload, with its reason, and
# the daemon serves on.  8 MiB do not fit in the 4 MiB tmpfs.
head -c 8M /dev/urandom > "$OUT/big"
if got=$("${V[@]}" vol-upload --pool sp vraw "$OUT/big" 2>&1); then
    fail "vol-upload of 8 MiB into a 4 MiB file system succeeded: $got"
fi
grep -q "No space left on device" <<< "$got" || fail "the vol-upload on a full disk failed without saying why: $got"
"${V[@]}" vol-info --pool sp vraw > /dev/null || fail "after the failed upload the volume is gone"
: > "$SAVE/pool/vraw"
echo "ok   vol-upload onto a full disk: 'No space left on device', the daemon serves on"

"${V[@]}" managedsave g > /dev/null
[ "$(state g)" = "shut off (saved)" ] || fail "managedsave after the space is back: $(state g)"
"${V[@]}" setmem --config g 40960 > /dev/null
"${V[@]}" snapshot-create-as g s2 > /dev/null
[ "$(listed g)" = "s0 s1 s2 " ] || fail "snapshot-create after the space is back: $(listed g)"
echo "ok   with the space back: managedsave, setmem --config, snapshot-create work"
