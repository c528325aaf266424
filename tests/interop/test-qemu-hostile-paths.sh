#!/usr/bin/env bash
# What a local user can make remvirtd's QEMU driver (run as root) do with
# the files it opens for clients:
#  - a FIFO named as a save image (virsh restore), as a read-only disk or
#    a cdrom, or swapped in for a volume's file (vol-download, vol-upload)
#    is refused at once with an error naming it, and the daemon answers
#    meanwhile (it used to wait in open() for a writer, serving nobody);
#  - a pool's directory that its owner swaps for a symbolic link to a
#    directory of root's after the pool started: vol-download,
#    vol-upload, vol-wipe, vol-resize, vol-delete and vol-create reach
#    only the pool's own directory, refresh and start refuse the link
#    naming it, and pool-build changes no mode or owner through one.
# Root's files stay as they were throughout.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires virsh
requires setpriv
id nobody >/dev/null 2>&1 || skip "no user nobody"
nobody_group=$(id -gn nobody)
as_nobody() { setpriv --reuid=nobody --regid="$nobody_group" --clear-groups "$@"; }

start_remvirtd_qemu
chmod 755 "$RV_TMP"
V=(timeout 20 virsh -q -c "$QEMU_URI")

# refused WHAT WORDS CMD...: the virsh command fails within 20 s (not a
# hang) saying WORDS, and the daemon still answers.
refused()
{
    local what=$1 words=$2 out status=0
    shift 2
    out=$("${V[@]}" "$@" 2>&1) || status=$?
    [ "$status" -ne 124 ] || fail "$what: no answer in 20 s (the daemon is blocked)"
    [ "$status" -ne 0 ] || fail "$what: succeeded: $out"
    grep -qF -- "$words" <<<"$out" || fail "$what: '$out' does not say '$words'"
    "${V[@]}" list --all > /dev/null || fail "$what: the daemon no longer answers"
    echo "ok: $what: $(head -1 <<<"$out")"
}

fifo=$RV_TMP/fifo
mkfifo "$fifo"
refused "restore of a FIFO" "it is a FIFO, not a regular file" restore "$fifo"

for dev in "disk vda virtio" "cdrom hdc ide"; do
    set -- $dev
    qemu_domain_xml "fifo-$1" "<disk type='file' device='$1'><target dev='$2' bus='$3'/>
        <source file='$fifo'/><readonly/></disk>" > "$RV_TMP/fifo-$1.xml"
    "${V[@]}" define "$RV_TMP/fifo-$1.xml" > /dev/null
    refused "start with a read-only $1 that is a FIFO" "it is a FIFO" start "fifo-$1"
done

# A pool in a directory nobody owns, below one nobody owns.
home=$RV_TMP/home
mkdir -m 755 "$home"
chown nobody "$home"
as_nobody mkdir -m 755 "$home/pool"
"${V[@]}" pool-create-as hp dir --target "$home/pool" > /dev/null
"${V[@]}" vol-create-as hp v1 1M > /dev/null
"${V[@]}" vol-create-as hp v2 1M > /dev/null
echo "the pool's own data" > "$RV_TMP/data"
"${V[@]}" vol-upload --pool hp v2 "$RV_TMP/data"
chown nobody "$home/pool/v1" "$home/pool/v2"

as_nobody rm "$home/pool/v1"
as_nobody mkfifo "$home/pool/v1"
refused "vol-download of a volume swapped for a FIFO" "is a FIFO, not a regular file" \
    vol-download --pool hp v1 "$RV_TMP/out"
refused "vol-upload to a volume swapped for a FIFO" "is a FIFO, not a regular file" \
    vol-upload --pool hp v1 "$RV_TMP/data"

# Root's directory, with files of the volumes' names.
victim=$RV_TMP/victim
mkdir -m 700 "$victim"
echo "root's own data" > "$victim/v2"
echo "root's other data" > "$victim/v3"
chmod 600 "$victim/v2" "$victim/v3"
snapshot() { stat -c '%n %a %U %s %Y %h' "$victim" "$victim"/*; md5sum "$victim"/*; }
before=$(snapshot)
unchanged()
{
    local after
    after=$(snapshot)
    [ "$after" = "$before" ] || fail "$1: root's directory changed: $after"
}

as_nobody mv "$home/pool" "$home/pool.moved"
as_nobody ln -s "$victim" "$home/pool"

rm -f "$RV_TMP/out"
if "${V[@]}" vol-download --pool hp v2 "$RV_TMP/out" 2> "$RV_TMP/err"; then
    grep -q "root's own data" "$RV_TMP/out" && fail "vol-download read root's file through the link"
    grep -q "the pool's own data" "$RV_TMP/out" || fail "vol-download read neither file"
fi
echo "ok: vol-download reads the pool's own file, not the link's"
echo "a user's data" > "$RV_TMP/evil"
"${V[@]}" vol-upload --pool hp v2 "$RV_TMP/evil" 2>/dev/null || true
unchanged "vol-upload"
"${V[@]}" vol-wipe --pool hp v2 > /dev/null 2>&1 || true
unchanged "vol-wipe"
"${V[@]}" vol-resize --pool hp v2 2M > /dev/null 2>&1 || true
unchanged "vol-resize"
"${V[@]}" vol-create-as hp v4 1M > /dev/null 2>&1 || true
[ ! -e "$victim/v4" ] || fail "vol-create made a file in root's directory"
"${V[@]}" vol-delete --pool hp v2 > /dev/null 2>&1 || true
unchanged "vol-delete"
echo "ok: vol-upload, vol-wipe, vol-resize, vol-create, vol-delete leave root's directory alone"

refused "refresh through a planted link" "a symbolic link that another user can change" \
    pool-refresh hp
"${V[@]}" pool-destroy hp > /dev/null
refused "start through a planted link" "a symbolic link that another user can change" \
    pool-create-as hp2 dir --target "$home/pool"
unchanged "refresh and start"

# pool-build's mode and owner go to the pool's directory, never through a link.
as_nobody ln -s "$victim" "$home/built"
cat > "$RV_TMP/built.xml" <<XML
<pool type='dir'>
  <name>built</name>
  <target>
    <path>$home/built</path>
    <permissions><mode>0777</mode><owner>$(id -u nobody)</owner><group>0</group></permissions>
  </target>
</pool>
XML
"${V[@]}" pool-define "$RV_TMP/built.xml" > /dev/null
refused "pool-build through a planted link" "a symbolic link that another user can change" \
    pool-build built
unchanged "pool-build"
echo "ok: root's directory unchanged by every call"
