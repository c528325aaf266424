#!/usr/bin/env bash
# DOMAIN_INTERFACE_ADDRESSES from the guest agent (`virsh domifaddr
# --source agent`, python3-libvirt's interfaceAddresses(SRC_AGENT)) on
# remvirtd's QEMU driver, side by side with libvirtd's, both with the
# test guest (its stand-in agent answers guest-network-get-interfaces
# with the guest's own interfaces: lo with an alias lo:1, and eth0 on
# user networking with its DHCP lease and IPv6 addresses): the virsh
# transcripts (--full, --interface) and python's dictionaries compared;
# and the refusals: shut off, paused, no agent channel, an agent that
# has not opened its port (a guest in its firmware).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu ifaddr
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
NIC="<interface type='user'><mac address='52:54:00:4a:00:01'/><model type='virtio'/></interface>"
qemu_guest_xml ga | sed "s|<devices>|<devices>$CHANNEL$NIC|" > "$OUT/ga.xml"
qemu_domain_xml fw "$CHANNEL" > "$OUT/fw.xml"
qemu_domain_xml plain > "$OUT/plain.xml"

# A guest's addresses come as it configures them (the DHCP lease, IPv6
# autoconfiguration from user networking's router advertisement, fec0::/64):
# wait until the guest has both and two answers a second apart agree.
settled()
{
    local uri=$1
    virsh -q -c "$uri" domifaddr ga --source agent --full > "$OUT/now" 2>&1 || return 1
    grep -q "ipv4 *10\.0\.2\.15/24" "$OUT/now" && grep -q "ipv6 *fec0:" "$OUT/now" || return 1
    sleep 1
    virsh -q -c "$uri" domifaddr ga --source agent --full > "$OUT/again" 2>&1 || return 1
    cmp -s "$OUT/now" "$OUT/again"
}

steps_running=(
    "domifaddr ga --source agent"
    "domifaddr ga --source agent --full"
    "domifaddr ga --source agent --interface eth0"
    "domifaddr ga --source agent --interface lo --full"
    "domifaddr ga --source agent --interface lo:1"
    "domifaddr ga --source agent --interface eth9"
    "suspend ga"
    "domifaddr ga --source agent"
    "resume ga"
    "domifaddr fw --source agent"
    "domifaddr plain --source agent"
)

session()
{
    local uri=$1 name=$2
    virsh -q -c "$uri" define "$OUT/plain.xml" > /dev/null
    virsh -q -c "$uri" define "$OUT/fw.xml" > /dev/null
    steps=("domifaddr plain --source agent")
    virsh_transcript "$uri" "$uri" "$OUT" > "$OUT/$name.transcript"
    virsh -q -c "$uri" start plain > /dev/null
    virsh -q -c "$uri" start fw > /dev/null
    agent_guest_up "$uri" ga "$OUT/ga.xml"
    wait_for 120 "ga's addresses to settle ($name)" settled "$uri"
    steps=("${steps_running[@]}")
    virsh_transcript "$uri" "$uri" "$OUT" >> "$OUT/$name.transcript"
    "$SYSTEM_PYTHON3" - "$uri" > "$OUT/$name.py" <<'PY'
import sys, libvirt
conn = libvirt.open(sys.argv[1])
ga = conn.lookupByName("ga")
got = ga.interfaceAddresses(libvirt.VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_AGENT)
for name in sorted(got):
    print(name, got[name]["hwaddr"], got[name]["addrs"])
for dom, flags in (("ga", 1), ("fw", 0), ("plain", 0)):
    try:
        conn.lookupByName(dom).interfaceAddresses(libvirt.VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_AGENT,
                                                  flags)
        print(dom, flags, "accepted")
    except libvirt.libvirtError as e:
        print(dom, flags, e.get_error_code(), e.get_error_domain(), e)
PY
    for d in ga fw plain; do
        virsh -q -c "$uri" destroy "$d" > /dev/null
        virsh -q -c "$uri" undefine "$d" > /dev/null
    done
}
session "$LIBVIRTD_QEMU_URI" libvirtd
session "$QEMU_URI" remvirtd
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "domifaddr --source agent: remvirtd as libvirtd"
same "$OUT/libvirtd.py" "$OUT/remvirtd.py" "interfaceAddresses(SRC_AGENT): remvirtd as libvirtd"
cat "$OUT/remvirtd.transcript"
has_line "$OUT/remvirtd.transcript" " eth0       52:54:00:4a:00:01    ipv4         10.0.2.15/24" ||
    fail "no DHCP lease of eth0 in the agent's answer"
grep -q "Guest agent is not responding: QEMU guest agent is not connected" "$OUT/remvirtd.transcript" ||
    fail "fw's agent was not refused as not connected"
