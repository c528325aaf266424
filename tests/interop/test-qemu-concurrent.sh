#!/usr/bin/env bash
# Ten guests started at once by ten virsh processes, while another client
# keeps reading (its calls are answered while the starts wait on QEMU),
# then destroyed at once; and on one domain, state changes queued behind
# each other from one connection run in order (python3-libvirt, threads).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"

names=()
for i in $(seq 1 10); do
    names+=("c$i")
    qemu_domain_xml "c$i" > "$OUT/c$i.xml"
    "${V[@]}" define "$OUT/c$i.xml" > /dev/null
done

pids=()
for n in "${names[@]}"; do
    "${V[@]}" start "$n" > "$OUT/start-$n" 2>&1 &
    pids+=($!)
done
# Reads meanwhile: answered, whatever the starts are doing.
for _ in 1 2 3 4 5; do
    "${V[@]}" list --all > /dev/null || fail "list failed while guests start"
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "$OUT/start-${names[$i]}" >&2; fail "start ${names[$i]} failed"; }
done
[ "$("${V[@]}" list | grep -c running)" -eq 10 ] || fail "not 10 guests running"
[ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" -eq 10 ] || fail "not exactly 10 QEMUs"
ids=$(for n in "${names[@]}"; do "${V[@]}" domid "$n"; done | sort -u | wc -l)
[ "$ids" -eq 10 ] || fail "the 10 guests do not have 10 different ids"
echo "ok   10 concurrent starts: 10 guests running, 10 QEMUs, 10 ids"

pids=()
for n in "${names[@]}"; do
    "${V[@]}" destroy "$n" > "$OUT/destroy-$n" 2>&1 &
    pids+=($!)
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "$OUT/destroy-${names[$i]}" >&2; fail "destroy ${names[$i]} failed"; }
done
[ -z "$(qemu_pids "$QEMU_DIR/run/")" ] || fail "QEMUs left after 10 concurrent destroys"
echo "ok   10 concurrent destroys: no QEMU left"

# One domain, one connection, many threads: the changes queue on the
# domain and each succeeds (a suspend of a paused guest is no error, as
# with libvirtd; a resume of a running one is refused, as libvirtd
# refuses it: VIR_ERR_OPERATION_INVALID); a change after destroy is refused.
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    "$SYSTEM_PYTHON3" - "$QEMU_URI" <<'PY'
import sys, threading, libvirt
conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("c1")
dom.create()
results = {}
def run(name, fn):
    try:
        fn()
        results[name] = "ok"
    except libvirt.libvirtError as e:
        results[name] = e.get_error_code()
# Started together; each waits for the one before on the domain's queue.
threads = [threading.Thread(target=run, args=(f"{op}{i}", getattr(dom, op)))
           for i in range(3) for op in ("suspend", "resume")]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert all(r == "ok" or (n.startswith("resume") and r == libvirt.VIR_ERR_OPERATION_INVALID)
           for n, r in results.items()), results
assert dom.state()[0] in (libvirt.VIR_DOMAIN_RUNNING, libvirt.VIR_DOMAIN_PAUSED)
dom.destroy()
try:
    dom.suspend()
    raise SystemExit("FAIL: suspend after destroy succeeded")
except libvirt.libvirtError as e:
    assert e.get_error_code() == libvirt.VIR_ERR_OPERATION_INVALID, e
print("ok   6 state changes from 6 threads on one domain; a suspend after destroy is refused")
PY
fi
