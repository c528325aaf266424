#!/usr/bin/env bash
# IOThreads on remvirtd's QEMU driver, side by side with libvirtd's
# (start_libvirtd_qemu): the same definitions and virsh commands against
# both, their transcripts compared.
#   - <iothreads>, <iothreadids>, <cputune><iothreadpin> and a disk's
#     <driver iothread>: dumpxml as libvirtd writes them (ids filled in),
#     and libvirtd's refusals of bad ones (id 0, duplicates, a disk or a
#     pin naming an IOThread that does not exist, a disk off virtio);
#   - iothreadinfo, iothreadadd, iothreadpin, iothreaddel, iothreadset
#     --config on a domain that is shut off, and the errors of --live;
#   - a running TCG guest: QEMU started with its IOThreads and the disk in
#     one (-object iothread, virtio-blk-pci iothread=); iothreadinfo and
#     iothreadpin live (the thread's affinity), iothreadadd and iothreaddel
#     live (object-add, object-del; one a disk uses refused), iothreadset
#     (qom-set) and domstats --iothread; a disk hotplugged into an
#     IOThread (one that does not exist refused); the TUNABLE event of a live pin
#     (python3-libvirt); the threads' affinity in /proc;
#   - --config changes on disk: a restarted remvirtd reads them back.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu cmp

disk() # TARGET BUS IOTHREAD
{
    echo "<disk type='file' device='disk'><driver name='qemu' type='raw'${3:+ iothread='$3'}/><source file='$OUT/$1.img'/><target dev='$1' bus='$2'/></disk>"
}
iothreads() # NAME EXTRA DISKS: a domain with EXTRA after <vcpu>
{
    qemu_domain_xml "$1" "$3" | sed "s|<vcpu>1</vcpu>|<vcpu>2</vcpu>$2|"
}
iothreads d "<iothreads>3</iothreads><iothreadids><iothread id='2'/><iothread id='5' thread_pool_min='0' thread_pool_max='2'/></iothreadids><cputune><iothreadpin iothread='5' cpuset='0'/></cputune>" \
    "$(disk vda virtio 2)$(disk vdb virtio)" > "$OUT/d.xml"
iothreads e "<iothreads>2</iothreads>" "$(disk vda virtio 1)" > "$OUT/e.xml"
iothreads f "<iothreads>1</iothreads>" "<disk type='file' device='disk'><driver name='qemu' type='raw' cache='none' io='native' discard='unmap' detect_zeroes='unmap' iothread='1' copy_on_read='on'/><source file='$OUT/vdb.img'/><target dev='vdb' bus='virtio'/></disk>" > "$OUT/f.xml"
iothreads g "<iothreads>2</iothreads>" "<controller type='scsi' index='0' model='virtio-scsi'><driver iothread='2'/></controller>" > "$OUT/g.xml"
iothreads bad11 "<iothreads>1</iothreads>" "<controller type='scsi' index='0' model='virtio-scsi'><driver iothread='3'/></controller>" > "$OUT/bad11.xml"
iothreads bad0 "<iothreadids><iothread id='0'/></iothreadids>" "" > "$OUT/bad0.xml"
iothreads bad1 "<iothreadids><iothread id='1'/><iothread id='1'/></iothreadids>" "" > "$OUT/bad1.xml"
iothreads bad2 "<iothreads>1</iothreads>" "$(disk vda virtio 2)" > "$OUT/bad2.xml"
iothreads bad3 "<iothreads>1</iothreads><cputune><iothreadpin iothread='2' cpuset='0'/></cputune>" "" > "$OUT/bad3.xml"
iothreads bad4 "<iothreads>1</iothreads>" "$(disk sda sata 1)" > "$OUT/bad4.xml"
iothreads bad5 "<iothreads>x</iothreads>" "" > "$OUT/bad5.xml"
iothreads bad6 "<iothreadids><iothread id='x'/></iothreadids>" "" > "$OUT/bad6.xml"
iothreads bad7 "<iothreads>1</iothreads><cputune><iothreadpin cpuset='0'/></cputune>" "" > "$OUT/bad7.xml"
iothreads bad8 "<iothreadids><iothread id='1' thread_pool_min='3' thread_pool_max='2'/></iothreadids>" "" > "$OUT/bad8.xml"
iothreads bad9 "<iothreadids><iothread id='1' thread_pool_min='-1'/></iothreadids>" "" > "$OUT/bad9.xml"
iothreads bad10 "<iothreads>1</iothreads>" "$(disk vda virtio 0)" > "$OUT/bad10.xml"
disk vdb virtio 2 > "$OUT/vdb.xml"
disk vdb virtio 9 > "$OUT/vdb-bad.xml"
qemu_guest_xml r "<iothreads>2</iothreads><cputune><emulatorpin cpuset='0'/><iothreadpin iothread='2' cpuset='0'/></cputune>" |
    sed "s|<devices>|<devices>$(disk vda virtio 1 | sed 's/|/\\|/g')|" > "$OUT/r.xml"

