#!/usr/bin/env bash
# libremvirt against a server that lies (issue 19): hostile-server.py
# answers lifecycle registrations with a negative or duplicate callback
# ID, sends events for -1 while a registration is in flight and then
# refuses it or hangs up, races events against error replies, and sends
# a negative count, an unknown close reason and a stray reply.
# hostile-client checks each scenario itself: the API's return value and
# error, that no callback runs for a failed registration, that each
# free_cb runs exactly once (or never, for a failed registration).  Under
# make check-valgrind the client runs under valgrind too.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

CLIENT=$top_builddir/tests/integration/hostile-client
[ -x "$CLIENT" ] || fail "$CLIENT is not built"

SOCK=$RV_TMP/hostile-sock
start_script_server "$RV_TMP/server" hostile-server.py "$SOCK"
server=$BG_PID

run_client_scenarios "$RV_TMP/server" "$CLIENT" "$SOCK" negative-id duplicate-id \
    event-then-error event-then-eof race bad-counts bad-messages stray-reply

kill -0 "$server" 2>/dev/null || { show "$RV_TMP/server"; fail "the hostile server died"; }
