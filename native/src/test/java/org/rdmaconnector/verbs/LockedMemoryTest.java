package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.verbs.jna.Layout;

/** The locked-memory limit as the kernel reports it, and the ENOMEM sentences that quote it (host, no device). */
class LockedMemoryTest {
    /** The soft limit of "Max locked memory" in /proc/self/limits: bytes, or -1 for unlimited. */
    private static long procSelfLimit() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
            if (line.startsWith("Max locked memory")) {
                String soft = line.substring("Max locked memory".length()).trim().split("\\s+")[0];
                return soft.equals("unlimited") ? -1 : Long.parseLong(soft);
            }
        }
        throw new AssertionError("/proc/self/limits has no Max locked memory line");
    }

    @Test
    void theLockedMemoryLimitIsWhatProcSelfLimitsSays() throws IOException {
        assertEquals(procSelfLimit(), Rdma.lockedMemoryLimit());
    }

    @Test
    void theReportGivesTheLimitInBytesAndAsUlimitShowsIt() throws IOException {
        long limit = procSelfLimit();
        String expected = limit < 0 ? "the locked-memory limit (RLIMIT_MEMLOCK) is unlimited"
            : "the locked-memory limit (RLIMIT_MEMLOCK) is " + limit + " bytes (ulimit -l " + limit / 1024 + ")";
        assertEquals(expected, Rdma.lockedMemoryReport());
    }

    @Test
    void anEnomemOfTheCallsThatPinMemoryExplainsTheLockedMemoryLimitInForce() {
        for (String function : new String[] {"ibv_alloc_pd", "ibv_create_cq", "ibv_create_qp", "rdma_create_qp"}) {
            String message = RdmaErrors.of(function, Layout.ENOMEM, "rxe0").getMessage();
            assertTrue(message.startsWith(function + " failed: ENOMEM (12): out of memory, which for RDMA is most "
                + "often the locked-memory limit (RLIMIT_MEMLOCK"), message);
            assertTrue(message.contains("ulimit -l; LimitMEMLOCK= for a systemd service; the container's memlock"),
                message);
            assertTrue(message.endsWith("; " + Rdma.lockedMemoryReport() + " [rxe0]"), message);
        }
        String registration = RdmaErrors.of("ibv_reg_mr", Layout.ENOMEM).getMessage();
        assertTrue(registration.contains("cannot pin the memory; raise the locked-memory limit")
            && registration.endsWith(" or register less; " + Rdma.lockedMemoryReport()), registration);
    }

    @Test
    void anEnomemOfOtherCallsKeepsItsOwnMeaning() {
        String message = RdmaErrors.of("ibv_create_comp_channel", Layout.ENOMEM).getMessage();
        assertTrue(!message.contains("RLIMIT_MEMLOCK"), message);
    }

    @Test
    void aQueuePairRefusedAsInvalidNamesMaxInlineData() {
        String message = RdmaErrors.of("rdma_create_qp", Layout.EINVAL).getMessage();
        assertTrue(message.contains("max_qp_wr") && message.contains("MaxInlineData"), message);
    }
}
