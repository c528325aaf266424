#!/usr/bin/env bash
# A running guest is never reported "not running" while remvirtd has no
# usable monitor for it: the calls that need the monitor (vcpuinfo,
# vcpupin, blkdeviotune, setvcpus ...) wait for it and then answer, or
# answer "not running" only once the guest is shut off.  Each window is
# held open on purpose, so nothing here depends on timing:
# 1. after a restart, while the monitor reconnects (QEMU is stopped with
#    SIGSTOP, so its greeting cannot come);
# 2. while a start is under way (the QEMU binary is a wrapper that waits
#    before it runs QEMU for domain 'slow');
# 3. while a destroy is under way (QEMU stopped: "quit" gets no answer).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires qemu-system-x86_64 --version
OUT=$RV_TMP/out
mkdir -p "$OUT"
cat > "$OUT/qemu" <<EOF
#!/bin/sh
case "\$*" in *guest=slow,*) sleep 3 ;; esac
exec $(command -v qemu-system-x86_64) "\$@"
EOF
chmod +x "$OUT/qemu"
start_remvirtd_qemu "qemu_binary = \"$OUT/qemu\""
V=(virsh -q -c "$QEMU_URI")
RUN=$QEMU_DIR/run

for n in g slow; do
    truncate -s 16M "$OUT/$n.img"
    qemu_domain_xml "$n" "<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$OUT/$n.img'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/$n.xml"
    "${V[@]}" define "$OUT/$n.xml" > /dev/null
done
"${V[@]}" start g > /dev/null
pid=$(sed -n 's/^pid //p' "$RUN/g.status")

# The calls, each in the background, output in $OUT/NAME.{out,err,rc}.
calls_begin()
{
    local dom=$1
    bg_call "$dom" vcpuinfo vcpuinfo "$dom"
    bg_call "$dom" vcpupin vcpupin "$dom" --live
    bg_call "$dom" blkdeviotune blkdeviotune "$dom" vda --live
    bg_call "$dom" memstat dommemstat "$dom"
}
CALLS=(vcpuinfo vcpupin blkdeviotune memstat)
bg_call()
{
    local dom=$1 what=$2
    shift 2
    rm -f "$OUT/$dom.$what.rc"
    {
        local rc=0
        "${V[@]}" "$@" > "$OUT/$dom.$what.out" 2> "$OUT/$dom.$what.err" || rc=$?
        echo "$rc" > "$OUT/$dom.$what.rc"
    } &
}
# calls_pending DOM: none of the calls has been answered yet.
calls_pending()
{
    local what
    for what in "${CALLS[@]}"; do
        [ ! -e "$OUT/$1.$what.rc" ] ||
            fail "$what on $1 answered at once: rc $(cat "$OUT/$1.$what.rc"): $(cat "$OUT/$1.$what.err")"
    done
}
_calls_done()
{
    local what
    for what in "${CALLS[@]}"; do
        [ -e "$OUT/$1.$what.rc" ] || return 1
    done
}
calls_wait() { wait_for 30 "the calls on $1 to be answered" _calls_done "$1"; }
# calls_ok DOM: each call succeeded.
calls_ok()
{
    local what
    for what in "${CALLS[@]}"; do
        [ "$(cat "$OUT/$1.$what.rc")" = 0 ] || fail "$what on $1 failed: $(cat "$OUT/$1.$what.err")"
    done
    grep -q "^State: *running" "$OUT/$1.vcpuinfo.out" ||
        fail "vcpuinfo on $1 says: $(cat "$OUT/$1.vcpuinfo.out")"
}

# 1. Reconnecting after a restart.
_cont() { kill -CONT "$1" 2>/dev/null || true; }
kill -STOP "$pid"
cleanup_fn _cont "$pid"
kill_remvirtd
start_remvirtd_qemu "qemu_binary = \"$OUT/qemu\""
[ "$("${V[@]}" domstate g)" = "running" ] || fail "g is $("${V[@]}" domstate g) after the restart"
calls_begin g
sleep 1
calls_pending g
[ "$("${V[@]}" domstate g)" = "running" ] || fail "g is $("${V[@]}" domstate g) while reconnecting"
kill -CONT "$pid"
calls_wait g
calls_ok g
echo "ok   after a restart, calls that need the monitor wait for it to reconnect, then answer"

# 2. During a start.
"${V[@]}" start slow > "$OUT/start.out" 2>&1 &
start_job=$!
_slow_active() { [ "$("${V[@]}" domid slow)" != "-" ]; }
wait_for 10 "slow to become active" _slow_active
calls_begin slow
sleep 1
calls_pending slow
wait "$start_job" || fail "start slow failed: $(cat "$OUT/start.out")"
calls_wait slow
calls_ok slow
echo "ok   during a start, the calls wait for it and then answer"

# 3. During a destroy: "not running" only once the guest is shut off.
pid=$(sed -n 's/^pid //p' "$RUN/g.status")
kill -STOP "$pid"
cleanup_fn _cont "$pid"
"${V[@]}" destroy g > "$OUT/destroy.out" 2>&1 &
destroy_job=$!
sleep 0.5
calls_begin g
sleep 1
calls_pending g
kill -CONT "$pid"
wait "$destroy_job" || fail "destroy g failed: $(cat "$OUT/destroy.out")"
calls_wait g
# (virsh's vcpupin --live on a shut-off domain lists nothing and succeeds.)
for what in vcpuinfo blkdeviotune memstat; do
    [ "$(cat "$OUT/g.$what.rc")" != 0 ] || fail "$what on a destroyed g succeeded"
    grep -Eq "domain is not running|inactive domain" "$OUT/g.$what.err" ||
        fail "$what on a destroyed g: $(cat "$OUT/g.$what.err")"
done
[ "$("${V[@]}" domstate g)" = "shut off" ] || fail "g is $("${V[@]}" domstate g)"
echo "ok   during a destroy, the calls wait and then say 'not running' (the guest is shut off)"

"${V[@]}" destroy slow > /dev/null
[ -z "$(qemu_pids "$RUN/")" ] || fail "QEMUs left"
echo "ok   no QEMU left"
