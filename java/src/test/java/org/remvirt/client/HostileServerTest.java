package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.remvirt.proto.RemoteProtocol;
import org.remvirt.proto.RvValues;
import org.remvirt.xdr.XdrReader;
import org.remvirt.xdr.XdrWriter;

/** A server of the test's own that answers the handshake and then sends
 * what no server should: every case ends in a LibvirtException that says
 * what was wrong, never a hang, and the connection is unusable after. */
class HostileServerTest {
    private Path dir;
    private Path sock;
    private ServerSocketChannel listener;
    private Thread server;
    private boolean hostileHandshake;    // from the first call on

    @BeforeEach
    void listen() throws IOException {
        dir = Files.createTempDirectory("rv-hostile");
        sock = dir.resolve("sock");
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(sock));
    }

    @AfterEach
    void stop() throws Exception {
        listener.close();
        if (server != null)
            server.join(5000);
        Files.deleteIfExists(sock);
        Files.deleteIfExists(dir);
    }

    private static byte[] packet(int prog, int proc, int type, int serial, int status, byte[] body) {
        XdrWriter w = new XdrWriter();
        w.writeInt(28 + body.length);
        w.writeInt(prog);
        w.writeInt(1);
        w.writeInt(proc);
        w.writeInt(type);
        w.writeInt(serial);
        w.writeInt(status);
        byte[] out = java.util.Arrays.copyOf(w.array(), w.size() + body.length);
        System.arraycopy(body, 0, out, w.size(), body.length);
        return out;
    }

    private static byte[] ints(int... v) {
        XdrWriter w = new XdrWriter();
        for (int i : v)
            w.writeInt(i);
        return java.util.Arrays.copyOf(w.array(), w.size());
    }

    /** Serves one client: the handshake as a server would answer it (no
     * keepalive, no close callback), then hostile.apply(proc, serial) for
     * every later call (null: close the connection). */
    private void serve(BiFunction<Integer, Integer, byte[]> hostile) {
        server = new Thread(() -> {
            try (SocketChannel c = listener.accept()) {
                while (true) {
                    ByteBuffer head = ByteBuffer.allocate(4);
                    while (head.hasRemaining())
                        if (c.read(head) < 0)
                            return;
                    int len = head.flip().getInt();
                    ByteBuffer rest = ByteBuffer.allocate(len - 4);
                    while (rest.hasRemaining())
                        if (c.read(rest) < 0)
                            return;
                    XdrReader r = new XdrReader(rest.array(), 0, len - 4);
                    r.readInt();
                    r.readInt();
                    int proc = r.readInt();
                    r.readInt();
                    int serial = r.readInt();
                    byte[] out;
                    if (proc == RemoteProtocol.RV_PROC_AUTH_LIST && !hostileHandshake)
                        out = packet(RemoteProtocol.RV_REMOTE_PROGRAM, proc, 1, serial, 0, ints(1, 0));
                    else if (proc == RemoteProtocol.RV_PROC_CONNECT_SUPPORTS_FEATURE)
                        out = packet(RemoteProtocol.RV_REMOTE_PROGRAM, proc, 1, serial, 0, ints(0));
                    else if (proc == RemoteProtocol.RV_PROC_CONNECT_OPEN)
                        out = packet(RemoteProtocol.RV_REMOTE_PROGRAM, proc, 1, serial, 0, new byte[0]);
                    else
                        out = hostile.apply(proc, serial);
                    if (out == null)
                        return;
                    c.write(ByteBuffer.wrap(out));
                }
            } catch (IOException e) {
                // the client went away: that is how these cases end
            }
        });
        server.start();
    }

    /** The call fails; after a broken stream the connection is gone, while
     * a bad payload in an intact packet fails that call only. */
    private LibvirtException callFails(boolean streamBroken, BiFunction<Integer, Integer, byte[]> hostile) {
        serve(hostile);
        return assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            Connection conn = Connection.open("test+unix:///default?socket=" + sock,
                    new OpenOptions().keepalive(0, 0));
            LibvirtException e = assertThrows(LibvirtException.class, conn::getType);
            assertEquals(!streamBroken, conn.isAlive(), "connection alive after: " + e);
            assertThrows(LibvirtException.class, conn::getType);
            try {
                conn.close();
            } catch (LibvirtException closing) {
                // CONNECT_CLOSE gets the same treatment
            }
            return e;
        });
    }

    private LibvirtException callFails(BiFunction<Integer, Integer, byte[]> hostile) {
        return callFails(true, hostile);
    }

    @Test
    void hugeLength() {
        LibvirtException e = callFails((proc, serial) -> ints(0x7fffffff, 0, 0, 0, 0, 0, 0));
        assertTrue(e.getMessage().contains("packet length of 2147483647"), e.getMessage());
    }

    @Test
    void lengthBelowTheHeader() {
        LibvirtException e = callFails((proc, serial) -> ints(8, 0));
        assertTrue(e.getMessage().contains("packet length of 8"), e.getMessage());
    }

    @Test
    void replyToNoCall() {
        LibvirtException e = callFails((proc, serial) ->
                packet(RemoteProtocol.RV_REMOTE_PROGRAM, proc, 1, serial + 1000, 0, new byte[0]));
        assertTrue(e.getMessage().contains("which no call is waiting for"), e.getMessage());
    }

    @Test
    void unknownProgram() {
        LibvirtException e = callFails((proc, serial) -> packet(0x12345678, proc, 1, serial, 0, new byte[0]));
        assertTrue(e.getMessage().contains("unknown program 12345678"), e.getMessage());
    }

    @Test
    void stringPastItsLimit() {
        // CONNECT_GET_TYPE's string claims 5 MiB with 4 bytes behind it.
        LibvirtException e = callFails(false, (proc, serial) ->
                packet(RemoteProtocol.RV_REMOTE_PROGRAM, proc, 1, serial, 0, ints(5 << 20, 0)));
        assertEquals(RvValues.RV_ERROR_RPC, e.getCode(), e.toString());
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
    }

    @Test
    void badPacketsDuringTheHandshake() {
        hostileHandshake = true;
        serve((proc, serial) -> ints(0x7fffffff, 0, 0, 0, 0, 0, 0));
        LibvirtException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThrows(
                LibvirtException.class, () -> Connection.open("test+unix:///default?socket=" + sock)));
        assertTrue(e.getMessage().contains("packet length of 2147483647"), e.getMessage());
    }

    @Test
    void endOfStreamBeforeTheReply() {
        LibvirtException e = callFails((proc, serial) -> null);
        assertTrue(e.getMessage().contains("closed the connection"), e.getMessage());
    }
}
