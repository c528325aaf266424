#!/usr/bin/env bash
# libremvirt's asynchronous calls (rv_domain_get_info_start and
# rv_connect_complete) with synchronous calls beside them on one
# connection: client-async checks every answer, the error path, refusals
# and closing with calls started.  Against remvirtd, and against libvirtd
# where one can be started (root), since the calls are plain protocol.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

prog=$top_builddir/tests/integration/client-async
[ -x "$prog" ] || fail "$prog is not built"
calls=20000
[ -z "${RV_VALGRIND:-}" ] || calls=2000

start_remvirtd
"$prog" "$REMVIRTD_URI" "$calls"
remvirtd_alive || fail "remvirtd died"
stop_remvirtd

if [ "$(id -u)" = 0 ] && libvirtd --version >/dev/null 2>&1; then
    start_libvirtd
    "$prog" "$LIBVIRTD_URI" 2000
else
    echo "libvirtd part skipped: needs root and libvirtd"
fi
