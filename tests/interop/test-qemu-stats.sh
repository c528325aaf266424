#!/usr/bin/env bash
# Domain statistics of QEMU domains (CONNECT_GET_ALL_DOMAIN_STATS) through
# `virsh domstats` and python3-libvirt: state, cpu-total (from the QEMU
# process), balloon (memory from the definition), vcpu (counts, and each
# vCPU thread's time); an inactive domain has state, balloon and the vcpu
# counts only.  The guest idles in its firmware (no disk).
# Then what QEMU is asked over QMP: a guest whose firmware reads its disk
# (SeaBIOS looks for a boot sector, finds none and idles): domblkstat's
# counters are 0 while it is paused from the start and grow once it runs
# (query-blockstats), domstats --block (counters and file sizes) and
# --interface (net.count: user-mode networking has no host counters,
# domifstat says so as libvirtd does), vcpuinfo (thread times and host
# CPU from query-cpus-fast and /proc), vcpucount, dommemstat (the balloon,
# the process's RSS) and its --period (qom-set), for several domains at
# once through python3-libvirt.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
requires strace
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

qemu_domain_xml run | sed 's|<vcpu>1</vcpu>|<vcpu>2</vcpu>|' > "$OUT/run.xml"
qemu_domain_xml off > "$OUT/off.xml"
"${V[@]}" define "$OUT/run.xml" > /dev/null
"${V[@]}" define "$OUT/off.xml" > /dev/null
"${V[@]}" start run > /dev/null

# value FILE FIELD: the value of "  FIELD=VALUE" in virsh domstats' output.
value() { sed -n "s/^  $2=//p" "$1"; }
has_time() { "${V[@]}" domstats run > "$OUT/run.stats" && [ "$(value "$OUT/run.stats" vcpu.0.time)" -gt 0 ]; }
wait_for 60 "vCPU 0's thread to have used CPU time" has_time
# (vCPU 1 waits for the firmware to start it, which it never does: 0 is right.)
[[ "$(value "$OUT/run.stats" vcpu.1.time)" =~ ^[0-9]+$ ]] || fail "no vcpu.1.time"

expect() # FILE FIELD VALUE
{
    [ "$(value "$1" "$2")" = "$3" ] || fail "$2 is '$(value "$1" "$2")', not '$3' ($1)"
}
expect "$OUT/run.stats" state.state 1
expect "$OUT/run.stats" state.reason 1
expect "$OUT/run.stats" balloon.current 65536
expect "$OUT/run.stats" balloon.maximum 65536
expect "$OUT/run.stats" vcpu.current 2
expect "$OUT/run.stats" vcpu.maximum 2
expect "$OUT/run.stats" vcpu.0.state 1
[ "$(value "$OUT/run.stats" balloon.rss)" -gt 0 ] || { show "$OUT/run.stats"; fail "domstats: no balloon.rss"; }
cpu=$(value "$OUT/run.stats" cpu.time)
user=$(value "$OUT/run.stats" cpu.user)
sys=$(value "$OUT/run.stats" cpu.system)
[ "$cpu" -gt 0 ] && [ "$cpu" -eq $((user + sys)) ] || fail "cpu.time $cpu is not cpu.user $user + cpu.system $sys"
[ "$(value "$OUT/run.stats" vcpu.0.time)" -le "$cpu" ] || fail "vCPU 0 used more than the whole process"
echo "ok   a running domain: state, cpu-total, balloon, vcpu with each thread's time"

# A running guest's GetInfo, GetState and the statistics above read what
# they need without opening a file per call: the process's CPU clock and
# /proc stat files kept open.  The first domstats opens them; 50 more
# rounds of the three calls, traced, open nothing (and pread the files).
cat > "$OUT/calls.py" <<'EOT'
import sys, libvirt
conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("run")
groups = (libvirt.VIR_DOMAIN_STATS_STATE | libvirt.VIR_DOMAIN_STATS_CPU_TOTAL |
          libvirt.VIR_DOMAIN_STATS_BALLOON | libvirt.VIR_DOMAIN_STATS_VCPU)
