#!/usr/bin/env bash
# Sparse streams (vol-upload --sparse, vol-download --sparse; STREAM_HOLE
# packets both ways): a 64 MiB file with two data extents (3 MiB) goes
# up and comes back with virsh and with rvsh against remvirtd's QEMU
# driver (a dir pool), and with rvsh against libvirtd's storage driver
# (and a file of 1024 small holes, with virsh and rvsh, to remvirtd):
# every copy has the file's bytes and keeps its holes (at most 5 MiB
# allocated; sent as data it would be 64 MiB).  On the wire remvirtd
# sends a download's holes as libvirtd does (the same holes, between the
# same amounts of data).  rvsh prints what virsh prints.  A hole on a
# stream that is not sparse, and hostile holes on a sparse upload
# (negative, huge, past --length, a short payload, flags) each fail that
# stream with a clear error; the volume is not grown and remvirtd serves
# on.  remvirtd's test driver answers a sparse download as libvirtd's
# test driver does.  libremvirt (rvsh) writes a server's holes as holes
# and refuses a hole on a stream that is not sparse, or a malformed one
# (tests/integration/hostile-server.py's "holes" and "bad-hole").
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires virsh
requires libvirtd --version
requires setpriv --version
requires "$PYTHON3" --version
[ -x "$RVSH" ] || fail "$RVSH is not built"
start_remvirtd_qemu

MIB=1048576
# The file's 3 MiB of data, and a volume's first MiB: a new raw volume is
# allocated, and a leading hole keeps what the volume held there (as
# libvirtd's does); with room for block rounding.  Holes filled: 64 MiB.
DATA_MAX_KIB=5120
allocated_kib() { du -k "$1" | cut -f1; }

src=$RV_TMP/src
truncate -s 64M "$src"
head -c $MIB /dev/urandom | dd of="$src" bs=$MIB seek=1 conv=notrunc status=none
head -c $((2 * MIB)) /dev/urandom | dd of="$src" bs=$MIB seek=40 conv=notrunc status=none
[ "$(allocated_kib "$src")" -le $DATA_MAX_KIB ] ||
    skip "the file system under $RV_TMP does not keep holes"

# holes_kept FILE WHAT: FILE has src's bytes and no more than its data allocated.
holes_kept()
{
    cmp "$src" "$1" || fail "$2: not the file's bytes"
    local kib
    kib=$(allocated_kib "$1")
    [ "$kib" -le $DATA_MAX_KIB ] || fail "$2: $kib KiB allocated: the holes were filled"
}

# round_trip URI POOL POOLDIR UP DOWN LABEL: a fresh 64 MiB volume, src
# uploaded into it by UP and downloaded by DOWN, both --sparse.
round_trip()
{
    local uri=$1 pool=$2 dir=$3 up=$4 down=$5 label=$6 out=$RV_TMP/out/$6
    mkdir -p "$out"
    virsh -q -c "$uri" vol-create-as "$pool" sv 64M --format raw >/dev/null
    "$up" -c "$uri" vol-upload --sparse --pool "$pool" sv "$src" > "$out/up.txt" 2>&1 ||
        { show "$out/up.txt"; fail "$label: $up vol-upload --sparse failed"; }
    holes_kept "$dir/sv" "$label: the volume after $(basename "$up")'s sparse upload"
    "$down" -c "$uri" vol-download --sparse --pool "$pool" sv "$out/dl" > "$out/down.txt" 2>&1 ||
        { show "$out/down.txt"; fail "$label: $down vol-download --sparse failed"; }
    holes_kept "$out/dl" "$label: $(basename "$down")'s sparse download"
    virsh -q -c "$uri" vol-delete --pool "$pool" sv >/dev/null
    echo "ok   $label: up with $(basename "$up"), down with $(basename "$down"): bytes and holes kept"
}

RVPOOL=$RV_TMP/rvpool
virsh -q -c "$QEMU_URI" pool-define-as sp dir --target "$RVPOOL" >/dev/null
virsh -q -c "$QEMU_URI" pool-build sp >/dev/null
virsh -q -c "$QEMU_URI" pool-start sp >/dev/null
round_trip "$QEMU_URI" sp "$RVPOOL" virsh virsh remvirtd-virsh
round_trip "$QEMU_URI" sp "$RVPOOL" "$RVSH" "$RVSH" remvirtd-rvsh
round_trip "$QEMU_URI" sp "$RVPOOL" "$RVSH" virsh remvirtd-rvsh-virsh
round_trip "$QEMU_URI" sp "$RVPOOL" virsh "$RVSH" remvirtd-virsh-rvsh
for step in up down; do
    same "$RV_TMP/out/remvirtd-virsh/$step.txt" "$RV_TMP/out/remvirtd-rvsh/$step.txt" \
        "rvsh prints what virsh prints for a sparse $step"