# Only what is about IOThreads in a domain's XML.
threads_only() { grep -E 'iothread|cputune' || true; }

steps=(
    "define d.xml"
    "mask:dumpxml d"
    "iothreadinfo d"
    "iothreadinfo d --config"
    "iothreadinfo d --live"
    "iothreadadd d 7 --config"
    "iothreadadd d 7 --config"
    "iothreadadd d 0 --config"
    "iothreadadd d 8 --live"
    "iothreadadd d 8"
    "iothreadpin d 7 1 --config"
    "iothreadpin d 9 1 --config"
    "iothreadpin d 7 1 --live"
    "iothreadinfo d"
    "mask:dumpxml d"
    "iothreaddel d 2 --config"
    "iothreaddel d 9 --config"
    "iothreaddel d 7 --config"
    "iothreaddel d 0"
    "iothreaddel d 1"
    "iothreadset d 5 --poll-max-ns 100"
    "iothreadset d 5 --poll-max-ns 100 --config"
    "iothreadinfo d"
    "mask:dumpxml d"
    "define e.xml"
    "mask:dumpxml e"
    "define f.xml"
    "mask:dumpxml f"
    "undefine f"
    "define g.xml"
    "mask:dumpxml g"
    "iothreaddel g 2 --config"
    "iothreaddel g 1 --config"
    "mask:dumpxml g"
    "undefine g"
    "define bad0.xml"
    "define bad1.xml"
    "define bad2.xml"
    "define bad3.xml"
    "define bad4.xml"
    "define bad5.xml"
    "define bad6.xml"
    "define bad7.xml"
    "define bad8.xml"
    "define bad9.xml"
    "define bad10.xml"
    "define bad11.xml"
    "define r.xml"
    "start r"
    "iothreadinfo r"
    "iothreadinfo r --config"
    "iothreadpin r 1 0"
    "iothreadinfo r"
    "iothreadpin r 2 0 --live --config"
    "iothreadinfo r --config"
    "iothreadpin r 9 0"
    "iothreadadd r 3"
    "iothreadadd r 3"
    "iothreadadd r 4 --live --config"
    "iothreadinfo r"
    "iothreadinfo r --config"
    "mask:dumpxml r"
    "iothreaddel r 1"
    "iothreaddel r 3"
    "iothreaddel r 9"
    "iothreaddel r 4 --live --config"
    "iothreadinfo r"
    "iothreadset r 2 --poll-max-ns 1000 --poll-grow 2 --poll-shrink 1"
    "iothreadset r 9 --poll-max-ns 1000"
    "iothreadset r 2 --poll-max-ns 1000 --config"
    "attach-device r vdb-bad.xml --live"
    "attach-device r vdb.xml --live"
    "iothreaddel r 2"
    "iothreadset r 2 --aio-max-batch 5"
    "iothreadset r 2 --thread-pool-min 1 --thread-pool-max 4"
    "domstats r --iothread"
    "mask:dumpxml r"
)
after=(
    "destroy r"
    "mask:dumpxml r"
    "undefine r"
    "undefine d"
    "undefine e"
)
before=("${steps[@]}")

