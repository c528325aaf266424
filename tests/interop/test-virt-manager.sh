#!/usr/bin/env bash
# Debian's virt-manager, a real GTK window under Xvfb, driven through
# AT-SPI by virt-manager-ui.py, against remvirtd's test driver and against
# libvirtd's, the same steps on both: the main window listing the
# domains, Host Details (overview, networks, storage and its volumes), a
# domain's details (overview, CPUs, memory, disk, NIC), Preferences with
# the memory/disk/network polling and graphs turned on, and the New VM
# wizard through to Finish (manual install, a new disk in the default
# pool, the default network), the new guest then listed and its disk
# shown in Host Details.
#
# virt-manager's libvirt logs every procedure it calls (rpc.netclient)
# and every error it gets: the set of procedures called, the set of
# those that failed and the set of error messages must be the same for
# both daemons, but for the differences listed in allowed_differences
# (documented in docs/compatibility.md).
#
# Screenshots of each step stay in $top_builddir/tests/virt-manager-shots
# (on failure too, with the widget tree in tree.txt).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/virt-manager-lib.sh"

requires_root
requires_virt_manager_ui
start_xvfb

# Lines of virt-manager-procs.py's output that may be in one daemon's set
# and not the other's (extended regexes), each with its reason; they are
# in docs/compatibility.md too.
allowed_differences=(
    # virtinst's progress thread polls the new disk's size while it is
    # created: whether it finds the volume before the creation ends is
    # timing.
    '^call STORAGE_VOL_GET_INFO$'
)

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

steps=(main host details prefs newvm new-disk)
export VM_EXPECT_DOMAINS=test VM_DOMAIN=test VM_EXPECT_NETWORK=default \
       VM_EXPECT_POOL=default-pool VM_NEW_NAME=rvnew1

start_remvirtd
run_virt_manager remvirtd "$REMVIRTD_URI" "${steps[@]}"
start_libvirtd
run_virt_manager libvirtd "$LIBVIRTD_URI" "${steps[@]}"
compare_wire remvirtd libvirtd
