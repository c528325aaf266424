#!/usr/bin/env bash
# Domain events and keepalive against remvirtd, with event-client (a
# libremvirt subscriber), rvsh and a raw Python client:
#   a. one sequence of changes made by rvsh reaches six subscribers (all
#      domains, and one domain only) with exactly the expected events in
#      exactly that order;
#   b. deregistering stops a callback while others keep getting events
#      (event-client dereg checks itself);
#   f. rvsh event --timeout without events: virsh's words and status 1;
#      rvsh event without --loop ends after the first event;
#      the close callback says EOF when the daemon shuts down;
#   c. a subscriber that stops reading is closed at max_client_output_bytes
#      while two others get every event, in order;
#   d. keepalive closes a SIGSTOPped client, and not an idle one;
#   e. with the daemon SIGSTOPped, a call returns an error instead of
#      hanging and the close callback says keepalive.
# Each part gets a remvirtd of its own configuration.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

EVENT_CLIENT=$top_builddir/tests/integration/event-client
[ -x "$EVENT_CLIENT" ] || fail "$EVENT_CLIENT is not built"
[ -x "$RVSH" ] || fail "$RVSH is not built"
requires "$PYTHON3" --version
# Waits grow under valgrind, which makes everything slower.
SLOW=1
[ -n "${RV_VALGRIND:-}" ] && SLOW=4

# event-client runs under valgrind too in make check-valgrind.  exec: in
# the background the process itself, not a subshell, gets the signals.
event_client()
{
    # shellcheck disable=SC2086
    exec ${RV_VALGRIND:-} "$EVENT_CLIENT" "$@"
}

_continue()
{
    kill -CONT "$1" 2>/dev/null
    return 0
}

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
domain_xml evA 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f01 > "$xmldir/evA.xml"
domain_xml evT 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f02 > "$xmldir/evT.xml"

# The rvsh subscribers do not say when they are registered: suspend and
# resume domain 'test' until each file shows a resume.  Those events are
# cut off again by strip_warmup.
_warm_once()
{
    printf 'suspend test\nresume test\n' | "$RVSH" -q -c "$REMVIRTD_URI" > /dev/null
    local f
    for f; do
        grep -qE "^lifecycle test 4 0$|^event 'lifecycle' for domain 'test': Resumed Unpaused$" \
            "$f" || return 1
    done
}
warm_up()
{
    wait_for $((30 * SLOW)) "every subscriber to see an event" _warm_once "$@"
}
strip_warmup()
{
    awk 'skip && /^(ready|lifecycle test [34] 0|event .lifecycle. for domain .test.: (Suspended Paused|Resumed Unpaused))$/ { next }
         { skip = 0; print }' skip=1 "$1"
}

# ================================================================ a, b, f
start_remvirtd
URI=$REMVIRTD_URI
OUT=$RV_TMP/out
mkdir -p "$OUT"

echo "== a. ordering and fan-out"
bg "$OUT/ec1" event_client "$URI" watch; ec1=$BG_PID
bg "$OUT/ec2" event_client "$URI" watch; ec2=$BG_PID
bg "$OUT/ec-test" event_client "$URI" watch test; ec_test=$BG_PID
bg "$OUT/rv1" "$RVSH" -c "$URI" event --loop; rv1=$BG_PID
bg "$OUT/rv2" "$RVSH" -c "$URI" event --loop; rv2=$BG_PID
bg "$OUT/rv-test" "$RVSH" -c "$URI" event --loop --domain test; rv_test=$BG_PID
for f in ec1 ec2 ec-test; do
    wait_for $((10 * SLOW)) "$f to register" has_line "$OUT/$f" ready || { show "$OUT/$f"; fail "$f"; }
done
warm_up "$OUT"/ec1 "$OUT"/ec2 "$OUT"/ec-test "$OUT"/rv1 "$OUT"/rv2 "$OUT"/rv-test

