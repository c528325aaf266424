#!/usr/bin/env bash
# From a fresh Debian 12, as root: install the build dependencies, build
# remvirt in ./build, start remvirtd with the in-memory test driver on a
# socket in a new private directory (mktemp -d /tmp/remvirt-quickstart.*),
# and show `rvsh list --all` and `rvsh dominfo test` against it.
#
# remvirtd keeps running afterwards so you can try more commands (rvsh,
# or virsh with the same URI); the last lines say its URI and how to stop
# it.  Running the script again restarts it with a fresh build.
#
#   sudo ./quickstart.sh            as above
#   sudo ./quickstart.sh --stop     stop the quickstart remvirtd
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
# The run directory's name is random, so nobody can prepare it (or links
# in it) for root in the shared /tmp; this file says where it is.
statefile=$top/build/quickstart-rundir

# The recorded run directory, if it is still one this script made as root.
recorded_rundir()
{
    local dir
    [ -f "$statefile" ] && [ ! -L "$statefile" ] || return 1
    dir=$(cat "$statefile")
    [[ $dir =~ ^/tmp/remvirt-quickstart\.[A-Za-z0-9]{10}$ ]] && [ -d "$dir" ] &&
        [ ! -L "$dir" ] && [ "$(stat -c %u "$dir")" = 0 ] && echo "$dir"
}

stop_daemon()
{
    local dir pid
    dir=$(recorded_rundir) || return 0
    if [ -s "$dir/remvirtd.pid" ]; then
        pid=$(cat "$dir/remvirtd.pid")
        if kill -TERM "$pid" 2>/dev/null; then
            for _ in $(seq 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            if kill -0 "$pid" 2>/dev/null; then
                echo "quickstart: remvirtd (pid $pid) did not stop after SIGTERM" >&2
                return 1
            fi
        fi
    fi
    rm -rf "$dir" "$statefile"
}

case ${1:-} in
--stop)
    [ "$(id -u)" -eq 0 ] || { echo "quickstart: run as root: sudo $0 --stop" >&2; exit 1; }
    stop_daemon; echo "remvirtd stopped"; exit 0 ;;
-h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "quickstart: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
    echo "quickstart: run as root (it installs packages): sudo $0" >&2
    exit 1
fi

echo "== Installing the build dependencies"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
    build-essential autoconf automake libtool pkg-config rpcsvc-proto \
    libtirpc-dev libev-dev libgnutls28-dev libsasl2-dev libssh2-1-dev \
    libreadline-dev python3 libjson-c-dev libxml2-dev

echo "== Building in $top/build"
cd "$top"
autoreconf -fi
mkdir -p build
cd build
../configure
make -j2

stop_daemon
rundir=$(mktemp -d /tmp/remvirt-quickstart.XXXXXXXXXX)
# Others may use the read-only socket (mode 0777); only root writes here.
chmod 755 "$rundir"
echo "$rundir" > "$statefile"
pidfile=$rundir/remvirtd.pid
uri="test+unix:///default?socket=$rundir/remvirt-sock"
echo "== Starting remvirtd (socket dir $rundir)"
cat > "$rundir/remvirtd.conf" <<EOF
unix_sock_dir = "$rundir"
unix_sock_rw_perms = "0770"
unix_sock_ro_perms = "0777"
log_outputs = "3:file:$rundir/remvirtd.log"
EOF
# setsid: the daemon outlives this script and its terminal.
setsid ./remvirtd -f "$rundir/remvirtd.conf" --pidfile "$pidfile" \
    </dev/null >>"$rundir/remvirtd.log" 2>&1 &
for _ in $(seq 100); do
    [ -S "$rundir/remvirt-sock" ] && [ -s "$pidfile" ] && break
    sleep 0.1
done
if ! [ -S "$rundir/remvirt-sock" ]; then
    echo "quickstart: remvirtd did not start; its log:" >&2
    cat "$rundir/remvirtd.log" >&2
    exit 1
fi

echo "== rvsh -c '$uri' list --all"
./rvsh -c "$uri" list --all
echo "== rvsh -c '$uri' dominfo test"
./rvsh -c "$uri" dominfo test

cat <<EOF
== remvirtd is still running (pid $(cat "$pidfile")).
Try:   $top/build/rvsh -c '$uri'
  or:  virsh -c '$uri' list --all
Stop:  sudo $top/quickstart.sh --stop    (or: kill \$(cat $pidfile))
EOF
