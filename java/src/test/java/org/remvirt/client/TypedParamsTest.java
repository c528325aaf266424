package org.remvirt.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.remvirt.proto.RemoteProtocol.*;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.remvirt.proto.RvNonnullDomain;

/** The generated typed-parameter calls of RemoteCalls against
 * test:///default's domain "test": the values are libvirtd 9.0's test
 * driver's, and what is set is put back (remvirtd keeps its state). */
class TypedParamsTest {
    /** VIR_TYPED_PARAM_STRING_OKAY: the caller takes string parameters. */
    static final int STRING_OKAY = 4;

    static List<String> names(List<TypedParameter> params) {
        return params.stream().map(p -> p.name).collect(Collectors.toList());
    }

    static long value(List<TypedParameter> params, String name) {
        TypedParameter p = TypedParameter.find(params, name);
        assertTrue(p != null, name + " in " + params);
        return p.longValue();
    }

    @Test
    void tuningGettersAndSetters() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            RvNonnullDomain dom = conn.domainLookupByName("test").toWire();

            List<TypedParameter> mem = conn.domainGetMemoryParameters(dom, 0);
            assertEquals(List.of("hard_limit", "soft_limit", "swap_hard_limit"), names(mem));
            assertEquals(RV_TYPED_PARAM_ULLONG, mem.get(0).type);
            long unlimited = value(mem, "hard_limit");
            assertEquals(9007199254740991L, unlimited);
            conn.domainSetMemoryParameters(dom, List.of(TypedParameter.ofULong("hard_limit", 1048576)), 0);
            assertEquals(1048576, value(conn.domainGetMemoryParameters(dom, 0), "hard_limit"));
            conn.domainSetMemoryParameters(dom, List.of(TypedParameter.ofULong("hard_limit", unlimited)), 0);

            // String parameters only for a caller that takes them.
            List<TypedParameter> blkio = conn.domainGetBlkioParameters(dom, STRING_OKAY);
            assertEquals(List.of("weight", "device_weight", "device_read_iops_sec", "device_write_iops_sec",
                    "device_read_bytes_sec", "device_write_bytes_sec"), names(blkio));
            assertEquals(RV_TYPED_PARAM_STRING, TypedParameter.find(blkio, "device_weight").type);
            assertEquals("", TypedParameter.find(blkio, "device_weight").value);
            assertEquals(List.of("weight"), names(conn.domainGetBlkioParameters(dom, 0)));
            long weight = value(blkio, "weight");
            conn.domainSetBlkioParameters(dom, List.of(TypedParameter.ofUInt("weight", 500)), 0);
            assertEquals(500, value(conn.domainGetBlkioParameters(dom, 0), "weight"));
            conn.domainSetBlkioParameters(dom, List.of(TypedParameter.ofUInt("weight", (int) weight)), 0);

            // Both test drivers take a scheduler weight and keep reporting 50.
            assertEquals("[weight=50]", conn.domainGetSchedulerParameters(dom).toString());
            conn.domainSetSchedulerParameters(dom, List.of(TypedParameter.ofUInt("weight", 77)));
            conn.domainSetSchedulerParametersFlags(dom, List.of(TypedParameter.ofUInt("weight", 77)), 0);
            assertEquals("[weight=50]", conn.domainGetSchedulerParameters(dom).toString());

            assertEquals("[numa_mode=0, numa_nodeset=]", conn.domainGetNumaParameters(dom, STRING_OKAY).toString());
            List<TypedParameter> perf = conn.domainGetPerfEvents(dom, 0);
            assertEquals(22, perf.size());
            assertTrue(perf.stream().allMatch(p -> p.type == RV_TYPED_PARAM_BOOLEAN && !(Boolean) p.value), perf.toString());
            List<TypedParameter> iotune = conn.domainGetBlockIoTune(dom, "vda", STRING_OKAY);
            assertEquals(20, iotune.size());
            assertEquals("", TypedParameter.find(iotune, "group_name").value);

            // A parameter of the wrong type is refused, and changes nothing.
            assertThrows(LibvirtException.class, () -> conn.domainSetBlkioParameters(dom,
                    List.of(TypedParameter.ofString("weight", "heavy")), 0));
            assertEquals(weight, value(conn.domainGetBlkioParameters(dom, 0), "weight"));
        }
    }

    @Test
    void allDomainStats() throws Exception {
        try (Connection conn = Connection.open(Peer.uri())) {
            List<TypedParameter.Keyed<RvNonnullDomain>> stats = conn.connectGetAllDomainStats(List.of(), 0, 0);
            assertEquals(List.of("test"), stats.stream().map(k -> k.key.name).collect(Collectors.toList()));
            List<TypedParameter> test = stats.get(0).params;
            assertFalse(test.isEmpty());
            assertEquals(1, value(test, "state.state"));         // running
        }
    }
}
