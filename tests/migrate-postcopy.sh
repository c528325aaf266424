# The post-copy migration tests' steps (test-qemu-migrate-postcopy.sh,
# test-qemu-migrate-postcopy-p2p.sh), sourced after migrate-hosts.sh: a
# guest g migrated in the background while both hosts' states of it are
# sampled; KEY (set by the test) is the SSH key its agent keeps in RAM.

# states URI: g's state and reason there ("-" when it has none).
state() { virsh -q -c "$1" domstate --reason g 2> /dev/null || echo "-"; }

# watch_states FILE URI...: each URI's state of g, every 0.1 s, the
# changes written to FILE.URI-index, until the file FILE.stop exists.
watch_states()
{
    local f=$1 i
    shift
    rm -f "$f.stop"
    (
        declare -A last=()
        while [ ! -e "$f.stop" ]; do
            i=0
            for u in "$@"; do
                s=$(state "$u")
                # (how long a state lasts is each daemon's: "starting up" is
                # too short to be seen every time)
                [ "${last[$i]:-}" = "$s" ] || [ "$s" = "paused (starting up)" ] ||
                    { echo "$s" >> "$f.$i"; last[$i]=$s; }
                i=$((i + 1))
            done
            sleep 0.1
        done
    ) &
    WATCH=$!
    cleanup_fn _rv_bg_kill "$WATCH"
    sampled() { [ -s "$f.$(($# - 1))" ]; }
    wait_for 30 "the first states" sampled "$@"
}
stop_watch() { touch "$1.stop"; wait "$WATCH" 2> /dev/null || true; }

has_job() { virsh -q -c "$1" domjobinfo g 2> /dev/null | grep -q "Job type: *Unbounded"; }
key_on() { virsh -q -c "$1" get-user-sshkeys g root 2> /dev/null | grep -qF "$KEY"; }

# scenario NAME FROM TO VIRSH-MIGRATE-ARGS [ACTION]: g migrated FROM to
# TO in the background; ACTION (a function) runs once its job is seen
# (FROM TO as its arguments); the states of both written to
# $D/NAME.states.{0,1}, virsh's result to $D/NAME.result.
scenario()
{
    local name=$1 from=$2 to=$3 args=$4 action=${5:-}
    watch_states "$D/$name.states" "$from" "$to"
    local start=$(date +%s.%N)
    bg "$D/$name.out" virsh -q -c "$from" migrate --live --unsafe g "$to" $args
    local mig=$BG_PID
    [ -z "$action" ] || { wait_for 60 "$name: the migration job" has_job "$from"; $action "$from" "$to"; }
    if wait "$mig"; then echo "ok" > "$D/$name.result"; else echo "failed: $(cat "$D/$name.out.err")" > "$D/$name.result"; fi
    echo "$name: virsh migrate $args: $(awk "BEGIN { print $(date +%s.%N) - $start }") s" >> "$D/times"
    sleep 0.5
    stop_watch "$D/$name.states"
}

# (libvirtd's job begins at BEGIN3, before QEMU's migration: the switch
# waits for the stream)
streaming() { virsh -q -c "$1" domjobinfo g 2> /dev/null | grep -q "Memory processed: *[1-9]"; }
switch_now() { wait_for 60 "the stream" streaming "$1"; virsh -q -c "$1" migrate-postcopy g || true; }
# show_run NAME: a scenario's result and the states its two hosts went through.
# (the source's paused (migrating) just before paused (post-copy) lasts
# as long as the switch takes, and a transient source's shut off
# (migrated) before it goes as long as its removal: seen on either
# daemon, or not)
show_states() { awk '$0 == "paused (post-copy)" && prev == "paused (migrating)" { sub(/paused \(migrating\)\n$/, "", out) }
                     $0 == "-" && prev == "shut off (migrated)" { sub(/shut off \(migrated\)\n$/, "", out) }
                     { out = out $0 "\n"; prev = $0 } END { printf "%s", out }' "$1" 2> /dev/null || true; }
show_run() { cat "$D/$1.result"; show_states "$D/$1.states.0"; echo "--"; show_states "$D/$1.states.1"; }
# key_check URI: whether the guest's memory came along.
key_check() { if wait_for 30 "the key" key_on "$1"; then echo "key there"; else echo "key missing"; fi; }
pc_running() { [ "$(state "$1")" = "running (post-copy)" ]; }

# side_begin A B DIR: both daemons' events listened to (into
# DIR/events-a, -b; SIDE_EV: the listeners), and g booted on A with KEY
# in its memory.
side_begin()
{
    D=$3
    mkdir -p "$D"
    bg "$D/events-a" virsh -c "$1" event --all --loop
    SIDE_EV=$BG_PID
    bg "$D/events-b" virsh -c "$2" event --all --loop
    SIDE_EV="$SIDE_EV $BG_PID"
    agent_guest_up "$1" g "$OUT/g.xml"
    echo "$KEY" > "$OUT/key"
    virsh -q -c "$1" set-user-sshkeys g root --file "$OUT/key" > /dev/null
}
# side_end [SUFFIX]: the listeners stopped; DIR/lifecycle-a, -b: g's
# lifecycle events of DIR/events-{a,b}SUFFIX, without the definition's
# (which may come before virsh event listens) and without a destroy's
# Shutdown Finished (QEMU's SHUTDOWN at the SIGTERM: libvirtd 9.0 sends
# it or not, as its QEMU's last event and its own end race).
side_end()
{
    sleep 1
    kill $SIDE_EV 2> /dev/null || true
    for s in a b; do
        grep "^event 'lifecycle'" "$D/events-$s${1:-}" | sed 's/^event .lifecycle. for domain .g.: //' |
            grep -v "Defined\|Undefined" |
            awk '$0 == "Stopped Destroyed" && prev == "Shutdown Finished after host request" { n-- }
                 { line[n++] = $0; prev = $0 } END { for (i = 0; i < n; i++) print line[i] }' > "$D/lifecycle-$s" || true
    done
}

# postcopy_failure A B MIGRATEURI_B KILL_B_QEMU [ARGS]: g migrated A to B
# post-copy (ARGS too), B's QEMU killed once B runs it: the result, the
# states of both, A's job.  (once the destination runs it: how soon
# FINISH3 resumes it is each daemon's)
postcopy_failure()
{
    local killb=$4
    kill_b_after_switch() { switch_now "$1"; wait_for 60 "post-copy on B" pc_running "$2"; sleep 1; $killb; }
    scenario pf "$1" "$2" "${5:-}--postcopy --bandwidth 8 --postcopy-bandwidth 2 --migrateuri $3" kill_b_after_switch
    sed 's/^failed: .*/failed/' "$D/pf.result"
    show_states "$D/pf.states.0"; echo "--"; show_states "$D/pf.states.1"
    virsh -q -c "$1" domjobinfo g 2>&1 | head -2
}

# B's incoming QEMU killed: remvirtd's, libvirtd's (the one started with
# -incoming, in B's network namespace).
kill_rb() { qemu_pids "$BDIR/qemu/run/" | xargs -r kill -KILL; }
kill_lb() { ip netns pids $MIG_NS | xargs -r ps -o pid=,args= -p | awk '/qemu-system/ && /-incoming/ { print $1 }' | xargs -r kill -KILL; }
