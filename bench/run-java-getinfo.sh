#!/bin/sh
# The Java client's GetInfo benchmark: remvirt-java (java/), libremvirt
# (bench/getinfo's unpinned remvirt column) and libvirt-java (libvirt's JNA
# binding from Maven Central over the system's libvirt.so.0), side by side
# in interleaved rounds against one private remvirtd.
#
#   bench/run-java-getinfo.sh [--builddir DIR] [--calls N] [--rounds N]
#
# DIR (default ./build) must hold remvirtd and bench/getinfo.  Builds the
# Java client (installed into ~/.m2) and bench/java with Maven.  Prints
# us/call per round and the medians, and remvirt-java/libremvirt against
# the target of at most 1.5x (reported, not judged by the exit status).
set -eu

builddir=./build
calls=30000
rounds=5
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?}; shift 2 ;;
    --calls) calls=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-java-getinfo: unknown option '$1'" >&2; exit 2 ;;
    esac
done
fail() { echo "run-java-getinfo: $*" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(cd "$builddir" && pwd)
[ -x "$builddir/remvirtd" ] && [ -x "$builddir/bench/getinfo" ] ||
    fail "build remvirtd and bench/getinfo in $builddir first"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rv-jbench.XXXXXX")
pid=
cleanup() {
    [ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Offline first, from ~/.m2; online when something is missing.
mvn_q() {
    mvn -B -q -o "$@" > "$tmp/mvn.log" 2>&1 || mvn -B -q "$@" > "$tmp/mvn.log" 2>&1 ||
        { cat "$tmp/mvn.log" >&2; fail "mvn $*"; }
}
mvn_q -f "$top/java/pom.xml" "-Drv.build.dir=$builddir/java" -DskipTests install
mvn_q -f "$top/bench/java/pom.xml" "-Drv.build.dir=$builddir/bench-java" package \
    dependency:build-classpath "-Dmdep.outputFile=$tmp/cp"

mkdir "$tmp/rv"
printf 'unix_sock_dir = "%s"\nunix_sock_rw_perms = "0700"\n' "$tmp/rv" > "$tmp/remvirtd.conf"
"$builddir/remvirtd" -f "$tmp/remvirtd.conf" --pidfile "$tmp/remvirtd.pid" > "$tmp/remvirtd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
    [ -S "$tmp/rv/remvirt-sock" ] && break
    sleep 0.1
done
[ -S "$tmp/rv/remvirt-sock" ] || { cat "$tmp/remvirtd.log" >&2; fail "remvirtd did not start"; }

echo "load average at start: $(cut -d' ' -f1 /proc/loadavg) (other work on the machine adds noise)"
java ${RV_JAVA_OPTS:-} -cp "$builddir/bench-java/classes:$(cat "$tmp/cp")" GetInfoBench \
    --remvirt-sock "$tmp/rv/remvirt-sock" --getinfo "$builddir/bench/getinfo" \
    --calls "$calls" --rounds "$rounds"
