package org.remvirt.client;

import org.remvirt.proto.RvDomainGetInfoRet;

/** DOMAIN_GET_INFO's answer. */
public final class DomainInfo {
    /** RvValues.RV_DOMAIN_RUNNING, ... */
    public final int state;
    /** KiB */
    public final long maxMem;
    /** KiB */
    public final long memory;
    public final int nrVirtCpu;
    /** ns */
    public final long cpuTime;

    DomainInfo(RvDomainGetInfoRet r) {
        state = r.state & 0xff;
        maxMem = r.maxMem;
        memory = r.memory;
        nrVirtCpu = r.nrVirtCpu & 0xffff;
        cpuTime = r.cpuTime;
    }
}
