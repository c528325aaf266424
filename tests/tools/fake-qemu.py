#!/usr/bin/env python3
# A stand-in for qemu-system-x86_64 that speaks just enough QMP for the
# QEMU driver, to make the events a guest OS would cause without one:
#   system_powerdown  answers, then POWERDOWN, SHUTDOWN (guest: true) and
#                     STOP, as a guest that powers off on the ACPI button
#                     under -no-shutdown
#   system_reset      answers, then RESET
#   SIGUSR1           GUEST_PANICKED
#   SIGUSR2           the events in the file PATH.inject (PATH: the -qmp
#                     socket), one JSON object {"event": NAME, "data": ...}
#                     a line, as QEMU would send them for a guest's doing
#   query-named-block-nodes  a "file" node for each -drive file=...
#   stop / cont       STOP / RESUME; quit exits; query-status the state
# Anything else is answered with an empty return.  -version prints a
# QEMU-like version line.  With FAKE_QEMU_SILENT=1 in its environment it
# never greets: a start that hangs.  Only for tests (test-qemu-events.sh).
import json
import os
import signal
import socket
import sys
import time

if "-version" in sys.argv:
    print("QEMU emulator version 7.2.0 (fake-qemu.py)")
    sys.exit(0)

path = None
for i, arg in enumerate(sys.argv):
    if arg == "-qmp":
        path = sys.argv[i + 1].split(",")[0][len("unix:"):]
if not path:
    sys.exit("fake-qemu: no -qmp unix:PATH")

server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(1)
status = "prelaunch"
conn = None


def send(obj):
    conn.sendall((json.dumps(obj) + "\r\n").encode())


def event(name, data=None):
    now = time.time()
    msg = {"event": name, "timestamp": {"seconds": int(now), "microseconds": 0}}
    if data is not None:
        msg["data"] = data
    send(msg)


# The block nodes QEMU would name for each -drive's file.
nodes = []
for i, arg in enumerate(sys.argv):
    if arg == "-drive":
        opts = dict(o.split("=", 1) for o in sys.argv[i + 1].split(",") if "=" in o)
        if "file" in opts:
            nodes.append({"node-name": "#block%d" % (100 + len(nodes)), "drv": "file",
                          "file": opts["file"]})

panic = False
inject = False
decoder = json.JSONDecoder()


def on_usr1(signum, frame):
    global panic
    panic = True


def on_usr2(signum, frame):
    global inject
    inject = True


signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGUSR2, on_usr2)

while True:
    conn, _ = server.accept()
    if os.environ.get("FAKE_QEMU_SILENT"):
        while True:
            time.sleep(1)
    send({"QMP": {"version": {"qemu": {"major": 7, "minor": 2, "micro": 0}, "package": ""},
                  "capabilities": []}})
    buf = ""
    conn.settimeout(0.05)
    while True:
        if panic:
            panic = False
            event("GUEST_PANICKED", {"action": "pause"})
            status = "guest-panicked"
        if inject:
            inject = False
            with open(path + ".inject") as f:
                for line in f:
                    if line.strip():
                        ev = json.loads(line)
                        event(ev["event"], ev.get("data"))
        try:
            data = conn.recv(4096)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if not data:
            break
        buf += data.decode()
        # Commands are a JSON stream, newlines optional (as QEMU takes them).
        while buf.strip():
            try:
                cmd, end = decoder.raw_decode(buf.lstrip())
            except ValueError:
                break
            buf = buf.lstrip()[end:]
            name = cmd.get("execute")
            reply = {"return": {}}
            if "id" in cmd:
                reply["id"] = cmd["id"]
            if name == "query-status":
                reply["return"] = {"status": status, "running": status == "running"}
            elif name == "query-named-block-nodes":
                reply["return"] = nodes
            send(reply)
            if name == "cont":
                status = "running"
                event("RESUME")
            elif name == "stop":
                status = "paused"
                event("STOP")
            elif name == "system_powerdown":
                event("POWERDOWN")
                status = "shutdown"
                event("SHUTDOWN", {"guest": True, "reason": "guest-shutdown"})
                event("STOP")
            elif name == "system_reset":
                event("RESET", {"guest": False, "reason": "host-qmp-system-reset"})
            elif name == "quit":
                event("SHUTDOWN", {"guest": False, "reason": "host-qmp-quit"})
                conn.close()
                os.unlink(path)
                sys.exit(0)
    conn.close()
