#!/usr/bin/env bash
# An SSH server chooses the name, the instruction and the prompts of a
# keyboard-interactive exchange, and rvsh shows them on the user's
# terminal.  A hostile server (paramiko) puts escape sequences in all
# three: clear the screen, set the window title, hide what follows, a C1
# CSI, a bare carriage return to overwrite the line.  rvsh must show them
# escaped, keep the instruction's own lines, and still ask and answer.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires "$SYSTEM_PYTHON3" -c "import paramiko"
requires "$PYTHON3" -c "import pty"

port=$(free_port)
"$SYSTEM_PYTHON3" - "$port" "$RV_TMP" <<'PY' &
import socket, sys, threading, paramiko

port, tmp = int(sys.argv[1]), sys.argv[2]
key = paramiko.RSAKey.generate(2048)

class Hostile(paramiko.ServerInterface):
    def get_allowed_auths(self, username):
        return "keyboard-interactive"

    def check_auth_interactive(self, username, submethods):
        q = paramiko.InteractiveQuery(
            "Evil\x1b[2J\x1b[H",
            "Line one\nLine two\x1b]0;pwned\x07\rFAKE \u009b31m red",
        )
        q.add_prompt("Code\x1b[8m: ", True)
        return q

    def check_auth_interactive_response(self, responses):
        with open(f"{tmp}/answers", "a") as f:
            f.write(repr(list(responses)) + "\n")
        return paramiko.AUTH_FAILED

def serve(conn):
    t = paramiko.Transport(conn)
    t.add_server_key(key)
    try:
        t.start_server(server=Hostile())
        t.accept(20)
    except Exception:
        pass
    t.close()

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(4)
open(f"{tmp}/ready", "w").close()
srv.settimeout(60)
while True:
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        break
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
server_pid=$!
cleanup_fn kill "$server_pid"
wait_for 20 "the hostile SSH server" test -e "$RV_TMP/ready" || fail "the server did not start"

uri="test+ssh://root@127.0.0.1:$port/default?socket=/nonexistent&known_hosts_verify=ignore"
uri+="&sshauth=keyboard-interactive"
"$PYTHON3" - "$RVSH" "$uri" > "$RV_TMP/terminal" <<'PY' || fail "rvsh on the terminal"
import os, pty, select, sys, time
rvsh, uri = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(rvsh, [rvsh, "-c", uri, "list", "--all"])
out, answered, deadline = b"", False, time.time() + 60
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
    if not answered and b"Code" in out and out.rstrip().endswith(b":"):
        os.write(fd, b"123456\n")
        answered = True
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
PY
grep -q "'123456'" "$RV_TMP/answers" || fail "rvsh did not answer the prompt"
text=$(cat "$RV_TMP/terminal")
for shown in 'Evil\x1b[2J\x1b[H' 'Line two\x1b]0;pwned\x07\rFAKE \xc2\x9b31m red' 'Code\x1b[8m: '; do
    grep -qF -- "$shown" <<<"$text" || fail "the terminal does not show '$shown' escaped"
done
# The instruction's own line break stays one.
grep -q "^Line one"$'\r'"\?$" "$RV_TMP/terminal" || fail "the instruction lost its lines"
# Nothing the server sent reached the terminal raw: no ESC, BEL or C1
# CSI, and every carriage return is the terminal's own before a newline.
if LC_ALL=C grep -q $'[\x1b\x07]\|\xc2\x9b' "$RV_TMP/terminal"; then
    fail "control characters from the server reached the terminal"
fi
if LC_ALL=C sed 's/\r$//' "$RV_TMP/terminal" | LC_ALL=C grep -q $'\r'; then
    fail "a bare carriage return reached the terminal"
fi
echo "ok: keyboard-interactive texts are shown escaped"
