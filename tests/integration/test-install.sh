#!/usr/bin/env bash
# `make install DESTDIR=...` lays out exactly the expected files (this
# build's configured directories); what it installs works from there:
# remvirtd reads the installed, fully commented remvirtd.conf and leaves
# after --timeout without socket activation; rvsh runs on the installed
# libremvirt; a program builds against the installed remvirt.h through
# libremvirt.pc and talks to remvirtd; the units name the installed
# binary and socket directory and pass `systemd-analyze verify`.  Then
# `make uninstall` leaves no file behind.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires make
requires pkg-config
requires cc
[ -f "$top_builddir/Makefile" ] || skip "no configured build directory"

# A make of its own, not a part of the `make check` that runs this test.
own_make()
{
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top_builddir" "$@"
}

# The directories this build was configured with, from its Makefile.
dirs=$(own_make -f Makefile -f - rv-print-dirs <<'EOF'
rv-print-dirs:
	@echo "sbindir='$(sbindir)' bindir='$(bindir)' libdir='$(libdir)' includedir='$(includedir)'"
	@echo "mandir='$(mandir)' sysconfdir='$(sysconfdir)' statedir='$(statedir)'"
	@echo "unitdir='$(systemdsystemunitdir)' unixsockdir='$(unixsockdir)' sockgroup='$(sockgroup)'"
	@echo "sanitize='$(RV_LDFLAGS)'"
EOF
)
eval "$dirs"

root=$RV_TMP/root
own_make install DESTDIR="$root" > "$RV_TMP/install.log" 2>&1 ||
    { cat "$RV_TMP/install.log" >&2; fail "make install failed"; }

{
    echo "$sbindir/remvirtd"
    echo "$bindir/rvsh"
    echo "$bindir/rvadm"
    echo "$bindir/remvirt-ssh-helper"
    echo "$libdir/libremvirt.so"
    echo "$libdir/libremvirt.so.0"
    echo "$libdir/libremvirt.so.0.0.0"
    echo "$libdir/libremvirt.la"
    echo "$libdir/pkgconfig/libremvirt.pc"
    echo "$includedir/remvirt.h"
    echo "$includedir/remvirt-calls.gen.h"
    echo "$includedir/remvirt-values.gen.h"
    echo "$mandir/man8/remvirtd.8"
    echo "$mandir/man1/rvsh.1"
    echo "$mandir/man1/rvadm.1"
    echo "$mandir/man1/remvirt-ssh-helper.1"
    echo "$sysconfdir/remvirt/remvirtd.conf"
    echo "$sysconfdir/sasl2/remvirtd.conf"
    if [ -n "$unitdir" ]; then
        for unit in remvirtd.service remvirtd.socket remvirtd-ro.socket remvirtd-admin.socket \
                    remvirtd-tcp.socket remvirtd-tls.socket; do
            echo "$unitdir/$unit"
        done
    fi
} | sort > "$RV_TMP/expected"
(cd "$root" && find . ! -type d | sed 's|^\.||' | sort) > "$RV_TMP/installed"
same "$RV_TMP/expected" "$RV_TMP/installed" "the installed files"
[ -d "$root$statedir" ] || fail "no state directory $statedir"
[ -x "$root$sbindir/remvirtd" ] && [ -x "$root$bindir/rvsh" ] &&
    [ -x "$root$bindir/remvirt-ssh-helper" ] || fail "a program was installed without x bits"
echo "ok   state directory $statedir"

# The configuration: every setting commented out, showing this build's
# defaults, and remvirtd accepts it as it is.
conf=$root$sysconfdir/remvirt/remvirtd.conf
settings=$(grep -v '^#' "$conf" | grep . || true)
[ -z "$settings" ] || fail "the installed remvirtd.conf sets something: $settings"
has_line "$conf" "#unix_sock_dir = \"$unixsockdir\"" || fail "remvirtd.conf does not show unix_sock_dir's default"
echo "ok   remvirtd.conf: all commented, unix_sock_dir \"$unixsockdir\""

# The installed remvirtd with the installed conf (sockets elsewhere),
# without socket activation: it makes its own sockets, serves the
# installed rvsh (on the installed libremvirt) and a program built with
# libremvirt.pc, and leaves once they have gone (--timeout 5: long enough
# for the holder below to connect on a loaded machine).
run=$RV_TMP/run
mkdir -m 0700 "$run"
"$root$sbindir/remvirtd" -f "$conf" --unix-sock-dir "$run/s" --timeout 5 \
    --pidfile "$run/pid" > "$run/out" 2>&1 &
