#!/usr/bin/env bash
# The everyday calls of issue 29 on remvirtd's QEMU driver, side by side
# with libvirtd's (start_libvirtd_qemu): the same virsh commands against
# both with the same guest, their transcripts compared.
#   - send-key (linux names, the usb, xt, atset1 and qnum codesets, a
#     hold time, atset2; keycodes that do not translate), inject-nmi,
#     screenshot (its type; a screen the guest lacks), and each refused
#     when the guest does not run;
#   - the guest agent's calls refused for a guest without the agent's
#     channel and for one that does not run (virsh), and answered by the
#     test guest's agent (agent-checks.py, python3-libvirt): file systems
#     frozen, thawed, trimmed, a password, SSH keys, the guest's vCPUs,
#     guest info, the agent's timeout, suspend's refusals;
#   - host-checks.py (python3-libvirt): IS_SECURE, the defined domains'
#     count and names, DEFINE_XML_FLAGS, a pool by its target path,
#     VOL_GET_INFO_FLAGS, free pages and KSM's memory parameters; a
#     running guest's block and memory peeks, BLOCK_STATS_FLAGS, disk
#     errors and CPU statistics.
# Then, on remvirtd alone with the test guest: an NMI reaches the guest's
# kernel (its console says so), and the screenshot is a PNG image.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
test_guest
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/cmp
mkdir -p "$OUT"

qemu_domain_xml g "<video><model type='vga'/></video>" > "$OUT/g.xml"

normalize()
{
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g'
}

steps=(
    "define g.xml"
    "domfsfreeze g"
    "guestvcpus g"
    "inject-nmi g"
    "send-key g KEY_A"
    "screenshot g shot-inactive.ppm"
    "start g"
    "inject-nmi g"
    "send-key g KEY_A"
    "send-key g --holdtime 50 KEY_LEFTCTRL KEY_LEFTALT KEY_DELETE"
    "send-key g --codeset usb 4 5 224"
    "send-key g --codeset xt 1 28"
    "send-key g --codeset atset1 0xe01c 0x1c"
    "send-key g --codeset qnum 0xc8 0x1e"
    "send-key g --codeset xt_kbd 0x11c"
    "send-key g --codeset atset2 28 0xe075"
    "send-key g --codeset linux 300"
    "send-key g --codeset usb 500"
    "screenshot g shot.ppm"
    "screenshot g shot1.ppm --screen 1"
    "domfsfreeze g"
    "domfsthaw g"
    "domfstrim g"
    "guestvcpus g"
    "setguestvcpus g 0 --enable"
    "set-user-password g root pw"
    "get-user-sshkeys g root"
    "guestinfo g"
    "dompmsuspend g mem"
    "dompmwakeup g"
    "guest-agent-timeout g --timeout 10"
    "ro:inject-nmi g"
    "destroy g"
    "undefine g"
)

virsh_transcript "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" "$OUT" normalize > "$OUT/libvirtd.transcript"
mv "$OUT/shot.ppm" "$OUT/libvirtd-shot.ppm"
virsh_transcript "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" "$OUT" normalize > "$OUT/remvirtd.transcript"
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "send-key, inject-nmi, screenshot: remvirtd as libvirtd"
# (The picture is whatever the firmware shows at that moment: text or graphics mode.)
file "$OUT/shot.ppm" | grep -q "PNG image data, [0-9]* x [0-9]*" ||
    fail "the screenshot is not a PNG: $(file "$OUT/shot.ppm")"
echo "ok   screenshot: a PNG image, as libvirtd's"
[ -z "$(find "$QEMU_DIR/run" -name '*screendump*')" ] || fail "a screendump file was left behind"
echo "ok   no screendump file is left in the run directory"

# The agent's calls, each daemon with the test guest and its agent.
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
qemu_guest_xml ga | sed "s|<devices>|<devices>$CHANNEL|" > "$OUT/ga.xml"
agent_session()
{
    local uri=$1 name=$2
    agent_guest_up "$uri" ga "$OUT/ga.xml"
    PYTHONPATH=$top_srcdir/tests/interop "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/agent-checks.py" \
        "$uri" > "$OUT/$name.agent"
    agent_guest_down "$uri" ga
}
agent_session "$LIBVIRTD_QEMU_URI" libvirtd
agent_session "$QEMU_URI" remvirtd
same "$OUT/libvirtd.agent" "$OUT/remvirtd.agent" "the guest agent's calls (agent-checks.py)"
cat "$OUT/remvirtd.agent"
grep -q "^ssh keys: \['ssh-ed25519 AAAA a@b', 'ssh-ed25519 BBBB c@d'\]" "$OUT/remvirtd.agent" ||
    fail "the SSH keys were not set and appended"

# Lists, storage and host calls.
host_session()
{
    local uri=$1 name=$2
    mkdir -p "$OUT/pool"
    virsh -q -c "$uri" pool-create-as tp dir --target "$OUT/pool" > /dev/null
    virsh -q -c "$uri" vol-create-as tp v1 1M --format raw > /dev/null
    printf remvirt-peek | dd of="$OUT/pool/v1" conv=notrunc status=none
    qemu_domain_xml hd "<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$OUT/pool/v1'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/hd.xml"
    virsh -q -c "$uri" create "$OUT/hd.xml" > /dev/null
    PYTHONPATH=$top_srcdir/tests/interop "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/host-checks.py" \
        "$uri" "$OUT/pool" | sed "s|$OUT|OUT|g" > "$OUT/$name.host"
    virsh -q -c "$uri" destroy hd > /dev/null
    virsh -q -c "$uri" vol-delete v1 --pool tp > /dev/null
    virsh -q -c "$uri" pool-destroy tp > /dev/null
}
host_session "$LIBVIRTD_QEMU_URI" libvirtd
host_session "$QEMU_URI" remvirtd
same "$OUT/libvirtd.host" "$OUT/remvirtd.host" "connection, list, storage and host calls (host-checks.py)"
cat "$OUT/remvirtd.host"

# The NMI reaches the guest: Linux reports it on its console.
V=(virsh -q -c "$QEMU_URI")
qemu_guest_xml nmi > "$OUT/nmi.xml"
"${V[@]}" define "$OUT/nmi.xml" > /dev/null
"${V[@]}" start nmi > /dev/null
capture_console nmi "$OUT/console"
_ready() { grep -q "remvirt-test-guest: ready" "$OUT/console" 2> /dev/null; }
wait_for 120 "the guest to boot" _ready
"${V[@]}" inject-nmi nmi
wait_for 20 "the guest's kernel to report the NMI" grep -q "NMI" "$OUT/console" ||
    fail "no NMI in the guest's console: $(tail -5 "$OUT/console")"
echo "ok   inject-nmi: the guest's kernel saw the NMI"
"${V[@]}" destroy nmi > /dev/null
