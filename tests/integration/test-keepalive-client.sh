#!/usr/bin/env bash
# Keepalive on remvirtd's side (keepalive_interval 1, keepalive_count 2):
# it closes a SIGSTOPped client after 3 s of silence and 2 unanswered
# pings, and not an idle client, which answers them and still gets
# events; the stopped rvsh reports the lost connection once continued.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$RVSH" ] || fail "$RVSH is not built"
OUT=$RV_TMP/out
mkdir -p "$OUT"

start_remvirtd "keepalive_interval = 1" "keepalive_count = 2"
URI=$REMVIRTD_URI

# Both ask for keepalive (CONNECT_SUPPORTS_FEATURE 10) as they connect.
bg "$OUT/ka-stopped" "$RVSH" -c "$URI" event --loop; ka_stopped=$BG_PID
bg "$OUT/ka-idle" "$RVSH" -c "$URI" event --loop; ka_idle=$BG_PID
events_warm_up "$OUT/ka-stopped" "$OUT/ka-idle"
kill -STOP "$ka_stopped"
stopped_at=$SECONDS
_ka_closed()
{
    grep -F -- "(pid $1 uid" "$REMVIRTD_LOG" | grep -q 'no sign of life'
}
wait_for $((20 * RV_SLOW)) "keepalive to close the stopped client" _ka_closed "$ka_stopped" ||
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
wait_for $((10 * RV_SLOW)) "the idle client to get events" \
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

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
