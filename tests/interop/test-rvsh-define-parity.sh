#!/usr/bin/env bash
# rvsh's commands that define and remove secrets, network filters and
# node devices print what virsh 9.0 prints: the same steps run through
# virsh and through rvsh, each against a daemon of its own started
# afresh (so both see the same objects), and the transcripts (stdout,
# stderr, exit status of every step) must be equal byte for byte.
# Secrets and filters against remvirtd's QEMU driver (secret-define,
# secret-set-value with --base64 (text that is not quite base64
# included: virsh skips what is not), --file, --plain, secret-get-value,
# secret-undefine, nwfilter-define, nwfilter-undefine, and their errors);
# node devices against remvirtd's test driver and libvirtd's (a vHBA
# made by nodedev-create, nodedev-info, nodedev-destroy, errors).
# libvirtd's test driver forgets a vHBA when the connection that made it
# closes: there each step stands alone, which both tools see alike.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
[ -x "$RVSH" ] || fail "$RVSH is not built"

U1=5e1f0c2a-7b3d-4c8e-9a6f-0d2b4c6e8a01
U2=5e1f0c2a-7b3d-4c8e-9a6f-0d2b4c6e8a02
F1=7d3c1b2a-4e5f-4a6b-8c7d-9e0f1a2b3c4d
dir=$RV_TMP/cwd
mkdir -p "$dir"
cat > "$dir/s1.xml" <<EOF
<secret ephemeral='no' private='no'>
  <uuid>$U1</uuid>
  <usage type='volume'><volume>/var/lib/images/define.img</volume></usage>
</secret>
EOF
cat > "$dir/s2.xml" <<EOF
<secret ephemeral='yes' private='yes'>
  <uuid>$U2</uuid>
  <usage type='tls'><name>define-tls</name></usage>
</secret>
EOF
printf 'not xml' > "$dir/garbage.xml"
printf 'hunter2\n' > "$dir/value"
printf 'aHVudGVyMgo=\n' > "$dir/value.b64"
: > "$dir/empty"
head -c 2000 /dev/zero | tr '\0' x > "$dir/big"
printf 'a\0b\377' > "$dir/binary"
cat > "$dir/f1.xml" <<EOF
<filter name='define-f1' chain='ipv4'>
  <uuid>$F1</uuid>
  <rule action='accept' direction='in'><tcp dstportstart='22'/></rule>
</filter>
EOF
printf "<filter name='x' chain='bogus'/>" > "$dir/bad-chain.xml"
cat > "$dir/vhba.xml" <<'EOF'
<device>
  <parent>scsi_host1</parent>
  <capability type='scsi_host'>
    <capability type='fc_host'><wwnn>2000000012341111</wwnn><wwpn>1000000012341111</wwpn></capability>
  </capability>
</device>
EOF
sed -e 's/scsi_host1/nosuch/' "$dir/vhba.xml" > "$dir/vhba-no-parent.xml"

# transcript TOOL URI URI_RO: each of $steps (words, "ro:" for the
# read-only socket) through TOOL, in $dir.
transcript()
{
    local tool=$1 uri=$2 uri_ro=$3 step u rc
    local -a words
    for step in "${steps[@]}"; do
        u=$uri
        case $step in ro:*) u=$uri_ro; step=${step#ro:} ;; esac
        read -ra words <<< "$step"
        rc=0
        if [ "$tool" = virsh ]; then
            (cd "$dir" && virsh -c "$u" "${words[@]}") > "$RV_TMP/out" 2> "$RV_TMP/err" || rc=$?
        else
            (cd "$dir" && "$RVSH" -c "$u" "${words[@]}") > "$RV_TMP/out" 2> "$RV_TMP/err" || rc=$?
        fi
        printf '=== %s\n' "$step"
        # secret-get-value --plain writes the bytes as they are: shown
        # as characters, a missing newline included.
        case $step in
            *get-value*--plain*) od -An -c < "$RV_TMP/out" ;;
            *) cat "$RV_TMP/out" ;;
        esac
        echo "--- stderr"
        cat "$RV_TMP/err"
        echo "--- exit status $rc"
    done
}