done

# A sparse download of a part (--offset, --length) cuts the holes at its ends.
virsh -q -c "$QEMU_URI" vol-create-as sp part 64M --format raw >/dev/null
virsh -q -c "$QEMU_URI" vol-upload --sparse --pool sp part "$src"
for tool in virsh "$RVSH"; do
    got=$RV_TMP/part.$(basename "$tool")
    "$tool" -q -c "$QEMU_URI" vol-download --sparse --pool sp part "$got" \
        --offset $((MIB + MIB / 2)) --length $((40 * MIB))
    cmp <(tail -c +$((MIB + MIB / 2 + 1)) "$src" | head -c $((40 * MIB))) "$got" ||
        fail "$tool: a sparse download of part of the volume has other bytes"
    # 2 MiB of data (from 1.5 to 2, from 40 to 41.5 MiB), a 38 MiB hole.
    [ "$(allocated_kib "$got")" -le 3072 ] || fail "$tool: the part's hole was filled"
done
echo "ok   a sparse download of part of the volume: its bytes, its holes"

# Many holes: 4 KiB of data every 8 KiB over 8 MiB (1024 holes; each a
# packet of its own, counted against the stream window like data).
striped=$RV_TMP/striped
"$PYTHON3" - "$striped" <<'PY'
import os
import sys

fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(1024):
    os.pwrite(fd, os.urandom(4096), i * 8192)
os.ftruncate(fd, 8 << 20)
os.close(fd)
PY
virsh -q -c "$QEMU_URI" vol-create-as sp striped 8M --format raw >/dev/null
"$RVSH" -c "$QEMU_URI" vol-upload --sparse --pool sp striped "$striped"
for tool in virsh "$RVSH"; do
    got=$RV_TMP/striped.$(basename "$tool")
    "$tool" -q -c "$QEMU_URI" vol-download --sparse --pool sp striped "$got"
    cmp "$striped" "$got" || fail "$tool: the striped file came back different"
    [ "$(allocated_kib "$got")" -le 6144 ] || fail "$tool: the striped file's holes were filled"
done
echo "ok   1024 holes of 4 KiB between 1024 data blocks, both ways"

# ---- libvirtd's storage driver, as user nobody (its files under the test's directory)
start_libvirtd_session
LV_SOCK=$LIBVIRTD_SESSION_SOCK
LV_URI=$LIBVIRTD_SESSION_URI
mkdir -p "$RV_TMP/lvpool"
chown 65534:65534 "$RV_TMP/lvpool"
virsh -q -c "$LV_URI" pool-define-as sp dir --target "$RV_TMP/lvpool/sp" >/dev/null
virsh -q -c "$LV_URI" pool-build sp >/dev/null
virsh -q -c "$LV_URI" pool-start sp >/dev/null
round_trip "$LV_URI" sp "$RV_TMP/lvpool/sp" "$RVSH" "$RVSH" libvirtd-rvsh

