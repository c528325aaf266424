"""Bad XML of every definition family, through python3-libvirt, against one
remvirtd driver (argv: URI, a directory for a pool, the daemon's pid):
every call fails with libvirt's error (never a crash or a hang), the
daemon stays usable, and refused documents are not kept (the daemon's
RSS barely grows over many large ones).  Leaks on these error paths fail
the daemon's exit under valgrind or LeakSanitizer (make check-valgrind,
tests/check.sh --asan)."""
import os
import sys

import libvirt

uri, pooldir, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
libvirt.registerErrorHandler(lambda ctx, err: None, None)
c = libvirt.open(uri)
qemu = uri.startswith("qemu")


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


def rss_kib():
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# Objects the calls hang off.
os.makedirs(pooldir, exist_ok=True)
pool = c.storagePoolCreateXML(
    "<pool type='dir'><name>badxml</name><target><path>%s</path></target></pool>" % pooldir, 0)
vol = pool.createXML("<volume><name>base</name><capacity>1048576</capacity></volume>", 0)
if qemu:
    dom = c.defineXML("<domain type='qemu'><name>badxml</name><memory>65536</memory>"
                      "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>")
else:
    dom = c.lookupByName("test")

BAD = {
    "empty": "",
    "not XML": "this is not XML",
    "unclosed": "<domain><name>x</name>",
    "wrong root": "<wrongroot><name>x</name></wrongroot>",
    "DOCTYPE": "<!DOCTYPE x [<!ENTITY e 'boom'>]><x>&e;</x>",
    "bad nesting": "<a><b></a></b>",
    "control character": "<a>\x01</a>",
}


def odd_docs(root):
    """Documents with the right root and odd insides: some families accept
    some of them (a snapshot needs nothing), so only their parsing counts."""
    return ["<%s/>" % root,
            "<%s><name>x</name><uuid>not-a-uuid</uuid><capacity unit='furlong'>-3</capacity>"
            "<memory>lots</memory><unknown><deep/></unknown></%s>" % (root, root),
            "<%s name='a&#10;b'><name>a\nb</name><source><address bus='x'/></source></%s>"
            % (root, root)]


CALLS = [
    ("domain define", "domain", lambda x: c.defineXML(x)),
    ("domain create", "domain", lambda x: c.createXML(x, 0)),
    ("network define", "network", lambda x: c.networkDefineXML(x)),
    ("network create", "network", lambda x: c.networkCreateXML(x)),
    ("pool define", "pool", lambda x: c.storagePoolDefineXML(x, 0)),
    ("pool create", "pool", lambda x: c.storagePoolCreateXML(x, 0)),
    ("volume create", "volume", lambda x: pool.createXML(x, 0)),
    ("volume clone", "volume", lambda x: pool.createXMLFrom(x, vol, 0)),
    ("secret define", "secret", lambda x: c.secretDefineXML(x, 0)),
    ("nwfilter define", "filter", lambda x: c.nwfilterDefineXML(x)),
    ("nodedev create", "device", lambda x: c.nodeDeviceCreateXML(x, 0)),
    ("nodedev define", "device", lambda x: c.nodeDeviceDefineXML(x, 0)),
    ("snapshot create", "domainsnapshot", lambda x: dom.snapshotCreateXML(x, 0)),
    ("device attach", "disk", lambda x: dom.attachDeviceFlags(x, libvirt.VIR_DOMAIN_AFFECT_CONFIG)),
    ("interface define", "interface", lambda x: c.interfaceDefineXML(x, 0)),
]

calls = 0
for what, root, call in CALLS:
    for kind, doc in BAD.items():
        try:
            call(doc)
        except libvirt.libvirtError:
            calls += 1
            continue
        check(False, "%s with %s XML succeeded" % (what, kind))
    for doc in odd_docs(root):
        try:
            call(doc)
        except libvirt.libvirtError:
            pass
        calls += 1
    check(c.getHostname(), "%s: the daemon answers" % what)
print("ok   %d calls with bad XML in %d families: each malformed one refused, the daemon answering"
      % (calls, len(CALLS)))

# A refused document is not kept: many large ones whose root is wrong
# (the case that leaked the whole document for node devices).  Under the
# sanitizers or valgrind their allocators keep freed memory, so the RSS
# says nothing there; their leak check at the daemon's exit does.
big = "<notdevice>" + "<x/>" * 210000 + "</notdevice>"     # ~25 MB parsed
measured = not (os.environ.get("ASAN_OPTIONS") or os.environ.get("RV_VALGRIND"))
for what, root, call in CALLS if measured else []:
    call_rss = rss_kib()
    for i in range(12):
        try:
            call(big)
        except libvirt.libvirtError:
            pass
    grown = rss_kib() - call_rss
    check(grown < 64 * 1024, "%s: RSS grew %d KiB over 12 refused documents of %d KB"
          % (what, grown, len(big) // 1000))
if measured:
    print("ok   12 refused documents of %d KB per call: RSS grew less than 64 MiB for each "
          "(a kept one grows it ~25 MiB)" % (len(big) // 1000))

# Names: a newline refused as libvirt refuses it in other names.
for what, call in [
        ("volume", lambda: pool.createXML(
            "<volume><name>a\nb</name><capacity>1</capacity></volume>", 0)),
        ("nwfilter", lambda: c.nwfilterDefineXML(
            "<filter name='a&#10;b'><rule action='accept' direction='in'><all/></rule></filter>"))]:
    if what == "nwfilter" and not qemu:
        continue
    try:
        call()
        check(False, "a %s name with a newline was accepted" % what)
    except libvirt.libvirtError as e:
        check("invalid char in name" in str(e), "%s name with a newline: %s" % (what, e))
print("ok   a newline in a volume%s name is refused" % (" or nwfilter" if qemu else ""))
pool.destroy()
