#!/usr/bin/env bash
# VIR_DOMAIN_START_AUTODESTROY on DOMAIN_CREATE_XML and
# DOMAIN_CREATE_WITH_FLAGS (QEMU driver, real TCG guests, python3-libvirt
# clients): the guest is destroyed when the connection that started it
# closes: closed by the client, the client exiting without a close, the
# client killed, or the client silent past keepalive (remvirtd set to
# 1 s x 2).  A transient guest is then gone, a persistent one shut off
# (destroyed).  A guest started without the flag, or by another
# connection, survives.  libvirtd's QEMU driver does the same, side by
# side, for the close and kill cases.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
start_remvirtd_qemu "keepalive_interval = 1" "keepalive_count = 2"
OUT=$RV_TMP/out
mkdir -p "$OUT"
CLIENT=$top_srcdir/tests/interop/autodestroy-client.py

# client URI NAME HOW ACTION: start one in the background, wait for its
# "started"; CLIENT_PID is the client.
client()
{
    local uri=$1 name=$2 how=$3 action=$4
    qemu_domain_xml "$name" > "$OUT/$name.xml"
    bg "$OUT/client-$name" "$SYSTEM_PYTHON3" "$CLIENT" "$uri" "$name" "$how" "$action" < "$OUT/$name.xml"
    CLIENT_PID=$BG_PID
    wait_for 60 "$name's client to start it" grep -q '^started' "$OUT/client-$name" ||
        { show "$OUT/client-$name.err"; fail "$how/$action: $name did not start"; }
}

gone() { ! virsh -c "$1" domstate "$2" > /dev/null 2>&1; }
destroyed() { [ "$(virsh -c "$1" domstate --reason "$2" 2>/dev/null | sed '/^$/d')" = "shut off (destroyed)" ]; }
running() { [ "$(virsh -c "$1" domstate "$2" 2>/dev/null | sed '/^$/d')" = "running" ]; }

check_side()
{
    local uri=$1 side=$2
    # A transient guest, its connection closed: gone.
    client "$uri" t-close xml close
    wait_for 30 "$side: t-close to go with its connection" gone "$uri" t-close ||
        fail "$side: a transient autodestroy guest outlived its closed connection"
    echo "ok   $side: createXML(AUTODESTROY), close: the guest is gone"
    # Killed with SIGKILL: the socket closes under the daemon.
    client "$uri" t-kill xml wait
    kill -KILL "$CLIENT_PID"
    wait_for 30 "$side: t-kill to go with its client" gone "$uri" t-kill ||
        fail "$side: a transient autodestroy guest outlived its killed client"
    echo "ok   $side: createXML(AUTODESTROY), client killed: the guest is gone"
    # A persistent one by createWithFlags, the client exiting: shut off.
    qemu_domain_xml p-exit > "$OUT/p-exit.xml"
    virsh -c "$uri" define "$OUT/p-exit.xml" > /dev/null
    client "$uri" p-exit flags exit
    wait_for 30 "$side: p-exit to be destroyed" destroyed "$uri" p-exit ||
        fail "$side: p-exit is '$(virsh -c "$uri" domstate --reason p-exit 2>&1)'"
    echo "ok   $side: createWithFlags(AUTODESTROY), exit: shut off (destroyed)"
    # Without the flag it outlives its client; started again by virsh
    # (another connection), it outlives that one too.
    client "$uri" p-exit plain exit
    wait "$CLIENT_PID" || true
    sleep 1
    running "$uri" p-exit || fail "$side: a guest started without AUTODESTROY died with its client"
    virsh -c "$uri" destroy p-exit > /dev/null
    virsh -c "$uri" undefine p-exit > /dev/null
    echo "ok   $side: createWithFlags(0): the guest outlives its client"
}

check_side "$QEMU_URI" remvirtd

# Silent past keepalive: the client stopped (not closed, not dead) is cut
# off after 1 s x 2 unanswered pings, and its guest goes with it.
client "$QEMU_URI" t-silent xml wait
kill -STOP "$CLIENT_PID"
wait_for 30 "t-silent to go when keepalive cuts its client off" gone "$QEMU_URI" t-silent ||
    fail "a transient autodestroy guest outlived its client's keepalive timeout"
kill -CONT "$CLIENT_PID"
kill "$CLIENT_PID" 2>/dev/null || true
echo "ok   remvirtd: client stopped, keepalive timed out: the guest is gone"
grep -q "keepalive pings unanswered); closing it" "$REMVIRTD_LOG" ||
    fail "remvirtd's log does not say keepalive closed t-silent's client"

# TEST driver: libvirt's refuses the flag; so does remvirtd's.
out=$("$SYSTEM_PYTHON3" - "$REMVIRTD_URI" <<'PY' 2>&1
import sys, libvirt
c = libvirt.open(sys.argv[1])
try:
    c.createXML("<domain type='test'><name>ad</name><memory>1024</memory><os><type>hvm</type></os></domain>",
                libvirt.VIR_DOMAIN_START_AUTODESTROY)
    print("accepted")
except libvirt.libvirtError as e:
    print(e.get_error_code(), e)
PY
)
case $out in
    *"8 unsupported flags (0x2) in function testDomainCreateXML"*) echo "ok   test driver refuses it: code 8, unsupported flags (0x2)" ;;
    *) fail "test driver with AUTODESTROY: $out" ;;
esac

! why=$(libvirtd_qemu_why_not) || { echo "libvirtd side skipped: $why"; exit 0; }
start_libvirtd_qemu
check_side "$LIBVIRTD_QEMU_URI" libvirtd
