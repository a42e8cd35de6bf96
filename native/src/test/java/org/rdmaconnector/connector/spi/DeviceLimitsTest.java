package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.connector.DeviceAttributes;

/** The device-dependent settings against made-up device attributes (rxe's limits: max_cqe 32767, max_qp_wr 1048576). */
class DeviceLimitsTest {
    private static DeviceAttributes device(int maxQpWr, int maxCqe) {
        return new DeviceAttributes("", 0, 1L << 40, 0, 0, 0, 1024, maxQpWr, 32, 1024, maxCqe, 1024, 1024, 1);
    }

    private static ChannelSettings channel(int cqDepth, int completionVector, int maxSendWr, int maxRecvWr) {
        return new ChannelSettings("rxe0", 1, cqDepth, completionVector, maxSendWr, maxRecvWr, 0, 1L << 20);
    }

    private static List<String> problems(DeviceAttributes attributes, int vectors, DeviceLimits.Demand demand) {
        return DeviceLimits.problems("rxe0", attributes, vectors, demand).stream().map(SettingProblem::message)
            .toList();
    }

    @Test
    void settingsWithinTheDevicesLimitsHaveNoProblem() {
        assertEquals(List.of(), problems(device(16384, 32767), 1,
            DeviceLimits.Demand.of(channel(32767, 0, 16384, 16383))));
    }

    @Test
    void aCqDepthBeyondMaxCqeNamesTheValueTheDeviceAndItsLimit() {
        List<SettingProblem> problems = DeviceLimits.problems("rxe0", device(16384, 32767), 1,
            DeviceLimits.Demand.of(channel(100_000, 0, 64, 64)));
        assertEquals(List.of(new SettingProblem("CqDepth",
            "CqDepth 100000 is more than device rxe0 allows (max_cqe 32767)")), problems);
    }

    @Test
    void everySettingBeyondTheDeviceIsNamedInOneList() {
        assertEquals(List.of("CqDepth 70000 is more than device rxe0 allows (max_cqe 65535)",
                "CompletionVector 2 is more than device rxe0 allows (num_comp_vectors 2: from 0 to 1)",
                "MaxSendWr 40000 is more than device rxe0 allows (max_qp_wr 16384)",
                "MaxRecvWr 30000 is more than device rxe0 allows (max_qp_wr 16384)"),
            problems(device(16384, 65535), 2, DeviceLimits.Demand.of(channel(70_000, 2, 40_000, 30_000))));
    }

    @Test
    void theListenersQueueIsNamedByWhatItIsComputedFrom() {
        ListenerSettings settings = ListenerSettings.builder().address("10.0.0.1").port(7471).receiveBufferCount(2048)
            .maxConnections(1000).build();
        assertEquals(List.of(new SettingProblem("MaxConnections", "the listener's completion queue of 4096000 "
                + "entries (MaxConnections 1000 x 2 x ReceiveBufferCount 2048) is more than device rxe0 allows "
                + "(max_cqe 32767)"),
                new SettingProblem("ReceiveBufferCount", "ReceiveBufferCount 2048 is more than device rxe0 allows "
                    + "(max_qp_wr 1024)")),
            DeviceLimits.problems("rxe0", device(1024, 32767), 1, DeviceLimits.Demand.of(settings)));
    }

    @Test
    void aBareCompletionQueueIsNamedAsOne() {
        assertEquals(List.of("a completion queue of 40000 entries is more than device rxe0 allows (max_cqe 32767)"),
            problems(device(16384, 32767), 1, DeviceLimits.Demand.completionQueue(40_000, 0)));
    }
}
