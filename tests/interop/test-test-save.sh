#!/usr/bin/env bash
# Save, restore, managed save, autostart and reset on the test driver:
# save-checks.py's transcript (results, errors, lifecycle events) against
# remvirtd must be libvirtd's test driver's, byte for byte, the socket and
# directory paths aside.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c 'import libvirt'
requires libvirtd
requires_root
script=$top_srcdir/tests/interop/save-checks.py

run()
{
    local uri=$1 dir=$RV_TMP/$2
    mkdir -p "$dir"
    "$SYSTEM_PYTHON3" "$script" "$uri" "$dir" 2>&1 | sed -e "s|$dir|DIR|g"
}

start_libvirtd
run "$LIBVIRTD_URI" libvirtd-images > "$RV_TMP/libvirtd.txt"
stop_libvirtd
start_remvirtd
run "$REMVIRTD_URI" remvirtd-images > "$RV_TMP/remvirtd.txt"

if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    fail "save and restore differ (--- libvirtd, +++ remvirtd)"
fi
grep -q '^restore: 0$' "$RV_TMP/remvirtd.txt" || fail "the restore did not succeed"
cat "$RV_TMP/remvirtd.txt"
echo "save-checks.py: $(wc -l < "$RV_TMP/remvirtd.txt") lines the same against remvirtd and libvirtd"
