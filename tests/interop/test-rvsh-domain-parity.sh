#!/usr/bin/env bash
# rvsh's domain and host commands (cmd_domstats.c, cmd_dommanage.c,
# cmd_node.c) print what virsh 9.0 prints: each step runs in virsh and in
# rvsh against the same daemon and the two transcripts (stdout, stderr,
# exit status) must be equal, byte for byte.
#   1. remvirtd's test driver: every reader, the error cases (no such
#      domain, a shut-off domain, no such device, bad options), and the
#      management commands, each tool's on a new daemon.
#   2. libvirtd's test driver: the same readers, and the management
#      commands it does serve (reset, save, restore, managed save, setmem,
#      setvcpus, autostart): each step is one connection and libvirtd's
#      test driver starts afresh with each, so both tools see the same.
#   3. --json: parsed with python3 and checked against the same facts.
#   4. remvirtd's QEMU driver, a running guest: the readers it answers,
#      then setmem, managedsave/start, save/restore, reset, autostart and
#      undefine's options done by rvsh and by virsh in turn, the words
#      compared and the effect checked; setvcpu, iothreadadd, iothreaddel,
#      iothreadpin, iothreadset, domdirtyrate-calc and domxml-to-native on
#      a second guest, shut off and running, with their error cases.
# Numbers libvirt's test driver makes from the clock (interface counters,
# vCPU times), the nodecpustats counters and a running QEMU's resident
# set (balloon.rss) become N before comparing.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root
requires "$SYSTEM_PYTHON3" --version

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
# A second domain, shut off: a disk and two interfaces, one named.
cat > "$xmldir/d2.xml" <<XML
<domain type='test'>
  <name>d2</name>
  <uuid>6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4c12</uuid>
  <memory>1048576</memory>
  <vcpu current='1'>3</vcpu>
  <os><type>hvm</type></os>
  <devices>
    <disk type='file' device='disk'>
      <source file='/tmp/rv-d2.img'/>
      <target dev='sdb' bus='scsi'/>
    </disk>
    <disk type='file' device='cdrom'>
      <target dev='hdc' bus='ide'/>
    </disk>
    <disk type='network' device='disk'>
      <source protocol='nbd' name='export'><host name='nbd.example'/></source>
      <target dev='vdc' bus='virtio'/>
    </disk>
    <interface type='network'>
      <mac address='52:54:00:11:22:33'/>
      <source network='default'/>
      <model type='virtio'/>
      <target dev='foo0'/>
    </interface>
    <interface type='user'>
      <mac address='52:54:00:11:22:34'/>
    </interface>
  </devices>
</domain>
XML

mask_clock()
{
    sed -E -e 's/[0-9]{9,}/N/g' -e 's/^(user|system|idle|iowait|intr): +[0-9]+$/\1: N/' \
        -e 's/^(  balloon\.rss=)[0-9]+$/\1N/'
}

# transcript URI TOOL STEP...: each step's output as TOOL prints it.
transcript()
{
    local uri=$1 tool=$2 step rc
    shift 2
    for step in "$@"; do
        rc=0
        # Word splitting on purpose: each step is a command and its arguments.
        # shellcheck disable=SC2086
        "$tool" -c "$uri" $step >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== %s\n' "$step"
        mask_clock < "$RV_TMP/out"
        echo "--- stderr"
        mask_clock < "$RV_TMP/err"
        echo "--- exit status $rc"
    done
}

status=0
compare_setup=         # a command run before each tool's transcript, or empty
# compare WHAT URI STEP...: virsh's and rvsh's transcripts are equal.
compare()
{
    local what=$1 uri=$2
    shift 2
    $compare_setup > /dev/null
    transcript "$uri" virsh "$@" > "$RV_TMP/virsh.txt"
    $compare_setup > /dev/null
    transcript "$uri" "$RVSH" "$@" > "$RV_TMP/rvsh.txt"
    if diff -u "$RV_TMP/virsh.txt" "$RV_TMP/rvsh.txt"; then
        echo "ok   $what: $# commands print as virsh's"
    else
        echo "FAIL: $what: rvsh (+++) prints differently from virsh (---)"
        status=1
    fi
}

