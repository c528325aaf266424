package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.remvirt.proto.RvValues.*;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The checks of tests/interop/python-checks.py, through the Java client:
 * the expected values are libvirtd 9.0's test:///default, and the same
 * class runs against libvirtd and remvirtd.  Each test uses one connection
 * throughout (libvirtd's test driver resets when its last client leaves). */
class DomainChecksTest {
    static final String TEST_UUID = "6695eb01-f6a4-8304-79aa-97f2502e193f";

    static void expectError(Executable call, int code, int domain) {
        LibvirtException e = assertThrows(LibvirtException.class, call);
        assertEquals(code + "/" + domain, e.getCode() + "/" + e.getDomain(), "error code/domain of: " + e);
    }

    static List<String> names(Connection conn, int flags) throws LibvirtException {
        return conn.listAllDomains(flags).stream().map(Domain::getName).sorted().collect(Collectors.toList());
    }

    @Test
    void connectCalls() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            assertEquals("TEST", conn.getType());
            assertEquals(2, conn.getVersion());
            assertTrue(conn.getLibVersion() >= 1000000, "lib version " + conn.getLibVersion());
            assertFalse(conn.getHostName().isEmpty());
            assertTrue(conn.getCapabilities().contains("<capabilities>"));
            NodeInfo node = conn.nodeInfo();
            assertEquals("i686", node.model);
            assertEquals(16, node.cpus);
            assertEquals(3145728, node.memory);
        }
    }

    @Test
    void lookups() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            Domain dom = conn.domainLookupByName("test");
            assertEquals("test", dom.getName());
            assertEquals(1, dom.getID());
            assertEquals(TEST_UUID, dom.getUUIDString());
            assertEquals("test", conn.domainLookupByUUIDString(TEST_UUID).getName());
            assertEquals("test", conn.domainLookupByUUID(dom.getUUID()).getName());
            assertEquals("test", conn.domainLookupByID(1).getName());

            DomainInfo info = dom.getInfo();
            assertEquals(RV_DOMAIN_RUNNING, info.state);
            assertEquals(8388608, info.maxMem);
            assertEquals(2097152, info.memory);
            assertEquals(2, info.nrVirtCpu);
            assertTrue(info.cpuTime > 0);
            assertArrayEquals(new int[] { RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_UNKNOWN }, dom.getState());
            assertTrue(dom.isActive());
            assertTrue(dom.isPersistent());
            assertEquals("linux", dom.getOSType());
            String xml = dom.getXMLDesc(0);
            assertTrue(xml.startsWith("<domain type='test'"), xml);
            assertTrue(xml.contains("<uuid>" + TEST_UUID + "</uuid>"), xml);
            assertTrue(xml.contains("<memory unit='KiB'>8388608</memory>"), xml);

            expectError(() -> conn.domainLookupByName("nosuch"), RV_ERROR_NO_DOMAIN, RV_ERROR_FROM_TEST);
            expectError(() -> conn.domainLookupByID(4242), RV_ERROR_NO_DOMAIN, RV_ERROR_FROM_TEST);
            expectError(() -> conn.domainLookupByUUIDString("00000000-0000-4000-8000-000000000000"),
                    RV_ERROR_NO_DOMAIN, RV_ERROR_FROM_TEST);
        }
    }

    @Test
    void transientDomain() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            String xml = Peer.domainXml("jtrans", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d01");
            Domain dom = conn.domainCreateXML(xml, 0);
            assertEquals("jtrans", dom.getName());
            assertTrue(dom.getID() > 1, "fresh ID " + dom.getID());
            assertArrayEquals(new int[] { RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_BOOTED }, dom.getState());
            assertFalse(dom.isPersistent());
            assertEquals("jtrans", conn.domainLookupByID(dom.getID()).getName());
            assertEquals(List.of("jtrans"), names(conn, RV_CONNECT_LIST_DOMAINS_TRANSIENT));
            expectError(() -> conn.domainCreateXML(xml, 0), RV_ERROR_OPERATION_INVALID, RV_ERROR_FROM_DOMAIN);

            dom.suspend();
            assertArrayEquals(new int[] { RV_DOMAIN_PAUSED, RV_DOMAIN_PAUSED_USER }, dom.getState());
            assertEquals(RV_DOMAIN_PAUSED, dom.getInfo().state);
            assertEquals(List.of("jtrans"), names(conn, RV_CONNECT_LIST_DOMAINS_PAUSED));
            dom.resume();
            assertArrayEquals(new int[] { RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_UNPAUSED }, dom.getState());

            dom.shutdown();     // a transient domain that stops is gone
            expectError(() -> conn.domainLookupByName("jtrans"), RV_ERROR_NO_DOMAIN, RV_ERROR_FROM_TEST);
            dom = conn.domainCreateXML(xml, 0);
            dom.destroy();
            expectError(() -> conn.domainLookupByName("jtrans"), RV_ERROR_NO_DOMAIN, RV_ERROR_FROM_TEST);
        }
    }

    @Test
    void persistentDomain() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            Domain dom = conn.domainDefineXML(Peer.domainXml("jpers", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d02"));
            assertEquals(-1, dom.getID());
            assertArrayEquals(new int[] { RV_DOMAIN_SHUTOFF, RV_DOMAIN_SHUTOFF_UNKNOWN }, dom.getState());
            assertFalse(dom.isActive());
            assertTrue(dom.isPersistent());
            assertEquals(List.of("jpers", "test"), names(conn, 0));
            assertEquals(List.of("test"), names(conn, RV_CONNECT_LIST_DOMAINS_ACTIVE));
            assertEquals(List.of("jpers"), names(conn, RV_CONNECT_LIST_DOMAINS_INACTIVE));
            assertEquals(List.of("jpers"),
                    names(conn, RV_CONNECT_LIST_DOMAINS_PERSISTENT | RV_CONNECT_LIST_DOMAINS_INACTIVE));
            assertEquals(List.of(), names(conn, RV_CONNECT_LIST_DOMAINS_TRANSIENT));
            assertEquals(List.of("jpers"), names(conn, RV_CONNECT_LIST_DOMAINS_SHUTOFF));
            assertEquals(List.of("test"), names(conn, RV_CONNECT_LIST_DOMAINS_RUNNING));
            assertEquals(1, conn.numOfDomains());
            assertArrayEquals(new int[] { 1 }, conn.listDomains());

            dom.create();
            assertTrue(dom.getID() > 1, "create gives an ID: " + dom.getID());
            assertArrayEquals(new int[] { RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_BOOTED }, dom.getState());
            assertEquals(List.of("jpers", "test"), names(conn, RV_CONNECT_LIST_DOMAINS_ACTIVE));
            dom.destroy();
            assertArrayEquals(new int[] { RV_DOMAIN_SHUTOFF, RV_DOMAIN_SHUTOFF_DESTROYED }, dom.getState());
            assertEquals(-1, dom.getID());

            expectError(() -> conn.domainDefineXML(Peer.domainXml("test", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d03")),
                    RV_ERROR_OPERATION_FAILED, RV_ERROR_FROM_DOMAIN);
            expectError(() -> conn.domainDefineXML("<domain type='test'><name>broken</name>"),
                    RV_ERROR_XML_DETAIL, RV_ERROR_FROM_DOMAIN);
            expectError(() -> conn.domainDefineXML("<notadomain/>"), RV_ERROR_XML_ERROR, RV_ERROR_FROM_XML);

            dom.undefine();
            expectError(() -> conn.domainLookupByName("jpers"), RV_ERROR_NO_DOMAIN, RV_ERROR_FROM_TEST);
            assertEquals(List.of("test"), names(conn, 0));
        }
    }

    @Test
    void readOnlySocket() throws Exception {
        String ro = Peer.need("rv.uri.ro");
        // Opened read-write on the read-only socket: the server refuses.
        try (Connection conn = Connection.open(ro)) {
            Domain dom = conn.domainLookupByName("test");
            assertArrayEquals(new int[] { RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_UNKNOWN }, dom.getState());
            assertEquals(List.of("test"), names(conn, 0));
            expectError(dom::destroy, RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
            expectError(dom::suspend, RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
            expectError(dom::shutdown, RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
            expectError(() -> dom.reboot(0), RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
            String xml = Peer.domainXml("jro", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d04");
            expectError(() -> conn.domainCreateXML(xml, 0), RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
            expectError(() -> conn.domainDefineXML(xml), RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
            assertArrayEquals(new int[] { RV_DOMAIN_RUNNING, RV_DOMAIN_RUNNING_UNKNOWN }, dom.getState());
        }
        // CONNECT_OPEN with the read-only flag works; the server refuses changes.
        try (Connection conn = Connection.openReadOnly(ro)) {
            Domain dom = conn.domainLookupByName("test");
            assertEquals(RV_DOMAIN_RUNNING, dom.getInfo().state);
            expectError(dom::destroy, RV_ERROR_OPERATION_DENIED, RV_ERROR_FROM_DOMAIN);
        }
    }

    @Test
    void afterConnectClose() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            conn.connectClose();     // the procedure alone, not close()
            if (Peer.server().equals("remvirtd")) {
                // remvirtd keeps the socket open; the session is gone.
                expectError(conn::getType, RV_ERROR_INTERNAL_ERROR, RV_ERROR_FROM_RPC);
            } else {
                // libvirtd closes its end right after the reply.
                LibvirtException e = assertThrows(LibvirtException.class, conn::getType);
                assertEquals(RV_ERROR_SYSTEM_ERROR, e.getCode(), e.toString());
            }
        }
    }

    @Test
    void badUriAndClosedConnection() throws Exception {
        LibvirtException e = assertThrows(LibvirtException.class,
                () -> Connection.open("test+unix:///default?socket=/nonexistent/sock"));
        assertEquals(RV_ERROR_SYSTEM_ERROR, e.getCode(), e.toString());
        assertTrue(e.getMessage().contains("/nonexistent/sock"), e.getMessage());
        Connection conn = Connection.open(Peer.uri());
        conn.close();
        assertFalse(conn.isAlive());
        assertThrows(LibvirtException.class, conn::getType);
    }
}
