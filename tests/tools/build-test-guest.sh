#!/usr/bin/env bash
# build-test-guest.sh DIR: a tiny guest that boots, for the QEMU driver's
# tests, made from Debian packages: DIR/vmlinuz (Debian's kernel) and
# DIR/initrd.img (busybox-static and a few of the kernel's modules).
# Its /init mounts /proc, /sys and /dev, loads the ACPI button, evdev,
# virtio balloon and i6300esb watchdog modules, brings up loopback (with
# an alias lo:1, 127.0.0.2, as a guest with an aliased address has it), says "remvirt-test-guest: ready" on the console
# (console=ttyS0) and powers off when the ACPI power button is pressed.
# It onlines the vCPUs that are hotplugged (as udev would), and answers
# as a guest agent (below) unless its command line says
# remvirt.agent=mute (nothing reads the port) or remvirt.agent=fail
# (guest-shutdown is answered with an error).
# remvirt.watchdog=fire on its command line: /init opens the watchdog
# (/dev/watchdog, the i6300esb's when the domain has one) with a 2 s
# timeout and never writes to it again, so the watchdog fires.
# remvirt.counter=on: a number counted up from 1 every 0.2 s, each said
# on the console ("remvirt-test-guest: counter N"), so that a test sees
# the guest's memory and CPU state go on across a migration.
# remvirt.diskwrite=on: 64 KiB written (and synced) to the virtio disk
# /dev/vda every 0.1 s, each at the next offset (from the start again at
# its end), so that a host file system that fills up fails a write.
# A virtio NIC (eth0) asks for a DHCP lease in the background, silently
# (busybox udhcpc), and takes the address it gets.
# The packages are fetched with `apt-get download` (no install, no root)
# into DIR/debs; a DIR that already holds both files is left as it is.
# Exit 0 when DIR is ready, 1 (with the reason on stderr) when not.
# One build at a time in DIR (DIR/.lock): the tests share it.
set -euo pipefail

dir=${1:?usage: build-test-guest.sh DIR}
mkdir -p "$dir"
exec 9> "$dir/.lock"
flock 9
# Bump when the guest changes, so that a kept build from an older script
# is made again (a newer one is kept: helpers share the directory).
guest_version=11
[ -s "$dir/vmlinuz" ] && [ -s "$dir/initrd.img" ] &&
    [ "$(cat "$dir/version" 2> /dev/null || echo 0)" -ge "$guest_version" ] && exit 0

mkdir -p "$dir/debs"
work=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The metapackage names the current kernel package.
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
       awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
if [ -z "$kpkg" ]; then
    echo "build-test-guest: apt-cache knows no linux-image-amd64 (run apt-get update)" >&2
    exit 1
fi
for pkg in "$kpkg" busybox-static; do
    if ! ls "$dir/debs/${pkg}_"*.deb > /dev/null 2>&1; then
        (cd "$work" && apt-get download -q "$pkg" > /dev/null) || {
            echo "build-test-guest: cannot download $pkg" >&2
            exit 1
        }
        mv "$work/${pkg}_"*.deb "$dir/debs/"
    fi
done

dpkg-deb -x "$dir/debs/${kpkg}_"*.deb "$work/kernel"
dpkg-deb -x "$dir/debs/busybox-static_"*.deb "$work/busybox"
moddir=$(echo "$work/kernel/lib/modules/"*)

root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/modules"
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"

# The modules wanted and what they need, in load order.  The package has
# no modules.dep (depmod makes it when installed): a module's .modinfo
# section says "depends=a,b".
wanted=(button evdev virtio_pci virtio_balloon virtio_console virtio_net virtio_blk i6300esb)
order=()
add_module()
{
    local name=$1 file dep
    for dep in "${order[@]}"; do [ "$dep" = "$name" ] && return 0; done
    file=$(find "$moddir" -name "$name.ko" | head -n 1)
    if [ -z "$file" ]; then
        echo "build-test-guest: no module $name in $kpkg" >&2
        exit 1
    fi
    for dep in $(grep -a -o 'depends=[a-z0-9_,-]*' "$file" | head -n 1 | sed 's/^depends=//; s/,/ /g'); do
        add_module "${dep//-/_}"
    done
    cp "$file" "$root/modules/"
    order+=("$name")
    echo "$name.ko" >> "$root/modules/order"
}
for m in "${wanted[@]}"; do
    add_module "$m"
