#!/usr/bin/env bash
# QEMU driver: a define is answered once its file is durable, written by
# the store helper off the loop (docs/qemu-driver.md).  When that fails (here
# its temp file's name is taken by a directory, so it cannot create it)
# virsh gets the error and the old definition stays, in memory and on
# disk; a new domain whose write fails is not there at all.  After the
# obstacle goes, the define lands and survives a restart.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
ETC=$QEMU_DIR/etc

# The same uuid in both: the second define replaces the first.
qemu_domain_xml g | sed 's|</name>|</name><uuid>5d1b0a6e-2f7c-4c38-9d6a-3b8e5a1c7f20</uuid>|' > "$OUT/g64.xml"
sed 's/>64</>96</' "$OUT/g64.xml" > "$OUT/g96.xml"
"${V[@]}" define "$OUT/g64.xml" > /dev/null
[ -f "$ETC/g.xml" ] || fail "define did not write $ETC/g.xml"
cp "$ETC/g.xml" "$OUT/g.on-disk"
echo "ok   define: $ETC/g.xml written"

memory_of()
{
    "${V[@]}" dumpxml "$1" | sed -n 's:.*<memory unit=.KiB.>\([0-9]*\)</memory>.*:\1:p'
}
[ "$(memory_of g)" = 65536 ] || fail "g's memory is not 64 MiB: $(memory_of g)"

mkdir "$ETC/g.xml.tmp"
if got=$("${V[@]}" define "$OUT/g96.xml" 2>&1); then
    fail "define succeeded although its file cannot be written: $got"
fi
grep -qF "cannot write the definition '$ETC/g.xml'" <<< "$got" ||
    fail "define failed without the reason: $got"
[ "$(memory_of g)" = 65536 ] || fail "the failed define changed g in memory: $(memory_of g)"
cmp -s "$ETC/g.xml" "$OUT/g.on-disk" || fail "the failed define changed $ETC/g.xml"
echo "ok   define whose write fails: the error, the old definition kept (memory and disk)"

qemu_domain_xml h > "$OUT/h.xml"
mkdir "$ETC/h.xml.tmp"
if got=$("${V[@]}" define "$OUT/h.xml" 2>&1); then
    fail "define of a new domain succeeded although its file cannot be written: $got"
fi
grep -qF "cannot write the definition" <<< "$got" || fail "define of h failed without the reason: $got"
[ "$("${V[@]}" list --all --name | sed '/^$/d')" = g ] ||
    fail "the failed define left domain h behind: $("${V[@]}" list --all --name)"
[ ! -e "$ETC/h.xml" ] || fail "the failed define left $ETC/h.xml"
echo "ok   new domain whose write fails: not defined, no file"

rmdir "$ETC/g.xml.tmp" "$ETC/h.xml.tmp"
"${V[@]}" define "$OUT/g96.xml" > /dev/null
[ "$(memory_of g)" = 98304 ] || fail "g's memory is not 96 MiB after the define: $(memory_of g)"
grep -qF "<memory unit='KiB'>98304</memory>" "$ETC/g.xml" || fail "$ETC/g.xml is not the new definition"
[ -z "$(find "$ETC" -name '*.tmp*')" ] || fail "temp files left in $ETC: $(ls "$ETC")"
echo "ok   define once the directory is writable: new definition in memory and on disk"

# Defines of one domain from 8 clients at once: whatever order they are
# served in, the file that lands last is the one memory holds (the writes
# land in the order the defines were taken).
pids=()
for m in 70 71 72 73 74 75 76 77; do
    sed "s/>64</>$m</" "$OUT/g64.xml" > "$OUT/g$m.xml"
    "${V[@]}" define "$OUT/g$m.xml" > "$OUT/define$m.out" 2>&1 &
    pids+=($!)
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail "concurrent define $i failed: $(cat "$OUT/define$((70 + i)).out")"
done
in_memory=$(memory_of g)
on_disk=$(sed -n "s:.*<memory unit='KiB'>\([0-9]*\)</memory>.*:\1:p" "$ETC/g.xml")
[ -n "$in_memory" ] && [ "$in_memory" = "$on_disk" ] ||
    fail "after 8 concurrent defines memory says '$in_memory' KiB, $ETC/g.xml '$on_disk'"
echo "ok   8 concurrent defines: the file on disk is the definition in memory ($on_disk KiB)"

stop_remvirtd
start_remvirtd_qemu
[ "$(memory_of g)" = "$on_disk" ] || fail "g's last definition did not survive a restart: $(memory_of g)"
echo "ok   the last definition survives a restart"
