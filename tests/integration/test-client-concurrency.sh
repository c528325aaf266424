#!/usr/bin/env bash
# libremvirt's shared connection under a server that answers out of order
# (shuffle-server.py): 16 threads of lookups and GetInfo calls, some
# refused, and a thread of asynchronous GetInfo calls, all on one
# connection, each answer derived from its own call, so a reply handed
# to the wrong caller or lost shows (client-concurrency checks each);
# then the server hangs up with calls waiting: every waiting call fails,
# none hangs, and a later call fails at once.  Several seeds.  Under
# make check-valgrind the client runs under valgrind too; with helgrind
# (RV_HELGRIND=1) under helgrind, which must find no data race.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

CLIENT=$top_builddir/tests/integration/client-concurrency
[ -x "$CLIENT" ] || fail "$CLIENT is not built"
prefix=${RV_VALGRIND:-}
if [ -n "${RV_HELGRIND:-}" ]; then
    requires valgrind
    prefix="valgrind -q --tool=helgrind --error-exitcode=99"
fi

for seed in 1 2 3; do
    SOCK=$RV_TMP/shuffle-$seed
    start_script_server "$RV_TMP/server-$seed" shuffle-server.py "$SOCK" "$seed"
    for scenario in shuffle close; do
        echo "---- seed $seed, $scenario"
        status=0
        # A command prefix: split into words on purpose.
        $prefix "$CLIENT" "$SOCK" "$scenario" || status=$?
        [ "$status" -eq 0 ] || { show "$RV_TMP/server-$seed";
                                 fail "client-concurrency $scenario failed (status $status)"; }
    done
    kill "$BG_PID"
done
