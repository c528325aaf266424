#!/usr/bin/env bash
# Runs inside dbus-run-session (a private session bus) for
# test-virt-manager.sh and bench/run-virt-manager-rtt.sh:
#
#   virt-manager-session.sh URI VM_OUT UI_SCRIPT SHOTS STEP...
#
# starts the accessibility bus, virt-manager --no-fork on URI (first-run
# settings in memory, so nothing of the user's is read or written; extra
# options in VM_OPTIONS), runs UI_SCRIPT's steps against it, then quits
# virt-manager.  Exit status: the UI script's, or 1 if virt-manager died.
set -uo pipefail
uri=$1 vm_out=$2 ui_script=$3 shots=$4
shift 4

# GTK talks to AT-SPI only with the bridge loaded and accessibility on.
export GTK_MODULES=gail:atk-bridge NO_AT_BRIDGE=0 GNOME_ACCESSIBILITY=1
/usr/libexec/at-spi-bus-launcher --launch-immediately >/dev/null 2>&1 &
bus_pid=$!
gsettings set org.gnome.desktop.interface toolkit-accessibility true 2>/dev/null

# shellcheck disable=SC2086
virt-manager --no-fork --test-options=first-run ${VM_OPTIONS:-} --connect "$uri" \
    >"$vm_out" 2>&1 </dev/null &
vm_pid=$!

status=0
timeout 600 /usr/bin/python3 "$ui_script" "$shots" "$@" || status=$?
if ! kill -0 "$vm_pid" 2>/dev/null; then
    echo "virt-manager exited during the steps" >&2
    status=1
fi
kill "$vm_pid" 2>/dev/null
wait "$vm_pid" 2>/dev/null
kill "$bus_pid" 2>/dev/null
wait "$bus_pid" 2>/dev/null
exit "$status"
