#!/usr/bin/env bash
# rvsh (libremvirt) against a real libvirtd with the test driver: one-shot
# list and dominfo, then a define/start/destroy/undefine round in ONE
# interactive session fed on stdin, because libvirtd's test driver
# forgets its state when the connection closes.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

[ -x "$RVSH" ] || fail "$RVSH is not built"
start_libvirtd

# expect_lines FILE REGEX...: each REGEX matches a line of FILE, in order.
expect_lines()
{
    local file=$1 re n=0 found
    shift
    for re in "$@"; do
        found=$(tail -n +$((n + 1)) "$file" | grep -n -m1 -E -- "$re" | cut -d: -f1 || true)
        if [ -z "$found" ]; then
            cat "$file"
            fail "no line matching '$re' after line $n of $file"
        fi
        n=$((n + found))
    done
}

"$RVSH" -c "$LIBVIRTD_URI" list --all > "$RV_TMP/list.out"
cat "$RV_TMP/list.out"
expect_lines "$RV_TMP/list.out" '^ *Id +Name +State' '^ *1 +test +running *$'

"$RVSH" -c "$LIBVIRTD_URI" dominfo test > "$RV_TMP/dominfo.out"
cat "$RV_TMP/dominfo.out"
expect_lines "$RV_TMP/dominfo.out" \
    '^Id: +1$' '^Name: +test$' '^UUID: +6695eb01-f6a4-8304-79aa-97f2502e193f$' \
    '^OS Type: +linux$' '^State: +running$' '^CPU\(s\): +2$' \
    '^Max memory: +8388608 KiB$' '^Used memory: +2097152 KiB$'

# --json, both placements rvsh accepts.
"$RVSH" -c "$LIBVIRTD_URI" --json list --all > "$RV_TMP/list.json"
"$RVSH" -c "$LIBVIRTD_URI" dominfo test --json > "$RV_TMP/dominfo.json"
"$PYTHON3" - "$RV_TMP/list.json" "$RV_TMP/dominfo.json" <<'PY'
import json, sys
domains = json.load(open(sys.argv[1]))
want = [{"id": 1, "name": "test", "uuid": "6695eb01-f6a4-8304-79aa-97f2502e193f",
         "state": "running"}]
if domains != want:
    sys.exit(f"FAIL: list --json gave {domains}, expected {want}")
info = json.load(open(sys.argv[2]))
want = {"id": 1, "name": "test", "os_type": "linux", "state": "running", "cpus": 2,
        "max_memory_kib": 8388608, "used_memory_kib": 2097152, "persistent": True}
got = {k: info.get(k) for k in want}
if got != want:
    sys.exit(f"FAIL: dominfo --json gave {got}, expected {want}")
print("ok   --json list and dominfo")
PY

# Failed commands: exit status 1 and virsh's error lines on stderr; where
# the server explains, its message comes through.
rc=0
"$RVSH" -c "$LIBVIRTD_URI" dominfo nosuch > "$RV_TMP/nosuch.out" 2> "$RV_TMP/nosuch.err" || rc=$?
cat "$RV_TMP/nosuch.err"
[ "$rc" -eq 1 ] || fail "rvsh dominfo nosuch exited $rc, not 1"
grep -qx "error: failed to get domain 'nosuch'" "$RV_TMP/nosuch.err" ||
    fail "no \"failed to get domain\" line on stderr"

cat > "$RV_TMP/rvshtest.xml" <<XML
<domain type='test'>
  <name>rvshtest</name>
  <uuid>5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7c01</uuid>
  <memory unit='KiB'>262144</memory>
  <vcpu>1</vcpu>
  <os><type>hvm</type></os>
</domain>
XML
# The running domain's name with another UUID: a name clash.
sed -e 's|<name>rvshtest</name>|<name>test</name>|' -e 's/7c01/7c02/' \
    "$RV_TMP/rvshtest.xml" > "$RV_TMP/clash.xml"
rc=0
"$RVSH" -c "$LIBVIRTD_URI" define "$RV_TMP/clash.xml" > "$RV_TMP/clash.out" 2> "$RV_TMP/clash.err" || rc=$?
cat "$RV_TMP/clash.err"
[ "$rc" -eq 1 ] || fail "rvsh define of a clashing name exited $rc, not 1"
grep -q "domain 'test' already exists with uuid 6695eb01-f6a4-8304-79aa-97f2502e193f" \
    "$RV_TMP/clash.err" || fail "libvirtd's error message did not reach stderr"

"$RVSH" -c "$LIBVIRTD_URI" > "$RV_TMP/session.out" 2>&1 <<COMMANDS
define $RV_TMP/rvshtest.xml
domstate rvshtest
start rvshtest
domstate rvshtest
list --all
destroy rvshtest
domstate rvshtest
undefine rvshtest
list --all
COMMANDS
cat "$RV_TMP/session.out"
expect_lines "$RV_TMP/session.out" \
    'rvshtest' '^shut off' \
    'rvshtest' '^running' '^ *1 +test +running' '^ *[0-9]+ +rvshtest +running' \
    'rvshtest' '^shut off' \
    'rvshtest' '^ *1 +test +running'
# The last listing no longer has the domain.
last_list=$(awk '/^ *Id +Name/ { list = "" } { list = list $0 "\n" } END { printf "%s", list }' \
    "$RV_TMP/session.out")
if grep -q rvshtest <<< "$last_list"; then
    fail "rvshtest still listed after undefine"
fi
echo "rvsh against libvirtd: list, dominfo, define/start/destroy/undefine all worked"
