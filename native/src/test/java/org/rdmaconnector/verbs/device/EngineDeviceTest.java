package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.WcOpcode;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;
import org.rdmaconnector.verbs.engine.Sources;

/** The event engine on real completion and CM event channels: order, backpressure, shutdown, no leaks. */
@Tag("device")
@Timeout(300)
class EngineDeviceTest {
    private static final int SLOT = 64;
    private final ThreadFactory threads = r -> new Thread(r, "rdma-event-loop");
    private ExecutorService pool;
    private EventEngine engine;

    @BeforeEach
    void start() {
        pool = Executors.newFixedThreadPool(3);
        engine = new EventEngine(threads, pool);
    }

    @AfterEach
    void stop() throws InterruptedException {
        engine.close();
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, Loopback.TIMEOUT, condition);
    }

    /** Sends {@code count} messages, each carrying its sequence number, waiting for each send to complete. */
    private static void sendSequence(Loopback link, int count) {
        ByteBuffer out = link.client.buffer().buffer();
        for (int i = 0; i < count; i++) {
            out.putInt(0, i);
            link.sendAndAwait(4, i);
        }
    }

    /** The sequence number in the slot a receive completion filled. */
    private static int sequenceOf(Loopback link, WorkCompletion wc) {
        return link.server.buffer().buffer().getInt((int) wc.wrId() * SLOT);
    }

    @Test
    void connectionsTimesMessagesArriveInOrderPerConnection() throws Exception {
        int connections = 3;
        int messages = 40;
        List<Loopback> links = new ArrayList<>();
        try {
            Map<Integer, List<Integer>> byQp = new ConcurrentHashMap<>();
            Map<Integer, Loopback> linkByQp = new ConcurrentHashMap<>();
            List<Registration> registrations = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                Loopback link = Loopback.connect(messages, SLOT);
                links.add(link);
                linkByQp.put(link.server.id().queuePair().qpNumber(), link);
                registrations.add(engine.register(Sources.completions(link.server.channel(), 8), wc -> {
                    assertTrue(wc.isSuccess() && wc.opcode() == WcOpcode.RECV, wc.toString());
                    byQp.computeIfAbsent(wc.qpNumber(), k -> new CopyOnWriteArrayList<>())
                        .add(sequenceOf(linkByQp.get(wc.qpNumber()), wc));
                }));
            }
            Thread[] senders = new Thread[connections];
            for (int c = 0; c < connections; c++) {
                Loopback link = links.get(c);
                senders[c] = new Thread(() -> sendSequence(link, messages));
                senders[c].start();
            }
            for (Thread sender : senders) {
                sender.join();
            }
            await("all messages delivered", () -> byQp.values().stream().mapToInt(List::size).sum()
                == connections * messages);
            for (Map.Entry<Integer, List<Integer>> e : byQp.entrySet()) {
                for (int i = 0; i < messages; i++) {
                    assertEquals(i, e.getValue().get(i), "qp " + e.getKey() + " message " + i);
                }
            }
            assertEquals(connections, byQp.size());
            for (Registration registration : registrations) {
                assertEquals(messages, registration.eventsDelivered());
                assertEquals(0, registration.errors());
                registration.close();
            }
            for (Loopback link : links) {
                assertEquals(0, link.server.cq().unackedEvents(), "closing the registration acked every event");
            }
        } finally {
            links.forEach(Loopback::close);
        }
    }

    @Test
    void aSlowConsumerHoldsCompletionsBackAndLosesNone() throws Exception {
        int messages = 30;
        int bound = 4;
        try (Loopback link = Loopback.connect(messages, SLOT)) {
            List<Integer> seen = new CopyOnWriteArrayList<>();
            AtomicInteger maxInFlight = new AtomicInteger();
            Registration[] registration = new Registration[1];
            registration[0] = engine.register(Sources.completions(link.server.channel(), 4), wc -> {
                maxInFlight.accumulateAndGet(registration[0].inFlight(), Math::max);
                Thread.sleep(20);
                seen.add(sequenceOf(link, wc));
            }, bound);
            sendSequence(link, messages);
            await("all delivered", () -> seen.size() == messages);
            for (int i = 0; i < messages; i++) {
                assertEquals(i, seen.get(i));
            }
            assertTrue(maxInFlight.get() <= bound, "in flight exceeded the bound: " + maxInFlight.get());
            assertEquals(messages, registration[0].eventsRead());
            assertTrue(registration[0].eventsAcked() <= link.server.channel().eventsReceived());
            registration[0].close();
            assertTrue(registration[0].eventsAcked() > 0, "CQ events were acknowledged");
            assertEquals(link.server.channel().eventsReceived(), registration[0].eventsAcked(),
                "every CQ event the channel gave is acknowledged once the source is closed");
        }
    }

    @Test
    void shutdownWithEventsInFlightLeavesNothingUnackedAndNoFdOpen() throws Exception {
        // librdmacm opens the device's fds once per process: open them before counting; the engine of this
        // test is made after the count
        Loopback.connect(1, SLOT).close();
        engine.close();
        Map<Integer, String> fdsBefore = TestProbes.openFdTargets();
        engine = new EventEngine(threads, pool);
        int messages = 20;
        Loopback link = Loopback.connect(messages, SLOT);
        AtomicInteger delivered = new AtomicInteger();
        List<CmEvent> cmEvents = new CopyOnWriteArrayList<>();
        CountDownLatch inFlightSeen = new CountDownLatch(1);
        Registration completions = engine.register(Sources.completions(link.server.channel(), 16), wc -> {
            inFlightSeen.await(10, TimeUnit.SECONDS); // deliveries wait until the test has seen some in flight
            Thread.sleep(30);
            delivered.incrementAndGet();
        }, 8);
        engine.register(Sources.cmEvents(link.serverEvents), cmEvents::add);
        sendSequence(link, messages);
        await("some in flight", () -> completions.inFlight() > 0);
        inFlightSeen.countDown();
        link.client.id().disconnect();
        await("the server saw DISCONNECTED", () -> cmEvents.stream().anyMatch(e -> e.type()
            == CmEventType.DISCONNECTED));
        engine.close();
        assertEquals(0, completions.inFlight(), "close delivered what was read");
        assertEquals(completions.eventsRead(), delivered.get());
        assertFalse(completions.eventsRead() > messages);
        assertEquals(0, link.server.cq().unackedEvents(), "every completion event acknowledged");
        assertEquals(link.server.channel().eventsReceived(), completions.eventsAcked());
        link.close();
        assertEquals(Map.of(), TestProbes.fdsOpenedSince(fdsBefore), "fds opened and left open (/proc/self/fd)");
    }
}
