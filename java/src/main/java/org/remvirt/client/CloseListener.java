package org.remvirt.client;

/** The connection ended; reason is RemoteProtocol.RV_CLOSE_REASON_*
 * (org.remvirt.proto): ERROR, EOF, KEEPALIVE or CLIENT. */
@FunctionalInterface
public interface CloseListener {
    void onClose(Connection conn, int reason);
}
