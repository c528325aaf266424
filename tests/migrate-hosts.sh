# Two "hosts" for the migration tests, sourced after functions.sh: this
# test's network namespace (A, 10.231.0.1) and one made here (B,
# 10.231.0.2, network namespace $MIG_NS) joined by a veth pair.
# migrate_hosts_up makes them (after the checks these tests share: it
# may skip); start_b starts a remvirtd in B with
# directories of its own ($BDIR) and the host name rvmig-b (libvirtd
# refuses a migration cookie naming its own host), reached at $B.
# (/run/netns is the machine's: named after this test's process, so that
# two migration tests can run at once)
# migrate_pair_up does all of it for the tests that migrate between two
# remvirtds: A's remvirtd (qemu+tcp, $A), B's, and guest g ($OUT/g.xml).
MIG_NS=rvmig$$
BDIR=$RV_TMP/remvirtd-b
B=qemu+tcp://10.231.0.2/system
OUT=$RV_TMP/migrate
SHARED=$RV_TMP/shared      # the directory both hosts see

# shared_guest_xml NAME [DEVICES]: $OUT/NAME.xml, the test guest with a
# new 16 MiB qcow2 disk in $SHARED, the agent's channel and DEVICES; it
# counts on its console (remvirt.counter=on: see counter_continued).
shared_guest_xml()
{
    qemu-img create -q -f qcow2 "$SHARED/$1.qcow2" 16M
    local disk="<disk type='file' device='disk'><driver name='qemu' type='qcow2' cache='none'/><source file='$SHARED/$1.qcow2'/><target dev='vda' bus='virtio'/></disk>"
    local channel="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
    qemu_guest_xml "$1" | sed -e "s|<devices>|<devices>$disk$channel${2:-}|" \
        -e "s|panic=-1</cmdline>|panic=-1 remvirt.counter=on</cmdline>|" > "$OUT/$1.xml"
}

# counters FILE: the counter values of the whole lines "remvirt-test-guest:
# counter N" in FILE (a line cut by the start of the reading is not one).
counters() { tr -d '\r' < "$1" | sed -n 's/^remvirt-test-guest: counter \([0-9][0-9]*\)$/\1/p'; }
# counter_continued SOURCE_LOG DEST_LOG (each host's capture_console: B's
# QEMU has a pty of its own, read once the guest runs there): the guest's
# counter went on across the migration: the first value read on the
# destination is greater than the last the source printed (a guest booted
# afresh would count from 1 again; one whose memory did not come along
# could not count on).  Waits up to 30 s for the destination's first value.
counter_continued()
{
    _rv_counted() { [ -n "$(counters "$1")" ]; }
    wait_for 30 "the guest's counter on the destination's console" _rv_counted "$2" ||
        { show "$2"; fail "no counter on the destination's console"; }
    local last first
    last=$(counters "$1" | tail -n 1)
    first=$(counters "$2" | head -n 1)
    [ -n "$last" ] || { show "$1"; fail "no counter on the source's console"; }
    [ "$first" -gt "$last" ] ||
        fail "the guest's counter restarted: $last on the source, then $first on the destination"
    echo "the guest's counter went on: $last on the source, $first next on the destination" >&2
}

migrate_hosts_up()
{
    netns_view_cgroups
    requires virsh
    requires qemu-img --version
    test_guest
    ip netns add $MIG_NS
    cleanup_fn ip netns del $MIG_NS
    ip link add rvma type veth peer name rvmb
    ip link set rvmb netns $MIG_NS
    ip addr add 10.231.0.1/24 dev rvma
    ip link set rvma up
    ip netns exec $MIG_NS ip link set lo up
    ip netns exec $MIG_NS ip addr add 10.231.0.2/24 dev rvmb
    ip netns exec $MIG_NS ip link set rvmb up
    mkdir -p "$BDIR" "$OUT" "$SHARED"
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
    cleanup_fn stop_b
}

b_up() { virsh -q -c "$B" version > /dev/null 2>&1; }

# (unshare without --fork execs: $BPID is remvirtd's own)
start_b()
{
    ip netns exec $MIG_NS unshare --uts sh -c 'hostname rvmig-b && exec "$0" "$@"' \
        "$REMVIRTD" -f "$BDIR/remvirtd.conf" --pidfile "$BDIR/remvirtd.pid" \
        < /dev/null >> "$BDIR/stdout" 2>> "$BDIR/stderr" &
    BPID=$!
    wait_for 30 "remvirtd B on 10.231.0.2" b_up || { show "$BDIR/stderr"; fail "remvirtd B did not start"; }
}

# restart_b: B's remvirtd stopped and started again, its guests running on.
restart_b()
{
    kill "$BPID"
    wait "$BPID" 2> /dev/null || true
    start_b
}

