#!/usr/bin/env bash
# rvsh to remvirtd over SSH (libssh2) through an OpenSSH server the test
# starts on a loopback port.  Good paths: a key file, ssh-agent, a password
# typed on a terminal; known_hosts_verify normal, auto (the file gains the
# key) and ignore; the channel joined to the socket by nc -U and by
# remvirt-ssh-helper; many threads on one SSH connection.  Bad paths each
# fail with an error that names the cause: host key mismatch, unknown
# host, authentication failed, remote command missing (its stderr shows),
# remote socket missing.  remvirtd keeps serving its other clients.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires ssh-keygen
requires ssh-agent
requires ssh-add
requires nc
[ -x "$RVSH" ] || fail "$RVSH is not built"
HELPER=$top_builddir/remvirt-ssh-helper
[ -x "$HELPER" ] || fail "$HELPER is not built"

start_remvirtd
start_sshd "PasswordAuthentication yes"

HOST_NAME="[127.0.0.1]:$SSHD_PORT"
BASE="test+ssh://root@127.0.0.1:$SSHD_PORT/default?socket=$REMVIRTD_SOCK&no_tty=1"
GOOD="$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$SSH_KNOWN_HOSTS"

# list_ok NAME URI: rvsh lists the test driver's domain over the URI.
list_ok()
{
    local name=$1 uri=$2 rc=0
    "$RVSH" -c "$uri" list --all > "$RV_TMP/out" 2> "$RV_TMP/err" || rc=$?
    if [ "$rc" -ne 0 ] || ! grep -Eq '^ *1 +test +running *$' "$RV_TMP/out"; then
        cat "$RV_TMP/out" "$RV_TMP/err" >&2
        _rv_show_file "$SSHD_LOG"
        fail "$name: rvsh list over SSH exited $rc without the domain"
    fi
    echo "ok   $name"
}

# list_fails NAME REGEX URI: rvsh fails and its error matches REGEX.
list_fails()
{
    local name=$1 re=$2 uri=$3 rc=0
    "$RVSH" -c "$uri" list --all > "$RV_TMP/out" 2> "$RV_TMP/err" || rc=$?
    if [ "$rc" -ne 1 ]; then
        cat "$RV_TMP/out" "$RV_TMP/err" >&2
        fail "$name: rvsh exited $rc, not 1"
    fi
    if ! grep -Eq -- "$re" "$RV_TMP/err"; then
        cat "$RV_TMP/err" >&2
        fail "$name: no error matching '$re'"
    fi
    echo "ok   $name: $(grep -E -- "$re" "$RV_TMP/err" | head -n 1)"
}

# ---------------------------------------------------------------- good paths
list_ok "privkey, remvirt-ssh-helper (proxy=native)" "$GOOD&sshauth=privkey&proxy=native"
list_ok "privkey, nc -U (proxy=netcat)" "$GOOD&sshauth=privkey&proxy=netcat"
list_ok "netcat=nc" "$GOOD&netcat=nc"
list_ok "proxy=auto (the helper is on the remote PATH)" "$GOOD"
list_ok "test+libssh2://" "${GOOD/test+ssh:/test+libssh2:}"

# auto: an empty file gains the host's key, in OpenSSH's form; normal
# then accepts it.
: > "$RV_TMP/kh_auto"
list_ok "known_hosts_verify=auto, empty file" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_auto&known_hosts_verify=auto"
want="$HOST_NAME $(cut -d' ' -f1,2 "$SSHD_HOST_KEY_PUB")"
grep -qxF "$want" "$RV_TMP/kh_auto" || { cat "$RV_TMP/kh_auto"; fail "auto did not add '$want'"; }
[ "$(wc -l < "$RV_TMP/kh_auto")" -eq 1 ] || fail "auto wrote more than one line"
list_ok "known_hosts_verify=normal with the added key" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_auto"
list_ok "known_hosts_verify=auto, host already known" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_auto&known_hosts_verify=auto"
[ "$(wc -l < "$RV_TMP/kh_auto")" -eq 1 ] || fail "auto added a host that was known"