# NAME EVENT DETAIL and virsh's words for them, in the order of the
# commands below.
expected=(
    "evA 0 0 Defined Added"
    "evA 2 0 Started Booted"
    "test 5 0 Stopped Shutdown"
    "evA 3 0 Suspended Paused"
    "test 2 0 Started Booted"
    "evA 4 0 Resumed Unpaused"
    "test 3 0 Suspended Paused"
    "evA 5 1 Stopped Destroyed"
    "test 4 0 Resumed Unpaused"
    "evA 0 1 Defined Updated"
    "evA 1 0 Undefined Removed"
    "evT 2 0 Started Booted"
    "evT 3 0 Suspended Paused"
    "evT 5 1 Stopped Destroyed"
    "test 5 1 Stopped Destroyed"
)
# (Domain test's first event is no suspend or resume: strip_warmup must
# stop there for the subscribers of test only.)
"$RVSH" -q -c "$URI" > "$OUT/changes" 2>&1 <<EOF
define $xmldir/evA.xml
start evA
shutdown test
suspend evA
start test
resume evA
suspend test
destroy evA
resume test
define $xmldir/evA.xml
undefine evA
create $xmldir/evT.xml
suspend evT
destroy evT
EOF
[ "$(grep -c '^Domain ' "$OUT/changes")" -eq 14 ] || { cat "$OUT/changes"; fail "a command of the sequence failed"; }
# The last change from another client: once a subscriber has its event,
# every earlier one has arrived too.
"$RVSH" -q -c "$URI" destroy test > /dev/null
last_numeric="lifecycle test 5 1"
last_words="event 'lifecycle' for domain 'test': Stopped Destroyed"
for f in ec1 ec2 ec-test; do
    wait_for $((15 * SLOW)) "$f to get the last event" has_line "$OUT/$f" "$last_numeric" ||
        { show "$OUT/$f"; fail "$f did not get every event"; }
done
for f in rv1 rv2 rv-test; do
    wait_for $((15 * SLOW)) "$f to get the last event" has_line "$OUT/$f" "$last_words" ||
        { show "$OUT/$f"; fail "$f did not get every event"; }
done
kill -TERM "$ec1" "$ec2" "$ec_test"
kill -INT "$rv1" "$rv2" "$rv_test"
for pid in "$ec1" "$ec2" "$ec_test" "$rv1" "$rv2" "$rv_test"; do
    finish "$pid" || fail "subscriber $pid did not end cleanly (status $?)"
done

# expect FORMAT DOMAIN: the expected lines, of every domain or of one.
expect()
{
    local row name event detail words
    for row in "${expected[@]}"; do
        read -r name event detail words <<< "$row"
        [ -z "$2" ] || [ "$2" = "$name" ] || continue
        if [ "$1" = numeric ]; then
            echo "lifecycle $name $event $detail"
        else
            echo "event 'lifecycle' for domain '$name': $words"
        fi
    done
}
# The final count includes the warm-up's events.
check_subscriber()
{
    local file=$OUT/$1 format=$2 domain=$3 total
    total=$(grep -c '^lifecycle \|^event ' "$file" || true)
    {
        expect "$format" "$domain"
        if [ "$format" = numeric ]; then
            echo "events $total"
        else
            echo "events received: $total"
            echo
        fi
    } > "$file.expected"
    strip_warmup "$file" > "$file.seq"
    same "$file.expected" "$file.seq" "$1: every event once, in order"
    [ ! -s "$file.err" ] || { show "$file"; fail "$1 wrote to stderr"; }
}
check_subscriber ec1 numeric ""
check_subscriber ec2 numeric ""
check_subscriber ec-test numeric test
check_subscriber rv1 words ""
check_subscriber rv2 words ""
check_subscriber rv-test words test

echo "== b. deregistration"
"$RVSH" -q -c "$URI" start test > /dev/null     # stopped by the end of a.
# shellcheck disable=SC2086
timeout $((120 * SLOW)) ${RV_VALGRIND:-} "$EVENT_CLIENT" "$URI" dereg ||
    fail "event-client dereg failed (status $?)"

echo "== f. rvsh event without events, and without --loop"
status=0
"$RVSH" -q -c "$URI" event --timeout 1 > "$OUT/timeout" 2> "$OUT/timeout.err" || status=$?
printf 'event loop timed out\nevents received: 0\n' > "$OUT/timeout.expected"
same "$OUT/timeout.expected" "$OUT/timeout" "rvsh event --timeout 1 with no event"
[ "$status" -eq 1 ] || fail "rvsh event --timeout 1 with no event exited $status, not 1 (as virsh)"
[ ! -s "$OUT/timeout.err" ] || { show "$OUT/timeout"; fail "rvsh event --timeout wrote to stderr"; }
echo "ok   ... and exits 1"

# Without --loop the first event ends it: virsh prints that one only, even
# when more follow at once (here 50 suspends and resumes in a burst).
bg "$OUT/once" "$RVSH" -q -c "$URI" event --timeout $((60 * SLOW)); once=$BG_PID
_once_done()
{
    local i
    for ((i = 0; i < 50; i++)); do
        printf 'suspend test\nresume test\n'
    done | "$RVSH" -q -c "$URI" > /dev/null
    ! kill -0 "$once" 2>/dev/null
}
wait_for $((30 * SLOW)) "rvsh event to end after one event" _once_done || { show "$OUT/once"; fail "rvsh event did not end"; }
finish "$once" || fail "rvsh event (one event) exited $?, not 0"
first=$(head -n 1 "$OUT/once")
case $first in
    "event 'lifecycle' for domain 'test': Suspended Paused" | \
    "event 'lifecycle' for domain 'test': Resumed Unpaused") ;;
    *) show "$OUT/once"; fail "rvsh event printed '$first' first" ;;
