#!/usr/bin/env bash
# Every header of the project compiles alone, and every pair of them
# compiles in one translation unit in both orders: so no two headers
# define the same name (the public client/remvirt.h against the internal
# ones above all) and each includes what it needs.  The generated headers
# (rpcgen's and gen/rvgen.py's) count too.  make check passes the
# compiler and the project's flags (see tests/tests.mk).
set -euo pipefail

: "${abs_top_srcdir:?run me through make check}" "${abs_top_builddir:?}"
: "${RV_HEADER_CC:?}" "${RV_HEADER_CFLAGS?}"
src=$abs_top_srcdir
build=$abs_top_builddir

# Paths as the code includes them: relative to the top of either tree.
mapfile -t headers < <(
    { (cd "$src" && find auth client common server transport -name '*.h')
      (cd "$build" && ls protocol/*.h client/*.gen.h common/*.gen.h server/*.gen.h); } | LC_ALL=C sort -u)
if (( ${#headers[@]} < 40 )); then
    echo "found only ${#headers[@]} headers: is the build tree complete?" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-header-pairs.XXXXXXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One file per translation unit: NAME then the headers it includes.
unit() {
    local name=${1//\//_}
    shift
    { for h in "$@"; do printf '#include "%s"\n' "$h"; done
      echo 'int rv_header_pairs_unit;'; } > "$tmp/$name.c"
}
# Each header alone; then each header first, before all the others, and
# last, after them.  Every pair thus meets in both orders (A first puts A
# before B, B last puts A before B too, and the other way round) at the
# cost of 3n units instead of n^2: a clash between two headers is an
# error in a unit that holds both.
n=${#headers[@]}
for (( i = 0; i < n; i++ )); do
    others=("${headers[@]:0:i}" "${headers[@]:i+1}")
    unit "alone-${headers[i]}" "${headers[i]}"
    unit "first-${headers[i]}" "${headers[i]}" "${others[@]}"
    unit "last-${headers[i]}" "${others[@]}" "${headers[i]}"
done

# Many units per compiler run (it carries on past a failing one), one run
# per CPU at a time.  Word splitting of the flags is wanted.
# shellcheck disable=SC2086
if ! (cd "$tmp" && ls -- *.c | xargs -n 100 -P "$(nproc)" \
        $RV_HEADER_CC $RV_HEADER_CFLAGS -I"$src" -I"$build" -I"$build/protocol" -I"$src/client" -I"$build/client" \
        -fsyntax-only) > "$tmp/errors" 2>&1; then
    grep -E "In file included from [^ ]+\.c:|error|warning" "$tmp/errors" | head -40 >&2
    echo "FAIL: some headers do not compile together (the file names say which)" >&2
    exit 1
fi
echo "$n headers: each alone, and each before and after all the others, compile"
