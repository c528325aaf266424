#!/usr/bin/env bash
# What remvirtd's QEMU driver gives dnsmasq for a NAT network, side by
# side with a stock libvirtd 9.0's network driver in a network and mount
# namespace of the test's own: DHCP hosts as libvirtd takes them at
# net-define and net-update (a name and no MAC, an address outside the
# subnet; no address, or neither MAC nor name, refused with libvirtd's
# errors); DNS TXT and SRV records (refused as libvirtd refuses them; the
# good ones in dnsmasq's configuration as libvirtd writes them, and
# answered by dnsmasq as libvirtd's dnsmasq answers them, asked from a
# client on each bridge); the DHCP lines of both dnsmasq configurations
# the same.  Then net-destroy and net-start of the same network (and
# net-create of a transient one) 20 times in a row: each destroy answers
# once dnsmasq has exited, so the next start never meets its sockets;
# a dnsmasq slow to exit (SIGSTOP) holds the destroy's answer, not the
# loop; one that never exits is killed; one that a failed start left
# exiting holds the next start.
set -euo pipefail
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view
requires nsenter --version      # (libvirtd's files are in its mount namespace)
requires virsh
requires nft --version
requires dnsmasq --version
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/out
NETS=$QEMU_DIR/run/networks
mkdir -p "$OUT"
L=(virsh -c "$LIBVIRTD_QEMU_URI")
R=(virsh -c "$QEMU_URI")

# net XML SUB BRIDGE DNS DHCP: a NAT network's definition
net()
{
    cat <<XML
<network><name>$1</name><forward mode='nat'/><bridge name='$3'/><dns>$4</dns>
<ip address='$2.1' prefix='24'><dhcp><range start='$2.100' end='$2.110'/>$5</dhcp></ip></network>
XML
}

# Definitions, good and bad, on both: the same answers.
defines=(
    "|<host name='onlyname' ip='SUB.51'/>"
    "|<host mac='52:54:00:aa:bb:01' ip='10.9.9.9'/>"
    "|<host name='noip'/>"
    "|<host mac='52:54:00:aa:bb:02'/>"
    "|<host mac='52:54:00:aa:bb:03' name='both'/>"
    "|<host ip='SUB.52'/>"
    "<txt name='a b' value='x'/>|"
    "<txt name='ab'/>|"
    "<txt value='x'/>|"
    "<srv service='ldap'/>|"
    "<srv service='ld ap' protocol='tcp'/>|"
    "<srv service='ldap' protocol='tcp' port='389'/>|"
    "<srv protocol='tcp'/>|"
    "<srv service='ldap' protocol='t p'/>|"
    "<srv service='ldap' protocol='tcp' target='t.example' port='70000'/>|"
    "<srv service='ldap' protocol='tcp' target='t.example' port='1' priority='x'/>|"
    "<srv service='ldap' protocol='tcp' target='t.example' port='1' weight='-1'/>|"
    "<txt name='ok' value='fine'/><srv service='ldap' protocol='tcp' target='t.example' port='389'/>|"
)
for d in "${defines[@]}"; do
    net d1 192.168.170 vbd1 "${d%%|*}" "${d#*|}" | sed 's/SUB/192.168.170/g' > "$OUT/d1.xml"
    for side in L R; do
        eval "v=(\"\${$side[@]}\")"
        { "${v[@]}" net-define "$OUT/d1.xml" && "${v[@]}" net-undefine d1; } > "$OUT/define.$side" 2>&1 || true
    done
    same "$OUT/define.L" "$OUT/define.R" "net-define with $d"
done

# What libvirtd takes but would write into dnsmasq's configuration as
# more than one line or field: remvirtd refuses it, saying why.
for d in "<txt name='ab' value='x&#10;txt-record=injected'/>|has a control character" \
         "<srv service='ldap' protocol='tcp' target='a b'/>|DNS SRV target 'a b' is not letters" \
         "<srv service='ldap' protocol='tcp' domain='x,y'/>|DNS SRV domain 'x,y' is not letters"; do
    net d1 192.168.170 vbd1 "${d%%|*}" "" > "$OUT/d1.xml"
    out=$("${L[@]}" net-define "$OUT/d1.xml" 2>&1 && "${L[@]}" net-undefine d1 2>&1) ||
        fail "libvirtd refuses ${d%%|*}: $out"
    out=$("${R[@]}" net-define "$OUT/d1.xml" 2>&1) && fail "remvirtd defines ${d%%|*}"
    grep -qF "${d#*|}" <<< "$out" || fail "remvirtd on ${d%%|*}: $out"
    echo "ok   ${d%%|*}: libvirtd takes it, remvirtd refuses it: ${out##*error: }"
done

