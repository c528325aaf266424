package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.remvirt.proto.RvValues.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.remvirt.proto.RemoteProtocol;

/** Domain and network lifecycle events, and the close listener. */
class EventsTest {
    private static String next(BlockingQueue<String> q) throws InterruptedException {
        String e = q.poll(10, TimeUnit.SECONDS);
        assertNotNull(e, "no event within 10 s");
        return e;
    }

    @Test
    void domainLifecycle() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            BlockingQueue<String> seen = new LinkedBlockingQueue<>();
            int id = conn.domainEventRegisterLifecycle((c, dom, event, detail) ->
                    seen.add(dom.getName() + " " + event + "/" + detail));
            assertEquals(0, id, "the first callback ID (libvirtd's numbering)");
            Domain dom = conn.domainDefineXML(Peer.domainXml("jevents", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d11"));
            dom.create();
            dom.suspend();
            dom.resume();
            dom.destroy();
            dom.undefine();
            List<String> want = List.of(
                    "jevents " + RV_DOMAIN_EVENT_DEFINED + "/" + RV_DOMAIN_EVENT_DEFINED_ADDED,
                    "jevents " + RV_DOMAIN_EVENT_STARTED + "/" + RV_DOMAIN_EVENT_STARTED_BOOTED,
                    "jevents " + RV_DOMAIN_EVENT_SUSPENDED + "/" + RV_DOMAIN_EVENT_SUSPENDED_PAUSED,
                    "jevents " + RV_DOMAIN_EVENT_RESUMED + "/" + RV_DOMAIN_EVENT_RESUMED_UNPAUSED,
                    "jevents " + RV_DOMAIN_EVENT_STOPPED + "/" + RV_DOMAIN_EVENT_STOPPED_DESTROYED,
                    "jevents " + RV_DOMAIN_EVENT_UNDEFINED + "/" + RV_DOMAIN_EVENT_UNDEFINED_REMOVED);
            List<String> got = new ArrayList<>();
            for (int i = 0; i < want.size(); i++)
                got.add(next(seen));
            assertEquals(want, got);
            conn.domainEventDeregister(id);
            // Deregistered: the next change reaches no listener (a second
            // subscription shows the event was sent).
            BlockingQueue<String> later = new LinkedBlockingQueue<>();
            conn.domainEventRegisterLifecycle((c, d, event, detail) -> later.add(d.getName() + " " + event));
            // (Domain "test" is left alone: other tests expect its state untouched.)
            Domain other = conn.domainCreateXML(Peer.domainXml("jlater", "5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d12"), 0);
            assertEquals("jlater " + RV_DOMAIN_EVENT_STARTED, next(later));
            other.destroy();
            assertEquals("jlater " + RV_DOMAIN_EVENT_STOPPED, next(later));
            assertEquals(0, seen.size(), "events after deregistering: " + seen);
            LibvirtException e = org.junit.jupiter.api.Assertions.assertThrows(LibvirtException.class,
                    () -> conn.domainEventDeregister(999));
            assertEquals(RV_ERROR_INTERNAL_ERROR + "/" + RV_ERROR_FROM_RPC, e.getCode() + "/" + e.getDomain());
        }
    }

    @Test
    void networkLifecycle() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            BlockingQueue<String> seen = new LinkedBlockingQueue<>();
            conn.networkEventRegisterLifecycle((c, net, event, detail) -> seen.add(net.getName() + " " + event));
            String xml = "<network><name>jnet</name><uuid>5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d21</uuid>"
                    + "<bridge name='jbr0'/><ip address='192.168.150.1' netmask='255.255.255.0'/></network>";
            Network net = conn.networkDefineXML(xml);
            net.create();
            net.destroy();
            net.undefine();
            List<String> got = new ArrayList<>();
            for (int i = 0; i < 4; i++)
                got.add(next(seen));
            assertEquals(List.of("jnet " + RV_NETWORK_EVENT_DEFINED, "jnet " + RV_NETWORK_EVENT_STARTED,
                    "jnet " + RV_NETWORK_EVENT_STOPPED, "jnet " + RV_NETWORK_EVENT_UNDEFINED), got);
        }
    }

    @Test
    void closeListenerSaysClient() throws Exception {
        BlockingQueue<Integer> reasons = new LinkedBlockingQueue<>();
        Connection conn = Connection.open(Peer.uri());
        conn.addCloseListener((c, reason) -> reasons.add(reason));
        conn.close();
        Integer r = reasons.poll(10, TimeUnit.SECONDS);
        assertEquals(Integer.valueOf(RemoteProtocol.RV_CLOSE_REASON_CLIENT), r);
    }
}
