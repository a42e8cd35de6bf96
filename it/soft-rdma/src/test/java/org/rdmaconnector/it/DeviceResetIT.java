package org.rdmaconnector.it;

import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * Device removal and re-add under load (issue 12, fault 4) in a soft-RDMA VM boot of its own: one guest JVM runs the
 * tests tagged {@code device-reset} (DeviceResetDeviceTest: rxe1 deleted and added again while a listener and a
 * pooled client echo over it) with glibc's {@code MALLOC_PERTURB_} set, so that memory librdmacm or libibverbs freed
 * under the connector is overwritten and a use of it crashes the JVM instead of passing by luck. A crashed JVM leaves
 * no report: that is a failing test here with the console's tail.
 */
class DeviceResetIT {
    /** Freed memory is filled with this byte, allocated memory with its complement (mallopt(3), M_PERTURB). */
    static final String MALLOC_PERTURB = "165";

    @TestFactory
    Stream<DynamicNode> deviceReset() throws Exception {
        if (Boolean.getBoolean("skipSoftRdma")) {
            return Stream.of(dynamicTest("device reset", () -> Assumptions.abort("the soft-RDMA VM tier was skipped "
                + "(-DskipSoftRdma)")));
        }
        Path share = Path.of(System.getProperty("rdma.vm.share")).resolveSibling("device-reset");
        GuestRun run = GuestRun.start(Path.of(System.getProperty("rdma.vm.dir")), share,
            System.getProperty("java.class.path"), "device-reset", Map.of("MALLOC_PERTURB_", MALLOC_PERTURB), false);
        List<DynamicNode> nodes = new ArrayList<>();
        nodes.add(run.reportedTest());
        nodes.addAll(run.guestTests("device reset test"));
        return nodes.stream();
    }
}
