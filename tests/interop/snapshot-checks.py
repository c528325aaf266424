# python3-libvirt's snapshot calls on the test driver's domain "test",
# one line per call: its result or its error (code, domain, message), and
# the lifecycle events it caused.  Run against remvirtd and libvirtd by
# tests/interop/test-virsh-snapshots.sh, which compares the two.
import sys
import threading
import libvirt

libvirt.registerErrorHandler(lambda *a: None, None)
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(sys.argv[1])
events = []
conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                            lambda c, d, ev, det, op: events.append((d.name(), ev, det)), None)
threading.Thread(target=lambda: [libvirt.virEventRunDefaultImpl() for _ in iter(int, 1)],
                 daemon=True).start()


def settle():
    """Wait until the loop has dispatched the events that arrived before
    the reply to a call made now: the client queues them for the loop as
    it reads them, and a timer added afterwards runs after them."""
    conn.getLibVersion()
    for _ in range(2):
        done = threading.Event()
        timer = libvirt.virEventAddTimeout(0, lambda t, o: done.set(), None)
        if not done.wait(30):
            raise SystemExit('the event loop is stuck')
        libvirt.virEventRemoveTimeout(timer)


def t(what, f):
    try:
        print(what, f())
    except libvirt.libvirtError as e:
        print(what, 'error', e.get_error_code(), e.get_error_domain(), e.get_error_message())
    settle()
    if events:
        print(what, 'events', events[:])
        events.clear()


def names(snaps):
    return sorted(s.getName() for s in snaps)


def create(name, flags=0, extra=''):
    xml = f'<domainsnapshot><name>{name}</name>{extra}</domainsnapshot>'
    return d.snapshotCreateXML(xml, flags).getName()


d = conn.lookupByName('test')
t('num', lambda: d.snapshotNum(0))
t('has current', lambda: d.hasCurrentSnapshot(0))
t('current', lambda: d.snapshotCurrent(0))
t('create s1', lambda: create('s1', 0, '<description>one &amp; only</description>'))
t('create s1 again', lambda: create('s1'))
t('suspend', lambda: d.suspend())
t('create s2 (paused)', lambda: create('s2'))
t('resume', lambda: d.resume())
for bit in range(0, 12):
    t(f'create with flag {1 << bit:#x}', lambda: create(f'f{bit}', 1 << bit))
t('state', lambda: d.state())
t('create bad xml', lambda: d.snapshotCreateXML('<domainsnapshot><name>x', 0))
t('create wrong root', lambda: d.snapshotCreateXML('<snap/>', 0))
t('create disk no', lambda: create('q', 0, "<disks><disk name='vda' snapshot='no'/></disks>"))
t('create memory no', lambda: create('mn', 0, "<memory snapshot='no'/>"))
t('create redefine without state',
  lambda: create('zz', libvirt.VIR_DOMAIN_SNAPSHOT_CREATE_REDEFINE, '<creationTime>12</creationTime>'))
t('list all', lambda: names(d.listAllSnapshots(0)))
for bit in range(0, 11):
    t(f'list flag {1 << bit:#x}', lambda: names(d.listAllSnapshots(1 << bit)))
    t(f'num flag {1 << bit:#x}', lambda: d.snapshotNum(1 << bit))
t('list leaves|no leaves', lambda: names(d.listAllSnapshots(0xc)))
t('list active|inactive', lambda: names(d.listAllSnapshots(0x60)))
t('list names', lambda: sorted(d.snapshotListNames(0)))
t('list names roots', lambda: sorted(d.snapshotListNames(1)))
t('lookup nosuch', lambda: d.snapshotLookupByName('nosuch', 0))
t('lookup flags', lambda: d.snapshotLookupByName('s1', 1))
s1 = d.snapshotLookupByName('s1', 0)
s2 = d.snapshotLookupByName('s2', 0)
t('s1 parent', lambda: s1.getParent(0))
t('s2 parent', lambda: s2.getParent(0).getName())
t('s1 children', lambda: names(s1.listAllChildren(0)))
t('s1 descendants', lambda: names(s1.listAllChildren(1)))
t('s1 leaf descendants', lambda: names(s1.listAllChildren(5)))
t('s1 children counts', lambda: (s1.numChildren(0), s1.numChildren(1)))
t('s1 children names', lambda: sorted(s1.listChildrenNames(0)))
t('s1 current, metadata', lambda: (s1.isCurrent(0), s1.hasMetadata(0)))
t('current name', lambda: d.snapshotCurrent(0).getName())
t('s1 xml flags', lambda: s1.getXMLDesc(2))
for name in ('getXMLDesc', 'getParent', 'numChildren', 'listChildrenNames', 'listAllChildren',
             'isCurrent', 'hasMetadata'):
    t(f'{name} bad flag', lambda: getattr(s1, name)(1 << 30))
