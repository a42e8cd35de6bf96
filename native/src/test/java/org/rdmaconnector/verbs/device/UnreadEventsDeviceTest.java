package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectionHandle;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.connector.spi.PooledConnections;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * Channel sets and listeners whose events are no longer read (here: their engine's loop ended) on rxe0: a pooled set
 * is not lent again, and a listener no longer reports LISTENING. Nothing is left open.
 */
@Tag("device")
@Timeout(120)
class UnreadEventsDeviceTest {
    private ConnectorStack stack;
    private ExecutorService delivery;
    private EventEngine doomed;
    private Map<Integer, String> fdsBefore;

    @BeforeEach
    void start() throws Exception {
        fdsBefore = TestProbes.openFdTargets();
        stack = new ConnectorStack();
        delivery = Executors.newFixedThreadPool(2);
        doomed = new EventEngine(r -> {
            Thread t = new Thread(r, "doomed-event-loop");
            t.setDaemon(true);
            return t;
        }, delivery);
    }

    @AfterEach
    void stop() throws Exception {
        doomed.close();
        delivery.shutdownNow();
        assertTrue(delivery.awaitTermination(5, TimeUnit.SECONDS));
        stack.close();
        assertEquals(Map.of(), TestProbes.fdsOpenedSince(fdsBefore), "every fd opened by the test is closed again");
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, Loopback.TIMEOUT, condition);
    }

    @Test
    void aPooledSetWhoseEventsAreNoLongerReadIsDestroyedNotLentAgain() throws Exception {
        int port = Loopback.nextPort();
        Activation activation = stack.hub.activate(
            ListenerSettings.of(Loopback.ADDRESS, port, null, "accept", null, 8, 256, 2), new Recorder(null));
        await("listening", () -> activation.state() == Activation.State.LISTENING);
        try (PooledConnections factory = new PooledConnections(ChannelSettings.DEFAULTS,
            new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ZERO), stack.devices, doomed,
            (task, delay) -> () -> { })) {
            RdmaConnection first = factory.getConnection();
            ChannelSet set = ((ConnectionHandle) first).channelSet();
            first.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
            first.close();
            assertTrue(set.isHealthy(), set.unhealthyReason());

            doomed.close(); // its loop ends: nothing reads the set's CM events and completions any more
            assertFalse(set.isHealthy());
            assertTrue(set.unhealthyReason().startsWith("its CM events are no longer read"), set.unhealthyReason());
            IllegalStateException refused = assertThrows(IllegalStateException.class, factory::getConnection,
                "the broken set must not be lent again");
            assertEquals("EventEngine is closed", refused.getMessage(), "a new set cannot be opened either");
            Pool.Counters counters = factory.counters();
            assertEquals(1, counters.invalid(), counters.toString());
            assertEquals(1, counters.destroyed(), counters.toString());
            assertEquals(0, counters.borrowed(), counters.toString());
            assertTrue(set.isClosed());
        }
        activation.close();
    }

    @Test
    void aListenerWhoseEventsAreNoLongerReadReportsItAndDoesNotClaimToListen() throws Exception {
        int port = Loopback.nextPort();
        try (ListenerHub hub = new ListenerHub(stack.devices, doomed, stack.runtime.scheduler())) {
            Activation activation = hub.activate(
                ListenerSettings.of(Loopback.ADDRESS, port, null, "accept", null, 8, 256, 2), new Recorder(null));
            await("listening", () -> activation.state() == Activation.State.LISTENING);

            doomed.close();
            assertEquals(Activation.State.WAITING_FOR_DEVICE, activation.state());
            String lost = activation.stateDetail();
            assertTrue(lost.contains("its CM events are no longer read (the RDMA event engine stopped)"), lost);
            // it listens again, which on a closed engine fails and says why
            await("retrying on the closed engine", () -> activation.stateDetail().contains("EventEngine is closed"));
            assertEquals(Activation.State.WAITING_FOR_DEVICE, activation.state());
            activation.close();
        }
    }
}
