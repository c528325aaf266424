#!/usr/bin/env bash
# Length words the daemon must refuse before reading or allocating
# anything more: 0, 3, 27 (under the 28-byte minimum), one over the 32 MiB
# limit, and 0xffffffff.  Each closes that connection only: a client
# connected before keeps being served, and so does a new one.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import struct, sys
import rawclient as rc

path = sys.argv[1]
bystander = rc.Client(path)
bystander.open_connection()

limit = rc.PACKET_MAX + 4
for length in (0, 3, 27, limit + 1, 0xFFFFFFFF):
    c = rc.Client(path)
    # The length word, then a plausible header: only the length is wrong.
    c.send(struct.pack(">I", length) + rc.header_bytes(rc.REMOTE_PROGRAM, 1, 59, rc.CALL, 1, 0))
    rc.check(c.wait_closed(5), f"length {length}: connection closed by the daemon")
    c.close()
    rc.expect_usable(bystander, f"after length {length}")

# Exactly at the limit is allowed: the daemon waits for the rest instead
# of closing.  (The client then leaves without sending it.)
c = rc.Client(path)
c.send(struct.pack(">I", limit) + rc.header_bytes(rc.REMOTE_PROGRAM, 1, 59, rc.CALL, 1, 0))
rc.check(not c.wait_closed(1), f"length {limit} (the limit): connection kept open")
c.close()

fresh = rc.Client(path)
fresh.open_connection()
rc.expect_usable(fresh, "a new client after all that")
rc.expect_usable(bystander, "the first client at the end")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
