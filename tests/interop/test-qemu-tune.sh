#!/usr/bin/env bash
# Memory and vcpu changes of QEMU domains through virsh and python3-libvirt:
#   setmaxmem / setmem --config: the definition (dominfo, dumpxml), above
#     the maximum refused, the maximum of a running domain refused;
#   setvcpus --config within the maximum, --maximum; a guest started with
#     <vcpu current='2'>3</vcpu> (-smp 2,maxcpus=3) gets its third vcpu
#     live (query-hotpluggable-cpus, device_add): vcpucount, vcpuinfo,
#     domstats and the live XML say 3; beyond the maximum refused, fewer
#     live refused by QEMU for this guest without ACPI (unplug:
#     test-qemu-vcpu-unplug.sh);
#   setmem --live --config on the guest that boots (its virtio balloon
#     driver gives the memory back): dominfo's used memory follows, and
#     the definition keeps the new size; a guest without a balloon refused.
#   vcpupin / emulatorpin --live: the threads' CPU affinity as the kernel
#     reports it (/proc/PID/task/TID/status), read back by vcpupin,
#     vcpuinfo and emulatorpin; blkdeviotune --live: QEMU's throttling,
#     read back from query-block; --config of either refused, saying why.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
test_guest
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

# refused WHAT PATTERN COMMAND...: the virsh command fails saying PATTERN.
refused()
{
    local what=$1 pattern=$2
    shift 2
    "${V[@]}" "$@" > "$OUT/err" 2>&1 && fail "$what succeeded"
    grep -q -- "$pattern" "$OUT/err" || { show "$OUT/err"; fail "$what: not the expected error"; }
}
info() { "${V[@]}" dominfo "$1" | sed -n "s/^$2: *//p"; }
xml_has() { "${V[@]}" dumpxml "${@:2}" > "$OUT/xml" && grep -qF "$1" "$OUT/xml"; }

qemu_domain_xml t | sed "s|<vcpu>1</vcpu>|<vcpu current='2'>3</vcpu>|" > "$OUT/t.xml"
"${V[@]}" define "$OUT/t.xml" > /dev/null
xml_has "<vcpu placement='static' current='2'>3</vcpu>" t || fail "dumpxml lost <vcpu current>"

"${V[@]}" setmaxmem t 48M --config > /dev/null
[ "$(info t 'Max memory')" = "49152 KiB" ] || fail "setmaxmem --config: max memory $(info t 'Max memory')"
xml_has "<currentMemory unit='KiB'>49152</currentMemory>" t || fail "setmaxmem below the current memory did not lower it"
"${V[@]}" setmem t 32M --config > /dev/null
xml_has "<currentMemory unit='KiB'>32768</currentMemory>" t || fail "setmem --config: no currentMemory 32768"
refused "setmem above the maximum" "cannot set memory higher than max memory" setmem t 100M --config
refused "setmem --live of an inactive domain" "domain is not running" setmem t 16M --live
echo "ok   setmaxmem and setmem --config: the definition; above the maximum, or live while off, refused"

"${V[@]}" setvcpus t 1 --config > /dev/null
[ "$("${V[@]}" vcpucount t --config --current)" = 1 ] || fail "setvcpus 1 --config"
refused "setvcpus above the maximum" "greater than max allowable vcpus for the persistent domain: 4 > 3" setvcpus t 4 --config
"${V[@]}" setvcpus t 4 --config --maximum > /dev/null
[ "$("${V[@]}" vcpucount t --config --maximum)" = 4 ] || fail "setvcpus 4 --config --maximum"
"${V[@]}" setvcpus t 3 --config --maximum > /dev/null
"${V[@]}" setvcpus t 2 --config > /dev/null
xml_has "<vcpu placement='static' current='2'>3</vcpu>" t --inactive || fail "setvcpus --config: not in dumpxml"
echo "ok   setvcpus --config within the maximum, --maximum; above it refused"

