package org.remvirt.client;

import java.nio.charset.StandardCharsets;
import org.remvirt.proto.RvNodeGetInfoRet;

/** NODE_GET_INFO's answer; model is the text before the first NUL of its 32 chars. */
public final class NodeInfo {
    public final String model;
    /** KiB */
    public final long memory;
    public final int cpus;
    public final int mhz;
    public final int nodes;
    public final int sockets;
    public final int cores;
    public final int threads;

    NodeInfo(RvNodeGetInfoRet r) {
        int n = 0;
        while (n < r.model.length && r.model[n] != 0)
            n++;
        model = new String(r.model, 0, n, StandardCharsets.UTF_8);
        memory = r.memory;
        cpus = r.cpus;
        mhz = r.mhz;
        nodes = r.nodes;
        sockets = r.sockets;
        cores = r.cores;
        threads = r.threads;
    }
}
