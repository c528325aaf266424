#!/usr/bin/env bash
# Statistics and tuning: virsh's commands for them and python3-libvirt's
# calls, against remvirtd and against libvirtd's test driver; the outputs
# must be the same, byte for byte (the socket path aside).
#
# libvirt's test driver makes some numbers up from the wall clock (block
# and interface counters, vcpu CPU time): in the steps marked "mask:" every
# run of 9 or more digits, and the CPU time in seconds, become N before the
# comparison, so those compare in shape (fields, order, units) only.
# As in test-virsh.sh, libvirtd's test driver forgets its state when its
# last client leaves (and numbers domains from 2 again), so the sequence
# that defines and starts domains runs in one virsh, first, and puts
# things back as it found them.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires_root

xmldir=$RV_TMP/xml
mkdir -p "$xmldir"
# A second domain, shut off: one vcpu of three, a SCSI disk, an interface
# without a device name (the test driver names it testnet0) and no balloon.
cat > "$xmldir/d2.xml" <<XML
<domain type='test'>
  <name>d2</name>
  <uuid>6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4c02</uuid>
  <memory>1048576</memory>
  <vcpu current='1'>3</vcpu>
  <os><type>hvm</type></os>
  <devices>
    <disk type='file' device='disk'>
      <source file='/tmp/rv-d2.img'/>
      <target dev='sdb' bus='scsi'/>
    </disk>
    <interface type='network'>
      <mac address='52:54:00:11:22:33'/>
      <source network='default'/>
    </interface>
  </devices>
</domain>
XML
# A third: a CD-ROM before its hard disk, a named interface, an unnamed
# one and a user-mode one, its balloon switched off.
cat > "$xmldir/d3.xml" <<XML
<domain type='test'>
  <name>d3</name>
  <uuid>6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4c03</uuid>
  <memory>1048576</memory>
  <vcpu>1</vcpu>
  <os><type>hvm</type></os>
  <devices>
    <disk type='file' device='cdrom'>
      <source file='/tmp/rv-c.iso'/>
      <target dev='hdc' bus='ide'/>
    </disk>
    <disk type='file' device='disk'>
      <source file='/tmp/rv-d3.img'/>
      <target dev='vdb' bus='virtio'/>
    </disk>
    <interface type='network'>
      <mac address='52:54:00:11:22:34'/>
      <source network='default'/>
      <target dev='foo0'/>
    </interface>
    <interface type='network'>
      <mac address='52:54:00:11:22:35'/>
      <source network='default'/>
    </interface>
    <interface type='user'>
      <mac address='52:54:00:11:22:36'/>
    </interface>
    <memballoon model='none'/>
  </devices>
</domain>
XML

# A fourth with tuning in its definition: the getters and dumpxml read it.
cat > "$xmldir/d4.xml" <<XML
<domain type='test'>
  <name>d4</name>
  <uuid>6a0b7c2e-1d3f-4e5a-8b9c-0d1e2f3a4c04</uuid>
  <memory>1048576</memory>
  <blkiotune>
    <weight>600</weight>
    <device><path>/dev/sda</path><weight>200</weight><read_bytes_sec>1000</read_bytes_sec></device>
  </blkiotune>
  <memtune>
    <hard_limit unit='MiB'>512</hard_limit>
    <swap_hard_limit unit='G'>2</swap_hard_limit>
  </memtune>
  <vcpu current='2'>3</vcpu>
  <cputune>
    <vcpupin vcpu='1' cpuset='2-3,^3'/>
    <emulatorpin cpuset='1,0'/>
  </cputune>
  <numatune>
    <memory mode='preferred' nodeset='1'/>
  </numatune>
  <os><type>hvm</type></os>
</domain>
XML

