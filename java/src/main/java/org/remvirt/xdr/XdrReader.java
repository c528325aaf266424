package org.remvirt.xdr;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** Reads XDR from a byte range.  Every length is checked against the .x's
 * limit and against the bytes left before anything is allocated. */
public final class XdrReader {
    /** The bound of a variable-length item declared without one (<>). */
    public static final int UNBOUNDED = Integer.MAX_VALUE;

    private final byte[] buf;
    private int pos;
    private final int end;

    public XdrReader(byte[] buf, int offset, int length) {
        this.buf = buf;
        this.pos = offset;
        this.end = offset + length;
    }

    public int remaining() {
        return end - pos;
    }

    private void need(int n, String what) {
        if (n < 0 || end - pos < n)
            throw new XdrException("truncated XDR: " + what + " needs " + n + " bytes, "
                    + (end - pos) + " left");
    }

    public int readInt() {
        need(4, "an int");
        int v = ((buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16)
                | ((buf[pos + 2] & 0xff) << 8) | (buf[pos + 3] & 0xff);
        pos += 4;
        return v;
    }

    public long readHyper() {
        long hi = readInt();
        return (hi << 32) | (readInt() & 0xffffffffL);
    }

    public boolean readBool() {
        int v = readInt();
        if (v != 0 && v != 1)
            throw new XdrException("bool of value " + v);
        return v == 1;
    }

    public float readFloat() {
        return Float.intBitsToFloat(readInt());
    }

    public double readDouble() {
        return Double.longBitsToDouble(readHyper());
    }

    private int readLength(int max, int unit, String what) {
        int len = readInt();
        if (len < 0 || len > max)
            throw new XdrException(what + " length " + Integer.toUnsignedString(len)
                    + " exceeds the protocol's limit of " + max);
        if ((long) len * unit > remaining())
            throw new XdrException("truncated XDR: " + what + " of " + len + " does not fit in "
                    + remaining() + " bytes");
        return len;
    }

    private byte[] readBytes(int len) {
        int padded = (len + 3) & ~3;
        need(padded, "opaque data");
        byte[] b = new byte[len];
        System.arraycopy(buf, pos, b, 0, len);
        pos += padded;
        return b;
    }

    public String readString(int max) {
        int len = readLength(max, 1, "string");
        int padded = (len + 3) & ~3;
        need(padded, "a string");
        String s = new String(buf, pos, len, StandardCharsets.UTF_8);
        pos += padded;
        return s;
    }

    public byte[] readOpaque(int max) {
        return readBytes(readLength(max, 1, "opaque data"));
    }

    public byte[] readOpaqueFixed(int n) {
        return readBytes(n);
    }

    public byte[] readChars(int max) {
        return readCharsFixed(readLength(max, 4, "char array"));
    }

    public byte[] readCharsFixed(int n) {
        need(4 * n, "a char array");
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte) readInt();
        return b;
    }

    public <T> T readOptional(Supplier<T> read) {
        return readBool() ? read.get() : null;
    }

    /** Every element takes at least 4 bytes: a count larger than the
     * bytes left is refused before the list is made. */
    public <T> List<T> readArray(int max, Supplier<T> read) {
        return readFixedArray(readLength(max, 4, "array"), read);
    }

    public <T> List<T> readFixedArray(int n, Supplier<T> read) {
        need(4 * n, "an array");
        List<T> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
            list.add(read.get());
        return list;
    }
}
