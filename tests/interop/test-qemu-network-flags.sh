#!/usr/bin/env bash
# NETWORK_DEFINE_XML_FLAGS and NETWORK_CREATE_XML_FLAGS on remvirtd's QEMU
# driver side by side with libvirtd's network driver, in a network
# namespace of the test's own whose bridge rvnfbr0 the created networks
# use: network-flags-checks.py's transcripts compared, and virsh
# net-define --validate and net-create --validate (the commands that call
# them; without --validate virsh 9.0 calls NETWORK_DEFINE_XML and
# NETWORK_CREATE_XML).
set -euo pipefail
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view
ip link add rvnfbr0 type bridge
start_both_qemu network-flags
cat > "$OUT/nv.xml" <<XML
<network><name>nv</name><forward mode='bridge'/><bridge name='rvnfbr0'/></network>
XML
steps=(
    "net-define --validate nv.xml"
    "mask:net-info nv"
    "net-undefine nv"
    "net-create --validate nv.xml"
    "net-list --name"
    "net-destroy nv"
)
normalize() { sed -E 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g'; }
session()
{
    "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/network-flags-checks.py" "$1" "$OUT" > "$OUT/$3.py" 2>&1 ||
        echo "exit status $?" >> "$OUT/$3.py"
    virsh_transcript "$1" "$2" "$OUT" normalize > "$OUT/$3.transcript"
}
session "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" libvirtd
session "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" remvirtd
same "$OUT/libvirtd.py" "$OUT/remvirtd.py" "network-flags-checks.py: remvirtd as libvirtd"
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "virsh net-define and net-create --validate"
grep -q "^created: \[(1, 0, 'rvnfbr0')\]$" "$OUT/remvirtd.py" || fail "nf5 was not created on rvnfbr0"
