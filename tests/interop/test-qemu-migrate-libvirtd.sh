#!/usr/bin/env bash
# Live migration between a stock libvirtd 9.0 and remvirtd: the way an
# operator moves running guests onto remvirt without a reboot.  A stock
# libvirtd in this test's namespace (A, 10.231.0.1:16510), a remvirtd in
# the other (B, 10.231.0.2, tests/migrate-hosts.sh), the guest's disk in
# a directory both see; `virsh migrate --live` (managed direct) from the
# libvirtd to remvirtd, then back:
#   - the guest runs on the destination only, its memory came along (the
#     SSH keys its agent keeps in RAM are there), and it still answers;
#   - a guest remvirtd cannot run is refused at PREPARE3, still running
#     on libvirtd;
#   - remvirtd restarted while it has a guest from libvirtd keeps it;
#   - each daemon's QEMU command line and QEMU's own error are shown when
#     the stream does not load.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

! why=$(libvirtd_qemu_why_not) || skip "$why"

migrate_hosts_up
start_libvirtd_qemu 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
    'listen_addr = "10.231.0.1"' 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000a"' \
    'log_filters = "1:qemu.qemu_migration_cookie 1:qemu.qemu_migration 3:*"' \
    "log_outputs = \"1:file:$RV_TMP/libvirtd/libvirtd.log\""
LA=qemu+tcp://10.231.0.1:16510/system
start_b

shared_guest_xml g
# What virt-manager gives a new guest, with a user-mode network (none
# joins the two namespaces) and VNC (remvirtd's SPICE is not tested here).
RICH="<graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'/><video><model type='vga'/></video>"
RICH+="<input type='tablet' bus='usb'/><rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>"
RICH+="<interface type='user'><model type='virtio'/></interface><sound model='ich6'/><watchdog model='i6300esb' action='reset'/>"
RICH+="<controller type='usb' model='piix3-uhci'/><disk type='file' device='cdrom'><target dev='hdc' bus='ide'/><readonly/></disk>"
shared_guest_xml vm "$RICH"
# q35, as virt-manager makes new guests: libvirtd gives each PCI
# Express device a pcie-root-port of its own.
Q35="<graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'/><video><model type='vga'/></video>"
Q35+="<input type='tablet' bus='usb'/><rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>"
Q35+="<interface type='user'><model type='virtio'/></interface><disk type='file' device='cdrom'><target dev='sdc' bus='sata'/><readonly/></disk>"
shared_guest_xml q "$Q35"
sed -i "s|machine='pc'|machine='q35'|" "$OUT/q.xml"

KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMigratedFromLibvirtdToRemvirtd000 rv@migrate"
echo "$KEY" > "$OUT/key"
key_on() { virsh -q -c "$1" get-user-sshkeys "$2" root 2> /dev/null | grep -qF "$KEY"; }

# What each side ran QEMU with, and QEMU's own words, for a failure.
explain()
{
    echo "--- libvirtd's QEMU:" >&2
    cat "$LIBVIRTD_DIR/log/qemu/$1.log" >&2 2> /dev/null || true
    echo "--- remvirtd B's QEMU:" >&2
    cat "$BDIR/qemu/run/$1.log" >&2 2> /dev/null || true
    show "$BDIR/remvirtd.log"
}

bg "$OUT/events-a" virsh -c "$LA" event --all --loop --timestamp
bg "$OUT/events-b" virsh -c "$B" event --all --loop --timestamp

# ms since the epoch, for the figures
now_ms() { date +%s%3N; }

