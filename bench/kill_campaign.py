#!/usr/bin/python3
"""A random-kill campaign against remvirtd's QEMU driver (issue 26).

A private remvirtd (its QEMU config, run and save directories in a temp
dir) serves two clients (python3-libvirt), each running random operations
of many kinds on objects of its own: domains (define with a new memory
size, undefine --managed-save --snapshots-metadata, setmem --config,
start, destroy, managedsave, start from the image, suspend, resume,
snapshot-create and snapshot-delete of the shut-off domain's qcow2 disk),
networks, storage pools, secrets (define, set-value, undefine), network
filters, and volumes in a shared pool.  Each client keeps a journal: the
state its acknowledged operations left (its model) and the operation in
flight, if any.

The killer lets them run for a random 0.1 to 1.5 s, stops them (SIGSTOP),
kills remvirtd with SIGKILL, starts it again, waits for the guests'
states to settle and checks:
  - every client's objects are in the state its acknowledged operations
    left, or in the state the operation in flight would leave (an
    acknowledged operation is never lost, one in flight is whole or not);
  - no file refers to a missing one: no autostart link without its
    definition, no tombstone, no partial save image or volume, a domain
    is shut off (saved) exactly when its managed image is there, the
    snapshots a defined shut-off domain lists are those its qcow2 image
    holds, and there is one QEMU per active domain and no other;
  - the definitions on disk are the ones remvirtd lists.
Then it lets the clients go on (each re-reads its objects' state after an
error).  It prints the kills, the operations acknowledged, and each
inconsistency found (target: none).

    bench/run-kill-campaign.sh [--kills N] [--seed S] [--keep]
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import libvirt

libvirt.registerErrorHandler(lambda ctx, err: None, None)

NDOMS = 2
NOBJS = 2       # networks, pools, secrets, filters per client
NVOLS = 3


# ---------------------------------------------------------------- the daemon

class Daemon:
    def __init__(self, binary, top):
        self.binary = binary
        self.top = top
        self.etc = os.path.join(top, "etc")
        self.run = os.path.join(top, "run")
        self.save = os.path.join(top, "save")
        self.sock = os.path.join(top, "remvirt-sock")
        self.uri = "qemu+unix:///system?socket=" + self.sock
        self.conf = os.path.join(top, "remvirtd.conf")
        with open(self.conf, "w") as f:
            f.write('unix_sock_dir = "%s"\n' % top)
            f.write('log_outputs = "3:file:%s/remvirtd.log"\n' % top)
            f.write('qemu_config_dir = "%s"\n' % self.etc)
            f.write('qemu_run_dir = "%s"\n' % self.run)
            f.write('qemu_save_dir = "%s"\n' % self.save)
        self.proc = None

    def start(self):
        for name in ("remvirt-sock", "remvirt-sock-ro", "remvirt-admin-sock", "remvirtd.pid"):
            try:
                os.unlink(os.path.join(self.top, name))
            except FileNotFoundError:
                pass
        err = open(os.path.join(self.top, "remvirtd.stderr"), "a")
        self.proc = subprocess.Popen([self.binary, "-f", self.conf, "--pidfile",
                                      os.path.join(self.top, "remvirtd.pid")],
                                     stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("remvirtd exited at start-up with %d" % self.proc.returncode)
            try:
                c = libvirt.open(self.uri)
                c.listAllDomains(0)     # answered once the QEMU driver has loaded
                c.close()
                return
            except libvirt.libvirtError:
                time.sleep(0.05)
        raise RuntimeError("remvirtd did not start in 60 s")

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()

    def qemu_pids(self, probe=False):
        """The guests' QEMUs (with probe: the host CPU probe's too, which
        runs from the first QEMU connection until it answers)."""
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmd = f.read()
                if ("unix:" + self.run + "/").encode() in cmd and \
                        (probe or b"cpu-probe.qmp" not in cmd):
                    pids.append(int(pid))
            except OSError:
                pass
        return pids


# ---------------------------------------------------------------- objects and their XML

def dom_xml(top, name, mem_kib, uuid=None):
    return """<domain type='qemu'><name>%s</name>%s
