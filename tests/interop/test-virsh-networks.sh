#!/usr/bin/env bash
# virsh's net-* commands, virsh net-event and python3-libvirt's network
# calls against remvirtd and against libvirtd's test driver: the same
# commands must print the same, byte for byte (the socket path aside).
# As in test-virsh.sh, libvirtd's test driver forgets its state when its
# last client leaves, so each sequence that builds on earlier state runs
# in one virsh and puts things back as it found them.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
# Fixed UUIDs, or each server would pick its own.
net_xml()
{
    cat <<XML
<network>
  <name>$1</name>
  <uuid>$2</uuid>
  <forward mode='nat'/>
  <bridge name='$3' stp='on' delay='0'/>
  <ip address='$4.1' netmask='255.255.255.0'>
    <dhcp>
      <range start='$4.2' end='$4.254'/>
    </dhcp>
  </ip>
</network>
XML
}
net_xml rvn1 6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4b01 rvbr1 192.168.201 > "$xmldir/rvn1.xml"
net_xml rvn2 6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4b02 rvbr2 192.168.202 > "$xmldir/rvn2.xml"
# The default network's name with another UUID: a name clash.
net_xml default 6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4b03 rvbr3 192.168.203 > "$xmldir/clash.xml"
# An isolated network without a bridge name: libvirt fills in stp and delay.
cat > "$xmldir/bare.xml" <<XML
<network>
  <name>rvbare</name>
  <uuid>6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4b04</uuid>
</network>
XML
echo '<nosuch/>' > "$xmldir/wrongroot.xml"
echo '<network/>' > "$xmldir/noname.xml"

# "ro:" runs the step on the read-only socket.
steps=(
    "net-define rvn1.xml; net-list --all; net-list --inactive; net-info rvn1;
     net-dumpxml rvn1; net-start rvn1; net-list; net-info rvn1;
     net-autostart rvn1; net-list --all; net-info rvn1;
     net-autostart rvn1 --disable; net-info rvn1;
     net-start rvn1; net-undefine rvn1; net-destroy rvn1; net-destroy rvn1;
     net-undefine rvn1; net-list --all"
    "net-create rvn2.xml; net-list --all; net-info rvn2; net-dumpxml rvn2;
     net-autostart rvn2; net-list --all --autostart; net-destroy rvn2; net-list --all"
    "net-define bare.xml; net-info rvbare; net-dumpxml rvbare; net-undefine rvbare"
    "net-list"
    "net-list --all"
    "net-list --all --persistent"
    "net-list --transient"
    "net-list --all --no-autostart"
    "net-list --name"
    "net-list --uuid --all"
    "net-info default"
    "net-dumpxml default"
    "net-uuid default"
    "net-name dd8fe884-6c02-601e-7551-cca97df1c5df"
    "net-dhcp-leases default"
    # Failures: the messages come from the servers' error replies.
    "net-info nosuch"
    "net-dumpxml nosuch"
    "net-uuid nosuch"
    "net-name 6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4bff"
    "net-start nosuch"
    "net-destroy nosuch"
    "net-undefine nosuch"
    "net-start default"
    "net-dumpxml --inactive default"
    "net-define clash.xml"
    "net-create clash.xml"
    "net-define wrongroot.xml"
    "net-define noname.xml"
    "ro:net-list --all"
    "ro:net-info default"
    "ro:net-dumpxml default"
    "ro:net-destroy default"
    "ro:net-define rvn1.xml"
    "ro:net-autostart default"
    # Nothing left over.
    "net-list --all"
)