readers=(
    "domiflist test" "domiflist test --inactive" "domblklist test" "domblklist test --details"
    "domblkinfo test vda" "domblkinfo test /guest/diskimage1" "domblkinfo test nosuch"
    "domblkinfo test vda --human" "domblkinfo test --all" "domblkinfo test --all --human"
    "domblkinfo test"
    "domifstat test testnet0" "domifstat test aa:bb:cc:dd:ee:ff" "domifstat test vnet0"
    "memtune test" "memtune test --config" "memtune test --current --live"
    "blkiotune test" "blkiotune test --live" "numatune test" "numatune test --config"
    "domiftune test testnet0" "domiftune test vnet0" "blkdeviotune test vda"
    "blkdeviotune test nosuch" "vcpupin test" "vcpupin test --vcpu 1" "vcpupin test --vcpu 7"
    "emulatorpin test" "iothreadinfo test" "domifaddr test" "domifaddr test --full"
    "domifaddr test --source arp" "domifaddr test --interface nosuch"
    "domifaddr test --source bogus" "domhostname test" "domtime test" "domtime test --pretty"
    "domstats" "domstats test" "domstats --state" "domstats --vcpu --balloon"
    "domstats --cpu-total --interface --block" "domstats --list-active"
    "domstats --list-inactive" "domstats test --list-active"
    "sysinfo" "freecell" "freecell --all" "freecell 0" "freecell 1" "freecell 2" "freecell x"
    "freecell --all 1" "nodecpustats" "nodecpustats 1" "nodecpustats --cpu 2"
    "nodecpustats 99" "nodecpumap" "nodecpumap --pretty" "cpu-models x86_64"
    "cpu-models aarch64" "cpu-models nosuch" "maxvcpus" "maxvcpus --type test"
    "domcapabilities"
    # No such domain.
    "domiflist nosuch" "domblklist nosuch" "domblkinfo nosuch vda" "domifstat nosuch x"
    "memtune nosuch" "vcpupin nosuch" "emulatorpin nosuch" "iothreadinfo nosuch"
    "domifaddr nosuch" "domhostname nosuch" "domtime nosuch" "domstats nosuch"
)
on_d2=(
    # A shut-off domain.
    "domiflist d2" "domblklist d2 --details" "domblkinfo d2 sdb" "domifstat d2 foo0"
    "domblkinfo d2 --all" "domblkinfo d2 --all --human" "domblkinfo d2 hdc"
    "memtune d2" "blkiotune d2" "numatune d2" "domiftune d2 foo0" "blkdeviotune d2 sdb"
    "vcpupin d2" "emulatorpin d2" "iothreadinfo d2" "domifaddr d2" "domhostname d2"
    "domtime d2" "domstats d2" "domstats --list-inactive --state"
)
managing=(
    "reset test" "managedsave test" "managedsave-remove test" "managedsave-remove d2"
    "save test $RV_TMP/test.img" "restore $RV_TMP/test.img" "setmem test 1000"
    "setmem test 1G --config" "setmem test 1x" "setmem test -5" "setmaxmem test 100000"
    "setmaxmem test 100000 --current --live" "setvcpus test 1" "setvcpus test x"
    "setvcpus test 1 --maximum --config" "autostart test" "autostart test --disable"
    "shutdown test --mode acpi" "shutdown test --mode bogus" "reboot test --mode agent"
    "reboot test --mode acpi,agent" "undefine nosuch" "reset nosuch" "setmem nosuch 1"
    "save nosuch $RV_TMP/x.img" "managedsave nosuch" "undefine d2 --nvram --keep-nvram"
)

# ---------------------------------------------------------------- 1. remvirtd
start_remvirtd
virsh -q -c "$REMVIRTD_URI" define "$xmldir/d2.xml" > /dev/null
compare "remvirtd, readers" "$REMVIRTD_URI" "${readers[@]}" "${on_d2[@]}"
# The management commands change the test driver's state, which remvirtd
# keeps: each tool starts from a new daemon, as from a new libvirtd.
fresh_remvirtd()
{
    stop_remvirtd
    start_remvirtd
    virsh -q -c "$REMVIRTD_URI" define "$xmldir/d2.xml"
}
compare_setup=fresh_remvirtd
compare "remvirtd, management" "$REMVIRTD_URI" "${managing[@]}"
fresh_remvirtd > /dev/null
# Undefine changes what the next tool sees: d2 is defined again before each.
compare_setup="virsh -q -c $REMVIRTD_URI define $xmldir/d2.xml"
compare "remvirtd, undefine" "$REMVIRTD_URI" "undefine d2 --managed-save --snapshots-metadata" \
    "undefine d2"
compare_setup=
[ "$(virsh -q -c "$REMVIRTD_URI" list --all --name)" = test ] || fail "d2 is still defined"