# compare WHAT START-FN STOP-FN URI-VAR URI-RO-VAR: virsh's and rvsh's
# transcripts, each against a daemon started afresh.
compare()
{
    local what=$1 start=$2 stop=$3 tool
    for tool in virsh rvsh; do
        "$start"
        transcript "$tool" "${!4}" "${!5}" > "$RV_TMP/$what.$tool.txt" 2>&1
        "$stop"
    done
    if ! diff -u "$RV_TMP/$what.virsh.txt" "$RV_TMP/$what.rvsh.txt"; then
        fail "$what: rvsh (+++) prints otherwise than virsh (---)"
    fi
    echo "ok   $what: ${#steps[@]} steps, rvsh as virsh ($(wc -l < "$RV_TMP/$what.rvsh.txt") lines)"
}

# ---- node devices on the test drivers.
steps=(
    "nodedev-create vhba.xml"
    "nodedev-info scsi_host12"
    "nodedev-info scsi_host11"
    "nodedev-info computer"
    "nodedev-info nosuch"
    "nodedev-destroy scsi_host12"
    "nodedev-destroy scsi_host12"
    "nodedev-destroy computer"
    "nodedev-destroy nosuch"
    "nodedev-create vhba.xml --validate"
    "nodedev-destroy scsi_host12"
    "nodedev-create vhba-no-parent.xml"
    "nodedev-create garbage.xml"
    "nodedev-create nosuch.xml"
    "nodedev-create"
    "ro:nodedev-create vhba.xml"
    "ro:nodedev-destroy scsi_host11"
    "ro:nodedev-info scsi_host11"
)
# --json is rvsh's own (virsh refuses it): checked below.
start_test_remvirtd() { start_remvirtd; TEST_URI=$REMVIRTD_URI; TEST_URI_RO=$REMVIRTD_URI_RO; }
compare "remvirtd's test driver" start_test_remvirtd stop_remvirtd TEST_URI TEST_URI_RO
grep -qx "Destroyed node device 'scsi_host12'" "$RV_TMP/remvirtd's test driver.rvsh.txt" ||
    fail "rvsh never destroyed the vHBA it made"
start_remvirtd
"$RVSH" -c "$REMVIRTD_URI" nodedev-create "$dir/vhba.xml" > "$RV_TMP/created"
grep -qx "Node device scsi_host12 created from $dir/vhba.xml" "$RV_TMP/created" ||
    fail "rvsh nodedev-create said: $(cat "$RV_TMP/created")"
"$RVSH" -c "$REMVIRTD_URI" nodedev-info scsi_host12 --json > "$RV_TMP/info.json"
virsh -c "$REMVIRTD_URI" nodedev-info scsi_host12 > "$RV_TMP/info.txt"
"$PYTHON3" - "$RV_TMP/info.json" "$RV_TMP/info.txt" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
rows = dict(l.split(":", 1) for l in open(sys.argv[2]).read().splitlines() if l)
rows = {k.lower(): v.strip() for k, v in rows.items()}
want = {"name": rows["name"], "parent": rows["parent"] or None,
        "active": rows["active"] == "yes", "persistent": rows["persistent"] == "yes"}
if rows["autostart"] != "no autostart":
    want["autostart"] = rows["autostart"] == "yes"
if got != want or want["name"] != "scsi_host12" or want["parent"] != "scsi_host1":
    sys.exit(f"FAIL: nodedev-info --json gave {got}, virsh's text says {want}")
print(f"ok   nodedev-info --json of the vHBA rvsh made: {got}")
PY
"$RVSH" -c "$REMVIRTD_URI" nodedev-destroy scsi_host12 > /dev/null
! virsh -c "$REMVIRTD_URI" nodedev-dumpxml scsi_host12 > /dev/null 2>&1 ||
    fail "the vHBA is still there after rvsh nodedev-destroy"
stop_remvirtd

if [ "$(id -u)" -eq 0 ] && command -v libvirtd > /dev/null; then
    start_test_libvirtd() { start_libvirtd; TEST_URI=$LIBVIRTD_URI; TEST_URI_RO=$LIBVIRTD_URI_RO; }
    compare "libvirtd's test driver" start_test_libvirtd stop_libvirtd TEST_URI TEST_URI_RO
else
    echo "---- libvirtd's test driver: not here (needs root and libvirtd)"
fi

