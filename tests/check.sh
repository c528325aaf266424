#!/usr/bin/env bash
# Run the whole test suite on Debian 12: install what the build and the
# tests need (as root), build with warnings as errors, run `make check`
# and end with one line: "N passed, N failed" (", N skipped" if any).
# Exits non-zero if anything failed or the build did not finish.
#
#   tests/check.sh              the suite, in ./build
#   tests/check.sh --valgrind   the suite with the C tests and remvirtd under
#                               valgrind (make check-valgrind), in ./build
#   tests/check.sh --asan       the suite built with ASan/UBSan, in ./build-asan
#   --no-deps                   do not apt-get install (packages already there)
#   --fresh-caches              as on a new machine (CI, .ci/run): Debian's
#                               PATH, an empty HOME, and Maven, pip, apt and
#                               the test guest start from new empty caches
#   --print-deps                print the Debian packages it installs
#   --print-build-deps          only those the build needs (quickstart.sh)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
mode=plain
install_deps=1
fresh_caches=0
print_deps=0
for arg in "$@"; do
    case $arg in
    --valgrind) mode=valgrind ;;
    --asan) mode=asan ;;
    --no-deps) install_deps=0 ;;
    --fresh-caches) fresh_caches=1 ;;
    --print-deps) print_deps=1 ;;
    --print-build-deps) print_deps=build ;;
    -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    esac
done

build_deps=(build-essential autoconf automake libtool pkg-config rpcsvc-proto
            libtirpc-dev libev-dev libgnutls28-dev libsasl2-dev libssh2-1-dev
            libreadline-dev python3 libjson-c-dev libxml2-dev)
# The interop tests talk to the real thing: libvirtd's test driver,
# virsh and the Python binding.  unshare/flock (util-linux) isolate or
# serialize the private libvirtds.  The transport tests make a PKI with
# certtool (gnutls-bin), run a private sshd (openssh-server, with
# ssh-keygen and ssh-agent from openssh-client) and bridge with nc -U
# (netcat-openbsd).  The SASL tests make a user database with saslpasswd2
# (sasl2-bin) and need the SCRAM and DIGEST-MD5 plugins (libsasl2-modules).
# libvirt-dev's libvirt-api.xml names every public function: the table of
# libvirt's procedures is checked against it.
# A hostile SSH server for the terminal test is written with paramiko.
# The QMP client's test runs a real QEMU (qemu-system-x86).  The QEMU
# driver's storage pools make qcow2 images with qemu-img, its snapshots of
# shut-off guests run qemu-img, and their test writes and reads the disk
# with qemu-io (qemu-utils).  The QEMU
# driver's round trip runs virt-install (virtinst), and its side by side
# runs libvirtd's own QEMU driver (libvirt-daemon-driver-qemu, which
# libvirt-daemon depends on) in a private mount namespace.  Its guest
# that boots is made by tests/tools/build-test-guest.sh from packages it
# fetches with `apt-get download` (Debian's kernel, busybox-static).
# The Java client (java/) builds with Maven on JDK 17; Maven fetches its
# plugins and JUnit from Maven Central into ~/.m2 the first time.
# The service tests start remvirtd with systemd-socket-activate and check
# the units with systemd-analyze (systemd; no running systemd needed), and
# build the Debian package (dpkg-dev, debhelper, which brings
# dh-autoreconf), check it with lintian and install it (adduser for its
# group).  virt-manager runs in a real window under Xvfb, driven through
# AT-SPI (at-spi2-core, python3-dogtail, dbus-x11 for its session bus,
# gsettings from libglib2.0-bin to turn accessibility on);
# imagemagick's import takes the screenshots.  The QEMU driver's NAT and
# isolated networks run dnsmasq (dnsmasq-base: the program without a
# system service of its own) and nft (nftables); their test pings the
# guest (iputils-ping).  The tests that build a copy of the tree, and the
# quick start's test, take it from git (git ls-files).  test-qemu-host.sh
# reads the capabilities with nova's own parser (python3-nova).
# libguestfs's tools run their appliance through remvirtd and libvirtd
# (libguestfs-tools: guestfish, virt-df, virt-ls, virt-cat,
# virt-inspector, libguestfs-test-tool; supermin builds the appliance,
# with the test guest's kernel and depmod from kmod).  virt-viewer
# --attach shows a guest's display through DOMAIN_OPEN_GRAPHICS_FD.
# cockpit-machines runs as a user sees it: cockpit-ws with its bridge
# (cockpit-ws, cockpit-bridge, cockpit-system), libvirt-dbus on a private
# system bus, the page in headless Chromium driven by selenium (chromium,
# chromium-driver, python3-selenium).
#
# What else the suite relies on, and where it comes from (a newcomer's
# machine has none of it; --fresh-caches runs without it, and
# tests/integration/test-deps-listed.py checks that every program and
# Python module a test requires comes from these lists on a bare Debian 12):
# - Maven's plugins, JUnit: fetched from Maven Central by the Java test
#   (into ~/.m2, or a new repository under --fresh-caches);
# - the test guest's kernel and busybox-static: `apt-get download` from
#   Debian's archive, into build/tests/guest (a new directory under
#   --fresh-caches); they need only apt's package lists, which the
#   `apt-get update` below refreshes;
# - pip: nothing (every Python module is a python3-* package here);
# - /var/cache: nothing the tests read; libvirtd's QEMU driver, which
#   caches there, runs with a tmpfs over /var/cache/libvirt.
test_deps=(libvirt-daemon libvirt-clients python3-libvirt util-linux gnutls-bin
           openssh-server openssh-client netcat-openbsd sasl2-bin libsasl2-modules
           python3-paramiko libvirt-dev qemu-system-x86 qemu-utils scrub virtinst openjdk-17-jdk-headless
           maven systemd dpkg-dev debhelper lintian adduser
           virt-manager xvfb at-spi2-core python3-dogtail dbus-x11 imagemagick
           dnsmasq-base nftables iproute2 iputils-ping strace libglib2.0-bin git python3-nova
           libguestfs-tools kmod virt-viewer
           cockpit-ws cockpit-bridge cockpit-system cockpit-machines libvirt-dbus
           chromium chromium-driver python3-selenium virtnbdbackup libnbd-bin)
