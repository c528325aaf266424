#!/usr/bin/env bash
# Domain events against remvirtd, with event-client (a libremvirt
# subscriber) and rvsh:
#   a. one sequence of changes made by rvsh reaches six subscribers (all
#      domains, and one domain only) with exactly the expected events in
#      exactly that order;
#   b. deregistering stops a callback while others keep getting events
#      (event-client dereg checks itself);
#   f. rvsh event --timeout without events: virsh's words and status 1;
#      rvsh event without --loop ends after the first event;
#      the close callback says EOF when the daemon shuts down.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$EVENT_CLIENT" ] || fail "$EVENT_CLIENT is not built"
[ -x "$RVSH" ] || fail "$RVSH is not built"
OUT=$RV_TMP/out
mkdir -p "$OUT"

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
domain_xml evA 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f01 > "$xmldir/evA.xml"
domain_xml evT 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f02 > "$xmldir/evT.xml"

start_remvirtd
URI=$REMVIRTD_URI

echo "== a. ordering and fan-out"
bg "$OUT/ec1" event_client "$URI" watch; ec1=$BG_PID
bg "$OUT/ec2" event_client "$URI" watch; ec2=$BG_PID
bg "$OUT/ec-test" event_client "$URI" watch test; ec_test=$BG_PID
bg "$OUT/rv1" "$RVSH" -c "$URI" event --loop; rv1=$BG_PID
bg "$OUT/rv2" "$RVSH" -c "$URI" event --loop; rv2=$BG_PID
bg "$OUT/rv-test" "$RVSH" -c "$URI" event --loop --domain test; rv_test=$BG_PID
for f in ec1 ec2 ec-test; do
    wait_for $((10 * RV_SLOW)) "$f to register" has_line "$OUT/$f" ready || { show "$OUT/$f"; fail "$f"; }
done
events_warm_up "$OUT"/ec1 "$OUT"/ec2 "$OUT"/ec-test "$OUT"/rv1 "$OUT"/rv2 "$OUT"/rv-test

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
# (Domain test's first event is no suspend or resume: events_strip_warmup must
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
    wait_for $((15 * RV_SLOW)) "$f to get the last event" has_line "$OUT/$f" "$last_numeric" ||
        { show "$OUT/$f"; fail "$f did not get every event"; }
done
for f in rv1 rv2 rv-test; do
    wait_for $((15 * RV_SLOW)) "$f to get the last event" has_line "$OUT/$f" "$last_words" ||
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
    events_strip_warmup "$file" > "$file.seq"
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
timeout $((120 * RV_SLOW)) ${RV_VALGRIND:-} "$EVENT_CLIENT" "$URI" dereg ||
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
bg "$OUT/once" "$RVSH" -q -c "$URI" event --timeout $((60 * RV_SLOW)); once=$BG_PID
_once_done()
{
    local i
    for ((i = 0; i < 50; i++)); do
        printf 'suspend test\nresume test\n'
    done | "$RVSH" -q -c "$URI" > /dev/null
    ! kill -0 "$once" 2>/dev/null
}
wait_for $((30 * RV_SLOW)) "rvsh event to end after one event" _once_done || { show "$OUT/once"; fail "rvsh event did not end"; }
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
wait_for $((10 * RV_SLOW)) "event-client to register" has_line "$OUT/eof" ready || { show "$OUT/eof"; fail "no ready"; }
stop_remvirtd
finish "$eof" || fail "event-client watch exited $? when the daemon stopped"
printf 'ready\nclosed 1\nevents 0\n' > "$OUT/eof.expected"
same "$OUT/eof.expected" "$OUT/eof" "the daemon's shutdown reaches the close callback as EOF"
