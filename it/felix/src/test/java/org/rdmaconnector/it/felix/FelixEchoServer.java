package org.rdmaconnector.it.felix;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.function.LongPredicate;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The server of the layered benchmark's layer (c) (issue 14, goal 3; run by {@code bench/vm-bench.sh} in the soft-RDMA
 * VM): an OSGi whiteboard listener in an embedded Felix with the build's bundles ({@link FelixRig}), which sends every
 * message back ({@code PlainEcho}, registered through the probe). {@code LayeredEcho client felix} drives it. Prints
 * {@code listening on port N} once the activation listens, then the bytes the JVM allocated per echoed message over the
 * timed part (every thread but this one, which only watches), as {@code LayeredEcho}'s servers do; ends once the
 * client disconnects.
 * Usage: {@code FelixEchoServer PORT SIZE WINDOW COUNT WARMUP}.
 */
public final class FelixEchoServer {
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();
    private static final long WATCH_MILLIS = 10; // the watching costs CPU the echo shares

    private FelixEchoServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: FelixEchoServer PORT SIZE WINDOW COUNT WARMUP");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        int size = Integer.parseInt(args[1]);
        int window = Integer.parseInt(args[2]);
        long count = Long.parseLong(args[3]);
        long warmup = Long.parseLong(args[4]);
        Path storage = Files.createTempDirectory("felix-echo");
        try (FelixRig felix = FelixRig.start(storage)) {
            // the settings of LayeredEcho's connector server
            long id = (Long) felix.probe("registerPlainEcho", Map.of("properties", Map.of(
                "rdma.address", "0.0.0.0", "rdma.port", port, "rdma.receiveBufferCount", Math.max(16, 2 * window),
                "rdma.receiveBufferSize", Math.max(size, 64), "rdma.maxConcurrentDeliveries", 8)));
            FelixRig.await("the listener", () -> listening(id));
            System.out.println("listening on port " + port);

            long[] start = awaitServed(felix, id, n -> n >= warmup);
            long startBytes = allocatedByOthers();
            long[] end = awaitServed(felix, id, n -> n >= count);
            long bytes = allocatedByOthers() - startBytes;
            long messages = end[0] - start[0];
            System.out.printf("server allocated %.1f B/msg over %d messages (every thread of the JVM but the watcher, "
                + "from the CQ to the whiteboard listener and its echo back)%n", (double) bytes / messages, messages);
            awaitServed(felix, id, n -> true, 1); // the client's disconnect
            felix.probe("unregister", Map.of("id", id));
        }
    }

    private static long[] awaitServed(FelixRig felix, long id, LongPredicate echoed) throws Exception {
        return awaitServed(felix, id, echoed, 0);
    }

    /** Watches the echo until its count of echoed messages passes {@code echoed} and {@code disconnects} are in. */
    private static long[] awaitServed(FelixRig felix, long id, LongPredicate echoed, long disconnects)
        throws Exception {
        while (true) {
            long[] served = (long[]) felix.probe("served", Map.of("id", id));
            if (echoed.test(served[0]) && served[1] >= disconnects) {
                return served;
            }
            Thread.sleep(WATCH_MILLIS);
        }
    }

    private static long allocatedByOthers() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        long[] ids = Arrays.stream(threads.getAllThreadIds()).filter(t -> t != self).toArray();
        return Arrays.stream(threads.getThreadAllocatedBytes(ids)).filter(b -> b > 0).sum();
    }

    private static String listening(long id) {
        try {
            for (ObjectName name : JMX.queryNames(new ObjectName("org.rdmaconnector:type=Activation,*"), null)) {
                if (WhiteboardOnRxeTest.isOfService(name, id) && "LISTENING".equals(JMX.getAttribute(name, "State"))) {
                    return name.toString();
                }
            }
            return null;
        } catch (javax.management.JMException e) {
            throw new IllegalStateException(e);
        }
    }
}
