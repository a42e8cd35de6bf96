package org.rdmaconnector.verbs.device;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rdmaconnector.connector.spi.DeliveryThreads;

/**
 * Finds connector threads that are stuck: seen BLOCKED, or WAITING in the connector's main code (its innermost frame
 * outside the JDK is the connector's: not idle in a pool, not in an endpoint's own sleep), in every sample for longer
 * than a limit. Sample it about once a second.
 */
final class ThreadWatch {
    private static final Class<?> IDLE_POOL = DeliveryThreads.class;
    private static final String IDLE_POOL_WAIT = "next";
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Map<Long, Long> stuckSince = new HashMap<>();
    private final String ownPrefix;
    private final long limitNanos;

    /**
     * @param ownPrefix the name prefix of the test's own threads, which are not watched
     * @param limit how long a thread may stay stuck
     */
    ThreadWatch(String ownPrefix, Duration limit) {
        this.ownPrefix = ownPrefix;
        this.limitNanos = limit.toNanos();
    }

    /** One sample: adds a line to {@code violations} for each thread stuck for longer than the limit. */
    void sample(List<String> violations) {
        long now = System.nanoTime();
        Map<Long, Long> still = new HashMap<>();
        for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
            if (info == null || info.getThreadName().startsWith(ownPrefix) || !stuck(info)) {
                continue;
            }
            long since = stuckSince.getOrDefault(info.getThreadId(), now);
            still.put(info.getThreadId(), since);
            if (now - since > limitNanos) {
                violations.add("thread " + info.getThreadName() + " " + info.getThreadState() + " for more than "
                    + Duration.ofNanos(limitNanos).toSeconds() + " s: " + info);
            }
        }
        stuckSince.clear();
        stuckSince.putAll(still);
    }

    private static boolean stuck(ThreadInfo info) {
        if (info.getThreadState() == Thread.State.BLOCKED) {
            return true;
        }
        if (info.getThreadState() != Thread.State.WAITING && info.getThreadState() != Thread.State.TIMED_WAITING) {
            return false;
        }
        // the innermost frame outside the JDK says whose wait it is: the connector's, or the caller's (an endpoint
        // that sleeps by design, a test); a thread with none is idle in a pool or timer, as is one idle in the
        // connector's own delivery pool (waiting for its next task)
        for (StackTraceElement frame : info.getStackTrace()) {
            String c = frame.getClassName();
            if (c.startsWith("java.") || c.startsWith("jdk.") || c.startsWith("sun.")) {
                continue;
            }
            if (c.equals(IDLE_POOL.getName()) && frame.getMethodName().equals(IDLE_POOL_WAIT)) {
                return false;
            }
            return c.startsWith("org.rdmaconnector.") && !c.startsWith("org.rdmaconnector.verbs.device.");
        }
        return false;
    }
}