t('num bad flag', lambda: d.snapshotNum(1 << 30))
t('list names bad flag', lambda: d.snapshotListNames(1 << 30))
t('list all bad flag', lambda: d.listAllSnapshots(1 << 30))
t('current bad flag', lambda: d.snapshotCurrent(1))
t('has current bad flag', lambda: d.hasCurrentSnapshot(1))
t('create empty name', lambda: create('').isdigit())
t('start', lambda: d.create())
t('revert s2 (paused) running domain', lambda: d.revertToSnapshot(s2, 0))
t('state', lambda: d.state())
t('revert s1 paused domain', lambda: d.revertToSnapshot(s1, 0))
t('state', lambda: d.state())
t('destroy', lambda: d.destroy())
t('revert s1 shut-off domain', lambda: d.revertToSnapshot(s1, 0))
t('state', lambda: d.state())
t('revert s2 running flag', lambda: d.revertToSnapshot(s2, libvirt.VIR_DOMAIN_SNAPSHOT_REVERT_RUNNING))
t('state', lambda: d.state())
t('revert s1 paused flag', lambda: d.revertToSnapshot(s1, libvirt.VIR_DOMAIN_SNAPSHOT_REVERT_PAUSED))
t('state', lambda: d.state())
t('create halt', lambda: create('halt', libvirt.VIR_DOMAIN_SNAPSHOT_CREATE_HALT))
t('state', lambda: d.state())
t('create off', lambda: create('off'))
off = d.snapshotLookupByName('off', 0)
t('off xml', lambda: off.getXMLDesc(0).split('<domain ')[0])
t('revert off shut-off domain', lambda: d.revertToSnapshot(off, 0))
t('state', lambda: d.state())
t('revert off running flag', lambda: d.revertToSnapshot(off, libvirt.VIR_DOMAIN_SNAPSHOT_REVERT_RUNNING))
t('state', lambda: d.state())
t('revert off paused flag', lambda: d.revertToSnapshot(off, libvirt.VIR_DOMAIN_SNAPSHOT_REVERT_PAUSED))
t('state', lambda: d.state())
t('revert s1', lambda: d.revertToSnapshot(s1, 0))
t('revert off running domain', lambda: d.revertToSnapshot(off, 0))
t('state', lambda: d.state())
t('revert both flags', lambda: d.revertToSnapshot(s1, 3))
t('revert bad flag', lambda: d.revertToSnapshot(s1, 16))
t('delete bad flag', lambda: s1.delete(8))
t('delete metadata only', lambda: s1.delete(2))
t('delete both', lambda: s1.delete(5))
t('has snapshot', lambda: [x.name() for x in conn.listAllDomains(libvirt.VIR_CONNECT_LIST_DOMAINS_HAS_SNAPSHOT)])
t('no snapshot', lambda: [x.name() for x in conn.listAllDomains(libvirt.VIR_CONNECT_LIST_DOMAINS_NO_SNAPSHOT)])
t('undefine shut-off domain', lambda: d.undefine())
t('delete s2 children only', lambda: s2.delete(4))
t('list', lambda: names(d.listAllSnapshots(0)))
t('current', lambda: d.snapshotCurrent(0).getName())
t('delete s1', lambda: s1.delete(0))
t('s2 parent', lambda: s2.getParent(0))
t('current', lambda: d.snapshotCurrent(0).getName())
t('list', lambda: names(d.listAllSnapshots(0)))
t('delete s2 with children', lambda: s2.delete(1))
t('list', lambda: names(d.listAllSnapshots(0)))
t('has current', lambda: d.hasCurrentSnapshot(0))
t('delete gone', lambda: s1.delete(0))