# A file whose key for the host is another one.
ssh-keygen -q -t ed25519 -N '' -f "$RV_TMP/other_host_key"
echo "$HOST_NAME $(cut -d' ' -f1,2 "$RV_TMP/other_host_key.pub")" > "$RV_TMP/kh_wrong"
list_ok "known_hosts_verify=ignore, wrong key in the file" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_wrong&known_hosts_verify=ignore"

# ssh-agent: a key the server refuses first, then the right one.
ssh-keygen -q -t ed25519 -N '' -f "$RV_TMP/stranger_key"
eval "$(ssh-agent -s -a "$RV_TMP/agent.sock")" > /dev/null
cleanup_fn kill "$SSH_AGENT_PID"
ssh-add -q "$RV_TMP/stranger_key" 2> /dev/null
ssh-add -q "$SSH_CLIENT_KEY" 2> /dev/null
list_ok "ssh-agent (sshauth=agent)" \
    "$BASE&known_hosts=$SSH_KNOWN_HOSTS&sshauth=agent"
ssh-add -q -d "$SSH_CLIENT_KEY.pub" 2> /dev/null
list_fails "ssh-agent without the authorized key" \
    "authentication failed for user 'root' on '\[127\.0\.0\.1\]:$SSHD_PORT' \(tried: agent \(1 key rejected\)" \
    "$BASE&known_hosts=$SSH_KNOWN_HOSTS&sshauth=agent"
unset SSH_AUTH_SOCK

# Many threads and large messages on one SSH connection, remvirtd
# pausing its reads (max_client_requests) while writers are blocked.
threads=$top_builddir/tests/integration/client-threads
backpressure=$top_builddir/tests/integration/client-backpressure
if [ -x "$threads" ] && [ -x "$backpressure" ]; then
    "$threads" "$GOOD&proxy=native"
    "$backpressure" "$GOOD&proxy=native" "$([ -n "${RV_VALGRIND:-}" ] && echo 10 || echo 100)"
    "$backpressure" "$GOOD&proxy=netcat" "$([ -n "${RV_VALGRIND:-}" ] && echo 10 || echo 50)"
else
    echo "skip client-threads and client-backpressure over SSH: not built (make check builds them)"
fi

# ---------------------------------------------------------------- bad paths
list_fails "host key mismatch" \
    "host key verification failed: the key of '\[127\.0\.0\.1\]:$SSHD_PORT' does not match $RV_TMP/kh_wrong \(possible man-in-the-middle\)" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_wrong"
list_fails "host key mismatch, auto" \
    "host key verification failed: the key of '\[127\.0\.0\.1\]:$SSHD_PORT' does not match" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_wrong&known_hosts_verify=auto"
: > "$RV_TMP/kh_empty"
list_fails "unknown host (normal)" \
    "host key for '\[127\.0\.0\.1\]:$SSHD_PORT' is not in $RV_TMP/kh_empty" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/kh_empty"
[ ! -s "$RV_TMP/kh_empty" ] || fail "normal mode wrote to the known_hosts file"
list_fails "unknown host, no known_hosts file" \
    "host key for '\[127\.0\.0\.1\]:$SSHD_PORT' is not in $RV_TMP/missing" \
    "$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP/missing"
list_fails "authentication failed (key not authorized)" \
    "authentication failed for user 'root' on '\[127\.0\.0\.1\]:$SSHD_PORT' \(tried: privkey \($RV_TMP/stranger_key rejected\)" \
    "$BASE&keyfile=$RV_TMP/stranger_key&known_hosts=$SSH_KNOWN_HOSTS&sshauth=privkey"
list_fails "authentication failed (no_tty, password only)" \
    "authentication failed for user 'root' .*tried: password \(no_tty forbids asking for it\)" \
    "$BASE&known_hosts=$SSH_KNOWN_HOSTS&sshauth=password"