esac
printf '%s\nevents received: 1\n' "$first" > "$OUT/once.expected"
same "$OUT/once.expected" "$OUT/once" "rvsh event without --loop: the first event only"

# The close callback: a daemon that shuts down is EOF (reason 1).
bg "$OUT/eof" event_client "$URI" watch; eof=$BG_PID
wait_for $((10 * SLOW)) "event-client to register" has_line "$OUT/eof" ready || { show "$OUT/eof"; fail "no ready"; }
stop_remvirtd
finish "$eof" || fail "event-client watch exited $? when the daemon stopped"
printf 'ready\nclosed 1\nevents 0\n' > "$OUT/eof.expected"
same "$OUT/eof.expected" "$OUT/eof" "the daemon's shutdown reaches the close callback as EOF"
mv "$REMVIRTD_LOG" "$RV_TMP/remvirtd-abf.log"

# ================================================================ c
echo "== c. a subscriber that stops reading is capped; the others get everything"
cap=65536
start_remvirtd "max_client_output_bytes = $cap"
URI=$REMVIRTD_URI

bg "$OUT/cap1" event_client "$URI" watch; cap1=$BG_PID
bg "$OUT/cap2" event_client "$URI" watch; cap2=$BG_PID
# The stalled subscriber: registers (316), then reads nothing until told
# to (the file go exists), then reads what is left up to the end.
rm -f "$OUT/go"
bg "$OUT/stalled" rawpy "$REMVIRTD_SOCK" "$OUT/go" <<'PY'
import os, socket, sys, time
import rawclient as rc

path, go = sys.argv[1:]
c = rc.Client(path, timeout=30)
# Small, so that the kernel holds little for it (the daemon's send
# buffer is what fills on an AF_UNIX socket, though).
c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
c.open_connection()
body = c.call_ok(316, rc.xdr_int(0) + rc.xdr_int(0))   # lifecycle, every domain
u = rc.Unpacker(body)
callback_id = u.int()
u.done()
print(f"registered callback {callback_id} pid {os.getpid()}", flush=True)

deadline = time.monotonic() + 600
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("FAIL: never told to read")
    time.sleep(0.1)

# What the kernel held for it: whole events, in order, then EOF (perhaps
# in the middle of a packet: the daemon dropped the rest of its queue).
n = 0
try:
    while True:
        hdr, body = c.recv_packet()
        u = rc.Unpacker(body)
        if not (hdr.type == rc.MESSAGE and hdr.proc == 318 and hdr.status == 0):
            sys.exit(f"FAIL: packet {n} is {hdr}, not a lifecycle event")
        cb = u.int()
        dom = u.domain()
        event, detail = u.int(), u.int()
        u.done()
        want = (3, 0) if n % 2 == 0 else (4, 0)     # suspended, resumed, ...
        if cb != callback_id or dom["name"] != "test" or (event, detail) != want:
            sys.exit(f"FAIL: event {n} is callback {cb} {dom['name']} {event}/{detail}, "
                     f"expected {callback_id} test {want[0]}/{want[1]}")
        n += 1
except rc.Closed:
    print(f"EOF after {n} events, {len(c.inbuf)} bytes of a packet left", flush=True)
except TimeoutError:
    sys.exit(f"FAIL: after {n} events the connection is still open")
PY
stalled=$BG_PID
for f in cap1 cap2; do
    wait_for $((10 * SLOW)) "$f to register" has_line "$OUT/$f" ready || { show "$OUT/$f"; fail "$f"; }
done
wait_for $((10 * SLOW)) "the stalled subscriber to register" grep -q '^registered' "$OUT/stalled" ||
    { show "$OUT/stalled"; fail "the stalled subscriber did not register"; }
stalled_pid=$(sed -n 's/^registered callback .* pid \([0-9]*\)$/\1/p' "$OUT/stalled")

