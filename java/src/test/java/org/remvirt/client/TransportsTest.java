package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.remvirt.proto.RvValues.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Pipelined calls from many threads, TLS with libvirt's PKI files, SASL
 * (DIGEST-MD5 with the security layer over TCP), keepalive. */
class TransportsTest {
    @Test
    void manyThreadsShareOneConnection() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    final int which = t;
                    results.add(pool.submit(() -> {
                        Domain dom = conn.domainLookupByName("test");
                        int ok = 0;
                        for (int i = 0; i < 300; i++) {
                            // Different calls, so a reply given to the wrong caller shows.
                            if (which % 2 == 0) {
                                assertEquals(8388608, dom.getInfo().maxMem);
                            } else {
                                assertEquals("linux", dom.getOSType());
                            }
                            ok++;
                        }
                        return ok;
                    }));
                }
                for (Future<Integer> f : results)
                    assertEquals(300, f.get());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void tls() throws Exception {
        String uri = Peer.need("rv.tls.uri");
        try (Connection conn = Connection.open(uri)) {
            assertEquals("TEST", conn.getType());
            assertEquals(RV_DOMAIN_RUNNING, conn.domainLookupByName("test").getInfo().state);
        }
        // Not the host the server's certificate names.
        String wrongHost = uri.replace("//localhost:", "//127.0.0.2:");
        LibvirtException e = assertThrows(LibvirtException.class, () -> Connection.open(wrongHost));
        assertTrue(e.getMessage().contains("does not match the host name '127.0.0.2'"), e.getMessage());
        // A cacert.pem of another CA than the one that signed the server's certificate.
        String otherCa = uri.replace("/client", "/client-foreignca");
        e = assertThrows(LibvirtException.class, () -> Connection.open(otherCa));
        assertTrue(e.getMessage().contains("not signed by a CA in cacert.pem"), e.getMessage());
        // Our certificate signed by a CA the server does not trust: it refuses us.
        String foreign = uri.replace("/client", "/client-foreign");
        e = assertThrows(LibvirtException.class, () -> Connection.open(foreign));
        assertTrue(e.getMessage().contains("the server refused our certificate"), e.getMessage());
    }

    @Test
    void saslDigestMd5WithSecurityLayer() throws Exception {
        String uri = Peer.need("rv.sasl.uri");
        String user = Peer.need("rv.sasl.user");
        char[] password = Peer.need("rv.sasl.password").toCharArray();
        try (Connection conn = Connection.open(uri + "?auth=sasl.DIGEST-MD5",
                new OpenOptions().credentials(user, password))) {
            assertEquals("TEST", conn.getType());
            // Large enough for several SASL chunks each way.
            String xml = conn.domainLookupByName("test").getXMLDesc(0);
            assertTrue(xml.contains("<name>test</name>"), xml);
            assertEquals(1, conn.listAllDomains(RV_CONNECT_LIST_DOMAINS_ACTIVE).size());
        }
        LibvirtException e = assertThrows(LibvirtException.class, () -> Connection.open(uri,
                new OpenOptions().credentials(user, "wrong".toCharArray())));
        assertEquals(RV_ERROR_AUTH_FAILED, e.getCode(), e.toString());
    }

    @Test
    void keepaliveGivesUpOnASilentServer() throws Exception {
        // rv.pid: remvirtd's process, stopped with SIGSTOP so that it
        // answers nothing; our PINGs (1 s apart, 2 allowed) go unanswered.
        String pid = Peer.need("rv.pid");
        try (Connection conn = Connection.open(Peer.uri(), new OpenOptions().keepalive(1, 2))) {
            java.util.concurrent.BlockingQueue<Integer> reasons = new java.util.concurrent.LinkedBlockingQueue<>();
            conn.addCloseListener((c, reason) -> reasons.add(reason));
            signal("STOP", pid);
            try {
                LibvirtException e = assertThrows(LibvirtException.class, conn::getType);
                assertTrue(e.getMessage().contains("keepalive"), e.getMessage());
                assertEquals(Integer.valueOf(org.remvirt.proto.RemoteProtocol.RV_CLOSE_REASON_KEEPALIVE),
                        reasons.poll(10, java.util.concurrent.TimeUnit.SECONDS));
            } finally {
                signal("CONT", pid);
            }
        }
    }

    private static void signal(String sig, String pid) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + sig, pid).inheritIO().start().waitFor(), "kill -" + sig);
    }

    @Test
    void keepaliveAnswersThePeer() throws Exception {
        // rv.keepalive.idle: seconds the server's own keepalive would take to
        // drop a client that does not answer its PINGs.
        int idle = Integer.parseInt(Peer.need("rv.keepalive.idle"));
        try (Connection conn = Connection.open(Peer.uri(), new OpenOptions().keepalive(1, 2))) {
            Thread.sleep(idle * 1000L);
            assertTrue(conn.isAlive());
            assertEquals("TEST", conn.getType());
        }
    }
}
