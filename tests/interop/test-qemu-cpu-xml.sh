#!/usr/bin/env bash
# <cpu> in a QEMU domain, side by side with libvirtd's QEMU driver: the
# modes, a custom model (what virt-manager's new-VM wizard writes from the
# host model the capabilities name, match='exact'), its fallback, vendor
# and features with every policy are defined by both and come back in
# dumpxml the same; a custom model with features then runs, with the
# features on QEMU's command line in QEMU's spelling.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_libvirtd_qemu
start_remvirtd_qemu
OUT=$RV_TMP/cpu
mkdir -p "$OUT"

host_model=$(virsh -q -c "$QEMU_URI" capabilities |
             "$PYTHON3" -c 'import sys, xml.etree.ElementTree as ET; print(ET.parse(sys.stdin).getroot().findtext("host/cpu/model") or "")')
[ -n "$host_model" ] || fail "the capabilities name no host CPU model"

cases=(
    "<cpu mode='custom' match='exact'><model>$host_model</model></cpu>"
    "<cpu mode='custom' match='minimum' check='none'><model fallback='forbid'>qemu64</model><feature policy='disable' name='la57'/><feature policy='require' name='sse4.2'/><feature name='pdpe1gb'/></cpu>"
    "<cpu><model>qemu64</model></cpu>"
    "<cpu mode='host-model'><feature policy='disable' name='la57'/></cpu>"
    "<cpu mode='custom' match='strict'><model>qemu64</model><vendor>AMD</vendor><feature policy='optional' name='x2apic'/><feature policy='forbid' name='svm'/><feature policy='force' name='lahf_lm'/></cpu>"
    "<cpu mode='custom'><feature name='sse4.2'/></cpu>"
    "<cpu mode='custom'><model>qemu64</model><feature name='sse4.2'/><feature policy='disable' name='sse4.2'/></cpu>"
)

# transcript URI: each case defined, its <cpu> as dumpxml gives it back
# (or the define's failure, as a line), then undefined.
transcript()
{
    local uri=$1 c i=0
    for c in "${cases[@]}"; do
        i=$((i + 1))
        qemu_domain_xml "cpu$i" | sed "s|</os>|</os>$c|" > "$OUT/d$i.xml"
        echo "== case $i"
        if virsh -q -c "$uri" define "$OUT/d$i.xml" > /dev/null 2> "$OUT/err"; then
            virsh -q -c "$uri" dumpxml "cpu$i" | sed -n '/<cpu/,/<\/cpu>/p'
            virsh -q -c "$uri" undefine "cpu$i" > /dev/null
        else
            echo "refused"
        fi
    done
}
transcript "$LIBVIRTD_QEMU_URI" > "$OUT/libvirtd"
transcript "$QEMU_URI" > "$OUT/remvirtd"
same "$OUT/libvirtd" "$OUT/remvirtd" "<cpu> modes, models, vendors and features defined as libvirtd keeps them"

# A custom model with features runs: QEMU is given -cpu MODEL,+...,-...
# in its own spelling (libvirt's pclmuldq is QEMU's pclmulqdq).
qemu_domain_xml run | sed "s|</os>|</os><cpu mode='custom' match='exact'><model>qemu64</model><feature policy='require' name='pclmuldq'/><feature policy='disable' name='la57'/></cpu>|" > "$OUT/run.xml"
virsh -q -c "$QEMU_URI" define "$OUT/run.xml" > /dev/null
virsh -q -c "$QEMU_URI" start run > /dev/null
pid=$(qemu_pids "$QEMU_DIR/run/")
[ -n "$pid" ] || fail "no QEMU for the custom-model guest"
tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "-cpu qemu64,+pclmulqdq,-la57 " ||
    fail "QEMU's -cpu is not the model and its features: $(tr '\0' ' ' < "/proc/$pid/cmdline")"
[ "$(virsh -q -c "$QEMU_URI" domstate run)" = "running" ] || fail "the custom-model guest is not running"
virsh -q -c "$QEMU_URI" destroy run > /dev/null
echo "ok   a custom model with features runs as -cpu qemu64,+pclmulqdq,-la57"

# The host model virt-manager picks runs too.
qemu_domain_xml host | sed "s|</os>|</os>${cases[0]}|" > "$OUT/host.xml"
virsh -q -c "$QEMU_URI" define "$OUT/host.xml" > /dev/null
virsh -q -c "$QEMU_URI" start host > /dev/null
[ "$(virsh -q -c "$QEMU_URI" domstate host)" = "running" ] || fail "the host-model guest is not running"
virsh -q -c "$QEMU_URI" destroy host > /dev/null
echo "ok   the capabilities' host model ($host_model) runs as a custom model"

# A running guest's live XML names the CPU QEMU was given, as libvirtd's
# does (cockpit-machines shows "custom (qemu64)" from it): no <cpu> is
# QEMU's default model, a custom model is kept with check='full' and
# fallback='forbid'; the persistent XML stays as defined (libvirtd
# writes its default model into a definition without one at define, a
# difference this test leaves alone).  libvirtd adds
# <feature>s where QEMU's model differs from its own CPU map's (TCG's
# qemu64 has lahf_lm, libvirt's not): remvirtd has no CPU map of its own
# (models come from QEMU), so those lines are left out of the comparison.
live_cases=(
    ""
    "<cpu mode='custom' match='exact'><model>qemu64</model></cpu>"
    "<cpu><model>Nehalem</model><feature name='sse4.2' policy='disable'/></cpu>"
)
live_transcript()
{
    local uri=$1 c machine i=0
    for machine in pc q35; do
        for c in "${live_cases[@]}"; do
            i=$((i + 1))
            qemu_domain_xml "live$i" | sed "s|</os>|</os>$c|; s|machine='pc'|machine='$machine'|" > "$OUT/l$i.xml"
            echo "== live case $i ($machine): $c"
            virsh -q -c "$uri" define "$OUT/l$i.xml" > /dev/null
            virsh -q -c "$uri" start "live$i" > /dev/null
            echo "-- live"
            virsh -q -c "$uri" dumpxml "live$i" | sed -n '/<cpu/,/<\/cpu>/p' |
                grep -v -e "<feature policy='require' name='hypervisor'/>" \
                        -e "<feature policy='require' name='lahf_lm'/>" || true
            if [ -n "$c" ]; then
                echo "-- inactive"
                virsh -q -c "$uri" dumpxml --inactive "live$i" | sed -n '/<cpu/,/<\/cpu>/p'
            fi
            virsh -q -c "$uri" destroy "live$i" > /dev/null
            virsh -q -c "$uri" undefine "live$i" > /dev/null
        done
    done
}
live_transcript "$LIBVIRTD_QEMU_URI" > "$OUT/live-libvirtd"
live_transcript "$QEMU_URI" > "$OUT/live-remvirtd"
same "$OUT/live-libvirtd" "$OUT/live-remvirtd" "a running guest's live <cpu> as libvirtd's"