<memory unit='KiB'>131072</memory><currentMemory unit='KiB'>%d</currentMemory><vcpu>1</vcpu>
<os><type arch='x86_64' machine='pc'>hvm</type></os>
<devices><disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
<source file='%s/disks/%s.qcow2'/><target dev='vda' bus='virtio'/></disk></devices>
</domain>""" % (name, "<uuid>%s</uuid>" % uuid if uuid else "", mem_kib, top, name)


def net_xml(name, br):
    return "<network><name>%s</name><forward mode='bridge'/><bridge name='%s'/></network>" % (name, br)


def pool_xml(top, name):
    return "<pool type='dir'><name>%s</name><target><path>%s/pools/%s</path></target></pool>" % (
        name, top, name)


def secret_uuid(client, k):
    return "6bd1a1a2-8d33-4c3e-9a0b-%012d" % (client * 100 + k)


def secret_xml(client, k):
    return ("<secret ephemeral='no' private='no'><uuid>%s</uuid><usage type='volume'>"
            "<volume>/campaign/c%d/s%d</volume></usage></secret>" % (secret_uuid(client, k), client, k))


def filter_xml(name):
    return ("<filter name='%s' chain='root'><rule action='accept' direction='out'>"
            "<all/></rule></filter>" % name)


# ---------------------------------------------------------------- observing

def qcow2_snapshots(path):
    try:
        out = subprocess.run(["qemu-img", "snapshot", "-U", "-l", path], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return sorted(line.split()[1] for line in out.splitlines()[2:] if line.split())


def observe(conn, client):
    """The client's objects as remvirtd has them (a JSON-able model)."""
    p = "c%d-" % client
    m = {"doms": {}, "nets": [], "pools": [], "secrets": {}, "filters": [], "vols": []}
    for d in conn.listAllDomains(0):
        if not d.name().startswith(p) or not d.isPersistent():
            continue
        xml = d.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
        mem = int(xml.split("<currentMemory unit='KiB'>")[1].split("<")[0])
        state, reason = d.state()
        active = d.isActive() == 1
        saved = bool(d.hasManagedSaveImage(0))
        snaps = sorted(s.getName() for s in d.listAllSnapshots(0))
        m["doms"][d.name()] = {"mem": mem, "active": active, "saved": saved, "snaps": snaps}
    m["nets"] = sorted(n.name() for n in conn.listAllNetworks(0)
                       if n.name().startswith(p) and n.isPersistent())
    m["pools"] = sorted(x.name() for x in conn.listAllStoragePools(0)
                        if x.name().startswith(p) and x.isPersistent())
    for s in conn.listAllSecrets(0):
        if s.usageID().startswith("/campaign/c%d/" % client):
            try:
                value = s.value().decode()
            except libvirt.libvirtError:
                value = None
            m["secrets"][s.UUIDString()] = value
    m["filters"] = sorted(f.name() for f in conn.listAllNWFilters(0) if f.name().startswith(p))
    pool = conn.storagePoolLookupByName("campaign")
    m["vols"] = sorted(v.name() for v in pool.listAllVolumes(0) if v.name().startswith(p))
    return m


# ---------------------------------------------------------------- a client

