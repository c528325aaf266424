#!/usr/bin/env bash
# Descriptor passing on the QEMU driver, side by side with libvirtd's:
#   - python3-libvirt's openGraphicsFD (the socket in REPLY_WITH_FDS) and
#     openGraphics (a socketpair end in CALL_WITH_FDS) reach the guest's
#     VNC server (its "RFB 003.008" banner), several at once too; a bad
#     index, unknown flags, a guest without graphics, one shut off and a
#     read-only connection give libvirtd's errors (graphics-fd-checks.py);
#   - the same on the wire by hand: FD_PASSING answers 1 on the Unix
#     socket, OPEN_GRAPHICS without its descriptor is refused, a
#     descriptor sent to a call that takes none is closed;
#   - over TCP FD_PASSING answers 0 (libvirtd says 1 and fails later), so
#     python3-libvirt refuses openGraphicsFD before calling, and a
#     CALL_WITH_FDS sent anyway is refused and the connection closed;
#   - `virt-viewer --attach` under Xvfb shows the guest's display through
#     DOMAIN_OPEN_GRAPHICS_FD (remvirtd's log names the procedure; the
#     screenshot of its window is not blank).
# The test driver refuses both calls, and DOMAIN_OPEN_CHANNEL
# (test-qemu-channel.sh), as libvirtd's test driver does.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

checks=$top_srcdir/tests/interop/graphics-fd-checks.py
tcp=$(free_port)
ltcp=$(free_port)
requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
start_libvirtd_qemu 'listen_tls = 0' 'listen_tcp = 1' "tcp_port = \"$ltcp\"" 'auth_tcp = "none"' \
    'listen_addr = "127.0.0.1"'
start_remvirtd_qemu 'listen_tcp = 1' "tcp_port = \"$tcp\"" 'auth_tcp = "none"' \
    'listen_addr = "127.0.0.1"' 'log_filters = "1:server.dispatch"' \
    "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\""
OUT=$RV_TMP/gfx
mkdir -p "$OUT"
chmod 755 "$RV_TMP" "$OUT"

for side in libvirtd remvirtd; do
    if [ $side = libvirtd ]; then uri=$LIBVIRTD_QEMU_URI sock=$LIBVIRTD_SOCK
    else uri=$QEMU_URI sock=$REMVIRTD_SOCK; fi
    V=(virsh -q -c "$uri")
    qemu_domain_xml vnc "<graphics type='vnc' listen='127.0.0.1'/>" > "$OUT/vnc.xml"
    qemu_domain_xml nog > "$OUT/nog.xml"
    qemu_domain_xml off "<graphics type='vnc' listen='127.0.0.1'/>" > "$OUT/off.xml"
    "${V[@]}" create "$OUT/vnc.xml" > /dev/null
    "${V[@]}" create "$OUT/nog.xml" > /dev/null
    "${V[@]}" define "$OUT/off.xml" > /dev/null
    name=qemu:///system
    [ "$(id -u)" -eq 0 ] || name=qemu:///session
    "$SYSTEM_PYTHON3" "$checks" "$uri" "$sock" "$name" > "$OUT/$side.out" 2>&1 ||
        { show "$OUT/$side.out"; fail "$side: graphics-fd-checks.py"; }
done
same "$OUT/libvirtd.out" "$OUT/remvirtd.out" "openGraphicsFD, openGraphics and their errors"
has_line "$OUT/remvirtd.out" "openGraphicsFD(0): b'RFB 003.008\\n'" ||
    { show "$OUT/remvirtd.out"; fail "openGraphicsFD gave no VNC banner"; }

# ---- TCP: no descriptors ----
for side in libvirtd remvirtd; do
    if [ $side = libvirtd ]; then port=$ltcp; else port=$tcp; fi
    "$SYSTEM_PYTHON3" - "qemu+tcp://127.0.0.1:$port/system" > "$OUT/$side.tcp" 2>&1 <<'PY' ||
import sys
import libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
conn = libvirt.open(sys.argv[1])
try:
    conn.lookupByName("vnc").openGraphicsFD(0, 0)
    print("tcp openGraphicsFD worked")
except libvirt.libvirtError as e:
    print("tcp openGraphicsFD", e.get_error_code(), e.get_error_domain(), e.get_error_message())
PY
        { show "$OUT/$side.tcp"; fail "$side: openGraphicsFD over TCP"; }
done
# libvirtd answers FD_PASSING 1 on TCP too, gives QEMU its end of the
# pair and only then fails to send the other (docs/compatibility.md);
# remvirtd says 0, and the client refuses before any call.
has_line "$OUT/libvirtd.tcp" \
    "tcp openGraphicsFD 1 7 internal error: Receiving file descriptors is not supported on this socket" ||
    { show "$OUT/libvirtd.tcp"; fail "libvirtd's openGraphicsFD over TCP changed: update compatibility.md"; }
has_line "$OUT/remvirtd.tcp" \
    "tcp openGraphicsFD 74 20 argument unsupported: fd passing is not supported by this connection" ||
    { show "$OUT/remvirtd.tcp"; fail "remvirtd's openGraphicsFD over TCP"; }
echo "ok   openGraphicsFD over TCP: refused by the client, since FD_PASSING is 0"

