package org.remvirt.client;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.remvirt.proto.RemoteCalls;
import org.remvirt.proto.RemoteProtocol;
import org.remvirt.proto.RvError;
import org.remvirt.proto.RvValues;
import org.remvirt.xdr.XdrDecoder;
import org.remvirt.xdr.XdrEncodable;
import org.remvirt.xdr.XdrException;
import org.remvirt.xdr.XdrReader;
import org.remvirt.xdr.XdrWriter;

/**
 * One connection to a libvirt-protocol server (remvirtd or libvirtd), which
 * any number of threads may share: each call gets a serial, calls are
 * pipelined, and every reply goes to the thread waiting for that serial.
 * Over a Unix or TCP socket the waiting callers read the socket themselves,
 * one at a time (the reader role passes from one to the next), so a reply
 * wakes its caller directly; while no call is waiting, a background thread
 * reads.  Over TLS or a SASL layer a reader thread does all the reading.
 * Whoever reads answers keepalive PINGs and passes events to the listeners
 * (on an event thread of their own, so a listener may make calls).
 *
 * <pre>
 * try (Connection conn = Connection.open("test+unix:///default?socket=/run/remvirt/remvirt-sock")) {
 *     Domain dom = conn.domainLookupByName("test");
 *     DomainInfo info = dom.getInfo();
 * }
 * </pre>
 *
 * The high-level calls (getType, domainLookupByName, listAllDomains, ...)
 * return {@link Domain} and {@link Network} handles; the generated methods of
 * {@link RemoteCalls} (connectGetType, domainGetInfo, ...) are the procedures
 * themselves, one each, with the wire structs.
 */
public final class Connection extends RemoteCalls implements AutoCloseable {
    /** libvirt's defaults: a dead server is noticed after about half a minute. */
    public static final int KEEPALIVE_INTERVAL = 5;
    public static final int KEEPALIVE_COUNT = 5;

    private static final int HEADER = RemoteProtocol.RV_HEADER_SIZE;
    private static final int LEN = RemoteProtocol.RV_LEN_WORD_SIZE;

    /** A call waiting for its reply. */
    private static final class Pending {
        final Thread waiter = Thread.currentThread();
        volatile boolean done;
        byte[] packet;          // the whole reply, set before done
        int status;
        LibvirtException failure;
    }

    private Transport transport;        // replaced by the SASL layer before the reader starts
    private final String uri;
    private final Object writeLock = new Object();
    private final AtomicInteger serials = new AtomicInteger();
    private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final Map<Integer, Stream> streams = new ConcurrentHashMap<>();   // by the opening call's serial
    private final Thread reader;
    private final ExecutorService eventThread;
    private final ScheduledExecutorService keepaliveThread;
    private final int spinNanos;
    private volatile LibvirtException failed;      // set once the connection is unusable
    private volatile boolean closing;
    private volatile long lastHeard = System.nanoTime();
    private volatile int pingsUnanswered;
    private boolean readOnly;

    private final Object listenerLock = new Object();
    private final Map<Integer, DomainLifecycleListener> domainListeners = new HashMap<>();
    private final Map<Integer, NetworkLifecycleListener> networkListeners = new HashMap<>();
    private final List<CloseListener> closeListeners = new CopyOnWriteArrayList<>();
    private volatile int closeReason = -1;

    // ------------------------------------------------------------ opening

    /** Opens URI read-write with default options (auth none, or SASL with
     * the credentials in {@link OpenOptions}). */
    public static Connection open(String uri) throws LibvirtException {
        return open(uri, new OpenOptions());
    }

    public static Connection openReadOnly(String uri) throws LibvirtException {
        return open(uri, new OpenOptions().readOnly(true));
    }

    /**
     * Opens a connection: URIs as libvirt's, DRIVER[+TRANSPORT]://[USER@][HOST[:PORT]]/PATH[?PARAMS]
     * with the transports unix (socket=PATH), tcp and tls (pkipath=DIR,
     * no_verify=1), and auth=sasl or auth=sasl.MECH to ask for SASL.
     */
    public static Connection open(String uri, OpenOptions options) throws LibvirtException {
        ConnectUri u = ConnectUri.parse(uri);
        Transport t = connect(u);
        Connection c = new Connection(t, uri, options.spinMicros);
        try {
            c.handshake(u, options);
        } catch (LibvirtException | RuntimeException e) {
            c.shutdown(RemoteProtocol.RV_CLOSE_REASON_CLIENT, null);
            throw e;
        }
        return c;
    }