stop_b()
{
    [ -z "${BPID:-}" ] || { kill "$BPID" 2> /dev/null || true; wait "$BPID" 2> /dev/null || true; }
    _rv_kill_qemus "$BDIR/qemu/run/"
}

# migrate_pair_up: the hosts, A's remvirtd at $A and B's at $B, and
# $OUT/g.xml (guest g on the shared disk).
migrate_pair_up()
{
    migrate_hosts_up
    MIG_A_CONF=('listen_tcp = 1' 'tcp_port = "16509"' 'auth_tcp = "none"'
        'listen_addr = "10.231.0.1"' 'qemu_migration_host = "10.231.0.1"'
        'log_filters = "1:server.dispatch 2:qemu 2:drivers.qemu"' "log_outputs = \"1:file:$RV_TMP/remvirtd/remvirtd.log\"")
    start_remvirtd_qemu "${MIG_A_CONF[@]}"
    A=qemu+tcp://10.231.0.1/system
    start_b
    shared_guest_xml g
}

# restart_a: A's remvirtd killed (SIGKILL) and started again.
restart_a() { kill_remvirtd; start_remvirtd_qemu "${MIG_A_CONF[@]}"; }

run_a() { [ "$(virsh -q -c "$A" domstate g)" = running ]; }
b_empty() { [ -z "$(virsh -q -c "$B" list --all --name)" ] && [ -z "$(qemu_pids "$BDIR/qemu/run/")" ]; }
# on_a_alone WHAT: g runs on A alone, and A has no job of it (another
# migration may begin); fails naming WHAT otherwise.
on_a_alone()
{
    run_a || fail "$1: g is not running on A"
    b_empty || fail "$1: B has a domain or a QEMU"
    virsh -q -c "$A" domjobinfo g | grep -q "Job type: *None" || fail "$1: A still has a job"
}
# migrate_refused WHAT PATTERN ARGS...: `virsh -c $A migrate ARGS` fails
# with PATTERN (grep -E) in its output, and g runs on A alone.
migrate_refused()
{
    local what=$1 pattern=$2 out=$OUT/refused
    shift 2
    if virsh -q -c "$A" migrate "$@" > "$out" 2>&1; then fail "$what: the migration succeeded"; fi
    grep -qE -- "$pattern" "$out" || { show "$out"; fail "$what: no clear error ($pattern)"; }
    on_a_alone "$what"
}
# on_b_migrated: g runs on B (reason migrated) with the memory it had on
# A (agent_on), shut off on A, one QEMU on B and none on A.
on_b_migrated()
{
    [ "$(virsh -q -c "$B" domstate g)" = running ] || fail "g is not running on B"
    virsh -q -c "$B" domstate --reason g | grep -q "running (migrated)" || fail "B's reason"
    [ "$(virsh -q -c "$A" domstate g)" = "shut off" ] || fail "A: g is not shut off"
    [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "A kept a QEMU"
    [ "$(qemu_pids "$BDIR/qemu/run/" | wc -l)" = 1 ] || fail "B has no QEMU (or more than one)"
    wait_for 60 "the guest's key, in its memory, on B" agent_on "$B"
}
# key_guest_up KEY: g ($OUT/g.xml) booted on A with KEY in its agent's
# memory (root's SSH keys); agent_on URI: the g at URI has it (its
# memory came along).
key_guest_up()
{
    MIG_KEY=$1
    agent_guest_up "$A" g "$OUT/g.xml"
    echo "$MIG_KEY" > "$OUT/key"
    virsh -q -c "$A" set-user-sshkeys g root --file "$OUT/key" > /dev/null
    agent_on "$A" || fail "the key is not in the guest"
}
agent_on() { virsh -q -c "$1" get-user-sshkeys g root 2> /dev/null | grep -qF "$MIG_KEY"; }
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
    nsenter --net=/run/netns/$MIG_NS unshare --mount --uts --propagation private \
        sh -c 'hostname rvmig-b && exec sh "$0" "$@"' "$top_srcdir/tests/tools/libvirtd-qemu-ns.sh" "$LBDIR" --listen \
        < /dev/null > "$LBDIR/stdout" 2> "$LBDIR/stderr" &
    LBPID=$!
    stop_lb() { kill "$LBPID" 2> /dev/null || true; wait "$LBPID" 2> /dev/null || true; }
    cleanup_fn stop_lb
    LB=qemu+tcp://10.231.0.2:16510/system
    lb_up() { virsh -q -c "$LB" uri > /dev/null 2>&1; }
    wait_for 60 "libvirtd B on 10.231.0.2" lb_up || { show "$LBDIR/stderr"; fail "libvirtd B did not start"; }
}
