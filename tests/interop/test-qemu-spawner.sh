#!/usr/bin/env bash
# QEMU processes are forked by remvirtd's spawner helper
# (server/drivers/qemu/qemu_spawner.c), not by the loop:
#   a running guest's QEMU is the helper's child and the helper
#   remvirtd's; with the helper killed, the guests it started are still
#   managed (destroy works, a QEMU killed from outside is seen as shut
#   off (crashed)) and the next start forks a new helper.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

ppid_of() { awk '{ print $4 }' "/proc/$1/stat"; }
qemu_of() { qemu_pids "$QEMU_DIR/run/$1.qmp"; }
state_is() { [ "$("${V[@]}" domstate --reason "$1" 2>&1)" = "$2" ]; }

for g in g1 g2; do
    qemu_domain_xml "$g" > "$OUT/$g.xml"
    "${V[@]}" define "$OUT/$g.xml" > /dev/null
    "${V[@]}" start "$g" > /dev/null || fail "start $g failed"
done
q1=$(qemu_of g1)
q2=$(qemu_of g2)
[ -n "$q1" ] && [ -n "$q2" ] || fail "no QEMU for g1 ('$q1') or g2 ('$q2')"
helper=$(ppid_of "$q1")
[ "$helper" != "$REMVIRTD_PID" ] || fail "QEMU $q1 is remvirtd's own child"
[ "$(ppid_of "$helper")" = "$REMVIRTD_PID" ] ||
    fail "QEMU $q1's parent $helper is not remvirtd's ($REMVIRTD_PID) child"
[ "$(ppid_of "$q2")" = "$helper" ] || fail "g2's QEMU has another parent than g1's"
echo "ok   both QEMUs are children of the helper $helper, remvirtd's child"

kill -KILL "$helper"
wait_for "$RV_TIMEOUT" "remvirtd to notice the helper's end" \
    grep -q "spawner helper (pid $helper) is gone" "$REMVIRTD_LOG"
state_is g1 "running (booted)" || fail "g1 is not running after the helper's end"
"${V[@]}" destroy g1 > /dev/null || fail "destroy g1 after the helper's end failed"
state_is g1 "shut off (destroyed)" || fail "g1 is not shut off (destroyed)"
! kill -0 "$q1" 2>/dev/null || fail "g1's QEMU $q1 still runs"
echo "ok   a guest of the dead helper is destroyed"

kill -KILL "$q2"
wait_for "$RV_TIMEOUT" "g2 to be seen shut off (crashed)" state_is g2 "shut off (crashed)"
echo "ok   a guest of the dead helper killed from outside is shut off (crashed)"

"${V[@]}" start g1 > /dev/null || fail "start g1 with a new helper failed"
state_is g1 "running (booted)" || fail "g1 is not running"
q1=$(qemu_of g1)
new_helper=$(ppid_of "$q1")
[ "$new_helper" != "$helper" ] && [ "$(ppid_of "$new_helper")" = "$REMVIRTD_PID" ] ||
    fail "the new QEMU's parent $new_helper is not a new helper of remvirtd"
"${V[@]}" destroy g1 > /dev/null
echo "ok   the next start forks a new helper ($new_helper)"
