package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.remvirt.proto.RvValues.*;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * console: refused by both test drivers, and both ways on a real guest of
 * a QEMU driver (rv.console.uri; rv.console.xml is the test guest of
 * tests/functions.sh's qemu_guest_xml, its console on ttyS0). */
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

    /** A console's output, read by a thread of its own into a buffer that
     * the test waits on, so that a console that says nothing fails the
     * test at a deadline instead of hanging it. */
    static final class ConsoleReader {
        final Stream stream;
        private final ByteArrayOutputStream seen = new ByteArrayOutputStream();
        private boolean eof;
        private LibvirtException error;
        private final Thread thread;

        ConsoleReader(Stream stream) {
            this.stream = stream;
            thread = new Thread(this::run, "console reader");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            byte[] buf = new byte[4096];
            try {
                for (int n; (n = stream.recv(buf, 0, buf.length)) >= 0;) {
                    synchronized (this) {
                        seen.write(buf, 0, n);
                        notifyAll();
                    }
                }
                synchronized (this) {
                    eof = true;
                    notifyAll();
                }
            } catch (LibvirtException e) {
                synchronized (this) {
                    error = e;
                    notifyAll();
                }
            }
        }

        synchronized String text() {
            return seen.toString(StandardCharsets.ISO_8859_1);
        }

        /** Waits up to seconds until the output holds text. */
        synchronized void await(String text, int seconds) throws InterruptedException {
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            while (!text().contains(text)) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0 && !eof && error == null, "no " + text.strip() + " on the console within "
                        + seconds + " s (eof " + eof + ", error " + error + "); it said: " + text());
                wait(left / 1_000_000 + 1);
            }
        }

        /** Waits up to seconds for the reader to end: true at the end of
         * the data (recv -1), false with the error in error(). */
        synchronized boolean awaitEnd(int seconds) throws InterruptedException {
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            while (!eof && error == null) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "the console's recv neither ended nor failed within " + seconds + " s");
                wait(left / 1_000_000 + 1);
            }
            return eof;
        }

        synchronized LibvirtException error() {
            return error;
        }

        /** Types a line the guest has never seen; its tty echoes it (with
         * its CR made CR LF) only if the bytes reached it. */
        void echo(String token) throws Exception {
            stream.send((token + "\r").getBytes(StandardCharsets.US_ASCII), 0, token.length() + 1);
            await(token + "\r\n", 60);
        }
    }

    @Test
    void guestConsole() throws Exception {
        String xml = Files.readString(Path.of(Peer.need("rv.console.xml")));
        try (Connection conn = Connection.open(Peer.need("rv.console.uri"))) {
            // Transient: the guest is gone once it stops.
            Domain dom = conn.domainCreateXML(xml, 0);
            try {
                // Opened while the guest boots: its boot line comes through.
                ConsoleReader first = new ConsoleReader(conn.domainOpenConsole(dom, null, 0));
                first.await("remvirt-test-guest: ready\r\n", 300);
                first.echo("jconsole-" + System.nanoTime());

                // An abort ends the session at once, for this client (the
                // reader waiting in recv gets the abort) and for the server
                // (the console opens again without FORCE, and what the
                // next session types reaches the guest).
                first.stream.abort();
                assertFalse(first.awaitEnd(10), "recv after abort: " + first.text());
                assertEquals(RV_ERROR_OPERATION_ABORTED, first.error().getCode(), first.error().toString());

                // A finish from the client ends it too: the waiting
                // reader's recv gives -1.
                ConsoleReader second = new ConsoleReader(conn.domainOpenConsole(dom, null, 0));
                second.echo("jconsole-second-" + System.nanoTime());
                second.stream.finish();
                assertTrue(second.awaitEnd(10), "recv after finish: " + second.error());

                // The guest powers off under the console (its ACPI button
                // handler says so on it first): the data ends, recv gives
                // -1, and the finish is answered.
                ConsoleReader third = new ConsoleReader(conn.domainOpenConsole(dom, null, 0));
                third.echo("jconsole-third-" + System.nanoTime());
                dom.shutdown();
                third.await("remvirt-test-guest: power button\r\n", 60);
                assertTrue(third.awaitEnd(60), "the console failed as the guest stopped: " + third.error());
                third.stream.finish();
                // The pty's end may come before the daemon has seen QEMU
                // exit: the transient guest goes soon after.
                for (long deadline = System.nanoTime() + 30_000_000_000L;; Thread.sleep(100)) {
                    try {
                        conn.domainLookupByName(dom.getName());
                    } catch (LibvirtException e) {
                        assertEquals(RV_ERROR_NO_DOMAIN, e.getCode(), e.toString());
                        break;
                    }
                    assertTrue(System.nanoTime() < deadline, "the guest is still there 30 s after its console ended");
                }
            } finally {
                try {
                    dom.destroy();
                } catch (LibvirtException e) {
                    // stopped already, as it should be
                }
            }
        }
    }
}
