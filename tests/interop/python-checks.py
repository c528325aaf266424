#!/usr/bin/python3
"""python3-libvirt against a libvirt-protocol server with the test driver.

    python-checks.py RW_URI RO_URI

RW_URI reaches the read-write socket, RO_URI the read-only one.  Every
expected value is what libvirtd 9.0's test:///default gives, so the same
script passes against libvirtd (test-python.sh runs it there first, to
prove the expectations) and must pass against remvirtd.

Run it with /usr/bin/python3: Debian's binding is built for that python.
"""

import sys
import xml.etree.ElementTree as ET

import libvirt

TEST_UUID = "6695eb01-f6a4-8304-79aa-97f2502e193f"

# virDomainState and the reasons this test sees.
RUNNING, PAUSED, SHUTOFF = 1, 3, 5
RUNNING_UNKNOWN, RUNNING_BOOTED, RUNNING_UNPAUSED = 0, 1, 5
PAUSED_USER = 1
SHUTOFF_UNKNOWN, SHUTOFF_DESTROYED = 0, 2

failures = 0


def check(cond, what):
    global failures
    if cond:
        print(f"ok   {what}")
    else:
        failures += 1
        print(f"FAIL {what}")


def check_eq(actual, expected, what):
    check(actual == expected, f"{what}: {actual!r}" +
          ("" if actual == expected else f", expected {expected!r}"))


def expect_error(fn, code, domain, what):
    """fn() must raise libvirtError with this code and error domain."""
    try:
        fn()
    except libvirt.libvirtError as e:
        check_eq((e.get_error_code(), e.get_error_domain()), (code, domain),
                 f"{what}: error (code, domain) [{e}]")
        return
    check(False, f"{what}: no error raised")


def domain_xml(name, uuid):
    return f"""<domain type='test'>
  <name>{name}</name>
  <uuid>{uuid}</uuid>
  <memory unit='KiB'>1048576</memory>
  <currentMemory unit='KiB'>524288</currentMemory>
  <vcpu>2</vcpu>
  <os><type>hvm</type></os>
</domain>
"""


def names(conn, flags):
    return sorted(d.name() for d in conn.listAllDomains(flags))


def test_lookups(conn):
    dom = conn.lookupByName("test")
    check_eq(dom.name(), "test", "lookupByName name")
    check_eq(dom.ID(), 1, "lookupByName ID")
    check_eq(dom.UUIDString(), TEST_UUID, "UUIDString")
    check_eq(conn.lookupByUUIDString(TEST_UUID).name(), "test", "lookupByUUIDString")
    check_eq(conn.lookupByUUID(dom.UUID()).name(), "test", "lookupByUUID")
    check_eq(len(dom.UUID()), 16, "UUID is 16 bytes")
    check_eq(conn.lookupByID(1).name(), "test", "lookupByID(1)")

    check_eq(dom.info()[:4], [RUNNING, 8388608, 2097152, 2],
             "info() state, maxMem, memory, nrVirtCpu")
    check(dom.info()[4] > 0, "info() cpuTime is positive")
    check_eq(dom.state(), [RUNNING, RUNNING_UNKNOWN], "state()")
    check_eq(dom.isActive(), 1, "isActive")
    check_eq(dom.isPersistent(), 1, "isPersistent")
    check_eq(dom.OSType(), "linux", "OSType")

    root = ET.fromstring(dom.XMLDesc())
    check_eq(root.tag, "domain", "XMLDesc root element")
    check_eq(root.get("type"), "test", "XMLDesc domain type")
    check_eq(root.findtext("name"), "test", "XMLDesc name")
    check_eq(root.findtext("uuid"), TEST_UUID, "XMLDesc uuid")
    check_eq(root.findtext("memory"), "8388608", "XMLDesc memory")
    check_eq(root.findtext("vcpu"), "2", "XMLDesc vcpu")

    expect_error(lambda: conn.lookupByName("nosuch"),
                 libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_FROM_TEST, "lookupByName('nosuch')")
    expect_error(lambda: conn.lookupByID(4242),
                 libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_FROM_TEST, "lookupByID(4242)")
    expect_error(lambda: conn.lookupByUUIDString("00000000-0000-4000-8000-000000000000"),
                 libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_FROM_TEST, "lookupByUUIDString(unknown)")


def test_transient(conn):
    xml = domain_xml("pytrans", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7b01")
    dom = conn.createXML(xml)
    check_eq(dom.name(), "pytrans", "createXML name")
    check(dom.ID() > 1, f"createXML gives a fresh ID ({dom.ID()})")
    check_eq(dom.state(), [RUNNING, RUNNING_BOOTED], "createXML state")
    check_eq(dom.isPersistent(), 0, "createXML domain is transient")
    check_eq(conn.lookupByID(dom.ID()).name(), "pytrans", "lookupByID of the new domain")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_TRANSIENT), ["pytrans"],
             "listAllDomains(TRANSIENT)")

    expect_error(lambda: conn.createXML(xml), libvirt.VIR_ERR_OPERATION_INVALID,
                 libvirt.VIR_FROM_DOMAIN, "createXML of a running name")

    dom.suspend()
    check_eq(dom.state(), [PAUSED, PAUSED_USER], "suspend state")
    check_eq(dom.info()[0], PAUSED, "suspend info state")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_PAUSED), ["pytrans"],
             "listAllDomains(PAUSED)")
    dom.resume()
    check_eq(dom.state(), [RUNNING, RUNNING_UNPAUSED], "resume state")

    # A transient domain that shuts down is gone.
    dom.shutdown()
    expect_error(lambda: conn.lookupByName("pytrans"),
                 libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_FROM_TEST, "lookup after shutdown")

    dom = conn.createXML(xml)
    dom.destroy()
    expect_error(lambda: conn.lookupByName("pytrans"),
                 libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_FROM_TEST, "lookup after destroy")