list_fails "remote command missing (netcat=/nonexistent)" \
    "/nonexistent: (No such file or directory|not found).*exit(ed with)? status 127" \
    "$GOOD&netcat=/nonexistent"
list_fails "remote socket missing (remvirt-ssh-helper)" \
    "remvirt-ssh-helper: cannot connect to $RV_TMP/nosuch-sock: No such file or directory.*status 1" \
    "${GOOD/socket=$REMVIRTD_SOCK/socket=$RV_TMP/nosuch-sock}&proxy=native"
list_fails "remote socket missing (nc -U)" \
    "nc: .*$RV_TMP/nosuch-sock.*No such file or directory" \
    "${GOOD/socket=$REMVIRTD_SOCK/socket=$RV_TMP/nosuch-sock}&proxy=netcat"

# ---------------------------------------------------------------- @revoked and @cert-authority
# libssh2 cannot parse marker lines; remvirt reads them itself.  A revoked
# key is refused in every mode, as OpenSSH's ssh refuses it ("was
# revoked"), and the file is left alone; a revocation for another key or
# another host does not count.  @cert-authority is not supported, and the
# error says so.
HOST_KEY="$(cut -d' ' -f1,2 "$SSHD_HOST_KEY_PUB")"
OTHER_KEY="$(cut -d' ' -f1,2 "$RV_TMP/other_host_key.pub")"
KH_BASE="$BASE&keyfile=$SSH_CLIENT_KEY&known_hosts=$RV_TMP"
# ssh_says OUTCOME FILE: OpenSSH's client with the same file agrees.
ssh_says()
{
    local rc=0
    ssh -F none -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$2" \
        -o GlobalKnownHostsFile=/dev/null -o IdentitiesOnly=yes -i "$SSH_CLIENT_KEY" \
        -p "$SSHD_PORT" root@127.0.0.1 true > "$RV_TMP/ssh.out" 2>&1 || rc=$?
    if [ "$1" = refuses ]; then
        [ "$rc" -ne 0 ] && grep -q "revoked" "$RV_TMP/ssh.out" ||
            { cat "$RV_TMP/ssh.out" >&2; fail "ssh does not refuse with $2"; }
    else
        [ "$rc" -eq 0 ] || { cat "$RV_TMP/ssh.out" >&2; fail "ssh does not connect with $2"; }
    fi
}

echo "@revoked $HOST_NAME $HOST_KEY" > "$RV_TMP/kh_revoked"
cp "$RV_TMP/kh_revoked" "$RV_TMP/kh_revoked.orig"
list_fails "@revoked only, auto" \
    "host key verification failed: the ED25519 key SHA256:[^ ]+ of '\[127\.0\.0\.1\]:$SSHD_PORT' was revoked \(@revoked in $RV_TMP/kh_revoked, line 1\)" \
    "$KH_BASE/kh_revoked&known_hosts_verify=auto"
cmp -s "$RV_TMP/kh_revoked" "$RV_TMP/kh_revoked.orig" || fail "auto added a revoked key to the file"
list_fails "@revoked only, ignore" "was revoked \(@revoked in $RV_TMP/kh_revoked, line 1\)" \
    "$KH_BASE/kh_revoked&known_hosts_verify=ignore"
ssh_says refuses "$RV_TMP/kh_revoked"

printf '%s\n' "$HOST_NAME $HOST_KEY" "# revoked everywhere" "@revoked * $HOST_KEY # old key" \
    > "$RV_TMP/kh_revoked_star"
list_fails "@revoked * beside a plain line, normal" \
    "was revoked \(@revoked in $RV_TMP/kh_revoked_star, line 3\)" "$KH_BASE/kh_revoked_star"
ssh_says refuses "$RV_TMP/kh_revoked_star"

