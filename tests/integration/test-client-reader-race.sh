#!/usr/bin/env bash
# libremvirt's reader with part of a frame in hand, writing a call left
# to it into a full socket while the server does not read (f636e09):
# reader-race-client drives it against reader-race-server.py, each step
# ordered by what the other side sees (see both files).
#   partial   the frames delivered while it waited to write must not
#             leave the reader with the first frame's length (the define
#             reply decoded as 20 KB: "payload has trailing bytes")
#   ping      a PING at rbuf's head is answered once it is off rbuf
#   withheld  a reader whose answer came while it wrote returns at once,
#             not after the server's next frame
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

CLIENT=$top_builddir/tests/integration/reader-race-client
[ -x "$CLIENT" ] || fail "$CLIENT is not built"

SOCK=$RV_TMP/race-sock
start_script_server "$RV_TMP/server" reader-race-server.py "$SOCK"
server=$BG_PID

run_client_scenarios "$RV_TMP/server" "$CLIENT" "$SOCK" partial ping withheld

kill -0 "$server" 2>/dev/null || { show "$RV_TMP/server"; fail "the reader-race server died"; }
