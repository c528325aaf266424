#!/usr/bin/env bash
# DOMAIN_OPEN_CONSOLE on the QEMU driver: `virsh console` and `rvsh
# console` on a booted test guest, driven on a pty (console-driver.py):
# the guest's output shows (it is reset while attached and says "ready"
# again), what is typed reaches it (its tty echoes it), ^] leaves.  One
# session per console: a second open is refused unless it forces its
# way in, which ends the first (its data ends).  A console on a guest
# that is not running is refused.  The test driver answers as libvirtd's
# test driver does (not supported).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
[ -x "$RVSH" ] || fail "$RVSH is not built"
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
driver=$top_srcdir/tests/interop/console-driver.py

qemu_guest_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" console g > "$OUT/off.out" 2>&1 && fail "virsh console of a guest that is not running worked"
"$RVSH" -c "$QEMU_URI" console g > "$OUT/off.rvsh" 2>&1 && fail "rvsh console of a guest that is not running worked"
grep -q "The domain is not running" "$OUT/off.rvsh" || { show "$OUT/off.rvsh"; fail "rvsh console: unexpected error"; }

"${V[@]}" start g > /dev/null
echo "== virsh console"
"$SYSTEM_PYTHON3" "$driver" "$OUT/virsh.out" "virsh -q -c '$QEMU_URI' reset g" -- \
    virsh -c "$QEMU_URI" console g || { show "$OUT/virsh.out"; fail "virsh console"; }
echo "== rvsh console"
"$SYSTEM_PYTHON3" "$driver" "$OUT/rvsh.out" "virsh -q -c '$QEMU_URI' reset g" -- \
    "$RVSH" -c "$QEMU_URI" console g || { show "$OUT/rvsh.out"; fail "rvsh console"; }

# One session at a time; --force takes over and ends the other's data.
"$SYSTEM_PYTHON3" - "$QEMU_URI" <<'PY'
import signal
import sys

import libvirt

conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("g")
first = conn.newStream(0)
dom.openConsole(None, first, 0)
try:
    dom.openConsole(None, conn.newStream(0), 0)
    sys.exit("FAIL: a second console session opened")
except libvirt.libvirtError as e:
    if "Active console session exists" not in str(e):
        sys.exit(f"FAIL: second session: {e}")
print("ok   a second console session is refused")
second = conn.newStream(0)
dom.openConsole(None, second, libvirt.VIR_DOMAIN_CONSOLE_FORCE)
print("ok   --force opens a second session")
# The first one's data ends (a hung test is ended by the alarm).
signal.alarm(30)
while first.recv(1024) != b"":
    pass
signal.alarm(0)
print("ok   the forced-out session ended")
first.finish()
second.abort()
PY

# The test driver: as libvirtd's test driver.
# (libvirt's own test driver, opened in-process, says the same.)
for uri in "$REMVIRTD_URI" test:///default; do
    "$SYSTEM_PYTHON3" - "$uri" > "$OUT/test.out" 2>&1 <<'PY' || { show "$OUT/test.out"; fail "test driver console ($uri)"; }
import sys
import libvirt

conn = libvirt.open(sys.argv[1])
try:
    conn.lookupByName("test").openConsole(None, conn.newStream(0), 0)
    sys.exit("FAIL: the test driver opened a console")
except libvirt.libvirtError as e:
    if (e.get_error_code(), e.get_error_domain()) != (libvirt.VIR_ERR_NO_SUPPORT, libvirt.VIR_FROM_DOMAIN):
        sys.exit(f"FAIL: {e.get_error_code()} {e.get_error_domain()} {e}")
PY
done
echo "ok   the test driver has no console (as libvirtd's)"
"${V[@]}" destroy g > /dev/null
