#!/usr/bin/env bash
# What remvirtd's QEMU driver does with a config directory an operator
# has edited by hand, for every family of definitions (domains, networks,
# storage pools, secrets, nwfilters):
# - two files with one UUID (a copy renamed: the issue's good1.xml copied
#   to dupuuid.xml) are both refused, the log naming both files, and the
#   rest is served; the files stay as they are;
# - two secrets with one usage: the same;
# - a file over the family's size limit is refused as too large, naming
#   the limit (not "malformed");
# - a file not named after what it defines is refused, and a FIFO
#   (without blocking the start);
# - temporary files left by interrupted writes (*.xml.tmpXXXXXX,
#   *.xml.tmp) are removed at start-up.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT" "$RV_TMP/pool1" "$RV_TMP/pool2"
ETC=$QEMU_DIR/etc

for n in good1 good2; do
    qemu_domain_xml "$n" > "$OUT/$n.xml"
    "${V[@]}" define "$OUT/$n.xml" > /dev/null
done
for n in net1 net2; do
    echo "<network><name>$n</name><bridge name='rv$n'/></network>" > "$OUT/$n.xml"
    "${V[@]}" net-define "$OUT/$n.xml" > /dev/null
done
for n in pool1 pool2; do
    echo "<pool type='dir'><name>$n</name><target><path>$RV_TMP/$n</path></target></pool>" > "$OUT/$n.xml"
    "${V[@]}" pool-define "$OUT/$n.xml" > /dev/null
done
for n in f1 f2; do
    echo "<filter name='$n' chain='root'/>" > "$OUT/$n.xml"
    "${V[@]}" nwfilter-define "$OUT/$n.xml" > /dev/null
done
for n in s1 s2; do
    echo "<secret ephemeral='no' private='no'><usage type='ceph'><name>$n</name></usage></secret>" > "$OUT/$n.xml"
    "${V[@]}" secret-define "$OUT/$n.xml" > /dev/null
done
s1=$("${V[@]}" secret-list | awk '$2 == "ceph" && $3 == "s1" { print $1 }')
s2=$("${V[@]}" secret-list | awk '$2 == "ceph" && $3 == "s2" { print $1 }')
[ -n "$s1" ] && [ -n "$s2" ] || fail "secret-list: $("${V[@]}" secret-list)"
# s1's value stays while its file is refused (the start-up removes only
# values whose definition file is gone): the diff below sees it.
"${V[@]}" secret-set-value "$s1" --base64 Zmlyc3Q= > /dev/null 2>&1 ||
    "${V[@]}" secret-set-value "$s1" Zmlyc3Q= > /dev/null
[ -e "$ETC/secrets/$s1.base64" ] || fail "s1's value is not in $ETC/secrets: $(ls "$ETC/secrets")"
stop_remvirtd

