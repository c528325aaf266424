#!/usr/bin/python3
"""Drive an interactive console client (virsh console, rvsh console) on a
pseudo-terminal, as a person at a terminal would (test-qemu-console.sh).

    console-driver.py OUT RESET_CMD -- CLIENT ARG...

Starts CLIENT on a new pty and waits for its banner; runs RESET_CMD (a
shell command that resets the guest, so that it boots again while the
console is attached) and waits for the guest's "remvirt-test-guest:
ready"; types a line and waits for the guest's tty to echo it back; then
types ^] and expects the client to exit 0.  Everything the client
printed goes to OUT.  Exit 0 on success, 1 with the reason.
"""

import os
import pty
import select
import subprocess
import sys
import time

out_path, reset_cmd = sys.argv[1], sys.argv[2]
client = sys.argv[sys.argv.index("--") + 1:]
seen = b""


def pump(fd, seconds):
    """Read what the client prints for up to `seconds`."""
    global seen
    r, _, _ = select.select([fd], [], [], seconds)
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        seen += data
        with open(out_path, "ab") as f:
            f.write(data)
        return len(data) > 0
    return True


def wait_for(fd, text, seconds, poke=None):
    deadline = time.monotonic() + seconds
    next_poke = 0
    while text not in seen:
        if time.monotonic() > deadline:
            sys.exit(f"FAIL: no {text!r} within {seconds} s")
        if poke and time.monotonic() >= next_poke:
            poke()
            next_poke = time.monotonic() + 2
        if not pump(fd, 0.2):
            sys.exit(f"FAIL: the client ended before {text!r}")


pid, fd = pty.fork()
if pid == 0:
    os.execvp(client[0], client)
wait_for(fd, b"Escape character is ^]", 30)
if subprocess.call(reset_cmd, shell=True) != 0:
    sys.exit("FAIL: the reset command failed")
wait_for(fd, b"remvirt-test-guest: ready", 300)
print("ok   the console shows the guest's output")
# The guest's tty echoes what it receives: proof that input reaches it.
wait_for(fd, b"remvirt-console-input-42", 60,
         poke=lambda: os.write(fd, b"remvirt-console-input-42\r"))
print("ok   the guest received the console's input (its tty echoed it)")
os.write(fd, b"\x1d")
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"FAIL: the client exited with {code} after ^]")
        print("ok   ^] ends the console session")
        sys.exit(0)
    pump(fd, 0.2)
sys.exit("FAIL: the client did not exit after ^]")
