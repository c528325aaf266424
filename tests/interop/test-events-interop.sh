#!/usr/bin/env bash
# Domain events with libvirt's own clients and server:
#   a. `virsh event --all --loop` against remvirtd prints, for changes that
#      other virsh processes make, exactly what it prints against libvirtd
#      for the same changes (and what we expect);
#   b. python3-libvirt with virEventRegisterDefaultImpl against remvirtd:
#      domainEventRegisterAny callbacks with the right (event, detail),
#      one-domain filters, domainEventDeregisterAny, registerCloseCallback
#      (which reports EOF when the daemon stops); checked against libvirtd
#      first, so that its expectations are libvirt's;
#   c. `rvsh event --loop` against libvirtd prints the same lines for the
#      same changes;
#   d. keepalive: remvirtd closes a SIGSTOPped `virsh event --loop`.
# libvirtd's test driver keeps its state while any client is connected;
# the subscriber is, so every change may come from a virsh of its own.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
requires_root
requires libvirtd --version
[ -x "$RVSH" ] || fail "$RVSH is not built"

OUT=$RV_TMP/out
mkdir -p "$OUT"
domain_xml evA 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f11 > "$OUT/evA.xml"
domain_xml evT 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f12 > "$OUT/evT.xml"

# Subscribers do not say when they are registered: suspend and resume
# domain 'test' until each file shows the resume; strip_warmup cuts those
# events off again.  (Until libvirtd's subscriber is connected, its test
# driver forgets the suspend as soon as virsh leaves: the resume fails.)
_warm_once()
{
    virsh -q -c "$1" suspend test > /dev/null 2>&1
    virsh -q -c "$1" resume test > /dev/null 2>&1
    grep -qx "event 'lifecycle' for domain 'test': Resumed Unpaused" "$2"
}
warm_up()
{
    wait_for 30 "the subscriber to see an event" _warm_once "$@"
}
strip_warmup()
{
    awk 'skip && /^event .lifecycle. for domain .test.: (Suspended Paused|Resumed Unpaused)$/ { next }
         { skip = 0; print }' skip=1 "$1"
}

