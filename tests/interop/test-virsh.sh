#!/usr/bin/env bash
# Real virsh against remvirtd and against libvirtd's test driver: the same
# commands must print the same thing, byte for byte, apart from the few
# normalizations in normalize() below.  Any other difference fails the
# test and the diff shows it.
#
# libvirtd's test driver forgets its state when its last client leaves,
# while remvirtd keeps it for its lifetime.  So every sequence that builds
# on earlier state runs inside ONE virsh invocation (commands separated by
# ';'), and each sequence puts things back as it found them, so that the
# next one starts from the same state on both servers.  Domain IDs are
# handed out from a counter on both sides, so the sequence that starts
# domains runs first on a fresh remvirtd.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
# Fixed UUIDs: otherwise both servers would pick random ones.
domain_xml()
{
    cat <<XML
<domain type='test'>
  <name>$1</name>
  <uuid>$2</uuid>
  <memory unit='KiB'>1048576</memory>
  <currentMemory unit='KiB'>524288</currentMemory>
  <vcpu>2</vcpu>
  <os>
    <type>hvm</type>
  </os>
</domain>
XML
}
domain_xml rvt1 5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7a01 > "$xmldir/rvt1.xml"
domain_xml rvt2 5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7a02 > "$xmldir/rvt2.xml"
# The name of the running domain with another UUID: a name clash.
domain_xml test 5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7a03 > "$xmldir/clash.xml"

# Malformed XML is left out on purpose: libvirtd's message quotes
# libxml2's parser text verbatim; python-checks.py checks its error code.
steps=(
    # The lifecycle, in one connection, on a fresh daemon (see above).
    "define rvt1.xml; list --all; dominfo rvt1; domstate rvt1 --reason;
     start rvt1; domid rvt1; domstate rvt1 --reason; list --all;
     suspend rvt1; domstate rvt1 --reason; dominfo rvt1;
     resume rvt1; domstate rvt1 --reason;
     reboot rvt1; domstate rvt1 --reason;
     shutdown rvt1; domstate rvt1 --reason;
     start rvt1; destroy rvt1; domstate rvt1 --reason;
     autostart rvt1; dominfo rvt1; autostart --disable rvt1;
     setmaxmem rvt1 2097152; setmem rvt1 1048576 --config; dominfo rvt1;
     setmem rvt1 4194304 --config; setmem rvt1 1000; setmaxmem rvt1 1000 --live;
     start rvt1; setmem rvt1 262144; setmem rvt1 99999999; setmaxmem rvt1 4194304;
     setmaxmem rvt1 4194304 --config; setmem rvt1 --live --config 1000;
     setmem rvt1 2048 --config; dominfo rvt1; dumpxml --inactive rvt1; reset rvt1;
     destroy rvt1; reset rvt1; undefine rvt1; list --all;
     create rvt2.xml; list --all; dominfo rvt2; domid rvt2; domuuid rvt2;
     destroy rvt2; list --all"
    # One command per connection, as people type them.
    "list --all"
    "list"
    "dominfo test"
    "domstate test"
    "domstate test --reason"
    "dumpxml test"
    "domid test"
    "domuuid test"
    "domname 1"
    "version"
    "hostname"
    "nodeinfo"
    "uri"
    "capabilities"
    # Failures: the messages come from the server's error replies.
    "dominfo nosuch"
    "domname 99"
    "define clash.xml; start test; create rvt1.xml; create rvt1.xml;
     destroy rvt1; suspend nosuch; undefine nosuch; list --all"
    # Nothing left over.
    "list --all"
)

# What may legitimately differ, and why:
#  - the socket path: it is part of the URI (`uri` prints it) and each
#    server has its own;
#  - dominfo's "CPU time": libvirt's test driver reports the wall clock,
#    so it changes from one call to the next.
normalize()
{
    local sock=$1
    sed -e "s|$sock|SOCKET|g" \
        -e 's/^\(CPU time: *\)[0-9][0-9.]*s$/\1(clock)/'
}

# transcript URI SOCKET: every step's stdout, stderr and exit status.
transcript()
{
    local uri=$1 sock=$2 step rc
    for step in "${steps[@]}"; do
        rc=0
        (cd "$xmldir" && virsh -c "$uri" "$step") >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== virsh %s\n' "$(printf '%s' "$step" | tr -s ' \n' ' ')"
        cat "$RV_TMP/out"
        echo "--- stderr"
        cat "$RV_TMP/err"
        echo "--- exit status $rc"
    done | normalize "$sock"
}

start_libvirtd
transcript "$LIBVIRTD_URI" "$LIBVIRTD_SOCK" > "$RV_TMP/libvirtd.txt"
stop_libvirtd

start_remvirtd
transcript "$REMVIRTD_URI" "$REMVIRTD_SOCK" > "$RV_TMP/remvirtd.txt"

if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt" > "$RV_TMP/diff"; then
    echo "virsh output differs (--- libvirtd, +++ remvirtd):"
    cat "$RV_TMP/diff"
    fail "virsh against remvirtd does not match libvirtd"
fi
echo "virsh: ${#steps[@]} sequences print the same against remvirtd and libvirtd"
