#!/usr/bin/env bash
# A domain's and the host's information calls on remvirtd's QEMU driver,
# side by side with libvirtd's (start_libvirtd_qemu): the same virsh
# commands against both, their transcripts compared.
#   - vcpucount --maximum, maxvcpus (the domain capabilities', else
#     CONNECT_GET_MAX_VCPUS's), domcontrol, iothreadinfo (no IOThreads), perf
#     (every event, disabled), shut off and running;
#   - domblkinfo of a raw and a qcow2 file disk (capacity, allocation and
#     physical as numbers), an empty cdrom, --all, shut off and running;
#   - sysinfo (on a host without SMBIOS tables: libvirtd's refusal);
#   - find-storage-pool-sources for dir, fs, netfs, iscsi and an unknown type;
#   - domfsinfo refused without the agent, and answered by the test
#     guest's agent (a file system on the guest's virtio disk);
#   - domiftune: <bandwidth> set with --config on network and bridge
#     interfaces, read back, written in the definition (also after a
#     restart of remvirtd); user networking and --live refused;
#   - info-checks.py (python3-libvirt): the flags virsh does not send.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires qemu-img --version
test_guest
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/cmp
mkdir -p "$OUT"

# On a host with SMBIOS tables libvirtd answers with its dmidecode
# reading, which remvirtd does not make: that step is left out there.
smbios=no
[ ! -r /sys/firmware/dmi/tables/DMI ] && [ ! -r /dev/mem ] || smbios=yes

DISKS="<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$OUT/r.img'/><target dev='vda' bus='virtio'/></disk>
<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/q.qcow2'/><target dev='vdb' bus='virtio'/></disk>
<disk type='file' device='cdrom'><target dev='hdc' bus='ide'/><readonly/></disk>"
qemu_domain_xml d "$DISKS
<interface type='network'><mac address='52:54:00:11:22:33'/><source network='n1'/><model type='virtio'/></interface>
<interface type='bridge'><mac address='52:54:00:11:22:34'/><source bridge='nobr0'/><model type='virtio'/></interface>
<interface type='user'><mac address='52:54:00:11:22:35'/><model type='virtio'/></interface>" |
    sed "s|<vcpu>1</vcpu>|<vcpu current='1'>2</vcpu>|" > "$OUT/d.xml"
qemu_domain_xml r "$DISKS
<interface type='user'><mac address='52:54:00:11:22:36'/><model type='virtio'/></interface>" > "$OUT/r.xml"
cat > "$OUT/n1.xml" <<XML
<network><name>n1</name><bridge name='rvinfo1'/><ip address='192.168.231.1' netmask='255.255.255.0'/></network>
XML

normalize()
{
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g'
}

steps=(
    "net-define n1.xml"
    "define d.xml"
    "vcpucount d --maximum"
    "maxvcpus"
    "maxvcpus --type qemu"
    "maxvcpus --type QEMU"
    "maxvcpus --type kvm"
    "maxvcpus --type xen"
    "domcontrol d"
    "iothreadinfo d"
    "iothreadinfo d --live"
    "perf d"
    "perf d --live"
    "domblkinfo d vda"
    "domblkinfo d vdb"
    "domblkinfo d $OUT/q.qcow2"
    "domblkinfo d hdc"
    "domblkinfo d vdz"
    "domblkinfo d --all"
    "find-storage-pool-sources dir"
    "find-storage-pool-sources fs"
    "find-storage-pool-sources netfs"
    "find-storage-pool-sources iscsi"
    "find-storage-pool-sources bogus"
    "domfsinfo d"
    "domiftune d 52:54:00:11:22:33"
    "domiftune d 52:54:00:11:22:33 --config --inbound 100,200,300 --outbound 400"
    "domiftune d 52:54:00:11:22:33 --config"
    "domiftune d 52:54:00:11:22:33"
    "domiftune d 52:54:00:11:22:33 --live"
    "domiftune d 52:54:00:11:22:33 --live --inbound 10"
    "domiftune d 52:54:00:11:22:33 --config --inbound 0"
    "domiftune d 52:54:00:11:22:33 --config"
    "domiftune d 52:54:00:11:22:33 --config --inbound 100,200,300,50"
    "domiftune d 52:54:00:11:22:33 --config"
    "domiftune d 52:54:00:11:22:34 --config --inbound 10 --outbound 20"
    "domiftune d 52:54:00:11:22:34 --config"
    "domiftune d vnet9 --config --outbound 10"
    "domiftune d 52:54:00:11:22:99 --config --outbound 10"
    "domiftune d 52:54:00:11:22:35 --config --outbound 10"
    "define r.xml"
    "start r"
    "vcpucount r --maximum"
    "domcontrol r"
    "iothreadinfo r"
    "perf r"
    "domblkinfo r --all"
    "domblkinfo r vdb"
    "domfsinfo r"
    "domiftune r 52:54:00:11:22:36"
    "domiftune r 52:54:00:11:22:36 --live --inbound 10"
    "domiftune r 52:54:00:11:22:36 --config --inbound 10"
    "destroy r"
    "undefine r"
)
[ "$smbios" = yes ] || steps+=("sysinfo")