"${V[@]}" start t > /dev/null
grep -q -- "-smp 2,maxcpus=3" "$QEMU_DIR/run/t.log" || { show "$QEMU_DIR/run/t.log"; fail "QEMU was not given -smp 2,maxcpus=3"; }
[ "$("${V[@]}" vcpucount t --live --current)" = 2 ] || fail "vcpucount --live --current before the hotplug"
"${V[@]}" setvcpus t 3 --live > /dev/null
[ "$("${V[@]}" vcpucount t --live --current)" = 3 ] || fail "vcpucount --live --current after setvcpus 3 --live"
[ "$("${V[@]}" vcpucount t --config --current)" = 2 ] || fail "setvcpus --live changed the definition"
[ "$("${V[@]}" vcpuinfo t | grep -c '^VCPU:')" = 3 ] || fail "vcpuinfo does not list 3 vcpus"
[ "$(info t 'CPU(s)')" = 3 ] || fail "dominfo CPU(s) is $(info t 'CPU(s)'), not 3"
"${V[@]}" domstats --vcpu t > "$OUT/vstats"
grep -q '^  vcpu.current=3$' "$OUT/vstats" || { show "$OUT/vstats"; fail "domstats vcpu.current is not 3"; }
xml_has "<vcpu placement='static'>3</vcpu>" t || fail "the live XML does not say 3 vcpus"
refused "setvcpus --live above the maximum" "greater than max allowable vcpus for the live domain: 4 > 3" setvcpus t 4 --live
refused "setvcpus --live to fewer without ACPI" "CPU hot unplug not supported without ACPI" setvcpus t 1 --live
refused "setmaxmem of a running domain" "cannot resize the maximum memory on an active domain" setmaxmem t 128M
echo "ok   setvcpus --live: the third vcpu hotplugged (vcpucount, vcpuinfo, dominfo, domstats, dumpxml); beyond or fewer refused"

"$SYSTEM_PYTHON3" - > "$OUT/py" <<PY
import libvirt
d = libvirt.open("$QEMU_URI").lookupByName("t")
d.setVcpusFlags(3, libvirt.VIR_DOMAIN_AFFECT_CONFIG)
d.setMemoryFlags(40 * 1024, libvirt.VIR_DOMAIN_AFFECT_CONFIG)
print(d.vcpusFlags(libvirt.VIR_DOMAIN_AFFECT_CONFIG), d.maxMemory())
try:
    d.setMemoryFlags(1024 * 1024, libvirt.VIR_DOMAIN_AFFECT_LIVE)
except libvirt.libvirtError as e:
    print(e.get_error_code() == libvirt.VIR_ERR_INVALID_ARG)
PY
printf '3 49152\nTrue\n' > "$OUT/py.expected"
same "$OUT/py.expected" "$OUT/py" "python3-libvirt setVcpusFlags, setMemoryFlags"
"${V[@]}" destroy t > /dev/null
xml_has "<currentMemory unit='KiB'>40960</currentMemory>" t || fail "setMemoryFlags(config) was not kept"

qemu_domain_xml nob "<memballoon model='none'/>" > "$OUT/nob.xml"
"${V[@]}" define "$OUT/nob.xml" > /dev/null
"${V[@]}" start nob > /dev/null
refused "setmem without a balloon" "without the balloon device" setmem nob 32M --live
"${V[@]}" destroy nob > /dev/null

# The guest that boots: its balloon driver acts on the new target.
qemu_guest_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
"${V[@]}" start g > /dev/null
_ballooned() { [ "$(info g 'Used memory')" = "$1 KiB" ]; }
wait_for 300 "the guest's balloon to reach 96 MiB" _ballooned 98304
"${V[@]}" setmem g 80M --live --config > /dev/null
wait_for 120 "the guest's balloon to reach 80 MiB" _ballooned 81920
xml_has "<currentMemory unit='KiB'>81920</currentMemory>" g || fail "the live XML has not currentMemory 81920"
xml_has "<currentMemory unit='KiB'>81920</currentMemory>" g --inactive || fail "setmem --config was not kept"
"${V[@]}" dommemstat g > "$OUT/memstat"
grep -q '^actual 81920$' "$OUT/memstat" || { show "$OUT/memstat"; fail "dommemstat: actual is not 81920"; }
echo "ok   setmem --live --config on a booted guest: its balloon follows (dominfo, dommemstat), the definition keeps it; no balloon refused"
"${V[@]}" destroy g > /dev/null

# Pinning and block I/O throttling, live: the kernel says where the vcpu
# and emulator threads may run (Cpus_allowed_list of /proc/PID/task/TID),
# QEMU's query-block what the disk's limits are (blkdeviotune reads them).
truncate -s 16M "$OUT/p.img"
qemu_domain_xml p "<disk type='file' device='disk'><source file='$OUT/p.img'/><target dev='vda' bus='virtio'/></disk>" |
    sed "s|<vcpu>1</vcpu>|<vcpu>2</vcpu>|" > "$OUT/p.xml"