# ---------------------------------------------------------------- 3. --json
json_status=0
jsoncheck() # ASSERTION RVSH-ARGS...
{
    local assertion=$1
    shift
    if ! "$RVSH" -c "$REMVIRTD_URI" "$@" --json > "$RV_TMP/json" ||
        ! "$SYSTEM_PYTHON3" -c "import json, sys; v = json.load(open(sys.argv[1])); assert $assertion, v" \
            "$RV_TMP/json"; then
        echo "FAIL: rvsh $* --json: not the expected JSON"
        cat "$RV_TMP/json"
        json_status=1
    fi
}
jsoncheck 'v == [{"interface": "testnet0", "type": "network", "source": "default", "model": None, "mac": "aa:bb:cc:dd:ee:ff"}]' domiflist test
jsoncheck 'v == [{"target": "vda", "source": "/guest/diskimage1"}]' domblklist test
jsoncheck 'v == [{"type": "file", "device": "disk", "target": "vda", "source": "/guest/diskimage1"}]' domblklist test --details
jsoncheck 'v == {"capacity": 1099506450432, "allocation": 1099511627776, "physical": 1099511627776}' domblkinfo test vda
jsoncheck 'v == [{"target": "vda", "capacity": 1099506450432, "allocation": 1099511627776, "physical": 1099511627776}]' domblkinfo test --all
jsoncheck 'set(v) == {"rx_bytes", "rx_packets", "rx_errs", "rx_drop", "tx_bytes", "tx_packets", "tx_errs", "tx_drop"} and v["rx_bytes"] > v["rx_packets"] > 0' domifstat test testnet0
jsoncheck 'v == {"hard_limit": None, "soft_limit": None, "swap_hard_limit": None}' memtune test
jsoncheck 'v["weight"] == 0 and v["device_weight"] == ""' blkiotune test
jsoncheck 'v == {"numa_mode": "strict", "numa_nodeset": ""}' numatune test
jsoncheck 'v["inbound.average"] == 0 and len(v) == 7' domiftune test testnet0
jsoncheck 'v["total_bytes_sec"] == 0 and v["group_name"] == ""' blkdeviotune test vda
jsoncheck 'v == [{"vcpu": 0, "cpus": "0-7"}, {"vcpu": 1, "cpus": "0-7"}]' vcpupin test
jsoncheck 'v == {"cpus": "0-7"}' emulatorpin test
jsoncheck 'v == []' iothreadinfo test
jsoncheck 'v == [{"name": "testnet0", "mac": "aa:bb:cc:dd:ee:ff", "addresses": [{"protocol": "ipv4", "address": "192.168.122.3", "prefix": 24}]}]' domifaddr test
jsoncheck 'v == {"hostname": "testhost"}' domhostname test
jsoncheck 'set(v) == {"seconds", "nseconds"} and v["seconds"] > 0' domtime test
jsoncheck 'v == [{"domain": "test", "stats": {"state.state": 1, "state.reason": 0}}]' domstats --state
jsoncheck 'v == {"cells": [{"cell": 0, "free_kib": 2048}, {"cell": 1, "free_kib": 4096}], "total_kib": 6144}' freecell --all
jsoncheck 'v == {"total_kib": 3072}' freecell
jsoncheck 'v == {"cells": [{"cell": 1, "free_kib": 4096}]}' freecell 1
jsoncheck 'sorted(v) == ["idle", "iowait", "kernel", "user"] and v["kernel"] > v["user"] > 0' nodecpustats
jsoncheck 'v == {"usage": None, "user": None, "kernel": None, "idle": None, "iowait": None}' nodecpustats --percent
jsoncheck 'v == {"present": 8, "online": 3, "online_cpus": [0, 2, 4]}' nodecpumap
jsoncheck 'v[0] == "486" and "qemu64" in v and len(v) == len(set(v)) > 40' cpu-models x86_64
jsoncheck 'v == {"max_vcpus": 32}' maxvcpus
# A missing domain is an error, not JSON.
if "$RVSH" -c "$REMVIRTD_URI" memtune nosuch --json > "$RV_TMP/json" 2>&1; then
    echo "FAIL: memtune nosuch --json succeeded"
    json_status=1
fi
[ $json_status = 0 ] && echo "ok   --json: the same facts, parsed by python3"
status=$((status | json_status))
stop_remvirtd

# ---------------------------------------------------------------- 2. libvirtd
start_libvirtd
compare "libvirtd, readers" "$LIBVIRTD_URI" "${readers[@]}"
compare "libvirtd, management" "$LIBVIRTD_URI" "${managing[@]}"
stop_libvirtd