# One daemon's run, from fresh images: the transcript, then the interfaces
# info-checks.py's calls, then the interfaces of d's definition.
session()
{
    local uri=$1 uri_ro=$2 name=$3
    rm -f "$OUT/r.img" "$OUT/q.qcow2"
    qemu-img create -q -f raw "$OUT/r.img" 10M
    qemu-img create -q -f qcow2 "$OUT/q.qcow2" 20M
    virsh_transcript "$uri" "$uri_ro" "$OUT" normalize > "$OUT/$name.transcript"
    PYTHONPATH=$top_srcdir/tests/interop "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/info-checks.py" \
        "$uri" > "$OUT/$name.py"
    virsh -q -c "$uri" dumpxml d --inactive | sed -n '/<interface/,/<\/interface>/p' > "$OUT/$name.ifaces"
}
session "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" libvirtd
session "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" remvirtd
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "information calls: remvirtd as libvirtd"
same "$OUT/libvirtd.ifaces" "$OUT/remvirtd.ifaces" "<bandwidth> in the definition"
same "$OUT/libvirtd.py" "$OUT/remvirtd.py" "flags and counts (info-checks.py)"
grep -q "<inbound average='100' peak='200' floor='50' burst='300'/>" "$OUT/remvirtd.ifaces" ||
    fail "no <bandwidth> in d's definition: $(cat "$OUT/remvirtd.ifaces")"
grep -q "^Allocation: *[1-9]" "$OUT/remvirtd.transcript" || fail "no allocation figure"

# The bandwidth is in the definition on disk: a restarted remvirtd reads it.
stop_remvirtd
start_remvirtd_qemu
virsh -q -c "$QEMU_URI" dumpxml d --inactive | sed -n '/<interface/,/<\/interface>/p' > "$OUT/restarted.ifaces"
same "$OUT/remvirtd.ifaces" "$OUT/restarted.ifaces" "<bandwidth> after a restart of remvirtd"

# domfsinfo through the test guest's agent: its two file systems in mount
# order, the one on the disk at PCI slot 7 named by that disk's target.
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
FSDISK="<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$OUT/r.img'/><target dev='vdc' bus='virtio'/><address type='pci' domain='0x0000' bus='0x00' slot='0x07' function='0x0'/></disk>"
qemu_guest_xml ga | sed "s|<devices>|<devices>$CHANNEL$FSDISK|" > "$OUT/ga.xml"
fsinfo_session()
{
    local uri=$1 name=$2
    agent_guest_up "$uri" ga "$OUT/ga.xml"
    virsh -c "$uri" domfsinfo ga > "$OUT/$name.fsinfo" 2>&1 || true
    agent_guest_down "$uri" ga
}
fsinfo_session "$LIBVIRTD_QEMU_URI" libvirtd
fsinfo_session "$QEMU_URI" remvirtd
same "$OUT/libvirtd.fsinfo" "$OUT/remvirtd.fsinfo" "domfsinfo through the guest agent"
grep -q "^ */data *vda1 *ext4 *vdc" "$OUT/remvirtd.fsinfo" || fail "no /data on vdc: $(cat "$OUT/remvirtd.fsinfo")"
