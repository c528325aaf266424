package org.remvirt.client;

import org.remvirt.proto.RvNetworkCreateArgs;
import org.remvirt.proto.RvNetworkDestroyArgs;
import org.remvirt.proto.RvNetworkGetAutostartArgs;
import org.remvirt.proto.RvNetworkGetBridgeNameArgs;
import org.remvirt.proto.RvNetworkGetXmlDescArgs;
import org.remvirt.proto.RvNetworkIsActiveArgs;
import org.remvirt.proto.RvNetworkIsPersistentArgs;
import org.remvirt.proto.RvNetworkSetAutostartArgs;
import org.remvirt.proto.RvNetworkUndefineArgs;
import org.remvirt.proto.RvNonnullNetwork;

/** A virtual network on a connection, and the calls on it. */
public final class Network {
    private final Connection conn;
    private final RvNonnullNetwork wire;

    Network(Connection conn, RvNonnullNetwork wire) {
        this.conn = conn;
        this.wire = wire;
    }

    public String getName() {
        return wire.name;
    }

    public byte[] getUUID() {
        return wire.uuid.clone();
    }

    public String getUUIDString() {
        return Uuids.format(wire.uuid);
    }

    /** Starts a defined network. */
    public void create() throws LibvirtException {
        conn.networkCreate(new RvNetworkCreateArgs(wire));
    }

    public void destroy() throws LibvirtException {
        conn.networkDestroy(new RvNetworkDestroyArgs(wire));
    }

    public void undefine() throws LibvirtException {
        conn.networkUndefine(new RvNetworkUndefineArgs(wire));
    }

    public String getXMLDesc(int flags) throws LibvirtException {
        return conn.networkGetXmlDesc(new RvNetworkGetXmlDescArgs(wire, flags)).xml;
    }

    public String getBridgeName() throws LibvirtException {
        return conn.networkGetBridgeName(new RvNetworkGetBridgeNameArgs(wire)).name;
    }

    public boolean getAutostart() throws LibvirtException {
        return conn.networkGetAutostart(new RvNetworkGetAutostartArgs(wire)).autostart != 0;
    }

    public void setAutostart(boolean on) throws LibvirtException {
        conn.networkSetAutostart(new RvNetworkSetAutostartArgs(wire, on ? 1 : 0));
    }

    public boolean isActive() throws LibvirtException {
        return conn.networkIsActive(new RvNetworkIsActiveArgs(wire)).active != 0;
    }

    public boolean isPersistent() throws LibvirtException {
        return conn.networkIsPersistent(new RvNetworkIsPersistentArgs(wire)).persistent != 0;
    }

    @Override
    public String toString() {
        return "Network(" + wire.name + ", " + getUUIDString() + ")";
    }
}
