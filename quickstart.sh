#!/usr/bin/env bash
# From a fresh Debian 12, as root: install the build dependencies, build
# remvirt in ./build, start remvirtd with the in-memory test driver on a
# socket in a new private directory (mktemp -d /tmp/remvirt-quickstart.*),
# and show `rvsh list --all` and `rvsh dominfo test` against it.
#
# With --qemu: a real guest instead.  It also installs QEMU and what NAT
# networks need, builds the tests' small guest (Debian's kernel and
# busybox, tests/tools/build-test-guest.sh), starts remvirtd with its
# QEMU driver on private directories, and defines and starts the guest,
# with KVM when /dev/kvm boots it (else TCG), on a NAT network of
# remvirtd's own as root, or with QEMU's user-mode networking when run
# unprivileged (the packages installed beforehand).  It shows `rvsh list`,
# `dominfo`, the guest's DHCP lease and ping, and its console's last lines.
#
# remvirtd keeps running afterwards so you can try more commands (rvsh,
# or virsh with the same URI); the last lines say its URI and how to stop
# it.  Running the script again restarts it with a fresh build.
#
#   sudo ./quickstart.sh            as above
#   sudo ./quickstart.sh --qemu     a real guest
#   sudo ./quickstart.sh --stop     stop the quickstart remvirtd (and guest)
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
# The run directory's name is random, so nobody can prepare it (or links
# in it) for root in the shared /tmp; this file says where it is.
statefile=$top/build/quickstart-rundir

# The recorded run directory, if it is still one this script made as this
# user.
recorded_rundir()
{
    local dir
    [ -f "$statefile" ] && [ ! -L "$statefile" ] || return 1
    dir=$(cat "$statefile")
    [[ $dir =~ ^/tmp/remvirt-quickstart\.[A-Za-z0-9]{10}$ ]] && [ -d "$dir" ] &&
        [ ! -L "$dir" ] && [ "$(stat -c %u "$dir")" = "$(id -u)" ] && echo "$dir"
}

