#!/usr/bin/env bash
# Domain events against remvirtd: a subscriber that stops reading (a raw
# Python client) is closed at max_client_output_bytes while two others
# (event-client) get every event, in order; the log names the capped
# client and its queue stayed within the cap.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$EVENT_CLIENT" ] || fail "$EVENT_CLIENT is not built"
[ -x "$RVSH" ] || fail "$RVSH is not built"
requires "$PYTHON3" --version
OUT=$RV_TMP/out
mkdir -p "$OUT"

cap=65536
start_remvirtd "max_client_output_bytes = $cap"
URI=$REMVIRTD_URI

bg "$OUT/cap1" event_client "$URI" watch; cap1=$BG_PID
bg "$OUT/cap2" event_client "$URI" watch; cap2=$BG_PID
# The stalled subscriber: registers (REGISTER_ANY), then reads nothing until told
# to (the file go exists), then reads what is left up to the end.
rm -f "$OUT/go"
bg "$OUT/stalled" rawpy "$REMVIRTD_SOCK" "$OUT/go" <<'PY'
import os, socket, sys, time
import rawclient as rc
import rv_protocol as rv

path, go = sys.argv[1:]
c = rc.Client(path, timeout=30)
# Small, so that the kernel holds little for it (the daemon's send
# buffer is what fills on an AF_UNIX socket, though).
c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
c.open_connection()
# lifecycle events of every domain (no domain given)
body = c.call_ok(rc.PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY,
                 rc.xdr_int(rv.RV_DOMAIN_EVENT_ID_LIFECYCLE) + rc.xdr_int(0))
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
        if not (hdr.type == rc.MESSAGE and hdr.proc == rc.PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE
                and hdr.status == rc.STATUS_OK):
            sys.exit(f"FAIL: packet {n} is {hdr}, not a lifecycle event")
        cb = u.int()
        dom = u.domain()
        event, detail = u.int(), u.int()
        u.done()
        want = ((rv.RV_DOMAIN_EVENT_SUSPENDED, rv.RV_DOMAIN_EVENT_SUSPENDED_PAUSED) if n % 2 == 0
                else (rv.RV_DOMAIN_EVENT_RESUMED, rv.RV_DOMAIN_EVENT_RESUMED_UNPAUSED))
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
    wait_for $((10 * RV_SLOW)) "$f to register" has_line "$OUT/$f" ready || { show "$OUT/$f"; fail "$f"; }
done
wait_for $((10 * RV_SLOW)) "the stalled subscriber to register" grep -q '^registered' "$OUT/stalled" ||
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
    wait_for $((30 * RV_SLOW)) "the reading subscribers to get $events events" _caught_up ||
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