# Suspend and resume in batches; after each batch the readers must have
# everything, so that only the stalled one falls behind however slow the
# machine is: a batch's 800 events are 54400 bytes, under the cap even for
# a reader that reads none of them during the batch.  Once the stalled
# one is closed, one more batch.
batch=400
cap_line="(pid $stalled_pid uid"
events=0
capped_after=
_caught_up()
{
    [ "$(grep -c '^lifecycle' "$OUT/cap1")" -ge "$events" ] &&
        [ "$(grep -c '^lifecycle' "$OUT/cap2")" -ge "$events" ]
}
for ((b = 1; b <= 40; b++)); do
    for ((i = 0; i < batch; i++)); do
        printf 'suspend test\nresume test\n'
    done | "$RVSH" -q -c "$URI" > "$OUT/batch" 2>&1
    [ "$(grep -c "^Domain 'test' \(suspended\|resumed\)$" "$OUT/batch")" -eq $((2 * batch)) ] ||
        { tail "$OUT/batch"; fail "a suspend or resume failed in batch $b"; }
    events=$((events + 2 * batch))
    wait_for $((30 * SLOW)) "the reading subscribers to get $events events" _caught_up ||
        { show "$OUT/cap1"; show "$OUT/cap2"; fail "a reading subscriber fell behind"; }
    [ -z "$capped_after" ] || break
    if grep -F -- "$cap_line" "$REMVIRTD_LOG" | grep -q max_client_output_bytes; then
        capped_after=$events
    fi
done
[ -n "$capped_after" ] || { _rv_show_file "$REMVIRTD_LOG"; fail "the stalled subscriber was not capped after $events events"; }
echo "ok   the stalled subscriber was closed after at most $capped_after events; $events in all"

grep max_client_output_bytes "$REMVIRTD_LOG" > "$OUT/cap.log" || true
cat "$OUT/cap.log"
[ "$(wc -l < "$OUT/cap.log")" -eq 1 ] || fail "not exactly one client was capped"
grep -qF -- "$cap_line" "$OUT/cap.log" || fail "the capped client is not the stalled one"
unread=$(sed -n 's/.*: \([0-9]*\) bytes of output are waiting unread.*/\1/p' "$OUT/cap.log")
[ -n "$unread" ] && [ "$unread" -le "$cap" ] ||
    fail "the log does not show a queue within the cap ($unread bytes unread, cap $cap)"
echo "ok   the log names the stalled client; its queue stayed within the cap ($unread <= $cap bytes)"

touch "$OUT/go"
finish "$stalled" || { show "$OUT/stalled"; fail "the stalled subscriber failed"; }
cat "$OUT/stalled"
got=$(sed -n 's/^EOF after \([0-9]*\) events.*/\1/p' "$OUT/stalled")
[ -n "$got" ] && [ "$got" -lt "$capped_after" ] ||
    { show "$OUT/stalled"; fail "the stalled subscriber did not see EOF before the end of the events"; }
echo "ok   the stalled subscriber's connection was closed: EOF after the $got events it could read"

kill -TERM "$cap1" "$cap2"
for pid in "$cap1" "$cap2"; do
    finish "$pid" || fail "subscriber $pid did not end cleanly"
done
{
    echo ready
    for ((i = 0; i < events / 2; i++)); do
        echo "lifecycle test 3 0"
        echo "lifecycle test 4 0"
    done
    echo "events $events"
} > "$OUT/cap.expected"
same "$OUT/cap.expected" "$OUT/cap1" "reading subscriber 1 got all $events events, in order"
same "$OUT/cap.expected" "$OUT/cap2" "reading subscriber 2 got all $events events, in order"

[ "$("$RVSH" -q -c "$URI" domstate test)" = running ] || fail "the daemon does not answer after the cap"
remvirtd_alive || fail "remvirtd died"
stop_remvirtd
mv "$REMVIRTD_LOG" "$RV_TMP/remvirtd-c.log"

# ================================================================ d, e
start_remvirtd "keepalive_interval = 1" "keepalive_count = 2"
URI=$REMVIRTD_URI

echo "== d. keepalive closes a SIGSTOPped client, not an idle one"
# Both ask for keepalive (CONNECT_SUPPORTS_FEATURE 10) as they connect.
bg "$OUT/ka-stopped" "$RVSH" -c "$URI" event --loop; ka_stopped=$BG_PID
bg "$OUT/ka-idle" "$RVSH" -c "$URI" event --loop; ka_idle=$BG_PID
warm_up "$OUT/ka-stopped" "$OUT/ka-idle"
kill -STOP "$ka_stopped"
stopped_at=$SECONDS
_ka_closed()
{
    grep -F -- "(pid $1 uid" "$REMVIRTD_LOG" | grep -q 'no sign of life'
}
wait_for $((20 * SLOW)) "keepalive to close the stopped client" _ka_closed "$ka_stopped" ||
    { _rv_show_file "$REMVIRTD_LOG"; fail "keepalive did not close the SIGSTOPped client"; }
