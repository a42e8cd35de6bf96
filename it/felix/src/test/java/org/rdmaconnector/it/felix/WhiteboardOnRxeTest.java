package org.rdmaconnector.it.felix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * On rxe0 in the soft-RDMA VM (this test jar runs in that tier's guest JVM): rdma-osgi in an embedded Felix, a pooled
 * connection factory from Config Admin, and a whiteboard service registered as both listener types. A connection
 * made through the factory service sends K messages; the service gets CONNECT_REQUEST, ESTABLISHED, the K messages in
 * order with their bytes (and echoes them, byte for byte, to the client), its K send completions, and DISCONNECTED.
 * A runtime update of the factory takes effect without a restart; once the framework stops, no thread or file
 * descriptor is left.
 */
@Tag("device")
@Timeout(300)
class WhiteboardOnRxeTest {
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();
    private static final String ADDRESS = "10.0.0.1";
    private static final int PORT = 7481;
    private static final int K = 16;

    @TempDir
    Path storage;

    @Test
    void aWhiteboardListenerGetsTheEventsOfAConnectionFromThePooledFactory() throws Exception {
        warmUpLibrdmacm();
        Leaks leaks = new Leaks();
        try (FelixRig felix = FelixRig.start(storage)) {
            String pid = (String) felix.probe("configureFactory", Map.of("name", "rxe0",
                "properties", Map.of("deviceName", "rxe0", "maxPoolSize", 2)));
            String status = FelixRig.await("the factory service", () -> factoryStatus(felix, pid, "pool 0..2"));
            assertTrue(status.startsWith("device rxe0, pool 0..2, device present"), status);

            long id = (Long) felix.probe("register", Map.of("properties", Map.of("rdma.address", ADDRESS,
                "rdma.port", PORT, "rdma.allowedPeers", "10.0.0.0/24", "rdma.receiveBufferCount", 8)));
            ObjectName activation = FelixRig.await("the listener", () -> listening(id));

            @SuppressWarnings("unchecked")
            Map<String, Object> seen = (Map<String, Object>) felix.probe("exchange", Map.of("pid", pid,
                "address", ADDRESS, "port", PORT, "messages", K, "size", 512));
            assertEquals("rxe0", seen.get("device"), seen.toString());
            assertEquals(K, seen.get("echoed intact"), "every message came back intact: " + seen);
            assertTrue(seen.get("counters while lent").toString().contains("borrowed=1"), seen.toString());
            assertTrue(seen.get("counters").toString().startsWith("Counters[idle=1, borrowed=0, opened=1,"),
                "the set went back to the pool: " + seen);

            // CM events and completions are delivered in separate orders: wait for both to be complete
            long expected = 3 + 2 * K;
            FelixRig.await("every event delivered", () -> journal(felix, id).size() >= expected
                && Long.valueOf(expected).equals(attribute(activation, "Delivered")) ? "" : null);
            List<String> journal = journal(felix, id);
            assertEquals(List.of("cm CONNECT_REQUEST", "cm ESTABLISHED", "cm DISCONNECTED"), kind(journal, "cm "),
                "the CM events, each once: " + journal);
            assertEquals(IntStream.range(0, K).mapToObj(i -> "rx " + (i + 1) + " " + i).toList(), kind(journal, "rx "),
                "the messages, in order, each once: " + journal);
            assertEquals(IntStream.rangeClosed(1, K).mapToObj(i -> "tx " + i).toList(), kind(journal, "tx "),
                "the echoes' send completions: " + journal);
            assertEquals(expected, journal.size(), "nothing else: " + journal);
            assertEquals(0L, JMX.getAttribute(activation, "Errors"));
            FelixRig.await("the accepted connection destroyed",
                () -> Integer.valueOf(0).equals(attribute(activation, "Connections")) ? "" : null);

            felix.probe("configureFactory", Map.of("name", "rxe0",
                "properties", Map.of("deviceName", "rxe0", "maxPoolSize", 3)));
            FelixRig.await("the updated factory", () -> factoryStatus(felix, pid, "pool 0..3"));
            @SuppressWarnings("unchecked")
            Map<String, Object> again = (Map<String, Object>) felix.probe("exchange", Map.of("pid", pid,
                "address", ADDRESS, "port", PORT, "messages", 1, "size", 64));
            assertEquals(1, again.get("echoed intact"), "the updated factory's pool works: " + again);

            felix.probe("unregister", Map.of("id", id));
            assertEquals(Set.of(), JMX.queryNames(activation, null), "the activation is gone with its service");
        }
        assertEquals(List.of(), leaks.rdmaThreadsLeft(), "rdma threads left after the framework stopped");
        assertEquals(Map.of(), leaks.newFds(), "file descriptors left open after the framework stopped");
    }

    private static String factoryStatus(FelixRig felix, String pid, String pool) {
        try {
            Object status = felix.probe("factoryStatus", Map.of("pid", pid));
            return status != null && status.toString().contains(pool) ? status.toString() : null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectName listening(long id) {
        try {
            for (ObjectName name : JMX.queryNames(new ObjectName("org.rdmaconnector:type=Activation,listener=\""
                + ADDRESS + ":" + PORT + "\",*"), null)) {
                if (isOfService(name, id) && "LISTENING".equals(JMX.getAttribute(name, "State"))) {
                    return name;
                }
            }
            return null;
        } catch (javax.management.JMException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether the activation MBean {@code name} is the one of whiteboard service {@code id}. */
    static boolean isOfService(ObjectName name, long id) {
        return ObjectName.unquote(name.getKeyProperty("endpoint")).endsWith("#" + id);
    }

    /**
     * librdmacm opens its own context of each device once per process, on first use, and keeps it: use it once
     * before counting file descriptors (through the class path's rdma-native; the C library is one per process).
     */
    private static void warmUpLibrdmacm() {
        try (org.rdmaconnector.verbs.EventChannel channel = org.rdmaconnector.verbs.EventChannel.create()) {
            channel.createId(org.rdmaconnector.verbs.PortSpace.TCP)
                .bind(new java.net.InetSocketAddress(ADDRESS, 0));
        }
    }

    private static Object attribute(ObjectName name, String attribute) {
        try {
            return JMX.getAttribute(name, attribute);
        } catch (javax.management.JMException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> journal(FelixRig felix, long id) {
        try {
            return (List<String>) felix.probe("journal", Map.of("id", id));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> kind(List<String> journal, String prefix) {
        return journal.stream().filter(e -> e.startsWith(prefix)).toList();
    }
}
