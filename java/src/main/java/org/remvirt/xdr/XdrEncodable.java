package org.remvirt.xdr;

/** A value that writes itself as XDR. */
public interface XdrEncodable {
    void encode(XdrWriter w);
}
