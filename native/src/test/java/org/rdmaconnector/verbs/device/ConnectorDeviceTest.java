package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaConnection;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectionHandle;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.connector.spi.Pool;
import org.rdmaconnector.connector.spi.PooledConnections;
import org.rdmaconnector.verbs.AsyncEvent;
import org.rdmaconnector.verbs.AsyncEventType;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * The connector machinery the resource adapter and the OSGi bundle share, on rxe0: a pooled channel set connects to
 * a listener, K messages arrive in order with their bytes and are echoed back, the CM events reach the sink, the
 * accept policy and allowed peers reject, a listener waiting for its address starts when it appears, and fatal port
 * events reach the set. Nothing is left open.
 */
@Tag("device")
@Timeout(300)
class ConnectorDeviceTest {
    private ConnectorStack stack;
    private EventEngine engine;
    private DeviceRegistry devices;
    private ListenerHub hub;
    private Map<Integer, String> fdsBefore;

    @BeforeEach
    void start() throws Exception {
        fdsBefore = TestProbes.openFdTargets();
        stack = new ConnectorStack();
        engine = stack.engine;
        devices = stack.devices;
        hub = stack.hub;
    }

    @AfterEach
    void stop() throws Exception {
        stack.close();
        assertEquals(Map.of(), TestProbes.fdsOpenedSince(fdsBefore), "every fd opened by the test is closed again");
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, Loopback.TIMEOUT, condition);
    }

    private static ListenerSettings listener(int port, String policy, String peers) {
        return ListenerSettings.of(Loopback.ADDRESS, port, null, policy, peers, 8, 256, 2);
    }

    @Test
    void messagesArriveInOrderAreEchoedAndTheDisconnectIsAnswered() throws Exception {
        int port = Loopback.nextPort();
        // echoes every message; fails once, on the first attempt at message 3, before echoing it: the activation
        // attempts it again, and nothing may be lost or repeated
        java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        Recorder recorder = new Recorder(c -> {
            if (c.sequence() == 3 && failed.compareAndSet(false, true)) {
                throw new IllegalStateException("an endpoint failing once");
            }
            c.connection().send(c.data());
        });
        Activation activation = hub.activate(listener(port, "accept", "10.0.0.0/24"), recorder);
        await("listening", () -> activation.state() == Activation.State.LISTENING);
        assertTrue(activation.stateDetail().contains("device rxe0"), activation.stateDetail());

        ChannelSettings settings = new ChannelSettings("rxe0", 1, 64, 0, 16, 16, 0, 1 << 20);
        try (ChannelSet set = ChannelSet.open(settings, devices, engine)) {
            RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
            assertTrue(endpoint.isConnected());
            int k = 12;
            List<WorkRequest> echoes = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                echoes.add(endpoint.receive());
            }
            for (int i = 0; i < k; i++) {
                WorkCompletion sent = endpoint.send(message(i)).await(Loopback.TIMEOUT);
                assertNotNull(sent, "send " + i + " completed");
                assertTrue(sent.isSuccess(), sent.toString());
            }
            for (int i = 0; i < k; i++) {
                WorkRequest echo = echoes.get(i);
                assertNotNull(echo.await(Loopback.TIMEOUT), "echo " + i + " arrived");
                assertArrayEquals(message(i), echo.data(), "echo " + i);
            }
            await("K receives delivered", () -> recorder.receives().size() == k);
            List<MessageCompletion> receives = recorder.receives();
            for (int i = 0; i < k; i++) {
                assertEquals(i + 1, receives.get(i).sequence());
                assertArrayEquals(message(i), receives.get(i).data());
            }
            await("K echo send completions delivered", () -> recorder.sends().size() == k);
            assertTrue(recorder.sends().stream().allMatch(MessageCompletion::isSuccess));

            assertEquals(1, activation.connectionCount());
            endpoint.close();
            assertFalse(endpoint.isConnected());
            await("DISCONNECTED delivered", () -> recorder.types().contains(CmEventType.DISCONNECTED));
            assertEquals(List.of(CmEventType.CONNECT_REQUEST, CmEventType.ESTABLISHED, CmEventType.DISCONNECTED),
                recorder.types());
            assertTrue(recorder.events.get(0).isAccepted());
            await("the accepted connection is destroyed", () -> activation.connectionCount() == 0);
            assertEquals(0, set.endpointCount());
            assertEquals(0, set.registeredBytes());
            assertEquals(1, activation.errors(), "the one exception is counted");
            assertEquals(0, activation.undeliverable(), "the failed attempt was delivered on the next");
        }
        activation.close();
        assertEquals(Activation.State.STOPPED, activation.state());
    }

    @Test
    void aPooledSetIsCleanedUpAndLentAgain() throws Exception {
        int port = Loopback.nextPort();
        Activation activation = hub.activate(listener(port, "accept", null), new Recorder(null));
        await("listening", () -> activation.state() == Activation.State.LISTENING);
        try (PooledConnections factory = new PooledConnections(ChannelSettings.DEFAULTS,
            new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ofSeconds(1)), devices, engine,
            (task, delay) -> () -> { })) {
            RdmaConnection first = factory.getConnection();
            ChannelSet set = ((ConnectionHandle) first).channelSet();
            RdmaEndpoint endpoint = first.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
            first.register(java.nio.ByteBuffer.allocateDirect(4096));
            assertTrue(assertThrows(IllegalStateException.class, factory::getConnection).getMessage()
                .startsWith("all 1 pooled connections are in use"));
            first.close();
            assertFalse(endpoint.isConnected(), "closing the handle closed its endpoint");
            assertThrows(IllegalStateException.class, first::deviceName);
            assertEquals(0, set.endpointCount());
            assertEquals(0, set.registeredBytes());
            await("the peer's connection is gone", () -> activation.connectionCount() == 0);
            try (RdmaConnection second = factory.getConnection()) {
                assertEquals(set, ((ConnectionHandle) second).channelSet(), "the same set, lent again");
                assertEquals("rxe0", second.deviceName());
                second.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
            }
            assertEquals(new Pool.Counters(1, 0, 1, 0, 2, 1, 1, 0), factory.counters());
        }
        activation.close();
    }

    @Test
    void theEndpointDecidesAndPeersOutsideTheListAreRejected() throws Exception {
        int port = Loopback.nextPort();
        Recorder decider = new Recorder(null);
        decider.onEvent = e -> {
            if (e.isDecisionPending()) {
                e.reject("busy".getBytes(StandardCharsets.UTF_8));
            }
        };
        Activation deciding = hub.activate(listener(port, "endpoint-decides", null), decider);
        int fenced = Loopback.nextPort();
        Recorder outsider = new Recorder(null);
        Activation filtered = hub.activate(listener(fenced, "accept", "192.168.0.0/16"), outsider);
        await("both listening", () -> deciding.state() == Activation.State.LISTENING
            && filtered.state() == Activation.State.LISTENING);
        try (ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, devices, engine)) {
            assertEquals("rxe0", set.deviceName(), "the first active device");
            RdmaException rejected = assertThrows(RdmaException.class,
                () -> set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT));
            assertTrue(rejected.getMessage().startsWith("rdma_connect failed: ECONNREFUSED"), rejected.getMessage());
            assertTrue(rejected.getMessage().contains("REJECTED"), rejected.getMessage());
            assertEquals(List.of(CmEventType.CONNECT_REQUEST), decider.types());
            assertFalse(decider.events.get(0).isAccepted());

            RdmaException fencedOut = assertThrows(RdmaException.class,
                () -> set.connect(new InetSocketAddress(Loopback.ADDRESS, fenced), Loopback.TIMEOUT));
            assertTrue(fencedOut.getMessage().contains("REJECTED"), fencedOut.getMessage());
            assertEquals(List.of(), outsider.types(), "a peer outside the list is rejected before any delivery");
            assertEquals(0, set.endpointCount());
            await("no connection is left", () -> deciding.connectionCount() == 0 && filtered.connectionCount() == 0);
        }
    }

    @Test
    void aListenerWaitingForItsAddressStartsWhenItAppears() throws Exception {
        int port = Loopback.nextPort();
        Activation waiting = hub.activate(ListenerSettings.of("10.0.0.2", port, null, null, null, 4, 64, 1),
            new Recorder(null));
        assertEquals(Activation.State.WAITING_FOR_DEVICE, waiting.state());
        assertTrue(waiting.stateDetail().startsWith("waiting: rdma_bind_addr failed: EADDRNOTAVAIL"),
            waiting.stateDetail());
        Ip.run("addr", "add", "10.0.0.2/24", "dev", "dummy0");
        try {
            await("listening after the address appeared", () -> waiting.state() == Activation.State.LISTENING);
        } finally {
            waiting.close();
            Ip.run("addr", "del", "10.0.0.2/24", "dev", "dummy0");
        }
    }

    @Test
    void aPortErrorReachesTheChannelSet() throws Exception {
        try (ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, devices, engine)) {
            CountDownLatch fatal = new CountDownLatch(1);
            List<AsyncEvent> seen = new CopyOnWriteArrayList<>();
            set.onFatalEvent(e -> {
                seen.add(e);
                fatal.countDown();
            });
            try {
                Ip.run("link", "set", "dummy0", "down");
                assertTrue(fatal.await(Loopback.TIMEOUT.toSeconds(), TimeUnit.SECONDS), "PORT_ERR arrives");
            } finally {
                Ip.run("link", "set", "dummy0", "up");
            }
            assertEquals(AsyncEventType.PORT_ERR, seen.get(0).type());
            assertEquals(seen.get(0), set.fatalEvent());
            await("port 1 active again", () -> set.context().queryPort(1).isActive());
        }
    }

    private static byte[] message(int i) {
        return ("message " + i + " " + "x".repeat(i * 7)).getBytes(StandardCharsets.UTF_8);
    }
}
