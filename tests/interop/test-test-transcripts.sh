#!/usr/bin/env bash
# The test driver's calls that virsh cannot compare well, through
# python3-libvirt: each script's transcript (results, errors, events)
# against remvirtd must be libvirtd's test driver's, byte for byte, the
# image directory aside.
#   save-checks.py      save, restore, managed save, reset, autostart
#   metadata-checks.py  title, description, IS_UPDATED
#   calls-checks.py     issue 29's everyday calls: send-key, NMI, screenshot, ...
#   dump-checks.py      core dumps (the job calls are not in its driver)
#   rename-checks.py    DOMAIN_RENAME: refusals, the rename, its events
#   lifecycle-checks.py DOMAIN_SET_LIFECYCLE_ACTION: refusals, live and config
#   network-flags-checks.py  NETWORK_DEFINE_XML_FLAGS, NETWORK_CREATE_XML_FLAGS
#   save-params-checks.py    DOMAIN_SAVE_PARAMS, DOMAIN_RESTORE_PARAMS: not in the test drivers
#   perf-checks.py      DOMAIN_SET_PERF_EVENTS: config and live, read back
#   checkpoint-checks.py     domain checkpoints: create, XML, lists, parents, delete
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c 'import libvirt'
requires libvirtd
requires_root
scripts=(save-checks.py metadata-checks.py calls-checks.py dump-checks.py rename-checks.py
         lifecycle-checks.py network-flags-checks.py perf-checks.py save-params-checks.py
         checkpoint-checks.py)

# run URI NAME: every script's transcript; its image files in RV_TMP/NAME.
run()
{
    local uri=$1 dir=$RV_TMP/$2 script
    mkdir -p "$dir"
    for script in "${scripts[@]}"; do
        echo "=== $script"
        "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/$script" "$uri" "$dir" 2>&1 |
            sed -e "s|$dir|DIR|g"
    done
}

start_libvirtd
run "$LIBVIRTD_URI" libvirtd-images > "$RV_TMP/libvirtd.txt"
stop_libvirtd
start_remvirtd
run "$REMVIRTD_URI" remvirtd-images > "$RV_TMP/remvirtd.txt"

if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    fail "the transcripts differ (--- libvirtd, +++ remvirtd)"
fi
grep -q '^restore: 0$' "$RV_TMP/remvirtd.txt" || fail "the restore did not succeed"
grep -q '^get title: T1$' "$RV_TMP/remvirtd.txt" || fail "the title was not set"
cat "$RV_TMP/remvirtd.txt"
echo "$(wc -l < "$RV_TMP/remvirtd.txt") lines the same against remvirtd and libvirtd"
