#!/usr/bin/env bash
# Domain jobs on the QEMU driver, side by side with libvirtd's QEMU driver
# (the same steps on both; skipped for libvirtd where it cannot run):
# a guest with 512 MiB of which ~200 MiB hold random data (its initrd
# carries it), so that a save or a dump lasts long enough to be watched:
#   virsh save: python3-libvirt jobStats/jobInfo see an Unbounded Save job
#     with memory figures; domjobinfo --completed then; the completed
#     stats are kept with KEEP_COMPLETED and gone after a plain read;
#   domjobabort during a save: the save fails ("operation aborted"), the
#     guest runs on (save canceled), no file (nor a partial one) is left;
#   virsh dump (Dump job), --memory-only (ELF, kdump-zlib), --crash;
#     domjobabort during a dump;
#   JOB_COMPLETED events: one per save and per dump but memory-only ones;
#   save-image-dumpxml and managedsave-dumpxml;
#   the refusals (flags, formats, no job, inactive domain): the same
#     error code and domain on both.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
OUT=$RV_TMP/out
mkdir -p "$OUT/pad"
CHECKS=$top_srcdir/tests/interop/jobs-checks.py
head -c 200M /dev/urandom > "$OUT/pad/pad.bin"
(cd "$OUT/pad" && echo pad.bin | cpio -o -H newc 2> /dev/null) > "$OUT/pad.cpio"
cat "$TEST_GUEST_INITRD" "$OUT/pad.cpio" > "$OUT/initrd.img"
TEST_GUEST_INITRD=$OUT/initrd.img
qemu_guest_xml g | sed "s|<memory unit='MiB'>128</memory>|<memory unit='MiB'>512</memory>|;
                        s|<currentMemory unit='MiB'>96</currentMemory>|<currentMemory unit='MiB'>512</currentMemory>|" \
    > "$OUT/g.xml"
grep -q "512</memory>" "$OUT/g.xml" || fail "the guest XML did not get 512 MiB"

state_is() { [ "$(virsh -q -c "$1" domstate --reason g)" = "$2" ]; }
booted() { virsh -q -c "$1" qemu-monitor-command g --hmp 'info status' 2>/dev/null | grep -q running; }
py() { "$SYSTEM_PYTHON3" "$CHECKS" "$@"; }
has_events() { [ "$(grep -c '"dom"' "$1")" -ge "$2" ]; }

