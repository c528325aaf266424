# Sourced by the bench/run-*.sh scripts once their options are read:
# exports the build dir ($builddir) and the source tree for
# tests/functions.sh, and sources it (a temp dir, cleanups, the daemons'
# start and stop).
abs_top_builddir=$(cd "$builddir" && pwd)
abs_top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
export abs_top_builddir abs_top_srcdir
# shellcheck source=../tests/functions.sh
source "$abs_top_srcdir/tests/functions.sh"