[ "$mode" = valgrind ] && test_deps+=(valgrind)
if [ "$print_deps" = build ]; then
    printf '%s\n' "${build_deps[@]}"
    exit 0
elif [ "$print_deps" = 1 ]; then
    printf '%s\n' "${build_deps[@]}" "${test_deps[@]}"
    exit 0
fi

# What a newcomer's machine lacks, this run must lack too, or it would
# pass where theirs fails: the programs in ~ and /usr/local (pyenv's
# python3, cargo's, ...) are off PATH, HOME is new and empty (no ~/.cache,
# ~/.config, ~/.local site-packages), Maven's local repository is new
# (Java takes user.home from the password file, not from HOME), pip's
# cache too and no local wheel directory, apt downloads into a new archive
# directory (APT_CONFIG is read after /etc/apt), and the test guest is
# built from newly downloaded packages.  All removed at exit.
if [ "$fresh_caches" = 1 ]; then
    fresh=$(mktemp -d /tmp/remvirt-fresh.XXXXXXXXXX)
    trap 'rm -rf "$fresh"' EXIT
    mkdir -p "$fresh/home" "$fresh/apt-archives/partial" "$fresh/guest"
    export PATH=/usr/sbin:/usr/bin:/sbin:/bin
    export HOME=$fresh/home
    unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME PIP_FIND_LINKS PYTHONPATH
    export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }-Dmaven.repo.local=$fresh/m2"
    export PIP_CACHE_DIR=$fresh/pip
    echo "Dir::Cache::Archives \"$fresh/apt-archives/\";" > "$fresh/apt.conf"
    export APT_CONFIG=$fresh/apt.conf
    export RV_TEST_GUEST_DIR=$fresh/guest
    # A download a test cannot make fails it here instead of skipping:
    # a skip would hide what a newcomer's run lacks.
    export RV_FRESH_CACHES=1
fi

if [ "$install_deps" = 1 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "check.sh: not root, so not installing packages (run with sudo, or --no-deps)" >&2
        exit 2
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # No recommends: libvirt-daemon would pull in QEMU and friends.
    apt-get install -y -q --no-install-recommends "${build_deps[@]}" "${test_deps[@]}"
fi

# libvirtd's QEMU driver (a dependency of libvirt-daemon) will not start
# without these; Debian's libvirt-daemon-system would create them.  System
# groups (-r), as Debian's own: udev's postinst refuses a kvm group that
# is not one, which breaks a later apt-get run on the same machine.
if [ "$(id -u)" -eq 0 ]; then
    groupadd -f -r kvm
    groupadd -f -r libvirt-qemu
    id libvirt-qemu >/dev/null 2>&1 || useradd -r -g kvm -s /usr/sbin/nologin libvirt-qemu
fi

configure_flags=(--enable-werror)
builddir=$top/build
if [ "$mode" = asan ]; then
    builddir=$top/build-asan
    configure_flags+=(--enable-sanitizers)
    # Leaks fail the program at exit; UB stops it at once.
    # A small quarantine: remvirtd gives a quiet client's buffers back at
    # once, and ASan's default 256 MiB of freed-but-held memory would
    # otherwise count as growth in the tests that bound remvirtd's memory.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p "$builddir"
cd "$builddir"
[ -f Makefile ] || "$top/configure" "${configure_flags[@]}"

# Results of an earlier run must not count.
find . -name '*.trs' -delete
rm -f test-suite.log

target=(check)
# Named here too in case this build dir was configured before valgrind
# was installed.
[ "$mode" = valgrind ] && target=(check-valgrind "VALGRIND=$(command -v valgrind)")
# A build dir configured before may name another python3 than PATH's.
[ "$fresh_caches" = 1 ] && target+=("PYTHON3=$(command -v python3)")
make_status=0
make -j2 "${target[@]}" || make_status=$?

# Tally what the automake harness recorded, one .trs per test.
passed=0 failed=0 skipped=0
failures=()
while IFS= read -r trs; do
    result=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
    case $result in
    PASS|XFAIL) passed=$((passed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)); failures+=("${trs%.trs} ($result)") ;;
    esac
done < <(find . -name '*.trs' | sort)

if [ "${#failures[@]}" -gt 0 ]; then
    [ -f test-suite.log ] && cat test-suite.log
    echo
    echo "Failed tests (logs in $builddir):"
    printf '  %s\n' "${failures[@]}"
fi
if [ "$make_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    # make stopped before any test could fail: the build itself broke.
    echo
    echo "make ${target[0]} failed before the tests ran (see the build output above)"
    failed=$((failed + 1))
fi

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary+=", $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
