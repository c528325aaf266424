#!/usr/bin/env bash
# The Debian package, as root (CI runs as root): dpkg-buildpackage -b
# builds remvirtd, rvsh, libremvirt0 and libremvirt-dev from a copy of the
# tree (about a minute on our 2-vCPU machines; it runs once per suite);
# lintian finds nothing at warning level or above; dpkg installs them:
# the group remvirt exists, remvirtd.conf is a conffile, the units are
# enabled the Debian way (not the TCP and TLS sockets); remvirtd started
# from the installed files (not via systemd: none runs here) gives its
# read-write socket to remvirt with mode 0770, so a user in that group can
# use it (virsh as root, rvsh as nobody with the group) and one without
# cannot, while the read-only socket takes anyone; then a purge leaves
# nothing behind.
#
# The install, the daemon and the purge run in a private root
# (tests/tools/private-root.sh: an overlay of this machine's root in a
# mount namespace, its changes thrown away at exit, /run and /tmp new),
# so remvirt set up on this machine (its packages, /etc/remvirt, a
# remvirtd on /run/remvirt) neither stops the test nor is touched by it.
# The private root is cleared of remvirt first, and always has some to
# clear: a planted /etc/remvirt and /var/lib/remvirt lie under the
# machine's own.  The machine's remvirt state must be the same afterwards.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires dpkg-buildpackage
requires dh
requires lintian
requires virsh
requires setpriv
requires unshare --mount --propagation private true

pkgs=(remvirtd rvsh libremvirt0 libremvirt-dev)
installed()
{
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}
# dpkg knows it: installed, or its conffiles left after a remove.
known()
{
    local status
    status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) || return 1
    [ -n "$status" ] && [ "$status" != not-installed ]
}