    private static Transport connect(ConnectUri u) throws LibvirtException {
        try {
            switch (u.transport) {
            case "unix": {
                SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    ch.connect(UnixDomainSocketAddress.of(u.socketPath()));
                } catch (IOException e) {
                    ch.close();
                    throw e;
                }
                return new Transport.Channel(ch);
            }
            case "tcp": {
                SocketChannel ch = SocketChannel.open(new InetSocketAddress(u.host, u.port(16509)));
                ch.socket().setTcpNoDelay(true);
                return new Transport.Channel(ch);
            }
            case "tls": {
                String pki = u.param("pkipath");
                Path dir = pki != null ? Path.of(pki) : Tls.defaultPkiDir();
                return new Transport.Streams(Tls.connect(u.host, u.port(16514), dir,
                        "1".equals(u.param("no_verify"))));
            }
            default:
                throw new LibvirtException(RvValues.RV_ERROR_INVALID_ARG, RvValues.RV_ERROR_FROM_REMOTE, 2,
                        "transport '" + u.transport + "' is not supported by the Java client (unix, tcp, tls)");
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new LibvirtException(RvValues.RV_ERROR_SYSTEM_ERROR, RvValues.RV_ERROR_FROM_RPC,
                    "cannot connect to " + u.where() + ": " + e, e);
        }
    }