class Client:
    def __init__(self, n, uri, top, seed, journal):
        self.n = n
        self.uri = uri
        self.top = top
        self.rng = random.Random(seed)
        self.journal = journal
        self.acks = 0
        self.tries = 0
        self.conn = None
        self.model = None
        self.pending = None

    def write_journal(self):
        tmp = self.journal + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"acked": self.model, "pending": self.pending, "acks": self.acks,
                       "tries": self.tries}, f)
        os.replace(tmp, self.journal)

    def connect(self):
        while True:
            try:
                self.conn = libvirt.open(self.uri)
                self.model = observe(self.conn, self.n)
                self.pending = None
                self.write_journal()
                return
            except libvirt.libvirtError:
                self.conn = None
                time.sleep(0.1)

    def name(self, kind, k):
        return "c%d-%s%d" % (self.n, kind, k)

    def ops(self):
        """(description, precondition, action, model-after) for one random op."""
        m = self.model
        r = self.rng
        kind = r.choice(["dom"] * 6 + ["net", "pool", "secret", "filter", "vol", "vol"])
        conn = self.conn
        new = json.loads(json.dumps(m))
        if kind == "dom":
            name = self.name("d", r.randrange(NDOMS))
            d = m["doms"].get(name)
            nd = new["doms"].get(name)
            if not d:
                mem = r.randrange(64, 129) * 1024
                disk = "%s/disks/%s.qcow2" % (self.top, name)

                def act():
                    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", disk, "16M"],
                                   check=True)
                    conn.defineXML(dom_xml(self.top, name, mem))
                new["doms"][name] = {"mem": mem, "active": False, "saved": False, "snaps": []}
                return "define " + name, act, new
            dom = conn.lookupByName(name)
            choices = []
            if not d["active"]:
                choices += ["undefine", "start", "setmem", "define"]
                if not d["saved"]:
                    choices += ["snap-create", "snap-create"]
                    if d["snaps"]:
                        choices += ["snap-delete"]
            else:
                choices += ["destroy", "managedsave", "setmem", "suspend-resume"]
            op = r.choice(choices)
            if op == "undefine":
                del new["doms"][name]
                return op + " " + name, lambda: dom.undefineFlags(
                    libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE |
                    libvirt.VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA), new
            if op == "start":
                nd["active"], nd["saved"] = True, False
                return op + " " + name, dom.create, new
            if op in ("setmem", "define"):
                mem = r.randrange(64, 129) * 1024
                nd["mem"] = mem
                if op == "define":
                    uuid = dom.UUIDString()
                    return op + " " + name, lambda: conn.defineXML(
                        dom_xml(self.top, name, mem, uuid)), new
                return "setmem --config %s %d" % (name, mem), lambda: dom.setMemoryFlags(
                    mem, libvirt.VIR_DOMAIN_AFFECT_CONFIG), new
            if op == "snap-create":
                snap = "s%d" % r.randrange(1000000)
                nd["snaps"] = sorted(d["snaps"] + [snap])
                xml = "<domainsnapshot><name>%s</name></domainsnapshot>" % snap
                return "snapshot-create %s %s" % (name, snap), lambda: dom.snapshotCreateXML(xml, 0), new
            if op == "snap-delete":
                snap = r.choice(d["snaps"])
                nd["snaps"] = [s for s in d["snaps"] if s != snap]
                return "snapshot-delete %s %s" % (name, snap), lambda: dom.snapshotLookupByName(
                    snap, 0).delete(0), new
            if op == "destroy":
                nd["active"] = False
                return op + " " + name, dom.destroy, new
            if op == "managedsave":
                nd["active"], nd["saved"] = False, True
                return op + " " + name, lambda: dom.managedSave(0), new
            # suspend-resume: no change of the model
            return "suspend+resume " + name, lambda: (dom.suspend(), dom.resume()), new
        k = r.randrange(NOBJS)
        if kind == "net":
            name = self.name("n", k)
            if name in m["nets"]:
                new["nets"].remove(name)
                return "net-undefine " + name, lambda: conn.networkLookupByName(name).undefine(), new
            new["nets"] = sorted(m["nets"] + [name])
            return "net-define " + name, lambda: conn.networkDefineXML(
                net_xml(name, "rvkc%d%d" % (self.n, k))), new
        if kind == "pool":
            name = self.name("p", k)
            if name in m["pools"]:
                new["pools"].remove(name)
                return "pool-undefine " + name, lambda: conn.storagePoolLookupByName(name).undefine(), new
            new["pools"] = sorted(m["pools"] + [name])
            return "pool-define " + name, lambda: conn.storagePoolDefineXML(
                pool_xml(self.top, name), 0), new
        if kind == "secret":
            uuid = secret_uuid(self.n, k)
            if uuid not in m["secrets"]:
                new["secrets"][uuid] = None
                return "secret-define " + uuid, lambda: conn.secretDefineXML(secret_xml(self.n, k), 0), new
            if r.random() < 0.6:
                value = "v%d" % r.randrange(1000000)
                new["secrets"][uuid] = value
                return "secret-set-value " + uuid, lambda: conn.secretLookupByUUIDString(
                    uuid).setValue(value.encode(), 0), new
            del new["secrets"][uuid]
            return "secret-undefine " + uuid, lambda: conn.secretLookupByUUIDString(uuid).undefine(), new
        if kind == "filter":
            name = self.name("f", k)
            if name in m["filters"]:
                new["filters"].remove(name)
                return "nwfilter-undefine " + name, lambda: conn.nwfilterLookupByName(name).undefine(), new
            new["filters"] = sorted(m["filters"] + [name])
            return "nwfilter-define " + name, lambda: conn.nwfilterDefineXML(filter_xml(name)), new
        name = self.name("v", r.randrange(NVOLS))
        pool = conn.storagePoolLookupByName("campaign")
        if name in m["vols"]:
            new["vols"].remove(name)
            return "vol-delete " + name, lambda: pool.storageVolLookupByName(name).delete(0), new
        new["vols"] = sorted(m["vols"] + [name])
        fmt = r.choice(["raw", "qcow2"])
        xml = ("<volume><name>%s</name><capacity>1048576</capacity><target><format type='%s'/>"
               "</target></volume>" % (name, fmt))
        return "vol-create %s (%s)" % (name, fmt), lambda: pool.createXML(xml, 0), new

    def run(self):
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
        self.connect()
        while True:
            try:
                what, act, after = self.ops()
            except libvirt.libvirtError:
                self.connect()
                continue
            self.pending = {"op": what, "model": after}
            self.tries += 1
            self.write_journal()
            try:
                act()
                self.model, self.pending = after, None
                self.acks += 1
                self.write_journal()
            except (libvirt.libvirtError, subprocess.CalledProcessError):
                # Refused, or remvirtd went: its outcome is what remvirtd has.
                try:
                    self.conn.close()
                except libvirt.libvirtError:
                    pass
                self.connect()


