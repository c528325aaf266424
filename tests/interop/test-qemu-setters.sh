#!/usr/bin/env bash
# The QEMU driver's newer setters side by side with libvirtd's: each
# python3-libvirt script's transcript (results, errors) against remvirtd
# must be libvirtd's, byte for byte.  The same scripts run against the
# test drivers in test-test-transcripts.sh.  (Networks:
# test-qemu-network-flags.sh, in a namespace with a bridge.)
#   lifecycle-checks.py  DOMAIN_SET_LIFECYCLE_ACTION: refusals, live (a
#                        reset under on_reboot destroy) and config
#   save-params-checks.py DOMAIN_SAVE_PARAMS, DOMAIN_RESTORE_PARAMS
#   perf-checks.py       DOMAIN_SET_PERF_EVENTS: config (<perf>), live refused
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu setters
scripts=(lifecycle-checks.py save-params-checks.py perf-checks.py)

run()
{
    local uri=$1 script
    for script in "${scripts[@]}"; do
        echo "=== $script"
        "$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/$script" "$uri" "$OUT" 2>&1 ||
            echo "exit status $?"     # (the same failure on both is no pass: see below)
    done
}
run "$LIBVIRTD_QEMU_URI" > "$OUT/libvirtd.txt"
run "$QEMU_URI" > "$OUT/remvirtd.txt"
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "the setters' transcripts: remvirtd as libvirtd"
grep -q "^state after the reset: \[5, 1\]$" "$OUT/remvirtd.txt" ||
    fail "a reset under a live on_reboot destroy did not stop the guest"

# remvirtd's own refusal: it makes no core dump on a crash (libvirtd does).
"$SYSTEM_PYTHON3" - "$QEMU_URI" > "$OUT/coredump.txt" <<'PY'
import sys
import libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
conn = libvirt.open(sys.argv[1])
d = conn.defineXML("<domain type='qemu'><name>cd</name><memory unit='MiB'>64</memory>"
                   "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>")
try:
    d.setLifecycleAction(2, 4, 0)
    print("accepted")
except libvirt.libvirtError as e:
    print(e.get_error_code(), e.get_error_message())
print("<on_crash>destroy</on_crash>" in d.XMLDesc(0))
d.undefine()
PY
grep -q "^67 unsupported configuration: unsupported <on_crash> action 'coredump-destroy'" "$OUT/coredump.txt" &&
    grep -qx True "$OUT/coredump.txt" || fail "on_crash coredump-destroy: $(cat "$OUT/coredump.txt")"
echo "ok   on_crash coredump-destroy refused by remvirtd's QEMU driver, the definition unchanged"
! grep -q "^exit status" "$OUT/remvirtd.txt" || fail "a script failed: $(grep -B5 "^exit status" "$OUT/remvirtd.txt")"
grep -q "^state: \[1, 3\]$" "$OUT/remvirtd.txt" || fail "RESTORE_PARAMS did not leave the guest running (restored)"

# A SAVE_PARAMS without "file" is a managed save; the next start restores
# it (remvirtd only: libvirtd 9.0 keeps the domain locked after it).
"$SYSTEM_PYTHON3" "$top_srcdir/tests/interop/save-params-checks.py" "$QEMU_URI" "$OUT" managed > "$OUT/managed.txt"
printf '%s\n' "save, no file (managed): 0" "state: [5, 5]" "managed save image: 1" "start: 0" \
    "state: [1, 3]" "destroy: 0" > "$OUT/managed.expected"
same "$OUT/managed.expected" "$OUT/managed.txt" "SAVE_PARAMS without a file: a managed save, restored by the next start"
