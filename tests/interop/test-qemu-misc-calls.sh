#!/usr/bin/env bash
# Smaller calls of admins' virsh on remvirtd's QEMU driver, side by side
# with libvirtd's (the same commands against both, transcripts compared):
#   - setvcpu (DOMAIN_SET_VCPU): --config and --live, libvirtd's refusals
#     (bad lists, vcpu 0, ids beyond the maximum, a vcpu already in the
#     state asked, a shut-off domain live), the live <vcpus> list;
#     remvirtd's own refusal of a list that would leave a gap;
#   - domxml-to-native (CONNECT_DOMAIN_XML_TO_NATIVE): other formats
#     refused as libvirtd; remvirtd's qemu-argv is the command line it then
#     runs (/proc/PID/cmdline of the started domain); domxml-from-native
#     unsupported as in libvirtd 9.0's QEMU driver;
#   - domdirtyrate-calc (DOMAIN_START_DIRTY_RATE_CALC) and its refusals,
#     domstats --dirtyrate; remvirtd's refusal of a dirty bitmap under TCG;
#   - vol-wipe --algorithm (STORAGE_VOL_WIPE_PATTERN): scrub's patterns, the
#     bytes written compared, trim and unknown algorithms refused; without
#     scrub (remvirtd in a mount namespace) libvirtd's refusal;
#   - misc-checks.py: what virsh does not send (flags, states,
#     GET_SECURITY_LABEL_LIST shut off and running).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu misc
qemu_guest_xml g | sed "s|<vcpu>1</vcpu>|<vcpu current='1'>3</vcpu>|" > "$OUT/g.xml"
grep -q "current='1'>3<" "$OUT/g.xml" || fail "qemu_guest_xml has no <vcpu>1</vcpu> to change"

steps=(
    "define g.xml"
    "setvcpu g 1 --enable --config"
    "vcpucount g"
    "setvcpu g 1-2 --enable --config"
    "vcpucount g"
    "setvcpu g 2 --disable --config"
    "vcpucount g"
    "setvcpu g 0 --disable --config"
    "setvcpu g 5 --enable --config"
    "setvcpu g x --enable --config"
    "setvcpu g 1,^1 --enable --config"
    "setvcpu g 1 --enable --live"
    "ro:setvcpu g 1 --enable --config"
    "ro:domxml-to-native qemu-argv g.xml"
    "setvcpu g 1 --disable"
    "vcpucount g"
    "domxml-to-native xen-xm g.xml"
    "domxml-to-native bogus --domain g"
    "domxml-from-native qemu-argv g.xml"
    "domdirtyrate-calc g"
    "start g"
    "setvcpu g 1 --disable"
    "setvcpu g 0 --disable --live"
    "setvcpu g 0 --enable --live"
    "setvcpu g 7 --enable --live"
    "setvcpu g 1 --enable --live"
    "vcpucount g"
    "dumpxml g --xpath //vcpus"
    "setvcpu g 2 --enable"
    "dumpxml g --xpath //vcpus"
    "vcpucount g"
    "domstats g --dirtyrate"
    "ro:domdirtyrate-calc g"
    "domdirtyrate-calc g --mode dirty-ring"
    "domdirtyrate-calc g --mode bogus"
    "domdirtyrate-calc g --seconds 0"
    "domdirtyrate-calc g --seconds 61"
    "domdirtyrate-calc g --seconds 2"
    "domdirtyrate-calc g"
)
# Once the measurement is over (waited for between the two parts).
steps2=(
    "mask:domstats g --dirtyrate"
    "mask:domstats g --dirtyrate --enforce"
    "destroy g"
    "domstats g --dirtyrate"
    "domdirtyrate-calc g"
    "undefine g"
)
# Volume wipes: scrub's patterns (its signature first), trim and unknown
# algorithms refused.
steps3=(
    "pool-create-as p dir --target $OUT/pool"
    "vol-create-as p v 1M"
    "vol-wipe v --pool p --algorithm nnsa"
    "mask:vol-download v --pool p /dev/stdout --length 32"
    "vol-wipe v --pool p --algorithm dod"
    "mask:vol-download v --pool p /dev/stdout --length 32"
    "vol-wipe v --pool p --algorithm bsi"
    "mask:vol-download v --pool p /dev/stdout --length 32"
    "ro:vol-wipe v --pool p --algorithm nnsa"
    "vol-wipe v --pool p --algorithm random"
    "vol-info v --pool p --bytes"
    "vol-wipe v --pool p --algorithm trim"
    "vol-wipe v --pool p --algorithm bogus"
    "vol-wipe v --pool p --algorithm zero"
    "mask:vol-download v --pool p /dev/stdout --length 32"
    "pool-destroy p"
)
# What differs between two runs: when the measurement started, its rate.
mask_rate() { sed -E 's/^(  dirtyrate\.(calc_start_time|megabytes_per_second))=[0-9]+$/\1=N/'; }
# A volume's first bytes, readable.
hex() { od -An -tx1; }   # (virsh writes its own newline over the first byte)
measured() { virsh -q -c "$1" domstats g --dirtyrate | grep -qx "  dirtyrate.calc_status=2"; }
session()
{
    virsh_transcript "$1" "$3" "$OUT" > "$OUT/$2.transcript"
    wait_for 30 "the dirty rate measured ($2)" measured "$1" || fail "no measurement on $2"
    local steps=("${steps2[@]}")
    virsh_transcript "$1" "$3" "$OUT" mask_rate >> "$OUT/$2.transcript"
    local steps=("${steps3[@]}")
    mkdir -p "$OUT/pool"
    virsh_transcript "$1" "$3" "$OUT" hex >> "$OUT/$2.transcript"
    rm -rf "$OUT/pool"
    mkdir -p "$OUT/pypool"
    PYTHONPATH=$top_srcdir/tests/interop "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/misc-checks.py" \
        "$1" "$OUT/pypool" > "$OUT/$2.py"
    rm -rf "$OUT/pypool"
}
session "$LIBVIRTD_QEMU_URI" libvirtd "$LIBVIRTD_QEMU_URI_RO"
session "$QEMU_URI" remvirtd "${QEMU_URI/remvirt-sock/remvirt-sock-ro}"
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "setvcpu, domxml-to-native, domdirtyrate-calc: remvirtd as libvirtd"
same "$OUT/libvirtd.py" "$OUT/remvirtd.py" "flags, states, labels (misc-checks.py)"
# (Not the same failure on both: what was done is there.)
T=$OUT/remvirtd.transcript
grep -qF '<vcpu id="2" enabled="yes" hotpluggable="yes" order="3"/>' "$T" || fail "setvcpu plugged no vcpu 2"
grep -qx "  dirtyrate.megabytes_per_second=N" "$T" || fail "no dirty rate measured"
[ "$(grep -c "read only access prevents" "$T")" = 4 ] || fail "the read-only refusals are not there"
# (Without scrub both daemons refuse the patterns alike.)
! command -v scrub > /dev/null || grep -qE "^ [0-9a-f]{2} 02 03 53 43 52 55 42 42 45 44 21 00 ff ff ff$" "$T" ||
    fail "no dod pattern written"
