# Two "hosts" for the migration tests, sourced after tests/functions.sh:
# this test's network namespace (A, NET.1) and one it makes (B, NET.2)
# joined by a veth pair, each remvirtd with its own state directories,
# reached over qemu+tcp (auth none, private addresses); and, for the
# figures, the same pair of stock libvirtds.
#   migrate_hosts NS NET PORTBASE: remvirtd A (URI $A) and B (URI $B,
#       directory $BDIR, start_b/stop_b/b_up); B's migration ports are
#       PORTBASE..PORTBASE+9
#   restart_a: remvirtd A killed (SIGKILL) and started again
#   migrate_libvirtd_pair: libvirtd A ($LA) and B ($LB, its own host name)
#       on port 16510 of the same addresses; fails the test when it cannot
#       start (call libvirtd_qemu_why_not first)

migrate_hosts()
{
    MIG_NS=$1 MIG_NET=$2
    local portbase=$3
    ip netns add "$MIG_NS"
    cleanup_fn ip netns del "$MIG_NS"
    ip link add "${MIG_NS}a" type veth peer name "${MIG_NS}b"
    ip link set "${MIG_NS}b" netns "$MIG_NS"
    ip addr add "$MIG_NET.1/24" dev "${MIG_NS}a"
    ip link set "${MIG_NS}a" up
    ip netns exec "$MIG_NS" ip link set lo up
    ip netns exec "$MIG_NS" ip addr add "$MIG_NET.2/24" dev "${MIG_NS}b"
    ip netns exec "$MIG_NS" ip link set "${MIG_NS}b" up

    MIG_A_CONF=('listen_tcp = 1' 'tcp_port = "16509"' 'auth_tcp = "none"'
        "listen_addr = \"$MIG_NET.1\"" "qemu_migration_host = \"$MIG_NET.1\""
        'log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"' "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\"")
    start_remvirtd_qemu "${MIG_A_CONF[@]}"
    A=qemu+tcp://$MIG_NET.1/system

    BDIR=$RV_TMP/remvirtd-b
    mkdir -p "$BDIR"
    cat > "$BDIR/remvirtd.conf" <<CONF
unix_sock_dir = "$BDIR"
log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"
log_outputs = "1:file:$BDIR/remvirtd.log"
listen_tcp = 1
tcp_port = "16509"
auth_tcp = "none"
listen_addr = "$MIG_NET.2"
qemu_config_dir = "$BDIR/qemu/etc"
qemu_run_dir = "$BDIR/qemu/run"
qemu_save_dir = "$BDIR/qemu/save"
qemu_dump_dir = "$BDIR/qemu/dump"
qemu_migration_host = "$MIG_NET.2"
qemu_migration_port_min = $portbase
qemu_migration_port_max = $((portbase + 9))
CONF
    cleanup_fn stop_b
    B=qemu+tcp://$MIG_NET.2/system
    start_b
}
start_b()
{
    ip netns exec "$MIG_NS" "$REMVIRTD" -f "$BDIR/remvirtd.conf" --pidfile "$BDIR/remvirtd.pid" \
        < /dev/null >> "$BDIR/stdout" 2>> "$BDIR/stderr" &
    BPID=$!
    wait_for 30 "remvirtd B on $MIG_NET.2" b_up || { show "$BDIR/stderr"; fail "remvirtd B did not start"; }
}
restart_a() { kill_remvirtd; start_remvirtd_qemu "${MIG_A_CONF[@]}"; }
stop_b() { kill "$BPID" 2> /dev/null || true; wait "$BPID" 2> /dev/null || true; _rv_kill_qemus "$BDIR/qemu/run/"; }
b_up() { virsh -q -c "$B" version > /dev/null 2>&1; }

migrate_libvirtd_pair()
{
    start_libvirtd_qemu 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
        "listen_addr = \"$MIG_NET.1\"" 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000a"'
    LA=qemu+tcp://$MIG_NET.1:16510/system
    LBDIR=$RV_TMP/libvirtd-b
    _rv_libvirtd_conf "$LBDIR" 'listen_tls = 0' 'listen_tcp = 1' 'tcp_port = "16510"' 'auth_tcp = "none"' \
        "listen_addr = \"$MIG_NET.2\"" 'host_uuid = "5b7a1c1e-0000-4000-8000-00000000000b"'
    # Its own host name too: libvirtd refuses a destination named as the source.
    nsenter --net=/run/netns/"$MIG_NS" unshare --mount --uts --propagation private \
        sh -c 'hostname rvmig-b && exec sh "$0" "$@"' "$top_srcdir/tests/tools/libvirtd-qemu-ns.sh" "$LBDIR" --listen \
        < /dev/null > "$LBDIR/stdout" 2> "$LBDIR/stderr" &
    LBPID=$!
    cleanup_fn stop_lb
    LB=qemu+tcp://$MIG_NET.2:16510/system
    wait_for 60 "libvirtd B on $MIG_NET.2" lb_up || { show "$LBDIR/stderr"; fail "libvirtd B did not start"; }
}
stop_lb() { kill "$LBPID" 2> /dev/null || true; wait "$LBPID" 2> /dev/null || true; }
lb_up() { virsh -q -c "$LB" uri > /dev/null 2>&1; }
