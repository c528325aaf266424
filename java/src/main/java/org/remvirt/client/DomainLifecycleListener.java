package org.remvirt.client;

/** A domain's lifecycle event: event is RvValues.RV_DOMAIN_EVENT_* (DEFINED,
 * STARTED, SUSPENDED, ...), detail the matching *_DETAIL value.  Called on
 * the connection's event thread, one event at a time, in order. */
@FunctionalInterface
public interface DomainLifecycleListener {
    void onLifecycle(Connection conn, Domain dom, int event, int detail);
}
