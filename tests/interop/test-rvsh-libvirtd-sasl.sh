#!/usr/bin/env bash
# libremvirt's SASL client against a real libvirtd: a sasldb made with
# saslpasswd2, libvirtd's SASL config ("libvirt" is its application name)
# found through SASL_CONF_PATH, and
#   - DIGEST-MD5 over plain TCP (auth_tcp = "sasl"), credentials from an
#     auth file that virsh reads too; the security layer is on (a relay in
#     the middle sees no plain text after the exchange);
#   - SCRAM-SHA-256 over TLS (auth_tls = "sasl"): libvirtd's tcp_min_ssf
#     keeps mechanisms without a layer off plain TCP;
#   - wrong password, unknown user, a user outside
#     sasl_allowed_username_list, a mechanism the server does not offer,
#     a password nobody can give, and a malformed auth file: each a clear
#     error;
#   - the user name from the URI or username=, the host's group before
#     [auth-libvirt-default];
#   - a stand-in server offering only polkit, auth=sasl against it, and
#     an unknown auth= type;
#   - the terminal prompt (on a pty): user name echoed, password not, the
#     terminal's echo back after the answer and after Ctrl-C;
#   - rv_connect_open_auth's callback.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
# Under ASan, cyrus's DIGEST-MD5 plugin leaks inside OpenSSL (see
# tests/cyrus-sasl.lsan); full stacks let the suppression see that.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/cyrus-sasl.lsan:fast_unwind_on_malloc=0"
requires saslpasswd2
requires virsh
requires certtool
[ -x "$RVSH" ] || fail "$RVSH is not built"
LIB=$top_builddir/.libs/libremvirt.so.0
[ -e "$LIB" ] || fail "$LIB is not built"
for mech in DIGEST-MD5 SCRAM-SHA-256; do
    saslpluginviewer -s -m "$mech" 2>/dev/null | grep -q "SASL mechanism: $mech" ||
        skip "the SASL mechanism $mech is not installed (libsasl2-modules)"
done

password=s3cret-Pa55
# libvirtd finds its config through SASL_CONF_PATH (it runs as root with
# its real ids, so cyrus honours the variable).
sasl_db libvirt "digest-md5 scram-sha-256" "fred=$password" "wilma=other-$password"

pki=$RV_TMP/pki
make_pki "$pki"
tcp_port=$(free_port)
tls_port=$(free_port)
[ "$tcp_port" != "$tls_port" ] || tls_port=$(free_port)
start_libvirtd 'listen_tcp = 1' 'listen_tls = 1' "tcp_port = \"$tcp_port\"" \
    "tls_port = \"$tls_port\"" 'auth_tcp = "sasl"' 'auth_tls = "sasl"' \
    "ca_file = \"$pki/server/cacert.pem\"" "cert_file = \"$pki/server/servercert.pem\"" \
    "key_file = \"$pki/server/serverkey.pem\"" 'sasl_allowed_username_list = ["fred", "fred@*"]'
wait_for 10 "libvirtd's TCP port" bash -c "exec 3<>/dev/tcp/127.0.0.1/$tcp_port" ||
    fail "libvirtd does not listen on TCP port $tcp_port"
wait_for 10 "libvirtd's TLS port" bash -c "exec 3<>/dev/tcp/127.0.0.1/$tls_port" ||
    fail "libvirtd does not listen on TLS port $tls_port"

# One auth file for both clients, in libvirt's format.
authfile=$RV_TMP/auth.conf
cat > "$authfile" <<EOF
# fred's credentials for every host
[credentials-fred]
authname = fred
password = $password

[auth-libvirt-default]
credentials = fred
EOF
export REMVIRT_AUTH_FILE=$authfile LIBVIRT_AUTH_FILE=$authfile
tcp_uri="test+tcp://localhost:$tcp_port/default"
tls_uri="test+tls://localhost:$tls_port/default?pkipath=$pki/client"

# rvsh_fails OUTFILE ARGS...: rvsh must fail; its stderr goes to OUTFILE
# (and to the log).
rvsh_fails()
{
    local out=$1
    shift
    if "$RVSH" "$@" </dev/null >"$RV_TMP/stdout" 2>"$out"; then
        cat "$out" "$RV_TMP/stdout"
        fail "rvsh $* succeeded"
    fi
    sed 's/^/    rvsh: /' "$out"
}

