package org.rdmaconnector.verbs.device;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.jna.Scratch;

/** What a leak would make grow: fds, live threads, direct buffer bytes, and the kernel's RDMA objects. */
record Baseline(long fds, int threads, long directBytes, Map<String, Integer> rdmaResources) {
    static Baseline take() throws IOException, InterruptedException {
        // rdma res first: running it starts the JDK's process reaper thread, which must be in both counts
        Map<String, Integer> resources = RdmaRes.counts();
        long direct = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                direct = pool.getMemoryUsed();
            }
        }
        return new Baseline(TestProbes.openFds(), ManagementFactory.getThreadMXBean().getThreadCount(), direct,
            resources);
    }

    /**
     * A baseline taken once what lasts for the process is in place: a connector stack opened a channel set on the
     * first device and closed (librdmacm keeps its device contexts for the process's life), so that only what a
     * test leaves counts.
     */
    static Baseline afterWarmUp() throws IOException, InterruptedException {
        try (ConnectorStack stack = new ConnectorStack();
             ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, stack.devices, stack.engine)) {
            set.deviceName();
        }
        return take();
    }

    /**
     * This baseline without its direct-memory bound, for a process whose own socket and file I/O grows the JDK's
     * per-thread direct buffer caches after the baseline (the two-host {@code PeerAgent}).
     */
    Baseline ignoringDirectMemory() {
        return new Baseline(fds, threads, Long.MAX_VALUE / 2, rdmaResources); // no bound, and no overflow
    }

    /** Waits (bounded) until no count is above {@code before}'s, and returns the counts then. */
    static Baseline awaitBack(Baseline before) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Loopback.TIMEOUT.toNanos();
        Baseline now = take();
        while (!now.isBackTo(before) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            System.gc(); // direct buffers (a thread's scratch block, the JDK's own) are freed when collected
            now = take();
        }
        return now;
    }

    /**
     * No more fds, threads, direct memory and RDMA objects of any kind than {@code before} (fewer is fine: the
     * listener lets go of its idle queue set on the device two seconds after its last connection). Direct memory may
     * be one scratch block ({@code Scratch}, 64 bytes) per thread more: a thread that lives on (the JVM's own, the
     * test's) keeps the block it took for its first native call after the baseline.
     */
    boolean isBackTo(Baseline before) {
        return fds <= before.fds && threads <= before.threads
            && directBytes <= before.directBytes + (long) before.threads * Scratch.SIZE
            && before.rdmaResources.keySet().equals(rdmaResources.keySet()) && rdmaResources.entrySet().stream()
                .allMatch(e -> e.getValue() <= before.rdmaResources.get(e.getKey()));
    }
}
