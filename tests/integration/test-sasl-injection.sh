#!/usr/bin/env bash
# A man in the middle on plain TCP appends calls, in clear, to the
# client's last AUTH_SASL_START/STEP of a DIGEST-MD5 exchange that negotiates a
# security layer.  remvirtd must run none of them and answer none: bytes
# that come in clear once the layer is agreed close the client, and the
# log says why.  virsh is the real client; the relay is the attacker.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
# Under ASan, cyrus's DIGEST-MD5 plugin leaks inside OpenSSL (see
# tests/cyrus-sasl.lsan); full stacks let the suppression see that.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/cyrus-sasl.lsan:fast_unwind_on_malloc=0"
requires saslpasswd2
requires virsh

remvirtd_sasl_db digest-md5 alice
auth=$RV_TMP/auth.conf
printf '[credentials-t]\nauthname=alice\npassword=pw-alice\n\n[auth-libvirt-default]\ncredentials=t\n' \
    > "$auth"

tcp=$(free_port)
start_remvirtd 'listen_tcp = 1' 'listen_addr = "127.0.0.1"' "tcp_port = \"$tcp\"" \
    'auth_tcp = "sasl"' 'log_level = 2'

# Sanity: without the attacker, virsh gets in with a security layer.
out=$(LIBVIRT_AUTH_FILE=$auth virsh -c "test+tcp://127.0.0.1:$tcp/default" list --all </dev/null 2>&1) ||
    fail "virsh over TCP with DIGEST-MD5 does not work: $out"
grep -q ' test ' <<<"$out" || fail "virsh over TCP lists no 'test': $out"
grep -q "authenticated with SASL (SSF [1-9]" "$REMVIRTD_LOG" ||
    fail "DIGEST-MD5 over TCP negotiated no security layer"

report=$RV_TMP/relay.report
rawpy "$tcp" "$report" <<'PY' &
import socket, struct, sys, threading
import rawclient as rc

# The attacker appends four calls to every AUTH_SASL_START and _STEP the
# client sends
# (it cannot know which step is the last), serials 9000 + 10 * step + i,
# and hides their replies from the client.  Calls riding on an early step
# are refused for want of authentication; those riding on the last one
# must not be answered at all.
port, report = int(sys.argv[1]), sys.argv[2]
SASL_STEPS = (rc.PROC_AUTH_SASL_START, rc.PROC_AUTH_SASL_STEP)
TEST_UUID = bytes.fromhex("6695eb01f6a4830479aa97f2502e193f")   # the test driver's 'test'
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
open(report + ".port", "w").write(str(ls.getsockname()[1]))
client, _ = ls.accept()
server = socket.create_connection(("127.0.0.1", port))
notes, steps = [], [0]
layer = threading.Event()   # the exchange completed: the client's bytes are encoded now

def frames(buf):
    """Whole frames at the front of buf (a bytearray), removed from it."""
    while len(buf) >= 4:
        n = struct.unpack(">I", buf[:4])[0]
        if len(buf) < n or n < 4:
            return
        f = bytes(buf[:n])
        del buf[:n]
        yield f

def header(f):
    return struct.unpack(">IIiiIi", f[4:28]) if len(f) >= 28 else (0, 0, 0, 0, 0, 0)

def attack(step):
    base = 9000 + 10 * step
    return (rc.packet(rc.PROC_CONNECT_OPEN, rc.xdr_opt_string("test:///default") + rc.xdr_uint(0),
                      serial=base + 1)
            + rc.packet(rc.PROC_CONNECT_GET_HOSTNAME, serial=base + 2)
            + rc.packet(rc.PROC_CONNECT_LIST_ALL_DOMAINS, rc.xdr_int(1) + rc.xdr_uint(0),
                        serial=base + 3)
            + rc.packet(rc.PROC_DOMAIN_SUSPEND, rc.xdr_domain("test", TEST_UUID, 1),
                        serial=base + 4))

