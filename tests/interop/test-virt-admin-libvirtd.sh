#!/usr/bin/env bash
# virt-admin against libvirtd's admin socket and remvirtd's, side by side:
# the same commands with the same clients connected give the same output
# where the daemons agree (srv-list, srv-clients-info, client-list and
# client-info apart from times, ids and libvirtd's user and group names,
# the logging settings, srv-update-tls without TLS, the errors for an
# unknown server or client); srv-threadpool-info has the same fields,
# with remvirtd's real shape (no workers).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virt-admin
requires "$PYTHON3" --version
start_remvirtd
start_libvirtd

# One read-write client held on each daemon, ending when it is closed.
# It makes one call (AUTH_LIST, 66): libvirtd knows a client's identity
# only from its first call on.
hold='import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(struct.pack(">IIIiiIi", 28, 0x20008086, 1, 66, 0, 1, 0))
s.recv(4096)
print("connected", flush=True)
while s.recv(4096):
    pass'
bg "$RV_TMP/hold-rv" "$PYTHON3" -c "$hold" "$REMVIRTD_SOCK"
bg "$RV_TMP/hold-lv" "$PYTHON3" -c "$hold" "$LIBVIRTD_SOCK"
wait_for "$RV_TIMEOUT" "the held clients" grep -qs connected "$RV_TMP/hold-rv" "$RV_TMP/hold-lv"

# Times, ids and pids differ between the runs by nature; libvirtd adds the
# user and group names, which remvirtd leaves out (looking them up could
# block its one thread on NSS).
normalize()
{
    sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\+0000/TIME/' \
        -e 's/^ [0-9]+( +unix)/ ID\1/' -e 's/^(id|unix_process_id)( *): [0-9]+$/\1\2: N/' \
        -e '/^unix_(user|group)_name/d' -e "s|$RV_TMP/[a-z]*/|DIR/|g"
}

# same WHAT CMD...: the command's output and error, normalised, are the
# same from both daemons.
same()
{
    local what=$1 rv lv
    shift
    rv=$(virt-admin -c "$REMVIRTD_ADMIN_URI" "$@" 2>&1 | normalize) || true
    lv=$(virt-admin -c "$LIBVIRTD_ADMIN_URI" "$@" 2>&1 | normalize) || true
    if [ "$rv" != "$lv" ]; then
        echo "---- remvirtd:" >&2; echo "$rv" >&2
        echo "---- libvirtd:" >&2; echo "$lv" >&2
        fail "virt-admin $*: remvirtd and libvirtd differ ($what)"
    fi
    echo "ok   virt-admin $* ($what): the same from both"
}

# Admin clients: remvirtd numbers all clients in one sequence, libvirtd
# per server; the admin server's count includes each virt-admin itself.
# libvirtd lists its servers in hash order: compare names only.
servers() { virt-admin -c "$1" srv-list | awk 'NR > 2 && NF == 2 { print $2 }' | sort; }
[ "$(servers "$REMVIRTD_ADMIN_URI")" = "$(servers "$LIBVIRTD_ADMIN_URI")" ] ||
    fail "srv-list: the servers differ"
echo "ok   virt-admin srv-list: the same servers from both"
same "one client in, default limits" srv-clients-info libvirtd
same "the held client" client-list libvirtd
rv_id=$(virt-admin -c "$REMVIRTD_ADMIN_URI" client-list libvirtd | awk '$2 == "unix" { print $1 }')
lv_id=$(virt-admin -c "$LIBVIRTD_ADMIN_URI" client-list libvirtd | awk '$2 == "unix" { print $1 }')
rv=$(virt-admin -c "$REMVIRTD_ADMIN_URI" client-info libvirtd "$rv_id" | normalize)
lv=$(virt-admin -c "$LIBVIRTD_ADMIN_URI" client-info libvirtd "$lv_id" | normalize)
[ "$rv" = "$lv" ] || { echo "$rv" >&2; echo "---- libvirtd:" >&2; echo "$lv" >&2;
                       fail "client-info differs"; }
echo "ok   virt-admin client-info libvirtd ID: the same from both (names aside)"
same "an unknown client" client-info libvirtd 999999
same "an unknown server" srv-clients-info nosuch
same "no TLS listener" srv-update-tls libvirtd

# Thread pools: the same fields, remvirtd's all 0.
fields()
{
    virt-admin -c "$1" srv-threadpool-info libvirtd | awk -F: 'NF == 2 { print $1 }'
}
[ "$(fields "$REMVIRTD_ADMIN_URI")" = "$(fields "$LIBVIRTD_ADMIN_URI")" ] ||
    fail "srv-threadpool-info: the fields differ"
echo "ok   srv-threadpool-info: the same fields from both"

# Logging settings, set the same way on both.
for uri in "$REMVIRTD_ADMIN_URI" "$LIBVIRTD_ADMIN_URI"; do
    virt-admin -c "$uri" daemon-log-filters --filters "1:util 2:rpc.*" > /dev/null
done
same "filters as set" daemon-log-filters
# Refusals: the same failure and error code; the texts are each daemon's.
same_refusal()
{
    local rv lv
    rv=$(virt-admin -c "$REMVIRTD_ADMIN_URI" "$@" 2>&1 | sed -E 's/^(error: [a-z ]+:).*/\1/') || true
    lv=$(virt-admin -c "$LIBVIRTD_ADMIN_URI" "$@" 2>&1 | sed -E 's/^(error: [a-z ]+:).*/\1/') || true
    [ "$rv" = "$lv" ] || { echo "$rv" >&2; echo "---- libvirtd:" >&2; echo "$lv" >&2;
                           fail "virt-admin $*: the refusals differ"; }
    echo "ok   virt-admin $*: refused alike ($(tail -1 <<<"$rv"))"
}
same_refusal daemon-log-filters --filters "9:x"
same_refusal daemon-log-outputs --outputs "1:bogus"
virt-admin -c "$REMVIRTD_ADMIN_URI" daemon-log-outputs --outputs "1:file:$RV_TMP/remvirtd/x.log 3:stderr" \
    > /dev/null
virt-admin -c "$LIBVIRTD_ADMIN_URI" daemon-log-outputs --outputs "1:file:$RV_TMP/libvirtd/x.log 3:stderr" \
    > /dev/null
same "outputs as set" daemon-log-outputs
for uri in "$REMVIRTD_ADMIN_URI" "$LIBVIRTD_ADMIN_URI"; do
    virt-admin -c "$uri" daemon-log-filters --filters "" > /dev/null
done
same "filters cleared" daemon-log-filters

# Lowering the limit below the count, on both: the same numbers.
for uri in "$REMVIRTD_ADMIN_URI" "$LIBVIRTD_ADMIN_URI"; do
    virt-admin -c "$uri" srv-clients-set libvirtd --max-clients 1 --max-unauth-clients 0 > /dev/null
done
same "limit lowered" srv-clients-info libvirtd
same "unauth above max" srv-clients-set libvirtd --max-unauth-clients 5

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