# By hand to remvirtd over TCP: FD_PASSING is 0, and a CALL_WITH_FDS is
# refused and ends the connection (what follows it cannot be followed).
"$SYSTEM_PYTHON3" - "$tcp" > "$OUT/tcp-raw.out" 2>&1 <<'PY' || { show "$OUT/tcp-raw.out"; fail "CALL_WITH_FDS over TCP"; }
import socket
import struct
import sys

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
def xstr(t):
    b = t.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)
def send(serial, proc, body, mtype=0):
    pkt = struct.pack(">IIiiIi", 0x20008086, 1, proc, mtype, serial, 0) + body
    s.sendall(struct.pack(">I", len(pkt) + 4) + pkt)
def recv():
    data = b""
    while len(data) < 4 or len(data) < struct.unpack(">I", data[:4])[0]:
        try:
            more = s.recv(65536)
        except ConnectionResetError:    # closed with our carrier byte unread
            more = b""
        if not more:
            return None
        data += more
    return data
send(1, 1, struct.pack(">I", 1) + xstr("qemu:///system") + struct.pack(">I", 0))
recv()
send(2, 60, struct.pack(">i", 8))
print("FD_PASSING over TCP:", struct.unpack(">i", recv()[28:32])[0])
send(3, 3, struct.pack(">I", 1), mtype=4)
s.sendall(b"\0")
r = recv()
code, dom, flag, n = struct.unpack(">iiII", r[28:44])
print("CALL_WITH_FDS over TCP: status", struct.unpack(">i", r[24:28])[0], "error", code, dom,
      r[44:44 + n].decode())
print("then:", "closed" if recv() is None else "still open")
PY
cat > "$OUT/tcp-raw.want" <<'EOF2'
FD_PASSING over TCP: 0
CALL_WITH_FDS over TCP: status 1 error 39 7 this transport cannot pass file descriptors (only a Unix socket can)
then: closed
EOF2
same "$OUT/tcp-raw.want" "$OUT/tcp-raw.out" "descriptor passing refused over TCP"

# ---- the test driver refuses both, as libvirtd's ----
for uri in "$REMVIRTD_URI" "$LIBVIRTD_URI"; do
    "$SYSTEM_PYTHON3" - "$uri" <<'PY' > "$OUT/test-driver.out" 2>&1 || { show "$OUT/test-driver.out"; fail "test driver ($uri)"; }
import socket
import sys
import libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("test")
a, b = socket.socketpair()
for what, call in [("openGraphicsFD", lambda: dom.openGraphicsFD(0, 0)),
                   ("openGraphics", lambda: dom.openGraphics(0, b.fileno(), 0)),
                   ("openChannel", lambda: dom.openChannel(None, conn.newStream(0), 0))]:
    try:
        call()
        sys.exit(f"FAIL: the test driver's {what} worked")
    except libvirt.libvirtError as e:
        want = (libvirt.VIR_ERR_NO_SUPPORT, libvirt.VIR_FROM_DOMAIN)
        if (e.get_error_code(), e.get_error_domain()) != want:
            sys.exit(f"FAIL: the test driver's {what}: {e}")
PY
done
echo "ok   the test driver refuses openGraphicsFD, openGraphics and openChannel (NO_SUPPORT, as libvirtd's)"

# ---- virt-viewer --attach under Xvfb ----
requires virt-viewer --version
requires Xvfb -help
requires import -version
source "$top_srcdir/tests/interop/virt-manager-lib.sh"
start_xvfb
# viewer NAME URI: virt-viewer attached to the guest vnc until its window
# shows the guest's display; the screenshot in $OUT/NAME.png.
viewer()
{
    local name=$1 uri=$2
    LIBVIRT_LOG_FILTERS="1:rpc.netclient" LIBVIRT_LOG_OUTPUTS="1:file:$OUT/$name.libvirt.log" \
        bg "$OUT/$name.viewer" virt-viewer --attach -c "$uri" vnc
    local pid=$BG_PID
    _rv_shown()
    {
        import -window root "$OUT/$name.png" 2>/dev/null &&
            [ "$(convert "$OUT/$name.png" -format %k info:)" -gt 8 ]
    }
    wait_for 60 "virt-viewer's window to show the guest ($name)" _rv_shown ||
        { show "$OUT/$name.viewer"; fail "virt-viewer against $name showed nothing"; }
    # Not through a TCP connection to the VNC port (--attach's fallback).
    if ss -tnp 2>/dev/null | grep -q "pid=$pid,"; then
        ss -tnp >&2
        fail "virt-viewer against $name has a TCP connection"
    fi
    kill "$pid"
    finish "$pid" || true
}
viewer libvirtd "$LIBVIRTD_QEMU_URI"
viewer remvirtd "$QEMU_URI"
# The display came through DOMAIN_OPEN_GRAPHICS_FD, not a TCP connection
# to the VNC port (what --attach falls back to).
for name in libvirtd remvirtd; do
    grep -q "proc=343 " "$OUT/$name.libvirt.log" ||
        fail "virt-viewer against $name did not call DOMAIN_OPEN_GRAPHICS_FD"
done
grep -q "proc=343 type=0 " "$RV_TMP/remvirtd/remvirtd.log" ||
    fail "remvirtd's log has no DOMAIN_OPEN_GRAPHICS_FD call"
echo "ok   virt-viewer --attach shows the guest through DOMAIN_OPEN_GRAPHICS_FD (both daemons)"