remvirtd_pid=$!
cleanup_fn _rv_bg_kill "$remvirtd_pid"
wait_for "$RV_TIMEOUT" "the installed remvirtd's sockets" test -S "$run/s/remvirt-sock-ro"
uri="test+unix:///default?socket=$run/s/remvirt-sock"
# A client that stays (raw, silent) holds off the idle exit meanwhile.
"$PYTHON3" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
time.sleep(3600)' "$run/s/remvirt-sock" </dev/null >"$run/holder.out" 2>&1 &
holder=$!
cleanup_fn _rv_bg_kill "$holder"
wait_for "$RV_TIMEOUT" "the holder to connect" grep -qs connected "$run/holder.out"
LD_LIBRARY_PATH=$root$libdir "$root$bindir/rvsh" -c "$uri" list --all > "$run/list" 2>&1 ||
    { cat "$run/list" >&2; fail "the installed rvsh"; }
grep -qE '^ 1 +test +running$' "$run/list" || { cat "$run/list" >&2; fail "rvsh list"; }
LD_LIBRARY_PATH=$root$libdir ldd "$root$bindir/rvsh" > "$run/ldd"
grep -q "libremvirt.so.0 => $root$libdir/" "$run/ldd" ||
    { cat "$run/ldd" >&2; fail "rvsh did not use the installed libremvirt"; }
echo "ok   the installed remvirtd serves the installed rvsh (installed libremvirt)"

cat > "$RV_TMP/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <remvirt.h>

int main(int argc, char **argv)
{
    rv_conn *conn = rv_connect_open(argv[1], 0);
    if (!conn || argc < 2) {
        fprintf(stderr, "%s\n", rv_last_error() ? rv_last_error()->message : "usage");
        return 1;
    }
    char *type = rv_connect_get_type(conn);
    printf("%s %d\n", type ? type : "?", rv_connect_num_of_domains(conn));
    free(type);
    return rv_connect_close(conn) < 0;
}
EOF
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root$libdir/pkgconfig
# shellcheck disable=SC2046
# With --enable-sanitizers the library wants the program built so too.
# shellcheck disable=SC2086
cc $sanitize -o "$RV_TMP/prog" "$RV_TMP/prog.c" $(pkg-config --cflags --libs libremvirt) \
    > "$RV_TMP/cc.log" 2>&1 || { cat "$RV_TMP/cc.log" >&2; fail "building against libremvirt.pc"; }
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
LD_LIBRARY_PATH=$root$libdir "$RV_TMP/prog" "$uri" > "$RV_TMP/prog.out" 2>&1 ||
    { cat "$RV_TMP/prog.out" >&2; fail "the program built against the installed library"; }
has_line "$RV_TMP/prog.out" "TEST 1" || { cat "$RV_TMP/prog.out" >&2; fail "its answer"; }
echo "ok   a program built with pkg-config libremvirt talks to remvirtd"

kill "$holder"
wait_for $((RV_TIMEOUT + 5)) "the idle exit (--timeout 5)" _rv_gone "$remvirtd_pid"
status=0
wait "$remvirtd_pid" || status=$?
[ "$status" = 0 ] || { cat "$run/out" >&2; fail "remvirtd's idle exit: status $status"; }
[ ! -e "$run/s/remvirt-sock" ] || fail "remvirtd left its own sockets behind"
echo "ok   without clients, --timeout 5 ended it (status 0, its sockets removed)"

if [ -n "$unitdir" ]; then
    has_line "$root$unitdir/remvirtd.service" "ExecStart=$sbindir/remvirtd \$REMVIRTD_ARGS" ||
        fail "remvirtd.service does not run $sbindir/remvirtd"
    has_line "$root$unitdir/remvirtd.socket" "ListenStream=$unixsockdir/remvirt-sock" ||
        fail "remvirtd.socket does not listen in $unixsockdir"
    if [ -n "$sockgroup" ]; then
        has_line "$root$unitdir/remvirtd.socket" "SocketGroup=$sockgroup" || fail "no SocketGroup"
    else
        ! grep -q SocketGroup "$root$unitdir/remvirtd.socket" || fail "a SocketGroup without a group"
    fi
    echo "ok   the units name $sbindir/remvirtd and $unixsockdir"
    if command -v systemd-analyze >/dev/null; then
        # verify checks that ExecStart exists: point it into DESTDIR.
        mkdir "$RV_TMP/units"
        for f in "$root$unitdir"/*; do
            sed "s|^ExecStart=$sbindir/|ExecStart=$root$sbindir/|" "$f" > "$RV_TMP/units/${f##*/}"
        done
        (cd "$RV_TMP/units" && systemd-analyze verify --man=no ./*) > "$RV_TMP/verify" 2>&1 ||
            { cat "$RV_TMP/verify" >&2; fail "systemd-analyze verify"; }
        if [ -s "$RV_TMP/verify" ]; then
            cat "$RV_TMP/verify" >&2
            fail "systemd-analyze verify has something to say about the units"
        fi
        echo "ok   systemd-analyze verify: the units are clean"
    fi
fi

own_make uninstall DESTDIR="$root" > "$RV_TMP/uninstall.log" 2>&1 ||
    { cat "$RV_TMP/uninstall.log" >&2; fail "make uninstall failed"; }
left=$(cd "$root" && find . ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok   make uninstall removes every file"
