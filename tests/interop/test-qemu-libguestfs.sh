#!/usr/bin/env bash
# libguestfs 1.48 with its libvirt backend against remvirtd's QEMU driver
# and, side by side, libvirtd's (TCG: LIBGUESTFS_BACKEND_SETTINGS=force_tcg).
# The appliance's domain (created with VIR_DOMAIN_START_AUTODESTROY, its
# XML as tests/unit/test-domain-xml.c's test_libguestfs_appliance has it)
# runs under each: libguestfs-test-tool passes; guestfish makes a
# partition and an ext4 filesystem on an image, writes files (a small
# Debian-looking root) and reads one back; on remvirtd virt-df, virt-ls,
# virt-cat and virt-inspector read that image.  The appliance's running domain is
# tainted (custom-argv: its <qemu:env>) in its log and in
# DOMAIN_GET_MESSAGES as libvirtd taints it, and its live XML keeps what
# libguestfs sent in the form libvirtd writes it.
#
# The appliance's kernel is the test guest's Debian kernel package
# (tests/tools/build-test-guest.sh fetched it), unpacked with its modules
# indexed (depmod -b) into the build dir; supermin builds the appliance
# from the host's packages into a cache kept there too.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
for tool in libguestfs-test-tool guestfish virt-df virt-ls virt-cat virt-inspector supermin depmod; do
    requires "$tool"
done
requires virsh
test_guest
OUT=$RV_TMP/out
mkdir -p "$OUT"

# The kernel and its modules, as supermin wants them.
kdeb=$(ls "${RV_TEST_GUEST_DIR:-$top_builddir/tests/guest}"/debs/linux-image-*.deb | head -n 1)
KDIR=$top_builddir/tests/guestfs-kernel
if [ ! -s "$KDIR/done" ] || [ "$(cat "$KDIR/done")" != "$(basename "$kdeb")" ]; then
    rm -rf "$KDIR"
    mkdir -p "$KDIR"
    dpkg-deb -x "$kdeb" "$KDIR"
    kver=$(ls "$KDIR/lib/modules")
    depmod -b "$KDIR" -a "$kver"
    basename "$kdeb" > "$KDIR/done"
fi
kver=$(ls "$KDIR/lib/modules")
export SUPERMIN_KERNEL=$KDIR/boot/vmlinuz-$kver SUPERMIN_MODULES=$KDIR/lib/modules/$kver
# supermin 5.2 looks at the host's /lib/modules even when given others
# (a machine with no kernel package installed has none): an empty one.
[ -d /lib/modules ] || mkdir -p /lib/modules
export LIBGUESTFS_CACHEDIR=$top_builddir/tests/guestfs-cache
mkdir -p "$LIBGUESTFS_CACHEDIR"
export LIBGUESTFS_BACKEND_SETTINGS=force_tcg
# Its temporary sockets and overlays in RV_TMP.
export TMPDIR=$RV_TMP

start_remvirtd_qemu