# ---- the wire: a sparse download through a recording relay from each daemon
# wire_download URI_SOCKET NAME: STREAM and STREAM_HOLE packets of a
# virsh vol-download --sparse of volume `part`, in $RV_TMP/wire.NAME.
wire_download()
{
    local sock=$1 name=$2 relay=$RV_TMP/relay.$2
    "$PYTHON3" "$top_srcdir/tests/tools/wire-relay.py" --once --listen "$relay" \
        --server "$sock" --out "$RV_TMP/wire.$name" &
    local pid=$!
    wait_for 10 "the relay's socket" test -S "$relay" || fail "wire-relay did not start"
    local uri=${3/$sock/$relay}
    virsh -q -c "$uri" vol-download --sparse --pool sp part "$RV_TMP/wire-dl.$name" >/dev/null
    wait "$pid" || fail "wire-relay failed"
}
virsh -q -c "$LV_URI" vol-create-as sp part 64M --format raw >/dev/null
virsh -q -c "$LV_URI" vol-upload --sparse --pool sp part "$src"
wire_download "$LV_SOCK" libvirtd "$LV_URI"
wire_download "$REMVIRTD_SOCK" remvirtd "$QEMU_URI"
# The download's packets from the server, consecutive data packets summed:
# "data N", "hole N", "end".
summary()
{
    "$PYTHON3" - "$1" <<'PY'
import struct
import sys

rows = []
for line in open(sys.argv[1]):
    _, way, hexdata = line.split()
    pkt = bytes.fromhex(hexdata)
    proc, mtype, serial, status = struct.unpack(">iiIi", pkt[12:28])
    body = pkt[28:]
    if way != "s2c" or proc != 209 or mtype not in (3, 6) or status != 2:
        continue
    if mtype == 6:
        length, flags = struct.unpack(">qI", body)
        rows.append(["hole", length, flags])
    elif not body:
        rows.append(["end"])
    elif rows and rows[-1][0] == "data":
        rows[-1][1] += len(body)
    else:
        rows.append(["data", len(body)])
for row in rows:
    print(*row)
PY
}
summary "$RV_TMP/wire.libvirtd" > "$RV_TMP/wire.libvirtd.txt"
summary "$RV_TMP/wire.remvirtd" > "$RV_TMP/wire.remvirtd.txt"
grep -q '^hole' "$RV_TMP/wire.libvirtd.txt" || { show "$RV_TMP/wire.libvirtd.txt"; fail "libvirtd sent no hole"; }
same "$RV_TMP/wire.libvirtd.txt" "$RV_TMP/wire.remvirtd.txt" \
    "remvirtd's sparse download: the same STREAM_HOLE packets (status CONTINUE) as libvirtd's"
