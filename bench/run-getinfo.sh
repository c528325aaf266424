#!/bin/sh
# Run bench/getinfo against a private remvirtd and a libvirtd, in one go.
#
#   bench/run-getinfo.sh [--builddir DIR] [--quick] [--libvirt-sock PATH | --no-libvirt]
#                        [--libvirt-calls N] [-- GETINFO-OPTIONS...]
#
# Builds nothing: DIR (default ./build) must hold remvirtd and bench/getinfo.
# remvirtd always runs private, from a temporary directory.  libvirtd is
# reused when --libvirt-sock names its socket; otherwise a private one is
# started and stopped again.  Only one libvirtd can run as root on a machine
# because its drivers keep pid files under /run/libvirt, so as root the
# private one gets its own /run/libvirt in a private mount namespace; where
# that is not possible and another libvirtd runs, the script says so and
# stops.  Whatever it started it stops, so it is safe to rerun.
#
# It prints us per call for four ways, side by side in each placement:
#   floor          blocking ping-pong of GetInfo-sized messages, no protocol
#   remvirt-block  libremvirt -> remvirtd, connection opened with
#                  REMVIRT_SPIN_US=0: the reader sleeps in read() at once
#   remvirt        libremvirt as shipped: polls briefly for the reply first
#   libvirt        libvirt's client -> libvirtd
# remvirt-block/floor (both sides blocking: what the daemon and library add)
# is judged against <= 1.5x, libvirt/remvirt against >= 3x; remvirt/floor is
# shown for information only, since polling skips the wakeup the floor pays.
# REMVIRT_SPIN_US in the environment sets the remvirt column's poll window
# (microseconds; unset: the library's default).
#
# --quick is the smoke run the test suite uses: 1000 calls, no timing
# judged.  --libvirt-calls sets the calls per domain against libvirtd
# (default 20000; the figures are per call).  Options after -- go to
# getinfo (see bench/getinfo --help).  Exit status: 0 when every call
# worked, whatever the timings.
set -eu

builddir=./build
quick=
libvirt_sock=
use_libvirt=yes
# libvirtd is several times slower than remvirtd; fewer calls keep the
# whole run (four ways, three placements) near a minute and a half, and the
# figures are per call.
libvirt_calls=20000

usage() {
    sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --builddir=*) builddir=${1#*=}; shift ;;
    --quick) quick=--quick; shift ;;
    --libvirt-sock) libvirt_sock=${2:?--libvirt-sock needs a path}; shift 2 ;;
    --libvirt-sock=*) libvirt_sock=${1#*=}; shift ;;
    --no-libvirt) use_libvirt=; shift ;;
    --libvirt-calls) libvirt_calls=${2:?--libvirt-calls needs a number}; shift 2 ;;
    --libvirt-calls=*) libvirt_calls=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "run-getinfo: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

fail() { echo "run-getinfo: $*" >&2; exit 1; }

getinfo=$builddir/bench/getinfo
remvirtd=$builddir/remvirtd
[ -x "$getinfo" ] || fail "$getinfo not found: build it first (make bench/getinfo in $builddir)"
[ -x "$remvirtd" ] || fail "$remvirtd not found: build it first (make remvirtd in $builddir)"
if [ -n "$libvirt_sock" ] && [ -z "$use_libvirt" ]; then
    fail "--libvirt-sock and --no-libvirt contradict each other"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-bench.XXXXXX")
remvirtd_pid=
libvirtd_pid=

