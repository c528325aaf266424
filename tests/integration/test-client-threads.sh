#!/usr/bin/env bash
# libremvirt shared by many threads on one connection: client-threads runs
# 8 threads of lookups and GetInfo and checks every reply; client-
# backpressure mixes large replies and large requests so that remvirtd
# stops reading (max_client_requests) while writers are blocked.  Both
# check every reply themselves.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

progs=("$top_builddir/tests/integration/client-threads"
       "$top_builddir/tests/integration/client-backpressure")
for prog in "${progs[@]}"; do
    [ -x "$prog" ] || fail "$prog is not built"
done
start_remvirtd

"${progs[0]}" "$REMVIRTD_URI"
# Under valgrind remvirtd moves the ~400 KB messages far slower; 20 calls
# per thread still keep it at max_client_requests with writers blocked.
"${progs[1]}" "$REMVIRTD_URI" "$([ -n "${RV_VALGRIND:-}" ] && echo 20 || echo 200)"

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
