#!/usr/bin/python3
"""Backup jobs on a running QEMU guest, through python3-libvirt.

    backup-checks.py URI DIR

The guest g runs with vda on DIR/vda.qcow2 and vdb on DIR/vdb.img.
Prints a transcript (each call's result or error, the BLOCK_JOB,
BLOCK_JOB_2 and JOB_COMPLETED events that came, the backup's XML, the
job's statistics) that test-qemu-backup.sh compares between libvirtd's
QEMU driver and remvirtd's, DIR masked.  It checks itself that a push's
targets and a pull's NBD exports hold what the disks hold.
"""

import os
import re
import subprocess
import sys
import threading
import time

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

uri, tmp = sys.argv[1], sys.argv[2]
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
events = []
lock = threading.Lock()


def mask(s):
    s = str(s).replace(tmp, "DIR")
    s = re.sub(r"index='\d+'", "index='N'", s)
    return re.sub(r"\.\d{10}'", ".TIME'", s)


def on_block(kind):
    def cb(c, d, disk, typ, status, opaque):
        with lock:
            events.append(f"{kind} {mask(disk)} type {typ} status {status}")
    return cb


def on_completed(c, d, params, opaque):
    p = {k: v for k, v in params.items() if k != "time_elapsed"}
    with lock:
        events.append(f"JOB_COMPLETED {sorted(p.items())}")


conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB, on_block("BLOCK_JOB"), None)
conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_BLOCK_JOB_2, on_block("BLOCK_JOB_2"), None)
conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_JOB_COMPLETED, on_completed, None)


def loop():
    while True:
        libvirt.virEventRunDefaultImpl()


threading.Thread(target=loop, daemon=True).start()
dom = conn.lookupByName("g")


def wait_completed(timeout=60):
    """The events until JOB_COMPLETED and the disks' last ones, sorted
    (libvirtd sends the last disk's after JOB_COMPLETED)."""
    end = time.time() + timeout
    while time.time() < end:
        with lock:
            if any(e.startswith("JOB_COMPLETED") for e in events):
                break
        time.sleep(0.05)
    else:
        print("no JOB_COMPLETED event")
    time.sleep(0.5)
    with lock:
        got = sorted(events)
        events.clear()
    for e in got:
        print("event:", e)


def stats(flags=0):
    s = dom.jobStats(flags)
    return sorted((k, v) for k, v in s.items() if k != "time_elapsed")


def files():
    return sorted(f for f in os.listdir(tmp) if not f.endswith((".xml", "console")))


def same_content(a, fa, b, fb):
    r = subprocess.run(["qemu-img", "compare", "-U", "-f", fa, "-F", fb, a, b],
                       capture_output=True, text=True)
    return "same content" if r.returncode == 0 else f"differ: {r.stdout.strip()} {r.stderr.strip()}"


def begin(xml, cp=None, flags=0):
    return lambda: dom.backupBegin(xml, cp, flags)


vda, vdb = f"{tmp}/vda.qcow2", f"{tmp}/vdb.img"
show("no backup: xml", lambda: dom.backupGetXMLDesc(0))
show("no backup: abort", lambda: dom.abortJob())

# Push, full, to a qcow2 and a raw target.
push = (f"<domainbackup mode='push'><disks>"
        f"<disk name='vda' type='file'><target file='{tmp}/b-vda.qcow2'/><driver type='qcow2'/></disk>"
        f"<disk name='vdb' type='file'><target file='{tmp}/b-vdb.raw'/><driver type='raw'/></disk>"
        f"</disks></domainbackup>")
show("push", begin(push))
wait_completed()
show("push: completed stats", lambda: stats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED))
show("push: vda target", lambda: same_content(vda, "qcow2", f"{tmp}/b-vda.qcow2", "qcow2"))
show("push: vdb target", lambda: same_content(vdb, "raw", f"{tmp}/b-vdb.raw", "raw"))
show("push: target formats", lambda: [subprocess.run(["qemu-img", "info", "-U", f], capture_output=True,
                                                     text=True).stdout.splitlines()[1]
                                      for f in (f"{tmp}/b-vda.qcow2", f"{tmp}/b-vdb.raw")])
show("push: no job", lambda: dom.jobInfo()[0])
show("push: no backup xml", lambda: dom.backupGetXMLDesc(0))

# Errors: nothing changes.
before = files()
show("target exists", begin(push))
show("bad xml", begin("<domainbackup"))
show("bad mode", begin("<domainbackup mode='foo'/>"))
show("pull without server", begin("<domainbackup mode='pull'/>"))
show("incremental", begin("<domainbackup><incremental>c1</incremental></domainbackup>"))
show("unknown disk", begin("<domainbackup><disks><disk name='vdz' backup='no'/></disks></domainbackup>"))
show("wrong root", begin("<domaincheckpoint/>"))
show("bad flags", begin(push, None, 8))
show("server fails", begin(f"<domainbackup mode='pull'><server transport='unix' socket='{tmp}/no/x.sock'/>"
                           f"<disks><disk name='vda' type='file'><scratch file='{tmp}/s-fail.qcow2'/></disk>"
                           f"</disks></domainbackup>"))