    private Connection(Transport transport, String uri, int spinMicros) {
        this.transport = transport;
        this.uri = uri;
        this.spinNanos = Math.max(0, spinMicros) * 1000;
        this.eventThread = Executors.newSingleThreadExecutor(r -> daemon(r, "remvirt-events"));
        this.keepaliveThread = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "remvirt-keepalive"));
        this.reader = daemon(this::background, "remvirt-reader");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** The calls libvirt's own client makes, in its order. */
    private void handshake(ConnectUri u, OpenOptions options) throws LibvirtException {
        List<Integer> types = authList().types;
        Sasl.authenticateIfNeeded(this, u, types, options);
        // Authentication is done in this thread, a packet at a time, so
        // that nothing is read past the point where a SASL layer starts.
        startReading();
        boolean keepalive = supportsFeature(RemoteProtocol.RV_FEATURE_PROGRAM_KEEPALIVE);
        connectOpen(new org.remvirt.proto.RvConnectOpenArgs(u.serverName(),
                options.readOnly ? RemoteProtocol.RV_CONNECT_RO : 0));
        readOnly = options.readOnly;
        if (supportsFeature(RemoteProtocol.RV_FEATURE_REMOTE_CLOSE_CALLBACK))
            connectRegisterCloseCallback();
        if (keepalive && options.keepaliveInterval > 0)
            startKeepalive(options.keepaliveInterval, options.keepaliveCount);
    }

    private boolean supportsFeature(int feature) throws LibvirtException {
        return connectSupportsFeature(new org.remvirt.proto.RvConnectSupportsFeatureArgs(feature)).supported != 0;
    }

    /** After a SASL exchange that negotiated a security layer: the server
     * starts it right after its last SASL reply, and so do we. */
    void wrapTransport(javax.security.sasl.SaslClient sasl) {
        transport = new SaslLayer(transport, sasl);
    }


    // ------------------------------------------------------------ calls

    @Override
    protected <T> T call(int proc, XdrEncodable args, XdrDecoder<T> ret) throws LibvirtException {
        return callProgram(RemoteProtocol.RV_REMOTE_PROGRAM, RemoteProtocol.RV_REMOTE_VERSION, proc, args, ret);
    }

    private <T> T callProgram(int prog, int vers, int proc, XdrEncodable args, XdrDecoder<T> ret)
            throws LibvirtException {
        return callProgram(prog, vers, proc, args, ret, null);
    }

    /** stream: the stream this call opens, registered before the call is
     * sent (its data may follow the reply at once). */
    private <T> T callProgram(int prog, int vers, int proc, XdrEncodable args, XdrDecoder<T> ret, Stream stream)
            throws LibvirtException {
        LibvirtException f = failed;
        if (f != null)
            throw new LibvirtException(f.getCode(), f.getDomain(), f.getLevel(), f.getMessage());
        int serial = serials.incrementAndGet();
        if (stream != null) {
            stream.serial = serial;
            streams.put(serial, stream);
        }
        XdrWriter w = new XdrWriter(128);
        w.writeInt(0);
        w.writeInt(prog);
        w.writeInt(vers);
        w.writeInt(proc);
        w.writeInt(RemoteProtocol.RV_CALL);
        w.writeInt(serial);
        w.writeInt(RemoteProtocol.RV_OK);
        try {
            if (args != null)
                args.encode(w);
        } catch (XdrException e) {
            throw new LibvirtException(RvValues.RV_ERROR_INVALID_ARG, RvValues.RV_ERROR_FROM_RPC, 2,
                    "cannot encode the arguments: " + e.getMessage());
        }
        if (w.size() - LEN > RemoteProtocol.RV_PACKET_MAX)
            throw new LibvirtException(RvValues.RV_ERROR_RPC, RvValues.RV_ERROR_FROM_RPC, 2,
                    "the call's packet of " + w.size() + " bytes exceeds the protocol's limit");
        w.putInt(0, w.size());

        Pending p = new Pending();
        pending.put(serial, p);
        if (failed != null) {
            // shutdown() may have failed the waiting calls before this one
            pending.remove(serial);
            throw failedCopy();
        }
        try {
            synchronized (writeLock) {
                transport.write(w.array(), 0, w.size());
            }
        } catch (IOException e) {
            pending.remove(serial);
            shutdown(RemoteProtocol.RV_CLOSE_REASON_ERROR, "cannot send: " + e.getMessage());
            throw failedCopy();
        }
        if (!started)
            readDirect(p, serial);
        else if (callerReads)
            readAsCaller(p);
        else
            waitFor(p);
        if (p.failure != null)
            throw p.failure;
        XdrReader r = new XdrReader(p.packet, HEADER, p.packet.length - HEADER);
        try {
            if (p.status == RemoteProtocol.RV_ERROR)
                throw LibvirtException.fromWire(RvError.decode(r));
            T value = ret != null ? ret.decode(r) : null;
            if (r.remaining() != 0)
                throw new XdrException(r.remaining() + " bytes left over after the reply");
            return value;
        } catch (XdrException e) {
            throw new LibvirtException(RvValues.RV_ERROR_RPC, RvValues.RV_ERROR_FROM_RPC, 2,
                    "the server's reply to procedure " + proc + " is malformed: " + e.getMessage());
        }
    }

    /** A short spin first: a reply often comes sooner than a thread sleeps
     * and wakes; then park until the reader hands it over. */
    private void waitFor(Pending p) {
        if (spinNanos > 0) {
            long until = System.nanoTime() + spinNanos;
            while (!p.done && System.nanoTime() < until)
                Thread.yield();
        }
        while (!p.done)
            LockSupport.park(p);
    }

    /** Before the reader thread runs: read packets here until the reply. */
    private void readDirect(Pending p, int serial) throws LibvirtException {
        try {
            while (!p.done) {
                byte[] head = new byte[LEN];
                readFully(head);
                int len = new XdrReader(head, 0, LEN).readInt();
                if (len < LEN + HEADER || len - LEN > RemoteProtocol.RV_PACKET_MAX)
                    throw new IOException("the server sent a packet length of " + Integer.toUnsignedString(len));
                byte[] pkt = new byte[len - LEN];
                readFully(pkt);
                packet(pkt);
            }
        } catch (IOException | XdrException e) {
            pending.remove(serial);
            shutdown(RemoteProtocol.RV_CLOSE_REASON_EOF, e instanceof EOFException
                    ? "the server closed the connection before answering (it may be at a client limit)"
                    : "cannot read from the server: " + e.getMessage());
            throw failedCopy();
        }
    }

    private void readFully(byte[] b) throws IOException {
        for (int off = 0; off < b.length;) {
            int got = transport.read(b, off, b.length - off);
            if (got < 0)
                throw new EOFException();
            off += got;
        }
    }

    private LibvirtException failedCopy() {
        LibvirtException f = failed;
        return new LibvirtException(f.getCode(), f.getDomain(), f.getLevel(), f.getMessage());
    }

    // ------------------------------------------------------------ callers read

    /** Unix and TCP sockets without a SASL layer: non-blocking from here on,
     * read by the callers (readAsCaller) and, while none waits, by the
     * background thread (idleReader). */
    private volatile boolean started;
    private boolean callerReads;
    private final java.util.concurrent.locks.ReentrantLock role = new java.util.concurrent.locks.ReentrantLock();
    private java.nio.channels.Selector callerSelector;   // used by the role's holder
    private java.nio.channels.Selector idleSelector;     // used by the background thread
    private byte[] rbuf = new byte[65536];               // the reading thread's
    private int rhave;
    private volatile long lastCallEnded = System.nanoTime();
    /** While calls come this often, the background thread keeps out of the way. */
    private static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private void startReading() throws LibvirtException {
        if (transport instanceof Transport.Channel) {
            try {
                SocketChannel ch = ((Transport.Channel) transport).channel();
                ch.configureBlocking(false);
                callerSelector = java.nio.channels.Selector.open();
                idleSelector = java.nio.channels.Selector.open();
                ch.register(callerSelector, java.nio.channels.SelectionKey.OP_READ);
                ch.register(idleSelector, java.nio.channels.SelectionKey.OP_READ);
                callerReads = true;
            } catch (IOException e) {
                shutdown(RemoteProtocol.RV_CLOSE_REASON_ERROR, "cannot set up the socket: " + e.getMessage());
                throw failedCopy();
            }
        }
        started = true;
        reader.start();
    }

    /** Reads what the socket has and handles every whole packet in it;
     * the number of bytes read, or -1 at end of stream.  Only one thread
     * reads at a time: the role's holder, or the reader thread. */
    private int readAvailable() throws IOException {
        int got = transport.read(rbuf, rhave, rbuf.length - rhave);
        if (got <= 0)
            return got;
        rhave += got;
        lastHeard = System.nanoTime();
        pingsUnanswered = 0;
        int at = 0;
        while (rhave - at >= LEN) {
            int len = ((rbuf[at] & 0xff) << 24) | ((rbuf[at + 1] & 0xff) << 16)
                    | ((rbuf[at + 2] & 0xff) << 8) | (rbuf[at + 3] & 0xff);
            if (len < LEN + HEADER || len - LEN > RemoteProtocol.RV_PACKET_MAX)
                throw new IOException("the server sent a packet length of " + Integer.toUnsignedString(len));
            if (rhave - at < len) {
                if (len > rbuf.length)
                    rbuf = Arrays.copyOf(rbuf, len);
                break;
            }
            packet(Arrays.copyOfRange(rbuf, at + LEN, at + len));
            at += len;
        }
        System.arraycopy(rbuf, at, rbuf, 0, rhave - at);
        rhave -= at;
        return got;
    }

    private void readFailed(Exception e) {
        if (closing)
            shutdown(RemoteProtocol.RV_CLOSE_REASON_CLIENT, "connection closed");
        else if (e instanceof EOFException)
            shutdown(RemoteProtocol.RV_CLOSE_REASON_EOF, "the server closed the connection");
        else
            shutdown(RemoteProtocol.RV_CLOSE_REASON_ERROR, "cannot read from the server: " + e.getMessage());
    }

    /** Waits for p's reply, reading the socket whenever no other thread does. */
    private void readAsCaller(Pending p) {
        while (!p.done) {
            if (!role.tryLock()) {
                idleSelector.wakeup();          // the background thread may hold it
                LockSupport.parkNanos(p, TimeUnit.MILLISECONDS.toNanos(10));
                continue;
            }
            try {
                readUntil(p);
            } finally {
                role.unlock();
                passRole();
            }
        }
        lastCallEnded = System.nanoTime();
    }

    /** Holding the role: poll for up to spinNanos (a reply is often that
     * quick), then sleep in select until the socket has data. */
    private void readUntil(Pending p) {
        try {
            long spinUntil = System.nanoTime() + spinNanos;
            while (!p.done && failed == null) {
                int got = readAvailable();
                if (got < 0)
                    throw new EOFException();
                if (got > 0 || p.done)
                    continue;
                if (System.nanoTime() < spinUntil) {
                    // Yield rather than spin in place: when the server
                    // shares our CPU it runs at once (as libremvirt does).
                    Thread.yield();
                    continue;
                }
                callerSelector.select(1000);
                callerSelector.selectedKeys().clear();
            }
        } catch (IOException | XdrException | java.nio.channels.ClosedSelectorException e) {
            readFailed(e);
        }
    }

    /** The role is free: wake one caller still waiting, to take it. */
    private void passRole() {
        for (Pending q : pending.values()) {
            if (!q.done) {
                LockSupport.unpark(q.waiter);
                return;
            }
        }
    }

    /** The background thread when callers read: reads while no call waits
     * (events, PINGs, end of stream) and keeps out of the callers' way. */
    private void idleReader() {
        while (failed == null) {
            if (!pending.isEmpty() || System.nanoTime() - lastCallEnded < IDLE_NANOS || !role.tryLock()) {
                LockSupport.parkNanos(IDLE_NANOS);
                continue;
            }
            try {
                while (failed == null && pending.isEmpty()) {
                    int got = readAvailable();
                    if (got < 0)
                        throw new EOFException();
                    if (got == 0) {
                        idleSelector.select(1000);
                        idleSelector.selectedKeys().clear();
                    }
                }
            } catch (IOException | XdrException | java.nio.channels.ClosedSelectorException e) {
                readFailed(e);
            } finally {
                role.unlock();
                passRole();
            }
        }
    }

    // ------------------------------------------------------------ the reader thread

    private void background() {
        if (callerReads)
            idleReader();
        else
            readLoop();
    }

    /** TLS or a SASL layer: this thread reads everything (blocking reads). */
    private void readLoop() {
        try {
            while (readAvailable() >= 0) {
                // every whole packet is handled as it comes
            }
            throw new EOFException();
        } catch (IOException | XdrException e) {
            readFailed(e);
        }
    }

    /** One packet (header and payload, without the length word). */
    private void packet(byte[] pkt) throws IOException {
        XdrReader h = new XdrReader(pkt, 0, HEADER);
        int prog = h.readInt(), vers = h.readInt(), proc = h.readInt();
        int type = h.readInt(), serial = h.readInt(), status = h.readInt();
        if (prog == RemoteProtocol.RV_KEEPALIVE_PROGRAM) {
            if (proc == RemoteProtocol.RV_KEEPALIVE_PROC_PING)
                sendKeepalive(RemoteProtocol.RV_KEEPALIVE_PROC_PONG);
            return;
        }
        if (prog != RemoteProtocol.RV_REMOTE_PROGRAM || vers != RemoteProtocol.RV_REMOTE_VERSION)
            throw new IOException("packet of unknown program " + Integer.toHexString(prog) + " version " + vers);
        if (type == RemoteProtocol.RV_REPLY) {
            Pending p = pending.remove(serial);
            if (p == null && status == RemoteProtocol.RV_ERROR && streams.containsKey(serial)) {
                // libvirtd fails some streams with a REPLY ERROR (wire-protocol.md 13.2).
                streamFailed(streams.remove(serial), pkt);
                return;
            }
            if (p == null)
                throw new IOException("reply with serial " + serial + ", which no call is waiting for");
            p.packet = pkt;
            p.status = status;
            p.done = true;
            LockSupport.unpark(p.waiter);
        } else if (type == RemoteProtocol.RV_MESSAGE) {
            try {
                eventThread.execute(() -> event(proc, pkt));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // the connection is closing: no more events
            }
        } else if (type == RemoteProtocol.RV_STREAM || type == RemoteProtocol.RV_STREAM_HOLE) {
            Stream st = streams.get(serial);
            if (st == null || st.proc != proc)
                return;     // a stream that ended or never was: dropped, as libremvirt does
            if (type == RemoteProtocol.RV_STREAM_HOLE) {
                st.fail(new LibvirtException(RvValues.RV_ERROR_RPC, RvValues.RV_ERROR_FROM_STREAMS, 2,
                        "the server sent a hole on a stream that is not sparse"));
                streamGone(st, true);
            } else if (status == RemoteProtocol.RV_CONTINUE) {
                if (pkt.length == HEADER)
                    st.endOfData();
                else
                    st.data(Arrays.copyOfRange(pkt, HEADER, pkt.length));
            } else if (status == RemoteProtocol.RV_OK) {
                streams.remove(serial);
                st.answer();
            } else {
                streams.remove(serial);
                streamFailed(st, pkt);
            }
        } else {
            throw new IOException("packet of type " + type);
        }
    }

    private void streamFailed(Stream st, byte[] pkt) {
        try {
            st.fail(LibvirtException.fromWire(RvError.decode(new XdrReader(pkt, HEADER, pkt.length - HEADER))));
        } catch (XdrException e) {
            st.fail(new LibvirtException(RvValues.RV_ERROR_RPC, RvValues.RV_ERROR_FROM_STREAMS, 2,
                    "the server's stream error is malformed: " + e.getMessage()));
        }
    }

    /** One packet of stream st: data (CONTINUE), finish (OK) or abort (ERROR). */
    void sendStream(Stream st, int status, byte[] data, int off, int len) throws LibvirtException {
        if (failed != null)
            throw failedCopy();
        XdrWriter w = new XdrWriter(LEN + HEADER + len);
        w.writeInt(LEN + HEADER + len);
        w.writeInt(RemoteProtocol.RV_REMOTE_PROGRAM);
        w.writeInt(RemoteProtocol.RV_REMOTE_VERSION);
        w.writeInt(st.proc);
        w.writeInt(RemoteProtocol.RV_STREAM);
        w.writeInt(st.serial);
        w.writeInt(status);
        try {
            synchronized (writeLock) {
                transport.write(w.array(), 0, w.size());
                if (len > 0)
                    transport.write(data, off, len);
            }
        } catch (IOException e) {
            shutdown(RemoteProtocol.RV_CLOSE_REASON_ERROR, "cannot send: " + e.getMessage());
            throw failedCopy();
        }
    }

    /** The stream is over for this client; abort: tell the server too. */
    void streamGone(Stream st, boolean abort) {
        if (streams.remove(st.serial, st) && abort) {
            try {
                sendStream(st, RemoteProtocol.RV_ERROR, new byte[0], 0, 0);
            } catch (LibvirtException e) {
                // the connection failed: the stream went with it
            }
        }
    }

    private Stream openStream(int proc, XdrEncodable args) throws LibvirtException {
        Stream st = new Stream(this, proc);
        try {
            callProgram(RemoteProtocol.RV_REMOTE_PROGRAM, RemoteProtocol.RV_REMOTE_VERSION, proc, args, null, st);
        } catch (LibvirtException e) {
            streams.remove(st.serial, st);
            throw e;
        }
        return st;
    }

    /** Uploads into vol from offset (length 0: up to its end): send the data
     * on the stream, then {@link Stream#finish}. */
    public Stream storageVolUpload(org.remvirt.proto.RvNonnullStorageVol vol, long offset, long length, int flags)
            throws LibvirtException {
        return openStream(RemoteProtocol.RV_PROC_STORAGE_VOL_UPLOAD,
                new org.remvirt.proto.RvStorageVolUploadArgs(vol, offset, length, flags));
    }

    /** Downloads vol from offset (length 0: up to its end): read the stream
     * to its end (recv returns -1), then {@link Stream#finish}. */
    public Stream storageVolDownload(org.remvirt.proto.RvNonnullStorageVol vol, long offset, long length, int flags)
            throws LibvirtException {
        return openStream(RemoteProtocol.RV_PROC_STORAGE_VOL_DOWNLOAD,
                new org.remvirt.proto.RvStorageVolDownloadArgs(vol, offset, length, flags));
    }

    /** The guest's console devName (null: the first), both ways, until
     * recv returns -1 (the guest stopped, or a FORCE open took it over). */
    public Stream domainOpenConsole(Domain dom, String devName, int flags) throws LibvirtException {
        return openStream(RemoteProtocol.RV_PROC_DOMAIN_OPEN_CONSOLE,
                new org.remvirt.proto.RvDomainOpenConsoleArgs(dom.toWire(), devName, flags));
    }

    private void sendKeepalive(int proc) {
        XdrWriter w = new XdrWriter(LEN + HEADER);
        w.writeInt(LEN + HEADER);
        w.writeInt(RemoteProtocol.RV_KEEPALIVE_PROGRAM);
        w.writeInt(RemoteProtocol.RV_KEEPALIVE_VERSION);
        w.writeInt(proc);
        w.writeInt(RemoteProtocol.RV_MESSAGE);
        w.writeInt(0);
        w.writeInt(RemoteProtocol.RV_OK);
        try {
            synchronized (writeLock) {
                transport.write(w.array(), 0, w.size());
            }
        } catch (IOException e) {
            shutdown(RemoteProtocol.RV_CLOSE_REASON_ERROR, "cannot send a keepalive message: " + e.getMessage());
        }
    }

    private void startKeepalive(int interval, int count) {
        long intervalNanos = TimeUnit.SECONDS.toNanos(interval);
        keepaliveThread.scheduleAtFixedRate(() -> {
            // Once close() began, the server may close its end at any moment:
            // a PING then would fail the close that is under way.
            if (failed != null || closing)
                return;
            if (System.nanoTime() - lastHeard < intervalNanos - TimeUnit.MILLISECONDS.toNanos(10))
                return;
            if (pingsUnanswered >= count) {
                shutdown(RemoteProtocol.RV_CLOSE_REASON_KEEPALIVE, "connection lost: the server did not answer "
                        + count + " keepalive pings");
                return;
            }
            pingsUnanswered++;
            sendKeepalive(RemoteProtocol.RV_KEEPALIVE_PROC_PING);
        }, interval, interval, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------ events

    private void event(int proc, byte[] pkt) {
        XdrReader r = new XdrReader(pkt, HEADER, pkt.length - HEADER);
        try {
            if (proc == RemoteProtocol.RV_PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE) {
                var msg = org.remvirt.proto.RvDomainEventCallbackLifecycleMsg.decode(r);
                DomainLifecycleListener l;
                synchronized (listenerLock) {
                    l = domainListeners.get(msg.callbackID);
                }
                if (l != null)
                    l.onLifecycle(this, new Domain(this, msg.msg.dom), msg.msg.event, msg.msg.detail);
            } else if (proc == RemoteProtocol.RV_PROC_NETWORK_EVENT_LIFECYCLE) {
                var msg = org.remvirt.proto.RvNetworkEventLifecycleMsg.decode(r);
                NetworkLifecycleListener l;
                synchronized (listenerLock) {
                    l = networkListeners.get(msg.callbackID);
                }
                if (l != null)
                    l.onLifecycle(this, new Network(this, msg.net), msg.event, msg.detail);
            } else if (proc == RemoteProtocol.RV_PROC_CONNECT_EVENT_CONNECTION_CLOSED) {
                closeReason = org.remvirt.proto.RvConnectEventConnectionClosedMsg.decode(r).reason;
            }
            // Other messages are events this client does not subscribe to.
        } catch (RuntimeException e) {
            // A malformed event or a listener's exception must not stop the others.
            System.getLogger("org.remvirt.client").log(System.Logger.Level.WARNING,
                    "event " + proc + " dropped: " + e);
        }
    }

    /** Subscribes to every domain's lifecycle events; returns the server's
     * callback ID, for {@link #domainEventDeregister}. */
    public int domainEventRegisterLifecycle(DomainLifecycleListener listener) throws LibvirtException {
        synchronized (listenerLock) {
            int id = connectDomainEventCallbackRegisterAny(
                    new org.remvirt.proto.RvConnectDomainEventCallbackRegisterAnyArgs(
                            RvValues.RV_DOMAIN_EVENT_ID_LIFECYCLE, null)).callbackID;
            domainListeners.put(id, listener);
            return id;
        }
    }

    public void domainEventDeregister(int callbackID) throws LibvirtException {
        synchronized (listenerLock) {
            connectDomainEventCallbackDeregisterAny(
                    new org.remvirt.proto.RvConnectDomainEventCallbackDeregisterAnyArgs(callbackID));
            domainListeners.remove(callbackID);
        }
    }

    public int networkEventRegisterLifecycle(NetworkLifecycleListener listener) throws LibvirtException {
        synchronized (listenerLock) {
            int id = connectNetworkEventRegisterAny(new org.remvirt.proto.RvConnectNetworkEventRegisterAnyArgs(
                    RvValues.RV_NETWORK_EVENT_ID_LIFECYCLE, null)).callbackID;
            networkListeners.put(id, listener);
            return id;
        }
    }

    public void networkEventDeregister(int callbackID) throws LibvirtException {
        synchronized (listenerLock) {
            connectNetworkEventDeregisterAny(new org.remvirt.proto.RvConnectNetworkEventDeregisterAnyArgs(callbackID));
            networkListeners.remove(callbackID);
        }
    }

    /** Called once when the connection ends, with RemoteProtocol.RV_CLOSE_REASON_*
     * (EOF, ERROR, KEEPALIVE, or CLIENT after close()). */
    public void addCloseListener(CloseListener listener) {
        closeListeners.add(listener);
    }

    // ------------------------------------------------------------ the end

    /** Marks the connection failed (once), fails every waiting call, tells
     * the close listeners. */
    private void shutdown(int reason, String why) {
        synchronized (this) {
            if (failed != null)
                return;
            failed = new LibvirtException(closing ? RvValues.RV_ERROR_INVALID_ARG : RvValues.RV_ERROR_SYSTEM_ERROR,
                    RvValues.RV_ERROR_FROM_RPC, 2, closing ? "the connection is closed" : why != null ? why : "closed");
        }
        transport.close();
        if (callerSelector != null) {
            callerSelector.wakeup();
            idleSelector.wakeup();
        }
        for (Pending p : pending.values()) {
            p.failure = failedCopy();
            p.done = true;
            LockSupport.unpark(p.waiter);
        }
        pending.clear();
        for (Stream st : streams.values())
            st.fail(failedCopy());
        streams.clear();
        keepaliveThread.shutdownNow();
        int r = closing ? RemoteProtocol.RV_CLOSE_REASON_CLIENT : reason;
        for (CloseListener l : closeListeners)
            eventThread.execute(() -> l.onClose(this, r));
        eventThread.shutdown();     // after the events already queued and the close listeners
    }

    public boolean isAlive() {
        return failed == null;
    }

    /** Ends the session (CONNECT_CLOSE) and the connection.  The server may
     * close its end right after the reply (libvirtd does): the reply is read
     * first, so that is no error. */
    @Override
    public void close() throws LibvirtException {
        if (failed != null)
            return;
        // Set first: the server may close its end as soon as it replies.
        closing = true;
        try {
            connectClose();
        } catch (LibvirtException e) {
            // The socket went away under the close (the server closes its end
            // once it replied): the connection is closed, as asked.
            if (failed == null)
                throw e;
        } finally {
            shutdown(RemoteProtocol.RV_CLOSE_REASON_CLIENT, null);
            if (Thread.currentThread() != reader) {
                try {
                    reader.join(5000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // ------------------------------------------------------------ connect API

    public String getURI() {
        return uri;
    }

    public boolean isReadOnly() {
        return readOnly;
    }

    /** The driver's name: "TEST", "QEMU". */
    public String getType() throws LibvirtException {
        return connectGetType().type;
    }

    /** The hypervisor's version, major * 1000000 + minor * 1000 + micro. */
    public long getVersion() throws LibvirtException {
        return connectGetVersion().hvVer;
    }

    public long getLibVersion() throws LibvirtException {
        return connectGetLibVersion().libVer;
    }

    public String getHostName() throws LibvirtException {
        return connectGetHostname().hostname;
    }

    public String getCapabilities() throws LibvirtException {
        return connectGetCapabilities().capabilities;
    }

    public NodeInfo nodeInfo() throws LibvirtException {
        return new NodeInfo(nodeGetInfo());
    }

    public int numOfDomains() throws LibvirtException {
        return connectNumOfDomains().num;
    }

    /** The IDs of the running domains. */
    public int[] listDomains() throws LibvirtException {
        int max = numOfDomains();
        if (max == 0)
            return new int[0];
        List<Integer> ids = connectListDomains(new org.remvirt.proto.RvConnectListDomainsArgs(max)).ids;
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** flags: RvValues.RV_CONNECT_LIST_DOMAINS_* ORed, 0 for all. */
    public List<Domain> listAllDomains(int flags) throws LibvirtException {
        var ret = connectListAllDomains(new org.remvirt.proto.RvConnectListAllDomainsArgs(1, flags));
        List<Domain> out = new ArrayList<>(ret.domains.size());
        for (var d : ret.domains)
            out.add(new Domain(this, d));
        return out;
    }

    public Domain domainLookupByName(String name) throws LibvirtException {
        return new Domain(this, domainLookupByName(new org.remvirt.proto.RvDomainLookupByNameArgs(name)).dom);
    }

    public Domain domainLookupByID(int id) throws LibvirtException {
        return new Domain(this, domainLookupById(new org.remvirt.proto.RvDomainLookupByIdArgs(id)).dom);
    }

    public Domain domainLookupByUUID(byte[] uuid) throws LibvirtException {
        return new Domain(this, domainLookupByUuid(new org.remvirt.proto.RvDomainLookupByUuidArgs(uuid)).dom);
    }

    public Domain domainLookupByUUIDString(String uuid) throws LibvirtException {
        return domainLookupByUUID(Uuids.parse(uuid));
    }

    /** Defines a persistent domain (it stays shut off). */
    public Domain domainDefineXML(String xml) throws LibvirtException {
        return new Domain(this, domainDefineXml(new org.remvirt.proto.RvDomainDefineXmlArgs(xml)).dom);
    }

    /** Creates and starts a transient domain. */
    public Domain domainCreateXML(String xml, int flags) throws LibvirtException {
        return new Domain(this, domainCreateXml(new org.remvirt.proto.RvDomainCreateXmlArgs(xml, flags)).dom);
    }

    public int numOfNetworks() throws LibvirtException {
        return connectNumOfNetworks().num;
    }

    public int numOfDefinedNetworks() throws LibvirtException {
        return connectNumOfDefinedNetworks().num;
    }

    /** The names of the active networks. */
    public List<String> listNetworks() throws LibvirtException {
        return connectListNetworks(new org.remvirt.proto.RvConnectListNetworksArgs(numOfNetworks())).names;
    }

    /** The names of the inactive persistent networks. */
    public List<String> listDefinedNetworks() throws LibvirtException {
        return connectListDefinedNetworks(
                new org.remvirt.proto.RvConnectListDefinedNetworksArgs(numOfDefinedNetworks())).names;
    }

    /** flags: RvValues.RV_CONNECT_LIST_NETWORKS_* ORed, 0 for all. */
    public List<Network> listAllNetworks(int flags) throws LibvirtException {
        var ret = connectListAllNetworks(new org.remvirt.proto.RvConnectListAllNetworksArgs(1, flags));
        List<Network> out = new ArrayList<>(ret.nets.size());
        for (var n : ret.nets)
            out.add(new Network(this, n));
        return out;
    }

    public Network networkLookupByName(String name) throws LibvirtException {
        return new Network(this, networkLookupByName(new org.remvirt.proto.RvNetworkLookupByNameArgs(name)).net);
    }

    public Network networkLookupByUUID(byte[] uuid) throws LibvirtException {
        return new Network(this, networkLookupByUuid(new org.remvirt.proto.RvNetworkLookupByUuidArgs(uuid)).net);
    }

    public Network networkLookupByUUIDString(String uuid) throws LibvirtException {
        return networkLookupByUUID(Uuids.parse(uuid));
    }

    public Network networkDefineXML(String xml) throws LibvirtException {
        return new Network(this, networkDefineXml(new org.remvirt.proto.RvNetworkDefineXmlArgs(xml)).net);
    }

    public Network networkCreateXML(String xml) throws LibvirtException {
        return new Network(this, networkCreateXml(new org.remvirt.proto.RvNetworkCreateXmlArgs(xml)).net);
    }
}
