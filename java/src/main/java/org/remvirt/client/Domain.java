package org.remvirt.client;

import org.remvirt.proto.RvDomainCreateWithFlagsArgs;
import org.remvirt.proto.RvDomainDestroyArgs;
import org.remvirt.proto.RvDomainGetAutostartArgs;
import org.remvirt.proto.RvDomainGetInfoArgs;
import org.remvirt.proto.RvDomainGetOsTypeArgs;
import org.remvirt.proto.RvDomainGetStateArgs;
import org.remvirt.proto.RvDomainGetXmlDescArgs;
import org.remvirt.proto.RvDomainHasManagedSaveImageArgs;
import org.remvirt.proto.RvDomainIsActiveArgs;
import org.remvirt.proto.RvDomainIsPersistentArgs;
import org.remvirt.proto.RvDomainRebootArgs;
import org.remvirt.proto.RvDomainResumeArgs;
import org.remvirt.proto.RvDomainShutdownArgs;
import org.remvirt.proto.RvDomainSuspendArgs;
import org.remvirt.proto.RvDomainUndefineFlagsArgs;
import org.remvirt.proto.RvNonnullDomain;

/** A domain on a connection: its name, UUID and ID as last seen (the server
 * identifies it by UUID), and the calls on it. */
public final class Domain {
    private final Connection conn;
    private final RvNonnullDomain wire;

    Domain(Connection conn, RvNonnullDomain wire) {
        this.conn = conn;
        this.wire = wire;
    }

    public Connection getConnection() {
        return conn;
    }

    /** The domain as the wire names it, for the generated calls of
     * {@link org.remvirt.proto.RemoteCalls}. */
    public RvNonnullDomain toWire() {
        return wire;
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

    /** -1 while it is not running (as far as this handle knows). */
    public int getID() {
        return wire.id;
    }

    public DomainInfo getInfo() throws LibvirtException {
        return new DomainInfo(conn.domainGetInfo(new RvDomainGetInfoArgs(wire)));
    }

    /** {state, reason}: RvValues.RV_DOMAIN_RUNNING, ... and the state's reason. */
    public int[] getState() throws LibvirtException {
        var r = conn.domainGetState(new RvDomainGetStateArgs(wire, 0));
        return new int[] { r.state, r.reason };
    }

    public String getXMLDesc(int flags) throws LibvirtException {
        return conn.domainGetXmlDesc(new RvDomainGetXmlDescArgs(wire, flags)).xml;
    }

    public String getOSType() throws LibvirtException {
        return conn.domainGetOsType(new RvDomainGetOsTypeArgs(wire)).type;
    }

    public boolean isActive() throws LibvirtException {
        return conn.domainIsActive(new RvDomainIsActiveArgs(wire)).active != 0;
    }

    public boolean isPersistent() throws LibvirtException {
        return conn.domainIsPersistent(new RvDomainIsPersistentArgs(wire)).persistent != 0;
    }

    public boolean getAutostart() throws LibvirtException {
        return conn.domainGetAutostart(new RvDomainGetAutostartArgs(wire)).autostart != 0;
    }

    public boolean hasManagedSaveImage() throws LibvirtException {
        return conn.domainHasManagedSaveImage(new RvDomainHasManagedSaveImageArgs(wire, 0)).result != 0;
    }

    /** Starts a defined domain.  CREATE_WITH_FLAGS returns the domain with
     * its new ID (DOMAIN_CREATE returns nothing), so this handle has it. */
    public void create() throws LibvirtException {
        create(0);
    }

    public void create(int flags) throws LibvirtException {
        wire.id = conn.domainCreateWithFlags(new RvDomainCreateWithFlagsArgs(wire, flags)).dom.id;
    }

    public void destroy() throws LibvirtException {
        conn.domainDestroy(new RvDomainDestroyArgs(wire));
        wire.id = -1;
    }

    public void suspend() throws LibvirtException {
        conn.domainSuspend(new RvDomainSuspendArgs(wire));
    }

    public void resume() throws LibvirtException {
        conn.domainResume(new RvDomainResumeArgs(wire));
    }

    public void shutdown() throws LibvirtException {
        conn.domainShutdown(new RvDomainShutdownArgs(wire));
    }

    public void reboot(int flags) throws LibvirtException {
        conn.domainReboot(new RvDomainRebootArgs(wire, flags));
    }

    public void undefine() throws LibvirtException {
        undefine(0);
    }

    public void undefine(int flags) throws LibvirtException {
        conn.domainUndefineFlags(new RvDomainUndefineFlagsArgs(wire, flags));
    }

    @Override
    public String toString() {
        return "Domain(" + wire.name + ", " + getUUIDString() + ", id " + wire.id + ")";
    }
}