# ---------------------------------------------------------------- 4. QEMU
requires qemu-system-x86_64 --version
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
# (virsh -q leaves out the words compared here)
R=("$RVSH" -c "$QEMU_URI")
VV=(virsh -c "$QEMU_URI")
truncate -s 1M "$RV_TMP/disk.img"
qemu_domain_xml g "<disk type='file' device='disk'><source file='$RV_TMP/disk.img'/><target dev='vda' bus='virtio'/></disk><interface type='user'><mac address='52:54:00:12:34:56'/><model type='virtio'/></interface>" \
    > "$xmldir/g.xml"
"${V[@]}" define "$xmldir/g.xml" > /dev/null
qemu_readers=(
    "domblklist g" "domblklist g --details" "domiflist g" "domblkinfo g vda"
    "domblkinfo g --all" "domblkinfo g --all --human"
    "domifstat g 52:54:00:12:34:56" "domstats g --state --balloon" "domstats --block g"
    "maxvcpus" "maxvcpus --type kvm" "nodecpumap" "domhostname g" "setmem g 32768"
    "setmaxmem g 65536" "setvcpus g 1" "vcpupin g" "emulatorpin g" "iothreadinfo g"
)
compare "QEMU, a shut-off guest" "$QEMU_URI" "${qemu_readers[@]}"
"${V[@]}" start g > /dev/null
# (not domstats --block: the firmware may still be reading the disk)
compare "QEMU, a running guest" "$QEMU_URI" "${qemu_readers[@]/domstats --block g/domstats --vcpu --list-shutoff}" \
    "save g /nonexistent/dir/g.img"

# by_both NAME UNDO CMD...: CMD run by rvsh, then UNDO (shell code that
# puts the domain back, or empty), then CMD run by virsh; the words and
# exit statuses must be equal.
by_both()
{
    local name=$1 undo=$2 rc=0
    shift 2
    "${R[@]}" "$@" > "$RV_TMP/r.out" 2>&1 || rc=$?
    echo "exit $rc" >> "$RV_TMP/r.out"
    eval "$undo"
    rc=0
    "${VV[@]}" "$@" > "$RV_TMP/v.out" 2>&1 || rc=$?
    echo "exit $rc" >> "$RV_TMP/v.out"
    if diff -u "$RV_TMP/v.out" "$RV_TMP/r.out"; then
        echo "ok   QEMU: $name prints as virsh's"
    else
        echo "FAIL: QEMU: $name: rvsh (+++) prints differently from virsh (---)"
        status=1
    fi
}
quiet() { "${V[@]}" "$@" > /dev/null; }

by_both "setmem" "" setmem g 49152
by_both "setmem above the maximum" "" setmem g 1G
"${R[@]}" setmem g 40M --config > /dev/null
"${V[@]}" dumpxml --inactive g > "$RV_TMP/g.inactive.xml"
grep -qF "<currentMemory unit='KiB'>40960</currentMemory>" "$RV_TMP/g.inactive.xml" ||
    { show "$RV_TMP/g.inactive.xml"; fail "setmem 40M --config: not in the definition"; }
echo "ok   QEMU: setmem --config with a unit changes the definition"

by_both "managedsave" "quiet start g" managedsave g
[ "$("${V[@]}" domstate --reason g)" = "shut off (saved)" ] || fail "managedsave: g is $("${V[@]}" domstate --reason g)"
by_both "managedsave-remove of an image" "quiet start g; quiet managedsave g" managedsave-remove g
by_both "managedsave-remove without one" "" managedsave-remove g
quiet start g
"${R[@]}" managedsave g > /dev/null
"${R[@]}" start g > "$RV_TMP/start" || fail "start after managedsave: $(cat "$RV_TMP/start")"
[ "$("${V[@]}" domstate --reason g)" = "running (restored)" ] || fail "start did not restore g: $("${V[@]}" domstate --reason g)"
echo "ok   QEMU: rvsh managedsave, then start restores the guest"

by_both "save" "quiet restore $RV_TMP/g.img" save g "$RV_TMP/g.img"
[ "$("${V[@]}" domstate --reason g)" = "shut off (saved)" ] || fail "save: g is $("${V[@]}" domstate --reason g)"
by_both "restore" "quiet save g $RV_TMP/g.img" restore "$RV_TMP/g.img"
[ "$("${V[@]}" domstate --reason g)" = "running (restored)" ] || fail "restore: g is $("${V[@]}" domstate --reason g)"
by_both "restore of a file that is no image" "" restore "$RV_TMP/disk.img"
echo "ok   QEMU: rvsh save and restore through a file"

