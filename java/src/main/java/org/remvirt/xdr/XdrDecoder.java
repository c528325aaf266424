package org.remvirt.xdr;

/** Reads one value of type T (the generated classes' static decode). */
@FunctionalInterface
public interface XdrDecoder<T> {
    T decode(XdrReader r);
}
