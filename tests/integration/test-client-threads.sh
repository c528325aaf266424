#!/usr/bin/env bash
# libremvirt shared by many threads on one connection: the client-threads
# program (built with the client library) runs its threads against
# remvirtd and checks every reply itself.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

prog=$top_builddir/tests/integration/client-threads
[ -x "$prog" ] || fail "$prog is not built"
start_remvirtd

"$prog" "$REMVIRTD_URI"

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