# The changes a net-event subscriber sees, each by a virsh of its own.
changes=(
    "net-define rvn1.xml"
    "net-start rvn1"
    "net-destroy rvn1"
    "net-undefine rvn1"
    "net-create rvn2.xml"
    "net-destroy rvn2"
)
_warm_once()
{
    local uri=$1 f
    shift
    (cd "$xmldir" && virsh -q -c "$uri" "net-define bare.xml; net-undefine rvbare") >/dev/null 2>&1
    for f; do
        grep -q "for network rvbare: Undefined" "$f" || return 1
    done
}
# events URI NAME: `virsh net-event --event lifecycle --loop` while the changes run.
events()
{
    local uri=$1 out=$RV_TMP/events-$2 i
    bg "$out" virsh -c "$uri" net-event --event lifecycle --loop --timestamp
    local pid=$BG_PID rvsh_pid= watched=("$out")
    # Against remvirtd, rvsh net-event watches too.
    if [ "$2" = remvirtd ]; then
        bg "$RV_TMP/events-rvsh" "$RVSH" -c "$uri" net-event --loop
        rvsh_pid=$BG_PID
        watched+=("$RV_TMP/events-rvsh")
    fi
    wait_for $((30 * RV_SLOW)) "net-event to see the warm-up" _warm_once "$uri" "${watched[@]}"
    for i in "${!changes[@]}"; do
        (cd "$xmldir" && virsh -q -c "$uri" ${changes[i]}) >/dev/null ||
            fail "virsh ${changes[i]} failed against $uri"
    done
    wait_for $((10 * RV_SLOW)) "net-event to see the last change" \
        grep -q "for network rvn2: Stopped" "$out"
    kill -INT "$pid"
    finish "$pid" || true
    if [ -n "$rvsh_pid" ]; then
        wait_for $((10 * RV_SLOW)) "rvsh net-event to see the last change" \
            grep -q "for network rvn2: Stopped" "$RV_TMP/events-rvsh"
        kill -INT "$rvsh_pid"
        finish "$rvsh_pid" || true
    fi
    # The timestamps differ; the warm-up's count of events too.
    sed -e 's/^[0-9-]* [0-9:.+]*: //' "$out" |
        grep -v -e 'for network rvbare' -e '^events received' > "$RV_TMP/events-$2.txt"
}

# python3-libvirt's view of the same networks.
pycheck()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys, time, libvirt
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(sys.argv[1])
for n in sorted(conn.listAllNetworks(), key=lambda n: n.name()):
    print(n.name(), n.UUIDString(), n.isActive(), n.isPersistent(), n.autostart(), n.bridgeName())
print(sorted(n.name() for n in conn.listAllNetworks(libvirt.VIR_CONNECT_LIST_NETWORKS_INACTIVE)))
print(conn.numOfNetworks(), conn.numOfDefinedNetworks(), conn.listNetworks(), conn.listDefinedNetworks())
net = conn.networkLookupByName('default')
print(net.XMLDesc(0), end='')
print(conn.networkLookupByUUIDString('dd8fe884-6c02-601e-7551-cca97df1c5df').name())
try:
    conn.networkLookupByName('nosuch')
except libvirt.libvirtError as e:
    print('error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
seen = []
cb = conn.networkEventRegisterAny(None, libvirt.VIR_NETWORK_EVENT_ID_LIFECYCLE,
                                  lambda c, n, ev, det, opaque: seen.append((n.name(), ev, det)),
                                  None)
pyn = conn.networkDefineXML("<network><name>pyn</name>"
                            "<uuid>6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4b05</uuid></network>")
pyn.create()
pyn.destroy()
pyn.undefine()
libvirt.virEventAddTimeout(100, lambda timer, opaque: None, None)  # wake the loop
deadline = time.time() + 10
while len(seen) < 4 and time.time() < deadline:
    libvirt.virEventRunDefaultImpl()
print('events', seen)
conn.networkEventDeregisterAny(cb)
conn.close()
PY
}

start_libvirtd
virsh_transcript "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" "$xmldir" | sockets_as_word "$LIBVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" \
    > "$RV_TMP/libvirtd.txt"
events "$LIBVIRTD_URI" libvirtd
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    pycheck "$LIBVIRTD_URI" > "$RV_TMP/py-libvirtd.txt" 2>&1
fi
stop_libvirtd

start_remvirtd
virsh_transcript "$REMVIRTD_URI" "$REMVIRTD_URI_RO" "$xmldir" | sockets_as_word "$REMVIRTD_SOCK_RO" "$REMVIRTD_SOCK" \
    > "$RV_TMP/remvirtd.txt"
events "$REMVIRTD_URI" remvirtd
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    pycheck "$REMVIRTD_URI" > "$RV_TMP/py-remvirtd.txt" 2>&1
fi