# expect_in FILE TEXT...: every TEXT is in FILE.
expect_in()
{
    local file=$1 text
    shift
    for text in "$@"; do
        grep -qF -- "$text" "$file" || { cat "$file"; fail "'$text' is not in $file"; }
    done
}

echo "---- DIGEST-MD5 over TCP, credentials from the auth file"
virsh -c "$tcp_uri" list --all > "$RV_TMP/virsh.out" </dev/null ||
    fail "virsh could not use the auth file"
"$RVSH" -c "$tcp_uri" list --all > "$RV_TMP/rvsh.out" </dev/null ||
    fail "rvsh with DIGEST-MD5 over TCP"
diff -u "$RV_TMP/virsh.out" "$RV_TMP/rvsh.out" || fail "rvsh and virsh disagree over SASL/TCP"
grep -qE '^ *1 +test +running' "$RV_TMP/rvsh.out" || fail "no test domain in the list"
# More traffic through the layer, some of it larger.
for cmd in "dominfo test" "capabilities" "nodeinfo"; do
    # shellcheck disable=SC2086 # cmd is split into words on purpose
    virsh -c "$tcp_uri" $cmd > "$RV_TMP/v" </dev/null &&
        "$RVSH" -c "$tcp_uri" $cmd > "$RV_TMP/r" </dev/null || fail "'$cmd' over SASL/TCP"
    # CPU time moves between the two calls.
    diff -u <(grep -v '^CPU time' "$RV_TMP/v") <(grep -v '^CPU time' "$RV_TMP/r") ||
        fail "'$cmd' differs over SASL/TCP"
done