# Both running, on subnets of their own: 160 libvirtd's, 161 remvirtd's.
DNS="<txt name='example' value='some text here'/><txt name='t2.example.com' value='a,b;c'/>
<srv service='ldap' protocol='tcp' domain='example.com' target='ldap.example.com' port='389' priority='10' weight='20'/>
<srv service='sip' protocol='udp'/>"
HOSTS="<host mac='52:54:00:aa:bb:04' name='h8' ip='SUB.54'/><host name='nm2' ip='SUB.55'/><host mac='52:54:00:aa:bb:05' ip='192.168.99.5'/>"
net n1 192.168.160 vbl1 "$DNS" "${HOSTS//SUB/192.168.160}" > "$OUT/l.xml"
net n1 192.168.161 vbr1 "$DNS" "${HOSTS//SUB/192.168.161}" > "$OUT/r.xml"
"${L[@]}" net-define "$OUT/l.xml" > /dev/null
"${R[@]}" net-define "$OUT/r.xml" > /dev/null
"${L[@]}" net-start n1 > /dev/null
"${R[@]}" net-start n1 > /dev/null
_destroy() { virsh -q -c "$QEMU_URI" net-destroy n1 > /dev/null 2>&1 || true; }
cleanup_fn _destroy
# Live updates: the same answers, the same state after.
updates=(
    "add ip-dhcp-host <host name='upd' ip='SUB.60'/>"
    "add ip-dhcp-host <host mac='52:54:00:aa:bb:06' ip='172.16.0.6'/>"
    "add ip-dhcp-host <host name='noip2'/>"
    "add ip-dhcp-host <host mac='52:54:00:aa:bb:07'/>"
    "add ip-dhcp-host <host ip='SUB.61'/>"
    "add dns-txt <txt name='nt' value='v w'/>"
    "add dns-txt <txt name='n t' value='v'/>"
    "add dns-srv <srv service='s1' protocol='udp' target='x.example' port='5'/>"
    "add dns-srv <srv service='s2' protocol='udp' port='5'/>"
)
for u in "${updates[@]}"; do
    read -r cmd section xml <<< "$u"
    "${L[@]}" net-update n1 "$cmd" "$section" "${xml//SUB/192.168.160}" --live --config > "$OUT/upd.L" 2>&1 || true
    "${R[@]}" net-update n1 "$cmd" "$section" "${xml//SUB/192.168.161}" --live --config > "$OUT/upd.R" 2>&1 || true
    same "$OUT/upd.L" "$OUT/upd.R" "net-update n1 $u"
done
# (libvirtd's running network shows its NAT port range, remvirtd's not:
# qemu-driver.md)
for flag in "" --inactive; do
    "${L[@]}" net-dumpxml n1 $flag | sed -e 's/192\.168\.160\./SUB./g' -e '/<uuid>\|<mac address=\|<bridge/d' \
        -e '/<nat>\|<port start\|<\/nat>\|<\/forward>/d' -e "s|<forward mode='nat'>|<forward mode='nat'/>|" > "$OUT/xml.L"
    "${R[@]}" net-dumpxml n1 $flag | sed -e 's/192\.168\.161\./SUB./g' -e '/<uuid>\|<mac address=\|<bridge/d' > "$OUT/xml.R"
    same "$OUT/xml.L" "$OUT/xml.R" "net-dumpxml n1 $flag after the updates"
done

# dnsmasq's configuration: libvirtd's conf and hosts file (under /var/lib
# in its mount namespace) against remvirtd's one file, the DHCP and
# TXT/SRV lines (dnsmasq reads a hosts file's line as a dhcp-host=).
_dnsmasq_lines()
{
    grep -E '^(txt-record|srv-host|dhcp-range|dhcp-host=|dhcp-no-override|dhcp-authoritative|dhcp-lease-max)' |
        sed 's/192\.168\.16[01]\./SUB./g' | sort
}
_libvirtd_conf()
{
    nsenter -t "$(cat "$LIBVIRTD_DIR/libvirtd.pid")" -m sh -c \
        'cat /var/lib/libvirt/dnsmasq/n1.conf; sed "s/^/dhcp-host=/" /var/lib/libvirt/dnsmasq/n1.hostsfile'
}
# (remvirtd's dnsmasq is restarted for each live change: once it is the
# last one's, its file is final.)
_final() { grep -q "^dhcp-host=52:54:00:aa:bb:06,172.16.0.6$" "$NETS/n1.dnsmasq.conf"; }
wait_for 10 "remvirtd's dnsmasq.conf" _final || { show "$NETS/n1.dnsmasq.conf"; fail "the hosts added live"; }
_libvirtd_conf | _dnsmasq_lines > "$OUT/conf.L"
_dnsmasq_lines < "$NETS/n1.dnsmasq.conf" > "$OUT/conf.R"
same "$OUT/conf.L" "$OUT/conf.R" "dnsmasq's DHCP, TXT and SRV lines as libvirtd writes them"
has_line "$OUT/conf.R" "dhcp-host=nm2,SUB.55" && has_line "$OUT/conf.R" "srv-host=_s1._udp,x.example,5" ||
    { show "$OUT/conf.R"; fail "remvirtd's dnsmasq lines"; }

