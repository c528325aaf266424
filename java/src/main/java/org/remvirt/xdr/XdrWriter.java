package org.remvirt.xdr;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/** Appends XDR (RFC 4506) to a growing byte array: big-endian 4-byte units,
 * variable data padded to 4.  Limits from the .x are checked, so nothing is
 * sent that the peer must refuse. */
public final class XdrWriter {
    private byte[] buf;
    private int pos;

    public XdrWriter(int capacity) {
        buf = new byte[Math.max(capacity, 16)];
    }

    public XdrWriter() {
        this(256);
    }

    public static <T> T required(T value, String what) {
        if (value == null)
            throw new XdrException(what + " must not be null");
        return value;
    }

    public byte[] array() {
        return buf;
    }

    public int size() {
        return pos;
    }

    public void reset() {
        pos = 0;
    }

    /** Overwrites 4 bytes at offset (the packet length, once known). */
    public void putInt(int offset, int v) {
        buf[offset] = (byte) (v >>> 24);
        buf[offset + 1] = (byte) (v >>> 16);
        buf[offset + 2] = (byte) (v >>> 8);
        buf[offset + 3] = (byte) v;
    }

    private void room(int n) {
        if (buf.length - pos < n)
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
    }

    public void writeInt(int v) {
        room(4);
        putInt(pos, v);
        pos += 4;
    }

    public void writeHyper(long v) {
        writeInt((int) (v >>> 32));
        writeInt((int) v);
    }

    public void writeBool(boolean v) {
        writeInt(v ? 1 : 0);
    }

    public void writeFloat(float v) {
        writeInt(Float.floatToIntBits(v));
    }

    public void writeDouble(double v) {
        writeHyper(Double.doubleToLongBits(v));
    }

    private void writeBytes(byte[] b, int len) {
        room(len + 3);
        System.arraycopy(b, 0, buf, pos, len);
        pos += len;
        while ((pos & 3) != 0)
            buf[pos++] = 0;
    }

    private static void checkLength(int len, int max, String what) {
        if (len > max)
            throw new XdrException(what + " of " + len + " exceeds the protocol's limit of " + max);
    }

    public void writeString(String s, int max) {
        byte[] b = required(s, "string").getBytes(StandardCharsets.UTF_8);
        checkLength(b.length, max, "string");
        writeInt(b.length);
        writeBytes(b, b.length);
    }

    public void writeOpaque(byte[] b, int max) {
        checkLength(required(b, "opaque").length, max, "opaque data");
        writeInt(b.length);
        writeBytes(b, b.length);
    }

    public void writeOpaqueFixed(byte[] b, int n) {
        if (required(b, "opaque").length != n)
            throw new XdrException("fixed opaque of " + b.length + " bytes, expected " + n);
        writeBytes(b, n);
    }

    /** A char array as rpcgen sends it: one 4-byte int per char. */
    public void writeChars(byte[] b, int max) {
        checkLength(required(b, "char array").length, max, "char array");
        writeInt(b.length);
        for (byte c : b)
            writeInt(c);
    }

    public void writeCharsFixed(byte[] b, int n) {
        if (required(b, "char array").length != n)
            throw new XdrException("fixed char array of " + b.length + " chars, expected " + n);
        for (byte c : b)
            writeInt(c);
    }

    public <T> void writeOptional(T v, Consumer<T> write) {
        writeBool(v != null);
        if (v != null)
            write.accept(v);
    }

    public <T> void writeArray(List<T> list, int max, Consumer<T> write) {
        checkLength(required(list, "array").size(), max, "array");
        writeInt(list.size());
        for (T e : list)
            write.accept(e);
    }

    public <T> void writeFixedArray(List<T> list, int n, Consumer<T> write) {
        if (required(list, "array").size() != n)
            throw new XdrException("fixed array of " + list.size() + " elements, expected " + n);
        for (T e : list)
            write.accept(e);
    }
}