closed_in=$((SECONDS - stopped_at))
grep -F -- "(pid $ka_stopped uid" "$REMVIRTD_LOG" | grep 'no sign of life'
# About interval x (count + 1) = 3 s of silence, never less.
quiet=$(grep -F -- "(pid $ka_stopped uid" "$REMVIRTD_LOG" |
        sed -n 's/.*no sign of life for \([0-9]*\) s (2 keepalive pings unanswered); closing it$/\1/p')
[ -n "$quiet" ] && [ "$quiet" -ge 3 ] ||
    fail "the close should follow 3 s of silence and 2 unanswered pings"
echo "ok   keepalive closed the SIGSTOPped client ${closed_in}s after SIGSTOP (silent for ${quiet}s, 2 pings unanswered)"

# The idle client has had the same time and more, answering PINGs, and
# still gets events.
while [ $((SECONDS - stopped_at)) -lt 7 ]; do sleep 0.5; done
! _ka_closed "$ka_idle" || fail "keepalive closed the idle client, which answers PINGs"
printf 'shutdown test\nstart test\n' | "$RVSH" -q -c "$URI" > /dev/null
wait_for $((10 * SLOW)) "the idle client to get events" \
    has_line "$OUT/ka-idle" "event 'lifecycle' for domain 'test': Started Booted" ||
    { show "$OUT/ka-idle"; fail "the idle client gets no events any more"; }
kill -INT "$ka_idle"
finish "$ka_idle" || { show "$OUT/ka-idle"; fail "the idle client exited $?"; }
echo "ok   the idle client kept its connection for 7 s and still gets events"

kill -CONT "$ka_stopped"
status=0
finish "$ka_stopped" || status=$?
show "$OUT/ka-stopped"
[ "$status" -eq 1 ] || fail "the stopped rvsh exited $status after SIGCONT, not 1"
grep -q '^error: the connection to the hypervisor was lost: ' "$OUT/ka-stopped.err" ||
    fail "the stopped rvsh did not report the lost connection"
echo "ok   after SIGCONT the stopped rvsh reports the lost connection and exits 1"

echo "== e. the daemon SIGSTOPped: a call fails, the close callback says keepalive"
mkfifo "$RV_TMP/go"
# Read-write, so that neither open waits for the other end.
exec {go_fd}<> "$RV_TMP/go"
bg "$OUT/ds" event_client "$URI" daemon-stop < "$RV_TMP/go"; ds=$BG_PID
wait_for $((10 * SLOW)) "event-client to be ready" has_line "$OUT/ds" ready ||
    { show "$OUT/ds"; fail "event-client daemon-stop did not start"; }
# Registered after stop_remvirtd, so it runs first: a stopped daemon
# cannot take its SIGTERM.
cleanup_fn _continue "$REMVIRTD_PID"
kill -STOP "$REMVIRTD_PID"
echo go >&"$go_fd"
exec {go_fd}>&-
# 1 s x 2 pings: the call has failed long before this.
finish "$ds" || { show "$OUT/ds"; fail "event-client daemon-stop exited $?"; }
kill -CONT "$REMVIRTD_PID"
show "$OUT/ds"
call=$(grep '^get_info: ' "$OUT/ds")
took=$(sed -n 's/^get_info: rc -1 after \([0-9]*\.[0-9]\) s; error 39: .*keepalive.*/\1/p' <<< "$call")
[ -n "$took" ] || fail "the blocked call did not fail with a keepalive error (RPC, 39): $call"
[ "${took%.*}" -lt $((10 * SLOW)) ] || fail "the blocked call took ${took}s to fail"
echo "ok   the call failed after ${took}s instead of hanging: ${call#*error }"
grep -qx 'close callback: reason 2 after [0-9.]* s' "$OUT/ds" ||
    fail "the close callback did not report RV_CONNECT_CLOSE_REASON_KEEPALIVE (2)"
grep -qx 'alive: 0' "$OUT/ds" || fail "rv_connect_is_alive does not say 0 on the dead connection"
grep -qx 'num_of_domains: rc -1 after 0\.[0-9] s; error [1-9][0-9]*' "$OUT/ds" ||
    fail "a call on the dead connection does not fail at once"
echo "ok   close callback reason KEEPALIVE; the dead connection fails later calls at once"

# Continued, the daemon notices the client gone and serves new ones.
[ "$("$RVSH" -q -c "$URI" domstate test)" = running ] || fail "the daemon does not answer after SIGCONT"
remvirtd_alive || fail "remvirtd died"
stop_remvirtd