by_both "reset" "" reset g
by_both "autostart" "" autostart g
[ "$("${V[@]}" dominfo g | sed -n 's/^Autostart: *//p')" = enable ] || fail "autostart not set"
by_both "autostart --disable" "" autostart g --disable
by_both "setvcpus beyond the maximum" "" setvcpus g 4
by_both "shutdown --mode bogus" "" shutdown g --mode bogus

# vCPUs, IOThreads, the dirty rate, the native command line: h, two vCPUs
# (one enabled) and two IOThreads.  Shut off, each tool's transcript
# starts from h defined afresh; the error cases come with each command.
qemu_domain_xml h "<controller type='scsi' model='virtio-scsi'/>" |
    sed -e "s|<vcpu>1</vcpu>|<uuid>3c1f0a52-6b7d-4e8a-9f21-5d4c3b2a1f10</uuid><vcpu current='1'>2</vcpu><iothreads>2</iothreads>|" \
    > "$xmldir/h.xml"
quiet define "$xmldir/h.xml"
tuning=(
    "setvcpu h 1 --enable --config" "vcpucount h" "setvcpu h 1" "setvcpu h 1 --enable --disable"
    "setvcpu h 1 --enable --config --current" "setvcpu h x --enable --config"
    "setvcpu nosuch 1 --enable" "setvcpu h 1 --enable --live"
    "iothreadadd h 5 --config" "iothreadadd h 5 --config" "iothreadadd h 0" "iothreadadd h x"
    "iothreadadd nosuch 1" "iothreadadd h 6 --live" "iothreaddel h 5 --config"
    "iothreaddel h 7 --config" "iothreaddel h -1"
    "iothreadpin h 1 0 --config" "iothreadinfo h --config" "iothreadpin h 2 r --config"
    "iothreadpin h 1 0-1,^1 --config" "iothreadpin h 1 x --config" "iothreadpin h 1 ^0 --config"
    "iothreadpin h 1 1023 --config" "iothreadpin h 1 1024" "iothreadpin h y 0"
    "iothreadpin h +1 1,^1,0, --config" "iothreadpin h 1 0,,1 --config" "iothreadpin h 1 1-0"
    "iothreadpin h 9 0 --config" "iothreadpin h 1 0 --live" "iothreadinfo h --config"
    "iothreadset h 1 --poll-max-ns 100" "iothreadset h 1" "iothreadset h 0 --poll-grow 1"
    "iothreadset h 1 --poll-grow x" "iothreadset h 1 --poll-max-ns -1"
    "iothreadset h 1 --poll-shrink 4294967296" "iothreadset h 1 --poll-max-ns 5 --live"
    "iothreadset h 1 --poll-max-ns 18446744073709551616" "iothreadset h 1 --thread-pool-min x"
    "domdirtyrate-calc h" "domdirtyrate-calc h --mode bogus" "domdirtyrate-calc h --seconds x"
    "domdirtyrate-calc nosuch"
    "domxml-to-native qemu-argv --domain h" "domxml-to-native qemu-argv $xmldir/h.xml"
    "domxml-to-native qemu-argv" "domxml-to-native qemu-argv --xml $xmldir/h.xml --domain h"
    "domxml-to-native bogus --domain h" "domxml-to-native qemu-argv --xml $RV_TMP/nosuch.xml"
    "domxml-to-native qemu-argv --domain nosuch"
)
compare_setup="virsh -q -c $QEMU_URI define $xmldir/h.xml"
compare "QEMU, setvcpu, iothread*, domdirtyrate-calc, domxml-to-native on a shut-off guest" \
    "$QEMU_URI" "${tuning[@]}"
compare_setup=
quiet define "$xmldir/h.xml"
quiet start h
# The measurement lasts a second; the next one is refused until it ends.
dirtyrate_done()
{
    [[ "$("${V[@]}" domstats h --dirtyrate)" == *dirtyrate.calc_status=2* ]]
}
by_both "setvcpu --enable, live" "quiet destroy h; quiet start h" setvcpu h 1 --enable
by_both "setvcpu of a vCPU that is not there" "" setvcpu h 5 --enable
by_both "iothreadadd, live" "quiet iothreaddel h 6" iothreadadd h 6
by_both "iothreadadd of an IOThread there" "" iothreadadd h 6
by_both "iothreadpin, live" "" iothreadpin h 6 0
by_both "iothreadset" "" iothreadset h 6 --poll-max-ns 100 --poll-grow 2 --poll-shrink 3 \
    --thread-pool-min 1 --thread-pool-max 4