done

cat > "$root/init" <<'EOF'
#!/bin/sh
/bin/busybox mount -t devtmpfs dev /dev
exec < /dev/console > /dev/console 2>&1
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
for m in $(cat /modules/order); do
    insmod "/modules/$m"
done
ip link set lo up
ip addr add 127.0.0.2/8 dev lo label lo:1
# DHCP on the first NIC, when there is one; nothing on the console.
if [ -e /sys/class/net/eth0 ]; then
    ip link set eth0 up
    udhcpc -f -i eth0 -T 1 -A 2 -s /udhcpc.script > /dev/null 2>&1 &
fi
# A read of a power button's event device blocks until it is pressed.
for ev in /sys/class/input/event*; do
    [ "$(cat "$ev/device/name")" = "Power Button" ] || continue
    (dd if="/dev/input/${ev##*/}" of=/dev/null bs=24 count=1 2> /dev/null
     echo "remvirt-test-guest: power button"
     sleep 1        # (a second for the serial port to send the line)
     poweroff -f) &
done
# Hotplugged vCPUs come offline: online them, as udev's rule would.
(while :; do
     for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
         [ "$(cat "$c" 2> /dev/null)" = 0 ] && echo 1 > "$c" 2> /dev/null
     done
     sleep 1
 done) &
# The watchdog armed and left: busybox's applet sets the timeout and,
# told to kick only every hour, lets it run out.
case " $(cat /proc/cmdline) " in
*" remvirt.watchdog=fire "*)
    wait=0
    while [ ! -e /dev/watchdog ] && [ $wait -lt 10 ]; do sleep 1; wait=$((wait + 1)); done
    watchdog -T 2 -t 3600 /dev/watchdog && echo "remvirt-test-guest: watchdog armed" ;;
esac
case " $(cat /proc/cmdline) " in
*" remvirt.counter=on "*)
    (n=0; while :; do n=$((n + 1)); echo "remvirt-test-guest: counter $n"; sleep 0.2; done) & ;;
esac
case " $(cat /proc/cmdline) " in
*" remvirt.diskwrite=on "*)
    (wait=0
     while [ ! -b /dev/vda ] && [ $wait -lt 20 ]; do sleep 0.5; wait=$((wait + 1)); done
     chunks=$(($(cat /sys/block/vda/size 2> /dev/null || echo 128) / 128))
     i=0
     echo "remvirt-test-guest: disk writes"
     while :; do
         dd if=/dev/urandom of=/dev/vda bs=64k count=1 seek=$i conv=fsync 2> /dev/null
         i=$(((i + 1) % chunks)); sleep 0.1
     done) & ;;
