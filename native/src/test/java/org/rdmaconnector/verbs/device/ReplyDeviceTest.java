package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.CmId;
import org.rdmaconnector.verbs.ConnectionParameters;
import org.rdmaconnector.verbs.EventChannel;
import org.rdmaconnector.verbs.TestProbes;

/**
 * Request/response listeners on rxe0, with ONE delivery thread, so that nothing else can run while a delivery waits:
 * a CompletionListener that sends a reply and waits for that send's completion inside its delivery gets it (the work
 * request completes as the CQ is polled, not behind the delivery that waits), and one that connects to another
 * server inside its delivery gets its CM events (the outbound CM events are handled on the event loop).
 */
@Tag("device")
@Timeout(300)
class ReplyDeviceTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** A listener on {@code port} with {@code sink}, four connections of 256-byte receives, listening. */
    private static Activation listening(ConnectorRuntime runtime, int port, Recorder sink)
        throws InterruptedException {
        Activation activation = runtime.hub().activate(ListenerSettings.of(Loopback.ADDRESS, port, null, null, null,
            4, 256, 1), sink);
        TestProbes.await("listening", Loopback.TIMEOUT, () -> activation.state() == Activation.State.LISTENING);
        return activation;
    }

    @Test
    void aListenerThatWaitsForItsOwnReplysCompletionGetsIt() throws Exception {
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-reply", 1)) {
            List<String> outcomes = new CopyOnWriteArrayList<>();
            Recorder replier = awaitingReplier(outcomes);
            int port = Loopback.nextPort();
            Activation activation = listening(runtime, port, replier);
            try (ChannelSet set = ChannelSet.open(new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20),
                runtime.devices(), runtime.engine())) {
                RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
                for (int i = 0; i < 3; i++) {
                    WorkRequest answer = endpoint.receive();
                    byte[] request = ("request " + i).getBytes(StandardCharsets.UTF_8);
                    endpoint.send(request);
                    assertNotNull(answer.await(Loopback.TIMEOUT), "answer " + i);
                    assertArrayEquals(request, answer.data());
                }
                TestProbes.await("three replies sent", Loopback.TIMEOUT, () -> outcomes.size() == 3);
                assertEquals(List.of("sent", "sent", "sent"), outcomes);
                endpoint.close();
            }
            activation.close();
        }
    }

    /**
     * DeliverSendCompletions false: a listener that awaits its replies itself is given its messages only, the
     * listener beside it with the default both. Each reply's completion is polled before the next message arrives,
     * and one connection's deliveries keep the CQ's order, so a reply's completion delivered by mistake would be
     * recorded before the last message is.
     */
    @Test
    void aListenerThatTakesNoSendCompletionsIsGivenOnlyItsMessagesWhileItAwaitsItsReplies() throws Exception {
        int messages = 4;
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-quiet-sends", 1)) {
            List<String> outcomes = new CopyOnWriteArrayList<>();
            Recorder quiet = awaitingReplier(outcomes);
            Recorder told = awaitingReplier(outcomes);
            int quietPort = Loopback.nextPort();
            int toldPort = Loopback.nextPort();
            Activation quietOne = runtime.hub().activate(ListenerSettings.builder().address(Loopback.ADDRESS)
                .port(quietPort).receiveBufferCount(4).receiveBufferSize(256).maxConcurrentDeliveries(1)
                .deliverSendCompletions(false).build(), quiet);
            Activation toldOne = listening(runtime, toldPort, told);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> quietOne.state() == Activation.State.LISTENING);
            try (ChannelSet set = ChannelSet.open(new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20),
                runtime.devices(), runtime.engine())) {
                for (int port : new int[] {quietPort, toldPort}) {
                    RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port),
                        Loopback.TIMEOUT);
                    for (int i = 0; i < messages; i++) {
                        WorkRequest answer = endpoint.receive();
                        endpoint.send(("request " + i).getBytes(StandardCharsets.UTF_8));
                        assertNotNull(answer.await(Loopback.TIMEOUT), "answer " + i + " on port " + port);
                    }
                    endpoint.close();
                }
                TestProbes.await("every message recorded", Loopback.TIMEOUT,
                    () -> quiet.receives().size() == messages && told.receives().size() == messages);
                TestProbes.await("the default listener given its replies' completions", Loopback.TIMEOUT,
                    () -> told.sends().size() == messages);
                assertEquals(List.of(), quiet.sends(), "no reply's completion reached the quiet listener");
                assertEquals(Collections.nCopies(2 * messages, "sent"), outcomes,
                    "each listener's await got its reply's completion");
            }
            quietOne.close();
            toldOne.close();
        }
    }

    /** A listener that answers each message with a copy and awaits the answer's completion inside its delivery. */
    private static Recorder awaitingReplier(List<String> outcomes) {
        return new Recorder(c -> {
            WorkRequest reply = c.connection().send(c.data());
            try {
                WorkCompletion done = reply.await(WAIT);
                outcomes.add(done == null ? "no completion within " + WAIT : done.isSuccess() ? "sent"
                    : done.statusText());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                outcomes.add("interrupted");
            }
        });
    }

    @Test
    void aListenerCopiesEachMessageIntoItsOwnArrayAndAnswersWithASliceOfIt() throws Exception {
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-slice", 1)) {
            byte[] own = new byte[64]; // one delivery thread: the listener's one array, reused for every message
            Recorder replier = new Recorder(c -> {
                int n = c.copyData(own, 10);
                own[9] = '>';
                c.connection().send(own, 9, n + 1, false); // '>' and the message, from the listener's array
            });
            int port = Loopback.nextPort();
            Activation activation = listening(runtime, port, replier);
            try (ChannelSet set = ChannelSet.open(new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20),
                runtime.devices(), runtime.engine())) {
                RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
                byte[] outgoing = "..request 0, request 10..".getBytes(StandardCharsets.UTF_8);
                int[][] slices = {{2, 9}, {13, 10}, {24, 1}}; // "request 0", "request 10", "."
                for (int i = 0; i < slices.length; i++) {
                    WorkRequest answer = endpoint.receive();
                    int at = slices[i][0];
                    int length = slices[i][1];
                    assertNotNull(endpoint.send(outgoing, at, length, true).await(Loopback.TIMEOUT), "send " + i);
                    assertNotNull(answer.await(Loopback.TIMEOUT), "answer " + i);
                    assertEquals(">" + new String(outgoing, at, length, StandardCharsets.UTF_8),
                        new String(answer.data(), StandardCharsets.UTF_8), "answer " + i);
                }
                // the recorder records a message after its listener answered it
                TestProbes.await("three messages recorded", Loopback.TIMEOUT, () -> replier.receives().size() == 3);
                assertEquals(List.of(9, 10, 1),
                    replier.receives().stream().map(MessageCompletion::dataLength).toList());
                IndexOutOfBoundsException outside = assertThrows(
                    IndexOutOfBoundsException.class, () -> endpoint.send(outgoing, 20, 10, true));
                assertEquals("10 bytes at offset 20 are not inside the message of 25 bytes", outside.getMessage());
                endpoint.close();
            }
            activation.close();
        }
    }

    /**
     * A message is read where the device put it while it is delivered: a connection destroyed meanwhile (the peer
     * disconnected; with its one receive lent to the delivery, nothing is left to flush) copies the message out of
     * its slot as it frees its memory, and the listener reads the right bytes after the destruction.
     */
    @Test
    void aMessageIsReadInItsSlotAfterItsConnectionWasDestroyedDuringItsDelivery() throws Exception {
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-lent", 2)) {
            CountDownLatch inDelivery = new CountDownLatch(1);
            CountDownLatch destroyed = new CountDownLatch(1);
            List<String> read = new CopyOnWriteArrayList<>();
            Recorder reader = new Recorder(c -> {
                inDelivery.countDown();
                try {
                    if (!destroyed.await(Loopback.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                        read.add("the test did not see the connection destroyed");
                        return;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                byte[] own = new byte[c.dataLength()];
                c.copyData(own, 0);
                read.add(new String(c.data(), StandardCharsets.UTF_8));
                read.add(new String(own, StandardCharsets.UTF_8));
            });
            int port = Loopback.nextPort();
            Activation activation = runtime.hub().activate(ListenerSettings.builder().address(Loopback.ADDRESS)
                .port(port).receiveBufferCount(1).receiveBufferSize(256).maxConcurrentDeliveries(2).build(), reader);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> activation.state() == Activation.State.LISTENING);
            String message = "read in place after the connection was destroyed";
            try (ChannelSet set = ChannelSet.open(new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20),
                runtime.devices(), runtime.engine())) {
                RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
                assertNotNull(endpoint.send(message.getBytes(StandardCharsets.UTF_8), true).await(Loopback.TIMEOUT));
                assertTrue(inDelivery.await(Loopback.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), "delivered");
                endpoint.close();
            }
            // destroyed (its slot in the listener freed) while the delivery still runs: held deliveries only keep it
            TestProbes.await("the connection destroyed", Loopback.TIMEOUT, () -> activation.connectionCount() == 0);
            destroyed.countDown();
            TestProbes.await("the listener read the message", Loopback.TIMEOUT, () -> read.size() == 2);
            assertEquals(List.of(message, message), read, "data() and copyData() after the destruction");
            TestProbes.await("the message recorded", Loopback.TIMEOUT, () -> reader.receives().size() == 1);
            assertEquals(message, new String(reader.receives().get(0).data(), StandardCharsets.UTF_8),
                "the completion kept a copy once its delivery was through");
            activation.close();
        }
    }

    @Test
    void aListenerThatConnectsElsewhereInsideItsDeliveryGetsItsCmEvents() throws Exception {
        EventChannel serverEvents = EventChannel.create();
        CompletableFuture<Loopback.Side> served = null;
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-nested", 1)) {
            // the other server: rdma-core's calls on a test thread, not the connector's listener (whose deliveries
            // would need the one delivery thread the test keeps busy)
            CmId server = Loopback.listen(serverEvents);
            served = CompletableFuture.supplyAsync(() -> {
                CmEvent request = Loopback.expect(serverEvents, CmEventType.CONNECT_REQUEST);
                Loopback.Side side = Loopback.Side.on(request.id(), 1, 64, 1);
                request.id().accept(ConnectionParameters.defaults());
                Loopback.expect(serverEvents, CmEventType.ESTABLISHED);
                return side;
            });
            List<String> outcomes = new CopyOnWriteArrayList<>();
            ChannelSettings client = new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20);
            Recorder forwarder = new Recorder(null);
            forwarder.onEvent = event -> {
                if (event.type() != CmEventType.ESTABLISHED) {
                    return;
                }
                try (ChannelSet set = ChannelSet.open(client, runtime.devices(), runtime.engine())) {
                    RdmaEndpoint onward = set.connect(server.localAddress(), WAIT);
                    outcomes.add(onward.isConnected() ? "connected" : "not connected");
                    onward.close();
                } catch (RuntimeException e) {
                    outcomes.add(e.toString());
                }
            };
            int port = Loopback.nextPort();
            Activation activation = listening(runtime, port, forwarder);
            try (ChannelSet set = ChannelSet.open(client, runtime.devices(), runtime.engine())) {
                RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
                TestProbes.await("the onward connect finished", Loopback.TIMEOUT, () -> outcomes.size() == 1);
                assertEquals(List.of("connected"), outcomes);
                assertNotNull(served.get(Loopback.TIMEOUT.toSeconds(), TimeUnit.SECONDS), "the server saw ESTABLISHED");
                endpoint.close();
            }
            activation.close();
        } finally {
            serverEvents.close(); // its ids and their queue pairs
            if (served != null && served.isDone() && !served.isCompletedExceptionally()) {
                served.get().context().close();
            }
        }
    }
}
