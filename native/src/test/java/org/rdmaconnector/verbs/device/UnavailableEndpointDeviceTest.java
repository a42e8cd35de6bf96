package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.EndpointSink;
import org.rdmaconnector.connector.spi.KeptCompletion;
import org.rdmaconnector.connector.spi.EndpointUnavailableException;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;

/**
 * An endpoint that is unavailable for a while on rxe0: it throws EndpointUnavailableException until the test makes
 * it available. The client sends K = 3 x ReceiveBufferCount messages; the listener re-posts a receive only after the
 * one it filled is delivered, so RC receiver-not-ready flow control holds the client back (no more than
 * ReceiveBufferCount of its sends complete while the endpoint is unavailable), and nothing is dropped: afterwards all
 * K are delivered, in order, each once, with their bytes.
 */
@Tag("device")
@Timeout(120)
class UnavailableEndpointDeviceTest {
    private static final int RECEIVE_BUFFERS = 4;
    private static final int K = 3 * RECEIVE_BUFFERS;
    private static final int REFUSALS_BEFORE_AVAILABLE = 3;

    @Test
    void messagesSentWhileTheEndpointIsUnavailableAreAllDeliveredInOrderAfterwards() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            Unavailable sink = new Unavailable();
            int port = Loopback.nextPort();
            Activation listener = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS).port(port)
                .acceptPolicy("accept").receiveBufferCount(RECEIVE_BUFFERS).receiveBufferSize(256)
                .maxConcurrentDeliveries(1).build(), sink);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> listener.state() == Activation.State.LISTENING);
            ChannelSettings settings = new ChannelSettings("rxe0", 1, 64, 0, K, 4, 0, 1 << 20);
            try (ChannelSet set = ChannelSet.open(settings, stack.devices, stack.engine);
                 RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT)) {
                List<WorkRequest> sends = new ArrayList<>();
                for (int i = 0; i < K; i++) {
                    sends.add(endpoint.send(message(i)));
                }
                TestProbes.await(REFUSALS_BEFORE_AVAILABLE + " refusals of the unavailable endpoint", Loopback.TIMEOUT,
                    () -> sink.refusals.get() >= REFUSALS_BEFORE_AVAILABLE);
                TestProbes.await("the sends the posted receives take complete", Loopback.TIMEOUT,
                    () -> completed(sends) >= RECEIVE_BUFFERS);
                int completedWhileUnavailable = completed(sends);
                assertEquals(RECEIVE_BUFFERS, completedWhileUnavailable, "receiver-not-ready holds the client back "
                    + "at ReceiveBufferCount sends while nothing is delivered");
                assertEquals(0, sink.delivered.size(), "nothing is delivered while the endpoint is unavailable");
                int refusals = sink.refusals.get();

                long flipped = System.nanoTime();
                sink.available = true;
                TestProbes.await("all " + K + " messages delivered", Loopback.TIMEOUT,
                    () -> sink.delivered.size() >= K);
                long allMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - flipped);
                long firstMillis = TimeUnit.NANOSECONDS.toMillis(sink.firstDelivery - flipped);
                TestProbes.await("all " + K + " sends complete", Loopback.TIMEOUT, () -> completed(sends) == K);
                for (WorkRequest send : sends) {
                    WorkCompletion wc = send.result();
                    assertNotNull(wc);
                    assertTrue(wc.isSuccess(), wc.toString());
                }
                List<MessageCompletion> delivered = List.copyOf(sink.delivered);
                assertEquals(K, delivered.size(), "each delivered once");
                for (int i = 0; i < K; i++) {
                    assertEquals(i + 1, delivered.get(i).sequence(), "in order");
                    assertArrayEquals(message(i), delivered.get(i).data(), "message " + i + "'s bytes");
                }
                assertEquals(0, listener.undeliverable());
                assertEquals(0, listener.errors(), "unavailability is no delivery error");
                System.out.printf("UnavailableEndpointDeviceTest: K=%d messages, ReceiveBufferCount %d; endpoint "
                        + "unavailable %d times, %d sends completed meanwhile (RNR held the rest); after it became "
                        + "available: first delivery after %d ms, all %d delivered in order after %d ms (%.1f msg/s "
                        + "from the first)%n", K, RECEIVE_BUFFERS, refusals, completedWhileUnavailable, firstMillis, K,
                    allMillis, K * 1000.0 / Math.max(1, allMillis - firstMillis));
            }
            TestProbes.await("the connection is gone", Loopback.TIMEOUT, () -> listener.connectionCount() == 0);
            listener.close();
        }
    }

    private static int completed(List<WorkRequest> requests) {
        return (int) requests.stream().filter(WorkRequest::isDone).count();
    }

    private static byte[] message(int i) {
        return ("unavailable " + i + " " + "y".repeat(i * 5)).getBytes(StandardCharsets.UTF_8);
    }

    /** Refuses every received message until {@link #available}; then records them. */
    private static final class Unavailable implements EndpointSink {
        final AtomicInteger refusals = new AtomicInteger();
        final List<MessageCompletion> delivered = new CopyOnWriteArrayList<>();
        volatile boolean available;
        volatile long firstDelivery;

        @Override
        public String name() {
            return "unavailable-for-a-while";
        }

        @Override
        public boolean receivesCmEvents() {
            return false;
        }

        @Override
        public boolean receivesCompletions() {
            return true;
        }

        @Override
        public void deliver(ConnectionEvent event) {
            throw new AssertionError("no CM events were asked for: " + event);
        }

        @Override
        public void deliver(MessageCompletion completion) throws EndpointUnavailableException {
            if (!completion.isReceive()) {
                return;
            }
            if (!available) {
                refusals.incrementAndGet();
                throw new EndpointUnavailableException("the test holds it unavailable", null);
            }
            if (delivered.isEmpty()) {
                firstDelivery = System.nanoTime();
            }
            delivered.add(KeptCompletion.of(completion));
        }
    }
}
