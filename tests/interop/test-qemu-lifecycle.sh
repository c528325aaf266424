#!/usr/bin/env bash
# The QEMU driver with real QEMU (TCG, a guest with no disk idling in its
# firmware), through virsh, rvsh and python3-libvirt:
#   define, start, dominfo, suspend, resume, destroy, undefine, with the
#   states and reasons virsh prints; create (transient) that vanishes when
#   destroyed; a QEMU killed from outside is shut off (crashed);
#   `virsh event --loop --all` sees every change, with libvirtd's event
#   and detail names, in order.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
[ -x "$RVSH" ] || fail "$RVSH is not built"
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
R=("$RVSH" -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

expect()
{
    local want=$1 got
    shift
    got=$("$@" 2>&1) || fail "'$*' failed: $got"
    got=$(echo "$got" | sed '/^$/d')
    [ "$got" = "$want" ] || fail "'$*' printed '$got', expected '$want'"
    echo "ok   $* -> $want"
}

# The subscriber first; a definition it sees shows it is registered.
bg "$OUT/events" virsh -c "$QEMU_URI" event --loop --all
qemu_domain_xml warm > "$OUT/warm.xml"
_warm()
{
    "${V[@]}" define "$OUT/warm.xml" > /dev/null 2>&1
    "${V[@]}" undefine warm > /dev/null 2>&1
    grep -q "domain 'warm': Defined" "$OUT/events"
}
wait_for 30 "virsh event to see a definition" _warm

qemu_domain_xml g1 > "$OUT/g1.xml"
expect "Domain 'g1' defined from $OUT/g1.xml" "${V[@]}" define "$OUT/g1.xml"
expect "shut off" "${V[@]}" domstate g1
expect "Domain 'g1' started" "${V[@]}" start g1
expect "running (booted)" "${V[@]}" domstate --reason g1
"${V[@]}" dominfo g1 > "$OUT/dominfo"
for line in "Name:           g1" "State:          running" "CPU(s):         1" \
            "Max memory:     65536 KiB" "Persistent:     yes"; do
    has_line "$OUT/dominfo" "$line" || { show "$OUT/dominfo"; fail "dominfo lacks '$line'"; }
done
id=$("${V[@]}" domid g1)
[ "$id" -ge 1 ] || fail "running g1 has id '$id'"
"${V[@]}" list > "$OUT/list"
grep -Eq "^ *$id +g1 +running$" "$OUT/list" || { show "$OUT/list"; fail "g1 not listed running"; }
pid=$(qemu_pids "$QEMU_DIR/run/")
[ -n "$pid" ] || fail "no QEMU process for g1"
"${V[@]}" dumpxml g1 > "$OUT/live.xml"
grep -q "<domain type='qemu' id='$id'>" "$OUT/live.xml" || fail "live XML lacks id='$id'"
expect "Domain 'g1' suspended" "${V[@]}" suspend g1
expect "paused (user)" "${V[@]}" domstate --reason g1
expect "Domain 'g1' resumed" "${V[@]}" resume g1
expect "running (unpaused)" "${V[@]}" domstate --reason g1
# A second resume is refused, as libvirtd 9.0 refuses it (code 55,
# VIR_ERR_OPERATION_INVALID), and changes nothing.
out=$("${V[@]}" resume g1 2>&1) && fail "resume of a running domain succeeded"
grep -q "Requested operation is not valid: domain is already running" <<< "$out" ||
    fail "resume of a running domain: $out"
expect "running (unpaused)" "${V[@]}" domstate --reason g1
expect "Domain 'g1' destroyed" "${V[@]}" destroy g1
expect "shut off (destroyed)" "${V[@]}" domstate --reason g1
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "QEMU still runs after destroy"
out=$("${V[@]}" suspend g1 2>&1) && fail "suspend of a shut off domain succeeded"
grep -q "domain is not running" <<< "$out" || fail "suspend of a shut off domain: $out"

# rvsh, the same way.
expect "Domain 'g1' started" "${R[@]}" start g1
expect "running (booted)" "${R[@]}" domstate --reason g1
expect "Domain 'g1' suspended" "${R[@]}" suspend g1
expect "paused (user)" "${R[@]}" domstate --reason g1
expect "Domain 'g1' resumed" "${R[@]}" resume g1
expect "Domain 'g1' destroyed" "${R[@]}" destroy g1

# python3-libvirt: a persistent start and a transient create.
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    "$SYSTEM_PYTHON3" - "$QEMU_URI" "$OUT/g1.xml" <<'PY'
import sys, libvirt
conn = libvirt.open(sys.argv[1])
assert conn.getType() == "QEMU", conn.getType()
dom = conn.lookupByName("g1")
dom.create()
state, maxmem, mem, vcpus, cpu = dom.info()
assert state == libvirt.VIR_DOMAIN_RUNNING and maxmem == 65536 and vcpus == 1, dom.info()
dom.suspend()
assert dom.state() == [libvirt.VIR_DOMAIN_PAUSED, libvirt.VIR_DOMAIN_PAUSED_USER], dom.state()
dom.resume()
dom.destroy()
assert dom.state() == [libvirt.VIR_DOMAIN_SHUTOFF, libvirt.VIR_DOMAIN_SHUTOFF_DESTROYED]
xml = open(sys.argv[2]).read().replace("<name>g1</name>", "<name>t1</name>")
t = conn.createXML(xml, 0)
assert t.isActive() == 1 and t.isPersistent() == 0 and t.ID() > 0
t.destroy()
try:
    conn.lookupByName("t1")
    raise SystemExit("FAIL: transient t1 is still there after destroy")
except libvirt.libvirtError as e:
    assert e.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN, e
print("ok   python3-libvirt: create, info, suspend, resume, destroy, createXML")
PY
else
    echo "python3-libvirt not installed: its part skipped"
    # The same events as if it had run, so that the expected list holds.
    "${V[@]}" start g1 > /dev/null
    "${V[@]}" suspend g1 > /dev/null
    "${V[@]}" resume g1 > /dev/null
    "${V[@]}" destroy g1 > /dev/null
    sed 's/<name>g1</<name>t1</' "$OUT/g1.xml" > "$OUT/t1.xml"
    "${V[@]}" create "$OUT/t1.xml" > /dev/null
    "${V[@]}" destroy t1 > /dev/null
fi

# A QEMU killed behind the driver's back: shut off, crashed.
"${V[@]}" start g1 > /dev/null
kill -KILL "$(qemu_pids "$QEMU_DIR/run/")"
_crashed() { [ "$("${V[@]}" domstate --reason g1)" = "shut off (crashed)" ]; }
wait_for 20 "g1 to be seen crashed" _crashed
echo "ok   a QEMU killed from outside: shut off (crashed)"
[ ! -e "$QEMU_DIR/run/g1.status" ] && [ ! -e "$QEMU_DIR/run/g1.qmp" ] ||
    fail "runtime files left behind after the crash"

expect "Domain 'g1' has been undefined" "${V[@]}" undefine g1
[ ! -e "$QEMU_DIR/etc/g1.xml" ] || fail "undefine left $QEMU_DIR/etc/g1.xml"

cat > "$OUT/expected" <<'EOF'
event 'lifecycle' for domain 'g1': Defined Added
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Started Booted
event 'lifecycle' for domain 'g1': Suspended Paused
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Shutdown Finished after host request
event 'lifecycle' for domain 'g1': Stopped Destroyed
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Started Booted
event 'lifecycle' for domain 'g1': Suspended Paused
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Shutdown Finished after host request
event 'lifecycle' for domain 'g1': Stopped Destroyed
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Started Booted
event 'lifecycle' for domain 'g1': Suspended Paused
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Shutdown Finished after host request
event 'lifecycle' for domain 'g1': Stopped Destroyed
event 'lifecycle' for domain 't1': Resumed Unpaused
event 'lifecycle' for domain 't1': Started Booted
event 'lifecycle' for domain 't1': Shutdown Finished after host request
event 'lifecycle' for domain 't1': Stopped Destroyed
event 'lifecycle' for domain 'g1': Resumed Unpaused
event 'lifecycle' for domain 'g1': Started Booted
event 'lifecycle' for domain 'g1': Stopped Failed
event 'lifecycle' for domain 'g1': Undefined Removed
EOF
_all_events() { [ "$(grep -c "domain 'g1': Undefined" "$OUT/events")" -ge 1 ]; }
wait_for 10 "the last event" _all_events || true
grep "^event 'lifecycle' for domain '[gt]1'" "$OUT/events" > "$OUT/got" || true
same "$OUT/expected" "$OUT/got" "virsh event --loop --all"
