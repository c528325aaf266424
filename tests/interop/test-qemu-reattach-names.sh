#!/usr/bin/env bash
# Reattach after a restart takes a QEMU for a domain only when it is the
# very process started for it: its -name argument is exactly the domain's
# (escaped as on the command line, not a prefix) and its start time
# (/proc/PID/stat field 22) is the one recorded in the status file.
# - a running domain named 'a,b' survives a kill -9 of remvirtd;
# - domain 'a', whose pid now names the QEMU of 'a,b' (pid reuse), does
#   not claim it: 'a' is shut off (crashed), 'a,b' runs on;
# - a status file whose start time is not the process's (another process
#   with the same pid and name) is not reattached, and that process is
#   left alone;
# - a status file written before start times were recorded is still
#   reattached by its name.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
RUN=$QEMU_DIR/run

for n in 'a,b' a c; do
    qemu_domain_xml "$n" > "$OUT/$n.xml"
    "${V[@]}" define "$OUT/$n.xml" > /dev/null
    "${V[@]}" start "$n" > /dev/null
done
pid_of() { sed -n 's/^pid //p' "$RUN/$1.status"; }
ab_pid=$(pid_of 'a,b')
a_pid=$(pid_of a)
c_pid=$(pid_of c)
start_time() { awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' "/proc/$1/stat"; }
grep -qx "start_time $(start_time "$ab_pid")" "$RUN/a,b.status" ||
    fail "the status file does not record the process's start time: $(tr '\n' ' ' < "$RUN/a,b.status")"
echo "ok   the status file records the start time of QEMU (field 22 of /proc/PID/stat)"

# 1. 'a,b' is reattached (its command line says guest=a,,b).
kill_remvirtd
start_remvirtd_qemu
[ "$("${V[@]}" domstate --reason 'a,b')" = "running (booted)" ] ||
    fail "'a,b' is $("${V[@]}" domstate --reason 'a,b') after the restart"
[ "$(pid_of 'a,b')" = "$ab_pid" ] || fail "'a,b' has another pid"
kill -0 "$ab_pid" || fail "the QEMU of 'a,b' was killed"
[ "$("${V[@]}" domstate --reason a)" = "running (booted)" ] || fail "'a' is not running"
"${V[@]}" suspend 'a,b' > /dev/null
[ "$("${V[@]}" domstate --reason 'a,b')" = "paused (user)" ] || fail "reattached 'a,b' did not pause"
"${V[@]}" resume 'a,b' > /dev/null
echo "ok   a running domain named 'a,b' is reattached after kill -9 and obeys"

# 2. The QEMU of 'a' dies while remvirtd is away and its pid comes back
# as the QEMU of 'a,b' (written into the status file: pid reuse cannot be
# forced).  'a' must not take that process.
kill_remvirtd
kill -KILL "$a_pid"
_a_gone() { ! kill -0 "$a_pid" 2>/dev/null; }
wait_for 10 "the QEMU of 'a' to die" _a_gone
sed -i "s/^pid .*/pid $ab_pid/" "$RUN/a.status"
start_remvirtd_qemu
[ "$("${V[@]}" domstate --reason a)" = "shut off (crashed)" ] ||
    fail "'a' is $("${V[@]}" domstate --reason a), not shut off (crashed): it claimed the QEMU of 'a,b'"
[ "$("${V[@]}" domstate 'a,b')" = "running" ] || fail "'a,b' is $("${V[@]}" domstate 'a,b')"
[ "$(pid_of 'a,b')" = "$ab_pid" ] && kill -0 "$ab_pid" || fail "the QEMU of 'a,b' was taken or killed"
echo "ok   domain 'a' does not claim the QEMU of 'a,b' (pid reuse): 'a' crashed, 'a,b' runs on"

# 3. Same pid, same name, another start time: another process.  It is
# not reattached, and not killed (it is not remvirtd's).
kill_remvirtd
sed -i "s/^start_time .*/start_time 1/" "$RUN/c.status"
start_remvirtd_qemu
[ "$("${V[@]}" domstate --reason c)" = "shut off (crashed)" ] ||
    fail "'c' is $("${V[@]}" domstate --reason c) though its process has another start time"
kill -0 "$c_pid" || fail "remvirtd killed a process that it did not start"
kill -KILL "$c_pid"
echo "ok   a process with the recorded pid and name but another start time is not reattached (nor killed)"

# 4. A status file without a start time (written by an older remvirtd)
# is reattached by its exact name.
"${V[@]}" start c > /dev/null
c_pid=$(pid_of c)
kill_remvirtd
sed -i "/^start_time /d" "$RUN/c.status"
start_remvirtd_qemu
[ "$("${V[@]}" domstate --reason c)" = "running (booted)" ] ||
    fail "'c' is $("${V[@]}" domstate --reason c): a status file without start time was not reattached"
[ "$(pid_of c)" = "$c_pid" ] || fail "'c' has another pid"
echo "ok   a status file without a start time (older remvirtd) is reattached by name"

for n in 'a,b' c; do
    "${V[@]}" destroy "$n" > /dev/null
done
[ -z "$(qemu_pids "$RUN/")" ] || fail "QEMUs left after destroying all"
echo "ok   all destroyed, no QEMU left"