# on URI SIDE [all]: libguestfs-test-tool, then guestfish (in remote mode,
# so that its running appliance's live XML and dominfo can be taken, into
# OUT/SIDE-live.xml and SIDE-dominfo) against the daemon at URI; with
# "all", virt-df, virt-ls, virt-cat and virt-inspector on its image too.
on()
{
    local uri=$1 side=$2 img=$OUT/$2.img t0 t1 name
    export LIBGUESTFS_BACKEND="libvirt:$uri"
    t0=$(date +%s.%N)
    libguestfs-test-tool > "$OUT/$side-test-tool.log" 2>&1 ||
        { tail -n 40 "$OUT/$side-test-tool.log" >&2; fail "$side: libguestfs-test-tool failed"; }
    t1=$(date +%s.%N)
    grep -q '===== TEST FINISHED OK =====' "$OUT/$side-test-tool.log" ||
        fail "$side: libguestfs-test-tool did not finish OK"
    echo "ok   $side: libguestfs-test-tool passes ($(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s)"

    truncate -s 64M "$img"
    eval "$(guestfish --listen -a "$img")"
    cleanup_fn sh -c "guestfish --remote=$GUESTFISH_PID exit 2> /dev/null || true"
    fish() { guestfish --remote=$GUESTFISH_PID "$@"; }
    fish run
    name=$(virsh -c "$uri" list --name | grep '^guestfs-' | head -n 1)
    [ -n "$name" ] || fail "$side: no appliance domain running"
    virsh -c "$uri" dumpxml "$name" > "$OUT/$side-live.xml"
    virsh -c "$uri" dominfo "$name" > "$OUT/$side-dominfo"
    grep -q "Messages: *tainted: custom configuration parameters specified" "$OUT/$side-dominfo" ||
        { show "$OUT/$side-dominfo"; fail "$side: dominfo does not say the appliance is tainted"; }
    fish part-disk /dev/sda mbr
    fish mkfs ext4 /dev/sda1
    fish mount /dev/sda1 /
    fish mkdir-p /etc
    fish mkdir-p /usr/bin
    fish mkdir-p /var/lib/dpkg
    fish ln-s usr/bin /bin
    fish write /etc/os-release 'ID=debian
VERSION_ID=12
NAME="Debian GNU/Linux"
PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
'
    fish write /etc/fstab '/dev/sda1 / ext4 defaults 0 1
'
    fish write /etc/hostname "guestfs-on-$side
"
    fish write /var/lib/dpkg/status 'Package: base-files
Status: install ok installed
Architecture: amd64
Version: 12.4

'
    fish upload /usr/bin/ls /usr/bin/ls
    fish write /hello.txt 'hello from remvirt
'
    [ "$(fish cat /hello.txt)" = "hello from remvirt" ] ||
        fail "$side: guestfish read back '$(fish cat /hello.txt)'"
    fish exit
    # AUTODESTROY: its connection closed, the appliance is gone.
    wait_for 30 "$side: the appliance to go with guestfish" \
        sh -c "! virsh -c '$uri' list --name | grep -qx '$name'" ||
        fail "$side: the appliance outlived guestfish's connection"
    echo "ok   $side: guestfish: partition, mkfs ext4, write, read back; the appliance was" \
         "tainted and went with its connection"
    [ "${3:-}" = all ] || return 0

    virt-df -a "$img" > "$OUT/$side-df" 2>&1 || { show "$OUT/$side-df"; fail "$side: virt-df failed"; }
    grep -Eq "^$(basename "$img"):/dev/sda1 +[0-9]+" "$OUT/$side-df" ||
        { show "$OUT/$side-df"; fail "$side: virt-df does not list /dev/sda1"; }
    echo "ok   $side: virt-df lists /dev/sda1"
    virt-ls -a "$img" -m /dev/sda1 / > "$OUT/$side-ls" 2>&1 || { show "$OUT/$side-ls"; fail "$side: virt-ls failed"; }
    for f in etc hello.txt usr lost+found; do
        has_line "$OUT/$side-ls" "$f" || { show "$OUT/$side-ls"; fail "$side: virt-ls does not list $f"; }
    done
    echo "ok   $side: virt-ls lists the files"
    [ "$(virt-cat -a "$img" -m /dev/sda1 /hello.txt 2>&1)" = "hello from remvirt" ] ||
        fail "$side: virt-cat: $(virt-cat -a "$img" -m /dev/sda1 /hello.txt 2>&1)"
    echo "ok   $side: virt-cat reads the file"
    virt-inspector -a "$img" > "$OUT/$side-inspector.xml" 2>&1 ||
        { show "$OUT/$side-inspector.xml"; fail "$side: virt-inspector failed"; }
    for want in "<name>linux</name>" "<distro>debian</distro>" "<arch>x86_64</arch>" \
                "<hostname>guestfs-on-$side</hostname>"; do
        grep -qF "$want" "$OUT/$side-inspector.xml" ||
            { show "$OUT/$side-inspector.xml"; fail "$side: virt-inspector lacks $want"; }
    done
    echo "ok   $side: virt-inspector finds Debian 12, x86_64"
}

on "$QEMU_URI" remvirtd all
grep -q "is tainted: custom-argv" "$QEMU_DIR"/run/guestfs-*.log ||
    fail "remvirtd: the appliance's log does not say it is tainted"

! why=$(libvirtd_qemu_why_not) || { echo "libvirtd side skipped: $why"; exit 0; }
start_libvirtd_qemu
# libvirtd: the test tool and guestfish (the other tools run the same
# appliance again, and keep the test within a few minutes).
on "$LIBVIRTD_QEMU_URI" libvirtd

# The live XML: what libguestfs sent, in the same words from both (the
# lines that carry it; paths and names differ per run).
pick()
{
    sed -e 's|/tmp/libguestfs[A-Za-z0-9]*/|SOCKDIR/|g' "$1" |
        grep -E "<domain |<bios|<feature policy|<driver name|<target dev|type='drive'|<source mode|<qemu:|<controller type='scsi'|<serial|<console|<channel type" |
        sed -e "s/ id='[0-9]*'//"
}
pick "$OUT/remvirtd-live.xml" > "$OUT/remvirtd-picked"
pick "$OUT/libvirtd-live.xml" > "$OUT/libvirtd-picked"
diff -u "$OUT/libvirtd-picked" "$OUT/remvirtd-picked" ||
    fail "the appliance's live XML differs from libvirtd's (above: - libvirtd, + remvirtd)"
echo "ok   the appliance's live XML has libvirtd's words for what libguestfs sent"