"${V[@]}" define "$OUT/p.xml" > /dev/null
"${V[@]}" start p > /dev/null
pid=$(qemu_pids "$QEMU_DIR/run/")
[ -n "$pid" ] && [ "$(echo "$pid" | wc -w)" = 1 ] || fail "not one QEMU running: '$pid'"
all=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
first=${all%%[,-]*}
# thread_cpus NAME-PATTERN: the allowed CPUs of QEMU's thread so named.
thread_cpus()
{
    local t
    for t in /proc/"$pid"/task/*; do
        if grep -qx "$1" "$t/comm"; then
            sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status"
            return 0
        fi
    done
    fail "QEMU has no thread called '$1'"
}
"${V[@]}" vcpupin p 1 "$first" --live > /dev/null
[ "$(thread_cpus 'CPU 1/.*')" = "$first" ] || fail "vcpu 1's thread may run on $(thread_cpus 'CPU 1/.*'), not $first"
[ "$(thread_cpus 'CPU 0/.*')" = "$all" ] || fail "vcpu 0's thread was pinned too: $(thread_cpus 'CPU 0/.*')"
"${V[@]}" vcpupin p > "$OUT/vcpupin"
grep -Eq "^ *1 +$first\$" "$OUT/vcpupin" || { show "$OUT/vcpupin"; fail "vcpupin does not show vcpu 1 on $first"; }
"${V[@]}" vcpuinfo p > "$OUT/vcpuinfo"
[ "$(grep -c '^CPU Affinity' "$OUT/vcpuinfo")" = 2 ] || { show "$OUT/vcpuinfo"; fail "vcpuinfo: not two affinities"; }
refused "vcpupin of a vcpu it lacks" "vcpu 5 is out of range of live cpu count 2" vcpupin p 5 "$first"
"${V[@]}" emulatorpin p "$first" --live > /dev/null
[ "$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/"$pid"/status)" = "$first" ] || fail "QEMU's main thread is not pinned to $first"
[ "$(thread_cpus 'CPU 0/.*')" = "$all" ] || fail "emulatorpin pinned a vcpu thread"
"${V[@]}" emulatorpin p > "$OUT/emulatorpin"
grep -Eq "^( *\*: +)?$first\$" "$OUT/emulatorpin" || { show "$OUT/emulatorpin"; fail "emulatorpin does not show $first"; }
echo "ok   vcpupin and emulatorpin --live: the threads' affinity (kernel), vcpupin, vcpuinfo, emulatorpin; a missing vcpu refused"

"${V[@]}" blkdeviotune p vda --total-bytes-sec 1048576 --live > /dev/null
"${V[@]}" blkdeviotune p vda --read-iops-sec 50 --write-iops-sec 60 > /dev/null
"${V[@]}" blkdeviotune p vda > "$OUT/iotune"
for want in "total_bytes_sec: 1048576" "read_iops_sec  : 50" "write_iops_sec : 60" "total_iops_sec : 0"; do
    grep -qxF "$want" "$OUT/iotune" || { show "$OUT/iotune"; fail "blkdeviotune does not read back '$want'"; }
done
"${V[@]}" blkdeviotune p vda --config > "$OUT/iotune-config"
grep -qxF "total_bytes_sec: 0" "$OUT/iotune-config" || { show "$OUT/iotune-config"; fail "blkdeviotune --config is not all 0"; }
refused "blkdeviotune of a disk it lacks" "disk 'vdz' was not found" blkdeviotune p vdz --total-bytes-sec 5
refused "total and read limits at once" "bps" blkdeviotune p vda --read-bytes-sec 5
"${V[@]}" blkdeviotune p vda --total-bytes-sec 0 --read-iops-sec 0 --write-iops-sec 0 > /dev/null
"${V[@]}" blkdeviotune p vda > "$OUT/iotune"
grep -qxF "total_bytes_sec: 0" "$OUT/iotune" || { show "$OUT/iotune"; fail "the limits were not lifted"; }
echo "ok   blkdeviotune --live: block_set_io_throttle, read back from query-block, merged; a missing disk and QEMU's refusal reported"

# --config: the definition (on disk at once), applied at the next start.
"${V[@]}" vcpupin p 0 "$first" --config > /dev/null
"${V[@]}" emulatorpin p "$first" --config > /dev/null
"${V[@]}" blkdeviotune p vda --total-bytes-sec 2048 --total-iops-sec 30 --config > /dev/null
grep -qF "<vcpupin vcpu='0' cpuset='$first'/>" "$QEMU_DIR/etc/p.xml" &&
    grep -qF "<emulatorpin cpuset='$first'/>" "$QEMU_DIR/etc/p.xml" &&
    grep -qF "<total_bytes_sec>2048</total_bytes_sec>" "$QEMU_DIR/etc/p.xml" ||
    { show "$QEMU_DIR/etc/p.xml"; fail "the definition on disk lacks the --config tuning"; }
[ "$(thread_cpus 'CPU 0/.*')" = "$all" ] || fail "vcpupin --config pinned the running vcpu 0"
"${V[@]}" blkdeviotune p vda --config > "$OUT/iotune-config"
grep -qxF "total_iops_sec : 30" "$OUT/iotune-config" || { show "$OUT/iotune-config"; fail "blkdeviotune --config does not read back 30"; }
"${V[@]}" vcpupin p --config > "$OUT/vcpupin"
grep -Eq "^ *0 +$first\$" "$OUT/vcpupin" || { show "$OUT/vcpupin"; fail "vcpupin --config does not show vcpu 0 on $first"; }
refused "vcpupin --config beyond the vcpus" "vcpu 2 is out of range of persistent cpu count 2" vcpupin p 2 "$first" --config
refused "blkdeviotune --config, total and read" "total and read/write of bytes_sec" \
    blkdeviotune p vda --read-bytes-sec 5 --config
"${V[@]}" destroy p > /dev/null
"${V[@]}" start p > /dev/null
pid=$(qemu_pids "$QEMU_DIR/run/")
_pinned() { [ "$(thread_cpus 'CPU 0/.*')" = "$first" ]; }
wait_for 30 "vcpu 0's thread to be pinned at start" _pinned
[ "$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/"$pid"/status)" = "$first" ] || fail "QEMU's main thread is not pinned at start"
grep -q "throttling.bps-total=2048" "$QEMU_DIR/run/p.log" || { show "$QEMU_DIR/run/p.log"; fail "QEMU was not started with the throttling"; }
"${V[@]}" blkdeviotune p vda > "$OUT/iotune"
grep -qxF "total_bytes_sec: 2048" "$OUT/iotune" || { show "$OUT/iotune"; fail "QEMU does not report the limit it was started with"; }
"${V[@]}" dumpxml p > "$OUT/live.xml"
grep -qF "<vcpupin vcpu='0' cpuset='$first'/>" "$OUT/live.xml" || { show "$OUT/live.xml"; fail "the live XML lacks the vcpupin"; }
"${V[@]}" vcpupin p 1 "$first" --live --config > /dev/null
grep -qF "<vcpupin vcpu='1' cpuset='$first'/>" "$QEMU_DIR/etc/p.xml" || fail "vcpupin --live --config did not write the definition"
[ "$(thread_cpus 'CPU 1/.*')" = "$first" ] || fail "vcpupin --live --config did not pin the thread"
echo "ok   vcpupin, emulatorpin, blkdeviotune --config: the definition on disk (dumpxml), applied at the next start (the kernel's affinity, QEMU's throttling); --live --config both"

# What libvirtd sets through cgroups: the definition only (remvirtd uses no
# cgroups, so live changes get libvirtd's answer on a host without them).
"${V[@]}" memtune p --hard-limit 200000 --soft-limit 100000 --config > /dev/null
"${V[@]}" blkiotune p --weight 500 --config > /dev/null
"${V[@]}" numatune p --mode interleave --nodeset 0 --config > /dev/null
"${V[@]}" schedinfo p --set cpu_shares=512 --config > /dev/null
for want in "<hard_limit unit='KiB'>200000</hard_limit>" "<soft_limit unit='KiB'>100000</soft_limit>" \
            "<weight>500</weight>" "<memory mode='interleave' nodeset='0'/>" "<shares>512</shares>"; do
    xml_has "$want" p --inactive || { show "$OUT/xml"; fail "dumpxml --inactive lacks $want"; }
done
grep -qF "<shares>512</shares>" "$QEMU_DIR/etc/p.xml" || fail "the definition on disk lacks the shares"
"${V[@]}" memtune p --config > "$OUT/memtune"
grep -qE "^hard_limit +: 200000$" "$OUT/memtune" && grep -qE "^swap_hard_limit: unlimited$" "$OUT/memtune" ||
    { show "$OUT/memtune"; fail "memtune --config does not read back"; }
"${V[@]}" schedinfo p --config > "$OUT/sched"
grep -qE "^cpu_shares +: 512$" "$OUT/sched" || { show "$OUT/sched"; fail "schedinfo --config does not read back 512"; }
"${V[@]}" numatune p --config > "$OUT/numa"
grep -qE "^numa_mode +: interleave$" "$OUT/numa" || { show "$OUT/numa"; fail "numatune --config does not read back"; }
refused "memtune --live" "cgroup memory controller is not mounted" memtune p --hard-limit 300000 --live
refused "blkiotune --live" "blkio cgroup isn't mounted" blkiotune p --weight 300 --live
refused "numatune --live" "cgroup cpuset controller is not mounted" numatune p --nodeset 0 --live
refused "schedinfo --live" "cgroup CPU controller is not mounted" schedinfo p --set cpu_shares=100 --live
refused "blkiotune weight out of range" "out of blkio weight range" blkiotune p --weight 5 --config
refused "memtune hard above swap" "must be lower than or equal to swap_hard_limit" \
    memtune p --hard-limit 300000 --swap-hard-limit 250000 --config
refused "schedinfo unknown parameter" "cap" schedinfo p --set cap=5 --config
echo "ok   memtune, blkiotune, numatune, schedinfo --config: the definition (dumpxml, on disk, read back); --live refused as on a host without cgroups; bad values refused"
refused "domtime without the agent" "QEMU guest agent is not configured" domtime p --time 5
"${V[@]}" destroy p > /dev/null

# The guest's clock through its agent (guest-get-time, guest-set-time), as
# libvirtd: domtime reads it, --time and --now set it, --sync asks the
# guest to take it from its RTC.
CHANNEL="<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
qemu_guest_xml ta | sed "s|<devices>|<devices>$CHANNEL|" > "$OUT/ta.xml"
"${V[@]}" define "$OUT/ta.xml" > /dev/null
"${V[@]}" start ta > /dev/null
_agent_up() { "${V[@]}" domtime ta > "$OUT/time" 2>&1; }
wait_for 300 "the guest agent to answer domtime" _agent_up
guest_time() { "${V[@]}" domtime ta | sed -n 's/^Time: *//p'; }
# near: $1 within $3 seconds after $2.
near() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le $(($2 + $3)) ]; }
t=$(guest_time)
near "$t" $(($(date +%s) - 600)) 1200 || fail "the guest's clock ($t) is not the host's ($(date +%s))"
"${V[@]}" domtime ta --time 1000000000 > /dev/null
t=$(guest_time)
near "$t" 1000000000 300 || fail "domtime --time 1000000000: the guest says $t"
"${V[@]}" domtime ta --now > /dev/null
t=$(guest_time)
near "$t" $(($(date +%s) - 600)) 1200 || fail "domtime --now: the guest says $t, the host $(date +%s)"
"${V[@]}" domtime ta --sync > /dev/null
"$SYSTEM_PYTHON3" - > "$OUT/py-time" <<PY
import libvirt
d = libvirt.open("$QEMU_URI").lookupByName("ta")
d.setTime({"seconds": 1500000000, "nseconds": 0})
t = d.getTime()
print(1500000000 <= t["seconds"] <= 1500000300, 0 <= t["nseconds"] < 10**9)
try:
    d.setTime({"seconds": 5, "nseconds": 2000000000})
except libvirt.libvirtError as e:
    print(e.get_error_code() == libvirt.VIR_ERR_INVALID_ARG)
PY
printf 'True True\nTrue\n' > "$OUT/py-time.expected"
same "$OUT/py-time.expected" "$OUT/py-time" "python3-libvirt setTime, getTime"
echo "ok   domtime through the guest agent: read, --time, --now, --sync, python setTime/getTime; no agent or bad nanoseconds refused"
"${V[@]}" destroy ta > /dev/null
