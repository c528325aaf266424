#!/usr/bin/env bash
# <watchdog> on remvirtd's QEMU driver, side by side with libvirtd's:
#   - the definitions virsh reads back (action reset by default), the
#     live XML (alias watchdog0, the i6300esb's PCI slot), and libvirtd's
#     refusals (unknown model, diag288, unknown action, no model, two);
#   - QEMU's command line: the device and -watchdog-action;
#   - a real firing: the test guest (remvirt.watchdog=fire) arms its
#     i6300esb and lets it run out; with action pause the WATCHDOG event
#     (pause), the lifecycle event and the state paused (watchdog), with
#     action none the event and the guest running on, with action dump
#     the pause, a core dump into qemu_dump_dir and the guest resumed,
#     each compared with libvirtd's (watchdog-events.py, python3-libvirt).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu wd
cd "$OUT"
qemu_domain_xml w1 "<watchdog model='i6300esb'/>" > w1.xml
qemu_domain_xml w2 "<watchdog model='ib700' action='inject-nmi'/>" > w2.xml
qemu_domain_xml w3 "<watchdog model='i6300esb' action='poweroff'/><rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>" > w3.xml
qemu_domain_xml bad1 "<watchdog model='itco'/>" > bad1.xml
qemu_domain_xml bad2 "<watchdog model='diag288'/>" > bad2.xml
qemu_domain_xml bad3 "<watchdog model='i6300esb' action='explode'/>" > bad3.xml
qemu_domain_xml bad4 "<watchdog action='pause'/>" > bad4.xml
qemu_domain_xml bad5 "<watchdog model='ib700'/><watchdog model='i6300esb'/>" > bad5.xml
qemu_domain_xml w4 "<watchdog model='ib700' action='dump'/>" > w4.xml

watchdog_part()
{
    sed -n '/<watchdog/,/<\/memballoon>/p; /<rng/,/<\/rng>/p'
}
steps=(
    "define w1.xml" "mask:dumpxml w1 --inactive"
    "define w2.xml" "mask:dumpxml w2 --inactive"
    "define w3.xml" "start w3" "mask:dumpxml w3" "destroy w3" "mask:dumpxml w3 --inactive"
    "define w4.xml" "mask:dumpxml w4 --inactive" "undefine w4"
    "define bad1.xml" "define bad2.xml" "define bad3.xml" "define bad4.xml" "define bad5.xml"
    "undefine w1" "undefine w2" "undefine w3"
)
virsh_transcript "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI" "$OUT" watchdog_part > libvirtd.transcript
virsh_transcript "$QEMU_URI" "$QEMU_URI" "$OUT" watchdog_part > remvirtd.transcript
same libvirtd.transcript remvirtd.transcript "<watchdog>: remvirtd's definitions and refusals as libvirtd's"
grep -q "<alias name='watchdog0'/>" remvirtd.transcript || fail "no alias watchdog0 in the live XML"

# The command line: the device and QEMU's action, as libvirtd gives them
# (libvirtd writes -device as JSON).
cmdline_of()
{
    local f
    for f in /proc/[0-9]*/cmdline; do
        case "$({ tr '\0' ' ' < "$f"; } 2>/dev/null)" in
        *"-name guest=$1,"*"$2"*) { tr '\0' ' ' < "$f"; } 2>/dev/null ;;
        esac
    done
}
for uri in "$QEMU_URI" "$LIBVIRTD_QEMU_URI"; do
    virsh -q -c "$uri" define w3.xml > /dev/null
    virsh -q -c "$uri" start w3 > /dev/null
done
mine=$(cmdline_of w3 "$QEMU_DIR/run/")
theirs=$(cmdline_of w3 '"driver":"i6300esb"')
grep -qF -- '-device {"driver":"i6300esb","id":"watchdog0","bus":"pci.0","addr":"0x4"} -watchdog-action poweroff' \
    <<< "$theirs" || fail "libvirtd's w3 QEMU: $theirs"
grep -qF -- "-device i6300esb,id=watchdog0,bus=pci.0,addr=0x4.0x0 -watchdog-action poweroff" <<< "$mine" ||
    fail "remvirtd's w3 QEMU lacks libvirtd's watchdog: $mine"
echo "ok   QEMU's command line: i6300esb watchdog0 at slot 4 (after the rng), -watchdog-action poweroff"
for uri in "$QEMU_URI" "$LIBVIRTD_QEMU_URI"; do
    virsh -q -c "$uri" destroy w3 > /dev/null
    virsh -q -c "$uri" undefine w3 > /dev/null
done

# The watchdog fires in a real guest: pause, none, dump.
for action in pause none dump; do
    qemu_guest_xml "g$action" | sed -e "s|<devices>|<devices><watchdog model='i6300esb' action='$action'/>|" \
        -e "s|<cmdline>console=ttyS0|<cmdline>remvirt.watchdog=fire console=ttyS0|" > "g$action.xml"
    for d in libvirtd remvirtd; do
        uri=$QEMU_URI
        [ "$d" = remvirtd ] || uri=$LIBVIRTD_QEMU_URI
        "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/watchdog-events.py" "$uri" "g$action.xml" \
            $([ "$action" != dump ] || echo resumes) > "$d.$action" || fail "$d: no watchdog event ($action): $(cat "$d.$action")"
    done
    same "libvirtd.$action" "remvirtd.$action" "the watchdog fired, action $action: events and state as libvirtd's"
    cat "remvirtd.$action"
done
grep -qx "watchdog gpause action 1" remvirtd.pause || fail "no WATCHDOG event with action pause"
grep -qx "state \[3, 6\]" remvirtd.pause || fail "gpause is not paused (watchdog)"
grep -qx "state \[1, 1\]" remvirtd.none || fail "gnone is not running on"
grep -qx "state \[1, 5\]" remvirtd.dump || fail "gdump is not running (unpaused) after its dump"
dumps=("$QEMU_DIR"/dump/gdump-*)
[ -s "${dumps[0]}" ] || fail "no core dump of gdump in $QEMU_DIR/dump"
echo "ok   the watchdog's dump: ${dumps[0]##*/}, $(stat -c %s "${dumps[0]}") bytes"
