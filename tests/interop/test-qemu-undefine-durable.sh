#!/usr/bin/env bash
# QEMU driver: an undefine is answered once the definition's file is gone
# for good: renamed to its tombstone (the commit point) and its directory
# fsynced by the store helper, off the loop (docs/qemu-driver.md).  When
# that fails (here the file is immutable, chattr +i, which stops even
# root) virsh gets the error and the definition stays, in memory, on disk
# and after a restart, and so do its managed image and snapshot metadata
# with --managed-save --snapshots-metadata (issue 26, bug 2: they went
# first).  Once the obstacle goes, the undefine lands (UNDEFINED event,
# autostart link gone) and the domain does not come back after a restart;
# a running domain undefined becomes transient and runs on.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires chattr
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
ETC=$QEMU_DIR/etc

qemu_domain_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" dumpxml --inactive g > "$OUT/g.xml"    # (its uuid: defines update it)
"${V[@]}" autostart g > /dev/null
[ -f "$ETC/g.xml" ] && [ -L "$ETC/autostart/g.xml" ] || fail "define/autostart wrote no files"
bg "$OUT/events" virsh -c "$QEMU_URI" event --loop --all
_warm()
{
    "${V[@]}" define "$OUT/g.xml" > /dev/null 2>&1
    grep -q "domain 'g': Defined" "$OUT/events"
}
wait_for 30 "virsh event to see a definition" _warm || { show "$OUT/events"; fail "no event"; }

if ! chattr +i "$ETC/g.xml" 2>/dev/null; then
    skip "no immutable files on $ETC's file system"
fi
_mutable() { chattr -i "$ETC/g.xml" 2>/dev/null || true; }
cleanup_fn _mutable
if got=$("${V[@]}" undefine g 2>&1); then
    chattr -i "$ETC/g.xml"
    fail "undefine succeeded although its file cannot be removed: $got"
fi
chattr -i "$ETC/g.xml"
grep -qF "cannot remove the definition '$ETC/g.xml'" <<< "$got" ||
    fail "undefine failed without the reason: $got"
[ "$("${V[@]}" domstate g 2>&1)" = "shut off" ] || fail "g is gone after a failed undefine"
"${V[@]}" dominfo g > "$OUT/dominfo"
grep -Eq "^Persistent: +yes$" "$OUT/dominfo" || fail "g is not persistent after a failed undefine"
grep -Eq "^Autostart: +enable$" "$OUT/dominfo" || fail "g lost its autostart in a failed undefine"
[ -f "$ETC/g.xml" ] && [ -L "$ETC/autostart/g.xml" ] || fail "a failed undefine removed files"
! grep -q "domain 'g': Undefined" "$OUT/events" || fail "a failed undefine sent an UNDEFINED event"
echo "ok   undefine whose removal fails: the error, the definition kept (memory, disk, autostart)"

# ---- issue 26, bug 2: an undefine that fails takes nothing with it: not
# the managed image (--managed-save), not the snapshots (--snapshots-metadata)
requires qemu-img --version
qemu-img create -q -f qcow2 "$OUT/m.qcow2" 16M
qemu_domain_xml m "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/m.qcow2'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/m.xml"
"${V[@]}" define "$OUT/m.xml" > /dev/null
"${V[@]}" snapshot-create-as m s1 > /dev/null
"${V[@]}" start m > /dev/null
"${V[@]}" managedsave m > /dev/null
SAVE=$QEMU_DIR/save
[ -e "$SAVE/m.save" ] && [ -e "$ETC/snapshot/m.json" ] || fail "no managed image or snapshot metadata to keep"
chattr +i "$ETC/m.xml"
_mutable_m() { chattr -i "$ETC/m.xml" 2>/dev/null || true; }
cleanup_fn _mutable_m
if got=$("${V[@]}" undefine --managed-save --snapshots-metadata m 2>&1); then
    chattr -i "$ETC/m.xml"
    fail "undefine --managed-save --snapshots-metadata succeeded although its file cannot be removed: $got"
fi
chattr -i "$ETC/m.xml"
[ -e "$SAVE/m.save" ] || fail "the failed undefine removed the managed image"
[ -e "$ETC/snapshot/m.json" ] || fail "the failed undefine removed the snapshot metadata"
[ "$("${V[@]}" snapshot-list --name m | sed '/^$/d')" = s1 ] || fail "the failed undefine dropped the snapshot list"
[ "$("${V[@]}" domstate --reason m)" = "shut off (saved)" ] || fail "after the failed undefine m is $("${V[@]}" domstate --reason m)"
"${V[@]}" undefine --managed-save --snapshots-metadata m > /dev/null
[ ! -e "$SAVE/m.save" ] && [ ! -e "$ETC/snapshot/m.json" ] && [ ! -e "$ETC/m.xml" ] ||
    fail "undefine --managed-save --snapshots-metadata left files: $(ls -R "$ETC" "$SAVE")"
echo "ok   undefine --managed-save --snapshots-metadata whose removal fails: the image and the snapshots kept; then it works"

"${V[@]}" autostart --disable g > /dev/null     # (so that the restart does not start it)
stop_remvirtd
start_remvirtd_qemu
[ "$("${V[@]}" domstate g 2>&1)" = "shut off" ] || fail "g did not survive a restart"
"${V[@]}" autostart g > /dev/null
bg "$OUT/events2" virsh -c "$QEMU_URI" event --loop --all
_warm2()
{
    "${V[@]}" define "$OUT/g.xml" > /dev/null 2>&1
    grep -q "domain 'g': Defined" "$OUT/events2"
}
wait_for 30 "virsh event to see a definition" _warm2
got=$("${V[@]}" undefine g 2>&1) || fail "undefine failed: $got"
[ ! -e "$ETC/g.xml" ] && [ ! -L "$ETC/autostart/g.xml" ] ||
    fail "undefine left files: $(ls -R "$ETC")"
wait_for "$RV_TIMEOUT" "the UNDEFINED event" grep -q "domain 'g': Undefined Removed" "$OUT/events2"
"${V[@]}" domstate g > /dev/null 2>&1 && fail "g is still there after undefine"
echo "ok   undefine: file and autostart link gone, the UNDEFINED event"

qemu_domain_xml r > "$OUT/r.xml"
"${V[@]}" define "$OUT/r.xml" > /dev/null
"${V[@]}" start r > /dev/null
got=$("${V[@]}" undefine r 2>&1) || fail "undefine of running r failed: $got"
[ ! -e "$ETC/r.xml" ] || fail "undefine of running r left $ETC/r.xml"
"${V[@]}" dominfo r > "$OUT/dominfo"
grep -Eq "^Persistent: +no$" "$OUT/dominfo" || fail "running r is not transient after undefine"
[ "$("${V[@]}" domstate r)" = running ] || fail "r stopped running after its undefine"
echo "ok   undefine of a running domain: transient, runs on"

stop_remvirtd
start_remvirtd_qemu
[ -z "$("${V[@]}" list --all --name | sed '/^$/d' | grep -vx r)" ] ||
    fail "an undefined domain came back after a restart: $("${V[@]}" list --all --name)"
"${V[@]}" destroy r > /dev/null
"${V[@]}" domstate r > /dev/null 2>&1 && fail "transient r is still there after its destroy"
echo "ok   after a restart: nothing undefined comes back"
