#!/usr/bin/env bash
# Live migration between a stock libvirtd 9.0 and remvirtd: the way an
# operator moves running guests onto remvirt without a reboot.  A stock
# libvirtd in this test's namespace (A, 10.231.0.1:16510), a remvirtd in
# the other (B, 10.231.0.2, tests/migrate-hosts.sh), the guest's disk in
# a directory both see; `virsh migrate --live` (managed direct) from the
# libvirtd to remvirtd, then back:
#   - the guest runs on the destination only, its memory came along (the
#     SSH keys its agent keeps in RAM are there), and it still answers;
#   - each daemon's QEMU command line and QEMU's own error are shown when
#     the stream does not load.
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"

netns_view_cgroups
requires virsh
requires qemu-img --version
test_guest
! why=$(libvirtd_qemu_why_not) || skip "$why"

migrate_hosts_up
start_libvirtd_qemu 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
    'listen_addr = "10.231.0.1"' 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000a"' \
    'log_filters = "1:qemu.qemu_migration_cookie 1:qemu.qemu_migration 3:*"' \
    "log_outputs = \"1:file:$RV_TMP/libvirtd/libvirtd.log\""
LA=qemu+tcp://10.231.0.1:16510/system
start_b

OUT=$RV_TMP/migrate
SHARED=$RV_TMP/shared
mkdir -p "$OUT" "$SHARED"
qemu-img create -q -f qcow2 "$SHARED/g.qcow2" 16M
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
DISK="<disk type='file' device='disk'><driver name='qemu' type='qcow2' cache='none'/><source file='$SHARED/g.qcow2'/><target dev='vda' bus='virtio'/></disk>"
qemu_guest_xml g | sed "s|<devices>|<devices>$DISK$CHANNEL|" > "$OUT/g.xml"

agent_guest_up "$LA" g "$OUT/g.xml"
KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMigratedFromLibvirtdToRemvirtd000 rv@migrate"
echo "$KEY" > "$OUT/key"
virsh -q -c "$LA" set-user-sshkeys g root --file "$OUT/key" > /dev/null
key_on() { virsh -q -c "$1" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }
key_on "$LA" || fail "the key is not in the guest"

# What each side ran QEMU with, and QEMU's own words, for a failure.
explain()
{
    echo "--- libvirtd's QEMU:" >&2
    cat "$LIBVIRTD_DIR"/log/qemu/g.log >&2 2> /dev/null || true
    echo "--- remvirtd B's QEMU:" >&2
    cat "$BDIR"/qemu/run/*.log "$BDIR"/qemu/*/g.log >&2 2> /dev/null || true
    show "$BDIR/remvirtd.log"
}

virsh -q -c "$LA" dumpxml --migratable g > "$OUT/g-migratable.xml"
# ---- libvirtd -> remvirtd ----
LIBVIRT_LOG_FILTERS="1:libvirt 1:remote 1:qemu" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/virsh.log" \
    virsh -q -c "$LA" migrate --live --unsafe g "$B" > "$OUT/to-b" 2>&1 ||
    { show "$OUT/to-b"; explain; fail "libvirtd -> remvirtd: virsh migrate"; }
[ "$(virsh -q -c "$B" domstate g)" = running ] || fail "g is not running on B"
virsh -q -c "$B" domstate --reason g | grep -q "running (migrated)" || fail "B's reason"
[ -z "$(virsh -q -c "$LA" list --name)" ] || fail "g still runs on libvirtd"
wait_for 60 "the guest's key, in its memory, on remvirtd" key_on "$B"

# ---- and back: remvirtd -> libvirtd ----
virsh -q -c "$B" migrate --live --unsafe --migrateuri tcp://10.231.0.1 g "$LA" > "$OUT/to-a" 2>&1 ||
    { show "$OUT/to-a"; explain; fail "remvirtd -> libvirtd: virsh migrate"; }
[ "$(virsh -q -c "$LA" domstate g)" = running ] || fail "g is not running on libvirtd again"
[ -z "$(virsh -q -c "$B" list --all --name)" ] || fail "remvirtd kept the transient g"
wait_for 60 "the guest's key, in its memory, on libvirtd again" key_on "$LA"
agent_guest_down "$LA" g
