#!/usr/bin/env bash
# The REBOOT event (VIR_DOMAIN_EVENT_ID_REBOOT, its own event ID, not a
# lifecycle event): QEMU's RESET, after `virsh reset` here, reaches
# `virsh event --event reboot` for every domain and for the one domain,
# and python3-libvirt's callback; a reset causes no lifecycle event.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

qemu_domain_xml r > "$OUT/r.xml"
qemu_domain_xml other > "$OUT/other.xml"
"${V[@]}" define "$OUT/r.xml" > /dev/null
"${V[@]}" define "$OUT/other.xml" > /dev/null
"${V[@]}" start r > /dev/null
"${V[@]}" start other > /dev/null

bg "$OUT/all" virsh -c "$QEMU_URI" event --loop --all
bg "$OUT/one" virsh -c "$QEMU_URI" event r --loop --event reboot
bg "$OUT/py" "$SYSTEM_PYTHON3" -u - <<PY
import libvirt
libvirt.virEventRegisterDefaultImpl()
c = libvirt.open("$QEMU_URI")
def cb(conn, dom, opaque):
    print("reboot", dom.name(), flush=True)
c.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_REBOOT, cb, None)
print("registered", flush=True)
while True:
    libvirt.virEventRunDefaultImpl()
PY
# Both subscribed: a reset of 'other' until each has seen one.
_seen() { grep -q "event 'reboot' for domain 'other'" "$OUT/all" && grep -q "reboot other" "$OUT/py"; }
_reset_other() { "${V[@]}" reset other > /dev/null; sleep 0.5; _seen; }
wait_for 60 "the subscribers to see a reboot of 'other'" _reset_other

# (QEMU may say RESET more than once for one reset, the firmware resetting
# again: libvirtd sends a REBOOT event for each, and so does remvirtd.)
"${V[@]}" reset r > /dev/null
"${V[@]}" reset r > /dev/null
_two() { [ "$(grep -c "event 'reboot' for domain 'r'" "$OUT/all")" -ge 2 ] && [ "$(grep -c "reboot r" "$OUT/py")" -ge 2 ]; }
wait_for 30 "two reboot events of 'r'" _two
"${V[@]}" destroy r > /dev/null
_stopped() { grep -q "domain 'r': Stopped Destroyed" "$OUT/all"; }
wait_for 30 "r's Stopped event" _stopped
grep "for domain 'r'" "$OUT/all" | grep -v "^event 'reboot' for domain 'r'$" > "$OUT/all.r" || true
# A destroy: Shutdown Finished after host request, then Stopped Destroyed
# (as libvirtd sends them).
printf '%s\n' "event 'lifecycle' for domain 'r': Shutdown Finished after host request" \
    "event 'lifecycle' for domain 'r': Stopped Destroyed" > "$OUT/all.expected"
same "$OUT/all.expected" "$OUT/all.r" "virsh event --all: resets are reboot events, no lifecycle event"
grep -v "^$" "$OUT/one" | grep -v "^events received" | sort -u > "$OUT/one.got" || true
echo "event 'reboot' for domain 'r'" > "$OUT/one.expected"
same "$OUT/one.expected" "$OUT/one.got" "virsh event r --event reboot: only r's reboot events"
"${V[@]}" destroy other > /dev/null
