#!/usr/bin/env bash
# A restore from a managed image killed at each of remvirtd's renames
# (issue 26, bug 1: the image was removed 32 ms before the status file
# recorded that the guest runs, so a kill in that gap lost the guest's
# state).  strace attaches to remvirtd and kills it (SIGKILL injected,
# the call not made) when it enters its Nth rename(2) during `virsh start`
# of the saved domain, for N = 1, 2, ... until the start no longer reaches
# it.  After each kill remvirtd starts again: the domain must be shut off
# (saved) with its image whole and no QEMU left, or running (restored)
# without the image.  Unlike test-qemu-crash-points.sh it needs nothing in
# remvirtd, so it tells an old build from a new one too.
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
    bg "$OUT/strace" strace -p "$REMVIRTD_PID" -e trace=rename \
        -e inject=rename:error=EIO:signal=KILL:when="$n"
    spid=$BG_PID
    wait_for 10 "strace to attach" _traced || fail "strace cannot attach: $(cat "$OUT/strace.err")"
    "${V[@]}" start g > /dev/null 2>&1 || true
    sleep 0.2   # (virsh may see its connection end before remvirtd is reaped)
    if [ -e "/proc/$REMVIRTD_PID" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$REMVIRTD_PID/status"; then
        # The start made fewer renames than n: every one was a kill point.
        kill "$spid" 2>/dev/null || true
        wait "$spid" 2>/dev/null || true
        break
    fi
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
