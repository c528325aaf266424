#!/usr/bin/env bash
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../migrate-hosts.sh"
migrate_hosts_up
if why=$(libvirtd_qemu_why_not); then echo "skip: $why" >&2; exit 77; fi
start_libvirtd_pair 'log_filters = "1:qemu.qemu_migration_cookie"' "log_outputs = \"1:file:$RV_TMP/libvirtd-b/libvirtd.log\""
shared_guest_xml lg
bg "$OUT/levents-b" stdbuf -oL virsh -c "$LB" event --all --loop --timestamp
EV=$BG_PID
agent_guest_up "$LA" lg "$OUT/lg.xml"
bg "$OUT/lmig" virsh -q -c "$LA" migrate --live --unsafe --bandwidth 30 lg "$LB" --migrateuri tcp://10.231.0.2
MIG=$BG_PID
sleep 3
echo "=== LB domjobinfo during" >&2
virsh -c "$LB" domjobinfo lg >&2 2>&1 || true
virsh -c "$LB" domjobinfo lg --keep-completed >&2 2>&1 || true
echo "=== LB domjobabort during (first)" >&2
virsh -c "$LB" domjobabort lg >&2 2>&1 || true
virsh -c "$LB" domstate --reason lg >&2 2>&1 || true
echo "=== LB domjobinfo --completed during" >&2
virsh -c "$LB" domjobinfo --completed lg >&2 2>&1 || true
echo "=== LB domjobabort during" >&2
virsh -c "$LB" domjobabort lg >&2 2>&1 || true
echo "=== LB domjobstats during (raw)" >&2
/usr/bin/python3 - "$LB" >&2 <<'PY' || true
import sys, libvirt
c = libvirt.open(sys.argv[1]); d = c.lookupByName("lg")
print(d.jobInfo()); print(d.jobStats())
try: print(d.abortJob())
except Exception as e: print("abort:", e)
PY
echo "=== LA domjobinfo during" >&2
virsh -c "$LA" domjobinfo lg >&2 2>&1 || true
wait $MIG || { cat "$OUT/lmig.err" >&2; }
echo "=== after, LB domjobinfo" >&2
virsh -c "$LB" domjobinfo lg >&2 2>&1 || true
echo "=== after, LB domjobinfo --completed" >&2
virsh -c "$LB" domjobinfo --completed lg >&2 2>&1 || true
/usr/bin/python3 - "$LB" >&2 <<'PY' || true
import sys, libvirt
c = libvirt.open(sys.argv[1]); d = c.lookupByName("lg")
print(d.jobStats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED))
PY
sleep 1
kill $EV; sleep 0.5
echo "=== LB events" >&2
cat "$OUT/levents-b" "$OUT/levents-b.err" >&2
grep -h "statistics" -B2 -A40 "$RV_TMP/libvirtd-b/libvirtd.log" | head -80 >&2
exit 1