def to_server():
    buf = bytearray()
    try:
        while True:
            d = client.recv(65536)
            if not d:
                server.shutdown(socket.SHUT_WR)
                return
            if layer.is_set():
                server.sendall(bytes(buf) + d)
                buf.clear()
                continue
            buf += d
            out = b""
            for f in frames(buf):
                out += f
                prog, _, proc, mtype, _, _ = header(f)
                if prog == rc.REMOTE_PROGRAM and proc in SASL_STEPS and mtype == rc.CALL:
                    steps[0] += 1
                    out += attack(steps[0])
                    notes.append(f"injected after step {steps[0]}")
            server.sendall(out)
    except OSError:
        pass

def to_client():
    buf = bytearray()
    try:
        while True:
            d = server.recv(65536)
            if not d:
                break
            buf += d
            out = b""
            for f in frames(buf):
                prog, _, proc, mtype, serial, status = header(f)
                if prog == rc.REMOTE_PROGRAM and 9000 < serial < 9100:
                    step = (serial - 9000) // 10
                    err = rc.decode_error(f[28:])["message"] if status == 1 else "OK"
                    notes.append(f"answered {serial} of step {step}: {err}")
                    continue
                if prog == rc.REMOTE_PROGRAM and proc in SASL_STEPS and mtype == rc.REPLY \
                        and status == 0 and rc.Unpacker(f[28:]).int() == 1:
                    notes.append(f"complete after step {steps[0]}")
                    layer.set()
                out += f
            client.sendall(out)
    except OSError:
        pass
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass

t = [threading.Thread(target=to_server), threading.Thread(target=to_client)]
for x in t: x.start()
for x in t: x.join()
open(report, "w").write("\n".join(notes) + "\n")
PY
relay_pid=$!
wait_for 5 "the relay" test -s "$report.port" || fail "the attacker's relay did not start"
if LIBVIRT_AUTH_FILE=$auth timeout 60 virsh -c "test+tcp://127.0.0.1:$(cat "$report.port")/default" \
        list --all </dev/null > "$RV_TMP/virsh.out" 2>&1; then
    fail "virsh got through although the connection carried injected calls"
fi
wait "$relay_pid" || fail "the relay failed"
cat "$report"
last=$(sed -n 's/^complete after step \([0-9]*\)$/\1/p' "$report")
[ -n "$last" ] || fail "the SASL exchange never completed"
grep -q "^injected after step $last$" "$report" || fail "the relay did not inject with the last step"
for ((k = 1; k < last; k++)); do
    [ "$(grep -c "^answered 90$k[1-4] of step $k: authentication required" "$report")" -eq 4 ] ||
        fail "the calls injected with step $k were not refused for want of authentication"
done
echo "ok   calls injected with the $((last - 1)) earlier step(s) were refused: authentication required"
! grep -q "of step $last:" "$report" || fail "remvirtd answered a call injected with the last step"
echo "ok   no call injected with the last step (step $last) was answered"
wait_for 5 "the log line" grep -q "came in clear after SASL authentication" "$REMVIRTD_LOG" ||
    fail "the log does not say why the client was closed"
echo "ok   the log says why: $(grep "came in clear" "$REMVIRTD_LOG" | sed 's/.*: client/client/')"
victim=$(sed -n 's/.*: \(client [0-9]*\) .*came in clear after SASL.*/\1/p' "$REMVIRTD_LOG")
[ -n "$victim" ] || fail "no client number in the log line"
! grep -q "$victim (.*opened test:///default" "$REMVIRTD_LOG" || fail "the injected CONNECT_OPEN ran"
echo "ok   the injected CONNECT_OPEN did not run ($victim opened nothing)"
state=$(LIBVIRT_AUTH_FILE=$auth virsh -c "test+tcp://127.0.0.1:$tcp/default" domstate test </dev/null) ||
    fail "virsh domstate after the attack"
[ "$state" = running ] || fail "the injected DOMAIN_SUSPEND ran: test is '$state'"
echo "ok   the injected DOMAIN_SUSPEND did not run (test is $state)"
