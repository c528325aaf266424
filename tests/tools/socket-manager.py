#!/usr/bin/env python3
"""A stand-in for systemd's socket units, for tests: no running systemd.

    socket-manager.py DIR NAME=PATH... -- COMMAND ARG...

Binds and listens on each PATH (a Unix socket) and holds them for its whole
life, as systemd holds a socket unit's socket.  Then, again and again, it
runs systemd-socket-activate (Debian's systemd package) with those sockets
passed to it (LISTEN_FDS, named NAME with --fdname): that waits for the
next connection on any of them and execs COMMAND with the sockets as
LISTEN_FDS/LISTEN_FDNAMES and NOTIFY_SOCKET set.  When COMMAND exits, the
sockets are still here, so the next connection starts it again: what a
socket-activated service with an idle exit lives on.

In DIR it writes:
  notify      every sd_notify datagram received, one per line ("\\n" in a
              datagram written as a space)
  runs        "exit STATUS" each time COMMAND ended
SIGTERM passes SIGTERM to the running COMMAND, waits for it and exits.
"""
import os
import signal
import socket
import subprocess
import sys
import threading


def main():
    args = sys.argv[1:]
    if "--" not in args or len(args) < 3:
        sys.exit(__doc__)
    split = args.index("--")
    outdir, specs, command = args[0], args[1:split], args[split + 1:]

    names, socks = [], []
    for spec in specs:
        name, path = spec.split("=", 1)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.listen(64)
        names.append(name)
        socks.append(s)
    # The protocol's fds start at 3, in the order of the names.
    for i, s in enumerate(socks):
        os.dup2(s.fileno(), 3 + i)
        os.set_inheritable(3 + i, True)
    fds = list(range(3, 3 + len(socks)))

    notify_path = os.path.join(outdir, "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify_log = open(os.path.join(outdir, "notify"), "a", buffering=1)

    def read_notifications():
        while True:
            data = notify.recv(4096)
            notify_log.write(data.decode(errors="replace").replace("\n", " ") + "\n")

    threading.Thread(target=read_notifications, daemon=True).start()

    # What the command needs from this environment; systemd-socket-activate
    # passes on only what -E names.
    setenv = ["-E", "NOTIFY_SOCKET=" + notify_path]
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if var in os.environ:
            setenv += ["-E", var + "=" + os.environ[var]]
    # LISTEN_PID must be the pid that will receive the sockets: the shell
    # sets it to its own and execs, keeping that pid.
    launcher = ["sh", "-c", 'LISTEN_PID=$$ exec "$@"', "sh",
                "systemd-socket-activate", "--fdname=" + ":".join(names)] + setenv + command
    env = dict(os.environ, LISTEN_FDS=str(len(fds)))
    env.pop("LISTEN_FDNAMES", None)
    runs = open(os.path.join(outdir, "runs"), "a", buffering=1)

    child = None
    stopping = False

    def on_term(signum, frame):
        nonlocal stopping
        stopping = True
        if child and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)
    while not stopping:
        child = subprocess.Popen(launcher, env=env, pass_fds=fds)
        status = child.wait()
        runs.write("exit %d\n" % status)
    sys.exit(0)


if __name__ == "__main__":
    main()