# abort_during URI DIR OP JOB VIRSH-ARGS...: virsh VIRSH-ARGS (its last
# argument the file it writes), aborted with domjobabort once its job
# (operation OP) is seen; it fails saying that job JOB was canceled.  A
# save or dump may end before the abort reaches it (both daemons run them
# at full speed): then it is undone and tried again, 5 times at most.
abort_during()
{
    local U=$1 D=$2 op=$3 job=$4 pid try file
    shift 4
    file=${!#}
    for try in 1 2 3 4 5; do
        bg "$D/aborted.out" virsh -c "$U" "$@"
        pid=$BG_PID
        py "$U" wait-job "$D" "$op" || fail "$U: no job seen for $*"
        virsh -q -c "$U" domjobabort g > /dev/null 2>&1 || true
        wait "$pid" || break
        echo "$U: $* ended before its abort (try $try): again" >&2
        if state_is "$U" "shut off (saved)"; then virsh -q -c "$U" restore "$file" > /dev/null; fi
        rm -f "$file"
        [ "$try" != 5 ] || fail "$U: $* always ended before its abort"
    done
    grep -q "operation aborted: job '$job' canceled by client" "$D/aborted.out.err" ||
        fail "$U: aborted $*: $(cat "$D/aborted.out.err")"
}

# managed_xml_is_g URI: managedsave-dumpxml gives g's definition.
managed_xml_is_g() { virsh -q -c "$1" managedsave-dumpxml g | grep -q "<name>g</name>"; }

# run_all URI DIR: every step on one daemon; what both must agree on goes
# to DIR/compare.
run_all()
{
    local U=$1 D=$2
    mkdir -p "$D"
    virsh -q -c "$U" define "$OUT/g.xml" > /dev/null
    virsh -q -c "$U" start g > /dev/null
    sleep 3     # (the kernel unpacks the initrd)
    bg "$D/events" "$SYSTEM_PYTHON3" "$CHECKS" "$U" events "$D"
    wait_for 30 "the event client" grep -q registered "$D/events"

    # ---- save, watched
    bg "$D/save.out" virsh -c "$U" save g "$D/g.img"
    local save_pid=$BG_PID
    py "$U" wait-job "$D" 2 || fail "$U: no save job seen"
    virsh -c "$U" domjobinfo g > "$D/domjobinfo" 2>&1 || true
    wait "$save_pid" || fail "$U: save: $(cat "$D/save.out")"
    grep -q "^Operation: *Save" "$D/domjobinfo" || fail "$U: domjobinfo: $(cat "$D/domjobinfo")"
    state_is "$U" "shut off (saved)" || fail "$U: not saved"
    py "$U" completed "$D" > "$D/completed.json"
    virsh -q -c "$U" save-image-dumpxml "$D/g.img" > "$D/image.xml"
    grep -q "<name>g</name>" "$D/image.xml" || fail "$U: save-image-dumpxml: $(cat "$D/image.xml")"
    virsh -q -c "$U" restore "$D/g.img" > /dev/null

    # ---- save, aborted
    abort_during "$U" "$D" 2 'domain save' save g "$D/g2.img"
    wait_for 10 "the guest to run again" state_is "$U" "running (save canceled)"
    ! ls "$D"/g2.img* > /dev/null 2>&1 || fail "$U: the aborted save left $(ls "$D"/g2.img*)"
    virsh -c "$U" domjobinfo g --completed > "$D/after-abort" 2>&1

    # ---- dumps
    bg "$D/dump.out" virsh -c "$U" dump g "$D/g.core"
    local dump_pid=$BG_PID
    py "$U" wait-job "$D" 8 || fail "$U: no dump job seen"
    wait "$dump_pid" || fail "$U: dump: $(cat "$D/dump.out")"
    [ -s "$D/g.core" ] || fail "$U: no dump file"
    state_is "$U" "running (unpaused)" || fail "$U: after dump: $(virsh -q -c "$U" domstate --reason g)"
    virsh -q -c "$U" dump g "$D/g.elf" --memory-only > /dev/null
    [ "$(head -c 4 "$D/g.elf" | od -An -c | tr -d ' ')" = "177ELF" ] || fail "$U: --memory-only is no ELF"
    virsh -q -c "$U" dump g "$D/g.kdump" --memory-only --format kdump-zlib > /dev/null
    [ "$(head -c 12 "$D/g.kdump")" = makedumpfile ] || fail "$U: kdump-zlib is no (flattened) kdump file"
    abort_during "$U" "$D" 8 'domain core dump' dump g "$D/g2.core"
    [ ! -e "$D/g2.core" ] || fail "$U: the aborted dump left its file"
    py "$U" errors "$D" > "$D/errors"
    virsh -q -c "$U" dump g "$D/g3.core" --crash > /dev/null
    state_is "$U" "shut off (crashed)" || fail "$U: after dump --crash: $(virsh -q -c "$U" domstate --reason g)"
    py "$U" errors-inactive "$D" >> "$D/errors"
    virsh -q -c "$U" start g > /dev/null
    virsh -q -c "$U" managedsave g > /dev/null
    managed_xml_is_g "$U" || fail "$U: managedsave-dumpxml"
    virsh -q -c "$U" managedsave-remove g > /dev/null
    # save, dump, dump --crash: three events (none for memory-only dumps)
    wait_for 10 "three JOB_COMPLETED events" has_events "$D/events" 3
    sleep 1
    "$SYSTEM_PYTHON3" - "$D" > "$D/compare" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(f'{d}/completed.json'))
save = json.load(open(f'{d}/job-2.json'))
dump = json.load(open(f'{d}/job-8.json'))
ev = [json.loads(l) for l in open(f'{d}/events') if l.startswith('{')]
print('save job while running:', save['stats']['type'], save['stats']['operation'],
      sorted(k for k in save['stats'] if k != 'memory_bps'))
print('save jobInfo type and figures > 0:', save['info'][0], [v > 0 for v in save['info'][3:9]])
print('dump job while running:', dump['stats']['type'], dump['stats']['operation'])
print('completed kept:', c['kept']['type'], c['kept']['operation'], sorted(c['kept']))
print('completed taken:', c['taken']['type'], 'then:', c['gone'])
print('completed elapsed >= downtime > 0:', c['kept']['time_elapsed'] >= c['kept']['downtime'] > 0)
# (libvirtd leaves memory_bps out when its last rate reading was 0: a
# short save's event may have it or not, as the running save's stats)
# (a save or dump that ended before its abort and was tried again told
# one more: repeats in a row count once)
told = [(e['params']['operation'], sorted(k for k in e['params'] if k != 'memory_bps')) for e in ev]
print('events:', [t for i, t in enumerate(told) if i == 0 or told[i - 1] != t])
PY
    cat "$D/errors" >> "$D/compare"
    sed -n 's/^\(Job type:\).*/\1/p' "$D/after-abort" >> "$D/compare"
}

start_remvirtd_qemu
run_all "$QEMU_URI" "$OUT/remvirtd"
cat "$OUT/remvirtd/compare"
if why=$(libvirtd_qemu_why_not); then
    echo "libvirtd side skipped: $why"
else
    start_libvirtd_qemu
    run_all "$LIBVIRTD_QEMU_URI" "$OUT/libvirtd"
    diff -u "$OUT/libvirtd/compare" "$OUT/remvirtd/compare" ||
        fail "remvirtd's jobs differ from libvirtd's (above: - libvirtd, + remvirtd)"
    echo "ok   the same as libvirtd's"
fi
echo "ok   domain jobs"