# Copies with another name and the same UUID.
sed 's|<name>good1</name>|<name>dupuuid</name>|' "$ETC/good1.xml" > "$ETC/dupuuid.xml"
sed 's|<name>net1</name>|<name>netdup</name>|' "$ETC/networks/net1.xml" > "$ETC/networks/netdup.xml"
sed 's|<name>pool1</name>|<name>pooldup</name>|' "$ETC/storage/pool1.xml" > "$ETC/storage/pooldup.xml"
sed "s|name='f1'|name='fdup'|" "$ETC/nwfilter/f1.xml" > "$ETC/nwfilter/fdup.xml"
grep -q "fdup" "$ETC/nwfilter/fdup.xml" || fail "the nwfilter file is not as expected: $(cat "$ETC/nwfilter/f1.xml")"
# A secret of another UUID with the usage of s1.
s3=00000000-1111-2222-3333-444444444444
sed "s|$s1|$s3|" "$ETC/secrets/$s1.xml" > "$ETC/secrets/$s3.xml"
grep -q "$s3" "$ETC/secrets/$s3.xml" || fail "the secret file is not as expected: $(cat "$ETC/secrets/$s1.xml")"
# 2 MiB files, one per family.
pad=$(head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' 'x')
big() { printf '%s<!--%s-->%s\n' "$2" "$pad" "$3" > "$1"; }
big "$ETC/big.xml" "<domain type='qemu'><name>big</name>" "<memory>65536</memory><os><type>hvm</type></os></domain>"
big "$ETC/networks/bignet.xml" "<network><name>bignet</name>" "</network>"
big "$ETC/storage/bigpool.xml" "<pool type='dir'><name>bigpool</name>" "<target><path>/tmp</path></target></pool>"
big "$ETC/nwfilter/bigf.xml" "<filter name='bigf' chain='root'>" "</filter>"
big "$ETC/secrets/55555555-1111-2222-3333-444444444444.xml" "<secret ephemeral='no' private='no'>" "</secret>"
# A network whose file name is not its name.
sed 's|<name>net2</name>|<name>elsewhere</name>|' "$ETC/networks/net2.xml" > "$ETC/networks/misnamed.xml"
# What interrupted writes leave.
leftovers=("$ETC/networks/net2.xml.tmpAb12Cd" "$ETC/good2.xml.tmp" "$ETC/storage/pool2.xml.tmpXYZ789"
           "$ETC/secrets/$s2.base64.tmp0a1b2c" "$ETC/nwfilter/f2.xml.tmpqwerty")
for f in "${leftovers[@]}"; do echo "<partial" > "$f"; done
echo "keep me" > "$ETC/networks/notes.tmpfile"
cp -a "$ETC" "$OUT/etc-before"
# A FIFO where a definition would be: it must not block the start.
mkfifo "$ETC/networks/fifo.xml"

start_remvirtd_qemu
LOG=$REMVIRTD_LOG

# Domains: neither of the two is there, the rest is.
for n in good1 dupuuid big; do
    "${V[@]}" domuuid "$n" > /dev/null 2>&1 && fail "domain $n was loaded"
done
"${V[@]}" domuuid good2 > /dev/null || fail "good2 is not served"
has_both() { grep -F "$1" "$LOG" | grep -qF "$2" || fail "the log does not name both $1 and $2: $(grep -F "$1" "$LOG" || true)"; }
has_both "$ETC/dupuuid.xml" "$ETC/good1.xml"
grep "$ETC/big.xml" "$LOG" | grep -q "too large.*limit of 1048576" ||
    fail "big.xml is not reported as too large: $(grep -F big.xml "$LOG" || true)"
echo "ok   domains: both files with one UUID refused and named; the rest served; 2 MiB: too large"

for n in net1 netdup bignet elsewhere; do
    "${V[@]}" net-uuid "$n" > /dev/null 2>&1 && fail "network $n was loaded"
done
"${V[@]}" net-uuid net2 > /dev/null || fail "net2 is not served"
has_both "$ETC/networks/net1.xml" "$ETC/networks/netdup.xml"
grep "$ETC/networks/bignet.xml" "$LOG" | grep -q "too large.*limit of" || fail "bignet is not too large"
grep "$ETC/networks/misnamed.xml" "$LOG" | grep -q "elsewhere" || fail "misnamed.xml is not reported"
grep "$ETC/networks/fifo.xml" "$LOG" | grep -q "FIFO" || fail "the FIFO is not reported"
rm "$ETC/networks/fifo.xml"
echo "ok   networks: the same; a file not named after its network is refused; a FIFO too, at once"

for n in pool1 pooldup bigpool; do
    "${V[@]}" pool-uuid "$n" > /dev/null 2>&1 && fail "pool $n was loaded"
done
"${V[@]}" pool-uuid pool2 > /dev/null || fail "pool2 is not served"
has_both "$ETC/storage/pool1.xml" "$ETC/storage/pooldup.xml"
grep "$ETC/storage/bigpool.xml" "$LOG" | grep -q "too large.*limit of" || fail "bigpool is not too large"
echo "ok   storage pools: the same"

for n in f1 fdup bigf; do
    "${V[@]}" nwfilter-dumpxml "$n" > /dev/null 2>&1 && fail "nwfilter $n was loaded"
done
"${V[@]}" nwfilter-dumpxml f2 > /dev/null || fail "f2 is not served"
has_both "$ETC/nwfilter/f1.xml" "$ETC/nwfilter/fdup.xml"
grep "$ETC/nwfilter/bigf.xml" "$LOG" | grep -q "too large.*limit of" || fail "bigf is not too large"
echo "ok   nwfilters: the same"

"${V[@]}" secret-list > "$OUT/secrets"
grep -q "$s2" "$OUT/secrets" || fail "s2 is not served: $(cat "$OUT/secrets")"
grep -qE "$s1|$s3|55555555" "$OUT/secrets" && fail "a refused secret is listed: $(cat "$OUT/secrets")"
has_both "$ETC/secrets/$s1.xml" "$ETC/secrets/$s3.xml"
grep "$ETC/secrets/55555555" "$LOG" | grep -q "too large.*limit of" || fail "the big secret is not too large"
echo "ok   secrets: two of one usage both refused and named; the rest served"

for f in "${leftovers[@]}"; do
    [ ! -e "$f" ] || fail "$f was not removed"
done
[ -e "$ETC/networks/notes.tmpfile" ] || fail "a file that is no leftover was removed"
rm -f "$OUT/etc-before/networks/net2.xml.tmpAb12Cd" "$OUT/etc-before/good2.xml.tmp" \
    "$OUT/etc-before/storage/pool2.xml.tmpXYZ789" "$OUT/etc-before/secrets/$s2.base64.tmp0a1b2c" \
    "$OUT/etc-before/nwfilter/f2.xml.tmpqwerty"
diff -r "$OUT/etc-before" "$ETC" > "$OUT/diff" || fail "the config directory changed: $(cat "$OUT/diff")"
echo "ok   interrupted writes' temporary files removed; nothing else in the directory changed"
