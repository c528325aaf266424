#!/usr/bin/env bash
# Domain snapshots of the test driver: virsh's snapshot-* commands and
# python3-libvirt's snapshot calls (with the lifecycle events a revert
# sends) against remvirtd and against libvirtd's test driver must print
# the same.  Creation times are masked (the two runs are seconds apart);
# python's lists are sorted (libvirtd's come in hash-table order).
# libvirtd's test driver forgets everything when its last connection
# closes, so a connection is held open while virsh runs its commands.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

steps=(
    "snapshot-list test"
    "snapshot-current test"
    "snapshot-info test --current"
    "snapshot-create-as test s1 --description first"
    "snapshot-create-as test s1"
    "snapshot-create-as test s2"
    "suspend test"
    "snapshot-create-as test p1"
    "resume test"
    "snapshot-create test"
    "snapshot-list test"
    "snapshot-list test --tree"
    "snapshot-list test --parent"
    "snapshot-list test --roots"
    "snapshot-list test --leaves"
    "snapshot-list test --no-leaves"
    "snapshot-list test --current"
    "snapshot-list test --from s1"
    "snapshot-list test --from s1 --descendants"
    "snapshot-list test --from s1 --tree"
    "snapshot-list test --from s2 --tree"
    "snapshot-list test --active"
    "snapshot-list test --inactive"
    "snapshot-list test --internal"
    "snapshot-list test --external"
    "snapshot-list test --name"
    "snapshot-info test s1"
    "snapshot-info test --current"
    "snapshot-info test nosuch"
    "snapshot-dumpxml test s1"
    "snapshot-dumpxml test p1"
    "snapshot-current test"
    "snapshot-current test --name"
    "snapshot-parent test p1"
    "snapshot-parent test s1"
    "snapshot-revert test p1"
    "domstate test --reason"
    "snapshot-revert test s1 --running"
    "domstate test --reason"
    "snapshot-create-as test h1 --halt"
    "domstate test --reason"
    "snapshot-create-as test off1"
    "snapshot-info test off1"
    "snapshot-dumpxml test off1"
    "snapshot-list test --inactive"
    "snapshot-revert test s2"
    "domstate test --reason"
    "snapshot-revert test off1"
    "domstate test --reason"
    "snapshot-revert test h1 --paused"
    "domstate test --reason"
    "snapshot-create-as test --no-metadata nm"
    "snapshot-create-as test --disk-only dk"
    "snapshot-current test --name"
    "snapshot-list test --tree"
    "snapshot-delete test s2"
    "snapshot-current test --name"
    "snapshot-list test --tree"
    "snapshot-delete test s1 --children-only"
    "snapshot-list test --tree"
    "snapshot-delete test s1 --metadata"
    "snapshot-delete test nosuch"
    "snapshot-delete test --current"
    "snapshot-current test --name"
    "snapshot-delete test s1 --children"
    "snapshot-list test"
    "snapshot-current test"
)

# Every step's output has its times masked.
for i in "${!steps[@]}"; do steps[$i]="mask:${steps[$i]}"; done

# The times a server stamps on snapshots: dates and seconds since 1970.
mask_times()
{
    sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4}/DATE/g' \
           -e 's/[0-9]{10}/EPOCH/g'
}

# hold URI: keep a connection open (libvirtd's test driver state lives on it).
hold()
{
    bg "$RV_TMP/hold.out" "$SYSTEM_PYTHON3" -c \
        'import sys, time, libvirt; c = libvirt.open(sys.argv[1]); print("held", flush=True); time.sleep(3600)' \
        "$1"
    wait_for "$RV_TIMEOUT" "the held connection" grep -q held "$RV_TMP/hold.out"
}

pycheck()
{
    "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/snapshot-checks.py" "$1" 2>&1 | mask_times
}

have_python=0
"$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null && have_python=1
[ "$have_python" = 1 ] || skip "python3-libvirt is needed (to hold libvirtd's test driver state)"

for daemon in libvirtd remvirtd; do
    "start_$daemon"
    if [ "$daemon" = libvirtd ]; then uri=$LIBVIRTD_URI; else uri=$REMVIRTD_URI; fi
    hold "$uri"
    hold_pid=$BG_PID
    virsh_transcript "$uri" "$uri" "$RV_TMP" mask_times > "$RV_TMP/$daemon.txt"
    _rv_bg_kill "$hold_pid" || true
    # python starts from a fresh daemon.
    "stop_$daemon"
    "start_$daemon"
    pycheck "$uri" > "$RV_TMP/py-$daemon.txt"
    [ "$daemon" = remvirtd ] || stop_libvirtd
done

# rvsh against remvirtd prints what virsh printed, for the commands it
# has (not snapshot-create, nor the flags libvirt's test driver refuses).
rvsh_steps=()
for s in "${steps[@]}"; do
    case $s in
    *"snapshot-create test"|*--no-metadata*|*--disk-only*) ;;
    *) rvsh_steps+=("$s") ;;
    esac
done
transcript()
{
    local tool=$1 step rc
    for step in "${rvsh_steps[@]}"; do
        step=${step#mask:}
        rc=0
        "$tool" -c "$REMVIRTD_URI" $step >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== %s\n' "$step"
        mask_times < "$RV_TMP/out"
        echo "--- stderr"
        mask_times < "$RV_TMP/err"
        echo "--- exit status $rc"
    done
}
for tool in virsh "$top_builddir/rvsh"; do
    stop_remvirtd
    start_remvirtd
    transcript "$tool" > "$RV_TMP/$(basename "$tool")-steps.txt"
done

status=0
if ! diff -u "$RV_TMP/virsh-steps.txt" "$RV_TMP/rvsh-steps.txt"; then
    echo "rvsh's snapshot-* output differs from virsh's (--- virsh, +++ rvsh)"
    status=1
fi
if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh snapshot-* output differs (--- libvirtd, +++ remvirtd)"
    status=1
fi
if ! diff -u "$RV_TMP/py-libvirtd.txt" "$RV_TMP/py-remvirtd.txt"; then
    echo "python3-libvirt's snapshot calls differ (--- libvirtd, +++ remvirtd)"
    status=1
fi
grep -q "Domain snapshot s1 created" "$RV_TMP/remvirtd.txt" || { echo "no snapshot made"; status=1; }
grep -q "<name>s1</name>" "$RV_TMP/remvirtd.txt" || { echo "no snapshot XML"; status=1; }
grep -qF "revert s1 paused domain events [('test', 5, 6), ('test', 2, 3)]" "$RV_TMP/py-remvirtd.txt" ||
    { echo "no revert events"; status=1; }
[ "$status" -eq 0 ] || fail "snapshot commands against remvirtd do not match libvirtd"
echo "virsh: ${#steps[@]} snapshot-* commands and python3-libvirt's snapshot calls (with their" \
     "events) print the same against remvirtd and libvirtd; rvsh prints what virsh does for" \
     "${#rvsh_steps[@]} of them"