def rounds(n):
    for _ in range(n):
        assert dom.info()[4] > 0
        assert dom.state()[0] == libvirt.VIR_DOMAIN_RUNNING
        assert conn.domainListGetStats([dom], groups)[0][1]["vcpu.0.time"] > 0
rounds(1)
print("ready", flush=True)
sys.stdin.readline()
rounds(50)
EOT
coproc CALLS { "$SYSTEM_PYTHON3" "$OUT/calls.py" "$QEMU_URI"; }
read -r ready <&"${CALLS[0]}"
[ "$ready" = ready ] || fail "the calls did not start"
strace -f -qq -e trace=open,openat,pread64 -o "$OUT/opens" -p "$REMVIRTD_PID" &
tracer=$!
traced() { ! grep -q '^TracerPid:[[:space:]]*0$' "/proc/$REMVIRTD_PID/status"; }
wait_for 20 "strace to attach to remvirtd" traced || fail "strace could not attach"
echo go >&"${CALLS[1]}"
wait "$CALLS_PID" || fail "GetInfo, GetState or domstats failed"
kill "$tracer"; wait "$tracer" 2>/dev/null || true
if grep -Eq 'open(at)?\(' "$OUT/opens"; then
    show "$OUT/opens"; fail "GetInfo, GetState and domstats opened files per call"
fi
grep -q 'pread64(' "$OUT/opens" || { show "$OUT/opens"; fail "the trace saw no pread of the kept stat files"; }
echo "ok   GetInfo, GetState and domstats of a running guest open no file per call"

"${V[@]}" domstats off > "$OUT/off.stats"
cat > "$OUT/off.expected" <<'EOT'
Domain: 'off'
  state.state=5
  state.reason=0
  balloon.current=65536
  balloon.maximum=65536
  vcpu.current=1
  vcpu.maximum=1
  net.count=0
  block.count=0
EOT
grep -v '^$' "$OUT/off.stats" > "$OUT/off.got" || true
same "$OUT/off.expected" "$OUT/off.got" "virsh domstats of an inactive domain"

"${V[@]}" domstats --list-active --state > "$OUT/active"
grep -v '^$' "$OUT/active" > "$OUT/active.got" || true
printf "Domain: 'run'\n  state.state=1\n  state.reason=1\n" > "$OUT/active.expected"
same "$OUT/active.expected" "$OUT/active.got" "virsh domstats --list-active --state"

"${V[@]}" domstats --enforce --perf run > "$OUT/enforce" 2>&1 && fail "--enforce --perf succeeded"
grep -q "Stats types bits 0x40 are not supported" "$OUT/enforce" || { show "$OUT/enforce"; fail "--enforce --perf: not the expected error"; }
echo "ok   --enforce with perf statistics: refused, naming the bits"

"$SYSTEM_PYTHON3" - > "$OUT/py" <<PY
import libvirt
c = libvirt.open("$QEMU_URI")
d = c.lookupByName("run")
((dom, stats),) = c.domainListGetStats([d], libvirt.VIR_DOMAIN_STATS_VCPU)
print(dom.name(), stats["vcpu.current"], sorted(k for k in stats if k.endswith(".state")))
PY
echo "run 2 ['vcpu.0.state', 'vcpu.1.state']" > "$OUT/py.expected"
same "$OUT/py.expected" "$OUT/py" "python3-libvirt domainListGetStats"

