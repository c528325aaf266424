#!/usr/bin/env bash
# Idle clients side by side: a private remvirtd and (as root, with libvirtd
# installed) a private libvirtd, each given --clients idle clients (default
# 10,000) by bench/idle_clients.py, which prints KiB per idle client and a
# busy client's GetInfo round trip with and without them.
#
#   bench/run-idle-clients.sh [--builddir DIR] [--no-libvirt] [-- IDLE-CLIENTS-OPTIONS]
#
# Options after -- go to idle_clients.py (--clients N, --calls N).
set -euo pipefail

builddir=./build
use_libvirt=yes
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --no-libvirt) use_libvirt=; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-idle-clients: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"

# Every idle client is a socket here and in the daemon, which inherit this.
want_files=32768
# root may raise the hard limit too.
ulimit -Hn "$want_files" 2>/dev/null || true
hard_files=$(ulimit -Hn)
if [ "$hard_files" != unlimited ] && [ "$hard_files" -lt "$want_files" ]; then
    want_files=$hard_files
fi
ulimit -n "$want_files"

start_remvirtd 'max_clients = 20000'
servers=("remvirtd=$REMVIRTD_SOCK:$REMVIRTD_PID")
if [ -n "$use_libvirt" ]; then
    if [ "$(id -u)" = 0 ] && libvirtd --version >/dev/null 2>&1; then
        start_libvirtd 'max_clients = 20000' 'max_queued_clients = 1000'
        servers+=("libvirtd=$LIBVIRTD_SOCK:$LIBVIRTD_PID")
    else
        echo "no private libvirtd (needs root and libvirtd installed): its row is skipped"
    fi
fi
rawpy "${servers[@]}" "$@" < "$abs_top_srcdir/bench/idle_clients.py"