# Each dnsmasq asked from a client on its bridge (a veth into a namespace
# of its own: dnsmasq refuses the host's own queries, which come in on lo).
client()
{
    local ns=$1 bridge=$2 sub=$3
    ip netns add "$ns"
    cleanup_fn ip netns del "$ns"
    ip link add "${ns}0" type veth peer name "${ns}1"
    ip link set "${ns}1" netns "$ns"
    ip link set "${ns}0" master "$bridge" up
    ip -n "$ns" addr add "$sub.9/24" dev "${ns}1"
    ip -n "$ns" link set "${ns}1" up
}
client rvl vbl1 192.168.160
client rvr vbr1 192.168.161
# ask NS SERVER NAME TYPE: the answers' type and data, one a line
ask()
{
    ip netns exec "$1" "$SYSTEM_PYTHON3" - "$2" "$3" "$4" <<'PY'
import socket, struct, sys
server, name, qtype = sys.argv[1], sys.argv[2], int(sys.argv[3])
q = struct.pack(">HHHHHH", 0x5257, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", qtype, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
s.sendto(q, (server, 53))
r = s.recv(4096)
count = struct.unpack(">H", r[6:8])[0]
at = len(q)
def skip_name(at):
    while r[at]:
        if r[at] & 0xc0:
            return at + 2
        at += r[at] + 1
    return at + 1
def read_name(at):
    parts = []
    while r[at]:
        parts.append(r[at + 1:at + 1 + r[at]].decode())
        at += r[at] + 1
    return ".".join(parts)
for _ in range(count):
    at = skip_name(at)
    rtype, _, _, rdlen = struct.unpack(">HHIH", r[at:at + 10])
    data = r[at + 10:at + 10 + rdlen]
    at += 10 + rdlen
    if rtype == 16:
        texts, i = [], 0
        while i < len(data):
            texts.append(data[i + 1:i + 1 + data[i]].decode())
            i += data[i] + 1
        print("TXT", texts)
    elif rtype == 33:
        prio, weight, port = struct.unpack(">HHH", data[:6])
        print("SRV", prio, weight, port, read_name(at - rdlen + 6))
    else:
        print(rtype, data.hex())
PY
}
_answered() { ask "$1" "$2" example 16 > "$OUT/a" 2>&1 && [ -s "$OUT/a" ]; }
wait_for 10 "libvirtd's dnsmasq to answer" _answered rvl 192.168.160.1 ||
    { show "$OUT/a"; fail "no TXT answer from libvirtd's dnsmasq"; }
wait_for 10 "remvirtd's dnsmasq to answer" _answered rvr 192.168.161.1 ||
    { show "$OUT/a"; fail "no TXT answer from remvirtd's dnsmasq"; }
for q in "example 16" "t2.example.com 16" "nt 16" "_ldap._tcp.example.com 33" "_s1._udp 33"; do
    ask rvl 192.168.160.1 $q > "$OUT/ans.L" 2>&1 || { show "$OUT/ans.L"; fail "libvirtd's dnsmasq: $q"; }
    ask rvr 192.168.161.1 $q > "$OUT/ans.R" 2>&1 || { show "$OUT/ans.R"; fail "remvirtd's dnsmasq: $q"; }
    same "$OUT/ans.L" "$OUT/ans.R" "dnsmasq's answer to $q: $(tr '\n' ' ' < "$OUT/ans.R")"
    [ -s "$OUT/ans.R" ] || fail "no answer to $q"
done
grep -qxF "SRV 10 20 389 ldap.example.com" <(ask rvr 192.168.161.1 _ldap._tcp.example.com 33) ||
    fail "remvirtd's dnsmasq: the SRV record of ldap"
grep -qxF "TXT ['some text here']" <(ask rvr 192.168.161.1 example 16) || fail "remvirtd's dnsmasq: the TXT record"

# destroy then start at once, 20 times: never "Address already in use".
for i in $(seq 20); do
    out=$("${R[@]}" net-destroy n1 2>&1) || fail "net-destroy n1 (round $i): $out"
    out=$("${R[@]}" net-start n1 2>&1) || fail "net-start n1 right after net-destroy (round $i): $out"
done
echo "ok   net-destroy + net-start n1, 20 times in a row"
# A dnsmasq slow to exit (stopped with SIGSTOP, let go 1 s later): the
# destroy answers once it has gone, the loop answering other calls
# meanwhile, and the start right after finds its addresses free; one
# that never lets go is killed after 3 s.
ms() { echo $(($(date +%s%N) / 1000000)); }
_gone() { local s; s=$(cat "/proc/$1/stat" 2> /dev/null) || return 0; [[ "${s##*) }" == [ZX]* ]]; }
pid=$(cat "$NETS/n1.pid")
kill -STOP "$pid"
(sleep 1; kill -CONT "$pid") &
t0=$(ms)
"${R[@]}" net-destroy n1 > "$OUT/destroy" 2>&1 &
destroy=$!
sleep 0.3
"${R[@]}" net-list --all > /dev/null || fail "net-list while a destroy waits for dnsmasq"
t1=$(ms)
wait "$destroy" || { show "$OUT/destroy"; fail "net-destroy of n1 with a stopped dnsmasq"; }
t2=$(ms)
_gone "$pid" || fail "net-destroy answered while dnsmasq $pid runs"
[ $((t1 - t0)) -lt 900 ] && [ $((t2 - t0)) -ge 900 ] ||
    fail "net-list answered after $((t1 - t0)) ms, net-destroy after $((t2 - t0)) ms"
out=$("${R[@]}" net-start n1 2>&1) || fail "net-start n1 right after: $out"
echo "ok   a dnsmasq slow to exit: net-destroy answered after $((t2 - t0)) ms, once it was gone (net-list meanwhile after $((t1 - t0)) ms); net-start at once"
pid=$(cat "$NETS/n1.pid")
kill -STOP "$pid"
t0=$(ms)
"${R[@]}" net-destroy n1 > /dev/null
t2=$(ms)
_gone "$pid" && [ $((t2 - t0)) -ge 2900 ] || fail "a dnsmasq deaf to SIGTERM: net-destroy after $((t2 - t0)) ms"
out=$("${R[@]}" net-start n1 2>&1) || fail "net-start n1 after a dnsmasq was killed: $out"
echo "ok   a dnsmasq deaf to SIGTERM is killed: net-destroy answered after $((t2 - t0)) ms; net-start at once"
"${R[@]}" net-destroy n1 > /dev/null
# A start that fails after its dnsmasq ran (nft fails: a script of ours
# in its place, which stops that dnsmasq first) is undone without
# waiting for it; the next start waits until it has gone.
NFT=$(command -v nft)
cat > "$OUT/nft" <<SH
#!/bin/sh
kill -STOP "\$(cat "$NETS/n1.pid")"
echo "nft: made to fail" >&2
exit 1
SH
chmod +x "$OUT/nft"
mount --bind "$OUT/nft" "$NFT"
out=$("${R[@]}" net-start n1 2>&1) && fail "net-start n1 with a failing nft succeeded"
umount "$NFT"
grep -qF "nft failed (exit status 1): nft: made to fail" <<< "$out" || fail "net-start n1 with a failing nft: $out"
pid=$(for f in /proc/[0-9]*/cmdline; do
          { tr '\0' ' ' < "$f"; } 2> /dev/null | grep -qF -- "--conf-file=$NETS/n1.dnsmasq.conf" &&
              { f=${f#/proc/}; echo "${f%/cmdline}"; }
      done; true)
[ -n "$pid" ] || fail "the failed start's dnsmasq is not found"
(sleep 1; kill -CONT $pid) &
t0=$(ms)
out=$("${R[@]}" net-start n1 2>&1) || fail "net-start n1 while the failed start's dnsmasq exits: $out"
t2=$(ms)
_gone "$pid" && [ $((t2 - t0)) -ge 900 ] || fail "net-start n1 answered after $((t2 - t0)) ms, dnsmasq $pid still there"
echo "ok   a failed start's dnsmasq still exiting: the next net-start waited for it ($((t2 - t0)) ms)"
"${R[@]}" net-destroy n1 > /dev/null
net t1 192.168.161 vbr2 "$DNS" "" > "$OUT/t1.xml"
for i in $(seq 10); do
    out=$("${R[@]}" net-create "$OUT/t1.xml" 2>&1) || fail "net-create t1 (round $i): $out"
    out=$("${R[@]}" net-destroy t1 2>&1) || fail "net-destroy t1 (round $i): $out"
done
echo "ok   net-create + net-destroy of a transient t1 on the same addresses, 10 times in a row"
# Once destroy has answered, no dnsmasq of it is left.
for f in /proc/[0-9]*/cmdline; do
    ! { tr '\0' ' ' < "$f"; } 2> /dev/null | grep -qF -- "--conf-file=$NETS/" ||
        fail "a dnsmasq outlives net-destroy: $f"
done
echo "ok   no dnsmasq left once net-destroy has answered"
