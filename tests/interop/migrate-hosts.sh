# Sourced by the migration tests (after netns.sh and functions.sh): two
# remvirtds, each a "host" of its own: the test's network namespace (A,
# 10.231.0.1) and one made here (B, 10.231.0.2, named $MIG_NS) joined by
# a veth pair, each remvirtd with its own state directories, reached over
# qemu+tcp (auth none, private addresses).  The test guest's disk is in a
# directory both see.  Gives A, B (their URIs), BDIR, BPID, start_b,
# stop_b, b_up, OUT, SHARED and $OUT/g.xml (guest g with an agent
# channel and the shared disk), and the checks below.
: "${MIG_NS:=rvmigb}"
NS=$MIG_NS
ip netns add $NS
cleanup_fn ip netns del $NS
ip link add rvma type veth peer name rvmb
ip link set rvmb netns $NS
ip addr add 10.231.0.1/24 dev rvma
ip link set rvma up
ip netns exec $NS ip link set lo up
ip netns exec $NS ip addr add 10.231.0.2/24 dev rvmb
ip netns exec $NS ip link set rvmb up

start_remvirtd_qemu 'listen_tcp = 1' 'tcp_port = "16509"' 'auth_tcp = "none"' \
    'listen_addr = "10.231.0.1"' 'qemu_migration_host = "10.231.0.1"' \
    'log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"' "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\""
A=qemu+tcp://10.231.0.1/system

# B: a second remvirtd in the other namespace, with directories of its own.
BDIR=$RV_TMP/remvirtd-b
mkdir -p "$BDIR"
cat > "$BDIR/remvirtd.conf" <<EOF
unix_sock_dir = "$BDIR"
log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"
log_outputs = "1:file:$BDIR/remvirtd.log"
listen_tcp = 1
tcp_port = "16509"
auth_tcp = "none"
listen_addr = "10.231.0.2"
qemu_config_dir = "$BDIR/qemu/etc"
qemu_run_dir = "$BDIR/qemu/run"
qemu_save_dir = "$BDIR/qemu/save"
qemu_dump_dir = "$BDIR/qemu/dump"
qemu_migration_host = "10.231.0.2"
qemu_migration_port_min = 49300
qemu_migration_port_max = 49309
EOF
start_b()
{
    ip netns exec $NS "$REMVIRTD" -f "$BDIR/remvirtd.conf" --pidfile "$BDIR/remvirtd.pid" \
        < /dev/null >> "$BDIR/stdout" 2>> "$BDIR/stderr" &
    BPID=$!
    wait_for 30 "remvirtd B on 10.231.0.2" b_up || { show "$BDIR/stderr"; fail "remvirtd B did not start"; }
}
stop_b() { kill "$BPID" 2> /dev/null || true; wait "$BPID" 2> /dev/null || true; _rv_kill_qemus "$BDIR/qemu/run/"; }
cleanup_fn stop_b
B=qemu+tcp://10.231.0.2/system
b_up() { virsh -q -c "$B" version > /dev/null 2>&1; }
start_b

OUT=$RV_TMP/migrate
SHARED=$RV_TMP/shared
mkdir -p "$OUT" "$SHARED"
qemu-img create -q -f qcow2 "$SHARED/g.qcow2" 16M
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
DISK="<disk type='file' device='disk'><driver name='qemu' type='qcow2' cache='none'/><source file='$SHARED/g.qcow2'/><target dev='vda' bus='virtio'/></disk>"
qemu_guest_xml g | sed "s|<devices>|<devices>$DISK$CHANNEL|" > "$OUT/g.xml"

run_a() { [ "$(virsh -q -c "$A" domstate g)" = running ]; }
b_empty() { [ -z "$(virsh -q -c "$B" list --all --name)" ] && [ -z "$(qemu_pids "$BDIR/qemu/run/")" ]; }
# check_migrated_events A_EVENTS B_EVENTS: the files of `virsh event` on
# A and B have the lifecycle events of g's migration from A to B.
check_migrated_events()
{
    grep -q "lifecycle.*g.*Suspended Migrated" "$1" || { show "$1"; fail "A: Suspended Migrated"; }
    grep -q "lifecycle.*g.*Stopped Migrated" "$1" || { show "$1"; fail "A: Stopped Migrated"; }
    grep -q "lifecycle.*g.*Started Migrated" "$2" || { show "$2"; fail "B: Started Migrated"; }
    grep -q "lifecycle.*g.*Resumed Migrated" "$2" || { show "$2"; fail "B: Resumed Migrated"; }
}

# start_libvirtd_pair ['key = value'...]: two stock libvirtds with their
# QEMU drivers in the same two namespaces (tcp port 16510, auth none), for
# comparison; extra lines go into B's libvirtd.conf.  Gives LA, LB (their
# URIs) and LBDIR.  The caller checks libvirtd_qemu_why_not first.
start_libvirtd_pair()
{
    start_libvirtd_qemu 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
        'listen_addr = "10.231.0.1"' 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000a"'
    LA=qemu+tcp://10.231.0.1:16510/system
    LBDIR=$RV_TMP/libvirtd-b
    _rv_libvirtd_conf "$LBDIR" 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
        'listen_addr = "10.231.0.2"' 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000b"' "$@"
    # Its own host name too: libvirtd refuses a destination named as the source.
    nsenter --net=/run/netns/$NS unshare --mount --uts --propagation private \
        sh -c 'hostname rvmig-b && exec sh "$0" "$@"' "$top_srcdir/tests/tools/libvirtd-qemu-ns.sh" "$LBDIR" --listen \
        < /dev/null > "$LBDIR/stdout" 2> "$LBDIR/stderr" &
    LBPID=$!
    stop_lb() { kill "$LBPID" 2> /dev/null || true; wait "$LBPID" 2> /dev/null || true; }
    cleanup_fn stop_lb
    LB=qemu+tcp://10.231.0.2:16510/system
    lb_up() { virsh -q -c "$LB" uri > /dev/null 2>&1; }
    wait_for 60 "libvirtd B on 10.231.0.2" lb_up || { show "$LBDIR/stderr"; fail "libvirtd B did not start"; }
}