def test_persistent(conn):
    dom = conn.defineXML(domain_xml("pypers", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7b02"))
    check_eq(dom.ID(), -1, "defined domain has no ID")
    check_eq(dom.state(), [SHUTOFF, SHUTOFF_UNKNOWN], "defined state")
    check_eq(dom.isActive(), 0, "defined domain inactive")
    check_eq(dom.isPersistent(), 1, "defined domain persistent")

    check_eq(names(conn, 0), ["pypers", "test"], "listAllDomains(0)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE), ["test"],
             "listAllDomains(ACTIVE)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_INACTIVE), ["pypers"],
             "listAllDomains(INACTIVE)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_PERSISTENT), ["pypers", "test"],
             "listAllDomains(PERSISTENT)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_PERSISTENT |
                   libvirt.VIR_CONNECT_LIST_DOMAINS_INACTIVE), ["pypers"],
             "listAllDomains(PERSISTENT|INACTIVE)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_TRANSIENT), [],
             "listAllDomains(TRANSIENT)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_SHUTOFF), ["pypers"],
             "listAllDomains(SHUTOFF)")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_RUNNING), ["test"],
             "listAllDomains(RUNNING)")
    check_eq(conn.numOfDomains(), 1, "numOfDomains")
    check_eq(conn.listDomainsID(), [1], "listDomainsID")

    dom.create()
    check(dom.ID() > 1, f"create gives an ID ({dom.ID()})")
    check_eq(dom.state(), [RUNNING, RUNNING_BOOTED], "create state")
    check_eq(names(conn, libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE), ["pypers", "test"],
             "listAllDomains(ACTIVE) after create")
    dom.destroy()
    check_eq(dom.state(), [SHUTOFF, SHUTOFF_DESTROYED], "destroy state")
    check_eq(dom.ID(), -1, "destroyed domain has no ID")

    # A name clash and bad XML get the codes libvirtd gives.
    expect_error(lambda: conn.defineXML(domain_xml("test", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7b03")),
                 libvirt.VIR_ERR_OPERATION_FAILED, libvirt.VIR_FROM_DOMAIN,
                 "defineXML of name 'test' with another uuid")
    expect_error(lambda: conn.defineXML("<domain type='test'><name>broken</name>"),
                 libvirt.VIR_ERR_XML_DETAIL, libvirt.VIR_FROM_DOMAIN, "defineXML of cut XML")
    expect_error(lambda: conn.defineXML("<notadomain/>"),
                 libvirt.VIR_ERR_XML_ERROR, libvirt.VIR_FROM_XML, "defineXML of another root")

    dom.undefine()
    expect_error(lambda: conn.lookupByName("pypers"),
                 libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_FROM_TEST, "lookup after undefine")
    check_eq(names(conn, 0), ["test"], "listAllDomains(0) at the end")


def test_read_only(ro_uri):
    # Opened read-write on the read-only socket: the server itself must
    # refuse (the client library does not know it is read-only).
    conn = libvirt.open(ro_uri)
    dom = conn.lookupByName("test")
    check_eq(dom.state(), [RUNNING, RUNNING_UNKNOWN], "read-only socket: state()")
    check_eq(names(conn, 0), ["test"], "read-only socket: listAllDomains")
    for op in ("destroy", "suspend", "shutdown", "reboot"):
        expect_error(getattr(dom, op), libvirt.VIR_ERR_OPERATION_DENIED,
                     libvirt.VIR_FROM_DOMAIN, f"read-only socket: {op}()")
    expect_error(lambda: conn.createXML(domain_xml("pyro", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7b04")),
                 libvirt.VIR_ERR_OPERATION_DENIED, libvirt.VIR_FROM_DOMAIN,
                 "read-only socket: createXML()")
    expect_error(lambda: conn.defineXML(domain_xml("pyro", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7b04")),
                 libvirt.VIR_ERR_OPERATION_DENIED, libvirt.VIR_FROM_DOMAIN,
                 "read-only socket: defineXML()")
    check_eq(dom.state(), [RUNNING, RUNNING_UNKNOWN], "read-only socket: test still running")
    conn.close()

    # openReadOnly: the usual way; the client refuses before the wire,
    # but the open itself (CONNECT_OPEN with the read-only flag) must work.
    conn = libvirt.openReadOnly(ro_uri)
    dom = conn.lookupByName("test")
    check_eq(dom.info()[0], RUNNING, "openReadOnly: info()")
    expect_error(dom.destroy, libvirt.VIR_ERR_OPERATION_DENIED, libvirt.VIR_FROM_DOMAIN,
                 "openReadOnly: destroy()")
    conn.close()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rw_uri, ro_uri = sys.argv[1:]
    # Keep libvirt from printing every expected error on stderr.
    libvirt.registerErrorHandler(lambda ctx, err: None, None)

    conn = libvirt.open(rw_uri)
    check_eq(conn.getType(), "TEST", "getType")
    check_eq(conn.getVersion(), 2, "getVersion")
    # One connection throughout: libvirtd's test driver resets when the
    # last client leaves, and the steps build on each other.
    test_lookups(conn)
    test_transient(conn)
    test_persistent(conn)
    test_read_only(ro_uri)
    conn.close()

    print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