grep -qx "labels, running: \[\['', False\], \['+$(id -u):+$(id -g)', False\]\]" "$OUT/remvirtd.py" ||
    fail "security labels: $(grep labels "$OUT/remvirtd.py")"

# remvirtd's qemu-argv is the command line it runs: started, the QEMU
# process's argv (NUL-separated in /proc) is the string's words.
V=(virsh -q -c "$QEMU_URI")
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" domxml-to-native qemu-argv --domain g > "$OUT/native.txt"
"${V[@]}" start g > /dev/null
pid=$(qemu_pids "$QEMU_DIR/run/")
[ -n "$pid" ] || fail "no QEMU process for g"
"$SYSTEM_PYTHON3" - "$OUT/native.txt" "/proc/$pid/cmdline" <<'PY' || fail "qemu-argv is not what remvirtd ran: $(cat "$OUT/native.txt")"
import shlex, sys
native = shlex.split(open(sys.argv[1]).read())
ran = open(sys.argv[2], "rb").read().decode().split("\0")[:-1]
sys.exit(0 if native == ran else print("native:", native, "\nran:   ", ran) or 1)
PY
grep -q "^/.*qemu-system-x86_64 -name " "$OUT/native.txt" && grep -q "'console=ttyS0 quiet panic=-1'" "$OUT/native.txt" ||
    fail "qemu-argv not shell-quoted words: $(cat "$OUT/native.txt")"
echo "ok   domxml-to-native qemu-argv: the command line remvirtd then ran ($(wc -w < "$OUT/native.txt") words)"

# A list that would leave a gap among the vcpus on, or give the live
# domain and its definition different counts: refused, nothing changed.
for args in "2 --enable --live" "2 --enable --config"; do
    if got=$("${V[@]}" setvcpu g $args 2>&1); then
        fail "setvcpu g $args left a gap: accepted"
    fi
    grep -qF "remvirtd keeps a domain's vcpus on as 0 to N-1" <<< "$got" || fail "setvcpu g $args: $got"
done
"${V[@]}" setvcpu g 1-2 --enable --config > /dev/null
if got=$("${V[@]}" setvcpu g 1 --enable --live --config 2>&1); then
    fail "setvcpu --live --config with different counts accepted"
