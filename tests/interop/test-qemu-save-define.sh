#!/usr/bin/env bash
# save-image-define and managedsave-define (DOMAIN_SAVE_IMAGE_DEFINE_XML,
# DOMAIN_MANAGED_SAVE_DEFINE_XML) side by side with libvirtd's QEMU
# driver, through virsh and python3-libvirt: a definition for another
# domain (name, UUID) or another ABI (memory, vCPUs) is refused with
# libvirtd's errors; a change (on_poweroff) is kept, save-image-dumpxml
# gives it back, a longer one then a shorter one too (remvirtd's record
# after QEMU's stream, then before the one in use), and the restore runs
# it; --running and --paused set the state the restore leaves; unknown
# flags; managedsave-define then start.  The crash points of the define
# are in test-qemu-crash-points.sh.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu savedef
UUID=6b1e1c1e-5a5e-4d1e-9e1e-5a5ed3f1e0a1

# transcript URI TAG: every step's outcome, paths and the daemon left out.
transcript()
{
    local uri=$1 img=$OUT/$2.img V=(virsh -q -c "$1")
    qemu_domain_xml sd | sed "s|</name>|</name><uuid>$UUID</uuid>|" > "$OUT/sd.xml"
    "${V[@]}" define "$OUT/sd.xml" > /dev/null
    "${V[@]}" start sd > /dev/null
    "${V[@]}" save sd "$img" > /dev/null
    "${V[@]}" save-image-dumpxml "$img" > "$OUT/$2.xml"
    local base=$OUT/$2.xml
    step() { local what=$1; shift; echo "== $what"; "$@" 2>&1 | sed "/^$/d; s|$OUT/[a-z]*\.img|IMG|g" || true; }
    sed "s|<name>sd</name>|<name>other</name>|" "$base" > "$OUT/x1.xml"
    step "another name" "${V[@]}" save-image-define "$img" "$OUT/x1.xml"
    sed "s|<uuid>$UUID</uuid>|<uuid>11111111-2222-3333-4444-555555555555</uuid>|" "$base" > "$OUT/x2.xml"
    step "another uuid" "${V[@]}" save-image-define "$img" "$OUT/x2.xml"
    sed "s|65536|131072|g" "$base" > "$OUT/x3.xml"
    step "another memory" "${V[@]}" save-image-define "$img" "$OUT/x3.xml"
    sed "s|>1</vcpu>|>2</vcpu>|" "$base" > "$OUT/x4.xml"
    step "another vcpu count" "${V[@]}" save-image-define "$img" "$OUT/x4.xml"
    step "not XML" "${V[@]}" save-image-define "$img" /etc/hostname
    step "no image" "${V[@]}" save-image-define "$OUT/none.img" "$base"
    sed "s|<on_poweroff>destroy</on_poweroff>|<on_poweroff>restart</on_poweroff>|" "$base" > "$OUT/x5.xml"
    step "on_poweroff" "${V[@]}" save-image-define "$img" "$OUT/x5.xml"
    step "dumpxml" eval "${V[*]} save-image-dumpxml $img | grep -E 'on_poweroff|description'"
    sed "s|</name>|</name><description>$(head -c 9000 /dev/zero | tr '\0' x)</description>|" "$OUT/x5.xml" > "$OUT/x6.xml"
    step "longer" "${V[@]}" save-image-define "$img" "$OUT/x6.xml" --paused
    step "dumpxml" eval "${V[*]} save-image-dumpxml $img | grep -E 'on_poweroff|description' | cut -c1-40"
    sed "s|<on_crash>destroy</on_crash>|<on_crash>restart</on_crash>|" "$OUT/x5.xml" > "$OUT/x7.xml"
    step "shorter" "${V[@]}" save-image-define "$img" "$OUT/x7.xml" --paused
    step "dumpxml" eval "${V[*]} save-image-dumpxml $img | grep -E 'on_poweroff|on_crash|description'"
    step "restore" "${V[@]}" restore "$img"
    step "state" "${V[@]}" domstate sd
    step "live" eval "${V[*]} dumpxml sd | grep -E 'on_poweroff|on_crash'"
    "${V[@]}" managedsave sd > /dev/null
    step "managedsave-define another name" "${V[@]}" managedsave-define sd "$OUT/x1.xml"
    step "managedsave-define another memory" "${V[@]}" managedsave-define sd "$OUT/x3.xml"
    step "managedsave-define" "${V[@]}" managedsave-define sd "$OUT/x5.xml" --running
    step "managedsave-dumpxml" eval "${V[*]} managedsave-dumpxml sd | grep -E 'on_poweroff|on_crash'"
    step "start" "${V[@]}" start sd
    step "state" "${V[@]}" domstate sd
    step "live" eval "${V[*]} dumpxml sd | grep -E 'on_poweroff|on_crash'"
    step "inactive" eval "${V[*]} dumpxml --inactive sd | grep -E 'on_poweroff|on_crash'"
    "${V[@]}" destroy sd > /dev/null
    step "managedsave-define without an image" "${V[@]}" managedsave-define sd "$OUT/x5.xml"
    step "python" "$SYSTEM_PYTHON3" -c "
import libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
c = libvirt.open('$uri')
xml = open('$OUT/x5.xml').read()
for what, call in (('unknown flag', lambda: c.saveImageDefineXML('$img', xml, 0x40)),
                   ('running', lambda: c.saveImageDefineXML('$img', xml, libvirt.VIR_DOMAIN_SAVE_RUNNING)),
                   ('both', lambda: c.saveImageDefineXML('$img', xml, libvirt.VIR_DOMAIN_SAVE_RUNNING | libvirt.VIR_DOMAIN_SAVE_PAUSED)),
                   ('managed, none', lambda: c.lookupByName('sd').managedSaveDefineXML(xml, 0))):
    try:
        print(what, call())
    except libvirt.libvirtError as e:
        print(what, e.get_error_code(), e.get_error_domain() in (10, 0), e)
"
    step "restore running" "${V[@]}" restore "$img"
    step "state" "${V[@]}" domstate sd
    "${V[@]}" destroy sd > /dev/null
    "${V[@]}" undefine sd > /dev/null
}
transcript "$LIBVIRTD_QEMU_URI" lv > "$OUT/libvirtd"
transcript "$QEMU_URI" rv > "$OUT/remvirtd"
same "$OUT/libvirtd" "$OUT/remvirtd" "save-image-define and managedsave-define as libvirtd's"
