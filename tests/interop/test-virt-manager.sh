#!/usr/bin/env bash
# Debian's virt-manager, a real GTK window under Xvfb, driven through
# AT-SPI by virt-manager-ui.py, against remvirtd's test driver and against
# libvirtd's, the same steps on both: the main window listing the
# domains, Host Details (overview, networks, storage and its volumes), a
# domain's details (overview, CPUs, memory, disk, NIC), Preferences with
# the memory/disk/network polling and graphs turned on, and the New VM
# wizard through to Finish (manual install, a new disk in the default
# pool, the default network), the new guest then listed.
#
# virt-manager's libvirt logs every procedure it calls (rpc.netclient)
# and every error it gets: the sets of (procedure, error) pairs must be
# the same for both daemons, but for the differences listed in
# KNOWN_DIFFERENCES (documented in docs/compatibility.md).
#
# Screenshots of each step stay in $top_builddir/tests/virt-manager-shots
# (on failure too, with the widget tree in tree.txt).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires virt-manager
requires Xvfb
requires dbus-run-session
requires import
requires /usr/bin/python3 -c 'import dogtail'
[ -x /usr/libexec/at-spi-bus-launcher ] || skip "at-spi2-core is not installed"

ui=$top_srcdir/tests/interop/virt-manager-ui.py
shots_top=$top_builddir/tests/virt-manager-shots
rm -rf "$shots_top"
mkdir -p "$shots_top"

# A private X server on a display number it picks itself.
exec {display_fd}> "$RV_TMP/display"
Xvfb -displayfd "$display_fd" -screen 0 1280x1024x24 -nolisten tcp \
    </dev/null >"$RV_TMP/xvfb.log" 2>&1 &
xvfb_pid=$!
exec {display_fd}>&-
cleanup_fn kill "$xvfb_pid"
wait_for 30 "Xvfb's display number" test -s "$RV_TMP/display" ||
    fail "Xvfb did not start: $(cat "$RV_TMP/xvfb.log")"
export DISPLAY=:$(cat "$RV_TMP/display")

# run_virt_manager NAME URI STEP...: one virt-manager on URI, one
# connection throughout (libvirtd's test driver forgets its state when its
# last client leaves), with its libvirt's log in $RV_TMP/NAME.log and its
# screenshots in $shots_top/NAME.
run_virt_manager()
{
    local name=$1 uri=$2
    shift 2
    mkdir -p "$shots_top/$name"
    LIBVIRT_LOG_FILTERS="1:rpc.netclient 1:util.error" \
    LIBVIRT_LOG_OUTPUTS="1:file:$RV_TMP/$name.log" \
    dbus-run-session -- bash "$top_srcdir/tests/interop/virt-manager-session.sh" \
        "$uri" "$RV_TMP/$name.vm.out" "$ui" "$shots_top/$name" "$@" \
        >"$RV_TMP/$name.ui.out" 2>&1 || {
        cat "$RV_TMP/$name.ui.out" >&2
        _rv_show_file "$RV_TMP/$name.vm.out"
        fail "virt-manager against $name failed (screenshots in $shots_top/$name)"
    }
    cat "$RV_TMP/$name.ui.out"
}

# Lines of virt-manager-procs.py's output that may be in one daemon's set
# and not the other's (extended regexes), each with its reason; they are
# in docs/compatibility.md too.
allowed_differences=(
    # virtinst's progress thread polls the new disk's size while it is
    # created: whether it finds the volume before the creation ends is
    # timing.
    '^call STORAGE_VOL_GET_INFO$'
    # remvirtd does not have DOMAIN_LIST_ALL_SNAPSHOTS (274) yet
    # (snapshots are being added); virt-manager carries on without.
    '^(call|fail) (proc 274|DOMAIN_LIST_ALL_SNAPSHOTS)$'
    '^error this function is not supported by the connection driver: virDomainListAllSnapshots$'
    # remvirtd has no node device events (374,
    # CONNECT_NODE_DEVICE_EVENT_REGISTER_ANY): virt-manager falls back
    # to polling the node devices.
    '^(call|fail) (proc 374|CONNECT_NODE_DEVICE_EVENT_REGISTER_ANY)$'
    '^error this function is not supported by the connection driver: virConnectNodeDeviceEventRegisterAny$'
)

# wire_summary NAME: the calls and errors of NAME's session, sorted.
wire_summary()
{
    "$PYTHON3" "$top_srcdir/tests/interop/virt-manager-procs.py" \
        "$top_srcdir/protocol/rv_remote.x" "$RV_TMP/$1.log" > "$RV_TMP/$1.wire"
    # The log really has the session in it: the list of domains.
    grep -qx 'call CONNECT_LIST_ALL_DOMAINS' "$RV_TMP/$1.wire" ||
        fail "no CONNECT_LIST_ALL_DOMAINS in virt-manager's log of $1"
}

# compare_wire A B: fail on a line in one summary only, unless allowed.
compare_wire()
{
    local pattern unexpected
    wire_summary "$1"
    wire_summary "$2"
    unexpected=$(diff "$RV_TMP/$1.wire" "$RV_TMP/$2.wire" | grep '^[<>]' || true)
    for pattern in "${allowed_differences[@]}"; do
        unexpected=$(printf '%s\n' "$unexpected" | grep -Ev "^[<>] ${pattern#^}" || true)
    done
    if [ -n "$unexpected" ]; then
        echo "virt-manager's calls and errors differ ('<' $1 only, '>' $2 only):" >&2
        printf '%s\n' "$unexpected" >&2
        fail "$1 and $2 differ for virt-manager"
    fi
    echo "$1 and $2: $(grep -c '^call' "$RV_TMP/$1.wire") and" \
         "$(grep -c '^call' "$RV_TMP/$2.wire") procedures, same calls and errors"
}

steps=(main host details prefs newvm)
export VM_EXPECT_DOMAINS=test VM_DOMAIN=test VM_EXPECT_NETWORK=default \
       VM_EXPECT_POOL=default-pool VM_NEW_NAME=rvnew1

start_remvirtd
run_virt_manager remvirtd "$REMVIRTD_URI" "${steps[@]}"
start_libvirtd
run_virt_manager libvirtd "$LIBVIRTD_URI" "${steps[@]}"
compare_wire remvirtd libvirtd
