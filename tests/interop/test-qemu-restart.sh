#!/usr/bin/env bash
# What a restart of the daemon keeps, side by side with libvirtd's
# QEMU driver (restarted in its namespace, its guests running on:
# pause_libvirtd_qemu): a commit that completes while the daemon is down
# (dismissed: the disk takes a new job), a slow copy (bandwidth-limited)
# through a restart and a kill -9 (blockjob --info, --bandwidth, --pivot,
# the live XML, the events of its end to a client registered after), a
# copy that becomes ready while the daemon is down (pivoted after), the
# transcripts compared with libvirtd's; and a guest started with
# AUTODESTROY, destroyed by the restart as libvirtd destroys it; and a
# kill where QEMU has dismissed a pivoted copy (crash point).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu restart
LV=$OUT/libvirtd RV=$OUT/remvirtd

# vda: top.qcow2 > mid.qcow2 (8M of data) > base.img (16M of data).
images()    # DIR
{
    mkdir -p "$1"
    chmod 777 "$1"
    qemu-img create -q -f raw "$1/base.img" 16M
    qemu-img create -q -f qcow2 -b "$1/base.img" -F raw "$1/mid.qcow2"
    qemu-img create -q -f qcow2 -b "$1/mid.qcow2" -F qcow2 "$1/top.qcow2"
    qemu-io -f raw -c "write -P 1 0 16M" "$1/base.img" > /dev/null
    qemu-io -f qcow2 -c "write -P 2 0 8M" "$1/mid.qcow2" > /dev/null
    chmod 666 "$1"/*
}
images "$LV"
images "$RV"

# The daemons stopped (SIGTERM, or SIGKILL given "kill"), and started again.
lv_stop() { pause_libvirtd_qemu "$@"; }
lv_start() { resume_libvirtd_qemu; }
rv_stop()
{
    if [ "${1:-}" = kill ]; then kill_remvirtd; else stop_remvirtd; fi
}
rv_start() { start_remvirtd_qemu; virsh -q -c "$QEMU_URI" list > /dev/null; }

# A client of the block job events, registered before run returns.
events()    # URI FILE
{
    bg "$2" "$SYSTEM_PYTHON3" "$(dirname "$0")/blockjob-events.py" "$1"
    EV_PID=$BG_PID
    wait_for 30 "the event client to register" grep -qx ready "$2" || { show "$2"; fail "no event client"; }
}
_lines() { [ "$(grep -c "$2" "$1")" -ge "$3" ]; }

# The copy's job at 100 % (ready to pivot).
_ready() { virsh -c "$1" blockjob g vda --info 2>&1 | grep -q '\[100 %\]'; }

scenario()  # URI DIR DAEMON(lv|rv)
{
    local u=$1 d=$2 who=$3 rc
    run() {
        rc=0
        virsh -c "$u" "$@" > "$OUT/o" 2> "$OUT/e" || rc=$?
        echo "=== virsh $*"
        # (a progress figure is a moment's: only 100 % is compared)
        tr '\r' '\n' < "$OUT/o" | sed -e '/^$/d' -e 's/\[ *[0-9]\{1,2\} %\]/[N %]/'
        echo "--- stderr"
        tr '\r' '\n' < "$OUT/e" | sed -e '/^$/d' -e 's/\[ *[0-9]\{1,2\} %\]/[N %]/' \
            -e "s/block job '[^']*'/block job JOB/"
        echo "--- exit status $rc"
    }
    qemu_domain_xml g "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$d/top.qcow2'/><target dev='vda' bus='virtio'/></disk>" > "$d/g.xml"
    run define "$d/g.xml"
    run start g

    echo "#### a commit that completes while the daemon is down"
    run blockcommit g vda --top "$d/mid.qcow2" --bytes --bandwidth 4000000
    ${who}_stop
    sleep 6
    ${who}_start
    run blockjob g vda --info
    run domblklist g

    echo "#### a slow copy through a restart and a kill -9"
    run blockcopy g vda "$d/c1.raw" --format raw --bytes --bandwidth 300000 --buf-size 65536 --transient-job
    ${who}_stop
    ${who}_start
    run blockjob g vda --info
    [ "$who" = lv ] || cp "$QEMU_DIR/run/g.status" "$OUT/rv.status"
    ${who}_stop kill
    ${who}_start
    run blockjob g vda --info
    run blockjob g vda --pivot
    run blockjob g vda --bandwidth 100
    wait_for 60 "the copy to be ready" _ready "$u" || fail "the copy is not ready after the restarts"
    run blockjob g vda --info
    events "$u" "$OUT/ev"
    run blockjob g vda --pivot
    wait_for 30 "the copy's end to be told" _lines "$OUT/ev" " 2 0$" 2 || { show "$OUT/ev"; fail "no end of the copy told"; }
    kill "$EV_PID"
    echo "=== events"
    grep -v '^ready$' "$OUT/ev"
    run domblklist g
    run domblklist g --inactive
    run blockjob g vda --info

    echo "#### a copy that becomes ready while the daemon is down"
    run blockcopy g vda "$d/c2.raw" --format raw --bytes --bandwidth 4000000 --buf-size 65536 --transient-job
    ${who}_stop kill
    sleep 8
    ${who}_start
    # (8 s is ample for 4 MB/s on a quiet machine; under load, wait)
    wait_for 60 "the copy to be ready" _ready "$u" || fail "the copy is not ready after the restart"
    run blockjob g vda --info
    events "$u" "$OUT/ev2"
    run blockjob g vda --pivot
    wait_for 30 "the copy's end to be told" _lines "$OUT/ev2" " 2 0$" 2 || { show "$OUT/ev2"; fail "no end of the copy told"; }
    kill "$EV_PID"
    echo "=== events (but a ready of the restart's, as soon as the client is there or not)"
    grep -v '^ready$' "$OUT/ev2" | grep -v ' 3$' || true
    run domblklist g
    run blockjob g vda --info
    run destroy g
}
# (not in a pipeline: the daemons restart in this shell)
scenario "$LIBVIRTD_QEMU_URI" "$LV" lv > "$OUT/lv.raw"
scenario "$QEMU_URI" "$RV" rv > "$OUT/rv.raw"
sed "s|$LV|DIR|g" "$OUT/lv.raw" > "$OUT/libvirtd.txt"
sed "s|$RV|DIR|g" "$OUT/rv.raw" > "$OUT/remvirtd.txt"
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "block jobs across restarts of the daemon as against libvirtd"
grep -q "vda      DIR/c1.raw" "$OUT/remvirtd.txt" || fail "the pivot to c1.raw is not in domblklist"
grep -q "vda      DIR/c2.raw" "$OUT/remvirtd.txt" || fail "the pivot to c2.raw is not in domblklist"
grep -q "^blockjob 2 " "$OUT/rv.status" || fail "the copy's record is not in the status: $(cat "$OUT/rv.status")"

# AUTODESTROY: the connection that owned the guest is gone with the daemon.
autodestroy()   # URI WHO
{
    qemu_domain_xml ad > "$OUT/ad.xml"
    bg "$OUT/ad.$2" "$SYSTEM_PYTHON3" -c "
import libvirt, sys, time
c = libvirt.open(sys.argv[1])
c.createXML(open(sys.argv[2]).read(), libvirt.VIR_DOMAIN_START_AUTODESTROY)
print('started', flush=True)
time.sleep(600)" "$1" "$OUT/ad.xml"
    local pid=$BG_PID
    wait_for 60 "the AUTODESTROY guest to start" grep -qx started "$OUT/ad.$2" || { show "$OUT/ad.$2"; fail "no AUTODESTROY guest"; }
    # (SIGKILL: libvirtd 9.0 was seen to take over 30 s to stop on SIGTERM here)
    "${2}_stop" kill
    "${2}_start"
    _ad_gone() { ! virsh -q -c "$1" list --all --name | grep -qx ad; }
    wait_for 30 "the AUTODESTROY guest to go" _ad_gone "$1" || fail "$2: the AUTODESTROY guest outlived the restart"
    kill "$pid"
    echo "ok   $2: a guest started with AUTODESTROY is destroyed when the daemon restarts"
}
autodestroy "$LIBVIRTD_QEMU_URI" lv
autodestroy "$QEMU_URI" rv
_no_qemu() { [ -z "$(qemu_pids "$QEMU_DIR/run/")" ]; }
wait_for 30 "the AUTODESTROY guest's QEMU to exit" _no_qemu ||
    fail "a QEMU of remvirtd's is left: $(qemu_pids "$QEMU_DIR/run/")"

# remvirtd stopped where QEMU has dismissed a pivoted copy but its status
# may not have the pivot yet (the crash point blockjob-pivot:1): started
# again, it has the disk on the new image and no job left.
stop_remvirtd
RV_CRASH_AT=blockjob-pivot:1 start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
"${V[@]}" start g > /dev/null
"${V[@]}" blockcopy g vda "$RV/c3.raw" --format raw --wait --transient-job > /dev/null
"${V[@]}" blockjob g vda --pivot > /dev/null 2>&1 || true
_at_crash_point() { [ ! -e "/proc/$REMVIRTD_PID" ] || grep -q '^State:[[:space:]]*Z' "/proc/$REMVIRTD_PID/status"; }
wait_for 30 "remvirtd to stop at its crash point" _at_crash_point || fail "remvirtd did not stop at blockjob-pivot:1"
grep -qx "remvirtd: crash point blockjob-pivot:1" "$REMVIRTD_DIR/stderr" ||
    { show "$REMVIRTD_DIR/stderr"; fail "remvirtd stopped, but not at its crash point"; }
wait "$REMVIRTD_PID" 2>/dev/null || true
REMVIRTD_PID=
rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
start_remvirtd_qemu
_pivoted() { "${V[@]}" domblklist g | grep -q "vda *$RV/c3.raw"; }
wait_for 30 "the pivot to c3.raw to be applied" _pivoted || fail "after the restart: $("${V[@]}" domblklist g)"
virsh -c "$QEMU_URI" blockjob g vda --info > "$OUT/o" 2>&1
grep -q "No current block job for vda" "$OUT/o" || fail "a job is left after the pivot: $(cat "$OUT/o")"
echo "ok   a pivot whose status was cut short by a kill is applied by the restart"
"${V[@]}" destroy g > /dev/null
