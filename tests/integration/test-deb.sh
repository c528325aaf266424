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
# nothing behind.  Skipped when remvirtd is installed on this machine
# already (it is not the test's to remove).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires dpkg-buildpackage
requires dh
requires lintian
requires virsh
requires setpriv
requires flock

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
for p in "${pkgs[@]}"; do
    ! known "$p" || skip "the package $p is on this machine already"
done
[ ! -e /etc/remvirt ] || skip "/etc/remvirt exists: remvirt is set up on this machine"
# Two suites on one machine (two build trees) would share /run/remvirt
# and dpkg: one at a time.
exec 9> /run/lock/remvirt-test-deb.lock
flock -w 900 9 || fail "another test-deb.sh holds /run/lock/remvirt-test-deb.lock"
[ ! -e /run/remvirt/remvirt-sock ] || skip "/run/remvirt/remvirt-sock exists: a remvirtd runs here"

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

# ---- install
group_existed=0 rundir_existed=0
getent group remvirt > /dev/null && group_existed=1
[ -e /run/remvirt ] && rundir_existed=1
purge()
{
    local p known_pkgs=()
    for p in "${pkgs[@]}"; do
        ! known "$p" || known_pkgs+=("$p")
    done
    if [ "${#known_pkgs[@]}" -gt 0 ] &&
       ! dpkg --purge "${known_pkgs[@]}" > "$RV_TMP/purge.log" 2>&1; then
        cat "$RV_TMP/purge.log" >&2
        return 1
    fi
    if [ "$group_existed" = 0 ] && getent group remvirt > /dev/null; then
        groupdel remvirt
    fi
    # remvirtd made it (systemd would have, on a host); empty by now.
    if [ "$rundir_existed" = 0 ] && [ -d /run/remvirt ]; then
        rmdir /run/remvirt
    fi
}
cleanup_fn purge
debs=()
for p in "${pkgs[@]}"; do
    debs+=("$RV_TMP/build/${p}_${version}_$(dpkg --print-architecture).deb")
done
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
purge
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
