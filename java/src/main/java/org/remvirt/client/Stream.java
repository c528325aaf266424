package org.remvirt.client;

import java.util.ArrayDeque;
import org.remvirt.proto.RemoteProtocol;
import org.remvirt.proto.RvValues;

/**
 * A data stream a call opened (docs/wire-protocol.md section 13): a volume
 * upload or download, or a guest's console.  Its packets carry the opening
 * call's procedure and serial.  Data from the server is queued here (at
 * most {@link #QUEUE_MAX} bytes; past that the stream fails) until
 * {@link #recv} takes it; {@link #send} writes data packets of at most
 * {@link #CHUNK} bytes.  End an upload with {@link #finish}, which waits
 * until the server has committed the data; end anything early with
 * {@link #abort}.  One thread reads and one writes; holes (sparse
 * streams) are not asked for, and a hole from the server fails the stream.
 */
public final class Stream implements AutoCloseable {
    /** Data per packet, as libvirt sends it (256 KiB with the header). */
    public static final int CHUNK = 262120;
    /** The most data from the server held for the application. */
    public static final long QUEUE_MAX = 16L << 20;

    private final Connection conn;
    final int proc;
    int serial;                                 // set before the opening call is sent
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
    private byte[] head;                        // partly read: the rest of it from headAt
    private int headAt;
    private long queued;
    private boolean ended;                      // the server's end of data
    private boolean answered;                   // the server's answer to finish or abort
    private boolean over;                       // finish or abort sent: nothing more may be sent
    private boolean aborted;                    // abort sent: recv has nothing more to give
    private LibvirtException error;

    Stream(Connection conn, int proc) {
        this.conn = conn;
        this.proc = proc;
    }

    // ---- from the connection's reader

    synchronized void data(byte[] bytes) {
        if (error != null)
            return;
        if (queued + bytes.length > QUEUE_MAX) {
            fail(new LibvirtException(RvValues.RV_ERROR_RPC, RvValues.RV_ERROR_FROM_STREAMS, 2,
                    "more than " + QUEUE_MAX + " bytes of stream data not read"));
            conn.streamGone(this, true);
            return;
        }
        queue.add(bytes);
        queued += bytes.length;
        notifyAll();
    }

    synchronized void endOfData() {
        ended = true;
        notifyAll();
    }

    synchronized void answer() {
        answered = true;
        notifyAll();
    }

    synchronized void fail(LibvirtException e) {
        if (error == null)
            error = e;
        notifyAll();
    }

    // ---- the application's side

    /** Up to len bytes into buf; blocks until there are some.  -1 at the
     * end of the data (a download read to its end, a console whose guest
     * stopped, a stream whose finish the server answered); an error
     * (RV_ERROR_OPERATION_ABORTED) once {@link #abort} was called, also
     * for a thread that was waiting here when another one aborted. */
    public int recv(byte[] buf, int off, int len) throws LibvirtException {
        byte[] b;
        synchronized (this) {
            while (head == null && queue.isEmpty() && !ended && !answered && !aborted && error == null)
                waitHere();
            if (aborted)
                throw new LibvirtException(RvValues.RV_ERROR_OPERATION_ABORTED, RvValues.RV_ERROR_FROM_STREAMS, 2,
                        "the stream was aborted");
            if (head == null && !queue.isEmpty()) {
                head = queue.poll();
                headAt = 0;
            }
            if (head == null) {
                if (error != null)
                    throw copy(error);
                return -1;
            }
            b = head;
        }
        int n = Math.min(len, b.length - headAt);
        System.arraycopy(b, headAt, buf, off, n);
        synchronized (this) {
            headAt += n;
            queued -= n;
            if (headAt == b.length)
                head = null;
        }
        return n;
    }

    /** Sends len bytes of buf, in packets of at most CHUNK bytes. */
    public void send(byte[] buf, int off, int len) throws LibvirtException {
        for (int at = 0; at < len; at += CHUNK) {
            synchronized (this) {
                if (error != null)
                    throw copy(error);
                if (over)
                    throw new LibvirtException(RvValues.RV_ERROR_OPERATION_INVALID, RvValues.RV_ERROR_FROM_STREAMS,
                            2, "the stream is finished");
            }
            conn.sendStream(this, RemoteProtocol.RV_CONTINUE, buf, off + at, Math.min(CHUNK, len - at));
        }
    }

    /** All data sent (or received): asks the server to commit and waits for
     * its answer; the server's error if the stream failed. */
    public void finish() throws LibvirtException {
        end(RemoteProtocol.RV_OK);
    }

    /** Ends the stream early: the server drops it and commits nothing more. */
    public void abort() throws LibvirtException {
        end(RemoteProtocol.RV_ERROR);
    }

    private void end(int status) throws LibvirtException {
        synchronized (this) {
            if (error != null) {
                conn.streamGone(this, false);
                throw copy(error);
            }
            if (over)
                return;
            over = true;
            aborted = status == RemoteProtocol.RV_ERROR;
            notifyAll();
        }
        conn.sendStream(this, status, new byte[0], 0, 0);
        synchronized (this) {
            while (!answered && error == null)
                waitHere();
            conn.streamGone(this, false);
            if (error != null && status == RemoteProtocol.RV_OK)
                throw copy(error);
        }
    }

    /** Aborts the stream unless it was finished. */
    @Override
    public void close() throws LibvirtException {
        boolean done;
        synchronized (this) {
            done = over || error != null;
        }
        if (!done)
            abort();
    }

    private void waitHere() {
        try {
            wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(new LibvirtException(RvValues.RV_ERROR_OPERATION_ABORTED, RvValues.RV_ERROR_FROM_STREAMS, 2,
                    "interrupted while waiting for the stream"));
        }
    }

    private static LibvirtException copy(LibvirtException e) {
        return new LibvirtException(e.getCode(), e.getDomain(), e.getLevel(), e.getMessage());
    }
}
