#!/usr/bin/env bash
# A restore from a managed image killed at each rename of its files
# (issue 26, bug 1: the image was removed 32 ms before the status file
# recorded that the guest runs, so a kill in that gap lost the guest's
# state).  The renames are the store helper's (rv-qemu-store, which
# writes remvirtd's files off its loop and dies with it): strace attaches
# to the helper and stops it (SIGSTOP injected, the call not made) when
# it enters its Nth rename(2) during `virsh start` of the saved domain,
# then remvirtd is killed with SIGKILL, which takes the stopped helper
# with it: remvirtd killed just before that rename.  N = 1, 2, ... until
# the start no longer reaches it.  After each kill remvirtd starts
# again: the domain must be shut off (saved) with its image whole and no
# QEMU left, or running (restored) without the image.  Unlike
# test-qemu-crash-points.sh it needs nothing in remvirtd.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires strace -V
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
SAVE=$QEMU_DIR/save
state() { "${V[@]}" domstate --reason g 2>&1 || true; }

qemu_domain_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
_settled()
{
    case $(state) in
    "shut off (saved)")
        [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] && [ "$(head -c 8 "$SAVE/g.save" 2>/dev/null)" = RVSAVE01 ] ;;
    "running (restored)")
        [ ! -e "$SAVE/g.save" ] && [ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" = 1 ] ;;
    *) false ;;
    esac
}
_traced() { grep -q attached "$OUT/strace.err"; }
kills=0
for n in 1 2 3 4 5 6 7 8; do
    if [ "$(state)" != "shut off (saved)" ]; then
        "${V[@]}" start g > /dev/null 2>&1 || true
        "${V[@]}" managedsave g > /dev/null
    fi
    helper=$(pgrep -P "$REMVIRTD_PID" -x rv-qemu-store) || fail "no store helper under remvirtd"
    bg "$OUT/strace" strace -p "$helper" -e trace=rename \
        -e inject=rename:error=EIO:signal=STOP:when="$n"
    spid=$BG_PID
    wait_for 10 "strace to attach" _traced || fail "strace cannot attach: $(cat "$OUT/strace.err")"
    bg "$OUT/start" "${V[@]}" start g
    vpid=$BG_PID
    # (Once strace reports the call injected, the helper stops before it
    # runs on: the signal is taken on the way back from the call.)
    _injected() { grep -q INJECTED "$OUT/strace.err"; }
    _stopped_or_done() { _injected || ! kill -0 "$vpid" 2>/dev/null; }
    wait_for 60 "the helper's rename $n or the start's end" _stopped_or_done
    if ! _injected; then
        # The start made fewer renames than n: every one was a kill point.
        kill "$spid" 2>/dev/null || true
        wait "$spid" 2>/dev/null || true
        wait "$vpid" 2>/dev/null || true
        break
    fi
    kill -KILL "$REMVIRTD_PID"
    wait "$vpid" 2>/dev/null || true
    wait "$REMVIRTD_PID" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    REMVIRTD_PID=
    rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_ADMIN_SOCK" "$REMVIRTD_DIR/remvirtd.pid"
    start_remvirtd_qemu
    wait_for 60 "g to settle after a kill at rename $n" _settled ||
        fail "killed at its rename $n of a restore, remvirtd left g $(state), image: $(ls "$SAVE"), QEMUs: $(qemu_pids "$QEMU_DIR/run/")"
    kills=$((kills + 1))
done
[ "$kills" -ge 2 ] || fail "only $kills kills: the start made fewer renames than expected"
echo "ok   restore killed at each of its $kills renames: shut off (saved) with the image, or running (restored) without"
