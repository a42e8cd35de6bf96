package org.rdmaconnector.verbs.device;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import org.rdmaconnector.verbs.TestProbes;

/**
 * What a fault test must leave as it found it: this JVM's open fds, the kernel's RDMA objects ({@code rdma res}) and
 * the JVM's direct memory in use.
 */
record Baseline(long fds, Map<String, Integer> rdmaObjects, long directMemory) {
    static Baseline now() {
        try {
            return new Baseline(TestProbes.openFds(), RdmaRes.counts(), ManagementFactory.getPlatformMXBeans(
                BufferPoolMXBean.class).stream().filter(b -> b.getName().equals("direct"))
                .mapToLong(BufferPoolMXBean::getMemoryUsed).sum());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until {@link #now()} equals this baseline; fails naming both after {@code within}. */
    void awaitBack(Duration within) throws InterruptedException {
        Baseline[] last = {null};
        try {
            TestProbes.await("back to " + this, within, () -> equals(last[0] = now()));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last seen " + last[0], e);
        }
    }
}