# "ro:" runs the step on the read-only socket; "mask:" masks clock numbers.
steps=(
    # Shut off, then running; ids 2 and 3 on both servers.
    "define d2.xml; dommemstat d2; domblkstat d2 sdb; domifstat d2 testnet0;
     vcpuinfo d2; vcpucount d2; schedinfo d2; memtune d2; blkiotune d2; numatune d2;
     domifaddr d2; domhostname d2; domtime d2; vcpupin d2; emulatorpin d2;
     iothreadinfo d2; domfsinfo d2; domblkinfo d2 sdb; domblkinfo d2 /tmp/rv-d2.img;
     domcontrol d2; start d2; dommemstat d2; vcpucount d2; domifaddr d2; domhostname d2;
     domtime d2; domfsinfo d2; domcontrol d2; vcpupin d2; memtune d2 --config;
     define d3.xml; start d3; domifaddr d3; domfsinfo d3; dommemstat d3;
     dommemstat d3 --period 2; domblkinfo d3 hdc; vcpucount d3 --maximum; vcpucount d3 --live --config;
     suspend d3; domtime d3; domcontrol d3; destroy d3; undefine d3;
     destroy d2; undefine d2"
    # The tuning setters on d2, running then shut off: what --live
    # changed is gone, what --config changed stays; refusals as libvirtd's.
    "mask:define d2.xml; start d2;
     schedinfo d2 --set weight=100; schedinfo d2 --set cap=3; schedinfo d2 --set weight=7 --config;
     memtune d2 --hard-limit 100000; memtune d2; memtune d2 --soft-limit 50000 --config;
     memtune d2 --config; memtune d2 --swap-hard-limit 1000; memtune d2 --hard-limit 5 --live --config;
     blkiotune d2 --weight 300; blkiotune d2 --device-weights /dev/sda,100,/dev/sdb,20;
     blkiotune d2 --device-read-iops-sec /dev/sda,5; blkiotune d2 --device-weights /dev/sda,0;
     blkiotune d2; blkiotune d2 --device-weights /dev/sda; blkiotune d2 --device-weights /dev/sda,x;
     blkiotune d2 --weight 500 --config; blkiotune d2 --config;
     numatune d2 --mode strict; numatune d2 --nodeset 0 --config; numatune d2 --config;
     numatune d2 --nodeset 0-1,3,^1; numatune d2; numatune d2 --mode interleave;
     numatune d2 --mode preferred --config; numatune d2 --config; numatune d2 --nodeset x;
     domiftune d2 testnet0 --inbound 100,200,300 --outbound 50; domiftune d2 testnet0;
     domiftune d2 testnet0 --config; domiftune d2 52:54:00:11:22:33 --inbound 0;
     domiftune d2 testnet0; domiftune d2 nosuch --inbound 5; domiftune d2 testnet0 --outbound 7 --config;
     blkdeviotune d2 sdb --total-bytes-sec 1000;
     blkdeviotune d2 sdb --total-bytes-sec 1000 --total-bytes-sec-max 2000 --group-name g1;
     blkdeviotune d2 sdb; blkdeviotune d2 sdb --read-bytes-sec 5 --read-bytes-sec-max 6;
     blkdeviotune d2 /tmp/rv-d2.img --total-iops-sec 9 --total-iops-sec-max 9 --config;
     blkdeviotune d2 sdb --config; blkdeviotune d2 nosuch --total-iops-sec 5;
     blkdeviotune d2 sdb --total-bytes-sec 2000000000000000;
     vcpupin d2 0 1; vcpupin d2; vcpupin d2 --vcpu 0; vcpupin d2 5 1; vcpupin d2 0 1 --config;
     vcpuinfo d2; emulatorpin d2 2-3; emulatorpin d2; emulatorpin d2 1 --config;
     emulatorpin d2 --config; emulatorpin d2 --live;
     domtime d2 --time 35001; domcontrol d2; domtime d2; domtime d2 --time 12345; domcontrol d2;
     domtime d2 --time 20001; domcontrol d2; domtime d2 --sync; domtime d2; domcontrol d2;
     domtime d2 --now; setvcpus d2 2; vcpucount d2; setvcpus d2 4 --live;
     setvcpus d2 4 --config --maximum; setvcpus d2 3 --config; vcpucount d2; setvcpus d2 0;
     setvcpus d2 40 --config --maximum; setvcpus d2 2 --maximum; vcpuinfo d2;
     destroy d2; schedinfo d2; memtune d2; blkiotune d2; numatune d2; domiftune d2 testnet0;
     blkdeviotune d2 sdb; vcpupin d2; emulatorpin d2; vcpucount d2; domtime d2 --time 5;
     vcpupin d2 0 1; setvcpus d2 1; setvcpus d2 2 --config; vcpucount d2;
     undefine d2"
    "mask:define d4.xml; dumpxml d4; memtune d4; blkiotune d4; vcpupin d4; emulatorpin d4;
     numatune d4; start d4; vcpupin d4; vcpuinfo d4; destroy d4; undefine d4"
    "ro:schedinfo test --set weight=1"
    "ro:memtune test --hard-limit 100000"
    "ro:vcpupin test 0 1"
    "ro:domtime test --time 5"
    "ro:setvcpus test 1"
    "mask:define d2.xml; start d2; domblkstat d2 sdb; domblkstat d2 /tmp/rv-d2.img;
     domifstat d2 testnet0; domifstat d2 52:54:00:11:22:33; vcpuinfo d2;
     domblkstat d2 nosuch; domifstat d2 vnet0; destroy d2; undefine d2"
    "dommemstat test"
    "dommemstat test --period 2"
    "dommemstat test --period -1"
    "dommemstat test --period 3 --config"
    "mask:domblkstat test vda"
    "mask:domblkstat test vda --human"
    "domblkstat test"
    "domblkstat test nosuch"
    "mask:domifstat test testnet0"
    "mask:domifstat test aa:bb:cc:dd:ee:ff"
    "domifstat test vnet0"
    "mask:vcpuinfo test"
    "vcpucount test"
    "vcpucount test --maximum --config"
    "vcpucount test --current --live"
    "schedinfo test"
    "schedinfo test --config"
    "schedinfo test --live"
    "memtune test"
    "blkiotune test"
    "numatune test"
    "domiftune test testnet0"
    "domiftune test aa:bb:cc:dd:ee:ff --config"
    "domiftune test vnet0"
    "blkdeviotune test vda"
    "blkdeviotune test /guest/diskimage1 --config"
    "blkdeviotune test nosuch"
    "perf test"
    "perf test --config"
    "ro:blkdeviotune test vda"
    "ro:perf test"
    "ro:domiftune test testnet0"
    "domhostname test"
    "domifaddr test"
    "domifaddr test --source arp"
    "domifaddr test --source agent"
    "sysinfo"
    "freecell"
    "freecell --all"
    "freecell 1"
    "freecell 2"
    "nodememstats"
    "nodecpustats"
    "nodecpustats 3"
    "nodecpustats --percent"
    "nodecpumap"
    "cpu-models x86_64"
    "cpu-models i686"
    "cpu-models ppc64le"
    "cpu-models aarch64"
    "cpu-models sparc"
    "cpu-models nosuch"
    "maxvcpus"
    "maxvcpus --type test"
    "domtime test"
    "vcpupin test"
    "vcpupin test --vcpu 1"
    "emulatorpin test"
    "iothreadinfo test"
    "domfsinfo test"
    "domblkinfo test vda"
    "domblkinfo test /guest/diskimage1"
    "domblkinfo test nosuch"
    "domcontrol test"
    "iface-list"
    "iface-list --all"
    "iface-list --inactive"
    "domstats test --vcpu"
    "dommemstat nosuch"
    "ro:dommemstat test"
    "ro:mask:domblkstat test vda"
    "ro:mask:vcpuinfo test"
    "ro:vcpucount test"
    "ro:schedinfo test"
    "ro:memtune test"
    "ro:blkiotune test"
    "ro:numatune test"
    "ro:domifaddr test"
    "ro:sysinfo"
    "ro:freecell --all"
    "ro:nodecpustats"
    "ro:nodecpumap"
    "ro:cpu-models x86_64"
    "ro:maxvcpus"
    "ro:vcpupin test"
    "ro:emulatorpin test"
    "ro:iothreadinfo test"
    "ro:domblkinfo test vda"
    "ro:domcontrol test"
    "ro:iface-list"
    # Refused to read-only clients (by libvirt's client library, so the
    # daemon's own refusal is checked below).
    "ro:domhostname test"
    "ro:domtime test"
    "ro:domfsinfo test"
    "ro:domifaddr test --source agent"
    "ro:dommemstat test --period 2"
    # Nothing left over.
    "list --all"
)