# A hashed host name, as ssh-keygen -H writes it.
echo "$HOST_NAME $HOST_KEY" > "$RV_TMP/kh_hashed"
ssh-keygen -q -H -f "$RV_TMP/kh_hashed" > /dev/null 2>&1
grep -q '^|1|' "$RV_TMP/kh_hashed" || fail "ssh-keygen -H did not hash the host name"
sed 's/^/@revoked /' "$RV_TMP/kh_hashed" >> "$RV_TMP/kh_hashed"
list_fails "@revoked with a hashed host name" \
    "was revoked \(@revoked in $RV_TMP/kh_hashed, line 2\)" "$KH_BASE/kh_hashed"
ssh_says refuses "$RV_TMP/kh_hashed"

# Not this key, not this host, this host excluded: the plain line counts.
printf '%s\n' "@revoked * $OTHER_KEY" "@revoked otherhost,[127.0.0.1]:1 $HOST_KEY" \
    "@revoked *,!$HOST_NAME $HOST_KEY" "$HOST_NAME $HOST_KEY" > "$RV_TMP/kh_not_us"
list_ok "@revoked lines for another key or other hosts" "$KH_BASE/kh_not_us"
ssh_says connects "$RV_TMP/kh_not_us"

echo "@cert-authority $HOST_NAME $OTHER_KEY" > "$RV_TMP/kh_ca"
list_fails "@cert-authority only" \
    "is not in $RV_TMP/kh_ca.*line 1 is a @cert-authority line, which remvirt does not support" \
    "$KH_BASE/kh_ca"

# ---------------------------------------------------------------- a password on a terminal
# A user of its own with a password; rvsh runs on a pseudo-terminal that
# answers the prompt, wrongly once.  The password must never be echoed.
if command -v useradd > /dev/null && command -v chpasswd > /dev/null; then
    pw_user=rvssh$$
    pw_pass="pw-$RANDOM-$RANDOM-test"
    useradd -M -s /bin/sh "$pw_user"
    cleanup_fn userdel "$pw_user"
    echo "$pw_user:$pw_pass" | chpasswd
    # The user reaches the read-only socket (mode 0777) through RV_TMP.
    chmod o+x "$RV_TMP" "$REMVIRTD_DIR"
    pw_uri="test+ssh://$pw_user@127.0.0.1:$SSHD_PORT/default?socket=$REMVIRTD_SOCK_RO"
    pw_uri+="&known_hosts=$SSH_KNOWN_HOSTS&sshauth=password"
    "$PYTHON3" - "$RVSH" "$pw_uri" "$pw_pass" <<'PY'
import os, pty, re, select, sys, time
rvsh, uri, password = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(rvsh, [rvsh, "-c", uri, "list", "--all"])
out, answers, deadline = b"", [b"wrong-password", password.encode()], time.time() + 60
while time.time() < deadline:
    if not select.select([fd], [], [], 1)[0]:
        continue
    try:
        data = os.read(fd, 4096)
    except OSError:             # EIO: the child closed the terminal
        break
    if not data:
        break
    out += data
    prompts = out.count(b"'s password: ")
    while answers and prompts > 2 - len(answers):
        os.write(fd, answers.pop(0) + b"\n")
status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
text = out.decode(errors="replace")
print(text)
if status != 0 or not re.search(r"^ *1 +test +running *\r?$", text, re.M):
    sys.exit(f"FAIL: rvsh with a password exited {status}")
if "Permission denied, please try again." not in text:
    sys.exit("FAIL: the wrong password was not refused")
if password in text or "wrong-password" in text:
    sys.exit("FAIL: a password was echoed")
print("ok   password on a terminal (one wrong try, nothing echoed)")
PY
else
    echo "skip password: useradd or chpasswd missing"
fi

# ---------------------------------------------------------------- remvirtd is fine
remvirtd_alive || fail "remvirtd died"
list_ok "remvirtd still serves Unix clients" "$REMVIRTD_URI"
list_ok "and SSH clients" "$GOOD"
stop_remvirtd