# ---------------------------------------------------------------- from QMP
truncate -s 1M "$OUT/disk.img"
qemu_domain_xml disk "<disk type='file' device='disk'><source file='$OUT/disk.img'/><target dev='vda' bus='virtio'/></disk><interface type='user'><mac address='52:54:00:12:34:56'/></interface>" > "$OUT/disk.xml"
"${V[@]}" define "$OUT/disk.xml" > /dev/null
"${V[@]}" start --paused disk > /dev/null
# blkstat FIELD: a counter of virsh domblkstat disk vda.
blkstat() { "${V[@]}" domblkstat disk vda | awk -v f="$1" '$2 == f { print $3 }'; }
[ "$(blkstat rd_req)" = 0 ] || fail "a paused guest read its disk: rd_req $(blkstat rd_req)"
"${V[@]}" resume disk > /dev/null
read_some() { [ "$(blkstat rd_req)" -gt 0 ]; }
wait_for 60 "the firmware to read the disk" read_some
[ "$(blkstat rd_bytes)" -ge 512 ] || fail "rd_bytes $(blkstat rd_bytes) for $(blkstat rd_req) reads"
"${V[@]}" domblkstat disk "$OUT/disk.img" > "$OUT/by-path"
grep -q "^$OUT/disk.img rd_req [1-9]" "$OUT/by-path" || { show "$OUT/by-path"; fail "domblkstat by source path"; }
"${V[@]}" domblkstat disk vdz > "$OUT/bad-disk" 2>&1 && fail "domblkstat of no disk succeeded"
grep -q "invalid path: vdz" "$OUT/bad-disk" || { show "$OUT/bad-disk"; fail "domblkstat vdz: not the expected error"; }
"${V[@]}" domblkstat run vda > "$OUT/bad-dom" 2>&1 && fail "domblkstat of a domain with no disk succeeded"
echo "ok   domblkstat: 0 reads while paused, more once the firmware runs; by target or path; bad path refused"

"${V[@]}" domstats --block --interface disk > "$OUT/disk.stats"
expect "$OUT/disk.stats" block.count 1
expect "$OUT/disk.stats" block.0.name vda
expect "$OUT/disk.stats" block.0.path "$OUT/disk.img"
expect "$OUT/disk.stats" block.0.physical 1048576
expect "$OUT/disk.stats" block.0.capacity 1048576
expect "$OUT/disk.stats" net.count 1
[ "$(value "$OUT/disk.stats" block.0.rd.reqs)" -gt 0 ] || { show "$OUT/disk.stats"; fail "domstats: no block.0.rd.reqs"; }
[[ "$(value "$OUT/disk.stats" block.0.wr.bytes)" =~ ^[0-9]+$ ]] || fail "domstats: no block.0.wr.bytes"
# A qcow2 image: its capacity is the size the guest sees, not the file's.
qemu-img create -q -f qcow2 "$OUT/q2.qcow2" 3M
qemu_domain_xml q2 "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/q2.qcow2'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/q2.xml"
"${V[@]}" define "$OUT/q2.xml" > /dev/null
"${V[@]}" domstats --block q2 > "$OUT/q2.stats"
expect "$OUT/q2.stats" block.0.capacity 3145728
[ "$(value "$OUT/q2.stats" block.0.physical)" -lt 3145728 ] || { show "$OUT/q2.stats"; fail "q2's physical size is its capacity"; }
"${V[@]}" undefine q2 > /dev/null
echo "ok   domstats: balloon.rss, block capacity (raw and qcow2), allocation, physical"
"${V[@]}" domstats --block off > "$OUT/off.block"
grep -v '^$' "$OUT/off.block" > "$OUT/off.block.got" || true
printf "Domain: 'off'\n  block.count=0\n" > "$OUT/off.block.expected"
same "$OUT/off.block.expected" "$OUT/off.block.got" "virsh domstats --block of a domain without disks"
echo "ok   domstats --block --interface: counters from QEMU, sizes from the file"

"${V[@]}" domifstat disk 52:54:00:12:34:56 > "$OUT/ifstat" 2>&1 && fail "domifstat of user networking succeeded"
grep -q "/proc/net/dev: Interface not found" "$OUT/ifstat" || { show "$OUT/ifstat"; fail "domifstat: not libvirtd's error"; }
"${V[@]}" domifstat disk 52:54:00:00:00:01 > "$OUT/ifstat" 2>&1 && fail "domifstat of no interface succeeded"
grep -q "is not a known interface" "$OUT/ifstat" || { show "$OUT/ifstat"; fail "domifstat of no interface: not the expected error"; }
echo "ok   domifstat: user-mode networking has no counters (libvirtd's error), an unknown MAC is refused"

