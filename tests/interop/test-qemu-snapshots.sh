#!/usr/bin/env bash
# The QEMU driver's internal snapshots with real QEMU (TCG, a guest idling
# in its firmware with a small qcow2 disk), through virsh:
#   shut off: snapshot-create-as runs `qemu-img snapshot -c` (the image
#   lists the snapshot), snapshot-revert brings back the disk's data (a
#   pattern written with qemu-io before the snapshot and overwritten
#   after), snapshot-delete removes it from the image;
#   running: the snapshot is taken through the monitor (savevm: the image
#   holds the memory state too), reverted (loadvm) and deleted (delvm);
#   a raw disk is refused by name; reverting a running domain to a
#   shut-off snapshot is refused; the metadata survives a restart of
#   remvirtd; undefine refuses a domain with snapshots unless told to
#   drop their metadata.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires qemu-img --version
requires qemu-io --version
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

expect()
{
    local want=$1 got
    shift
    got=$("$@" 2>&1) || fail "'$*' failed: $got"
    got=$(echo "$got" | sed '/^$/d')
    [ "$got" = "$want" ] || fail "'$*' printed '$got', expected '$want'"
    echo "ok   $* -> $want"
}

# refused WORDS CMD...: CMD fails and its error has WORDS.
refused()
{
    local words=$1 got
    shift
    if got=$("$@" 2>&1); then
        fail "'$*' succeeded: $got"
    fi
    echo "$got" | grep -qF -- "$words" || fail "'$*' said '$got', not '$words'"
    echo "ok   $* refused: $words"
}

# The snapshot names the image holds (-U: also while QEMU has it open).
image_snapshots()
{
    qemu-img snapshot -U -l "$1" | awk 'NR > 2 { print $2 }' | sort | tr '\n' ' '
}

disk=$OUT/disk.qcow2
qemu-img create -q -f qcow2 "$disk" 16M
qemu-img create -q -f raw "$OUT/raw.img" 16M
qemu_domain_xml snap "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$disk'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/snap.xml"
qemu_domain_xml rawdom "<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$OUT/raw.img'/><target dev='vdb' bus='virtio'/></disk>" > "$OUT/raw.xml"
"${V[@]}" define "$OUT/snap.xml" > /dev/null
"${V[@]}" define "$OUT/raw.xml" > /dev/null

# ---- shut off: qemu-img
qemu-io -f qcow2 -c 'write -q -P 0xab 0 64k' "$disk" > /dev/null
expect "Domain snapshot off1 created" "${V[@]}" snapshot-create-as snap off1 --description "before"
[ "$(image_snapshots "$disk")" = "off1 " ] || fail "the image lists '$(image_snapshots "$disk")'"
echo "ok   the image holds off1"
qemu-io -f qcow2 -c 'write -q -P 0xcd 0 64k' "$disk" > /dev/null
"${V[@]}" snapshot-dumpxml snap off1 > "$OUT/off1.xml"
for line in "<state>shutoff</state>" "<description>before</description>" \
            "<memory snapshot='no'/>" "<disk name='vda' snapshot='internal'/>"; do
    grep -qF "$line" "$OUT/off1.xml" || fail "no $line in off1's XML: $(cat "$OUT/off1.xml")"
done
echo "ok   off1's XML: shut off, no memory, vda internal"
expect "Domain snapshot off1 reverted" "${V[@]}" snapshot-revert snap off1
qemu-io -f qcow2 -c 'read -q -P 0xab 0 64k' "$disk" > "$OUT/read" 2>&1 ||
    fail "the disk's data is not the snapshot's: $(cat "$OUT/read")"
echo "ok   revert brought back the disk's data"
expect "Domain snapshot off2 created" "${V[@]}" snapshot-create-as snap off2
expect "off1" "${V[@]}" snapshot-parent snap off2
expect "Domain snapshot off2 deleted" "${V[@]}" snapshot-delete snap off2
[ "$(image_snapshots "$disk")" = "off1 " ] || fail "off2 left in the image"
echo "ok   delete removed off2 from the image"

# ---- refusals
refused "internal snapshot for disk vdb unsupported for storage type raw" \
    "${V[@]}" snapshot-create-as rawdom r1
refused "domain moment off1 already exists" "${V[@]}" snapshot-create-as snap off1
refused "letters, digits" "${V[@]}" snapshot-create-as snap "a b"

