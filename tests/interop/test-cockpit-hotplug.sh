#!/usr/bin/env bash
# cockpit-machines' device hotplug (issue 29), unchanged, against
# libvirtd's QEMU driver and against remvirtd's: cockpit-ws with its
# bridge in a local session, libvirt-dbus on a private system bus, the
# page in headless Chromium driven by selenium
# (tests/interop/cockpit-hotplug.py): Add disk (a new volume in a pool, an
# existing file), Add network interface, Unplug and Plug of it, Remove of
# the NIC and both disks, on a booted test guest.  What the page shows and
# the guest's live and persistent XML after each step must be the same
# from both daemons.  In a network and mount namespace of the test's own:
# /run/dbus and /run/libvirt here are tmpfs, and /run/libvirt/libvirt-sock
# (where libvirt-dbus finds qemu:///system) points at one daemon at a time.
set -euo pipefail
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view_cgroups
requires libvirt-dbus --help
requires dbus-daemon --version
requires test -x /usr/lib/cockpit/cockpit-ws
requires test -d /usr/share/cockpit/machines
requires chromedriver --version
requires "$SYSTEM_PYTHON3" -c 'import selenium'
start_both_qemu cockpit

mount -t tmpfs tmpfs /run/dbus
mount -t tmpfs tmpfs /run/libvirt
cat > "$OUT/bus.conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
bg "$OUT/dbus.log" dbus-daemon --config-file="$OUT/bus.conf" --nofork --nopidfile
wait_for 30 "the system bus" test -S /run/dbus/system_bus_socket
port=$(free_port)
bg "$OUT/cockpit-ws.log" /usr/lib/cockpit/cockpit-ws --local-session=/usr/bin/cockpit-bridge \
    --port "$port" --address 127.0.0.1
wait_for 30 "cockpit-ws" "$SYSTEM_PYTHON3" -c \
    "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')"

libvirt_dbus_up()
{
    dbus-send --system --print-reply --dest=org.libvirt /org/libvirt/QEMU \
        org.freedesktop.DBus.Properties.Get string:org.libvirt.Connect string:Version > /dev/null 2>&1
}

run()   # NAME URI SOCKET
{
    local dir=$OUT/$1 u=$2
    mkdir -p "$dir/pool" "$dir/shots"
    chmod 777 "$dir" "$dir/pool"
    qemu_guest_xml g |
        sed "s|<serial type='pty'/>|<serial type='file'><source path='$dir/console'/></serial>|" > "$dir/g.xml"
    virsh -q -c "$u" define "$dir/g.xml" > /dev/null
    virsh -q -c "$u" start g > /dev/null
    virsh -q -c "$u" pool-define-as rvpool dir --target "$dir/pool" > /dev/null
    virsh -q -c "$u" pool-start rvpool > /dev/null
    printf '%s\n' "<network><name>rvnet</name><bridge name='rvck0'/></network>" > "$dir/net.xml"
    virsh -q -c "$u" net-define "$dir/net.xml" > /dev/null
    virsh -q -c "$u" net-start rvnet > /dev/null
    qemu-img create -q -f raw "$dir/existing.img" 8M
    wait_for 240 "$1's guest to boot" grep -q "remvirt-test-guest: ready" "$dir/console"

    ln -sfn "$3" /run/libvirt/libvirt-sock
    bg "$dir/libvirt-dbus.log" libvirt-dbus --system
    local lvd=$BG_PID
    wait_for 30 "libvirt-dbus" libvirt_dbus_up
    env PYTHONDONTWRITEBYTECODE=1 "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/cockpit-hotplug.py" \
        "$port" "$u" "$dir/existing.img" "$dir/shots" > "$dir/out" 2> "$dir/err" ||
        { tail -20 "$dir/err"; cat "$dir/out"; _rv_show_file "$dir/libvirt-dbus.log.err"; fail "cockpit against $1"; }
    kill "$lvd"
    wait "$lvd" 2> /dev/null || true
    sed -i "s|$dir/|DIR/|g" "$dir/out"
    virsh -q -c "$u" destroy g > /dev/null
    virsh -q -c "$u" net-destroy rvnet > /dev/null
}
run libvirtd "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_SOCK"
run remvirtd "$QEMU_URI" "$REMVIRTD_SOCK"
same "$OUT/libvirtd/out" "$OUT/remvirtd/out" "cockpit's Add disk, Add network interface, Unplug and Remove as on libvirtd"
cat "$OUT/remvirtd/out"
