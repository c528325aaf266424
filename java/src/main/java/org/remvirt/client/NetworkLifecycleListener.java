package org.remvirt.client;

/** A network's lifecycle event: RvValues.RV_NETWORK_EVENT_* (DEFINED,
 * UNDEFINED, STARTED, STOPPED); detail is 0. */
@FunctionalInterface
public interface NetworkLifecycleListener {
    void onLifecycle(Connection conn, Network net, int event, int detail);
}
