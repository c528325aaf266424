# Sourced first (before functions.sh) by the tests that run in a network
# and mount namespace of their own, so that their bridges, taps, dnsmasqs
# and nft tables never reach the host: as root, the test runs again in
# one (unshare); functions.sh's netns_view then sets it up.  With
# rv_netns_guest=1 the test guest is built out here first: the namespace
# has no way out (test_guest finds it built there, or skips).
if [ -z "${RV_IN_NETNS:-}" ] && [ "$(id -u)" -eq 0 ] && unshare --net --mount true 2>/dev/null; then
    if [ "${rv_netns_guest:-0}" = 1 ]; then
        _rv_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        bash "$_rv_src/tests/tools/build-test-guest.sh" \
            "${RV_TEST_GUEST_DIR:-${abs_top_builddir:-$_rv_src/build}/tests/guest}" >&2 || true
    fi
    exec unshare --net --mount env RV_IN_NETNS=1 bash "$0" "$@"
fi