# QEMU processes started from the run directory DIR (their command lines
# name its files).
qemu_pids()
{
    local f
    for f in /proc/[0-9]*/cmdline; do
        { tr '\0' ' ' < "$f"; } 2>/dev/null | grep -q "qemu-system.* -name guest=.*$1/" &&
            { f=${f#/proc/}; echo "${f%/cmdline}"; }
    done
    return 0
}

stop_daemon()
{
    local dir pid
    dir=$(recorded_rundir) || return 0
    # The guest and the network first: remvirtd leaves them running when
    # it stops (it finds them again when it starts).
    if [ -s "$dir/uri" ] && [ -S "$dir/remvirt-sock" ]; then
        "$top/build/rvsh" -c "$(cat "$dir/uri")" destroy guest > /dev/null 2>&1 || true
        "$top/build/rvsh" -c "$(cat "$dir/uri")" net-destroy quickstart > /dev/null 2>&1 || true
    fi
    if [ -s "$dir/remvirtd.pid" ]; then
        pid=$(cat "$dir/remvirtd.pid")
        if kill -TERM "$pid" 2>/dev/null; then
            for _ in $(seq 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            if kill -0 "$pid" 2>/dev/null; then
                echo "quickstart: remvirtd (pid $pid) did not stop after SIGTERM" >&2
                return 1
            fi
        fi
    fi
    # A guest that outlived a remvirtd killed before.
    for pid in $(qemu_pids "$dir"); do
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -rf "$dir" "$statefile"
}

mode=test
case ${1:-} in
--stop)
    stop_daemon; echo "remvirtd stopped"; exit 0 ;;
--qemu) mode=qemu ;;
-h|--help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "quickstart: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "quickstart: one option at most (see --help)" >&2; exit 2; }

mapfile -t build_deps < <(bash "$top/tests/check.sh" --print-build-deps)
# The guest is built with apt-get download and dpkg-deb; NAT networks run
# dnsmasq and nft on a bridge (ip); ping asks the guest.
qemu_deps=(qemu-system-x86 dnsmasq-base nftables iproute2 iputils-ping)
if [ "$(id -u)" -eq 0 ]; then
    echo "== Installing the build dependencies"
    export DEBIAN_FRONTEND=noninteractive
    # Without a way out, what is installed already still serves.
    apt-get update -q || echo "quickstart: apt-get update failed; going on with the package lists there are" >&2
    pkgs=("${build_deps[@]}")
    [ "$mode" = test ] || pkgs+=("${qemu_deps[@]}")
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${pkgs[@]}"
elif [ "$mode" = test ]; then
    echo "quickstart: run as root (it installs packages): sudo $0" >&2
    exit 1
else
    for cmd in make autoreconf cc qemu-system-x86_64 apt-get dpkg-deb; do
        command -v "$cmd" > /dev/null || {
            echo "quickstart: no $cmd; as root: apt-get install ${build_deps[*]} ${qemu_deps[*]}" >&2
            exit 1
        }
    done
fi

echo "== Building in $top/build"
cd "$top"
autoreconf -fi
mkdir -p build
cd build
../configure
make -j2

if [ "$mode" = qemu ]; then
    echo "== Building the test guest in $top/build/tests/guest"
    bash "$top/tests/tools/build-test-guest.sh" "$top/build/tests/guest"
fi

stop_daemon
rundir=$(mktemp -d /tmp/remvirt-quickstart.XXXXXXXXXX)
# Others may use the read-only socket (mode 0777); only its owner writes here.
chmod 755 "$rundir"
echo "$rundir" > "$statefile"
pidfile=$rundir/remvirtd.pid
if [ "$mode" = test ]; then
    uri="test+unix:///default?socket=$rundir/remvirt-sock"
elif [ "$(id -u)" -eq 0 ]; then
    uri="qemu+unix:///system?socket=$rundir/remvirt-sock"
else
    uri="qemu+unix:///session?socket=$rundir/remvirt-sock"
fi
echo "$uri" > "$rundir/uri"
sudo=
[ "$(id -u)" -ne 0 ] || sudo="sudo "
echo "== Starting remvirtd (socket dir $rundir)"
cat > "$rundir/remvirtd.conf" <<CONF
unix_sock_dir = "$rundir"
unix_sock_rw_perms = "0770"
unix_sock_ro_perms = "0777"
log_outputs = "3:file:$rundir/remvirtd.log"
qemu_config_dir = "$rundir/qemu/etc"
qemu_run_dir = "$rundir/qemu/run"
qemu_save_dir = "$rundir/qemu/save"
qemu_dump_dir = "$rundir/qemu/dump"
CONF
# setsid: the daemon outlives this script and its terminal.
setsid ./remvirtd -f "$rundir/remvirtd.conf" --pidfile "$pidfile" \
    </dev/null >>"$rundir/remvirtd.log" 2>&1 &
for _ in $(seq 100); do
    [ -S "$rundir/remvirt-sock" ] && [ -s "$pidfile" ] && break
    sleep 0.1
done
if ! [ -S "$rundir/remvirt-sock" ]; then
    echo "quickstart: remvirtd did not start; its log:" >&2
    cat "$rundir/remvirtd.log" >&2
    exit 1
fi

if [ "$mode" = test ]; then
    echo "== rvsh -c '$uri' list --all"
    ./rvsh -c "$uri" list --all
    echo "== rvsh -c '$uri' dominfo test"
    ./rvsh -c "$uri" dominfo test

    cat <<MSG
== remvirtd is still running (pid $(cat "$pidfile")).
Try:   $top/build/rvsh -c '$uri'
  or:  virsh -c '$uri' list --all
Stop:  sudo $top/quickstart.sh --stop    (or: kill \$(cat $pidfile))
MSG
    exit 0
fi

rv() { ./rvsh -c "$uri" "$@"; }
guest=$top/build/tests/guest
if [ "$(id -u)" -eq 0 ]; then
    # A /24 no interface of this machine is on.
    subnet=
    for n in $(seq 123 140); do
        ip -4 -o addr show | grep -q " inet 192\.168\.$n\." || { subnet=192.168.$n; break; }
    done
    [ -n "$subnet" ] || { echo "quickstart: 192.168.123-140.0/24 all in use here" >&2; exit 1; }
    cat > "$rundir/network.xml" <<XML
<network>
  <name>quickstart</name>
  <forward mode='nat'/>
  <ip address='$subnet.1' netmask='255.255.255.0'>
    <dhcp><range start='$subnet.100' end='$subnet.199'/></dhcp>
  </ip>
</network>
XML
    echo "== rvsh net-create: a NAT network, $subnet.0/24 with DHCP"
    rv net-create "$rundir/network.xml"
    nic="<interface type='network'><source network='quickstart'/><model type='virtio'/></interface>"
else
    nic="<interface type='user'><model type='virtio'/></interface>"
fi

# guest_xml TYPE: the domain, kvm or qemu (TCG); its console is a pty.
guest_xml()
{
    cat <<XML
<domain type='$1'>
  <name>guest</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$guest/vmlinuz</kernel>
    <initrd>$guest/initrd.img</initrd>
    <cmdline>console=ttyS0 panic=-1</cmdline>
  </os>
  <features><acpi/></features>
  <devices>$nic<serial type='pty'/></devices>
</domain>
XML
}

console=$rundir/console.log
reader=
stop_reader() { [ -z "$reader" ] || kill "$reader" 2>/dev/null || true; reader=; }
trap stop_reader EXIT
# start_guest TYPE: define and start it, and copy its console into
# $console from then on (QEMU names the pty in the domain's log).
start_guest()
{
    local pty=
    guest_xml "$1" > "$rundir/guest.xml"
    rv define "$rundir/guest.xml" > /dev/null
    rv start guest
    for _ in $(seq 50); do
        pty=$(sed -n 's|.*char device redirected to \(/dev/pts/[0-9]*\) (label charserial0).*|\1|p' \
              "$rundir/qemu/run/guest.log" 2>/dev/null | tail -n 1)
        [ -z "$pty" ] || break
        sleep 0.1
    done
    [ -n "$pty" ] || { echo "quickstart: no console pty in $rundir/qemu/run/guest.log" >&2; exit 1; }
    : > "$console"
    cat "$pty" >> "$console" &
    reader=$!
}
# console_has SECONDS TEXT
console_has()
{
    local i
    for ((i = 0; i < $1 * 10; i++)); do
        grep -q "$2" "$console" && return 0
        sleep 0.1
    done
    return 1
}

# KVM where /dev/kvm is there and boots the guest: a nested or refused
# KVM may start QEMU yet never run the kernel, whose first line comes
# within a second or two of the firmware's.
accel=
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    echo "== rvsh define + start guest: with KVM"
    start_guest kvm
    if console_has 6 "Linux version"; then
        accel=KVM
    else
        echo "== KVM did not boot the guest in 6 s (its console: $(grep -c . "$console") lines, no kernel): TCG instead"
        stop_reader
        rv destroy guest > /dev/null
        rv undefine guest > /dev/null
    fi
else
    echo "== /dev/kvm is not there or not usable by $(id -un): TCG"
fi
if [ -z "$accel" ]; then
    echo "== rvsh define + start guest: with TCG (QEMU's emulation, slower)"
    start_guest qemu
    accel=TCG
fi
console_has 120 "remvirt-test-guest: ready" ||
    { tail -n 20 "$console" >&2; echo "quickstart: the guest did not boot in 120 s" >&2; exit 1; }

echo "== rvsh list"
rv list
echo "== rvsh dominfo guest"
rv dominfo guest
if [ "$(id -u)" -eq 0 ]; then
    echo "== rvsh net-dhcp-leases quickstart"
    ip=
    for _ in $(seq 300); do
        ip=$(rv net-dhcp-leases quickstart 2>/dev/null | awk '$4 == "ipv4" { sub(/\/.*/, "", $5); print $5; exit }')
        [ -z "$ip" ] || break
        sleep 0.1
    done
    rv net-dhcp-leases quickstart
    [ -n "$ip" ] || { echo "quickstart: the guest got no DHCP lease in 30 s" >&2; exit 1; }
    # dnsmasq records the lease when it acknowledges it, before the guest
    # has set the address (a TCG guest can take seconds): one echo a second
    # until the first answer.
    echo "== ping -c 1 -w 30 $ip"
    ping -c 1 -w 30 "$ip" | grep "bytes from" ||
        { echo "quickstart: the guest does not answer ping in 30 s" >&2; exit 1; }
else
    echo "== user-mode networking: QEMU's own NAT gives the guest 10.0.2.15 (no DHCP lease to list)"
fi
stop_reader
echo "== the guest's console (last lines), running with $accel"
tail -n 6 "$console" | tr -d '\r'

cat <<MSG
== remvirtd and the guest are still running (remvirtd pid $(cat "$pidfile"), $accel).
Console:      $top/build/rvsh -c '$uri' console guest    (^] leaves)
         or:  virsh -c '$uri' console guest
More:         $top/build/rvsh -c '$uri'     (or virsh -c with the same URI)
virt-manager: virt-manager -c '$uri'
Stop all:     $sudo$top/quickstart.sh --stop
MSG
