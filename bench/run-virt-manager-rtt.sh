#!/usr/bin/env bash
# Round trips of a virt-manager session, remvirtd and libvirtd side by
# side: Debian's virt-manager under Xvfb (the machinery of
# tests/interop/test-virt-manager.sh) connects to a test driver holding N
# running domains, with every stats poll on (CPU, memory, disk, network;
# the default 3 s interval), shows its main window, then is left polling
# for SECONDS.  Its libvirt's log (rpc.netclient) counts the procedure
# calls: to connect and list (from the start until the main window shows
# the domains, the first polls included), per second of polling, per
# poll interval and per domain.  virt-manager polls a test connection
# domain by domain (it skips CONNECT_GET_ALL_DOMAIN_STATS there on
# purpose): these are the per-domain figures.
#
#   bench/run-virt-manager-rtt.sh [--builddir DIR] [--domains 1,10,50]
#                                 [--seconds 60] [--no-libvirt] [--top K]
#
# Builds nothing: DIR (default ./build) must hold remvirtd.  The domains
# are copies of the test driver's domain 'test' (which is removed), made
# through a python3-libvirt connection that stays open during the
# session (libvirtd's test driver forgets its state when its last client
# leaves).  --top K lists the K most called procedures of each polling
# window.  A private libvirtd needs root; without it, or with
# --no-libvirt, only remvirtd is measured.  About SECONDS + 15 s per
# domain count and daemon.
set -euo pipefail

builddir=./build
domain_counts=1,10,50
seconds=60
use_libvirt=yes
top=0
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    --domains) domain_counts=${2:?--domains needs N,N,...}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --no-libvirt) use_libvirt=; shift ;;
    --top) top=${2:?--top needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-virt-manager-rtt: unknown option '$1'" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/bench-env.sh"
source "$abs_top_srcdir/tests/interop/virt-manager-lib.sh"

requires_virt_manager_ui
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
if [ -n "$use_libvirt" ] && { [ "$(id -u)" != 0 ] || ! libvirtd --version >/dev/null 2>&1; }; then
    echo "no private libvirtd (needs root and libvirtd installed): remvirtd only"
    use_libvirt=
fi
start_xvfb

# Every stats poll on, through virt-manager's settings keyfile (a fresh
# copy each session: virt-manager writes its connections there).
keyfile=$RV_TMP/virt-manager.keyfile
cat > "$keyfile.template" <<'EOF'
[org/virt-manager/virt-manager/stats]
update-interval=3
enable-cpu-poll=true
enable-disk-poll=true
enable-net-poll=true
enable-memory-poll=true
EOF
interval=3

# hold_domains URI N: N running copies of 'test' on URI, held by a
# connection in the background until release_domains.
hold_domains()
{
    mkfifo "$RV_TMP/hold.in"
    : > "$RV_TMP/hold.out"
    local script='
import re, sys, libvirt
conn = libvirt.open(sys.argv[1])
template = conn.lookupByName("test").XMLDesc(0)
template = re.sub(r"\s*<uuid>[^<]*</uuid>", "", template)
for i in range(int(sys.argv[2])):
    xml = template.replace("<name>test</name>", "<name>bench%03d</name>" % i)
    conn.defineXML(xml).create()
old = conn.lookupByName("test")
old.destroy()
old.undefine()
print("ready", flush=True)
sys.stdin.read()        # until release_domains closes the pipe
'
    "$SYSTEM_PYTHON3" -c "$script" "$1" "$2" < "$RV_TMP/hold.in" > "$RV_TMP/hold.out" 2>&1 &
    HOLD_PID=$!
    exec {hold_fd}> "$RV_TMP/hold.in"
    wait_for 60 "the domains to be made" grep -q ready "$RV_TMP/hold.out" ||
        fail "could not make the domains: $(cat "$RV_TMP/hold.out")"
}

release_domains()
{
    exec {hold_fd}>&-
    wait "$HOLD_PID" || true
    rm -f "$RV_TMP/hold.in" "$RV_TMP/hold.out"
}

# measure DAEMON URI N: one session; prints one line of the table.
measure()
{
    local daemon=$1 uri=$2 n=$3 name window start end
    name=$daemon-$n
    hold_domains "$uri" "$n"
    cp "$keyfile.template" "$keyfile"
    VM_EXPECT_DOMAINS="bench000 bench$(printf %03d $((n - 1)))" VM_IDLE_SECONDS=$seconds \
    VM_OPTIONS="--test-options=gsettings-keyfile=$keyfile" \
        run_virt_manager "$name" "$uri" main idle > "$RV_TMP/$name.steps"
    release_domains
    window=$(sed -n 's/^window //p' "$RV_TMP/$name.steps")
    start=${window% *}
    end=${window#* }
    local procs=$abs_top_srcdir/tests/interop/virt-manager-procs.py
    local spec=$abs_top_srcdir/protocol/rv_remote.x
    "$PYTHON3" "$procs" --count --since 0 --until "$start" "$spec" "$RV_TMP/$name.log" \
        > "$RV_TMP/$name.connect"
    "$PYTHON3" "$procs" --count --since "$start" --until "$end" "$spec" "$RV_TMP/$name.log" \
        > "$RV_TMP/$name.poll"
    local connect polled
    connect=$(sed -n 's/^total //p' "$RV_TMP/$name.connect")
    polled=$(sed -n 's/^total //p' "$RV_TMP/$name.poll")
    awk -v d="$daemon" -v n="$n" -v c="$connect" -v p="$polled" -v s="$end" -v b="$start" \
        -v i="$interval" 'BEGIN {
            secs = s - b; per_poll = p / (secs / i)
            printf "%-9s %4d %8d %8d %9.1f %10.1f %12.2f\n", d, n, c, p, p / secs, per_poll, per_poll / n
        }'
    if [ "$top" -gt 0 ]; then
        head -n "$top" "$RV_TMP/$name.poll" | sed 's/^/            /'
    fi
}

printf '%-9s %4s %8s %8s %9s %10s %12s\n' daemon N connect polled "calls/s" "calls/poll" "/poll/domain"
IFS=, read -ra counts <<< "$domain_counts"
for n in "${counts[@]}"; do
    start_remvirtd
    measure remvirtd "$REMVIRTD_URI" "$n"
    stop_remvirtd
    if [ -n "$use_libvirt" ]; then
        start_libvirtd
        measure libvirtd "$LIBVIRTD_URI" "$n"
        stop_libvirtd
    fi
done
echo "connect: calls until the main window lists the domains; polled: calls in" \
     "${seconds}s of polling (interval ${interval}s, CPU/memory/disk/network stats on)"
