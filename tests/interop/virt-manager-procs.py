#!/usr/bin/env python3
# Reads the log that libvirt's client library writes with
# LIBVIRT_LOG_FILTERS="1:rpc.netclient 1:util.error" and prints what a
# session did on the wire, for tests/interop/test-virt-manager.sh and
# bench/run-virt-manager-rtt.sh.
#
#   virt-manager-procs.py RV_REMOTE_X LOG            sorted unique lines:
#       call NAME        a remote procedure the client called
#       fail NAME        one that answered with an error
#       error MESSAGE    an error message the client got
#   virt-manager-procs.py --count [--since T --until T] RV_REMOTE_X LOG
#       "COUNT NAME" per procedure called, most called first, then
#       "total N"; only the calls queued between the times T (seconds
#       since the epoch) when given
#
# NAME is the procedure's name in protocol/rv_remote.x (RV_PROC_ dropped),
# or "proc N" for one remvirt does not know.
import collections
import datetime
import re
import sys

REMOTE_PROGRAM = 0x20008086

args = sys.argv[1:]
count_mode = args[0] == "--count"
since, until = float("-inf"), float("inf")
if count_mode:
    args.pop(0)
    if args[0] == "--since":
        since, until = float(args[1]), float(args[3])
        del args[:4]
spec, log = args


def stamp(line):
    """A log line's time ("2026-11-26 02:08:43.897+0000 ...") in seconds
    since the epoch."""
    when = datetime.datetime.strptime(line[:28], "%Y-%m-%d %H:%M:%S.%f%z")
    return when.timestamp()


names = {}
with open(spec) as f:
    for m in re.finditer(r"\bRV_PROC_(\w+)\s*=\s*(\d+)", f.read()):
        names[int(m.group(2))] = m.group(1)


def name(proc):
    return names.get(proc, "proc %d" % proc)


field = re.compile(r"(\w+)=(\S+)")
calls = collections.Counter()
lines = set()
with open(log, errors="replace") as f:
    for line in f:
        if "RPC_CLIENT_MSG_TX_QUEUE" in line or "RPC_CLIENT_MSG_RX" in line:
            fields = dict(field.findall(line.split(": RPC_CLIENT_MSG_", 1)[1]))
            if int(fields["prog"]) != REMOTE_PROGRAM:
                continue        # keepalive
            proc = int(fields["proc"])
            # type 0: a call; on RX, type 1 a reply, status 1 an error.
            if "TX_QUEUE" in line and fields["type"] == "0":
                if since <= stamp(line) <= until:
                    calls[name(proc)] += 1
                lines.add("call " + name(proc))
            elif "RX" in line and fields["type"] == "1" and fields["status"] == "1":
                lines.add("fail " + name(proc))
        elif ": error : " in line:
            message = line.split(": error : ", 1)[1].strip()
            # Drop the reporting function's name and line.
            message = re.sub(r"^\w+:\d+ : ", "", message)
            lines.add("error " + message)

if count_mode:
    for proc, n in calls.most_common():
        print(n, proc)
    print("total", sum(calls.values()))
else:
    for line in sorted(lines):
        print(line)
