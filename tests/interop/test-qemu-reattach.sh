#!/usr/bin/env bash
# Crash safety: remvirtd killed with SIGKILL while guests run, and
# restarted.  Every definition is still there; a running QEMU is
# reattached (same pid, same id, its state; never started twice) and
# obeys again; a transient guest is still there; one whose QEMU died while
# remvirtd was away is shut off (crashed); new ids go on from the highest.
# A domain marked autostart (virsh autostart) starts with remvirtd.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

for n in keep paused lost; do
    qemu_domain_xml "$n" > "$OUT/$n.xml"
    "${V[@]}" define "$OUT/$n.xml" > /dev/null
    "${V[@]}" start "$n" > /dev/null
done
"${V[@]}" suspend paused > /dev/null
qemu_domain_xml trans > "$OUT/trans.xml"
"${V[@]}" create "$OUT/trans.xml" > /dev/null

pid_of() { sed -n 's/^pid //p' "$QEMU_DIR/run/$1.status"; }
keep_pid=$(pid_of keep)
keep_id=$("${V[@]}" domid keep)
lost_pid=$(pid_of lost)
trans_id=$("${V[@]}" domid trans)
[ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" -eq 4 ] || fail "expected 4 QEMUs"

kill_remvirtd
echo "ok   remvirtd killed with SIGKILL"
kill -KILL "$lost_pid"
_lost_gone() { ! kill -0 "$lost_pid" 2>/dev/null; }
wait_for 10 "the lost guest's QEMU to die" _lost_gone

start_remvirtd_qemu
[ "$("${V[@]}" domstate --reason keep)" = "running (booted)" ] ||
    fail "keep is $("${V[@]}" domstate --reason keep) after the restart"
[ "$("${V[@]}" domid keep)" = "$keep_id" ] || fail "keep changed its id"
[ "$(pid_of keep)" = "$keep_pid" ] || fail "keep has another pid"
[ "$("${V[@]}" domstate --reason paused)" = "paused (user)" ] || fail "paused is not paused (user)"
[ "$("${V[@]}" domid trans)" = "$trans_id" ] || fail "the transient guest is not back"
[ "$("${V[@]}" domstate --reason lost)" = "shut off (crashed)" ] ||
    fail "lost is $("${V[@]}" domstate --reason lost), not shut off (crashed)"
[ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" -eq 3 ] || fail "not exactly the 3 QEMUs that lived"
echo "ok   after the restart: reattached keep (pid $keep_pid, id $keep_id), paused, trans; lost crashed"

# The reattached monitors obey.
"${V[@]}" suspend keep > /dev/null
[ "$("${V[@]}" domstate --reason keep)" = "paused (user)" ] || fail "reattached keep did not pause"
"${V[@]}" resume paused > /dev/null
"${V[@]}" start lost > /dev/null
[ "$("${V[@]}" domid lost)" -gt "$trans_id" ] || fail "a new id is not above the old ones"
for n in keep paused lost trans; do
    "${V[@]}" destroy "$n" > /dev/null
done
"${V[@]}" domstate trans > /dev/null 2>&1 && fail "transient trans outlived its destroy"
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "QEMUs left after destroying all"
echo "ok   reattached guests suspend, resume and destroy; all gone"

# A plain restart (SIGTERM) leaves the guests running too.
"${V[@]}" start keep > /dev/null
keep_pid=$(pid_of keep)
stop_remvirtd
kill -0 "$keep_pid" || fail "SIGTERM to remvirtd took its guest with it"
start_remvirtd_qemu
[ "$("${V[@]}" domstate keep)" = "running" ] || fail "keep not running after a clean restart"
"${V[@]}" destroy keep > /dev/null
echo "ok   a clean restart keeps and reattaches guests too"

# Autostart: a marked domain starts with remvirtd.
"${V[@]}" autostart keep > /dev/null
[ -L "$QEMU_DIR/etc/autostart/keep.xml" ] || fail "virsh autostart made no autostart link"
"${V[@]}" dominfo keep > "$OUT/dominfo"
grep -qx "Autostart: *enable" "$OUT/dominfo" || fail "dominfo does not say autostart"
stop_remvirtd
start_remvirtd_qemu
_keep_running() { [ "$("${V[@]}" domstate --reason keep)" = "running (booted)" ]; }
wait_for 30 "keep to be autostarted" _keep_running
[ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" -eq 1 ] || fail "autostart did not start exactly one QEMU"
"${V[@]}" autostart --disable keep > /dev/null
[ ! -e "$QEMU_DIR/etc/autostart/keep.xml" ] || fail "autostart --disable left the link"
"${V[@]}" destroy keep > /dev/null
echo "ok   autostart: started with remvirtd; --disable removes the link"
