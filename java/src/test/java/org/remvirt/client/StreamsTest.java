package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.remvirt.proto.RvValues.*;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.remvirt.proto.RvNonnullStorageVol;
import org.remvirt.proto.RvStoragePoolLookupByNameArgs;
import org.remvirt.proto.RvStorageVolCreateXmlArgs;
import org.remvirt.proto.RvStorageVolDeleteArgs;

/** Data streams: a volume's upload and download (rv.stream.uri's pool
 * rv.stream.pool: remvirtd's test driver keeps volume data in memory,
 * libvirtd's test driver has none, so its storage driver is used), and the
 * console, which neither test driver has. */
class StreamsTest {
    static byte[] download(Connection conn, RvNonnullStorageVol vol, long offset, long length) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[100000];
        try (Stream s = conn.storageVolDownload(vol, offset, length, 0)) {
            for (int n; (n = s.recv(buf, 0, buf.length)) >= 0;)
                out.write(buf, 0, n);
            s.finish();
        }
        return out.toByteArray();
    }

    @Test
    void volumeUploadAndDownload() throws Exception {
        try (Connection conn = Connection.open(Peer.need("rv.stream.uri"))) {
            var pool = conn.storagePoolLookupByName(new RvStoragePoolLookupByNameArgs(Peer.need("rv.stream.pool"))).pool;
            int capacity = 4 << 20;
            RvNonnullStorageVol vol = conn.storageVolCreateXml(new RvStorageVolCreateXmlArgs(pool,
                    "<volume><name>jstream.img</name><capacity unit='bytes'>" + capacity + "</capacity>"
                    + "<target><format type='raw'/></target></volume>", 0)).vol;
            try {
                // Several packets' worth and an odd tail, sent in uneven pieces.
                byte[] data = new byte[3 * 1048576 + 17];
                new Random(32).nextBytes(data);
                try (Stream up = conn.storageVolUpload(vol, 0, data.length, 0)) {
                    for (int at = 0; at < data.length; at += 700001)
                        up.send(data, at, Math.min(700001, data.length - at));
                    up.finish();
                }
                assertArrayEquals(data, download(conn, vol, 0, data.length));
                assertArrayEquals(Arrays.copyOfRange(data, 1000, 6000), download(conn, vol, 1000, 5000));
                // length 0: up to the end of the volume.
                byte[] all = download(conn, vol, 0, 0);
                assertEquals(capacity, all.length);
                assertArrayEquals(data, Arrays.copyOf(all, data.length));

                // An abort ends a download early; the connection goes on.
                Stream s = conn.storageVolDownload(vol, 0, 0, 0);
                assertTrue(s.recv(new byte[10], 0, 10) > 0);
                s.abort();
                assertEquals(vol.name, conn.storageVolLookupByName(
                        new org.remvirt.proto.RvStorageVolLookupByNameArgs(pool, "jstream.img")).vol.name);
            } finally {
                conn.storageVolDelete(new RvStorageVolDeleteArgs(vol, 0));
            }
        }
    }

    @Test
    void testDriverHasNoConsole() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            Domain test = conn.domainLookupByName("test");
            LibvirtException e = assertThrows(LibvirtException.class, () -> conn.domainOpenConsole(test, null, 0));
            assertEquals(RV_ERROR_NO_SUPPORT, e.getCode(), e.toString());
            assertTrue(e.getMessage().endsWith("virDomainOpenConsole"), e.getMessage());
            assertEquals("TEST", conn.getType());
        }
    }
}
