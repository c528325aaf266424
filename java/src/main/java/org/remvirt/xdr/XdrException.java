package org.remvirt.xdr;

/** Bytes that are not valid XDR for the expected type, or a value too large to encode. */
public class XdrException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public XdrException(String message) {
        super(message);
    }
}
