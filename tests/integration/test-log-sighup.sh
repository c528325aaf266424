#!/usr/bin/env bash
# SIGHUP: a logrotate-style rename plus SIGHUP loses no line (every call's
# dispatch line is in the old file or the new one, exactly once) and drops
# no client; a changed logging key in remvirtd.conf is applied and the
# change logged; a broken file changes nothing; what is batched reaches the
# file on SIGTERM.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd 'log_filters = "1:server.dispatch 2:server"' \
    "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\""

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_LOG" "$REMVIRTD_PID" <<'PY'
import os, re, signal, sys, time
import rawclient as rc

path, log, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = rc.Client(path)
c.open_connection()
for i in range(150):
    c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)
os.rename(log, log + ".1")
os.kill(pid, signal.SIGHUP)
for i in range(150):
    c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME)
rc.expect_usable(c, "the client across the SIGHUP")
last = c.serial

def lines():
    text = ""
    for name in (log + ".1", log):
        if os.path.exists(name):
            with open(name, errors="replace") as f:
                text += f.read()
    return text

# The daemon writes its batch before the loop sleeps: allow it a moment.
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    seen = re.findall(r"prog=0x20008086 vers=1 proc=59 type=0 serial=(\d+) ", lines())
    if str(last) in seen:
        break
    time.sleep(0.1)
counts = {}
for s in seen:
    counts[int(s)] = counts.get(int(s), 0) + 1
missing = [s for s in range(3, last + 1) if counts.get(s) != 1]
rc.check(not missing, f"each of the {last - 2} calls' dispatch lines is logged exactly once "
                      f"across the rename (missing or doubled: {missing[:10]})")
with open(log + ".1") as f:
    old = f.read()
with open(log) as f:
    new = f.read()
rc.check("serial=3 " in old and f"serial={last} " in new,
         "the first calls are in the renamed file, the last in the new one")
rc.check("SIGHUP: done; 1 clients still connected" in new, "the SIGHUP is logged in the new file")
# Each call's end at debug in server.dispatch: procedure, serial, client,
# result and duration.
rc.check(re.search(r": debug : server.dispatch : log_call_done:\d+ : client \d+: "
                   r"CONNECT_GET_HOSTNAME serial 3: ok in \d+ us\n", old),
         "the dispatch category logs each call's procedure, serial, client, result, duration")
serial = c.send_call(rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("no-such-domain"))
c.recv_reply()
c.close()
deadline = time.monotonic() + 10
pattern = (rf"DOMAIN_LOOKUP_BY_NAME serial {serial}: error {rc.ERR_NO_DOMAIN} "
           r"\(.+\) in \d+ us")
while time.monotonic() < deadline and not re.search(pattern, lines()):
    time.sleep(0.1)
rc.check(re.search(pattern, lines()), "a failed call is logged with its error code and message")
while time.monotonic() < deadline and "closing: " not in lines():
    time.sleep(0.1)
rc.check(re.search(r": info : server.client : rvs_client_close:\d+ : client \d+ .*closing: ",
                   lines()), "a client's close is logged at info")
PY

# A changed key is applied and logged; the others are left alone.
sed -i 's/^log_filters = .*/log_filters = "1:server.reload 2:server"/' "$REMVIRTD_CONF"
kill -HUP "$REMVIRTD_PID"
changed() { grep -qs 'SIGHUP: log_filters changed from "1:server.dispatch 2:server" to "1:server.reload 2:server"' "$REMVIRTD_LOG"; }
wait_for "$RV_TIMEOUT" "the filter change to be logged" changed
if grep -q "log_outputs changed" "$REMVIRTD_LOG"; then
    fail "log_outputs did not change, yet a change was logged"
fi
echo "ok   SIGHUP applies a changed log_filters and logs the change"
if command -v virt-admin >/dev/null; then
    grep -qF "1:*server.reload* 2:*server*" <<<"$(virt-admin -c "$REMVIRTD_ADMIN_URI" daemon-log-filters)" ||
        fail "virt-admin does not show the reloaded filters"
    echo "ok   virt-admin shows the reloaded filters"
fi

# A broken file: an error in the log, nothing changes, the daemon serves on.
echo 'log_filters = ' >> "$REMVIRTD_CONF"
kill -HUP "$REMVIRTD_PID"
refused() { grep -qs "the logging settings stay as they are" "$REMVIRTD_LOG"; }
wait_for "$RV_TIMEOUT" "the broken file to be reported" refused
"$RVSH" -c "$REMVIRTD_URI" hostname > /dev/null || fail "remvirtd stopped serving after a bad SIGHUP"
echo "ok   a broken remvirtd.conf on SIGHUP is reported and changes nothing"

# SIGTERM: the batch is written before the daemon exits.
stop_remvirtd
tail -1 "$REMVIRTD_LOG" | grep -q "remvirtd stopped" || fail "the last line is not 'remvirtd stopped'"
echo "ok   the last message reaches the file on SIGTERM"
