#!/usr/bin/env bash
# max_clients = 5: the 6th connection is closed at once and the log says
# why; the 5 keep working, and once one leaves a new client gets in.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
# Info and above from every category, so the refusal is logged whatever
# level it uses below warning.
start_remvirtd 'max_clients = 5' 'log_filters = "2:server"'

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_LOG" "$RVSH" "$REMVIRTD_URI" <<'PY'
import os, subprocess, sys, time
import rawclient as rc

path, log, rvsh, uri = sys.argv[1:]

def log_size():
    return os.path.getsize(log) if os.path.exists(log) else 0

five = []
for i in range(5):
    c = rc.Client(path)
    c.open_connection()
    five.append(c)
rc.check(True, "5 clients connected and opened")

logged_before = log_size()
sixth = rc.Client(path)
rc.check(sixth.wait_closed(3), "the 6th client is closed at once")
sixth.close()

# The reason reaches the log (it is batched: allow a moment).
deadline = time.monotonic() + 5
reason = []
while time.monotonic() < deadline and not reason:
    with open(log, errors="replace") as f:
        f.seek(logged_before)
        reason = [l for l in f if "max_clients" in l.lower() or "too many clients" in l.lower()]
    time.sleep(0.1)
rc.check(bool(reason), "the log says why: " + (reason[0].strip() if reason else "(nothing)"))

# A real client at the limit fails at once, and its error names the cause.
started = time.monotonic()
run = subprocess.run([rvsh, "-c", uri, "list"], capture_output=True, text=True, timeout=30)
took = time.monotonic() - started
rc.check(run.returncode == 1 and "max_clients" in run.stderr and took < 5,
         f"rvsh at the limit fails in {took:.1f} s naming max_clients: {run.stderr.strip()!r}")

for i, c in enumerate(five):
    rc.expect_usable(c, f"client {i + 1} of 5")

# One leaves; its slot frees once the daemon has seen the close.
five.pop().close()
c = rc.connect_when_admitted(path, 5, "after a client left")
rc.expect_usable(c, "a new client after one left")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
