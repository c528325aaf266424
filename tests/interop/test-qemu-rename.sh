#!/usr/bin/env bash
# DOMAIN_RENAME on remvirtd's QEMU driver, side by side with libvirtd's:
#   - virsh domrename: a name taken, itself, an unknown domain, '/', a
#     running guest, a managed save image, read-only, and the renames that
#     succeed (with a snapshot, which follows; of an autostarted guest),
#     the transcripts compared;
#   - rename-checks.py (python3-libvirt): flags, the events, what follows;
#   - the files: the new definition and autostart link, nothing left of
#     the old name, and a restarted remvirtd knows the guest by its new
#     name.  (A kill at each step: test-qemu-crash-points.sh.)
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu rename
ETC=$QEMU_DIR/etc

normalize()
{
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g'
}

# (a's qcow2 disk holds its snapshot.)
qemu_domain_xml a "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/a.qcow2'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/a.xml"
qemu_domain_xml b > "$OUT/b.xml"
steps=(
    "define a.xml"
    "define b.xml"
    "domrename a b"
    "domrename a a"
    "domrename nosuch x"
    "domrename a x/y"
    "ro:domrename a c"
    "start a"
    "domrename a c"
    "managedsave a"
    "domrename a c"
    "managedsave-remove a"
    "snapshot-create-as a s1"
    "domrename a s"
    "snapshot-list --name s"
    "domrename s a"
    "snapshot-current --name a"
    "snapshot-delete a s1"
    "autostart a"
    "domrename a c"
    "mask:dominfo c"
    "domstate a"
    "list --all --name"
    "list --all --autostart --name"
    "domrename c a2"
    "domrename b c"
    "list --all --name"
    "domblklist a2"
)
session()
{
    rm -f "$OUT/a.qcow2"
    qemu-img create -q -f qcow2 "$OUT/a.qcow2" 16M
    virsh_transcript "$1" "$2" "$OUT" normalize > "$OUT/$3.transcript"
    "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/rename-checks.py" "$1" "$OUT" > "$OUT/$3.py" 2>&1
}
session "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" libvirtd
session "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" remvirtd
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "virsh domrename: remvirtd as libvirtd"
same "$OUT/libvirtd.py" "$OUT/remvirtd.py" "rename-checks.py: remvirtd as libvirtd"
grep -q "^a2$" "$OUT/remvirtd.transcript" || fail "a was not renamed to a2"

# On disk: the definitions under their new names, the autostart link with
# them, nothing named after the old names, no step's file left.
[ -f "$ETC/a2.xml" ] && [ -f "$ETC/c.xml" ] || fail "no a2.xml or c.xml: $(ls "$ETC")"
grep -q "<name>a2</name>" "$ETC/a2.xml" || fail "a2.xml names another domain"
[ ! -e "$ETC/a.xml" ] && [ ! -e "$ETC/b.xml" ] || fail "an old definition is left: $(ls "$ETC")"
[ "$(readlink "$ETC/autostart/a2.xml")" = "$ETC/a2.xml" ] || fail "no autostart link for a2: $(ls -l "$ETC/autostart")"
[ ! -e "$ETC/autostart/a.xml" ] && [ ! -L "$ETC/autostart/a.xml" ] &&
    [ ! -L "$ETC/autostart/c.xml" ] || fail "an old autostart link is left: $(ls -l "$ETC/autostart")"
[ -z "$(find "$ETC" -name '*.rename-*')" ] || fail "a rename's file is left: $(ls "$ETC")"
echo "ok   the renamed definitions and autostart link on disk, nothing of the old names"

# A restarted remvirtd reads them so (and autostarts a2).
stop_remvirtd
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
"${V[@]}" list --all --name | sed '/^$/d' | sort > "$OUT/restarted"
printf 'a2\nc\nra\nrb\n' | diff -u - "$OUT/restarted" || fail "after a restart: $(cat "$OUT/restarted")"
"${V[@]}" dominfo a2 > "$OUT/a2.info"
grep -q "^Autostart: *enable" "$OUT/a2.info" || fail "a2 is not autostarted after a restart: $(cat "$OUT/a2.info")"
echo "ok   a restarted remvirtd knows the guests by their new names"

# A name the QEMU driver would not read back (over 200 characters, a
# hidden file's) is refused before anything is written.
long=$(printf 'n%.0s' $(seq 201))
! "${V[@]}" domrename c "$long" 2> "$OUT/long.err" || fail "a 201-character name was taken"
grep -q "cannot be used\|invalid domain name" "$OUT/long.err" || fail "not the invalid name error: $(cat "$OUT/long.err")"
! "${V[@]}" domrename c .c 2> "$OUT/dot.err" || fail "the name .c was taken"
grep -q "name '.c' cannot be used" "$OUT/dot.err" || fail "not the invalid name error: $(cat "$OUT/dot.err")"
[ -f "$ETC/c.xml" ] && [ -z "$(find "$ETC" -name '*.rename-*')" ] || fail "the refused rename left $(ls "$ETC")"
echo "ok   names the driver would not read back refused, c untouched"

# Two renames to one name at once (two connections): one is done, the
# other refused as a name taken, and the one domain has the name on disk.
"$SYSTEM_PYTHON3" - "$QEMU_URI" > "$OUT/race.txt" <<'PY'
import sys
import threading
import libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
xml = ("<domain type='qemu'><name>{}</name><memory unit='MiB'>64</memory>"
       "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>")
conns = [libvirt.open(sys.argv[1]) for _ in range(2)]
doms = [c.defineXML(xml.format(f"x{i}")) for i, c in enumerate(conns)]
results = []
def rename(d):
    try:
        results.append(str(d.rename("xz", 0)))
    except libvirt.libvirtError as e:
        results.append(f"{e.get_error_code()} {e.get_error_message()}")
threads = [threading.Thread(target=rename, args=(d,)) for d in doms]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\n".join(sorted(results)))
print(sorted(d.name() for d in conns[0].listAllDomains() if d.name().startswith("x")))
PY
printf '%s\n' "0" "55 Requested operation is not valid: domain with name 'xz' already exists" > "$OUT/race.expected"
head -2 "$OUT/race.txt" | diff -u "$OUT/race.expected" - || fail "two renames to xz: $(cat "$OUT/race.txt")"
grep -qx "\['x0', 'xz'\]\|\['x1', 'xz'\]" "$OUT/race.txt" || fail "after the two renames: $(cat "$OUT/race.txt")"
[ -f "$ETC/xz.xml" ] && [ -z "$(find "$ETC" -name '*.rename-*')" ] || fail "after the two renames: $(ls "$ETC")"
echo "ok   two renames to one name at once: one done, the other refused, one file"