echo "---- the security layer: a relay sees no plain text after the exchange"
relay=$RV_TMP/relay
mkdir -p "$relay"
"$PYTHON3" - "$tcp_port" "$relay" <<'EOF' &
# Relay one TCP connection to libvirtd, keeping each direction's bytes.
import os, selectors, socket, sys
upstream, out = int(sys.argv[1]), sys.argv[2]
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
with open(out + "/port.tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(out + "/port.tmp", out + "/port")
listener.settimeout(60)
client, _ = listener.accept()
server = socket.create_connection(("127.0.0.1", upstream))
peer = {client: server, server: client}
log = {client: open(out + "/c2s", "wb"), server: open(out + "/s2c", "wb")}
sel = selectors.DefaultSelector()
for s in peer:
    sel.register(s, selectors.EVENT_READ)
open_ends = 2
while open_ends:
    events = sel.select(60)
    if not events:
        sys.exit("relay: nothing happened for 60 s")
    for key, _ in events:
        s = key.fileobj
        data = s.recv(65536)
        if not data:
            sel.unregister(s)
            peer[s].shutdown(socket.SHUT_WR)
            open_ends -= 1
            continue
        log[s].write(data)
        log[s].flush()
        peer[s].sendall(data)
EOF
relay_pid=$!
wait_for 10 "the relay's port" test -s "$relay/port" || fail "the relay did not start"
"$RVSH" -c "test+tcp://127.0.0.1:$(cat "$relay/port")/default" dumpxml test \
    > "$RV_TMP/dumpxml.out" </dev/null || fail "rvsh dumpxml through the relay"
wait "$relay_pid" || fail "the relay failed"
grep -q '<domain' "$RV_TMP/dumpxml.out" || fail "dumpxml gave no XML"
# The exchange itself is in the clear (the mechanism's name shows: the
# capture is real); what follows it is not: neither the name sent to
# CONNECT_OPEN nor the XML that came back.
grep -qa 'DIGEST-MD5' "$relay/c2s" || fail "the capture does not hold the SASL exchange"
if grep -qa 'test:///default' "$relay/c2s"; then
    fail "CONNECT_OPEN's name went out as plain text: no security layer"
fi
if grep -qa -e '<domain' -e '<name>test</name>' "$relay/s2c"; then
    fail "the domain XML came back as plain text: no security layer"
fi

echo "---- SCRAM-SHA-256 over TLS"
# Over plain TCP libvirtd (tcp_min_ssf 56) does not even offer it.
rvsh_fails "$RV_TMP/err" -c "$tcp_uri?auth=sasl.SCRAM-SHA-256" list
expect_in "$RV_TMP/err" "does not offer SASL mechanism 'SCRAM-SHA-256'" "it offers: DIGEST-MD5"
virsh -c "$tls_uri&auth=sasl.SCRAM-SHA-256" list --all > "$RV_TMP/virsh.out" </dev/null ||
    fail "virsh with SCRAM-SHA-256 over TLS"
"$RVSH" -c "$tls_uri&auth=sasl.SCRAM-SHA-256" list --all > "$RV_TMP/rvsh.out" </dev/null ||
    fail "rvsh with SCRAM-SHA-256 over TLS"
diff -u "$RV_TMP/virsh.out" "$RV_TMP/rvsh.out" || fail "rvsh and virsh disagree over SASL/TLS"

echo "---- refusals"
cat > "$RV_TMP/wrong.conf" <<EOF
[credentials-fred]
authname=fred
password=not-$password
[auth-libvirt-localhost]
credentials=fred
EOF
REMVIRT_AUTH_FILE=$RV_TMP/wrong.conf rvsh_fails "$RV_TMP/err" -c "$tcp_uri" list
expect_in "$RV_TMP/err" "failed to connect to the hypervisor" "authentication failed"
# libvirtd tells clients only "authentication failed"; its log says why,
# which shows each refusal is the one meant.
expect_in "$LIBVIRTD_LOG" "client response doesn't match what we generated"

sed -e 's/authname=fred/authname=barney/' "$RV_TMP/wrong.conf" > "$RV_TMP/unknown.conf"
REMVIRT_AUTH_FILE=$RV_TMP/unknown.conf rvsh_fails "$RV_TMP/err" -c "$tcp_uri" list
expect_in "$RV_TMP/err" "authentication failed"
expect_in "$LIBVIRTD_LOG" "user not found"

# wilma's password is right, but she is not on sasl_allowed_username_list.
sed -e 's/authname=fred/authname=wilma/' -e "s/not-$password/other-$password/" \
    "$RV_TMP/wrong.conf" > "$RV_TMP/wilma.conf"
REMVIRT_AUTH_FILE=$RV_TMP/wilma.conf rvsh_fails "$RV_TMP/err" -c "$tcp_uri" list
expect_in "$RV_TMP/err" "authentication failed"
expect_in "$LIBVIRTD_LOG" "'wilma' not allowed"

rvsh_fails "$RV_TMP/err" -c "$tcp_uri?auth=sasl.NOPE" list
expect_in "$RV_TMP/err" "does not offer SASL mechanism 'NOPE'"

# The file's password is fred's: it is not sent for another user, and
# with stdin no terminal nobody can be asked.
rvsh_fails "$RV_TMP/err" -c "test+tcp://barney@localhost:$tcp_port/default" list
expect_in "$RV_TMP/err" "no password for user 'barney' on localhost" \
    "set it in the auth file $authfile or run on a terminal"

printf '[credentials-fred]\nauthname=fred\npassword %s\n' "$password" > "$RV_TMP/bad.conf"
REMVIRT_AUTH_FILE=$RV_TMP/bad.conf rvsh_fails "$RV_TMP/err" -c "$tcp_uri" list
expect_in "$RV_TMP/err" "$RV_TMP/bad.conf:3: "
if grep -qF "$password" "$RV_TMP/err"; then
    fail "the error shows the malformed line's secret"
fi

echo "---- where the name comes from"
# Besides authname=, remvirt takes the URI's user, then username= (virsh
# 9.0 takes neither for SASL; see docs/compatibility.md).
printf '[credentials-f]\npassword=%s\n[auth-libvirt-localhost]\ncredentials=f\n' \
    "$password" > "$RV_TMP/nameless.conf"
REMVIRT_AUTH_FILE=$RV_TMP/nameless.conf "$RVSH" -c "test+tcp://fred@localhost:$tcp_port/default" \
    hostname </dev/null >/dev/null || fail "the URI's user with the file's password"
printf '[credentials-f]\nusername=fred\npassword=%s\n[auth-libvirt-localhost]\ncredentials=f\n' \
    "$password" > "$RV_TMP/username.conf"
REMVIRT_AUTH_FILE=$RV_TMP/username.conf "$RVSH" -c "$tcp_uri" hostname </dev/null >/dev/null ||
    fail "username= in the auth file"
# The host's own group comes before [auth-libvirt-default] (which here
# has the wrong password).
sed 's/auth-libvirt-localhost/auth-libvirt-default/' "$RV_TMP/wrong.conf" > "$RV_TMP/hosts.conf"
cat >> "$RV_TMP/hosts.conf" <<EOF
[credentials-right]
authname=fred
password=$password
[auth-libvirt-127.0.0.1]
credentials=right
EOF
REMVIRT_AUTH_FILE=$RV_TMP/hosts.conf "$RVSH" -c "test+tcp://127.0.0.1:$tcp_port/default" \
    hostname </dev/null >/dev/null || fail "the host's group over the default one"
REMVIRT_AUTH_FILE=$RV_TMP/hosts.conf rvsh_fails "$RV_TMP/err" -c "$tcp_uri" hostname
expect_in "$RV_TMP/err" "authentication failed"

echo "---- a server that offers only polkit"
# A stand-in server: it answers AUTH_LIST with [polkit] (2), then hangs up.
"$PYTHON3" - "$RV_TMP/polkit-sock" <<'EOF' &
import socket, struct, sys
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(4)
listener.settimeout(60)
for _ in range(3):
    conn, _ = listener.accept()
    call = b""
    while len(call) < 28:
        call += conn.recv(28 - len(call))
    prog, vers, proc, kind, serial, status = struct.unpack(">6I", call[4:28])
    body = struct.pack(">6I", prog, vers, proc, 1, serial, 0) + struct.pack(">2I", 1, 2)
    conn.sendall(struct.pack(">I", 4 + len(body)) + body)
    conn.close()
EOF
polkit_pid=$!
wait_for 10 "the stand-in server" test -S "$RV_TMP/polkit-sock" || fail "no stand-in server"
rvsh_fails "$RV_TMP/err" -c "test+unix:///default?socket=$RV_TMP/polkit-sock" list
expect_in "$RV_TMP/err" \
    "the server requires authentication remvirt does not support (it offers: polkit)"
rvsh_fails "$RV_TMP/err" -c "test+unix:///default?socket=$RV_TMP/polkit-sock&auth=sasl" list
expect_in "$RV_TMP/err" "does not offer sasl authentication, which auth=sasl asks for"
rvsh_fails "$RV_TMP/err" -c "test+unix:///default?socket=$RV_TMP/polkit-sock&auth=kerberos" list
expect_in "$RV_TMP/err" "unknown authentication type auth=kerberos"
wait "$polkit_pid" || fail "the stand-in server failed"

# After all that, libvirtd still lets fred in.
"$RVSH" -c "$tcp_uri" list --all </dev/null | grep -qE '^ *1 +test +running' ||
    fail "a good client after the refusals"

echo "---- the terminal prompt"
: > "$RV_TMP/empty.conf"
# on_pty TRANSCRIPT SHELL-COMMAND [expect SEND]...: run the command on a
# new pty; each time the output so far ends with EXPECT, type SEND and
# Enter (SEND ending in "^C": the interrupt key instead of Enter).
# Everything shown on the terminal goes to TRANSCRIPT.
on_pty()
{
    "$PYTHON3" - "$@" <<'EOF'
import os, pty, select, sys, time
transcript, command, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", command])
seen = b""
deadline = time.monotonic() + 60
def read_some():
    global seen
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:            # EIO: the child side closed
            data = b""
        seen += data
        return data != b""
    return True
while steps:
    expect, send = steps[0].encode(), steps[1]
    if seen.rstrip(b" ").endswith(expect.rstrip(b" ")):
        if send.endswith("^C"):
            os.write(fd, send[:-2].encode() + b"\x03")
        else:
            os.write(fd, send.encode() + b"\r")
        steps = steps[2:]
        continue
    if time.monotonic() > deadline or not read_some():
        break
while time.monotonic() < deadline and read_some():
    pass
os.waitpid(pid, 0)
with open(transcript, "wb") as f:
    f.write(seen)
if steps:
    sys.exit(f"never saw {steps[0]!r}; the terminal showed {seen!r}")
EOF
}

# shellcheck disable=SC2016 # expanded by the shell on the pty
session='"$RVSH" -c "$PTY_URI" list --all; echo "status $?"; stty -a'
export RVSH REMVIRT_AUTH_FILE=$RV_TMP/empty.conf PTY_URI=$tcp_uri
on_pty "$RV_TMP/pty.out" "$session" \
    "Username for localhost:" fred "Password for fred@localhost:" "$password" ||
    fail "the prompt session"
cat "$RV_TMP/pty.out"
expect_in "$RV_TMP/pty.out" "Username for localhost: fred" "status 0"
grep -qE '^ *1 +test +running' "$RV_TMP/pty.out" || fail "no list after the prompt"
if grep -qF "$password" "$RV_TMP/pty.out"; then
    fail "the password was echoed"
fi
# stty -a after rvsh: echo, canonical input and signals are back on.
terminal_has()
{
    grep -qE "(^|[ ;])$1( |;|\$)" "$RV_TMP/pty.out"
}
terminal_has echo && terminal_has icanon && terminal_has isig ||
    fail "the terminal was left without echo"

# Ctrl-C at the password prompt: rvsh dies of SIGINT, the terminal is
# restored first, and what was typed is not shown.
on_pty "$RV_TMP/pty.out" "$session" \
    "Username for localhost:" fred "Password for fred@localhost:" "half-typed^C" ||
    fail "the interrupted prompt session"
cat "$RV_TMP/pty.out"
expect_in "$RV_TMP/pty.out" "status 130"
if grep -qF "half-typed" "$RV_TMP/pty.out"; then
    fail "the interrupted password was echoed"
fi
terminal_has echo && terminal_has icanon && terminal_has isig ||
    fail "Ctrl-C left the terminal without echo"

# no_tty=1: not asked even on a terminal.
PTY_URI="$tcp_uri?no_tty=1" on_pty "$RV_TMP/pty.out" "$session" ||
    fail "the no_tty session"
expect_in "$RV_TMP/pty.out" "no user name to log in to localhost with" "drop no_tty=1" "status 1"
if grep -qF "Username for" "$RV_TMP/pty.out"; then
    fail "asked on the terminal despite no_tty=1"
fi

echo "---- rv_connect_open_auth: the application's callback"
# Through Python's ctypes.  An ASan build of the library does not load
# into Python cleanly (its XDR calls crash under the preloaded runtime),
# so there this part is left to the plain and valgrind runs.
if ldd "$LIB" | grep -q libasan; then
    echo "skipped under ASan: rv_connect_open_auth through ctypes"
else
"$SYSTEM_PYTHON3" - "$LIB" "$tcp_uri" "$password" <<'EOF' || fail "rv_connect_open_auth"
import ctypes, sys
lib_path, uri, password = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
lib = ctypes.CDLL(lib_path)
libc = ctypes.CDLL(None)
libc.strdup.restype = ctypes.c_void_p
libc.strdup.argtypes = [ctypes.c_char_p]

class ErrorInfo(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("domain", ctypes.c_int), ("level", ctypes.c_int),
                ("message", ctypes.c_char_p)]

CALLBACK = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
lib.rv_connect_open_auth.restype = ctypes.c_void_p
lib.rv_connect_open_auth.argtypes = [ctypes.c_char_p, ctypes.c_uint, CALLBACK, ctypes.c_void_p]
lib.rv_connect_num_of_domains.argtypes = [ctypes.c_void_p]
lib.rv_connect_close.argtypes = [ctypes.c_void_p]
lib.rv_last_error.restype = ctypes.POINTER(ErrorInfo)
RV_CRED_AUTHNAME, RV_CRED_PASSPHRASE, RV_ERROR_AUTH_FAILED = 2, 5, 45

asked = []
def answer(kind, prompt, opaque):
    asked.append((kind, prompt.decode()))
    return libc.strdup(b"fred" if kind == RV_CRED_AUTHNAME else password)
callback = CALLBACK(answer)
conn = lib.rv_connect_open_auth(uri, 0, callback, None)
if not conn:
    sys.exit("open failed: " + lib.rv_last_error().contents.message.decode())
expected = [(RV_CRED_AUTHNAME, "Username for localhost"),
            (RV_CRED_PASSPHRASE, "Password for fred@localhost")]
if asked != expected:
    sys.exit(f"the callback was asked {asked}, expected {expected}")
if lib.rv_connect_num_of_domains(conn) != 1:
    sys.exit("no running domain over the authenticated connection")
lib.rv_connect_close(conn)

def give_up(kind, prompt, opaque):
    return None
refusing = CALLBACK(give_up)
if lib.rv_connect_open_auth(uri, 0, refusing, None):
    sys.exit("opened without credentials")
err = lib.rv_last_error().contents
message = err.message.decode()
print("    open_auth refused:", message)
if err.code != RV_ERROR_AUTH_FAILED or "the application gave none" not in message:
    sys.exit(f"unexpected error {err.code}: {message}")
EOF
fi
