#!/usr/bin/env bash
# python3-libvirt against remvirtd (python-checks.py has the checks).  The
# same script runs against a private libvirtd first: its expectations are
# libvirtd's behaviour, so a failure there is a broken test, not a
# broken remvirtd.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c 'import libvirt'
script=$top_srcdir/tests/interop/python-checks.py

if command -v libvirtd >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    start_libvirtd
    echo "== against libvirtd (checking the test's expectations)"
    "$SYSTEM_PYTHON3" "$script" "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" \
        > "$RV_TMP/libvirtd.out" 2>&1 ||
        { cat "$RV_TMP/libvirtd.out"; fail "python-checks.py fails against libvirtd itself"; }
    stop_libvirtd
else
    echo "== libvirtd not available: expectations not cross-checked"
fi

start_remvirtd
echo "== against remvirtd"
"$SYSTEM_PYTHON3" "$script" "$REMVIRTD_URI" "$REMVIRTD_URI_RO"
