#!/usr/bin/env bash
# Managed save and remvirtd's crashes: remvirtd killed with SIGKILL at
# four moments of a `virsh managedsave` and started again; each time
# either the managed image is whole and the domain shut off (saved), or
# there is no image, no partial file, and the same QEMU runs on (a save
# is never half done).  Then: autostart restores a managed image; a
# paused guest is saved paused and restored paused, `restore --running`
# runs it.  A diskless guest idling in its firmware is enough here (the
# guest's own state is test-qemu-save.sh's).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
state_is() { [ "$("${V[@]}" domstate --reason "$1")" = "$2" ]; }

qemu_domain_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null

# ---- remvirtd killed (SIGKILL) at some moment of a managed save: after
# its restart either the image is whole and the domain shut off (saved),
# or there is no image (nor a partial one) and the same QEMU runs on.
restart_remvirtd()
{
    kill -KILL "$REMVIRTD_PID"
    wait "$REMVIRTD_PID" 2>/dev/null || true
    REMVIRTD_PID=
    rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
    start_remvirtd_qemu
}
# Settled: shut off (saved), or running once the restarted remvirtd has
# looked at the QEMU (it takes the save's marker, <name>.saving) and there
# is no image (while a QEMU whose save completed is told to quit, g still
# shows the state its status file had).
settled()
{
    "${V[@]}" domstate --reason g > "$OUT/state" 2>&1 || true
    case $(cat "$OUT/state") in
    "shut off (saved)") true ;;
    running*) [ ! -e "$QEMU_DIR/run/g.saving" ] && [ ! -e "$QEMU_DIR/save/g.save" ] ;;
    *) false ;;
    esac
}
saved=0 resumed=0
for delay in 0 0.05 0.1 0.3; do
    state_is g "shut off (unknown)" || state_is g "shut off (destroyed)" || state_is g "shut off (saved)" ||
        fail "g is $("${V[@]}" domstate --reason g) before the start"
    "${V[@]}" start g > /dev/null
    pid=$(qemu_pids "$QEMU_DIR/run/")
    bg "$OUT/ms-killed" "${V[@]}" managedsave g
    sleep "$delay"
    restart_remvirtd
    wait_for 60 "g to settle after the restart" settled || fail "g is $(cat "$OUT/state")"
    [ -z "$(find "$QEMU_DIR/save" -name 'g.save.*' 2>/dev/null)" ] || fail "a partial image is left"
    if state_is g "shut off (saved)"; then
        [ "$(head -c 8 "$QEMU_DIR/save/g.save")" = "RVSAVE01" ] || fail "shut off (saved) without an image"
        _no_qemu() { [ -z "$(qemu_pids "$QEMU_DIR/run/")" ]; }
        wait_for 20 "the saved guest's QEMU to go" _no_qemu
        saved=$((saved + 1))
    else
        [ ! -e "$QEMU_DIR/save/g.save" ] || fail "g runs and has a managed image"
        [ "$(qemu_pids "$QEMU_DIR/run/")" = "$pid" ] || fail "g runs in another QEMU"
        resumed=$((resumed + 1))
        "${V[@]}" destroy g > /dev/null
    fi
done
echo "ok   remvirtd killed during managedsave (after 0 to 0.3 s): $saved whole images, $resumed guests running on, never a partial image"
# ---- autostart restores the managed image (the one a killed remvirtd
# completed, if any), as libvirtd does
if ! state_is g "shut off (saved)"; then
    "${V[@]}" start g > /dev/null
    "${V[@]}" managedsave g > /dev/null
fi
"${V[@]}" autostart g > /dev/null
restart_remvirtd
wait_for 60 "the autostarted g to run" state_is g "running (restored)"
[ ! -e "$QEMU_DIR/save/g.save" ] || fail "the autostart left the managed image"
"${V[@]}" autostart --disable g > /dev/null
echo "ok   autostart of a domain with a managed image restores it: running (restored)"

# ---- a paused guest is saved paused and restored paused (--running overrides)
"${V[@]}" suspend g > /dev/null
"${V[@]}" save g "$OUT/p.img" > /dev/null
"${V[@]}" restore "$OUT/p.img" > /dev/null
state_is g "paused (user)" || fail "a guest saved paused is $("${V[@]}" domstate --reason g) when restored"
"${V[@]}" destroy g > /dev/null
"${V[@]}" restore --running "$OUT/p.img" > /dev/null
state_is g "running (restored)" || fail "restore --running gives $("${V[@]}" domstate --reason g)"
"${V[@]}" destroy g > /dev/null
echo "ok   a paused guest: saved paused, restored paused; restore --running runs it"