mask_clock()
{
    sed -E -e 's/[0-9]{9,}/N/g' -e 's/[0-9]+\.[0-9]s$/Ns/'
}

# python3-libvirt's view of the same families.  Clock-made numbers are
# checked for their relations (libvirt's formulas) and then dropped.
pycheck()
{
    "$SYSTEM_PYTHON3" - "$1" "$2" <<'PY'
import sys, libvirt
libvirt.registerErrorHandler(lambda ctx, err: None, None)
conn = libvirt.open(sys.argv[1])
ro = libvirt.openReadOnly(sys.argv[2])
dom = conn.lookupByName('test')
def show(what, f):
    try:
        print(what, repr(f()))
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
for c, name in ((conn, 'rw'), (ro, 'ro')):
    d = c.lookupByName('test')
    show(name + ' memoryStats', d.memoryStats)
    show(name + ' vcpusFlags', lambda: [d.vcpusFlags(f) for f in (0, 1, 2, 4, 5, 6)])
    show(name + ' vcpusFlags 3', lambda: d.vcpusFlags(3))
    show(name + ' vcpusFlags 8', lambda: d.vcpusFlags(8))
    show(name + ' maxVcpus', d.maxVcpus)
    show(name + ' maxMemory', d.maxMemory)
    show(name + ' setMemoryStatsPeriod', lambda: d.setMemoryStatsPeriod(5))
    show(name + ' schedulerType', d.schedulerType)
    show(name + ' schedulerParameters', d.schedulerParameters)
    show(name + ' schedulerParametersFlags', lambda: d.schedulerParametersFlags(0))
    show(name + ' schedulerParametersFlags 2', lambda: d.schedulerParametersFlags(2))
    show(name + ' memoryParameters', lambda: d.memoryParameters(0))
    show(name + ' blkioParameters', lambda: d.blkioParameters(0))
    show(name + ' numaParameters', lambda: d.numaParameters(0))
    show(name + ' numaParameters config', lambda: d.numaParameters(2))
    show(name + ' interfaceParameters', lambda: d.interfaceParameters('testnet0', 0))
    show(name + ' blockIoTune', lambda: d.blockIoTune('vda', 0))
    show(name + ' blockIoTune nosuch', lambda: d.blockIoTune('nosuch', 0))
    show(name + ' perfEvents', lambda: d.perfEvents(0))
    show(name + ' interfaceAddresses', lambda: d.interfaceAddresses(0))
    show(name + ' interfaceAddresses 2', lambda: d.interfaceAddresses(2))
    show(name + ' hostname', d.hostname)
    show(name + ' getTime', d.getTime)
    show(name + ' fsInfo', d.fsInfo)
    show(name + ' ioThreadInfo', lambda: d.ioThreadInfo(0))
    show(name + ' blockInfo', lambda: d.blockInfo('vda'))
    show(name + ' blockInfo nosuch', lambda: d.blockInfo('nosuch'))
    show(name + ' controlInfo', d.controlInfo)
    show(name + ' vcpuPinInfo', lambda: d.vcpuPinInfo(0))
    show(name + ' emulatorPinInfo', lambda: d.emulatorPinInfo(0))
    show(name + ' sysinfo', lambda: c.getSysinfo(0))
    show(name + ' cells', lambda: c.getCellsFreeMemory(0, 8))
    show(name + ' cells 1', lambda: c.getCellsFreeMemory(1, 1))
    show(name + ' cells 2', lambda: c.getCellsFreeMemory(2, 1))
    show(name + ' freeMemory', c.getFreeMemory)
    show(name + ' cpuStats', lambda: c.getCPUStats(-1))
    show(name + ' cpuStats flags', lambda: c.getCPUStats(0, 1))
    show(name + ' cpuMap', c.getCPUMap)
    show(name + ' cpuModels', lambda: c.getCPUModelNames('x86_64'))
    show(name + ' cpuModels ppc64', lambda: c.getCPUModelNames('ppc64'))
    show(name + ' cpuModels riscv64', lambda: c.getCPUModelNames('riscv64'))
    show(name + ' cpuModels flags', lambda: c.getCPUModelNames('x86_64', 1))
    show(name + ' maxVcpus conn', lambda: c.getMaxVcpus(None))
    show(name + ' interfaces', lambda: [(i.name(), i.MACString(), i.isActive())
                                        for i in c.listAllInterfaces(0)])
    show(name + ' interfaces inactive', lambda: c.listAllInterfaces(1))
    show(name + ' blockStatsFlags', lambda: d.blockStatsFlags('vda'))
    # Clock-made: the relations libvirt's test driver builds them with.
    rd_req, rd_bytes, wr_req, wr_bytes, errs = d.blockStats('vda')
    print(name, 'blockStats shape', abs(rd_req - 2 * rd_bytes) < 10**7,
          abs(rd_req - 3 * wr_req) < 10**7, abs(rd_req - 4 * wr_bytes) < 10**7,
          abs(rd_req // 10**5 - errs * 2) < 10**3)
    st = d.interfaceStats('testnet0')
    print(name, 'interfaceStats shape', len(st), abs(st[0] - 10 * st[1]) < 10**7,
          abs(st[0] - 2 * st[4]) < 10**7, st[2] // 2 - st[3] in (0, 1))
    info, maps = d.vcpus()
    print(name, 'vcpus shape', [(n, s, cpu) for n, s, _, cpu in info], maps,
          len({t for _, _, t, _ in info}) == 1)
# The setters through the binding (which learns each parameter's type from
# the getter), on a transient domain that goes away at the end.
t = conn.createXML("""<domain type='test'><name>pyt</name><memory>1048576</memory>
  <vcpu current='2'>3</vcpu><os><type>hvm</type></os><devices>
  <disk type='file' device='disk'><source file='/tmp/rv-pyt.img'/><target dev='vdb'/></disk>
  <interface type='network'><mac address='52:54:00:11:22:99'/><source network='default'/></interface>
  <memballoon model='virtio'/></devices></domain>""", 0)
show('set memory', lambda: t.setMemoryParameters({'hard_limit': 500000, 'soft_limit': 1000}, 0))
show('set memory too low', lambda: t.setMemoryParameters({'swap_hard_limit': 10}, 0))
show('memory', lambda: t.memoryParameters(0))
show('set blkio', lambda: t.setBlkioParameters({'weight': 700, 'device_weight': '/dev/vdb,50'}, 0))
show('blkio', lambda: t.blkioParameters(0))
show('set numa', lambda: t.setNumaParameters({'numa_nodeset': '1', 'numa_mode': 0}, 0))
show('numa', lambda: t.numaParameters(0))
show('set numa config', lambda: t.setNumaParameters({'numa_nodeset': '1'}, 2))
show('set iface', lambda: t.setInterfaceParameters('testnet0', {'inbound.average': 10, 'outbound.average': 20, 'outbound.burst': 30}, 0))
show('iface', lambda: t.interfaceParameters('testnet0', 0))
show('set iotune', lambda: t.setBlockIoTune('vdb', {'total_iops_sec': 5, 'total_iops_sec_max': 50, 'group_name': 'gp'}, 0))
show('iotune', lambda: t.blockIoTune('vdb', 0))
show('set sched', lambda: t.setSchedulerParameters({'weight': 9}))
show('set sched flags', lambda: t.setSchedulerParametersFlags({'weight': 9}, 0))
show('sched', t.schedulerParameters)
show('pin', lambda: t.pinVcpu(1, (False, True, False, True)))
show('pin flags', lambda: t.pinVcpuFlags(0, (True,), 0))
show('pin info', lambda: t.vcpuPinInfo(0))
show('pin emulator', lambda: t.pinEmulator((False, False, True), 0))
show('emulator info', lambda: t.emulatorPinInfo(0))
show('set time', lambda: t.setTime({'seconds': 20005, 'nseconds': 7}))
show('time', t.getTime)
show('control', t.controlInfo)
show('set vcpus', lambda: t.setVcpus(3))
show('set vcpus flags', lambda: t.setVcpusFlags(1, 1))
show('vcpus count', lambda: [t.vcpusFlags(f) for f in (0, 1, 5)])
show('set period', lambda: t.setMemoryStatsPeriod(4, 0))
t.destroy()
PY
}

# The tuning in dumpxml, live and inactive: the lines from <currentMemory>
# to <os> (memory, vcpus and the tuning elements between them), and the
# balloon with its statistics period.
tuning_xml()
{
    (cd "$xmldir" && virsh -c "$1" "define d2.xml; start d2; memtune d2 --hard-limit 100000;
        memtune d2 --soft-limit 5000 --config; blkiotune d2 --weight 300;
        blkiotune d2 --device-weights /dev/sda,100 --device-write-bytes-sec /dev/sda,7,/dev/sdb,9 --config;
        vcpupin d2 0 1; emulatorpin d2 2-3 --config; numatune d2 --nodeset 0-1 --mode interleave --config;
        setvcpus d2 2 --config; dumpxml d2; dumpxml d2 --inactive; destroy d2; dumpxml d2; undefine d2;
        dommemstat test --period 7 --live; dommemstat test --period 9 --config; dumpxml test;
        dumpxml test --inactive; dommemstat test --period 0 --live; dommemstat test --period 0 --config;
        dumpxml test") |
        sed -n -e '/<currentMemory/,/<os>/p' -e '/<memballoon/,/<\/memballoon>/p'
}

start_libvirtd
tuning_xml "$LIBVIRTD_URI" > "$RV_TMP/xml-libvirtd.txt"
virsh_transcript "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" "$xmldir" mask_clock | sockets_as_word "$LIBVIRTD_SOCK_RO" "$LIBVIRTD_SOCK" \
    > "$RV_TMP/libvirtd.txt"
if "$SYSTEM_PYTHON3" -c 'import libvirt' 2>/dev/null; then
    pycheck "$LIBVIRTD_URI" "$LIBVIRTD_URI_RO" > "$RV_TMP/py-libvirtd.txt" 2>&1
fi
rawpy "$LIBVIRTD_SOCK" < "$top_srcdir/tests/interop/tune-checks.py" > "$RV_TMP/tune-libvirtd.txt"
stop_libvirtd

start_remvirtd
virsh_transcript "$REMVIRTD_URI" "$REMVIRTD_URI_RO" "$xmldir" mask_clock | sockets_as_word "$REMVIRTD_SOCK_RO" "$REMVIRTD_SOCK" \
    > "$RV_TMP/remvirtd.txt"
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    pycheck "$REMVIRTD_URI" "$REMVIRTD_URI_RO" > "$RV_TMP/py-remvirtd.txt" 2>&1
fi
# After the transcript: remvirtd numbers the domains it starts on and on.
tuning_xml "$REMVIRTD_URI" > "$RV_TMP/xml-remvirtd.txt"

# rvsh prints what virsh prints, one command at a time against remvirtd
# (which keeps its state between connections: d2 stays shut off).
virsh -q -c "$REMVIRTD_URI" define "$xmldir/d2.xml" > /dev/null
rvsh_steps=(
    "dommemstat test" "dommemstat d2" "dommemstat nosuch"
    "mask:domblkstat test vda" "mask:domblkstat test /guest/diskimage1" "domblkstat test"
    "domblkstat test nosuch" "domblkstat d2 sdb"
    "mask:vcpuinfo test" "vcpuinfo d2"
    "vcpucount test" "vcpucount d2"
    "schedinfo test" "schedinfo d2"
)
for tool in virsh "$RVSH"; do
    for step in "${rvsh_steps[@]}"; do
        rc=0
        mask=cat
        case $step in mask:*) mask=mask_clock; step=${step#mask:} ;; esac
        # Word splitting on purpose: each step is a command and its arguments.
        # shellcheck disable=SC2086
        "$tool" -c "$REMVIRTD_URI" $step >"$RV_TMP/out" 2>"$RV_TMP/err" || rc=$?
        printf '=== %s\n' "$step"
        $mask < "$RV_TMP/out"
        echo "--- stderr"
        $mask < "$RV_TMP/err"
        echo "--- exit status $rc"
    done > "$RV_TMP/tool-$(basename "$tool").txt"
done
# --json: the same facts as one JSON value each.
jsoncheck()
{
    "$RVSH" -c "$REMVIRTD_URI" "$@" --json > "$RV_TMP/json" &&
        "$SYSTEM_PYTHON3" -c "import json, sys; v = json.load(open(sys.argv[1])); assert $JSON_ASSERT, v" \
            "$RV_TMP/json" ||
        { echo "rvsh $* --json: not the expected JSON"; cat "$RV_TMP/json"; json_status=1; }
}
json_status=0
JSON_ASSERT='v["actual"] == 2097152 and v["rss"] == 1048576 and len(v) == 13' jsoncheck dommemstat test
JSON_ASSERT='set(v) == {"rd_req", "rd_bytes", "wr_req", "wr_bytes", "errs"} and abs(v["rd_req"] - 2 * v["rd_bytes"]) < 10**7' \
    jsoncheck domblkstat test vda
JSON_ASSERT='[(c["vcpu"], c["cpu"], c["state"], c["affinity"]) for c in v] == [(0, 15, "running", "yyyyyyyy"), (1, 15, "running", "yyyyyyyy")]' \
    jsoncheck vcpuinfo test
JSON_ASSERT='v == [{"vcpu": 0, "cpu": None, "state": None, "cpu_time_ns": None, "affinity": "yyyyyyyy"}]' \
    jsoncheck vcpuinfo d2
JSON_ASSERT='v == {"maximum_config": 2, "maximum_live": 2, "current_config": 2, "current_live": 2}' \
    jsoncheck vcpucount test
JSON_ASSERT='v == {"maximum_config": 3, "maximum_live": None, "current_config": 1, "current_live": None}' \
    jsoncheck vcpucount d2
JSON_ASSERT='v == {"scheduler": "fair", "params": {"weight": 50}}' jsoncheck schedinfo test
virsh -q -c "$REMVIRTD_URI" undefine d2 > /dev/null

# The daemon's own refusals, which libvirt's client library keeps virsh
# and python from reaching: a read-only connection may not ask the guest
# (hostname, time, filesystems, addresses from its agent), but may read
# addresses from the leases.
rawpy "$REMVIRTD_SOCK_RO" <<'PY'
import sys
import rawclient as rc

c = rc.Client(sys.argv[1])
c.open_connection()
dom = c.lookup("test")
for proc, name, body in ((rc.PROC_DOMAIN_GET_HOSTNAME, "virDomainGetHostname", dom + rc.xdr_uint(0)),
                         (rc.PROC_DOMAIN_GET_TIME, "virDomainGetTime", dom + rc.xdr_uint(0)),
                         (rc.PROC_DOMAIN_GET_FSINFO, "virDomainGetFSInfo", dom + rc.xdr_uint(0)),
                         (rc.PROC_DOMAIN_INTERFACE_ADDRESSES, "virDomainInterfaceAddresses",
                          dom + rc.xdr_uint(1) + rc.xdr_uint(0))):
    hdr, body = c.call(proc, body)
    err = rc.decode_error(body) if hdr.status == rc.STATUS_ERROR else None
    if not err or err["code"] != rc.ERR_OPERATION_DENIED or name not in err["message"]:
        raise SystemExit(f"FAIL: {name} on the read-only socket: {err or 'succeeded'}")
c.call_ok(rc.PROC_DOMAIN_INTERFACE_ADDRESSES, dom + rc.xdr_uint(0) + rc.xdr_uint(0))
print("ok   the read-only socket refuses the guest-agent queries, allows the rest")
PY

# Bad sizes get a clear error before anything is allocated, and the
# connection goes on.
rawpy "$REMVIRTD_SOCK" <<'PY'
import sys
import rawclient as rc

c = rc.Client(sys.argv[1])
c.open_connection()
dom = c.lookup("test")
u, i = rc.xdr_uint, rc.xdr_int
for what, proc, body in (
        ("vcpus: maxinfo past 16384", rc.PROC_DOMAIN_GET_VCPUS, dom + i(16385) + i(1)),
        ("vcpus: maps past 8 MiB", rc.PROC_DOMAIN_GET_VCPUS, dom + i(16384) + i(1024)),
        ("vcpus: negative maplen", rc.PROC_DOMAIN_GET_VCPUS, dom + i(1) + i(-1)),
        ("pin info: maps past 8 MiB", rc.PROC_DOMAIN_GET_VCPU_PIN_INFO,
         dom + i(16384) + i(2048) + u(0)),
        ("emulator pin: maplen past 2048", rc.PROC_DOMAIN_GET_EMULATOR_PIN_INFO,
         dom + i(2049) + u(0)),
        ("memory stats: maxStats past 1024", rc.PROC_DOMAIN_MEMORY_STATS, dom + u(1025) + u(0)),
        ("cells: maxcells past 1024", rc.PROC_NODE_GET_CELLS_FREE_MEMORY, i(0) + i(1025)),
        ("cpu stats: nparams past 16", rc.PROC_NODE_GET_CPU_STATS, i(-1) + i(17) + u(0)),
        ("memory tuning: nparams past 16", rc.PROC_DOMAIN_GET_MEMORY_PARAMETERS,
         dom + i(17) + u(0)),
        ("memory tuning: negative nparams", rc.PROC_DOMAIN_GET_MEMORY_PARAMETERS,
         dom + i(-1) + u(0))):
    hdr, body = c.call(proc, body)
    if hdr.status != rc.STATUS_ERROR:
        raise SystemExit(f"FAIL: {what}: the call succeeded")
    err = rc.decode_error(body)
    if err["code"] != rc.ERR_RPC:
        raise SystemExit(f"FAIL: {what}: error {err}")
    print(f"ok   {what}: {err['message']}")
c.call_ok(rc.PROC_DOMAIN_GET_VCPUS, dom + i(2) + i(1))
print("ok   the connection still answers")
PY

# The setters' checks, raw, last (they change "test").
rawpy "$REMVIRTD_SOCK" < "$top_srcdir/tests/interop/tune-checks.py" > "$RV_TMP/tune-remvirtd.txt"

status=$json_status
if ! diff -u "$RV_TMP/xml-libvirtd.txt" "$RV_TMP/xml-remvirtd.txt"; then
    echo "the tuning in dumpxml differs: remvirtd (+++), libvirtd (---)"
    status=1
fi
grep -q "<memtune>" "$RV_TMP/xml-remvirtd.txt" || { echo "no <memtune> in dumpxml"; status=1; }
if ! diff -u "$RV_TMP/tune-libvirtd.txt" "$RV_TMP/tune-remvirtd.txt"; then
    echo "the setters answer raw calls differently: remvirtd (+++), libvirtd (---)"
    status=1
fi
if ! diff -u "$RV_TMP/tool-virsh.txt" "$RV_TMP/tool-rvsh.txt"; then
    echo "rvsh's output differs from virsh's (--- virsh, +++ rvsh)"
    status=1
fi
if ! diff -u "$RV_TMP/libvirtd.txt" "$RV_TMP/remvirtd.txt"; then
    echo "virsh prints differently against remvirtd (+++) than against libvirtd (---)"
    status=1
fi
if [ -f "$RV_TMP/py-libvirtd.txt" ]; then
    if ! diff -u "$RV_TMP/py-libvirtd.txt" "$RV_TMP/py-remvirtd.txt"; then
        echo "python3-libvirt sees remvirtd (+++) differently from libvirtd (---)"
        status=1
    fi
else
    echo "# python3-libvirt not installed: its checks skipped"
fi
exit $status
