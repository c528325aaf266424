#!/usr/bin/env bash
# Domain checkpoints on the QEMU driver, side by side with libvirtd 9.0's
# QEMU driver (TCG guests idling in their firmware, two qcow2 disks and a
# raw one on a second guest): the same virsh steps on both daemons
# (checkpoint-create-as, -list --tree/--parent/--roots/--leaves,
# -dumpxml, -parent, -delete with --children, --children-only and
# --metadata, the refusals) and python3-libvirt's list calls give the same
# transcript once uuids and times are normalised, and the qcow2 images
# hold the same persistent bitmaps (qemu-img info, while running and after
# shutdown).  Then remvirtd alone: its checkpoints are still listed after
# a restart of remvirtd.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu checkpoints
requires qemu-img --version

# images DIR: the guests' disks, new.
images()
{
    rm -f "$1"/*.qcow2 "$1"/*.img
    qemu-img create -q -f qcow2 "$1/a.qcow2" 16M
    qemu-img create -q -f qcow2 "$1/b.qcow2" 16M
    qemu-img create -q -f raw "$1/r.img" 16M
    chmod 666 "$1"/*
}

# define URI DIR: ck (two qcow2 disks) and ckraw (a raw one), shut off.
define()
{
    mkdir -p "$2"
    chmod 777 "$2"
    images "$2"
    qemu_domain_xml ck "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/a.qcow2'/><target dev='vda' bus='virtio'/></disk><disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/b.qcow2'/><target dev='vdb' bus='virtio'/></disk>" > "$2/ck.xml"
    qemu_domain_xml ckraw "<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='$2/r.img'/><target dev='vda' bus='virtio'/></disk>" > "$2/ckraw.xml"
    virsh -q -c "$1" define "$2/ck.xml" > /dev/null
    virsh -q -c "$1" define "$2/ckraw.xml" > /dev/null
}

# bitmaps FILE: the image's bitmaps, one "name flags" line each.
bitmaps()
{
    qemu-img info -U --output=json "$1" |
        "$SYSTEM_PYTHON3" -c 'import json, sys
info = json.load(sys.stdin)
for b in info.get("format-specific", {}).get("data", {}).get("bitmaps", []):
    print(b["name"], ",".join(sorted(b["flags"])))'
}

# run URI DIR: the virsh steps, one block per command with its output.
run()
{
    local uri=$1 dir=$2 cmd
    local -a V=(virsh -c "$uri")
    step()
    {
        echo "\$ $*"
        "${V[@]}" "$@" 2>&1 | sed -e '/^$/d' || true
    }
    disks()
    {
        echo "# a.qcow2:"; bitmaps "$dir/a.qcow2"
        echo "# b.qcow2:"; bitmaps "$dir/b.qcow2"
    }
    step checkpoint-create-as ck off1 --description "made while shut off"
    step checkpoint-create-as ckraw r1
    disks
    step start ck
    step start ckraw
    step checkpoint-create-as ckraw r1
    step checkpoint-create-as ck c1 --description "the first"
    step checkpoint-create-as ck c2
    step checkpoint-create-as ck c3 --diskspec vdb,checkpoint=no
    step checkpoint-create-as ck c3
    step checkpoint-create-as ck c4 --diskspec vdz
    step checkpoint-create-as ck c5 --diskspec vda,bitmap=other
    step checkpoint-create-as ck --quiesce q1
    disks
    step checkpoint-list ck --tree
    step checkpoint-list ck --parent
    step checkpoint-list ck --roots --name
    step checkpoint-list ck --leaves --name
    step checkpoint-list ck --no-leaves --name
    step checkpoint-list ck --topological --name
    step checkpoint-list ck --from c1 --descendants --name
    step checkpoint-parent ck c2
    step checkpoint-parent ck c1
    step checkpoint-dumpxml ck c2 --no-domain
    step checkpoint-dumpxml ck c3 --no-domain
    step checkpoint-dumpxml ck c3 --size --no-domain
    step checkpoint-dumpxml ck c1 --size --no-domain
    step checkpoint-info ck c2
    step snapshot-create-as ck s1
    step checkpoint-delete ck c2
    disks
    step checkpoint-list ck --parent
    step checkpoint-delete ck c1 --children-only
    disks
    step checkpoint-list ck --parent
    step checkpoint-create-as ck c6
    step checkpoint-delete ck c6 --metadata
    disks
    step checkpoint-delete ck nope
    step checkpoint-delete ck c1 --children
    disks
    step checkpoint-list ck
    step checkpoint-create-as ck c7
    step checkpoint-create-as ck c8
    step destroy ck
    disks
    step checkpoint-list ck --parent
    step checkpoint-create-as ck off2
    step checkpoint-delete ck c8
    step checkpoint-dumpxml ck c8 --size --no-domain
    disks
    step domrename ck ck2
    step domrename ck2 ck
    step snapshot-delete ck s1
    step undefine ck
    step checkpoint-list ck --name
    step undefine ck --checkpoints-metadata
    step checkpoint-list ck --name
}

define "$LIBVIRTD_QEMU_URI" "$OUT/libvirtd"
define "$QEMU_URI" "$OUT/remvirtd"
run "$LIBVIRTD_QEMU_URI" "$OUT/libvirtd" > "$OUT/libvirtd.raw"
run "$QEMU_URI" "$OUT/remvirtd" > "$OUT/remvirtd.raw"
for who in libvirtd remvirtd; do
    sed -E -e "s|$OUT/$who|DIR|g" -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' \
        -e 's|<creationTime>[0-9]+</creationTime>|<creationTime>T</creationTime>|' \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} [+-][0-9]{4}/TIME/g' "$OUT/$who.raw" > "$OUT/$who.txt"
done
cat "$OUT/libvirtd.txt"
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "virsh's checkpoint steps as against libvirtd"

# python3-libvirt: every call with its flags and refusals (checkpoint-checks.py).
checks()    # URI DIR
{
    images "$2"
    "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/checkpoint-checks.py" "$1" "$2" > "$OUT/py" 2>&1 ||
        { cat "$OUT/py"; fail "checkpoint-checks.py against $1"; }
    sed "s|$2|DIR|g" "$OUT/py"
    virsh -q -c "$1" destroy ckpy > /dev/null 2>&1 || true
}
checks "$LIBVIRTD_QEMU_URI" "$OUT/libvirtd" > "$OUT/libvirtd.py.txt"
checks "$QEMU_URI" "$OUT/remvirtd" > "$OUT/remvirtd.py.txt"
same "$OUT/libvirtd.py.txt" "$OUT/remvirtd.py.txt" "python3-libvirt's checkpoint calls as against libvirtd"
grep -q '^c7: c7$' "$OUT/remvirtd.py.txt" || fail "checkpoint-checks.py made no c7"

# remvirtd alone: the checkpoints of a running guest outlive a restart of
# remvirtd, and are deleted through the monitor it finds again.
D=$OUT/remvirtd
images "$D"
virsh -q -c "$QEMU_URI" define "$D/ck.xml" > /dev/null
virsh -q -c "$QEMU_URI" start ck > /dev/null
virsh -q -c "$QEMU_URI" checkpoint-create-as ck r1 > /dev/null
virsh -q -c "$QEMU_URI" checkpoint-create-as ck r2 > /dev/null
stop_remvirtd
start_remvirtd_qemu
got=$(virsh -q -c "$QEMU_URI" checkpoint-list ck --parent | awk '{print $1, $NF}' | tr '\n' ' ')
[ "$got" = "r1 +0000 r2 r1 " ] || fail "after the restart checkpoint-list printed '$got'"
echo "ok   r1 and r2 (its child) listed after remvirtd's restart"
virsh -q -c "$QEMU_URI" checkpoint-delete ck r2 > /dev/null
virsh -q -c "$QEMU_URI" destroy ck > /dev/null
[ "$(bitmaps "$D/a.qcow2" | tr '\n' ' ')" = "r1 auto " ] || fail "a.qcow2 holds: $(bitmaps "$D/a.qcow2")"
echo "ok   r2 deleted after the restart: a.qcow2 holds r1's bitmap only"