session()
{
    local uri=$1 uri_ro=$2 name=$3
    for t in vda vdb; do
        rm -f "$OUT/$t.img"
        qemu-img create -q -f raw "$OUT/$t.img" 10M
    done
    steps=("${before[@]}")
    virsh_transcript "$uri" "$uri_ro" "$OUT" threads_only > "$OUT/$name.transcript"
    # The TUNABLE event of a live pin (python3-libvirt's callback).
    "$SYSTEM_PYTHON3" - "$uri" > "$OUT/$name.event" <<'PY'
import sys, time, libvirt
libvirt.virEventRegisterDefaultImpl()
c = libvirt.open(sys.argv[1])
d = c.lookupByName("r")
got = []
c.domainEventRegisterAny(d, libvirt.VIR_DOMAIN_EVENT_ID_TUNABLE,
                         lambda conn, dom, params, opaque: got.append(params), None)
libvirt.virEventAddTimeout(200, lambda timer, opaque: None, None)
d.pinIOThread(2, (True, True), libvirt.VIR_DOMAIN_AFFECT_LIVE)
end = time.time() + 20
while not got and time.time() < end:
    libvirt.virEventRunDefaultImpl()
print(got)
PY
    [ "$name" = libvirtd ] || iothread_affinity
    # What virsh does not send: id 0, flags libvirt does not know, a
    # parameter of the wrong type or name, an empty CPU map.
    "$SYSTEM_PYTHON3" - "$uri" >> "$OUT/$name.event" <<'PY'
import sys, libvirt
c = libvirt.open(sys.argv[1])
d = c.lookupByName("r")
def show(what, f):
    try:
        print(what, "->", f())
    except libvirt.libvirtError as e:
        print(what, "-> error", e.get_error_code(), e.get_error_domain(), e.get_error_message())
show("add 0", lambda: d.addIOThread(0, 0))
show("del 0", lambda: d.delIOThread(0, 0))
show("pin 0", lambda: d.pinIOThread(0, (True,), 0))
show("pin empty", lambda: d.pinIOThread(1, (False, False), 0))
show("add flag 4", lambda: d.addIOThread(9, 4))
show("del flag 4", lambda: d.delIOThread(9, 4))
show("pin flag 4", lambda: d.pinIOThread(1, (True,), 4))
show("info flag 4", lambda: d.ioThreadInfo(4))
show("set unknown", lambda: d.setIOThreadParams(2, {"poll_bogus": 1}, 0))
show("set flag 4", lambda: d.setIOThreadParams(2, {libvirt.VIR_DOMAIN_IOTHREAD_POLL_MAX_NS: 5}, 4))
show("set 0", lambda: d.setIOThreadParams(0, {libvirt.VIR_DOMAIN_IOTHREAD_POLL_MAX_NS: 5}, 0))
show("set empty", lambda: d.setIOThreadParams(2, {}, 0))
show("info", lambda: d.ioThreadInfo(libvirt.VIR_DOMAIN_AFFECT_CONFIG))
PY
    steps=("${after[@]}")
    virsh_transcript "$uri" "$uri_ro" "$OUT" threads_only >> "$OUT/$name.transcript"
}

# remvirtd's QEMU: its IOThreads' threads (named "IO iothreadN" by QEMU's
# debug-threads) where iothreadpin put them, and on its command line.
iothread_affinity()
{
    local pid t all
    pid=$(qemu_pids "$QEMU_DIR/run/")
    all=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
    for t in /proc/"$pid"/task/*; do
        case $(cat "$t/comm") in
        "IO iothread1") echo "iothread1 $(sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status")" ;;
        "IO iothread2") echo "iothread2 $(sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status")" ;;
        esac
    done | sort > "$OUT/affinity"
    printf 'iothread1 0\niothread2 %s\n' "$all" > "$OUT/affinity.expected"
    same "$OUT/affinity.expected" "$OUT/affinity" "the IOThreads' threads pinned where iothreadpin said"
    grep -q -- "-object iothread,id=iothread1 -object iothread,id=iothread2 " "$QEMU_DIR/run/r.log" &&
        grep -q -- "virtio-blk-pci,iothread=iothread1,drive=drive-vda" "$QEMU_DIR/run/r.log" ||
        { show "$QEMU_DIR/run/r.log"; fail "QEMU was not started with the IOThreads and vda in one"; }
    echo "ok   QEMU started with -object iothread and vda's virtio-blk-pci iothread="
}

session "$LIBVIRTD_QEMU_URI" "$LIBVIRTD_QEMU_URI_RO" libvirtd
session "$QEMU_URI" "${QEMU_URI/remvirt-sock/remvirt-sock-ro}" remvirtd
same "$OUT/libvirtd.transcript" "$OUT/remvirtd.transcript" "IOThreads: remvirtd as libvirtd"
same "$OUT/libvirtd.event" "$OUT/remvirtd.event" "the TUNABLE event of iothreadpin --live"
grep -q "cputune.iothreadpin2" "$OUT/remvirtd.event" || fail "no TUNABLE event: $(cat "$OUT/remvirtd.event")"

# A definition's IOThreads changed with --config are on disk: a restarted
# remvirtd reads them back.
V=(virsh -q -c "$QEMU_URI")
"${V[@]}" define "$OUT/e.xml" > /dev/null
"${V[@]}" iothreadadd e 6 --config
"${V[@]}" iothreadpin e 6 0 --config
"${V[@]}" dumpxml e | threads_only > "$OUT/e.before"
stop_remvirtd
start_remvirtd_qemu
"${V[@]}" dumpxml e | threads_only > "$OUT/e.after"
same "$OUT/e.before" "$OUT/e.after" "IOThreads of a definition after a restart of remvirtd"
grep -q "<iothreadpin iothread='6' cpuset='0'/>" "$OUT/e.after" || fail "iothreadpin --config lost"
