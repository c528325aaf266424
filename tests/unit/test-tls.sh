#!/usr/bin/env bash
# test-tls needs a PKI: make one with tests/tools/make-pki.sh, then run the
# C program on it (under valgrind with make check-valgrind).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires certtool

prog=$top_builddir/tests/unit/test-tls
[ -x "$prog" ] || fail "$prog is not built"
make_pki "$RV_TMP/pki"
# RV_VALGRIND is a command prefix: split into words on purpose.
# shellcheck disable=SC2086
${RV_VALGRIND:-} "$prog" "$RV_TMP/pki"
