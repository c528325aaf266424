package org.remvirt.client;

import java.io.EOFException;
import java.io.IOException;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;

/** The SASL security layer (QOP auth-int or auth-conf): every chunk of the
 * stream travels as a 4-byte big-endian length and the mechanism's wrapped
 * bytes, as Cyrus SASL's sasl_encode frames them on the other side. */
final class SaslLayer extends Transport {
    /** The largest wrapped chunk accepted from the server (our maxbuf). */
    private static final int MAX_IN = 1 << 20;

    private final Transport inner;
    private final SaslClient sasl;
    private final int sendMax;
    private byte[] plain = new byte[0];
    private int plainPos;

    SaslLayer(Transport inner, SaslClient sasl) {
        this.inner = inner;
        this.sasl = sasl;
        Object raw = sasl.getNegotiatedProperty(Sasl.RAW_SEND_SIZE);
        int max = raw instanceof String ? Integer.parseInt((String) raw) : 65536;
        this.sendMax = max > 0 ? max : 65536;
    }

    private void readFully(byte[] b, int n) throws IOException {
        for (int off = 0; off < n;) {
            int got = inner.read(b, off, n - off);
            if (got < 0)
                throw new EOFException("end of stream inside a SASL chunk");
            off += got;
        }
    }

    @Override
    int read(byte[] b, int off, int len) throws IOException {
        while (plainPos >= plain.length) {
            byte[] head = new byte[4];
            int got = inner.read(head, 0, 4);
            if (got < 0)
                return -1;
            if (got < 4) {
                byte[] rest = new byte[4 - got];
                readFully(rest, rest.length);
                System.arraycopy(rest, 0, head, got, rest.length);
            }
            int n = ((head[0] & 0xff) << 24) | ((head[1] & 0xff) << 16) | ((head[2] & 0xff) << 8)
                    | (head[3] & 0xff);
            if (n <= 0 || n > MAX_IN)
                throw new IOException("SASL chunk of " + Integer.toUnsignedString(n)
                        + " bytes (at most " + MAX_IN + ")");
            byte[] wrapped = new byte[n];
            readFully(wrapped, n);
            try {
                plain = sasl.unwrap(wrapped, 0, n);
            } catch (SaslException e) {
                throw new IOException("SASL layer: " + e.getMessage(), e);
            }
            plainPos = 0;
        }
        int n = Math.min(len, plain.length - plainPos);
        System.arraycopy(plain, plainPos, b, off, n);
        plainPos += n;
        return n;
    }

    @Override
    void write(byte[] b, int off, int len) throws IOException {
        for (int done = 0; done < len;) {
            int n = Math.min(sendMax, len - done);
            byte[] wrapped;
            try {
                wrapped = sasl.wrap(b, off + done, n);
            } catch (SaslException e) {
                throw new IOException("SASL layer: " + e.getMessage(), e);
            }
            byte[] out = new byte[4 + wrapped.length];
            out[0] = (byte) (wrapped.length >>> 24);
            out[1] = (byte) (wrapped.length >>> 16);
            out[2] = (byte) (wrapped.length >>> 8);
            out[3] = (byte) wrapped.length;
            System.arraycopy(wrapped, 0, out, 4, wrapped.length);
            inner.write(out, 0, out.length);
            done += n;
        }
    }

    @Override
    void close() {
        try {
            sasl.dispose();
        } catch (SaslException e) {
            // closing anyway
        }
        inner.close();
    }
}