# round_trip NAME [--move|--restart]: NAME, defined and started on
# libvirtd with a key in its agent's memory, goes to remvirtd and back,
# running all along; with --move its definition goes along (--persistent
# --undefinesource) each way; with --restart remvirtd restarts while it
# has the guest.
round_trip()
{
    local g=$1 move= restart= flags=() t0 persistent=no
    case ${2:-} in --move) move=1 ;; --restart) restart=--restart ;; esac
    [ -z "$move" ] || { flags=(--persistent --undefinesource); persistent=yes; }
    agent_guest_up "$LA" "$g" "$OUT/$g.xml"
    virsh -q -c "$LA" set-user-sshkeys "$g" root --file "$OUT/key" > /dev/null
    key_on "$LA" "$g" || fail "$g: the key is not in the guest"
    # ---- libvirtd -> remvirtd ----
    t0=$(now_ms)
    LIBVIRT_LOG_FILTERS="1:libvirt 1:remote" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/$g-virsh.log" \
        virsh -q -c "$LA" migrate --live --unsafe "${flags[@]}" "$g" "$B" > "$OUT/$g-to-b" 2>&1 ||
        { show "$OUT/$g-to-b"; explain "$g"; fail "$g: libvirtd -> remvirtd: virsh migrate"; }
    echo "$g: libvirtd -> remvirtd: virsh migrate took $(($(now_ms) - t0)) ms" >&2
    sed -n 's/.*virDomainMigrateVersion3Full:[0-9]* : \([A-Za-z0-9]*\) .*/\1/p' "$OUT/$g-virsh.log" | tr '\n' ' ' > "$OUT/$g-steps"
    [ "$(cat "$OUT/$g-steps")" = "Begin3 Prepare3 Perform3 Finish3 Confirm3 " ] ||
        { show "$OUT/$g-steps"; fail "$g: virsh did not take the version 3 steps"; }
    virsh -q -c "$B" domstate --reason "$g" | grep -q "running (migrated)" || fail "$g: not running (migrated) on remvirtd"
    [ "$(virsh -q -c "$B" dominfo "$g" | sed -n 's/^Persistent: *//p')" = $persistent ] || fail "$g: Persistent on remvirtd is not $persistent"
    if [ -n "$move" ]; then
        [ -z "$(virsh -q -c "$LA" list --all --name)" ] || fail "$g: libvirtd kept the definition"
    else
        [ "$(virsh -q -c "$LA" domstate "$g")" = "shut off" ] || fail "$g: not shut off on libvirtd"
    fi
    wait_for 60 "$g's key, in its memory, on remvirtd" key_on "$B" "$g"
    if [ "$restart" = --restart ]; then
        # remvirtd restarted: it takes the guest that came from libvirtd
        # back as its own (its definition as it was read at PREPARE3)
        restart_b
        virsh -q -c "$B" domstate --reason "$g" | grep -q "running (migrated)" ||
            fail "$g: not running (migrated) on remvirtd after its restart"
        key_on "$B" "$g" || fail "$g: the key is gone after remvirtd's restart"
    fi
    # ---- and back: remvirtd -> libvirtd (its address: libvirtd would
    # answer its host name) ----
    t0=$(now_ms)
    virsh -q -c "$B" migrate --live --unsafe "${flags[@]}" --migrateuri tcp://10.231.0.1 "$g" "$LA" > "$OUT/$g-to-a" 2>&1 ||
        { show "$OUT/$g-to-a"; explain "$g"; fail "$g: remvirtd -> libvirtd: virsh migrate"; }
    echo "$g: remvirtd -> libvirtd: virsh migrate took $(($(now_ms) - t0)) ms" >&2
    virsh -q -c "$LA" domstate --reason "$g" | grep -q "running (migrated)" || fail "$g: not running (migrated) on libvirtd"
    [ -z "$(virsh -q -c "$B" list --all --name)" ] || fail "$g: remvirtd kept the domain"
    [ -z "$(qemu_pids "$BDIR/qemu/run/")" ] || fail "$g: remvirtd kept a QEMU"
    [ ! -f "$BDIR/qemu/etc/$g.xml" ] || fail "$g: remvirtd kept $g.xml"
    [ "$(virsh -q -c "$LA" dominfo "$g" | sed -n 's/^Persistent: *//p')" = yes ] || fail "$g: not persistent on libvirtd"
    wait_for 60 "$g's key, in its memory, on libvirtd again" key_on "$LA" "$g"
    agent_guest_down "$LA" "$g"
}
# ---- a guest remvirtd does not run (a pvpanic device): refused at
# PREPARE3 with remvirtd's reason; it runs on libvirtd as before ----
shared_guest_xml p "<panic model='isa'/>"
virsh -q -c "$LA" create "$OUT/p.xml" > /dev/null
if virsh -q -c "$LA" migrate --live --unsafe p "$B" > "$OUT/p-to-b" 2>&1; then
    fail "a guest with a <panic> device migrated to remvirtd"
fi
grep -q "unsupported element <panic>" "$OUT/p-to-b" || { show "$OUT/p-to-b"; fail "the refusal does not say why"; }
[ "$(virsh -q -c "$LA" domstate p)" = running ] || fail "p is not running on libvirtd after the refusal"
[ -z "$(virsh -q -c "$B" list --all --name)" ] || fail "remvirtd kept a domain after the refusal"
[ -z "$(qemu_pids "$BDIR/qemu/run/")" ] || fail "remvirtd kept a QEMU after the refusal"
virsh -q -c "$LA" destroy p > /dev/null

round_trip g
round_trip vm --move
round_trip q --restart
sleep 1
for e in "Suspended Migrated" "Stopped Migrated" "Started Migrated" "Resumed Migrated"; do
    for side in a b; do
        [ "$(grep -c "lifecycle.*'vm'.*$e" "$OUT/events-$side")" = 1 ] || { show "$OUT/events-$side"; fail "$side: not one $e of vm"; }
    done
done
# The guest's pause as it saw it: stopped on one side to running on the
# other (events' times; both daemons share this machine's clock).
ev_ms() { date -d "$(grep "lifecycle.*'vm'.*$2" "$OUT/events-$1" | cut -d' ' -f1,2 | sed 's/:$//')" +%s%3N; }
echo "vm paused libvirtd -> remvirtd: $(($(ev_ms b "Resumed Migrated") - $(ev_ms a "Suspended Migrated"))) ms," \
    "remvirtd -> libvirtd: $(($(ev_ms a "Resumed Migrated") - $(ev_ms b "Suspended Migrated"))) ms" >&2
