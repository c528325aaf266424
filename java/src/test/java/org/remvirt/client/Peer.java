package org.remvirt.client;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The server under test, as tests/interop/test-java-client.sh describes it
 * in system properties: rv.server (remvirtd or libvirtd), rv.uri, rv.uri.ro,
 * and where it listens: rv.tls.uri, rv.sasl.uri with rv.sasl.user and
 * rv.sasl.password, rv.pid for remvirtd's process. */
final class Peer {
    private Peer() {
    }

    static String server() {
        return need("rv.server");
    }

    static String uri() {
        return need("rv.uri");
    }

    static String need(String name) {
        String v = System.getProperty(name);
        assumeTrue(v != null && !v.isEmpty(), "system property " + name + " not set (run through "
                + "tests/interop/test-java-client.sh)");
        return v;
    }

    static String domainXml(String name, String uuid) {
        return "<domain type='test'>\n  <name>" + name + "</name>\n  <uuid>" + uuid + "</uuid>\n"
                + "  <memory unit='KiB'>1048576</memory>\n  <currentMemory unit='KiB'>524288</currentMemory>\n"
                + "  <vcpu>2</vcpu>\n  <os><type>hvm</type></os>\n</domain>\n";
    }
}