show("files unchanged", lambda: files() == before)
show("no job after errors", lambda: dom.jobInfo()[0])

# Push with every default: qcow2 files beside the disks.
show("push defaults", begin("<domainbackup/>"))
wait_completed()
made = [f for f in files() if re.search(r"\.\d{10}$", f)]
show("push defaults: files", lambda: sorted(re.sub(r"\d{10}$", "TIME", f) for f in made))
for f in made:
    src = vda if f.startswith("vda") else vdb
    show(f"push defaults: {f[:3]}", lambda: same_content(src, "qcow2" if src == vda else "raw",
                                                          f"{tmp}/{f}", "qcow2"))
    os.unlink(f"{tmp}/{f}")

# Pull over a Unix socket: the export read, then the job ended by abort.
sock = f"{tmp}/nbd.sock"
pull = (f"<domainbackup mode='pull'><server transport='unix' socket='{sock}'/><disks>"
        f"<disk name='vda' type='file'><scratch file='{tmp}/scratch-vda.qcow2'/></disk>"
        f"<disk name='vdb' backup='no'/></disks></domainbackup>")
show("pull", begin(pull))
show("pull: xml", lambda: mask(dom.backupGetXMLDesc(0)))
show("pull: job info", lambda: dom.jobInfo()[0])
show("pull: job stats", stats)
r = subprocess.run(["qemu-img", "convert", "-f", "raw", "-O", "raw", f"nbd+unix:///vda?socket={sock}",
                    f"{tmp}/pulled.raw"], capture_output=True, text=True)
show("pull: read the export", lambda: "read" if r.returncode == 0 else r.stderr)
show("pull: export content", lambda: same_content(vda, "qcow2", f"{tmp}/pulled.raw", "raw"))
os.unlink(f"{tmp}/pulled.raw")
show("pull: abort", lambda: dom.abortJob())
wait_completed()
show("pull: completed stats", lambda: stats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED))
show("pull: files after", lambda: files() == before)
show("pull: no backup xml", lambda: dom.backupGetXMLDesc(0))

# Pull with default scratch files, over TCP.
port = sys.argv[3] if len(sys.argv) > 3 else "10899"
show("pull tcp", begin(f"<domainbackup mode='pull'><server name='127.0.0.1' port='{port}'/></domainbackup>"))
show("pull tcp: xml", lambda: mask(dom.backupGetXMLDesc(0)))
r = subprocess.run(["qemu-img", "compare", "-U", "-f", "raw", "-F", "raw", vdb,
                    f"nbd://127.0.0.1:{port}/vdb"], capture_output=True, text=True)
show("pull tcp: vdb export content", lambda: "same content" if r.returncode == 0 else r.stdout + r.stderr)
show("pull tcp: abort", lambda: dom.abortJob())
wait_completed()
show("pull tcp: files after", lambda: files() == before)

# A push aborted while it runs: cancelled, its target removed.
big = f"{tmp}/big.img"
subprocess.run(["qemu-img", "create", "-q", "-f", "raw", big, "512M"], check=True)
subprocess.run(["qemu-io", "-f", "raw", "-c", "write -P 3 0 512M", big], check=True, capture_output=True)
os.chmod(big, 0o666)
dom.attachDeviceFlags(f"<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='{big}'/>"
                      "<target dev='vdc' bus='virtio'/></disk>", libvirt.VIR_DOMAIN_AFFECT_LIVE)
show("push to abort", begin("<domainbackup><disks><disk name='vda' backup='no'/><disk name='vdb' backup='no'/>"
                            f"<disk name='vdc' type='file'><target file='{tmp}/b-vdc.qcow2'/></disk>"
                            "</disks></domainbackup>"))
show("push to abort: abort", lambda: dom.abortJob())
# (how far it got differs from run to run)
end = time.time() + 60
while time.time() < end and not any(e.startswith("JOB_COMPLETED") for e in list(events)):
    time.sleep(0.05)
# (libvirtd tells the cancelled disk's end well after JOB_COMPLETED)
time.sleep(2)
with lock:
    got = sorted(re.sub(r"\('disk_(processed|remaining)', \d+\)", r"('disk_\1', N)", e) for e in events)
    events.clear()
for e in got:
    print("event:", e)
show("push to abort: completed stats",
     lambda: [(k, "N" if k in ("disk_processed", "disk_remaining") else v)
              for k, v in stats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED)])
show("push to abort: target left", lambda: os.path.exists(f"{tmp}/b-vdc.qcow2"))
os.unlink(big)
