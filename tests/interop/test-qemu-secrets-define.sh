#!/usr/bin/env bash
# Defining on the QEMU driver, against libvirtd's QEMU host side by side:
# secrets (secret-define, secret-set-value --file, secret-get-value,
# secret-undefine, the read-only and private refusals, secret-event),
# network filters (nwfilter-define, nwfilter-undefine) and the node device
# lifecycle calls (nodedev-info's active/persistent/autostart, and the
# refused start, destroy, undefine, create, define); virsh and
# python3-libvirt must print the same from both, byte for byte.  Then
# remvirtd's persistent secrets and filters must survive SIGKILL and a
# restart (files of mode 0600), and its ephemeral secrets must not.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires "$SYSTEM_PYTHON3" -c 'import libvirt'

U1=c1f11a6d-8c5d-4a3e-ac7a-4e171c5e0d4a
U2=c1f11a6d-8c5d-4a3e-ac7a-4e171c5e0d4b
U3=c1f11a6d-8c5d-4a3e-ac7a-4e171c5e0d4c
U4=c1f11a6d-8c5d-4a3e-ac7a-4e171c5e0d4d
dir=$RV_TMP/cwd
mkdir -p "$dir"
cat > "$dir/s1.xml" <<EOF
<secret ephemeral='no' private='no'>
  <uuid>$U1</uuid>
  <description>disk &amp; key's "copy"</description>
  <usage type='volume'><volume>/var/lib/images/a.img</volume></usage>
</secret>
EOF
sed -e "s/$U1/$U2/" "$dir/s1.xml" > "$dir/s1-same-usage.xml"
cat > "$dir/s2.xml" <<EOF
<secret ephemeral='yes' private='yes'>
  <uuid>$U2</uuid>
  <usage type='tls'><name>tls-one</name></usage>
</secret>
EOF
sed -e "s/private='yes'/private='no'/" "$dir/s2.xml" > "$dir/s2-public.xml"
cat > "$dir/s3.xml" <<EOF
<secret ephemeral='no' private='no'>
  <uuid>$U3</uuid>
  <usage type='ceph'><name>client.admin</name></usage>
</secret>
EOF
cat > "$dir/s4.xml" <<EOF
<secret ephemeral='yes' private='no'>
  <uuid>$U4</uuid>
  <usage type='iscsi'><target>iqn.2026-11.example:t</target></usage>
</secret>
EOF
printf '<secret><usage type="volume"/></secret>' > "$dir/bad-usage.xml"
printf '<secret ephemeral="maybe"/>' > "$dir/bad-flag.xml"
printf 'not xml' > "$dir/garbage.xml"
printf 'hunter2\n' > "$dir/value"
cat > "$dir/f1.xml" <<'EOF'
<filter name='f1' chain='ipv4'>
  <uuid>2b9a4b06-a3f1-4621-b984-4151e5e615d2</uuid>
  <rule action='accept' direction='in' statematch='false'><tcp dstportstart='22'/></rule>
  <rule action='drop' direction='inout' priority='900'><all/></rule>
  <filterref filter='f2'><parameter name='IP' value='10.0.0.1'/></filterref>
</filter>
EOF
cat > "$dir/f2.xml" <<'EOF'
<filter name='f2' chain='mac' priority='-300'>
  <uuid>2b9a4b06-a3f1-4621-b984-4151e5e615d3</uuid>
  <rule action='return' direction='out'><mac protocolid='ipv4'/></rule>
</filter>
EOF
sed -e 's/e615d3/e615d4/' "$dir/f2.xml" > "$dir/f2-other-uuid.xml"
sed -e "s/name='f2'/name='f9'/" "$dir/f2.xml" > "$dir/f2-other-name.xml"
printf "<filter name='x' chain='bogus'/>" > "$dir/bad-chain.xml"
# Priority 0 is left out when written, as libvirtd leaves it out.
printf "<filter name='f3' chain='ipv4' priority='0'><uuid>2b9a4b06-a3f1-4621-b984-4151e5e615d5</uuid></filter>" \
    > "$dir/f3.xml"
cat > "$dir/vhba.xml" <<'EOF'
<device>
  <parent>scsi_host1</parent>
  <capability type='scsi_host'>
    <capability type='fc_host'><wwnn>2000000012341111</wwnn><wwpn>1000000012341111</wwpn></capability>
  </capability>
</device>
EOF
cat > "$dir/mdev.xml" <<'EOF'
<device>
  <parent>computer</parent>
  <capability type='mdev'><type id='nvidia-11'/></capability>
