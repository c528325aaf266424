#!/usr/bin/env bash
# Domain statistics of QEMU domains (CONNECT_GET_ALL_DOMAIN_STATS) through
# `virsh domstats` and python3-libvirt: state, cpu-total (from the QEMU
# process), balloon (memory from the definition), vcpu (counts, and each
# vCPU thread's time); an inactive domain has state, balloon and the vcpu
# counts only.  The guest idles in its firmware (no disk).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
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
cpu=$(value "$OUT/run.stats" cpu.time)
user=$(value "$OUT/run.stats" cpu.user)
sys=$(value "$OUT/run.stats" cpu.system)
[ "$cpu" -gt 0 ] && [ "$cpu" -eq $((user + sys)) ] || fail "cpu.time $cpu is not cpu.user $user + cpu.system $sys"
[ "$(value "$OUT/run.stats" vcpu.0.time)" -le "$cpu" ] || fail "vCPU 0 used more than the whole process"
echo "ok   a running domain: state, cpu-total, balloon, vcpu with each thread's time"

"${V[@]}" domstats off > "$OUT/off.stats"
cat > "$OUT/off.expected" <<'EOT'
Domain: 'off'
  state.state=5
  state.reason=0
  balloon.current=65536
  balloon.maximum=65536
  vcpu.current=1
  vcpu.maximum=1
EOT
grep -v '^$' "$OUT/off.stats" > "$OUT/off.got" || true
same "$OUT/off.expected" "$OUT/off.got" "virsh domstats of an inactive domain"

"${V[@]}" domstats --list-active --state > "$OUT/active"
grep -v '^$' "$OUT/active" > "$OUT/active.got" || true
printf "Domain: 'run'\n  state.state=1\n  state.reason=1\n" > "$OUT/active.expected"
same "$OUT/active.expected" "$OUT/active.got" "virsh domstats --list-active --state"

"${V[@]}" domstats --enforce --block run > "$OUT/enforce" 2>&1 && fail "--enforce --block succeeded"
grep -q "Stats types bits 0x20 are not supported" "$OUT/enforce" || { show "$OUT/enforce"; fail "--enforce --block: not the expected error"; }
echo "ok   --enforce with block statistics: refused, naming the bits"

"$SYSTEM_PYTHON3" - > "$OUT/py" <<PY
import libvirt
c = libvirt.open("$QEMU_URI")
d = c.lookupByName("run")
((dom, stats),) = c.domainListGetStats([d], libvirt.VIR_DOMAIN_STATS_VCPU)
print(dom.name(), stats["vcpu.current"], sorted(k for k in stats if k.endswith(".state")))
PY
echo "run 2 ['vcpu.0.state', 'vcpu.1.state']" > "$OUT/py.expected"
same "$OUT/py.expected" "$OUT/py" "python3-libvirt domainListGetStats"
"${V[@]}" destroy run > /dev/null