# At most 262120 bytes of data in a packet, from both (wire-protocol.md 13.1).
for name in libvirtd remvirtd; do
    largest=$("$PYTHON3" -c '
import struct, sys
print(max(len(bytes.fromhex(h)) - 28 for _, w, h in (l.split() for l in open(sys.argv[1]))
          if w == "s2c" and struct.unpack(">i", bytes.fromhex(h)[16:20])[0] == 3))' "$RV_TMP/wire.$name")
    [ "$largest" -eq 262120 ] || fail "$name's largest data packet carries $largest bytes, not 262120"
    echo "ok   $name sends at most 262120 bytes of data per packet"
done

# libvirtd's answers to bad holes (wire-protocol.md 13.6).
virsh -q -c "$LV_URI" vol-create-as sp holes 1M --format raw >/dev/null
rawpy "$LV_SOCK" "$(virsh -q -c "$LV_URI" vol-path --pool sp holes)" <<'PY'
import struct
import sys

import rawclient as rc
import rv_protocol as rv

sock, path = sys.argv[1:]
UP = rc.PROC_STORAGE_VOL_UPLOAD
vol = rc.xdr_string("sp") + rc.xdr_string("holes") + rc.xdr_string(path)


def upload(c, flags):
    s = c.send_call(UP, vol + struct.pack(">QQI", 0, 0, flags))
    hdr, _ = c.recv_packet()
    rc.check((hdr.type, hdr.status) == (rc.REPLY, rc.STATUS_OK), f"libvirtd: the upload (flags {flags}) opens")
    return s


# Section 13.5: an upload of "abcde", then a download of 4 bytes at
# offset 1, packet by packet.
c = rc.Client(sock)
c.open_connection("qemu:///session")
s = upload(c, 0)
c.send(rc.packet(UP, b"abcde", serial=s, mtype=rv.RV_STREAM, status=rv.RV_CONTINUE))
c.send(rc.packet(UP, b"", serial=s, mtype=rv.RV_STREAM, status=rc.STATUS_OK))
hdr, body = c.recv_packet()
rc.check((hdr.proc, hdr.type, hdr.serial, hdr.status, body) == (UP, rv.RV_STREAM, s, rc.STATUS_OK, b""),
         "libvirtd: the upload's finish is answered STREAM OK, empty")
DOWN = rc.PROC_STORAGE_VOL_DOWNLOAD
s = c.send_call(DOWN, vol + struct.pack(">QQI", 1, 4, 0), serial=9)
got = [c.recv_packet() for _ in range(3)]
c.send(rc.packet(DOWN, b"", serial=9, mtype=rv.RV_STREAM, status=rc.STATUS_OK))
got.append(c.recv_packet())
rc.check([(h.proc, h.type, h.serial, h.status, b) for h, b in got] ==
         [(DOWN, rc.REPLY, 9, rc.STATUS_OK, b""), (DOWN, rv.RV_STREAM, 9, rv.RV_CONTINUE, b"bcde"),
          (DOWN, rv.RV_STREAM, 9, rv.RV_CONTINUE, b""), (DOWN, rv.RV_STREAM, 9, rc.STATUS_OK, b"")],
         "libvirtd: a download of 4 bytes: REPLY OK, CONTINUE 'bcde', CONTINUE empty, then OK for the finish")
c.close()

c = rc.Client(sock)
c.open_connection("qemu:///session")
s = upload(c, 0)
c.send(rc.packet(UP, struct.pack(">qI", 4096, 0), serial=s, mtype=rv.RV_STREAM_HOLE, status=rv.RV_CONTINUE))
rc.check(c.wait_closed(5.0), "libvirtd: a hole on a stream that is not sparse closes the connection")
c.close()

# A malformed hole: a short payload closes the connection, a long one gets
# no answer, a negative length or flags not 0 a REPLY ERROR (and the
# finish then no answer).
for what, payload, wanted in (
        ("an 11-byte hole", struct.pack(">qI", 4096, 0)[:11], "closed"),
        ("a 16-byte hole", struct.pack(">qI", 4096, 0) + bytes(4), "nothing"),
        ("a negative hole", struct.pack(">qI", -5, 0), "error"),
        ("a hole with flags 1", struct.pack(">qI", 4096, 1), "error")):
    c = rc.Client(sock, timeout=3)
    c.open_connection("qemu:///session")
    s = upload(c, rv.RV_STORAGE_VOL_STREAM_SPARSE)
    c.send(rc.packet(UP, payload, serial=s, mtype=rv.RV_STREAM_HOLE, status=rv.RV_CONTINUE))
    try:
        hdr, body = c.recv_packet()
        e = rc.decode_error(body) if hdr.status == rc.STATUS_ERROR else {}
        got = "error" if (hdr.type, hdr.serial, e.get("message")) == \
            (rc.REPLY, s, "Library function returned error but did not set virError") else str(hdr)
    except rc.Closed:
        got = "closed"
    except TimeoutError:
        got = "nothing"
    rc.check(got == wanted, f"libvirtd: {what}: {got}")
    if got == "error":
        c.send(rc.packet(UP, b"", serial=s, mtype=rv.RV_STREAM, status=rc.STATUS_OK))
        h = c.send_call(rc.PROC_CONNECT_GET_HOSTNAME)
        hdr, _ = c.recv_packet()
        rc.check((hdr.type, hdr.serial) == (rc.REPLY, h), f"libvirtd: {what}: the finish gets no answer")
    c.close()
PY

# ---- bad holes
vol_path=$(virsh -q -c "$QEMU_URI" vol-path --pool sp part)
size_before=$(stat -c %s "$vol_path")
rawpy "$REMVIRTD_SOCK" "$vol_path" "$QEMU_URI" <<'PY'
import struct
import sys

import rawclient as rc
import rv_protocol as rv

path, vol_path, uri = sys.argv[1], sys.argv[2], sys.argv[3]
STREAM, HOLE, CONTINUE = rv.RV_STREAM, rv.RV_STREAM_HOLE, rv.RV_CONTINUE
UP = rc.PROC_STORAGE_VOL_UPLOAD
c = rc.Client(path)
c.open_connection(uri.split("?")[0].replace("+unix", ""))
vol = rc.xdr_string("sp") + rc.xdr_string("part") + rc.xdr_string(vol_path)


def must(cond, what):
    if not cond:
        raise SystemExit(f"FAIL: {what}")


def bad_hole(flags, length, payload, wanted, what):
    s = c.send_call(UP, vol + struct.pack(">QQI", 0, length, flags))
    hdr, body = c.recv_packet()
    must((hdr.type, hdr.status) == (rc.REPLY, rc.STATUS_OK), f"{what}: the upload was refused")
    c.send(rc.packet(UP, payload, serial=s, mtype=HOLE, status=CONTINUE))
    hdr, body = c.recv_packet()
    must((hdr.serial, hdr.type, hdr.status) == (s, STREAM, rc.STATUS_ERROR),
         f"{what}: got type {hdr.type} status {hdr.status}, wanted a STREAM ERROR")
    err = rc.decode_error(body)
    must(wanted in err["message"], f"{what}: {err['message']!r} does not say {wanted!r}")
    # The error was the stream's last packet: the abort gets no answer.
    c.send(rc.packet(UP, b"", serial=s, mtype=STREAM, status=rc.STATUS_ERROR))
    h = c.send_call(rc.PROC_CONNECT_GET_HOSTNAME)
    hdr, body = c.recv_packet()
    must((hdr.serial, hdr.type) == (h, rc.REPLY), f"{what}: the abort was answered")
    print(f"ok   {what}: {err['message']}")


def hole(length, flags=0):
    return struct.pack(">qI", length, flags)


bad_hole(0, 0, hole(4096), "Unexpected stream hole", "a hole on a stream that is not sparse")
bad_hole(1, 0, hole(-5), "malformed stream hole", "a negative hole")
bad_hole(1, 0, hole(-(1 << 63)), "malformed stream hole", "the most negative hole")
bad_hole(1, 0, hole((1 << 63) - 1), "goes past the end of the volume", "a hole of 2^63-1 bytes")
bad_hole(1, 0, hole(1 << 40), "goes past the end of the volume", "a hole of 1 TiB")
bad_hole(1, 4096, hole(8192), "No space left on device", "a hole past --length")
bad_hole(1, 0, hole(4096)[:11], "malformed stream hole", "an 11-byte hole payload")
bad_hole(1, 0, hole(4096) + b"\0\0\0\0", "malformed stream hole", "a 16-byte hole payload")
bad_hole(1, 0, hole(4096, 1), "malformed stream hole", "a hole with flags 1")
PY
[ "$(stat -c %s "$vol_path")" -eq "$size_before" ] || fail "a refused hole changed the volume's size"
remvirtd_alive || fail "remvirtd died"
virsh -q -c "$QEMU_URI" vol-download --pool sp part "$RV_TMP/after-bad-holes"
cmp "$RV_TMP/after-bad-holes" "$src" || fail "the refused holes changed the volume's bytes"
echo "ok   the volume kept its size and bytes; remvirtd serves on"

# ---- libremvirt against a server that sends holes (hostile-server.py)
SOCK=$RV_TMP/hostile-sock
bg "$RV_TMP/hostile" env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top_srcdir/tests/tools:$top_builddir/python" \
    "$PYTHON3" "$top_srcdir/tests/integration/hostile-server.py" "$SOCK"
wait_for "$RV_TIMEOUT" "the hostile server" has_line "$RV_TMP/hostile" ready ||
    { show "$RV_TMP/hostile.err"; fail "the hostile server did not start"; }
# "abc", a hole of 5, "de", a hole of 3: the file has them, its end a hole.
"$RVSH" -c "test+unix:///holes?socket=$SOCK" vol-download --sparse --pool p v "$RV_TMP/h.out"
cmp "$RV_TMP/h.out" <(printf 'abc\0\0\0\0\0de\0\0\0') || fail "rvsh: the holes did not land as zeros"
echo "ok   rvsh vol-download --sparse: the server's holes land in the file"
# rvsh_error SCENARIO WANTED [OPTION]: the download fails with WANTED, no file left.
rvsh_error()
{
    "$RVSH" -c "test+unix:///$1?socket=$SOCK" vol-download ${3:-} --pool p v "$RV_TMP/bad.out" \
        > "$RV_TMP/bad.txt" 2>&1 && fail "rvsh took $1"
    grep -q "$2" "$RV_TMP/bad.txt" || { show "$RV_TMP/bad.txt"; fail "rvsh's error for $1"; }
    [ ! -e "$RV_TMP/bad.out" ] || fail "rvsh left the file of a failed download ($1)"
    echo "ok   $1${3:+ ($3)}: $(grep -v '^$' "$RV_TMP/bad.txt" | tail -1)"
}
rvsh_error holes "the server sent a hole on a stream that is not sparse"
rvsh_error bad-hole "malformed stream hole" --sparse

# ---- the test driver: a sparse download gets libvirtd's test driver's answer
virsh -q -c "$REMVIRTD_URI" vol-create-as default-pool tv 1M >/dev/null
virsh -q -c test:///default "vol-create-as default-pool tv 1M; vol-download --sparse --pool default-pool tv $RV_TMP/tv.lv" \
    2>&1 | grep '^error' > "$RV_TMP/tv.libvirt" || true
for tool in virsh "$RVSH"; do
    "$tool" -q -c "$REMVIRTD_URI" vol-download --sparse --pool default-pool tv "$RV_TMP/tv.out" \
        > "$RV_TMP/tv.$(basename "$tool")" 2>&1 && fail "$tool: a sparse download from the test driver worked"
    grep '^error' "$RV_TMP/tv.$(basename "$tool")" > "$RV_TMP/tv.$(basename "$tool").txt" || true
    same "$RV_TMP/tv.libvirt" "$RV_TMP/tv.$(basename "$tool").txt" \
        "$(basename "$tool") vol-download --sparse from the test driver: libvirt's test driver's error"
done