esac
agent=on
case " $(cat /proc/cmdline) " in
*" remvirt.agent=mute "*) agent=mute ;;
*" remvirt.agent=fail "*) agent=fail ;;
esac
# A stand-in for qemu-ga on the org.qemu.guest_agent.0 port (JSON lines):
# guest-sync(-delimited) echo the id, guest-ping, guest-get-host-name,
# guest-get-time, guest-set-time (date -s), guest-shutdown; file systems
# frozen and thawed (one, or the mount points named) and trimmed; a
# password set (said on the console); SSH keys kept in /ssh-keys
# (added, appended; a removal removes them all); the vCPUs from sysfs;
# two file systems, one on the disk at PCI slot 7
# (a change is counted, not made); users, OS and time zone made up;
# suspend said on the console and not done; the network interfaces and
# their addresses as `ip` shows them (one entry per address label, in
# the kernel's order, as qemu-ga's getifaddrs() lists them).  Like
# qemu-ga, it opens its port once and keeps it open: a read ends when the
# host side is not connected, and it reads again a moment later.
# (Closing and reopening the port instead told the host "agent gone" and
# "agent back" each time, and libvirtd, which connects only once it hears
# "back", could lose every race with the guest's next read: under load
# its agent never came.)
# guest-network-get-interfaces' list in qemu-ga's order (getifaddrs():
# the links, then their addresses, an address with a label of its own,
# "lo:1", under that name), from `ip -o link` and `ip -o addr` ("2: eth0
# inet 10.0.0.2/24 brd ... scope global eth0\ ..."; the label, when
# there is one, ends in the backslash); ip-addresses left out when none.
net_interfaces()
{
    { ip -o link show; ip -o addr show; } | awk '
        function hw(dev,   f, a) {
            f = "/sys/class/net/" dev "/address"; a = ""
            getline a < f; close(f); return a
        }
        function entry(name, dev) {
            if (!(name in addrs)) { order[n++] = name; devof[name] = dev; addrs[name] = "" }
        }
        $3 == "inet" || $3 == "inet6" {
            label = $2
            for (i = 5; i <= NF; i++)
                if ($i ~ /\\$/) { if ($i != "\\") label = substr($i, 1, length($i) - 1); break }
            entry(label, $2)
            split($4, ap, "/")
            addrs[label] = addrs[label] (addrs[label] == "" ? "" : ", ") \
                "{\"ip-address-type\": \"" ($3 == "inet" ? "ipv4" : "ipv6") "\", \"ip-address\": \"" \
                ap[1] "\", \"prefix\": " ap[2] "}"
            next
        }
        $2 ~ /:$/ { dev = $2; sub(/:$/, "", dev); sub(/@.*/, "", dev); entry(dev, dev) }
        END {
            for (i = 0; i < n; i++) {
                l = order[i]
                printf "%s{\"name\": \"%s\", \"hardware-address\": \"%s\"", (i ? ", " : ""), l, hw(devof[l])
                if (addrs[l] != "") printf ", \"ip-addresses\": [%s]", addrs[l]
                printf "}"
            }
        }'
}
for p in /sys/class/virtio-ports/*; do
    [ "$agent" != mute ] || break
    [ "$(cat "$p/name" 2> /dev/null)" = org.qemu.guest_agent.0 ] || continue
    (exec <> "/dev/${p##*/}" >&0     # one open: a virtio port takes no second
     while :; do
         while read -r line; do
             id=$(echo "$line" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
             case $line in
             *guest-sync-delimited*) printf '\377{"return": %s}\n' "$id" ;;
             *guest-sync*) printf '{"return": %s}\n' "$id" ;;
             *guest-ping*) echo '{"return": {}}' ;;
             *guest-get-host-name*) echo '{"return": {"host-name": "remvirt-test-guest"}}' ;;
             *guest-get-timezone*) echo '{"return": {"zone": "UTC", "offset": 0}}' ;;
             *guest-get-time*) echo "{\"return\": $(date +%s)000000000}" ;;
             *guest-set-time*)
                 ns=$(echo "$line" | sed -n 's/.*"time": *\([0-9]*\).*/\1/p')
                 [ -z "$ns" ] || date -s "@$((ns / 1000000000))" > /dev/null
                 echo '{"return": {}}' ;;
             *guest-fsfreeze-freeze-list*)
                 echo "{\"return\": $(echo "$line" | grep -o '"/[^"]*"' | wc -l)}" ;;
             *guest-fsfreeze-freeze*|*guest-fsfreeze-thaw*) echo '{"return": 1}' ;;
             *guest-fstrim*) echo '{"return": {"paths": [{"path": "/"}]}}' ;;
             *guest-set-user-password*)
                 u=$(echo "$line" | sed -n 's/.*"username": *"\([^"]*\)".*/\1/p')
                 echo "remvirt-test-guest: password set for $u" > /dev/console
                 echo '{"return": {}}' ;;
             *guest-ssh-get-authorized-keys*)
                 echo "{\"return\": {\"keys\": $(cat /ssh-keys 2> /dev/null || echo '[]')}}" ;;
             *guest-ssh-add-authorized-keys*)
                 new=$(echo "$line" | sed -n 's/.*"keys": *\[\([^]]*\)\].*/\1/p')
                 old=$(cat /ssh-keys 2> /dev/null || echo '[]')
                 old=${old#[}; old=${old%]}
                 case $line in *'"reset":true'*|*'"reset": true'*) old= ;; esac
                 echo "[$old${old:+${new:+, }}$new]" > /ssh-keys
                 echo '{"return": {}}' ;;
             *guest-ssh-remove-authorized-keys*) echo '[]' > /ssh-keys; echo '{"return": {}}' ;;
             *guest-get-vcpus*)
                 l=
                 for c in /sys/devices/system/cpu/cpu[0-9]*; do
                     on=true can=false
                     [ -f "$c/online" ] && can=true && [ "$(cat "$c/online")" = 0 ] && on=false
                     l="$l{\"logical-id\": ${c##*cpu}, \"online\": $on, \"can-offline\": $can}, "
                 done
                 echo "{\"return\": [${l%, }]}" ;;
             *guest-set-vcpus*) echo "{\"return\": $(echo "$line" | grep -o logical-id | wc -l)}" ;;
             *guest-get-fsinfo*)
                 # the disk at PCI slot 7 (where test-qemu-info.sh puts one), last mounted first
                 echo '{"return": [{"name": "vda1", "mountpoint": "/data", "type": "ext4", "used-bytes": 1024, "total-bytes": 4096, "disk": [{"bus-type": "virtio", "bus": 0, "target": 0, "unit": 0, "pci-controller": {"domain": 0, "bus": 0, "slot": 7, "function": 0}, "dev": "/dev/vda1", "serial": "rv"}]}, {"name": "rootfs", "mountpoint": "/", "type": "rootfs", "disk": []}]}' ;;
             *guest-network-get-interfaces*) echo "{\"return\": [$(net_interfaces)]}" ;;
             *guest-get-users*) echo '{"return": [{"user": "root", "login-time": 1700000000.25}]}' ;;
             *guest-get-osinfo*)
                 echo "{\"return\": {\"id\": \"remvirt\", \"name\": \"remvirt test guest\", \"version-id\": \"7\", \"kernel-release\": \"$(uname -r)\", \"machine\": \"$(uname -m)\"}}" ;;
             *guest-suspend-*) echo "remvirt-test-guest: agent suspend" > /dev/console ;;
             *guest-shutdown*)
                 if [ "$agent" = fail ]; then
                     echo "remvirt-test-guest: agent refuses" > /dev/console
                     echo '{"error": {"class": "GenericError", "desc": "refused by the test agent"}}'
                 elif [ -z "${line##*reboot*}" ]; then
                     # (a second for the serial port to send the line)
                     echo "remvirt-test-guest: agent reboot" > /dev/console; sleep 1; reboot -f
                 else
                     echo "remvirt-test-guest: agent powerdown" > /dev/console; sleep 1; poweroff -f
                 fi ;;
             *) echo '{"error": {"class": "CommandNotFound", "desc": "not in the test agent"}}' ;;
             esac
         done
         sleep 0.2
     done) &
done
echo "remvirt-test-guest: ready"
while :; do sleep 3600; done
EOF
chmod +x "$root/init"
# udhcpc's hook: $ip and $mask (prefix bits) of a lease on $interface.
cat > "$root/udhcpc.script" <<'EOF'
#!/bin/sh
case $1 in
bound|renew) ip addr flush dev "$interface"; ip addr add "$ip/$mask" dev "$interface" ;;
deconfig) ip addr flush dev "$interface"; ip link set "$interface" up ;;
esac
EOF
chmod +x "$root/udhcpc.script"

cp "$work/kernel/boot/vmlinuz-"* "$work/vmlinuz"
(cd "$root" && find . | "$root/bin/busybox" cpio -o -H newc 2> /dev/null | gzip -1) > "$work/initrd.img"
mv "$work/initrd.img" "$dir/initrd.img"
mv "$work/vmlinuz" "$dir/vmlinuz"
echo "$guest_version" > "$dir/version"