</device>
EOF
# Requests libvirt's node device parser refuses, whatever the driver.
printf "<device><capability type='bogus'/></device>" > "$dir/dev-bad-cap.xml"
printf "<device><parent>computer</parent></device>" > "$dir/dev-no-caps.xml"
printf "<device><capability type='system'/></device>" > "$dir/dev-no-uuid.xml"
printf "<device><capability type='scsi_host'><capability type='fc_host'><wwnn>2000000012341111</wwnn></capability></capability></device>" \
    > "$dir/dev-no-wwpn.xml"

steps=(
    "secret-define s1.xml"
    "secret-list"
    "secret-dumpxml $U1"
    "secret-get-value $U1"
    "secret-set-value $U1 --file value --plain"
    "secret-get-value $U1"
    "ro:secret-get-value $U1"
    "ro:secret-set-value $U1 --file value --plain"
    "ro:secret-define s2.xml"
    "ro:secret-undefine $U1"
    "ro:secret-dumpxml $U1"
    "secret-define s1-same-usage.xml"
    "secret-define s1.xml"
    "secret-get-value $U1"
    "secret-define s2.xml"
    "secret-define s2-public.xml"
    "secret-list --ephemeral"
    "secret-list --private"
    "secret-list --no-ephemeral --no-private"
    "secret-set-value $U2 --file value --plain"
    "secret-get-value $U2"
    "secret-dumpxml $U2"
    "secret-define bad-usage.xml"
    "secret-define bad-flag.xml"
    "secret-define garbage.xml"
    "secret-undefine $U2"
    "secret-undefine $U2"
    "secret-get-value $U2"
    "secret-list"
    "nwfilter-define f1.xml"
    "nwfilter-define f2.xml"
    "nwfilter-list"
    "nwfilter-dumpxml f1"
    "nwfilter-dumpxml f2"
    "nwfilter-define f3.xml"
    "nwfilter-dumpxml f3"
    "nwfilter-undefine f3"
    "nwfilter-define f2-other-uuid.xml"
    "nwfilter-define f2-other-name.xml"
    "nwfilter-define bad-chain.xml"
    "nwfilter-define garbage.xml"
    "ro:nwfilter-define f2.xml"
    "ro:nwfilter-undefine f2"
    "nwfilter-undefine f2"
    "nwfilter-undefine f2"
    "nwfilter-list"
    "nwfilter-binding-list"
    "nodedev-info computer"
    "nodedev-info net_lo_00_00_00_00_00_00"
    "nodedev-start computer"
    "nodedev-destroy computer"
    "nodedev-destroy net_lo_00_00_00_00_00_00"
    "nodedev-undefine computer"
    "nodedev-undefine net_lo_00_00_00_00_00_00"
    "nodedev-autostart computer"
    "nodedev-create vhba.xml"
    "nodedev-define vhba.xml"
    "nodedev-create mdev.xml"
    "nodedev-define mdev.xml"
    "nodedev-create garbage.xml"
    "nodedev-create dev-bad-cap.xml"
    "nodedev-define dev-bad-cap.xml"
    "nodedev-create dev-no-caps.xml"
    "nodedev-create dev-no-uuid.xml"
    "nodedev-create dev-no-wwpn.xml"
    "nodedev-define dev-no-wwpn.xml"
    "nodedev-info nosuch"
)

# python3-libvirt's calls: a binary value, the flags, the events.
pycheck()
{
    "$SYSTEM_PYTHON3" - "$1" "$dir/s3.xml" <<'PY'
import sys, libvirt
libvirt.registerErrorHandler(lambda ctx, err: None, None)
libvirt.virEventRegisterDefaultImpl()
c = libvirt.open(sys.argv[1])
xml = open(sys.argv[2]).read()
def show(what, f):
    try:
        print(what, repr(f()))
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
seen = []
c.secretEventRegisterAny(None, libvirt.VIR_SECRET_EVENT_ID_LIFECYCLE,
                         lambda conn, s, ev, detail, opaque: seen.append(('lifecycle', s.UUIDString(), ev)), None)
c.secretEventRegisterAny(None, libvirt.VIR_SECRET_EVENT_ID_VALUE_CHANGED,
                         lambda conn, s, opaque: seen.append(('value', s.UUIDString())), None)
show('define flags 2', lambda: c.secretDefineXML(xml, 2))
s = c.secretDefineXML(xml, 0)
show('usage', lambda: (s.UUIDString(), s.usageType(), s.usageID()))
show('by usage', lambda: c.secretLookupByUsage(libvirt.VIR_SECRET_USAGE_TYPE_CEPH, 'client.admin').UUIDString())
show('no value', s.value)
show('setValue', lambda: s.setValue(b'\x00\xffbinary\n', 0))
show('setValue flags', lambda: s.setValue(b'x', 1))
show('value', s.value)
show('value flags', lambda: s.value(1))
show('XMLDesc flags', lambda: s.XMLDesc(1))
show('setValue empty', lambda: s.setValue(b''))
show('value empty', s.value)
show('undefine', s.undefine)
show('value gone', s.value)
show('num', c.numOfSecrets)
libvirt.virEventAddTimeout(100, lambda timer, opaque: None, None)   # wakes the loop: no hang
for _ in range(20):
    if len(seen) >= 3:
        break
    libvirt.virEventRunDefaultImpl()
print('events', seen)
PY
}