# The changes, each by a virsh of its own, and what virsh prints for them
# ("-": no event; libvirtd's test driver sends none for a reboot, not even
# a reboot event).  Domain test's first event is no suspend or resume (see
# strip_warmup).
changes=(
    "define evA.xml"            "evA: Defined Added"
    "start evA"                 "evA: Started Booted"
    "shutdown test"             "test: Stopped Shutdown"
    "suspend evA"               "evA: Suspended Paused"
    "start test"                "test: Started Booted"
    "resume evA"                "evA: Resumed Unpaused"
    "suspend test"              "test: Suspended Paused"
    "destroy evA"               "evA: Stopped Destroyed"
    "resume test"               "test: Resumed Unpaused"
    "reboot test"               "-"
    "define evA.xml"            "evA: Defined Updated"
    "undefine evA"              "evA: Undefined Removed"
    "create evT.xml"            "evT: Started Booted"
    "suspend evT"               "evT: Suspended Paused"
    "destroy evT"               "evT: Stopped Destroyed"
    "destroy test"              "test: Stopped Destroyed"
)
make_changes()
{
    local i
    for ((i = 0; i < ${#changes[@]}; i += 2)); do
        # shellcheck disable=SC2086
        (cd "$OUT" && virsh -q -c "$1" ${changes[i]}) > /dev/null ||
            fail "virsh ${changes[i]} failed against $1"
    done
}
expected_events()
{
    local i
    for ((i = 1; i < ${#changes[@]}; i += 2)); do
        [ "${changes[i]}" != - ] || continue
        echo "event 'lifecycle' for domain '${changes[i]%%:*}':${changes[i]#*:}"
    done
}
expected_events > "$OUT/expected"
last_event=$(tail -n 1 "$OUT/expected")

# watch NAME URI CMD...: run the subscriber CMD, make the changes against
# URI, stop it with SIGINT and leave its events in $OUT/NAME.seq.
watch()
{
    local name=$1 uri=$2 pid
    shift 2
    bg "$OUT/$name" "$@"
    pid=$BG_PID
    warm_up "$uri" "$OUT/$name" || { show "$OUT/$name"; fail "$name gets no events"; }
    make_changes "$uri"
    wait_for 20 "$name to get the last event" has_line "$OUT/$name" "$last_event" ||
        { show "$OUT/$name"; fail "$name did not get every event"; }
    kill -INT "$pid"
    finish "$pid" || { show "$OUT/$name"; fail "$name exited $?"; }
    strip_warmup "$OUT/$name" > "$OUT/$name.seq"
}

start_remvirtd
start_libvirtd

echo "== a. virsh event --all --loop: libvirtd, then remvirtd"
watch virsh-libvirtd "$LIBVIRTD_URI" virsh -c "$LIBVIRTD_URI" event --all --loop
watch virsh-remvirtd "$REMVIRTD_URI" virsh -c "$REMVIRTD_URI" event --all --loop
# The tail: virsh's own lines after SIGINT, the count with the warm-up's.
for name in virsh-libvirtd virsh-remvirtd; do
    {
        cat "$OUT/expected"
        echo "event loop interrupted"
        echo "events received: $(grep -c "^event 'lifecycle'" "$OUT/$name")"
        echo
    } > "$OUT/$name.expected"
done
same "$OUT/virsh-libvirtd.expected" "$OUT/virsh-libvirtd.seq" \
    "virsh against libvirtd prints the events we expect"
same "$OUT/virsh-remvirtd.expected" "$OUT/virsh-remvirtd.seq" \
    "virsh against remvirtd prints the events we expect"
grep -v '^events received' "$OUT/virsh-libvirtd.seq" > "$OUT/a-libvirtd"
grep -v '^events received' "$OUT/virsh-remvirtd.seq" > "$OUT/a-remvirtd"
same "$OUT/a-libvirtd" "$OUT/a-remvirtd" "virsh event: remvirtd's text is libvirtd's"

echo "== c. rvsh event --loop against libvirtd"
watch rvsh-libvirtd "$LIBVIRTD_URI" "$RVSH" -c "$LIBVIRTD_URI" event --loop
{
    cat "$OUT/expected"
    echo "events received: $(grep -c "^event 'lifecycle'" "$OUT/rvsh-libvirtd")"
    echo
} > "$OUT/rvsh-libvirtd.expected"
same "$OUT/rvsh-libvirtd.expected" "$OUT/rvsh-libvirtd.seq" "rvsh against libvirtd prints libvirtd's events"
[ ! -s "$OUT/rvsh-libvirtd.err" ] || { show "$OUT/rvsh-libvirtd"; fail "rvsh wrote to stderr"; }

echo "== b. python3-libvirt: libvirtd first (the expectations), then remvirtd"
domain_xml evP 7c0e5e51-3a5b-4d2e-8f1a-6b9c0d1e2f13 > "$OUT/evP.xml"
cat > "$OUT/events.py" <<'PY'
import os
import signal
import subprocess
import sys
import threading

import libvirt

uri, xml_path, daemon_pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
WAIT = 30


def fail(what):
    raise SystemExit(f"FAIL: {what}")


def ok(what):
    print(f"ok   {what}", flush=True)


# Failures the script expects are its own to report, not libvirt's.
libvirt.registerErrorHandler(lambda opaque, err: None, None)
libvirt.virEventRegisterDefaultImpl()


running = True


def run_loop():
    while running:
        libvirt.virEventRunDefaultImpl()


loop_thread = threading.Thread(target=run_loop)
loop_thread.start()

cond = threading.Condition()
got = {"all": [], "test": [], "again": []}
closed = []


def on_event(conn, dom, event, detail, key):
    with cond:
        got[key].append((dom.name(), event, detail))
        cond.notify_all()


def on_close(conn, reason, opaque):
    with cond:
        closed.append(reason)
        cond.notify_all()


def wait_for(pred, what):
    with cond:
        if not cond.wait_for(pred, WAIT):
            fail(f"{what} within {WAIT} s: got {got}, closed {closed}")


def virsh(*args):
    """A change by another client."""
    subprocess.run(["virsh", "-q", "-c", uri, *args], check=True, stdout=subprocess.DEVNULL)


conn = libvirt.open(uri)
conn.registerCloseCallback(on_close, None)
ok("registerCloseCallback accepted")
test = conn.lookupByName("test")
if not test.isActive():
    virsh("start", "test")

L = libvirt
id_all = conn.domainEventRegisterAny(None, L.VIR_DOMAIN_EVENT_ID_LIFECYCLE, on_event, "all")
id_test = conn.domainEventRegisterAny(test, L.VIR_DOMAIN_EVENT_ID_LIFECYCLE, on_event, "test")
ok(f"domainEventRegisterAny: ids {id_all} (every domain) and {id_test} (domain test)")

virsh("define", xml_path)
virsh("start", "evP")
virsh("suspend", "test")
virsh("resume", "test")
virsh("destroy", "evP")
virsh("undefine", "evP")
want_all = [
    ("evP", L.VIR_DOMAIN_EVENT_DEFINED, L.VIR_DOMAIN_EVENT_DEFINED_ADDED),
    ("evP", L.VIR_DOMAIN_EVENT_STARTED, L.VIR_DOMAIN_EVENT_STARTED_BOOTED),
    ("test", L.VIR_DOMAIN_EVENT_SUSPENDED, L.VIR_DOMAIN_EVENT_SUSPENDED_PAUSED),
    ("test", L.VIR_DOMAIN_EVENT_RESUMED, L.VIR_DOMAIN_EVENT_RESUMED_UNPAUSED),
    ("evP", L.VIR_DOMAIN_EVENT_STOPPED, L.VIR_DOMAIN_EVENT_STOPPED_DESTROYED),
    ("evP", L.VIR_DOMAIN_EVENT_UNDEFINED, L.VIR_DOMAIN_EVENT_UNDEFINED_REMOVED),
]
want_test = want_all[2:4]
wait_for(lambda: len(got["all"]) >= len(want_all) and len(got["test"]) >= len(want_test),
         "every event")
if got["all"] != want_all or got["test"] != want_test:
    fail(f"events {got}, expected all {want_all}, test {want_test}")
ok(f"callbacks got {got['all']} and, for domain test only, {got['test']}")

conn.domainEventDeregisterAny(id_all)
virsh("suspend", "test")
virsh("resume", "test")
# id_test's events come after id_all's on this connection: once it has
# both, id_all would have had its own.
wait_for(lambda: len(got["test"]) >= 4, "domain test's callback to get two more events")
if len(got["all"]) != len(want_all) or got["test"][2:] != want_test:
    fail(f"after deregistering: {got}")
ok("domainEventDeregisterAny: no more events for it; the other callback got its two")
try:
    conn.domainEventDeregisterAny(id_all)
    fail("deregistering the same id twice succeeded")
except libvirt.libvirtError as e:
    ok(f"deregistering it again fails: {e}")

conn.domainEventDeregisterAny(id_test)
id_again = conn.domainEventRegisterAny(None, L.VIR_DOMAIN_EVENT_ID_LIFECYCLE, on_event, "again")
virsh("suspend", "test")
virsh("resume", "test")
wait_for(lambda: len(got["again"]) >= 2, "a new registration to get events")
if got["again"] != want_test or len(got["test"]) != 4 or len(got["all"]) != len(want_all):
    fail(f"after registering again: {got}")
ok(f"registered again (id {id_again}): it gets the events, the deregistered ones do not")

# The daemon goes away: the close callback says EOF.
os.kill(daemon_pid, signal.SIGTERM)
wait_for(lambda: closed, "the close callback")
if closed != [L.VIR_CONNECT_CLOSE_REASON_EOF]:
    fail(f"close callback reasons {closed}, expected [EOF ({L.VIR_CONNECT_CLOSE_REASON_EOF})]")
ok("the daemon stopped: the close callback said EOF")

# A loop thread still inside libvirt when the interpreter exits can crash
# it: end it first (a new timeout wakes it up).
conn.close()
running = False
wake = libvirt.virEventAddTimeout(0, lambda timer, opaque: None, None)
loop_thread.join()
libvirt.virEventRemoveTimeout(wake)
PY
libvirtd_pid=$LIBVIRTD_PID
"$SYSTEM_PYTHON3" "$OUT/events.py" "$LIBVIRTD_URI" "$OUT/evP.xml" "$libvirtd_pid" \
    > "$OUT/py-libvirtd" 2>&1 ||
    { show "$OUT/py-libvirtd"; fail "the python checks fail against libvirtd itself"; }
cat "$OUT/py-libvirtd"
stop_libvirtd
"$SYSTEM_PYTHON3" "$OUT/events.py" "$REMVIRTD_URI" "$OUT/evP.xml" "$REMVIRTD_PID" ||
    fail "python3-libvirt against remvirtd"
# Its SIGTERM is under way: a second one while it exits would kill it.
wait_for "$RV_TIMEOUT" "remvirtd to exit after the python script's SIGTERM" \
    _rv_gone "$REMVIRTD_PID" || fail "remvirtd did not stop"
stop_remvirtd
mv "$REMVIRTD_LOG" "$RV_TMP/remvirtd-abc.log"

echo "== d. keepalive: remvirtd closes a SIGSTOPped virsh"
start_remvirtd "keepalive_interval = 1" "keepalive_count = 2"
bg "$OUT/virsh-ka" virsh -c "$REMVIRTD_URI" event --all --loop; ka=$BG_PID
warm_up "$REMVIRTD_URI" "$OUT/virsh-ka" || { show "$OUT/virsh-ka"; fail "virsh gets no events"; }
kill -STOP "$ka"
_ka_closed()
{
    grep -F -- "(pid $ka uid" "$REMVIRTD_LOG" | grep -q 'no sign of life'
}
wait_for 20 "keepalive to close the stopped virsh" _ka_closed ||
    { _rv_show_file "$REMVIRTD_LOG"; fail "keepalive did not close the SIGSTOPped virsh"; }
grep -F -- "(pid $ka uid" "$REMVIRTD_LOG" | grep 'no sign of life'
echo "ok   remvirtd closed the SIGSTOPped virsh (keepalive 1 s x 2)"
kill -CONT "$ka"
status=0
finish "$ka" || status=$?
[ "$status" -ne 0 ] || { show "$OUT/virsh-ka"; fail "virsh event --loop exited 0 after losing its connection"; }
grep -q "^error: Disconnected from .* due to end of file$" "$OUT/virsh-ka.err" ||
    { show "$OUT/virsh-ka"; fail "virsh did not see the connection end"; }
echo "ok   continued, virsh sees the end of its connection and exits $status"
[ "$(virsh -q -c "$REMVIRTD_URI" domstate test)" = running ] || fail "remvirtd does not answer any more"
stop_remvirtd
