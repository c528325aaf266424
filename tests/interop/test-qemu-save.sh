#!/usr/bin/env bash
# Managed save, save and restore on the QEMU driver, with virsh and the
# guest that boots (tests/tools/build-test-guest.sh), whose /init says
# "ready" once per boot and powers off on the ACPI power button:
#   managedsave: the guest is shut off (saved), dominfo says "Managed
#     save: yes", list --with-managed-save lists it; start restores it: the
#     new QEMU's console never says "ready" (no boot), and the power
#     button reaches the same /init, which powers off;
#   managedsave-remove, then start: a fresh boot;
#   save FILE / restore FILE: the same through a file the caller names,
#     --paused; an image is complete or absent, never partial;
#   errors: a domain that is not running, a directory that does not
#     exist, /proc, a file that is no image, undefine with an image;
#   events: Suspended Paused, Stopped Saved, Started Restored (virsh event).
# test-qemu-save-crash.sh: remvirtd killed during a save, autostart.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

bg "$OUT/events" virsh -c "$QEMU_URI" event --loop --all
qemu_domain_xml warm > "$OUT/warm.xml"
_warm()
{
    "${V[@]}" define "$OUT/warm.xml" > /dev/null 2>&1
    "${V[@]}" undefine warm > /dev/null 2>&1
    grep -q "domain 'warm': Defined" "$OUT/events"
}
wait_for 30 "virsh event to see a definition" _warm

state_is() { [ "$("${V[@]}" domstate --reason "$1")" = "$2" ]; }
# count_in FILE TEXT: how many lines of FILE hold TEXT.
count_in() { grep -c "$2" "$1" || true; }
# managed_save_is yes|no: what virsh dominfo g says.
managed_save_is() { "${V[@]}" dominfo g > "$OUT/dominfo" && grep -q "^Managed save: *$1\$" "$OUT/dominfo"; }
# console_says FILE TEXT: FILE (a console capture) has TEXT.
console_says() { grep -q "$2" "$1" 2>/dev/null; }

qemu_guest_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null

# ---- errors before anything runs
expect_fail() # WHAT TEXT CMD...: CMD fails and says TEXT
{
    local what=$1 text=$2
    shift 2
    if "$@" > "$OUT/err" 2>&1; then fail "$what succeeded"; fi
    grep -qF -- "$text" "$OUT/err" || fail "$what: $(cat "$OUT/err")"
    echo "ok   $what: refused ($text)"
}
expect_fail "managedsave of a domain that is not running" "domain is not running" \
    "${V[@]}" managedsave g
expect_fail "save of a domain that is not running" "domain is not running" \
    "${V[@]}" save g "$OUT/never.img"
[ ! -e "$OUT/never.img" ] || fail "a failed save left a file"
printf 'not an image' > "$OUT/junk.img"
expect_fail "restore of a file that is no image" "is not a usable save image" \
    "${V[@]}" restore "$OUT/junk.img"

# ---- managed save of a booted guest, start restores it
"${V[@]}" start g > /dev/null
capture_console g "$OUT/console1"
wait_for 300 "the guest to boot (its console says ready)" console_says "$OUT/console1" 'remvirt-test-guest: ready'
pid1=$(qemu_pids "$QEMU_DIR/run/")

expect_fail "save into a directory that does not exist" "Failed to create file" \
    "${V[@]}" save g "$OUT/no/such/dir/g.img"
expect_fail "save into /proc" "Failed to create file" "${V[@]}" save g /proc/g.img
state_is g "running (booted)" || fail "g is $("${V[@]}" domstate --reason g) after failed saves"

"${V[@]}" managedsave g > "$OUT/ms" || fail "managedsave: $(cat "$OUT/ms")"
state_is g "shut off (saved)" || fail "after managedsave g is $("${V[@]}" domstate --reason g)"
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "the QEMU is still there after managedsave"
managed_save_is yes || fail "dominfo does not say Managed save: yes"
[ "$("${V[@]}" list --all --with-managed-save --name)" = "g" ] || fail "list --with-managed-save"
[ "$("${V[@]}" list --all --without-managed-save --name)" = "" ] || fail "list --without-managed-save lists g"
[ "$(stat -c %a "$QEMU_DIR/save/g.save")" = 600 ] || fail "the image is not mode 0600"
[ "$(find "$QEMU_DIR/save" -type f | wc -l)" -eq 1 ] || fail "more than the image in the save dir"
echo "ok   managedsave: shut off (saved), Managed save: yes, the image (0600) alone in the save dir"

