#!/usr/bin/env bash
# The QEMU driver's errors, through virsh, with real QEMU: each is clear
# and a failed start leaves nothing behind (no process, no monitor socket,
# no runtime status), the domain shut off (failed):
#   a disk whose file does not exist; QEMU refusing the machine type (the
#   error carries the tail of the domain's log); the QEMU binary missing;
#   an element outside the XML subset; starting a running domain;
#   suspending a shut off one.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

# fails_with TEXT CMD...: CMD fails and says TEXT.
fails_with()
{
    local want=$1 got
    shift
    if got=$("$@" 2>&1); then
        fail "'$*' succeeded: $got"
    fi
    grep -qF -- "$want" <<< "$got" || fail "'$*' failed without '$want': $got"
    echo "ok   $* fails: $want"
}

nothing_left()
{
    [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "$1: a QEMU process is left"
    [ ! -e "$QEMU_DIR/run/$2.status" ] || fail "$1: $2.status is left"
    [ ! -e "$QEMU_DIR/run/$2.qmp" ] || fail "$1: the monitor socket is left"
    [ ! -e "$QEMU_DIR/run/$2.xml" ] || fail "$1: the live XML is left"
    [ "$("${V[@]}" domstate --reason "$2" | sed '/^$/d')" = "shut off (failed)" ] ||
        fail "$1: $2 is not shut off (failed)"
    echo "ok   $1: nothing left behind"
}

qemu_domain_xml nodisk "<disk type='file' device='disk'><source file='$RV_TMP/missing.img'/><target dev='vda'/></disk>" > "$OUT/nodisk.xml"
"${V[@]}" define "$OUT/nodisk.xml" > /dev/null
fails_with "Cannot access storage file '$RV_TMP/missing.img'" "${V[@]}" start nodisk
nothing_left "missing disk" nodisk

qemu_domain_xml badmachine | sed "s/machine='pc'/machine='no-such-machine'/" > "$OUT/badmachine.xml"
"${V[@]}" define "$OUT/badmachine.xml" > /dev/null
# QEMU's own words, from the domain's log.
fails_with "unsupported machine type" "${V[@]}" start badmachine
nothing_left "QEMU refusing to start" badmachine

qemu_domain_xml weird "<hostdev mode='subsystem' type='pci'/>" > "$OUT/weird.xml"
fails_with "hostdev" "${V[@]}" define "$OUT/weird.xml"

qemu_domain_xml ok > "$OUT/ok.xml"
"${V[@]}" define "$OUT/ok.xml" > /dev/null
fails_with "domain is not running" "${V[@]}" suspend ok
"${V[@]}" start ok > /dev/null
# virsh and rvsh check that themselves; python3-libvirt asks the driver.
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    fails_with "domain is already running" "$SYSTEM_PYTHON3" -c \
        'import sys, libvirt; libvirt.open(sys.argv[1]).lookupByName("ok").create()' "$QEMU_URI"
fi
"${V[@]}" destroy --graceful ok > /dev/null
echo "ok   destroy --graceful of a QEMU that quits"

# The binary missing: a daemon configured with one that is not there.
stop_remvirtd
start_remvirtd_qemu "qemu_binary = \"$RV_TMP/no-such-qemu\""
fails_with "Cannot find QEMU binary $RV_TMP/no-such-qemu" "${V[@]}" start ok
nothing_left "missing QEMU binary" ok