# in_private_root DEBDIR VERSION: the install, the installed remvirtd and
# the purge, inside the private root.
in_private_root()
{
    local debdir=$1 version=$2 p f
    # ---- a root without remvirt: what a former install left is gone.
    [ -e /etc/remvirt/planted ] || fail "the planted /etc/remvirt is not in the private root"
    for p in "${pkgs[@]}"; do
        if known "$p"; then
            dpkg --purge "$p" > "$RV_TMP/purge.log" 2>&1 || { cat "$RV_TMP/purge.log" >&2; fail "dpkg --purge $p"; }
        fi
    done
    local debs=()
    for p in "${pkgs[@]}"; do
        debs+=("$debdir/${p}_${version}_$(dpkg --print-architecture).deb")
    done
    for p in "${debs[@]}"; do
        dpkg-deb -c "$p" > "$RV_TMP/contents" || fail "dpkg-deb -c $p"
        awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' "$RV_TMP/contents" | while read -r f; do
            rm -f "$f"
        done
    done
    rm -rf /etc/remvirt /var/lib/remvirt /etc/systemd/system/*.wants/remvirtd*
    ! getent group remvirt > /dev/null || groupdel remvirt

    # ---- install
    dpkg -i "${debs[@]}" > "$RV_TMP/install.log" 2>&1 || { cat "$RV_TMP/install.log" >&2; fail "dpkg -i failed"; }
    for p in "${pkgs[@]}"; do
        installed "$p" || fail "$p is not installed after dpkg -i"
    done
    getent group remvirt > /dev/null || fail "no group remvirt after installing remvirtd"
    conffiles=$(dpkg-query -W -f='${Conffiles}\n' remvirtd)
    grep -q '^ /etc/remvirt/remvirtd.conf ' <<< "$conffiles" ||
        fail "/etc/remvirt/remvirtd.conf is not a conffile"
    for unit in sockets.target.wants/remvirtd.socket sockets.target.wants/remvirtd-ro.socket \
                sockets.target.wants/remvirtd-admin.socket multi-user.target.wants/remvirtd.service; do
        [ -L "/etc/systemd/system/$unit" ] || fail "$unit is not enabled"
    done
    for unit in remvirtd-tcp.socket remvirtd-tls.socket; do
        [ ! -e "/etc/systemd/system/sockets.target.wants/$unit" ] || fail "$unit is enabled"
    done
    dpkg -L "${pkgs[@]}" | sort -u > "$RV_TMP/files"
    echo "ok   installed: group remvirt, conffile, units enabled (not TCP and TLS)"

    # ---- run what the unit runs, from the installed files.
    exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' /lib/systemd/system/remvirtd.service)
    [ "$exec_start" = /usr/sbin/remvirtd ] || fail "remvirtd.service runs '$exec_start'"
    "$exec_start" --pidfile "$RV_TMP/remvirtd.pid" > "$RV_TMP/remvirtd.out" 2>&1 &
    pid=$!
    REMVIRTD_LOG=$RV_TMP/remvirtd.out
    stop_installed()
    {
        [ -n "$pid" ] || return 0
        kill -TERM "$pid" 2>/dev/null || true
        wait_for "$RV_TIMEOUT" "the installed remvirtd to exit" _rv_gone "$pid" || return 1
        local status=0
        wait "$pid" || status=$?
        pid=
        [ "$status" = 0 ] || { echo "the installed remvirtd exited with $status" >&2; return 1; }
        [ ! -e /run/remvirt/remvirt-sock ] || { echo "it left /run/remvirt/remvirt-sock" >&2; return 1; }
    }
    cleanup_fn stop_installed
    wait_for "$RV_TIMEOUT" "/run/remvirt/remvirt-sock-ro" test -S /run/remvirt/remvirt-sock-ro
    [ "$(stat -c '%A %U %G' /run/remvirt/remvirt-sock)" = "srwxrwx--- root remvirt" ] ||
        fail "the read-write socket is $(stat -c '%A %U %G' /run/remvirt/remvirt-sock)"
    [ "$(stat -c '%A' /run/remvirt/remvirt-sock-ro)" = "srwxrwxrwx" ] ||
        fail "the read-only socket is $(stat -c '%A' /run/remvirt/remvirt-sock-ro)"
    echo "ok   /usr/sbin/remvirtd with /etc/remvirt/remvirtd.conf: remvirt-sock 0770 root:remvirt"

    uri=test+unix:///default?socket=/run/remvirt/remvirt-sock
    uri_ro=test+unix:///default?socket=/run/remvirt/remvirt-sock-ro
    virsh -c "$uri" list --all > "$RV_TMP/virsh" 2>&1 || { cat "$RV_TMP/virsh" >&2; fail "virsh"; }
    grep -qE '^ 1 +test +running$' "$RV_TMP/virsh" || { cat "$RV_TMP/virsh" >&2; fail "virsh list"; }
    echo "ok   virsh reaches the installed remvirtd"

    gid=$(getent group remvirt | cut -d: -f3)
    as_nobody() { setpriv --reuid=nobody --regid=nogroup "$@"; }
    as_nobody --groups="$gid" /usr/bin/rvsh -c "$uri" list --all > "$RV_TMP/member" 2>&1 ||
        { cat "$RV_TMP/member" >&2; fail "a member of remvirt could not use the read-write socket"; }
    grep -qE '^ 1 +test +running$' "$RV_TMP/member" || { cat "$RV_TMP/member" >&2; fail "rvsh list as a member"; }
    if as_nobody --clear-groups /usr/bin/rvsh -c "$uri" list --all > "$RV_TMP/stranger" 2>&1; then
        fail "a user outside remvirt used the read-write socket"
    fi
    grep -qi "permission denied" "$RV_TMP/stranger" || { cat "$RV_TMP/stranger" >&2; fail "refused for another reason"; }
    as_nobody --clear-groups /usr/bin/rvsh -c "$uri_ro" list --all > "$RV_TMP/ro" 2>&1 ||
        { cat "$RV_TMP/ro" >&2; fail "the read-only socket refused a user outside remvirt"; }
    echo "ok   the installed rvsh: a member of remvirt may use remvirt-sock, nobody else; remvirt-sock-ro takes anyone"

    stop_installed

    # ---- purge: nothing of it is left.
    dpkg --purge "${pkgs[@]}" > "$RV_TMP/purge.log" 2>&1 || { cat "$RV_TMP/purge.log" >&2; fail "dpkg --purge failed"; }
    for p in "${pkgs[@]}"; do
        ! known "$p" || fail "$p is still known to dpkg after the purge"
    done
    left=$(while read -r f; do
        if [ ! -d "$f" ] && [ -e "$f" ]; then echo "$f"; fi
    done < "$RV_TMP/files")
    [ -z "$left" ] || fail "files left after the purge: $left"
    [ ! -e /etc/remvirt ] || fail "/etc/remvirt left after the purge"
    [ ! -e /var/lib/remvirt ] || fail "/var/lib/remvirt left after the purge"
    if ls /etc/systemd/system/*.wants/remvirtd* > /dev/null 2>&1; then
        fail "unit links left: $(ls /etc/systemd/system/*.wants/remvirtd*)"
    fi
    echo "ok   dpkg --purge: no file, conffile, directory or unit link left"
}

if [ "${1:-}" = --in-private-root ]; then
    in_private_root "$2" "$3"
    exit 0
fi

# ---- build, in a copy: dh_autoreconf and dh_clean change the tree.
version=$(sed -n '1s/^remvirt (\([^)]*\)).*/\1/p' "$top_srcdir/debian/changelog")
src=$RV_TMP/build/remvirt-$version
mkdir -p "$src"
tar -C "$top_srcdir" --exclude=./.git --exclude='./build' --exclude='./build-*' \
    --exclude=./autom4te.cache -cf - . | tar -C "$src" -xf -
start=$(date +%s)
# A build of its own, not a part of the `make check` that runs this test.
(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL DEB_BUILD_OPTIONS="nocheck parallel=2" \
    dpkg-buildpackage -b -us -uc) \
    > "$RV_TMP/build.log" 2>&1 || { tail -n 60 "$RV_TMP/build.log" >&2; fail "dpkg-buildpackage failed"; }
echo "ok   dpkg-buildpackage -b: $(( $(date +%s) - start )) s"
changes=$(ls "$RV_TMP"/build/remvirt_"$version"_*.changes)

lintian --display-info --fail-on error,warning "$changes" > "$RV_TMP/lintian" 2>&1 ||
    { cat "$RV_TMP/lintian" >&2; fail "lintian reports warnings or errors (above)"; }
# What it may still say (info) is listed and explained in docs/install.md.
sed -n 's/^I: [^ ]* \([^ ]*\).*/\1/p' "$RV_TMP/lintian" | sort -u | while read -r tag; do
    grep -q "\`$tag\`" "$top_srcdir/docs/install.md" ||
        fail "lintian says $tag, which docs/install.md does not explain"
done
echo "ok   lintian: no warnings or errors ($(grep -c '^I:' "$RV_TMP/lintian" || true) info tags, explained)"

# ---- the rest in a private root; this machine's remvirt stays as it was.
host_state()
{
    local p
    for p in "${pkgs[@]}"; do
        echo "$p: $(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p" 2>&1)"
    done
    getent group remvirt || true
    ls -ld --time-style=full-iso /run/remvirt /run/remvirt/* /etc/systemd/system/*.wants/remvirtd* 2>&1 || true
    find /etc/remvirt /var/lib/remvirt /usr/sbin/remvirtd /usr/bin/rvsh -printf '%p %M %s %T@\n' 2>&1 || true
}
host_state > "$RV_TMP/host-before"
mkdir -p "$RV_TMP/planted/etc/remvirt" "$RV_TMP/planted/var/lib/remvirt/qemu"
echo "# a former install's; the test must remove it in its private root" > "$RV_TMP/planted/etc/remvirt/planted"
cp "$top_srcdir/docs/remvirtd.conf" "$RV_TMP/planted/etc/remvirt/remvirtd.conf"
unshare --mount --propagation private bash "$top_srcdir/tests/tools/private-root.sh" \
    "$RV_TMP/privroot" "$RV_TMP/planted" "$top_srcdir" "$RV_TMP/build" -- \
    bash "$top_srcdir/tests/integration/test-deb.sh" --in-private-root "$RV_TMP/build" "$version" ||
    fail "the install in the private root failed (above)"
host_state > "$RV_TMP/host-after"
diff "$RV_TMP/host-before" "$RV_TMP/host-after" >&2 ||
    fail "this machine's remvirt state changed (diff above)"
echo "ok   this machine's remvirt state is as it was: $(grep -c . "$RV_TMP/host-before") lines compared"