"${V[@]}" vcpuinfo run > "$OUT/vcpuinfo"
[ "$(grep -c '^VCPU:' "$OUT/vcpuinfo")" = 2 ] || { show "$OUT/vcpuinfo"; fail "vcpuinfo: not 2 vcpus"; }
grep -q '^State: *running' "$OUT/vcpuinfo" || { show "$OUT/vcpuinfo"; fail "vcpuinfo: no state"; }
grep -Eq '^CPU: *[0-9]+$' "$OUT/vcpuinfo" || { show "$OUT/vcpuinfo"; fail "vcpuinfo: no host CPU"; }
grep -Eq '^CPU time: *[0-9.]+s$' "$OUT/vcpuinfo" || { show "$OUT/vcpuinfo"; fail "vcpuinfo: no CPU time"; }
grep -Eq '^CPU Affinity: *y' "$OUT/vcpuinfo" || { show "$OUT/vcpuinfo"; fail "vcpuinfo: no affinity"; }
# An inactive domain: virsh falls back to the pinning (GET_VCPU_PIN_INFO),
# as against libvirtd: N/A for what only a running vcpu has.
"${V[@]}" vcpuinfo off > "$OUT/vcpuinfo.off" 2>&1 || { show "$OUT/vcpuinfo.off"; fail "vcpuinfo of an inactive domain failed"; }
grep -Eq '^CPU: *N/A$' "$OUT/vcpuinfo.off" && grep -Eq '^CPU Affinity: *y' "$OUT/vcpuinfo.off" ||
    { show "$OUT/vcpuinfo.off"; fail "vcpuinfo of an inactive domain: not N/A and its affinity"; }
[ "$("${V[@]}" vcpucount run --live --current)" = 2 ] || fail "vcpucount --live --current"
[ "$("${V[@]}" vcpucount off --config --maximum)" = 1 ] || fail "vcpucount --config --maximum"
echo "ok   vcpuinfo: each vcpu's thread (query-cpus-fast), its time and CPU; vcpucount"

"${V[@]}" dommemstat run > "$OUT/memstat"
grep -q '^actual 65536$' "$OUT/memstat" || { show "$OUT/memstat"; fail "dommemstat: no actual 65536"; }
[ "$(awk '$1 == "rss" { print $2 }' "$OUT/memstat")" -gt 0 ] || { show "$OUT/memstat"; fail "dommemstat: no rss"; }
"${V[@]}" dommemstat run --period 2 --live > /dev/null || fail "dommemstat --period --live"
"${V[@]}" dommemstat run --period 2 --config > "$OUT/period" 2>&1 && fail "dommemstat --period --config succeeded"
grep -q "unsupported configuration" "$OUT/period" || { show "$OUT/period"; fail "--period --config: not the expected error"; }
"${V[@]}" dommemstat off > "$OUT/memstat.off" 2>&1 && fail "dommemstat of an inactive domain succeeded"
grep -q "domain is not running" "$OUT/memstat.off" || { show "$OUT/memstat.off"; fail "dommemstat off: not the expected error"; }
echo "ok   dommemstat: the balloon and the RSS; --period live, not config; an inactive domain refused"

"$SYSTEM_PYTHON3" - > "$OUT/py.many" <<PY
import libvirt
c = libvirt.open("$QEMU_URI")
for dom, st in sorted(c.getAllDomainStats(libvirt.VIR_DOMAIN_STATS_BLOCK), key=lambda r: r[0].name()):
    print(dom.name(), st["block.count"], st.get("block.0.name"), "block.0.rd.reqs" in st)
d = c.lookupByName("disk")
rd, rdb, wr, wrb, errs = d.blockStats("vda")
print("blockStats", rd > 0, errs)
print("vcpus", len(d.vcpus()[0]), d.vcpusFlags(libvirt.VIR_DOMAIN_VCPU_MAXIMUM))
print("memory", {k: v for k, v in d.memoryStats().items() if k == "actual"})
PY
cat > "$OUT/py.many.expected" <<'EOT'
disk 1 vda True
off 0 None False
run 0 None False
blockStats True -1
vcpus 1 1
memory {'actual': 65536}
EOT
same "$OUT/py.many.expected" "$OUT/py.many" "python3-libvirt: block stats of every domain at once, blockStats, vcpus, memoryStats"
"${V[@]}" destroy disk > /dev/null
"${V[@]}" destroy run > /dev/null