# ---- secrets and network filters on the QEMU driver.
steps=(
    "secret-define s1.xml"
    "secret-define s1.xml --validate"
    "secret-get-value $U1"
    "secret-set-value $U1 --base64 aHVudGVyMgo="
    "secret-get-value $U1"
    "secret-get-value $U1 --plain"
    "secret-set-value $U1 --file binary --plain"
    "secret-get-value $U1"
    "secret-get-value $U1 --plain"
    "secret-set-value $U1 --file value.b64"
    "secret-get-value $U1 --plain"
    "secret-set-value $U1 aGk="
    "secret-get-value $U1"
    "secret-set-value $U1 --base64 not!base64?"
    "secret-get-value $U1"
    "secret-set-value $U1 --base64 aGk=x"
    "secret-get-value $U1"
    "secret-set-value $U1 --base64 aGk"
    "secret-set-value $U1 --base64 aGk --file value"
    "secret-get-value $U1 --plain"
    "secret-set-value $U1 --file value --plain"
    "secret-get-value $U1"
    "secret-set-value $U1 --file empty --plain"
    "secret-get-value $U1"
    "secret-set-value $U1 --file nosuch"
    "secret-set-value $U1 --file big --plain"
    "secret-set-value $U1"
    "secret-set-value $U1 --file value --base64 eA=="
    "secret-set-value $U1 --interactive --file value"
    "secret-set-value nosuch --file value"
    "secret-set-value 11111111-2222-3333-4444-555555555555 --file value"
    "secret-get-value nosuch"
    "ro:secret-set-value $U1 --file value --plain"
    "ro:secret-get-value $U1"
    "ro:secret-define s1.xml"
    "ro:secret-undefine $U1"
    "secret-define s2.xml"
    "secret-set-value $U2 --file value --plain"
    "secret-get-value $U2"
    "secret-define garbage.xml"
    "secret-define nosuch.xml"
    "secret-list"
    "secret-undefine $U2"
    "secret-undefine $U2"
    "secret-undefine $U1"
    "secret-undefine nosuch"
    "secret-list"
    "nwfilter-define f1.xml"
    "nwfilter-define f1.xml --validate"
    "nwfilter-define bad-chain.xml"
    "nwfilter-define garbage.xml"
    "nwfilter-define nosuch.xml"
    "ro:nwfilter-define f1.xml"
    "ro:nwfilter-undefine define-f1"
    "nwfilter-list"
    "nwfilter-undefine $F1"
    "nwfilter-define f1.xml"
    "nwfilter-undefine define-f1"
    "nwfilter-undefine define-f1"
    "nwfilter-list"
)
start_qemu_remvirtd()
{
    start_remvirtd_qemu
    QEMU_URI_RO="${QEMU_URI%%\?*}?socket=$REMVIRTD_SOCK_RO"
}
compare "remvirtd's QEMU driver" start_qemu_remvirtd stop_remvirtd QEMU_URI QEMU_URI_RO
t="$RV_TMP/remvirtd's QEMU driver.rvsh.txt"
for line in "Secret $U1 created" "Secret value set" "aHVudGVyMgo=" "YQBi/w==" \
            "Secret $U1 deleted" "Network filter define-f1 defined from f1.xml" \
            "Network filter define-f1 undefined"; do
    grep -qxF "$line" "$t" || fail "rvsh never printed '$line'"
done

# The define commands print as virsh even with --json; a value rvsh set
# is read back by virsh, and by rvsh with --json.
start_qemu_remvirtd
(cd "$dir" && "$RVSH" -c "$QEMU_URI" --json secret-define s1.xml) > "$RV_TMP/s.txt"
grep -qx "Secret $U1 created" "$RV_TMP/s.txt" || fail "secret-define --json said: $(cat "$RV_TMP/s.txt")"
(cd "$dir" && "$RVSH" -c "$QEMU_URI" secret-set-value "$U1" --file binary --plain) > /dev/null
"$RVSH" -c "$QEMU_URI" --json secret-get-value "$U1" > "$RV_TMP/v.json"
virsh -c "$QEMU_URI" secret-get-value "$U1" --plain > "$RV_TMP/v.bin"
# (virsh ends a command's output with a newline of its own)
cmp "$RV_TMP/v.bin" <(cat "$dir/binary"; echo) || fail "virsh reads back other bytes than rvsh set"
"$PYTHON3" - "$RV_TMP" <<'PY'
import base64, json, os, sys
tmp = sys.argv[1]
want = {"value": base64.b64encode(b"a\0b\377").decode()}
got = json.load(open(os.path.join(tmp, "v.json")))
if got != want:
    sys.exit(f"FAIL: secret-get-value --json gave {got}, not {want}")
print("ok   secret-get-value --json: the bytes rvsh set with --plain, in base64")
PY
stop_remvirtd