# ---- running: the monitor
expect "Domain 'snap' started" "${V[@]}" start snap
refused "destroy domain 'snap' before reverting" "${V[@]}" snapshot-revert snap off1
expect "Domain snapshot run1 created" "${V[@]}" snapshot-create-as snap run1
expect "running" "${V[@]}" domstate snap
[ "$(image_snapshots "$disk")" = "off1 run1 " ] || fail "the image lists '$(image_snapshots "$disk")'"
qemu-img snapshot -U -l "$disk" > "$OUT/image-list"
awk '$2 == "run1" && $3 != "0" && $3 != "0 B" { found = 1 } END { exit !found }' "$OUT/image-list" ||
    fail "run1 holds no memory state: $(cat "$OUT/image-list")"
echo "ok   run1 holds the guest's memory"
"${V[@]}" snapshot-dumpxml snap run1 > "$OUT/run1.xml"
grep -qF "<state>running</state>" "$OUT/run1.xml" && grep -qF "<memory snapshot='internal'/>" "$OUT/run1.xml" ||
    fail "run1's XML: $(cat "$OUT/run1.xml")"
echo "ok   run1's XML: running, memory internal"
"${V[@]}" snapshot-list snap > "$OUT/list"
grep -q "run1 .* running" "$OUT/list" && grep -q "off1 .* shutoff" "$OUT/list" ||
    fail "snapshot-list: $(cat "$OUT/list")"
expect "Domain snapshot run1 reverted" "${V[@]}" snapshot-revert snap run1
expect "running" "${V[@]}" domstate snap
expect "Domain snapshot run1 reverted" "${V[@]}" snapshot-revert snap run1 --paused
expect "paused" "${V[@]}" domstate snap
expect "run1" "${V[@]}" snapshot-current snap --name
expect "Domain snapshot run2 created" "${V[@]}" snapshot-create-as snap run2
expect "Domain snapshot run2 deleted" "${V[@]}" snapshot-delete snap run2
[ "$(image_snapshots "$disk")" = "off1 run1 " ] || fail "run2 left in the image"
echo "ok   delvm removed run2 from the image"
expect "Domain 'snap' destroyed" "${V[@]}" destroy snap

# ---- the metadata outlives remvirtd
stop_remvirtd
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
"${V[@]}" snapshot-list snap --name > "$OUT/names"
[ "$(sed '/^$/d' "$OUT/names" | tr '\n' ' ')" = "off1 run1 " ] ||
    fail "after a restart: $(cat "$OUT/names")"
expect "run1" "${V[@]}" snapshot-current snap --name
expect "off1" "${V[@]}" snapshot-parent snap run1
echo "ok   the snapshots are known again after a restart"
refused "cannot delete inactive domain with 2 snapshots" "${V[@]}" undefine snap
expect "Domain snapshot run1 deleted" "${V[@]}" snapshot-delete snap run1
expect "Domain snapshot off1 deleted" "${V[@]}" snapshot-delete snap off1
[ -z "$(image_snapshots "$disk")" ] || fail "left in the image: $(image_snapshots "$disk")"
[ ! -e "$QEMU_DIR/etc/snapshot/snap.json" ] || fail "metadata left behind"
echo "ok   all gone from the image and the metadata"

# --metadata forgets a snapshot without touching the image.
expect "Domain snapshot meta created" "${V[@]}" snapshot-create-as snap meta
expect "Domain snapshot meta deleted" "${V[@]}" snapshot-delete snap meta --metadata
[ "$(image_snapshots "$disk")" = "meta " ] || fail "the image lost meta"
[ ! -e "$QEMU_DIR/etc/snapshot/snap.json" ] || fail "metadata left after deleting meta's"
qemu-img snapshot -d meta "$disk"
echo "ok   delete --metadata left the image's snapshot"

# Undefining with the metadata: the file goes, the image keeps the data.
expect "Domain snapshot keep created" "${V[@]}" snapshot-create-as snap keep
[ -e "$QEMU_DIR/etc/snapshot/snap.json" ] || fail "no metadata file"
"${V[@]}" undefine snap --snapshots-metadata > /dev/null
[ ! -e "$QEMU_DIR/etc/snapshot/snap.json" ] || fail "metadata left after undefine"
[ "$(image_snapshots "$disk")" = "keep " ] || fail "the image lost its snapshot"
echo "ok   undefine --snapshots-metadata dropped the metadata, not the image's snapshot"
