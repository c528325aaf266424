#!/usr/bin/env bash
# remvirtd (as root) puts its pid file and sockets only where nobody else
# can swap names: a pid file that is a symbolic link, someone else's file
# or a hard link, or that is reached through a symbolic link another user
# could plant, is refused, and so is a log file (log_outputs, at start and
# at each SIGHUP's reopen); and so is a socket directory that another
# user owns or can write, that sits below such a directory, or that is a
# symbolic link.  Each refusal names its cause and changes nothing outside
# the daemon's own files.  The sockets get their modes at birth, and a
# second daemon on the same pid file says the first holds it.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires setpriv
id nobody >/dev/null 2>&1 || skip "no user nobody"
nobody_group=$(id -gn nobody)
as_nobody() { setpriv --reuid=nobody --regid="$nobody_group" --clear-groups "$@"; }

# nobody needs to reach into the temp dir to plant things.
chmod 755 "$RV_TMP"
good=$RV_TMP/good
mkdir -m 755 "$good"
victim_dir=$RV_TMP/victims
mkdir -m 755 "$victim_dir"
victim=$victim_dir/secret
echo "root's own data" > "$victim"
chmod 600 "$victim"
before=$(stat -c '%a %s %Y %h' "$victim"; ls -l --time-style=full-iso "$victim_dir")

unchanged()
{
    local after
    after=$(stat -c '%a %s %Y %h' "$victim"; ls -l --time-style=full-iso "$victim_dir")
    [ "$after" = "$before" ] || fail "$1: $victim or its directory changed: $after"
    [ "$(cat "$victim")" = "root's own data" ] || fail "$1: $victim was written"
}

# refused WHAT WORDS SOCKDIR PIDFILE: remvirtd must exit non-zero saying
# WORDS, leave no socket in SOCKDIR and leave the victim alone.
refused()
{
    local what=$1 words=$2 dir=$3 pid=$4 conf=$RV_TMP/refused.conf out
    printf 'unix_sock_dir = "%s"\nunix_sock_ro_perms = "0777"\n%s\n' "$dir" "${5:-}" > "$conf"
    local status=0
    out=$(timeout 10 "$REMVIRTD" -f "$conf" --pidfile "$pid" 2>&1) || status=$?
    unchanged "$what"
    [ "$status" -ne 0 ] || fail "$what: remvirtd exited 0"
    [ "$status" -ne 124 ] || fail "$what: remvirtd started (stopped after 10 s)"
    if [ -d "$dir" ] && [ -n "$(find "$dir" -type s)" ]; then
        fail "$what: sockets were made in $dir"
    fi
    grep -qF -- "$words" <<<"$out" || fail "$what: '$out' does not say '$words'"
    echo "ok: $what: $out"
}

# Pid files in a directory nobody owns (as a shared run directory would be).
pub=$RV_TMP/pub
mkdir -m 755 "$pub"
chown nobody "$pub"

as_nobody ln -s "$victim" "$pub/link.pid"
refused "pid file planted as a symbolic link" \
    "refusing the pid file $pub/link.pid: it is a symbolic link" "$good" "$pub/link.pid"

as_nobody touch "$pub/theirs.pid"
refused "pid file owned by nobody" \
    "refusing the pid file $pub/theirs.pid: it belongs to uid $(id -u nobody)" \
    "$good" "$pub/theirs.pid"
[ ! -s "$pub/theirs.pid" ] || fail "nobody's pid file was written"

ln "$victim" "$RV_TMP/hard.pid"
before=$(stat -c '%a %s %Y %h' "$victim"; ls -l --time-style=full-iso "$victim_dir")
refused "pid file that is a hard link" \
    "refusing the pid file $RV_TMP/hard.pid: it has other hard links" "$good" "$RV_TMP/hard.pid"
rm "$RV_TMP/hard.pid"
before=$(stat -c '%a %s %Y %h' "$victim"; ls -l --time-style=full-iso "$victim_dir")

# A directory of root's, reached through a link that nobody planted in
# their directory: neither the pid file nor a log file goes there.
rootonly=$RV_TMP/rootonly
mkdir -m 700 "$rootonly"
as_nobody ln -s "$rootonly" "$pub/run"
refused "pid file below a link nobody planted" \
    "refusing the pid file $pub/run/x.pid: $pub/run: a symbolic link that another user can change" \
    "$good" "$pub/run/x.pid"
refused "log file below a link nobody planted" \
    "cannot open $pub/run/x.log: $pub/run: a symbolic link that another user can change" \
    "$good" "$RV_TMP/a.pid" "log_outputs = \"1:file:$pub/run/x.log\""
as_nobody ln -s "$victim" "$pub/link.log"
refused "log file planted as a symbolic link" "cannot open $pub/link.log: it is a symbolic link" \
    "$good" "$RV_TMP/a.pid" "log_outputs = \"1:file:$pub/link.log\""
[ -z "$(ls -A "$rootonly")" ] || fail "remvirtd made files in $rootonly: $(ls -A "$rootonly")"

# Socket directories.
theirs=$RV_TMP/theirs
mkdir -m 755 "$theirs"
chown nobody "$theirs"
refused "socket directory owned by nobody" \
    "refusing unix_sock_dir $theirs: it belongs to another user (uid $(id -u nobody)" \
    "$theirs" "$RV_TMP/a.pid"

open=$RV_TMP/open
mkdir "$open"
chmod 777 "$open"
refused "world-writable socket directory" \
    "refusing unix_sock_dir $open: it is writable by its group or others (uid 0, mode 0777)" \
    "$open" "$RV_TMP/a.pid"