# rvsh prints what virsh prints, one command at a time against remvirtd
# (which keeps its state between connections).
rvsh_steps=(
    "net-list" "net-list --all" "net-info default" "net-dumpxml default"
    "net-uuid default" "net-name dd8fe884-6c02-601e-7551-cca97df1c5df"
    "net-define rvn1.xml" "net-list --inactive" "net-info rvn1" "net-dumpxml rvn1"
    "net-start rvn1" "net-start rvn1" "net-autostart rvn1" "net-list --all"
    "net-autostart rvn1 --disable" "net-undefine rvn1" "net-destroy rvn1" "net-undefine rvn1"
    "net-create rvn2.xml" "net-info rvn2" "net-destroy rvn2"
    "net-define bare.xml" "net-info rvbare" "net-dumpxml rvbare" "net-undefine rvbare"
    "net-info nosuch" "net-uuid nosuch" "net-name nosuch"
    "net-name 6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4bff" "net-start nosuch"
    "net-define clash.xml" "net-define wrongroot.xml" "net-list --all"
)
for tool in virsh "$RVSH"; do
    for step in "${rvsh_steps[@]}"; do
        rc=0
        # Word splitting on purpose: each step is a command and its options.
        # shellcheck disable=SC2086
        (cd "$xmldir" && "$tool" -c "$REMVIRTD_URI" $step) >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== %s\n' "$step"
        cat "$RV_TMP/out"
        echo "--- stderr"
        cat "$RV_TMP/err"
        echo "--- exit status $rc"
    done > "$RV_TMP/tool-$(basename "$tool").txt"
done

status=0
if ! diff -u "$RV_TMP/tool-virsh.txt" "$RV_TMP/tool-rvsh.txt"; then
    echo "rvsh's net-* output differs from virsh's (--- virsh, +++ rvsh)"
    status=1
fi
"$RVSH" -c "$REMVIRTD_URI" net-list --all --json > "$RV_TMP/json" &&
    "$SYSTEM_PYTHON3" -c 'import json, sys; l = json.load(open(sys.argv[1])); assert l[0]["name"] == "default" and l[0]["state"] == "active", l' "$RV_TMP/json" ||
    { echo "rvsh net-list --json: not the expected JSON"; cat "$RV_TMP/json"; status=1; }
"$RVSH" -c "$REMVIRTD_URI" net-info default --json > "$RV_TMP/json" &&
    "$SYSTEM_PYTHON3" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["bridge"] == "virbr0" and d["active"] is True, d' "$RV_TMP/json" ||
    { echo "rvsh net-info --json: not the expected JSON"; cat "$RV_TMP/json"; status=1; }
if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh net-* output differs (--- libvirtd, +++ remvirtd)"
    status=1
fi
if ! diff -u "$RV_TMP/events-libvirtd.txt" "$RV_TMP/events-remvirtd.txt"; then
    echo "virsh net-event output differs (--- libvirtd, +++ remvirtd)"
    status=1
fi
grep "^event 'lifecycle'" "$RV_TMP/events-remvirtd.txt" > "$RV_TMP/events-virsh-lines"
grep "^event 'lifecycle'" "$RV_TMP/events-rvsh" | grep -v 'for network rvbare' \
    > "$RV_TMP/events-rvsh-lines" || true
if ! diff -u "$RV_TMP/events-virsh-lines" "$RV_TMP/events-rvsh-lines"; then
    echo "rvsh net-event prints other events than virsh net-event (--- virsh, +++ rvsh)"
    status=1
fi
[ "$(wc -l < "$RV_TMP/events-remvirtd.txt")" -ge ${#changes[@]} ] ||
    { cat "$RV_TMP/events-remvirtd.txt"; echo "net-event saw too few events"; status=1; }
if [ -f "$RV_TMP/py-libvirtd.txt" ] &&
   ! diff -u "$RV_TMP/py-libvirtd.txt" "$RV_TMP/py-remvirtd.txt"; then
    echo "python3-libvirt's network calls differ (--- libvirtd, +++ remvirtd)"
    status=1
fi
[ "$status" -eq 0 ] || fail "network commands against remvirtd do not match libvirtd"
echo "virsh: ${#steps[@]} net-* sequences, net-event (${#changes[@]} changes) and" \
     "python3-libvirt print the same against remvirtd and libvirtd;" \
     "rvsh prints what virsh prints for ${#rvsh_steps[@]} commands and net-event"
