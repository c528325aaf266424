# Shared helpers for the shell tests; every test-*.sh sources this first:
#
#   set -euo pipefail
#   source "$(dirname "$0")/../functions.sh"
#
# Exit status follows automake: 0 pass, 77 skip, anything else fail.
# Under `make check` the environment gives abs_top_srcdir and
# abs_top_builddir; run by hand, the build dir defaults to ./build of the
# source tree (where quickstart.sh and tests/check.sh build).
#
# RV_VALGRIND, when set (make check-valgrind), is a command prefix that
# runs remvirtd under valgrind; stop_remvirtd then fails the test if
# valgrind reported errors or leaks.  RV_KEEP_TMP=1 keeps the temp dir.

top_srcdir=${abs_top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
top_builddir=${abs_top_builddir:-$top_srcdir/build}
REMVIRTD=${REMVIRTD:-$top_builddir/remvirtd}
RVSH=${RVSH:-$top_builddir/rvsh}
PYTHON3=${PYTHON3:-python3}
# Debian's libvirt binding is built for the system python only.
SYSTEM_PYTHON3=/usr/bin/python3

# Seconds to wait for a daemon to come up or go down; valgrind is slow.
RV_TIMEOUT=${RV_TIMEOUT:-10}
if [ -n "${RV_VALGRIND:-}" ]; then
    RV_TIMEOUT=$((RV_TIMEOUT * 6))
fi

fail()
{
    echo "FAIL: $*" >&2
    exit 1
}

skip()
{
    echo "SKIP: $*" >&2
    exit 77
}

# requires CMD          skip unless CMD is on PATH
# requires CMD ARG...   skip unless the command succeeds
requires()
{
    if [ $# -eq 1 ]; then
        command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
    else
        "$@" >/dev/null 2>&1 || skip "'$*' does not work here"
    fi
}

requires_root()
{
    [ "$(id -u)" -eq 0 ] || skip "needs root"
}

# cleanup_fn CMD ARG...: run at exit, last registered first.  A cleanup
# that fails turns a passing test into a failure.
_rv_cleanups=()
cleanup_fn()
{
    _rv_cleanups+=("$(printf '%q ' "$@")")
}

_rv_run_cleanups()
{
    local status=$? i
    set +e
    for ((i = ${#_rv_cleanups[@]} - 1; i >= 0; i--)); do
        _rv_status=$status          # for _rv_logs_on_failure
        if ! eval "${_rv_cleanups[i]}"; then
            echo "FAIL: cleanup '${_rv_cleanups[i]}' failed" >&2
            [ "$status" -eq 0 ] && status=1
        fi
    done
    _rv_cleanups=()
    exit "$status"
}
trap _rv_run_cleanups EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A private temp dir for this test, short enough for socket paths
# (sun_path holds 107 bytes).
RV_TMP=$(mktemp -d /tmp/rvt.XXXXXX)
_rv_remove_tmp()
{
    # RV_STALL_LOG names a file that gathers the loop stall detector's lines
    # (RV_LOOP_STALL_MS) of the daemons this test started, after its name:
    # bench/run-loop-stalls.sh --suite-log reads it.
    if [ -n "${RV_STALL_LOG:-}" ]; then
        grep -rshI "loop stall: " "$RV_TMP" | sed "s|^|${0##*/}: |" >> "$RV_STALL_LOG" || true
    fi
    if [ "${RV_KEEP_TMP:-0}" = 1 ]; then
        echo "kept $RV_TMP" >&2
    else
        rm -rf "$RV_TMP"
    fi
}
cleanup_fn _rv_remove_tmp

# A failing test shows the logs of the daemons it started, whatever check
# failed: registered right after the temp dir's removal, so it runs after
# every other cleanup (the daemons have stopped and flushed their logs)
# and before the logs are deleted.
RV_LOG_TAIL=${RV_LOG_TAIL:-50}
_rv_logs_on_failure()
{
    case ${_rv_status:-0} in 0 | 77) return 0 ;; esac
    local log
    for log in "${REMVIRTD_LOG:-}" "${REMVIRTD_DIR:+$REMVIRTD_DIR/stderr}" \
               "${LIBVIRTD_LOG:-}" "${SSHD_LOG:-}"; do
        if [ -n "$log" ] && [ -s "$log" ]; then
            echo "---- $log (last $RV_LOG_TAIL lines; the test failed)" >&2
            tail -n "$RV_LOG_TAIL" "$log" >&2
        elif [ -n "$log" ] && [ -e "$log" ]; then
            echo "---- $log is empty" >&2
        fi
    done
    return 0
}
cleanup_fn _rv_logs_on_failure

# wait_for SECONDS DESCRIPTION CMD ARG...: poll CMD every 0.1 s.
wait_for()
{
    local seconds=$1 what=$2 i
    shift 2
    for ((i = 0; i < seconds * 10; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    echo "timed out after ${seconds}s waiting for $what" >&2
    return 1
}

# Python with tests/tools on the path, script on stdin:
#   rawpy "$REMVIRTD_SOCK" <<'EOF' ... EOF
# No __pycache__ in the source tree.
rawpy()
{
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top_srcdir/tests/tools:$top_builddir/python${PYTHONPATH:+:$PYTHONPATH}" \
        "$PYTHON3" - "$@"
}

_rv_show_file()
{
    if [ -s "$1" ]; then
        echo "---- $1 (last 40 lines)" >&2
        tail -n 40 "$1" >&2
    fi
}

# free_port: print a TCP port that nothing listens on right now (on both
# 127.0.0.1 and ::1), for a daemon the test starts next.
free_port()
{
    "$PYTHON3" - <<'EOF'
import socket
for _ in range(100):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    try:
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s6.bind(("::1", port))
        s6.close()
    except OSError:
        s.close()
        continue
    s.close()
    print(port)
    break
EOF
}

# ---------------------------------------------------------------- remvirtd

# start_remvirtd ['key = value'...]
#
# Starts remvirtd with a private config whose socket dir is in RV_TMP and
# waits (bounded) for its pidfile and both sockets.  Extra config lines
# are added as given and replace the defaults of the same key.  Call it
# directly, not inside $(...), so the shell can wait for the daemon.  Sets:
#   REMVIRTD_DIR REMVIRTD_CONF REMVIRTD_PID REMVIRTD_LOG
#   REMVIRTD_SOCK REMVIRTD_SOCK_RO REMVIRTD_URI REMVIRTD_URI_RO
#   REMVIRTD_ADMIN_SOCK REMVIRTD_ADMIN_URI (for virt-admin)
start_remvirtd()
{
    [ -z "${REMVIRTD_PID:-}" ] || fail "start_remvirtd: a remvirtd is already running"
    [ -x "$REMVIRTD" ] || fail "$REMVIRTD is not built"

    REMVIRTD_DIR=$RV_TMP/remvirtd
    REMVIRTD_CONF=$REMVIRTD_DIR/remvirtd.conf
    REMVIRTD_LOG=$REMVIRTD_DIR/remvirtd.log
    REMVIRTD_SOCK=$REMVIRTD_DIR/remvirt-sock
    REMVIRTD_SOCK_RO=$REMVIRTD_DIR/remvirt-sock-ro
    REMVIRTD_URI="test+unix:///default?socket=$REMVIRTD_SOCK"
    REMVIRTD_URI_RO="test+unix:///default?socket=$REMVIRTD_SOCK_RO"
    REMVIRTD_ADMIN_SOCK=$REMVIRTD_DIR/remvirt-admin-sock
    REMVIRTD_ADMIN_URI="remvirtd:///system?socket=$REMVIRTD_ADMIN_SOCK"
    mkdir -p "$REMVIRTD_DIR"

    local -a defaults=(
        "unix_sock_dir = \"$REMVIRTD_DIR\""
        'unix_sock_rw_perms = "0770"'
        'unix_sock_ro_perms = "0777"'
        "log_outputs = \"2:file:$REMVIRTD_LOG\""
        # The QEMU driver loads with every daemon: its directories are the
        # test's own, never the machine's /etc/remvirt or /run/remvirt
        # (start_remvirtd_qemu names others).
        "qemu_config_dir = \"$REMVIRTD_DIR/qemu/etc\""
        "qemu_run_dir = \"$REMVIRTD_DIR/qemu/run\""
        "qemu_save_dir = \"$REMVIRTD_DIR/qemu/save\""
        "qemu_dump_dir = \"$REMVIRTD_DIR/qemu/dump\""
    )
    {
        echo "# written by tests/functions.sh start_remvirtd"
        _rv_conf_lines "${#defaults[@]}" "${defaults[@]}" "$@"
    } > "$REMVIRTD_CONF"

    # RV_VALGRIND is a command prefix: split into words on purpose.
    # shellcheck disable=SC2086
    ${RV_VALGRIND:-} "$REMVIRTD" -f "$REMVIRTD_CONF" --pidfile "$REMVIRTD_DIR/remvirtd.pid" \
        </dev/null >"$REMVIRTD_DIR/stdout" 2>"$REMVIRTD_DIR/stderr" &
    REMVIRTD_PID=$!
    cleanup_fn stop_remvirtd

    if ! wait_for "$RV_TIMEOUT" "remvirtd's sockets and pidfile" _rv_remvirtd_ready; then
        _rv_remvirtd_dump
        fail "remvirtd did not start"
    fi
}

# _rv_conf_lines N DEFAULT... GIVEN...: a daemon's config: the N default
# lines whose key no given line has, then the given lines (a key given
# replaces its default; libvirtd would take the first of two).
_rv_conf_lines()
{
    local n=$1 line given
    shift
    local -a defaults=("${@:1:n}")
    shift "$n"
    for line in "${defaults[@]}"; do
        for given in "$@"; do
            [ "${given%%[ =]*}" = "${line%% *}" ] && continue 2
        done
        echo "$line"
    done
    for given in "$@"; do
        echo "$given"
    done
}

_rv_remvirtd_ready()
{
    if ! kill -0 "$REMVIRTD_PID" 2>/dev/null; then
        _rv_remvirtd_dump
        local status=0
        wait "$REMVIRTD_PID" || status=$?
        REMVIRTD_PID=
        fail "remvirtd exited during startup with status $status"
    fi
    [ -S "$REMVIRTD_SOCK" ] && [ -S "$REMVIRTD_SOCK_RO" ] && [ -S "$REMVIRTD_ADMIN_SOCK" ] &&
        [ -s "$REMVIRTD_DIR/remvirtd.pid" ]
}

_rv_remvirtd_dump()
{
    _rv_show_file "$REMVIRTD_CONF"
    _rv_show_file "$REMVIRTD_DIR/stderr"
    _rv_show_file "$REMVIRTD_LOG"
}

remvirtd_alive()
{
    [ -n "${REMVIRTD_PID:-}" ] && kill -0 "$REMVIRTD_PID" 2>/dev/null
}

# SIGTERM, then check that remvirtd exits 0 (under valgrind: no errors,
# no leaks) within the timeout and takes its sockets with it.
stop_remvirtd()
{
    [ -n "${REMVIRTD_PID:-}" ] || return 0
    local pid=$REMVIRTD_PID status=0
    REMVIRTD_PID=
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for "$RV_TIMEOUT" "remvirtd to exit after SIGTERM" _rv_gone "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        _rv_remvirtd_dump
        echo "remvirtd ignored SIGTERM" >&2
        return 1
    fi
    wait "$pid" || status=$?
    if [ "$status" -ne 0 ]; then
        _rv_remvirtd_dump
        echo "remvirtd exited with status $status${RV_VALGRIND:+ (valgrind errors or leaks?)}" >&2
        return 1
    fi
    if [ -e "$REMVIRTD_SOCK" ] || [ -e "$REMVIRTD_SOCK_RO" ]; then
        echo "remvirtd left its sockets behind after SIGTERM" >&2
        return 1
    fi
}

_rv_gone()
{
    ! kill -0 "$1" 2>/dev/null
}

# kill_remvirtd: SIGKILL, as a crash would (the guests run on), and clear
# what it leaves, so that start_remvirtd* may start it again.
kill_remvirtd()
{
    kill -KILL "$REMVIRTD_PID"
    wait "$REMVIRTD_PID" 2>/dev/null || true
    REMVIRTD_PID=
    rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
}

# ---------------------------------------------------------------- SASL

# sasl_db APP MECHS USER[=PASSWORD]...: a SASL application config for APP
# ("remvirtd", or "libvirt" for libvirtd) in a private dir, with mech_list
# MECHS (e.g. "digest-md5") and a sasldb in which each USER has PASSWORD
# (default pw-USER); SASL_CONF_PATH points there for what the test starts
# next.  Users live in the default realm, the host's name, where both the
# daemons and saslpasswd2 put them.
sasl_db()
{
    local app=$1 mechs=$2 dir=$RV_TMP/sasl entry user password
    shift 2
    requires saslpasswd2
    mkdir -p "$dir"
    printf 'mech_list: %s\nsasldb_path: %s/passwd.db\n' "$mechs" "$dir" > "$dir/$app.conf"
    for entry in "$@"; do
        user=${entry%%=*}
        password=pw-$user
        [ "$user" = "$entry" ] || password=${entry#*=}
        printf '%s' "$password" | saslpasswd2 -p -c -f "$dir/passwd.db" -a "$app" "$user" ||
            fail "saslpasswd2 could not add $user"
    done
    export SASL_CONF_PATH=$dir
}

# remvirtd_sasl_db MECHS USER...: sasl_db for remvirtd ("remvirtd" is its
# SASL application name).
remvirtd_sasl_db()
{
    sasl_db remvirtd "$@"
}

# ---------------------------------------------------------------- PKI

# make_pki DIR: the test PKI of tests/tools/make-pki.sh (its header lists
# the file sets) in DIR; skips the test without certtool.
make_pki()
{
    requires certtool
    bash "$top_srcdir/tests/tools/make-pki.sh" "$1" || fail "make-pki.sh failed"
}

# ---------------------------------------------------------------- libvirtd

# start_libvirtd ['key = value'...]: a private libvirtd (test driver
# reachable) on a socket in RV_TMP, as libvirt-wire-facts.md describes;
# extra lines go into its libvirtd.conf (with listen_tcp or listen_tls it
# runs with --listen).  Sets LIBVIRTD_SOCK,
# LIBVIRTD_SOCK_RO, LIBVIRTD_URI, LIBVIRTD_URI_RO and LIBVIRTD_LOG.
# Its test driver forgets its state when the last client disconnects, so
# a sequence that needs state must run in one connection.
#
# Root libvirtd's drivers take pid files under /run/libvirt, so only one
# can run per mount namespace.  Where unshare works, each test gets its own
# /run/libvirt (a tmpfs in a private mount namespace) and tests run in
# parallel; elsewhere a lock file makes the libvirtd tests take turns.
start_libvirtd()
{
    requires_root
    requires libvirtd --version
    [ -z "${LIBVIRTD_PID:-}" ] || fail "start_libvirtd: a libvirtd is already running"

    local dir=$RV_TMP/libvirtd
    _rv_libvirtd_conf "$dir" "$@"

    mkdir -p /run/libvirt
    if unshare --mount --propagation private true 2>/dev/null; then
        unshare --mount --propagation private sh -c \
            'mount -t tmpfs tmpfs /run/libvirt && exec libvirtd -f "$1" -p "$2" $3' \
            sh "$dir/libvirtd.conf" "$dir/libvirtd.pid" "$_rv_listen" \
            </dev/null >"$dir/stdout" 2>"$dir/stderr" &
    else
        exec {_rv_libvirtd_lock}>/run/lock/remvirt-tests-libvirtd.lock
        flock -w 600 "$_rv_libvirtd_lock" || fail "another test kept the libvirtd lock for 10 min"
        libvirtd -f "$dir/libvirtd.conf" -p "$dir/libvirtd.pid" $_rv_listen \
            </dev/null >"$dir/stdout" 2>"$dir/stderr" &
    fi
    LIBVIRTD_PID=$!
    cleanup_fn stop_libvirtd

    # libvirtd probes every driver at start; give it longer than remvirtd.
    if ! wait_for $((RV_TIMEOUT * 3)) "libvirtd's socket" _rv_libvirtd_ready; then
        _rv_show_file "$dir/stderr"
        _rv_show_file "$LIBVIRTD_LOG"
        fail "libvirtd did not start"
    fi
}

# _rv_libvirtd_conf DIR ['key = value'...]: DIR/libvirtd.conf for a
# private libvirtd with its sockets in DIR, the given lines replacing the
# defaults of their keys; sets the LIBVIRTD_* paths and URIs (test driver)
# and _rv_listen (--listen when it listens on TCP or TLS).
_rv_libvirtd_conf()
{
    local dir=$1 line
    shift
    mkdir -p "$dir"
    local -a defaults=(
        "unix_sock_dir = \"$dir\""
        'unix_sock_rw_perms = "0777"'
        'auth_unix_rw = "none"'
        'auth_unix_ro = "none"'
        "log_outputs = \"3:file:$dir/libvirtd.log\""
    )
    _rv_conf_lines "${#defaults[@]}" "${defaults[@]}" "$@" > "$dir/libvirtd.conf"
    _rv_listen=
    for line in "$@"; do
        case $line in listen_tcp*1*|listen_tls*1*) _rv_listen=--listen ;; esac
    done
    LIBVIRTD_SOCK=$dir/libvirt-sock
    LIBVIRTD_SOCK_RO=$dir/libvirt-sock-ro
    LIBVIRTD_URI="test+unix:///default?socket=$LIBVIRTD_SOCK"
    LIBVIRTD_URI_RO="test+unix:///default?socket=$LIBVIRTD_SOCK_RO"
    LIBVIRTD_LOG=$dir/libvirtd.log
    LIBVIRTD_ADMIN_URI="libvirtd:///system?socket=$dir/libvirt-admin-sock"
}

# libvirtd_qemu_why_not: prints why start_libvirtd_qemu cannot run here
# and succeeds; fails (printing nothing) when it can.
libvirtd_qemu_why_not()
{
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs root"
    elif ! libvirtd --version > /dev/null 2>&1; then
        echo "libvirtd is not installed"
    elif ! qemu-system-x86_64 --version > /dev/null 2>&1; then
        echo "qemu-system-x86_64 is not installed"
    elif [ ! -e /usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so ]; then
        echo "libvirtd's QEMU driver is not installed (libvirt-daemon-driver-qemu)"
    elif ! unshare --mount --propagation private true 2>/dev/null; then
        echo "libvirtd's QEMU driver needs a private mount namespace here (unshare --mount failed)"
    elif ! id libvirt-qemu > /dev/null 2>&1; then
        echo "libvirtd's QEMU driver needs the user libvirt-qemu"
    else
        return 1
    fi
}

# start_libvirtd_qemu ['key = value'...]: a private libvirtd whose QEMU
# driver runs real guests, for comparing with remvirtd's (see
# libvirt-wire-facts.md); extra lines go into its libvirtd.conf as with
# start_libvirtd, whose test driver URIs it answers too.  It runs in a
# mount namespace of its own (tests/tools/libvirtd-qemu-ns.sh: tmpfs on
# its state, config and run directories, a qemu.conf of ours) under
# tests/tools/subreaper.py.  Sets LIBVIRTD_QEMU_URI, LIBVIRTD_QEMU_URI_RO,
# LIBVIRTD_DIR and what start_libvirtd sets; skips when it cannot run
# here, saying why.
start_libvirtd_qemu()
{
    local why
    ! why=$(libvirtd_qemu_why_not) || skip "$why"
    [ -z "${LIBVIRTD_PID:-}" ] || fail "start_libvirtd_qemu: a libvirtd is already running"
    LIBVIRTD_DIR=$RV_TMP/libvirtd
    _rv_libvirtd_conf "$LIBVIRTD_DIR" "$@"
    LIBVIRTD_QEMU_URI="qemu+unix:///system?socket=$LIBVIRTD_SOCK"
    LIBVIRTD_QEMU_URI_RO="qemu+unix:///system?socket=$LIBVIRTD_SOCK_RO"
    unshare --mount --propagation private sh "$top_srcdir/tests/tools/libvirtd-qemu-ns.sh" "$LIBVIRTD_DIR" \
        $_rv_listen </dev/null >"$LIBVIRTD_DIR/stdout" 2>"$LIBVIRTD_DIR/stderr" &
    LIBVIRTD_PID=$!
    cleanup_fn stop_libvirtd
    if ! wait_for $((RV_TIMEOUT * 3)) "libvirtd's socket" _rv_libvirtd_ready; then
        _rv_show_file "$LIBVIRTD_DIR/stderr"
        _rv_show_file "$LIBVIRTD_LOG"
        fail "libvirtd did not start"
    fi
    # The QEMU driver may fail to load while libvirtd itself runs.
    if ! virsh -c "$LIBVIRTD_QEMU_URI" uri > /dev/null 2> "$LIBVIRTD_DIR/uri.err"; then
        _rv_show_file "$LIBVIRTD_DIR/uri.err"
        _rv_show_file "$LIBVIRTD_LOG"
        fail "libvirtd's QEMU driver does not answer"
    fi
}

# pause_libvirtd_qemu [kill] / resume_libvirtd_qemu: the libvirtd of
# start_libvirtd_qemu stopped (SIGTERM, or SIGKILL when "kill" is given),
# its guests running on in its namespace (tests/tools/subreaper.py), then
# started again there; resume is back once its QEMU driver answers.
pause_libvirtd_qemu()
{
    _rv_lv_old=$(cat "$LIBVIRTD_DIR/libvirtd.pid" 2> /dev/null) || fail "libvirtd has no pidfile"
    kill "-$([ "${1:-}" = kill ] && echo USR2 || echo USR1)" "$LIBVIRTD_PID"
    wait_for $((RV_TIMEOUT * 3)) "libvirtd to stop" _rv_gone "$_rv_lv_old" || fail "libvirtd did not stop"
}

_rv_libvirtd_again()
{
    local now
    now=$(cat "$LIBVIRTD_DIR/libvirtd.pid" 2> /dev/null) && [ -n "$now" ] && [ "$now" != "$_rv_lv_old" ] &&
        virsh -c "$LIBVIRTD_QEMU_URI" uri > /dev/null 2>&1
}

resume_libvirtd_qemu()
{
    kill -HUP "$LIBVIRTD_PID"
    wait_for $((RV_TIMEOUT * 3)) "libvirtd to start again" _rv_libvirtd_again ||
        { _rv_show_file "$LIBVIRTD_DIR/stderr"; fail "libvirtd did not start again"; }
}

# start_libvirtd_session: a libvirtd of user nobody's session, for its
# storage driver (qemu:///session: dir pools under RV_TMP, streams to its
# own volumes) without touching the host's libvirt state.  Sets
# LIBVIRTD_SESSION_SOCK and LIBVIRTD_SESSION_URI; a pool's directory must
# belong to nobody (65534).
start_libvirtd_session()
{
    requires_root
    requires libvirtd --version
    requires setpriv --version
    local lv=$RV_TMP/lv-session
    mkdir -p "$lv/run"
    chmod 755 "$RV_TMP"
    chown -R 65534:65534 "$lv"
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        env HOME="$lv" XDG_RUNTIME_DIR="$lv/run" XDG_CONFIG_HOME="$lv/config" \
        XDG_CACHE_HOME="$lv/cache" XDG_DATA_HOME="$lv/data" \
        libvirtd --timeout 300 </dev/null >"$lv/stdout" 2>&1 &
    LIBVIRTD_SESSION_PID=$!
    cleanup_fn stop_libvirtd_session
    LIBVIRTD_SESSION_SOCK=$lv/run/libvirt/libvirt-sock
    LIBVIRTD_SESSION_URI="qemu+unix:///session?socket=$LIBVIRTD_SESSION_SOCK"
    wait_for 60 "libvirtd (session of nobody)" _rv_libvirtd_session_ready ||
        { _rv_show_file "$lv/stdout"; fail "libvirtd (session of nobody) did not start"; }
}

_rv_libvirtd_session_ready()
{
    [ -S "$LIBVIRTD_SESSION_SOCK" ] && virsh -c "$LIBVIRTD_SESSION_URI" version >/dev/null 2>&1
}

stop_libvirtd_session()
{
    [ -n "${LIBVIRTD_SESSION_PID:-}" ] || return 0
    kill "$LIBVIRTD_SESSION_PID" 2>/dev/null || true
    wait "$LIBVIRTD_SESSION_PID" 2>/dev/null || true
    LIBVIRTD_SESSION_PID=
}

_rv_libvirtd_ready()
{
    if ! kill -0 "$LIBVIRTD_PID" 2>/dev/null; then
        _rv_show_file "$RV_TMP/libvirtd/stderr"
        _rv_show_file "$LIBVIRTD_LOG"
        LIBVIRTD_PID=
        fail "libvirtd exited during startup (groups kvm and libvirt-qemu, user libvirt-qemu present?)"
    fi
    [ -S "$LIBVIRTD_SOCK" ]
}

stop_libvirtd()
{
    [ -n "${LIBVIRTD_PID:-}" ] || return 0
    local pid=$LIBVIRTD_PID
    LIBVIRTD_PID=
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for "$RV_TIMEOUT" "libvirtd to exit" _rv_gone "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------- sshd

# start_sshd ['Keyword value'...]
#
# An OpenSSH server of this test's own on a free loopback port: its own
# ed25519 host key and sshd_config, a client key (no passphrase) in its
# authorized_keys for every user, and sessions whose PATH starts with the
# build dir, so that remvirt-ssh-helper is found.  Extra lines replace the
# defaults with the same keyword (sshd takes the first it reads).  Sets:
#   SSHD_DIR SSHD_PORT SSHD_PID SSHD_LOG
#   SSH_CLIENT_KEY       the authorized private key
#   SSH_KNOWN_HOSTS      a known_hosts file holding the host key ([127.0.0.1]:PORT)
#   SSHD_HOST_KEY_PUB    the host's public key file
start_sshd()
{
    requires_root
    requires /usr/sbin/sshd -V
    requires ssh-keygen
    [ -z "${SSHD_PID:-}" ] || fail "start_sshd: an sshd is already running"
    # Privilege separation needs its empty directory.
    [ -d /run/sshd ] || mkdir -m 0755 /run/sshd

    SSHD_DIR=$RV_TMP/sshd
    SSHD_LOG=$SSHD_DIR/sshd.log
    SSH_CLIENT_KEY=$SSHD_DIR/client_key
    SSH_KNOWN_HOSTS=$SSHD_DIR/known_hosts
    SSHD_HOST_KEY_PUB=$SSHD_DIR/host_key.pub
    mkdir -p "$SSHD_DIR"
    ssh-keygen -q -t ed25519 -N '' -C remvirt-test-host -f "$SSHD_DIR/host_key"
    ssh-keygen -q -t ed25519 -N '' -C remvirt-test-client -f "$SSH_CLIENT_KEY"
    cp "$SSH_CLIENT_KEY.pub" "$SSHD_DIR/authorized_keys"
    SSHD_PORT=$(free_port)
    [ -n "$SSHD_PORT" ] || fail "no free port for sshd"
    echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$SSHD_HOST_KEY_PUB")" > "$SSH_KNOWN_HOSTS"

    local -a defaults=(
        "ListenAddress 127.0.0.1:$SSHD_PORT"
        "HostKey $SSHD_DIR/host_key"
        "PidFile $SSHD_DIR/sshd.pid"
        "AuthorizedKeysFile $SSHD_DIR/authorized_keys"
        "StrictModes no"
        "PermitRootLogin prohibit-password"
        "PasswordAuthentication no"
        "KbdInteractiveAuthentication no"
        "UsePAM no"
        "SetEnv PATH=$top_builddir:/usr/bin:/bin"
        "LogLevel VERBOSE"
    )
    local line key given
    {
        echo "# written by tests/functions.sh start_sshd"
        for given in "$@"; do
            echo "$given"
        done
        for line in "${defaults[@]}"; do
            key=${line%% *}
            for given in "$@"; do
                [ "${given%% *}" = "$key" ] && continue 2
            done
            echo "$line"
        done
    } > "$SSHD_DIR/sshd_config"

    # sshd re-executes itself, so it must be started by absolute path.
    /usr/sbin/sshd -D -e -f "$SSHD_DIR/sshd_config" </dev/null 2>"$SSHD_LOG" &
    SSHD_PID=$!
    cleanup_fn stop_sshd
    if ! wait_for "$RV_TIMEOUT" "sshd on port $SSHD_PORT" _rv_sshd_ready; then
        _rv_show_file "$SSHD_LOG"
        fail "sshd did not start"
    fi
}

_rv_sshd_ready()
{
    if ! kill -0 "$SSHD_PID" 2>/dev/null; then
        _rv_show_file "$SSHD_LOG"
        SSHD_PID=
        fail "sshd exited during startup"
    fi
    grep -q "Server listening on 127.0.0.1 port $SSHD_PORT" "$SSHD_LOG"
}

stop_sshd()
{
    [ -n "${SSHD_PID:-}" ] || return 0
    local pid=$SSHD_PID
    SSHD_PID=
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for "$RV_TIMEOUT" "sshd to exit" _rv_gone "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------- events

# The event tests against remvirtd: event-client (a libremvirt subscriber,
# tests/integration/event-client.c) and rvsh event.  Waits for events grow
# by RV_SLOW under valgrind, which makes everything slower.
EVENT_CLIENT=$top_builddir/tests/integration/event-client
RV_SLOW=1
[ -z "${RV_VALGRIND:-}" ] || RV_SLOW=4

# event_client ARG...: event-client, under valgrind too in make
# check-valgrind.  exec: started with bg, the process itself, not a
# subshell, gets the test's signals.
event_client()
{
    # RV_VALGRIND is a command prefix: split into words on purpose.
    # shellcheck disable=SC2086
    exec ${RV_VALGRIND:-} "$EVENT_CLIENT" "$@"
}

# events_warm_up FILE...: the subscribers writing to FILE... do not say
# when they are registered (rvsh), so suspend and resume domain 'test' on
# $REMVIRTD_URI until each file shows a resume (event-client's or rvsh's
# line).  events_strip_warmup cuts those events off again.
_rv_warm_once()
{
    printf 'suspend test\nresume test\n' | "$RVSH" -q -c "$REMVIRTD_URI" > /dev/null
    local f
    for f; do
        grep -qE "^lifecycle test 4 0$|^event 'lifecycle' for domain 'test': Resumed Unpaused$" \
            "$f" || return 1
    done
}
events_warm_up()
{
    wait_for $((30 * RV_SLOW)) "every subscriber to see an event" _rv_warm_once "$@"
}

# events_strip_warmup FILE: FILE without its leading "ready" and the
# warm-up's suspend and resume events of domain 'test'.
events_strip_warmup()
{
    awk 'skip && /^(ready|lifecycle test [34] 0|event .lifecycle. for domain .test.: (Suspended Paused|Resumed Unpaused))$/ { next }
         { skip = 0; print }' skip=1 "$1"
}

# ---------------------------------------------------------------- background processes

# bg OUT CMD ARG...: start CMD in the background with stdout to OUT and
# stderr to OUT.err, stdin bg's own (not /dev/null, which bash would give
# it); killed (after a SIGCONT) at exit if still running.  Sets BG_PID.
bg()
{
    local out=$1
    shift
    "$@" <&0 > "$out" 2> "$out.err" &
    BG_PID=$!
    cleanup_fn _rv_bg_kill "$BG_PID"
}

# start_script_server OUT SCRIPT ARG...: start the scripted server
# tests/integration/SCRIPT (python, tests/tools on its path) as bg does,
# output in OUT, and wait until it says "ready".  Sets BG_PID.
start_script_server()
{
    local out=$1 script=$2
    shift 2
    bg "$out" env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top_srcdir/tests/tools:$top_builddir/python" \
        "$PYTHON3" "$top_srcdir/tests/integration/$script" "$@"
    wait_for "$RV_TIMEOUT" "$script" has_line "$out" ready ||
        { show "$out"; fail "$script did not start"; }
}

# run_client_scenarios SERVER_OUT CLIENT SOCK SCENARIO...: run CLIENT
# SOCK SCENARIO for each scenario (under RV_VALGRIND's prefix, if set);
# at the first that fails, show SERVER_OUT and fail.
run_client_scenarios()
{
    local out=$1 client=$2 sock=$3 scenario status
    shift 3
    for scenario in "$@"; do
        echo "---- $scenario"
        status=0
        # RV_VALGRIND is a command prefix: split into words on purpose.
        ${RV_VALGRIND:-} "$client" "$sock" "$scenario" || status=$?
        [ "$status" -eq 0 ] ||
            { show "$out"; fail "${client##*/} $scenario failed (status $status)"; }
    done
}

_rv_bg_kill()
{
    if kill -0 "$1" 2>/dev/null; then
        kill -CONT "$1" 2>/dev/null
        kill -KILL "$1" 2>/dev/null
    fi
    wait "$1" 2>/dev/null
    return 0
}

# finish PID: wait (bounded) for a process started by bg; its exit status.
finish()
{
    wait_for $((2 * RV_TIMEOUT)) "process $1 to exit" _rv_gone "$1" || return 1
    local status=0
    wait "$1" || status=$?
    return "$status"
}

# has_line FILE LINE: FILE has exactly LINE as one of its lines.
has_line()
{
    grep -qxF -- "$2" "$1"
}

# show OUT: print a bg process's output and its stderr, for a failure.
show()
{
    echo "---- $1" >&2
    cat "$1" >&2
    [ ! -s "$1.err" ] || { echo "---- $1.err" >&2; cat "$1.err" >&2; }
}

# same EXPECTED ACTUAL WHAT: the files are equal, byte for byte.
same()
{
    if ! diff -u "$1" "$2" >&2; then
        show "$2"
        fail "$3: not the expected text (diff above)"
    fi
    echo "ok   $3 ($(wc -l < "$2") lines as expected)"
}

# domain_xml NAME UUID: a small test-driver domain definition on stdout.
domain_xml()
{
    cat <<XML
<domain type='test'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='KiB'>262144</memory>
  <vcpu>1</vcpu>
  <os><type>hvm</type></os>
</domain>
XML
}

# ---------------------------------------------------------------- the QEMU driver

# start_remvirtd_qemu [KEY = VALUE]...: start_remvirtd with the QEMU
# driver's directories in the test's temp dir ($QEMU_DIR/etc, $QEMU_DIR/run).
# QEMU_URI is qemu+unix:///system as root (CI), else ///session, on the
# daemon's socket.  Every QEMU started there is killed at exit, after the
# daemon stops.
# start_both_qemu NAME: libvirtd's and remvirtd's QEMU drivers side by
# side, the test guest's kernel ready (test_guest), and OUT=$RV_TMP/NAME
# for the guests' files, which libvirtd's QEMU user must be able to reach.
start_both_qemu()
{
    requires virsh
    requires qemu-img --version
    requires "$SYSTEM_PYTHON3" -c 'import libvirt'
    test_guest
    start_libvirtd_qemu
    start_remvirtd_qemu
    OUT=$RV_TMP/$1
    mkdir -p "$OUT"
    chmod 755 "$RV_TMP" "$OUT"
}

start_remvirtd_qemu()
{
    requires qemu-system-x86_64 --version
    QEMU_DIR=$RV_TMP/qemu
    mkdir -p "$QEMU_DIR"
    if [ -z "${_rv_qemu_cleanup:-}" ]; then
        _rv_qemu_cleanup=1
        cleanup_fn _rv_kill_qemus "$QEMU_DIR/run/"
    fi
    start_remvirtd "qemu_config_dir = \"$QEMU_DIR/etc\"" "qemu_run_dir = \"$QEMU_DIR/run\"" \
        "qemu_save_dir = \"$QEMU_DIR/save\"" "qemu_dump_dir = \"$QEMU_DIR/dump\"" "$@"
    local kind=session
    [ "$(id -u)" -ne 0 ] || kind=system
    QEMU_URI="qemu+unix:///$kind?socket=$REMVIRTD_SOCK"
}

# qemu_pids DIR: the pids of the guest QEMUs whose monitor socket is in
# DIR. The host CPU probe QEMU (DIR/cpu-probe.qmp, started with the first
# QEMU connection and gone once it answered) is not a guest: a test that
# counts guests would otherwise count it while it runs on a loaded machine.
qemu_pids()
{
    _rv_qemu_pids "$1" | grep -vF cpu-probe.qmp | cut -d' ' -f1
    return 0
}

# _rv_qemu_pids DIR: "PID CMDLINE" of every QEMU with its monitor in DIR.
_rv_qemu_pids()
{
    local f pid cmd
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        cmd=$({ tr '\0' ' ' < "$f"; } 2>/dev/null) || continue
        case "$cmd" in
        *"-qmp unix:$1"*) echo "$pid $cmd" ;;
        esac
    done
}

_rv_kill_qemus()
{
    local pid
    for pid in $(_rv_qemu_pids "$1" | cut -d' ' -f1); do
        kill -KILL "$pid" 2>/dev/null || true
    done
    return 0
}

# fake_qemu: tests/tools/fake-qemu.py as a binary of its own, run by the
# python3 the tests use; sets FAKE (for remvirtd's qemu_binary).
fake_qemu()
{
    requires "$PYTHON3" --version
    FAKE=$RV_TMP/fake-qemu
    printf '#!%s\n' "$(command -v "$PYTHON3")" > "$FAKE"
    tail -n +2 "$top_srcdir/tests/tools/fake-qemu.py" >> "$FAKE"
    chmod +x "$FAKE"
}

# qemu_domain_xml NAME [DEVICES]: a QEMU guest with no disk (it idles in
# its firmware), TCG, 64 MiB.
qemu_domain_xml()
{
    cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>${2:-}</devices>
</domain>
XML
}

# netns_view: in the namespace tests/netns.sh made (skips elsewhere), as
# root: mounts of its own, its own sysfs (its links only), loopback up.
netns_view()
{
    requires_root
    [ -n "${RV_IN_NETNS:-}" ] || skip "cannot make a network and mount namespace (unshare)"
    requires ip -V
    mount --make-rprivate /
    mount -t sysfs sysfs /sys
    ip link set lo up
}

# netns_view_cgroups: netns_view, and the cgroup hierarchies the
# namespace's own sysfs hides mounted again over it (this namespace only):
# libvirtd's QEMU driver needs them.
netns_view_cgroups()
{
    local cgroups type dir opts
    cgroups=$(awk '$3 ~ /^cgroup2?$/ && $2 ~ "^/sys/fs/cgroup/" { print $3, $2, $4 }' /proc/self/mounts)
    netns_view
    mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
    while read -r type dir opts; do
        mkdir -p "$dir"
        mount -t "$type" -o "$opts" cgroup "$dir"
    done <<< "$cgroups"
}

# copy_source_tree DIR: the source tree as a fresh clone has it (tracked
# and new files, no build dirs) into DIR; an unpacked tarball (make
# distcheck) is not a git tree of its own, so there it is copied whole.
copy_source_tree()
{
    local copy=$1
    mkdir -p "$copy"
    if [ "$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$top_srcdir" && pwd -P)" ]; then
        (cd "$top_srcdir" &&
            git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
            xargs -0 cp --parents -t "$copy") || fail "cannot copy the source tree"
    else
        (cd "$top_srcdir" && tar --exclude=./_build -cf - .) | tar -C "$copy" -xf - ||
            fail "cannot copy the source tree"
        chmod -R u+w "$copy"
        # The tarball carries generated files a checkout has not: they would
        # shadow the ones the copy's build makes.
        find "$copy" \( -name '*.gen.*' -o -name .stamp \) -delete
    fi
}

# test_guest: the tiny guest that boots (tests/tools/build-test-guest.sh),
# built once into the build dir (or $RV_TEST_GUEST_DIR) and kept there;
# sets TEST_GUEST_KERNEL and TEST_GUEST_INITRD, or skips the test when it
# cannot be built.
test_guest()
{
    requires flock --version
    local dir=${RV_TEST_GUEST_DIR:-$top_builddir/tests/guest}
    bash "$top_srcdir/tests/tools/build-test-guest.sh" "$dir" >&2 ||
        { [ -n "${RV_FRESH_CACHES:-}" ] && fail "cannot build the test guest (see above)"
          skip "cannot build the test guest (see above)"; }
    TEST_GUEST_KERNEL=$dir/vmlinuz
    TEST_GUEST_INITRD=$dir/initrd.img
}

# qemu_guest_xml NAME [EXTRA]: test_guest's guest, TCG, 128 MiB of which
# the balloon leaves it 96, its console on a pty; EXTRA goes after <os>.
qemu_guest_xml()
{
    cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <memory unit='MiB'>128</memory>
  <currentMemory unit='MiB'>96</currentMemory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$TEST_GUEST_KERNEL</kernel>
    <initrd>$TEST_GUEST_INITRD</initrd>
    <cmdline>console=ttyS0 quiet panic=-1</cmdline>
  </os>
  <features><acpi/></features>${2:-}
  <devices><serial type='pty'/></devices>
</domain>
XML
}

# with_test_qmp SOCKET: the domain XML on stdin with a QMP monitor of the
# test's own on SOCKET (<qemu:commandline>), for guest_disk_write.
with_test_qmp()
{
    sed -e "s|^<domain type='qemu'>|<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>|" \
        -e "s|^</domain>|<qemu:commandline><qemu:arg value='-qmp'/><qemu:arg value='unix:$1,server=on,wait=off'/></qemu:commandline></domain>|"
}

# guest_disk_write SOCKET IMAGE OFFSET PATTERN: the guest's disk whose
# file ends in IMAGE gets PATTERN written at OFFSET (1 MiB) through its
# device, as the guest's own writes go (HMP qemu-io on the disk's
# backend, over with_test_qmp's monitor: remvirtd has no
# qemu-monitor-command, and the test guest has no disk driver).
guest_disk_write()
{
    "$SYSTEM_PYTHON3" - "$1" "$2" "write -P $4 $3 1M" <<'PY' || fail "the guest's write at $3"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def cmd(name, **args):
    f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
    f.flush()
    while True:
        m = json.loads(f.readline())
        if "return" in m or "error" in m:
            if "error" in m:
                sys.exit(m["error"]["desc"])
            return m["return"]
json.loads(f.readline())
cmd("qmp_capabilities")
qdev = [b["qdev"] for b in cmd("query-block") if b.get("inserted", {}).get("file", "").endswith(sys.argv[2])][0]
# (flushed: the image read beside the running guest has its metadata)
for c in sys.argv[3], "flush":
    out = cmd("human-monitor-command", **{"command-line": 'qemu-io -d %s "%s"' % (qdev, c)})
    if out.strip():
        sys.exit(out.strip())
PY
}

# agent_guest_up URI NAME XMLFILE: define and start the guest NAME from
# XMLFILE (a guest with the agent's channel) and wait until its agent
# answers (a TCG boot on a busy machine can take minutes); agent_guest_down URI NAME destroys and undefines it.
agent_guest_up()
{
    local uri=$1 name=$2
    virsh -q -c "$uri" define "$3" > /dev/null
    virsh -q -c "$uri" start "$name" > /dev/null
    _rv_agent_answers() { virsh -q -c "$uri" domhostname --source agent "$name" > /dev/null 2>&1; }
    wait_for 240 "$name's guest agent to answer" _rv_agent_answers
}

agent_guest_down()
{
    virsh -q -c "$1" destroy "$2" > /dev/null
    virsh -q -c "$1" undefine "$2" > /dev/null
}

# capture_console NAME FILE [RUNDIR]: copy the running guest NAME's serial
# console (its pty, which QEMU names in the domain's log in RUNDIR, the
# remvirtd's run directory: $QEMU_DIR/run unless given) into FILE, in the
# background until QEMU closes it or the test ends.
capture_console()
{
    local pty
    pty=$(sed -n 's|.*char device redirected to \(/dev/pts/[0-9]*\) (label charserial0).*|\1|p' \
          "${3:-$QEMU_DIR/run}/$1.log" | tail -n 1)
    [ -n "$pty" ] || fail "no pty for $1's console in its log"
    bg "$2" cat "$pty"
    # Output that comes before the reader has the pty open is lost.
    wait_for 30 "the console reader to open $pty" _rv_has_open "$BG_PID" "$pty"
}

# _rv_has_open PID PATH: process PID has PATH open.
_rv_has_open()
{
    local fd
    for fd in /proc/"$1"/fd/*; do
        [ "$(readlink "$fd" 2>/dev/null)" = "$2" ] && return 0
    done
    return 1
}

# virsh_transcript URI URI_RO DIR [MASK]: run every step of the caller's
# array `steps` with virsh, from DIR (where the steps' XML files are), and
# print each one's stdout, stderr and exit status, for comparing two
# servers.  A step "ro:..." runs on URI_RO; a step "mask:..." has its
# output passed through the command MASK (numbers a server makes from the
# clock, say).
virsh_transcript()
{
    local uri=$1 uri_ro=$2 dir=$3 masker=${4:-cat} step rc u mask
    for step in "${steps[@]}"; do
        rc=0
        u=$uri
        mask=cat
        case $step in ro:*) u=$uri_ro; step=${step#ro:} ;; esac
        case $step in mask:*) mask=$masker; step=${step#mask:} ;; esac
        (cd "$dir" && virsh -c "$u" "$step") >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== virsh %s\n' "$(printf '%s' "$step" | tr -s ' \n' ' ')"
        $mask < "$RV_TMP/out"
        echo "--- stderr"
        $mask < "$RV_TMP/err"
        echo "--- exit status $rc"
    done
}

# sockets_as_word PATH PATH: stdin with both socket paths written SOCKET,
# the one thing two servers' transcripts may differ in.
sockets_as_word()
{
    sed -e "s|$1|SOCKET|g" -e "s|$2|SOCKET|g"
}