# Stop a daemon this script started: TERM, then KILL if it hangs.
stop() {
    pid=$1 name=$2
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "run-getinfo: $name (pid $pid) ignored SIGTERM; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    [ -z "$remvirtd_pid" ] || stop "$remvirtd_pid" remvirtd
    [ -z "$libvirtd_pid" ] || stop "$libvirtd_pid" libvirtd
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Wait for a daemon's socket; fail with its log if it dies or takes too long.
await_socket() {
    sock=$1 pid=$2 name=$3 log=$4
    for _ in $(seq 100); do
        [ -S "$sock" ] && return 0
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$log" >&2; fail "$name exited during startup"; }
        sleep 0.1
    done
    tail -n 20 "$log" >&2
    fail "$name did not create $sock within 10 seconds"
}

# ---- remvirtd, private
mkdir "$tmp/rv"
cat > "$tmp/remvirtd.conf" <<EOF
unix_sock_dir = "$tmp/rv"
unix_sock_rw_perms = "0700"
EOF
"$remvirtd" -f "$tmp/remvirtd.conf" --pidfile "$tmp/remvirtd.pid" > "$tmp/remvirtd.log" 2>&1 &
remvirtd_pid=$!
await_socket "$tmp/rv/remvirt-sock" "$remvirtd_pid" remvirtd "$tmp/remvirtd.log"

# ---- libvirtd: reuse, start a private one, or skip when not installed
# The pid of a live libvirtd running as root, if any.
root_libvirtd() {
    pgrep -x -u 0 libvirtd 2>/dev/null | head -n 1
}

start_libvirtd() {
    mkdir "$tmp/lv"
    cat > "$tmp/lv/libvirtd.conf" <<EOF
unix_sock_dir = "$tmp/lv"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
EOF
    set -- libvirtd -f "$tmp/lv/libvirtd.conf" -p "$tmp/lv/libvirtd.pid"
    if [ "$(id -u)" = 0 ]; then
        if unshare --mount --propagation private true 2>/dev/null; then
            # A private /run/libvirt: no clash with another root libvirtd's
            # pid files, and nothing left behind in the real one.
            # shellcheck disable=SC2016 # $@ expands in the inner shell
            set -- unshare --mount --propagation private \
                sh -c 'mkdir -p /run/libvirt && mount -t tmpfs rv-bench /run/libvirt &&
                       exec "$@"' sh "$@"
        else
            other=$(root_libvirtd)
            if [ -n "$other" ]; then
                fail "libvirtd (pid $other) already runs as root and owns /run/libvirt," \
                     "and this machine cannot give a second one its own (unshare failed)." \
                     "Rerun with --libvirt-sock PATH to measure that one, or --no-libvirt."
            fi
        fi
    fi
    # exec keeps the pid: $! is libvirtd itself.
    "$@" > "$tmp/lv/libvirtd.log" 2>&1 &
    libvirtd_pid=$!
    await_socket "$tmp/lv/libvirt-sock" "$libvirtd_pid" libvirtd "$tmp/lv/libvirtd.log"
    libvirt_sock=$tmp/lv/libvirt-sock
}

if [ -n "$use_libvirt" ]; then
    if [ -n "$libvirt_sock" ]; then
        [ -S "$libvirt_sock" ] || fail "--libvirt-sock $libvirt_sock is not a socket"
        echo "reusing the libvirtd at $libvirt_sock (its own logging settings apply)"
    elif command -v libvirtd > /dev/null 2>&1; then
        start_libvirtd
    else
        echo "libvirtd is not installed: the libvirt column is skipped"
    fi
fi

# ---- the benchmark
set -- --remvirt-sock "$tmp/rv/remvirt-sock" ${quick:+"$quick"} "$@"
if [ -n "$libvirt_sock" ]; then
    if [ -n "$quick" ]; then
        set -- --libvirt-sock "$libvirt_sock" "$@"
    else
        set -- --libvirt-sock "$libvirt_sock" --libvirt-calls "$libvirt_calls" "$@"
    fi
fi
status=0
"$getinfo" "$@" || status=$?
if [ "$status" != 0 ]; then
    for log in "$tmp/remvirtd.log" "$tmp/lv/libvirtd.log"; do
        [ -s "$log" ] || continue
        echo "--- last lines of $log:" >&2
        tail -n 20 "$log" >&2
    done
fi
exit "$status"