fi
grep -qF "the live domain and its definition have different vcpus on" <<< "$got" || fail "setvcpu 1 --live --config: $got"
[ "$("${V[@]}" vcpucount g --live --current)" = 1 ] && [ "$("${V[@]}" vcpucount g --config --current)" = 3 ] ||
    fail "a refused setvcpu changed the vcpus: $("${V[@]}" vcpucount g)"
echo "ok   setvcpu lists remvirtd cannot keep contiguous refused, nothing changed"

# A dirty bitmap under TCG: refused (QEMU 7.2 dies of it, libvirtd's guest
# too), the guest still running.
if got=$("${V[@]}" domdirtyrate-calc g --mode dirty-bitmap 2>&1); then
    fail "domdirtyrate-calc --mode dirty-bitmap under TCG accepted"
fi
grep -qF "QEMU under TCG crashes measuring the dirty rate with a dirty bitmap" <<< "$got" &&
    [ "$("${V[@]}" domstate g)" = running ] || fail "dirty-bitmap under TCG: $got"
echo "ok   domdirtyrate-calc --mode dirty-bitmap refused under TCG, the guest runs on"
"${V[@]}" destroy g > /dev/null

# The test drivers: libvirt 9.0's (in the client) has none of these calls;
# remvirtd's answers the same NO_SUPPORT.
test_calls()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys
import libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
conn = libvirt.open(sys.argv[1])
d = conn.lookupByName("test")
vol = conn.storagePoolLookupByName("default-pool").createXML(
    "<volume><name>mcw</name><capacity>1024</capacity></volume>", 0)
for what, fn in [("set vcpu", lambda: d.setVcpu("1", 0, 0)),
                 ("to native", lambda: conn.domainXMLToNative("qemu-argv", d.XMLDesc(0), 0)),
                 ("from native", lambda: conn.domainXMLFromNative("qemu-argv", "x", 0)),
                 ("label list", lambda: d.securityLabelList()),
                 ("dirty rate", lambda: d.startDirtyRateCalc(1, 0)),
                 ("wipe pattern", lambda: vol.wipePattern(1, 0))]:
    try:
        print(what, fn())
    except libvirt.libvirtError as e:
        print(what, e.get_error_code(), e.get_error_domain(), e.get_error_message())
vol.delete(0)
PY
}
test_calls test:///default > "$OUT/libvirt-test.txt"
test_calls "test+unix:///default?socket=$REMVIRTD_SOCK" > "$OUT/remvirtd-test.txt"
same "$OUT/libvirt-test.txt" "$OUT/remvirtd-test.txt" "the test drivers: the same NO_SUPPORT"

# Without scrub on the host (a mount namespace whose /usr/bin has none:
# hard links to the rest): libvirtd 9.0's refusal, seen the same way,
# "Cannot find 'scrub' in path: No such file or directory" (error 38 in
# error domain 0), and zero still wipes.  Needs root and /usr/bin on the
# file system of the temporary directory.
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null && mkdir "$RV_TMP/usrbin" &&
    cp -al /usr/bin/. "$RV_TMP/usrbin/" 2> /dev/null; then
    rm -f "$RV_TMP/usrbin/scrub"
    cat > "$RV_TMP/remvirtd-noscrub" <<SH
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount --bind "\$0" /usr/bin && exec "\$@"' \
    "$RV_TMP/usrbin" "$REMVIRTD" "\$@"
SH
    chmod +x "$RV_TMP/remvirtd-noscrub"
    stop_remvirtd
    REMVIRTD=$RV_TMP/remvirtd-noscrub start_remvirtd_qemu
    V=(virsh -q -c "$QEMU_URI")
    mkdir -p "$OUT/pool2"
    "${V[@]}" pool-create-as p2 dir --target "$OUT/pool2" > /dev/null
    "${V[@]}" vol-create-as p2 v 64K > /dev/null
    if got=$("${V[@]}" vol-wipe v --pool p2 --algorithm nnsa 2>&1); then
        fail "vol-wipe --algorithm nnsa without scrub: accepted"
    fi
    grep -qx "error: Cannot find 'scrub' in path: No such file or directory" <<< "$got" ||
        fail "vol-wipe without scrub: $got"
    "${V[@]}" vol-wipe v --pool p2 --algorithm zero > /dev/null || fail "vol-wipe zero without scrub failed"
    "${V[@]}" pool-destroy p2 > /dev/null
    echo "ok   without scrub: libvirtd's refusal of the patterns, zero still wipes"
else
    echo "(the wipe without scrub needs root and /usr/bin on the temporary directory's file system)"
fi
