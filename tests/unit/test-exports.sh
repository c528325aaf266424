#!/usr/bin/env bash
# libremvirt exports exactly its public functions: the names the version
# script lists (client/libremvirt.gen.sym, from the hand-kept
# client/libremvirt-manual.sym and the @api generated procedures), the
# functions client/remvirt.h declares (with remvirt-calls.gen.h) and the
# library's dynamic symbols are one and the same set.
set -euo pipefail

: "${abs_top_srcdir:?run me through make check}" "${abs_top_builddir:?}"
: "${RV_HEADER_CC:?}"
src=$abs_top_srcdir
build=$abs_top_builddir
lib=$build/.libs/libremvirt.so
[ -e "$lib" ] || { echo "SKIP: no shared $lib" >&2; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-exports.XXXXXXXXXX")
trap 'rm -rf "$tmp"' EXIT

sed -n 's/^    \(rv_[a-z0-9_]*\);$/\1/p' "$build/client/libremvirt.gen.sym" | LC_ALL=C sort > "$tmp/script"
# Preprocessed, so that names in comments do not count.
echo '#include "remvirt.h"' | "$RV_HEADER_CC" -E -P -I"$src/client" -I"$build/client" - |
    grep -o '\brv_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | LC_ALL=C sort -u > "$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
    LC_ALL=C sort > "$tmp/exported"

status=0
for pair in "script declared" "script exported"; do
    set -- $pair
    if ! diff -u "$tmp/$1" "$tmp/$2" > "$tmp/diff"; then
        echo "FAIL: the $1 and $2 sets differ:" >&2
        cat "$tmp/diff" >&2
        status=1
    fi
done
[ "$status" -eq 0 ] && echo "$(wc -l < "$tmp/script") functions: listed, declared and exported alike"
exit "$status"