def client_main(n, uri, top, seed, journal):
    Client(n, uri, top, seed, journal).run()


# ---------------------------------------------------------------- the checks

def settle(conn, daemon, timeout=60):
    """Until every domain is running, paused or shut off (not starting,
    not in a save) and one QEMU runs per active domain."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            doms = conn.listAllDomains(0)
            busy = any(d.state()[0] == libvirt.VIR_DOMAIN_PAUSED and
                       d.state()[1] in (libvirt.VIR_DOMAIN_PAUSED_STARTING_UP,
                                        libvirt.VIR_DOMAIN_PAUSED_SAVE) for d in doms)
            active = sum(1 for d in doms if d.isActive())
            pool_up = conn.storagePoolLookupByName("campaign").isActive() == 1
            if not busy and pool_up and active == len(daemon.qemu_pids()):
                return True
        except libvirt.libvirtError:
            pass
        time.sleep(0.1)
    return False


def check_files(daemon, conn):
    bad = []
    for sub in ("autostart", "networks/autostart", "storage/autostart"):
        d = os.path.join(daemon.etc, sub)
        for e in os.listdir(d) if os.path.isdir(d) else []:
            link = os.path.join(d, e)
            if os.path.islink(link) and not os.path.exists(link):
                bad.append("a dangling autostart link " + link)
    for e in os.listdir(daemon.etc) if os.path.isdir(daemon.etc) else []:
        if ".xml.undefine-" in e:
            bad.append("a tombstone left: " + e)
    images = set(os.listdir(daemon.save)) if os.path.isdir(daemon.save) else set()
    for e in images:
        if ".save." in e:
            bad.append("a partial save image: " + e)
    pool_dir = os.path.join(daemon.top, "pools", "campaign")
    for e in os.listdir(pool_dir):
        if e.startswith(".rv-new."):
            bad.append("a partial volume: " + e)
    defined = {}
    for d in conn.listAllDomains(0):
        if d.isPersistent():
            defined[d.name()] = d
    on_disk = {e[:-4] for e in os.listdir(daemon.etc) if e.endswith(".xml")}
    if on_disk != set(defined):
        bad.append("definitions on disk %s, listed %s" % (sorted(on_disk), sorted(defined)))
    for name, d in defined.items():
        image = name + ".save" in images
        state, reason = d.state()
        if not d.isActive() and image != (reason == libvirt.VIR_DOMAIN_SHUTOFF_SAVED):
            bad.append("%s is shut off (reason %d) with%s a managed image" % (
                name, reason, "" if image else "out"))
        if d.isActive() and image:
            bad.append("%s is active and has a managed image" % name)
        if not d.isActive():
            disk = os.path.join(daemon.top, "disks", name + ".qcow2")
            held = qcow2_snapshots(disk)
            listed = sorted(s.getName() for s in d.listAllSnapshots(0))
            if held is not None and held != listed:
                bad.append("%s lists snapshots %s, its image holds %s" % (name, listed, held))
    for e in images:
        if e.endswith(".save") and e[:-5] not in defined:
            bad.append("a managed image without its domain: " + e)
    for sub, names in (("networks", [n.name() for n in conn.listAllNetworks(0) if n.isPersistent()]),
                       ("storage", [p.name() for p in conn.listAllStoragePools(0) if p.isPersistent()]),
                       ("nwfilter", [f.name() for f in conn.listAllNWFilters(0)])):
        d = os.path.join(daemon.etc, sub)
        files = {e[:-4] for e in os.listdir(d) if e.endswith(".xml")} if os.path.isdir(d) else set()
        if files != set(names):
            bad.append("%s on disk %s, listed %s" % (sub, sorted(files), sorted(names)))
    return bad


def same_durable(a, b):
    """Models equal in what must survive a kill (an active domain's
    process survives remvirtd too, so all of it)."""
    return a == b


def check_clients(conn, journals):
    bad = []
    for n, path in enumerate(journals):
        try:
            with open(path) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        now = observe(conn, n)
        ok = same_durable(now, j["acked"]) or (j["pending"] and same_durable(now, j["pending"]["model"]))
        if not ok:
            bad.append("client %d: state %s is neither the acknowledged %s nor %s's %s" % (
                n, json.dumps(now), json.dumps(j["acked"]),
                j["pending"]["op"] if j["pending"] else "(no op in flight)",
                json.dumps(j["pending"]["model"]) if j["pending"] else "-"))
    return bad


# ---------------------------------------------------------------- the campaign

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--remvirtd", required=True)
    ap.add_argument("--kills", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--dir")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    # (A background job ignores SIGINT: both end the campaign, cleaned up.)
    def stop(*args):
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    top = a.dir or tempfile.mkdtemp(prefix="rv-kill-campaign.")
    for sub in ("disks", "pools/campaign"):
        os.makedirs(os.path.join(top, sub), exist_ok=True)
    daemon = Daemon(os.path.abspath(a.remvirtd), top)
    daemon.start()
    conn = libvirt.open(daemon.uri)
    if "campaign" not in [p.name() for p in conn.listAllStoragePools(0)]:
        conn.storagePoolDefineXML(pool_xml(top, "campaign"), 0).create(0)
        conn.storagePoolLookupByName("campaign").setAutostart(1)
    conn.close()
    rng = random.Random(a.seed)
    journals = [os.path.join(top, "journal-%d.json" % n) for n in range(2)]
    clients = []
    for n in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                client_main(n, daemon.uri, top, a.seed * 10 + n, journals[n])
            finally:
                os._exit(0)
        clients.append(pid)
    print("kill campaign: seed %d, remvirtd %s, state in %s" % (a.seed, a.remvirtd, top), flush=True)
    problems = []
    kills = 0
    started = time.time()
    try:
        for kills in range(1, a.kills + 1):
            time.sleep(rng.uniform(0.1, 1.5))
            for pid in clients:
                os.kill(pid, signal.SIGSTOP)
            daemon.kill()
            daemon.start()
            conn = libvirt.open(daemon.uri)
            if not settle(conn, daemon):
                problems.append("kill %d: the domains did not settle: %s" % (kills, [
                    (d.name(), d.state()) for d in conn.listAllDomains(0)]))
            found = check_files(daemon, conn) + check_clients(conn, journals)
            for p in found:
                problems.append("kill %d: %s" % (kills, p))
                print("INCONSISTENT after kill %d: %s" % (kills, p), flush=True)
            conn.close()
            for pid in clients:
                os.kill(pid, signal.SIGCONT)
            if kills % 50 == 0:
                acks = 0
                for path in journals:
                    try:
                        with open(path) as f:
                            acks += json.load(f)["acks"]
                    except (OSError, ValueError):
                        pass
                print("%d kills, %d operations acknowledged, %d inconsistencies, %.0f s" % (
                    kills, acks, len(problems), time.time() - started), flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for pid in clients:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        acks = tries = 0
        for path in journals:
            try:
                with open(path) as f:
                    j = json.load(f)
                acks += j["acks"]
                tries += j["tries"]
            except (OSError, ValueError):
                pass
        if daemon.proc and daemon.proc.poll() is None:
            daemon.stop()
        for pid in daemon.qemu_pids(probe=True):
            os.kill(pid, signal.SIGKILL)
        print("RESULT: %d kills of remvirtd, %d operations tried, %d acknowledged, "
              "%d inconsistencies found (%.0f s, seed %d)" % (
                  kills, tries, acks, len(problems), time.time() - started, a.seed), flush=True)
        if not a.keep and not problems:
            subprocess.run(["rm", "-rf", top])
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