expect_fail "undefine with a managed save image" "managed save image exists" "${V[@]}" undefine g

"${V[@]}" start g > /dev/null
state_is g "running (restored)" || fail "after start g is $("${V[@]}" domstate --reason g)"
[ "$(qemu_pids "$QEMU_DIR/run/")" != "$pid1" ] || fail "no new QEMU"
[ ! -e "$QEMU_DIR/save/g.save" ] || fail "the managed image is still there after the restore"
managed_save_is no || fail "dominfo still says Managed save: yes"
capture_console g "$OUT/console2"
# The restored /init answers the power button without booting again.
"${V[@]}" shutdown g > /dev/null
wait_for 120 "the restored guest to power off" state_is g "shut off (shutdown)"
console_says "$OUT/console2" 'remvirt-test-guest: power button' || fail "the restored guest did not see the power button"
! console_says "$OUT/console2" 'remvirt-test-guest: ready' || fail "the guest booted again instead of being restored"
echo "ok   start restored the managed image: running (restored), no new boot, the same /init powered off"

# ---- managedsave-remove: the next start boots afresh
"${V[@]}" start g > /dev/null
capture_console g "$OUT/console3"
wait_for 300 "the guest to boot" console_says "$OUT/console3" 'remvirt-test-guest: ready'
"${V[@]}" managedsave g > /dev/null
"${V[@]}" managedsave-remove g > /dev/null
[ ! -e "$QEMU_DIR/save/g.save" ] || fail "managedsave-remove left the image"
managed_save_is no || fail "dominfo says Managed save after the removal"
"${V[@]}" start g > /dev/null
state_is g "running (booted)" || fail "after managedsave-remove start gives $("${V[@]}" domstate --reason g)"
echo "ok   managedsave-remove: the image is gone and start boots afresh"

# ---- save to a file and restore from it, paused
capture_console g "$OUT/console4"
wait_for 300 "the guest to boot" console_says "$OUT/console4" 'remvirt-test-guest: ready'
"${V[@]}" save g "$OUT/g.img" > /dev/null
state_is g "shut off (saved)" || fail "after save g is $("${V[@]}" domstate --reason g)"
[ "$(head -c 8 "$OUT/g.img")" = "RVSAVE01" ] || fail "the image has no remvirt header"
[ -z "$(find "$OUT" -name 'g.img.*')" ] || fail "a temporary file is left beside the image"
managed_save_is no || fail "a save to a file is not a managed save"
"${V[@]}" restore --paused "$OUT/g.img" > /dev/null
state_is g "paused (user)" || fail "after restore --paused g is $("${V[@]}" domstate --reason g)"
[ -e "$OUT/g.img" ] || fail "restore removed the caller's file"
capture_console g "$OUT/console5"
"${V[@]}" resume g > /dev/null
"${V[@]}" shutdown g > /dev/null
wait_for 120 "the restored guest to power off" state_is g "shut off (shutdown)"
! console_says "$OUT/console5" 'remvirt-test-guest: ready' || fail "the guest booted again instead of being restored"
echo "ok   save FILE, restore --paused FILE: paused (user), resumed, the same /init powered off"

"${V[@]}" start g > /dev/null
expect_fail "restore while the domain runs" "already active" "${V[@]}" restore "$OUT/g.img"
"${V[@]}" destroy g > /dev/null

cat > "$OUT/expected" <<'EOT'
event 'lifecycle' for domain 'g': Defined Added
event 'lifecycle' for domain 'g': Resumed Unpaused
event 'lifecycle' for domain 'g': Started Booted
event 'lifecycle' for domain 'g': Suspended Paused
event 'lifecycle' for domain 'g': Stopped Saved
event 'lifecycle' for domain 'g': Started Restored
event 'lifecycle' for domain 'g': Shutdown Finished after guest request
event 'lifecycle' for domain 'g': Stopped Shutdown
EOT
grep "^event 'lifecycle' for domain 'g'" "$OUT/events" | head -n 8 > "$OUT/got" || true
same "$OUT/expected" "$OUT/got" "virsh event --loop --all, managedsave and start"
