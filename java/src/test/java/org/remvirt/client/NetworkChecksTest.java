package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.remvirt.proto.RvValues.*;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The network calls against test:///default's network "default". */
class NetworkChecksTest {
    @Test
    void defaultNetworkAndLifecycle() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            Network def = conn.networkLookupByName("default");
            assertTrue(def.isActive());
            assertTrue(def.isPersistent());
            assertEquals("virbr0", def.getBridgeName());
            assertTrue(def.getXMLDesc(0).contains("<name>default</name>"));
            assertEquals("default", conn.networkLookupByUUIDString(def.getUUIDString()).getName());
            assertEquals(1, conn.numOfNetworks());
            assertEquals(List.of("default"), conn.listNetworks());
            assertEquals(0, conn.numOfDefinedNetworks());

            String xml = "<network><name>jnet2</name><uuid>5f1e6a52-7c1d-4f0e-9a1b-0d4c2e6f7d22</uuid>"
                    + "<bridge name='jbr2'/><ip address='192.168.151.1' netmask='255.255.255.0'/></network>";
            Network net = conn.networkDefineXML(xml);
            assertFalse(net.isActive());
            assertEquals(List.of("jnet2"), conn.listDefinedNetworks());
            assertEquals(List.of("default", "jnet2"), conn.listAllNetworks(0).stream().map(Network::getName)
                    .sorted().collect(Collectors.toList()));
            assertEquals(List.of("jnet2"), conn.listAllNetworks(RV_CONNECT_LIST_NETWORKS_INACTIVE).stream()
                    .map(Network::getName).collect(Collectors.toList()));
            net.setAutostart(true);
            assertTrue(net.getAutostart());
            net.setAutostart(false);
            net.create();
            assertTrue(net.isActive());
            net.destroy();
            net.undefine();
            LibvirtException e = assertThrows(LibvirtException.class, () -> conn.networkLookupByName("jnet2"));
            assertEquals(RV_ERROR_NO_NETWORK, e.getCode(), e.toString());
        }
    }
}
