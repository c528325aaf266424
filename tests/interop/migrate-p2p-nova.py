"""OpenStack nova's live migration call, made by nova's own code (the
installed python3-nova): LibvirtDriver's default live migration flags and
Guest.migrate, which calls migrateToURI3 with bandwidth, destination_xml,
persistent_xml and migrate_uri.  argv: source URI, domain, destination
URI, migrate_uri."""
import sys

import libvirt
from nova.virt.libvirt import driver, guest

# nova imports libvirt lazily when its driver starts: given here.
driver.libvirt = libvirt
guest.libvirt = libvirt

src, name, dest, migrate_uri = sys.argv[1:5]
drv = driver.LibvirtDriver.__new__(driver.LibvirtDriver)
drv._parse_migration_flags()
flags = drv._live_migration_flags
want = (libvirt.VIR_MIGRATE_UNDEFINE_SOURCE | libvirt.VIR_MIGRATE_PERSIST_DEST |
        libvirt.VIR_MIGRATE_PEER2PEER | libvirt.VIR_MIGRATE_LIVE)
if flags != want:
    sys.exit("nova's live migration flags are %#x, not %#x" % (flags, want))
conn = libvirt.open(src)
dom = conn.lookupByName(name)
g = guest.Guest(dom)
# nova sends the guest's migratable XML (updated for the destination).
xml = g.get_xml_desc(dump_migratable=True)
g.migrate(dest, migrate_uri=migrate_uri, destination_xml=xml, flags=flags,
          bandwidth=0)
print("nova-style migrateToURI3: flags %#x done" % flags)