chmod 1777 "$open"
refused "sticky world-writable socket directory" \
    "refusing unix_sock_dir $open: it is writable by its group or others" \
    "$open" "$RV_TMP/a.pid"

# Root's own directory below nobody's: nobody could rename it away and
# put one of their own (or a link) in its place.
mkdir -m 755 "$pub/rootdir"
refused "socket directory below a directory nobody owns" \
    "refusing unix_sock_dir $pub/rootdir: the directory $pub above it belongs to another user" \
    "$pub/rootdir" "$RV_TMP/a.pid"
# Not even when it has yet to be made.
refused "socket directory to be made below nobody's" \
    "the directory $pub above it belongs to another user" "$pub/new" "$RV_TMP/a.pid"
[ ! -e "$pub/new" ] || fail "remvirtd made $pub/new"

ln -s "$good" "$RV_TMP/link-dir"
refused "socket directory that is a symbolic link" \
    "refusing unix_sock_dir $RV_TMP/link-dir: it is a symbolic link" \
    "$RV_TMP/link-dir" "$RV_TMP/a.pid"
# A link on the way into nobody's directory: where it leads counts.
ln -s "$pub" "$RV_TMP/to-pub"
refused "socket directory reached through a link to nobody's directory" \
    "the directory $pub above it belongs to another user" "$RV_TMP/to-pub/rootdir" \
    "$RV_TMP/a.pid"
[ ! -e "$pub/rootdir/remvirt-sock" ] || fail "a socket was made in $pub/rootdir"

# The default configuration of the tests: a root-owned 0755 directory in
# sticky /tmp.  Modes are exact from the start, the pid file is ours.
start_remvirtd 'unix_sock_rw_perms = "0710"' 'unix_sock_ro_perms = "0777"'
[ "$(stat -c %a "$REMVIRTD_SOCK")" = 710 ] || fail "rw socket mode $(stat -c %a "$REMVIRTD_SOCK")"
[ "$(stat -c %a "$REMVIRTD_SOCK_RO")" = 777 ] || fail "ro socket mode $(stat -c %a "$REMVIRTD_SOCK_RO")"
[ "$(cat "$REMVIRTD_DIR/remvirtd.pid")" = "$REMVIRTD_PID" ] || fail "pid file does not hold the pid"

# A second daemon on the same pid file stops before touching the sockets.
ino=$(stat -c %i "$REMVIRTD_SOCK")
if out=$(timeout 20 "$REMVIRTD" -f "$REMVIRTD_CONF" --pidfile "$REMVIRTD_DIR/remvirtd.pid" 2>&1)
then
    fail "a second remvirtd started on the same pid file"
fi
grep -qF "$REMVIRTD_DIR/remvirtd.pid is locked: is another remvirtd running?" <<<"$out" ||
    fail "second daemon: '$out'"
[ "$(stat -c %i "$REMVIRTD_SOCK")" = "$ino" ] || fail "the second daemon replaced the socket"
[ "$(cat "$REMVIRTD_DIR/remvirtd.pid")" = "$REMVIRTD_PID" ] || fail "the second daemon wrote the pid file"
"$RVSH" -c "$REMVIRTD_URI" list --all >/dev/null || fail "the first daemon no longer answers"

# The SIGHUP reopen: a log in nobody's directory, whose file or whose
# directory nobody replaces with a link between two reopens, is not
# followed there; the daemon goes on logging to what it had.
logs=$pub/logs
as_nobody mkdir -m 755 "$logs"
stop_remvirtd
start_remvirtd "log_outputs = \"2:file:$logs/remvirtd.log\"" 'log_level = 2'
"$RVSH" -c "$REMVIRTD_URI" list --all >/dev/null     # serving: its SIGHUP handler is on
hups() { grep -c "SIGHUP: done" "$1" || true; }
more_hups() { [ "$(hups "$1")" -gt "$2" ]; }
hup()
{
    local n
    n=$(hups "$1")
    kill -HUP "$REMVIRTD_PID"
    wait_for 10 "the SIGHUP to be done" more_hups "$1" "$n"
}
as_nobody mv "$logs/remvirtd.log" "$logs/rotated.log"
as_nobody ln -s "$victim" "$logs/remvirtd.log"
hup "$logs/rotated.log"
grep -q "cannot reopen the log file $logs/remvirtd.log: it is a symbolic link" "$logs/rotated.log" ||
    fail "the reopen through a planted link was not refused: $(tail -3 "$logs/rotated.log")"
"$RVSH" -c "$REMVIRTD_URI" list --all >/dev/null
unchanged "a SIGHUP with the log file a link to root's file"
as_nobody rm "$logs/remvirtd.log"
as_nobody mv "$logs" "$pub/logs.old"
as_nobody ln -s "$rootonly" "$logs"
hup "$pub/logs.old/rotated.log"
grep -q "cannot reopen the log file $logs/remvirtd.log: $logs: a symbolic link that another user can change" \
    "$pub/logs.old/rotated.log" || fail "the reopen through a planted directory link was not refused"
[ -z "$(ls -A "$rootonly")" ] || fail "the reopen made files in $rootonly: $(ls -A "$rootonly")"
echo "ok: log files: planted links refused at start and at the SIGHUP reopen"

# Replaced while it ran: the daemon leaves the new name alone on exit.
mv "$REMVIRTD_DIR/remvirtd.pid" "$REMVIRTD_DIR/old.pid"
echo other > "$REMVIRTD_DIR/remvirtd.pid"
stop_remvirtd
[ "$(cat "$REMVIRTD_DIR/remvirtd.pid")" = other ] || fail "remvirtd removed a pid file not its own"
unchanged "the daemon's whole run"
echo "ok: socket modes, the pid lock, the pid file on exit"