transcript()
{
    virsh_transcript "$1" "$2" "$dir"
    # Secret events while a secret is defined, given a value and undefined.
    local ev=$RV_TMP/events
    virsh -c "$1" secret-event --event lifecycle --loop --timeout 4 > "$ev.1" 2>&1 &
    local p1=$!
    virsh -c "$1" secret-event --event value-changed --loop --timeout 4 > "$ev.2" 2>&1 &
    local p2=$!
    sleep 1
    (cd "$dir" && virsh -c "$1" "secret-define s4.xml; secret-set-value $U4 --file value --plain;
                                secret-undefine $U4") > /dev/null
    wait "$p1" "$p2" || true
    echo "=== secret-event lifecycle"
    cat "$ev.1"
    echo "=== secret-event value-changed"
    cat "$ev.2"
    pycheck "$1"
}

start_libvirtd_qemu
transcript "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" > "$RV_TMP/libvirtd.txt" 2>&1
start_remvirtd_qemu
QEMU_URI_RO="${QEMU_URI%%\?*}?socket=$REMVIRTD_SOCK_RO"
transcript "$QEMU_URI" "$QEMU_URI_RO" > "$RV_TMP/remvirtd.txt" 2>&1

if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh and python3-libvirt see remvirtd's QEMU driver (+++) differently from libvirtd's (---)"
    exit 1
fi
grep -qx "aHVudGVyMgo=" "$RV_TMP/remvirtd.txt" || fail "secret-get-value never printed the value"
grep -q "events \[('lifecycle', '$U3', 0), ('value', '$U3'), ('lifecycle', '$U3', 1)\]" \
    "$RV_TMP/remvirtd.txt" || fail "python3-libvirt did not get the three secret events"
grep -q "for secret $U4: Undefined" "$RV_TMP/remvirtd.txt" || fail "virsh secret-event saw no undefine"
echo "ok   secrets, nwfilters and node device lifecycle: the QEMU driver answers as libvirtd's ($(wc -l < "$RV_TMP/remvirtd.txt") lines)"

# ---- remvirtd killed: the persistent secret (with its value) and filter
# stay, the ephemeral secret goes.
V=(virsh -q -c "$QEMU_URI")
(cd "$dir" && "${V[@]}" secret-define s4.xml > /dev/null)
"${V[@]}" secret-dumpxml "$U1" > "$RV_TMP/s1.before"
"${V[@]}" nwfilter-dumpxml f1 > "$RV_TMP/f1.before"
for f in "$QEMU_DIR/etc/secrets/$U1.xml" "$QEMU_DIR/etc/secrets/$U1.base64" \
    "$QEMU_DIR/etc/nwfilter/f1.xml"; do
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f has mode $(stat -c %a "$f"), not 600"
done
[ ! -e "$QEMU_DIR/etc/secrets/$U4.xml" ] || fail "the ephemeral secret $U4 was written to disk"
kill -KILL "$REMVIRTD_PID"
wait "$REMVIRTD_PID" 2>/dev/null || true
REMVIRTD_PID=
rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_DIR/remvirtd.pid"
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
[ "$("${V[@]}" secret-get-value "$U1")" = "aHVudGVyMgo=" ] ||
    fail "the secret's value did not survive SIGKILL: $("${V[@]}" secret-get-value "$U1" 2>&1)"
"${V[@]}" secret-dumpxml "$U1" | cmp -s - "$RV_TMP/s1.before" ||
    fail "the secret's XML changed across SIGKILL"
"${V[@]}" nwfilter-dumpxml f1 | cmp -s - "$RV_TMP/f1.before" ||
    fail "the filter f1 changed across SIGKILL"
! "${V[@]}" secret-dumpxml "$U4" > /dev/null 2>&1 || fail "the ephemeral secret $U4 survived a restart"
"${V[@]}" secret-undefine "$U1" > /dev/null
"${V[@]}" nwfilter-undefine f1 > /dev/null
[ ! -e "$QEMU_DIR/etc/secrets/$U1.xml" ] && [ ! -e "$QEMU_DIR/etc/secrets/$U1.base64" ] &&
    [ ! -e "$QEMU_DIR/etc/nwfilter/f1.xml" ] || fail "undefine left files behind"
echo "ok   the persistent secret, its value and the filter survive SIGKILL; the ephemeral secret does not"