by_both "iothreadset of no such IOThread" "" iothreadset h 9 --poll-max-ns 100
by_both "iothreadinfo after them" "" iothreadinfo h
by_both "iothreaddel, live" "quiet iothreadadd h 6" iothreaddel h 6
by_both "iothreaddel of no such IOThread" "" iothreaddel h 9
by_both "domdirtyrate-calc" "wait_for 30 'the dirty rate' dirtyrate_done" domdirtyrate-calc h --seconds 1
wait_for 30 "the dirty rate" dirtyrate_done
by_both "domdirtyrate-calc --mode dirty-ring under TCG" "" domdirtyrate-calc h --mode dirty-ring
by_both "domxml-to-native of a running guest" "" domxml-to-native qemu-argv --domain h
# What rvsh alone did (by_both's virsh ran the same after it).
quiet destroy h
quiet start h
"${R[@]}" setvcpu h 1 --enable > /dev/null
"${R[@]}" iothreadadd h 8 > /dev/null
"${R[@]}" iothreadpin h 8 0 > /dev/null
"${R[@]}" iothreadset h 8 --poll-max-ns 777 --poll-grow 5 > /dev/null
"${V[@]}" vcpucount h --live --active > "$RV_TMP/vcpus"
"${V[@]}" domstats h --iothread > "$RV_TMP/iothreads"
[ "$(cat "$RV_TMP/vcpus")" = 2 ] || fail "rvsh setvcpu --enable: $(cat "$RV_TMP/vcpus") vCPUs"
grep -qx '  iothread.8.poll-max-ns=777' "$RV_TMP/iothreads" &&
    grep -qx '  iothread.8.poll-grow=5' "$RV_TMP/iothreads" ||
    { show "$RV_TMP/iothreads"; fail "rvsh iothreadset: not applied"; }
"${V[@]}" iothreadinfo h > "$RV_TMP/info"
grep -qE '^ 8 +0$' "$RV_TMP/info" || { show "$RV_TMP/info"; fail "rvsh iothreadpin: not applied"; }
"${R[@]}" iothreaddel h 8 > /dev/null
"${V[@]}" iothreadinfo h > "$RV_TMP/info"
! grep -qE '^ 8 ' "$RV_TMP/info" || fail "rvsh iothreaddel: IOThread 8 still there"
echo "ok   QEMU: rvsh's setvcpu, iothreadadd, iothreadpin, iothreadset, iothreaddel took effect"
# The calls rvsh has no command for: the security label list as
# python3-libvirt reads it, and the arguments libremvirt refuses.
"$top_builddir/tests/integration/domain-calls" "$QEMU_URI" h > "$RV_TMP/calls" ||
    { show "$RV_TMP/calls"; fail "domain-calls failed"; }
"$SYSTEM_PYTHON3" - "$QEMU_URI" > "$RV_TMP/labels.py" <<'PY'
import sys, libvirt
labels = libvirt.open(sys.argv[1]).lookupByName('h').securityLabelList()
print('labels', len(labels))
for label, enforcing in labels:
    print(label, int(enforcing))
PY
sed -n '/^labels/,/^refused/p' "$RV_TMP/calls" | grep -v '^refused' > "$RV_TMP/labels.c"
diff -u "$RV_TMP/labels.py" "$RV_TMP/labels.c" || fail "rv_domain_get_security_label_list differs from python3-libvirt's"
"${V[@]}" domstats h --iothread > "$RV_TMP/iothreads"
grep -qx '  iothread.1.poll-max-ns=1000' "$RV_TMP/iothreads" ||
    { show "$RV_TMP/iothreads"; fail "rv_domain_set_iothread_params: poll_max_ns not applied"; }
echo "ok   QEMU: rv_domain_get_security_label_list as python3-libvirt's ($(head -1 "$RV_TMP/labels.c")), $(grep -c '^refused' "$RV_TMP/calls") bad arguments refused"
quiet destroy h
quiet undefine h

quiet managedsave g
by_both "undefine with a managed save image" "" undefine g
by_both "undefine --managed-save" "quiet define $xmldir/g.xml; quiet start g; quiet managedsave g" undefine g --managed-save
[ -z "$("${V[@]}" list --all --name)" ] || fail "g is still defined"
echo "ok   QEMU: undefine --managed-save removes the domain"

exit $status
