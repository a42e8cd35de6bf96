package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;

/**
 * Pause and resume on rxe0: an activation started paused (DeliveryActive=false) accepts the client's connection and
 * holds its ESTABLISHED and the messages its ReceiveBufferCount receives took; the client's later sends are held back
 * by RC receiver-not-ready, the connection stays up and no delivery thread is taken. On resume everything arrives, in
 * order, each once; paused again mid-stream, the same holds for a second round.
 */
@Tag("device")
@Timeout(180)
class PauseDeviceTest {
    private static final int RECEIVE_BUFFERS = 4;
    private static final int K = 3 * RECEIVE_BUFFERS;
    // how long the held state is watched for a send or delivery that must not happen (an observation, not a wait)
    private static final long WATCH_MILLIS = 1000;

    @Test
    void aPausedActivationHoldsThePeerBackWithoutDroppingAndDeliversEverythingInOrderOnResume() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            Recorder sink = new Recorder(null);
            int port = Loopback.nextPort();
            Activation activation = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS)
                .port(port).receiveBufferCount(RECEIVE_BUFFERS).receiveBufferSize(256).maxConcurrentDeliveries(2)
                .deliveryActive(false).build(), sink);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> activation.state() == Activation.State.LISTENING);
            assertFalse(activation.isDeliveryActive());
            ChannelSettings settings = new ChannelSettings("rxe0", 1, 128, 0, 2 * K, 4, 0, 1 << 20);
            try (ChannelSet set = ChannelSet.open(settings, stack.devices, stack.engine);
                 RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT)) {
                List<WorkRequest> sends = new ArrayList<>();
                long start = System.nanoTime();
                int heldFirst = round(activation, endpoint, sink, sends, 0);
                long firstRound = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

                assertTrue(activation.pauseDelivery(), "paused again mid-stream");
                int heldSecond = round(activation, endpoint, sink, sends, K);

                List<CmEventType> cm = sink.types();
                assertEquals(List.of(CmEventType.CONNECT_REQUEST, CmEventType.ESTABLISHED), cm, "the CM events held while paused too");
                assertEquals(0, activation.undeliverable());
                assertEquals(0, activation.errors());
                System.out.printf("PauseDeviceTest: %d messages per round, ReceiveBufferCount %d; paused: %d events "
                    + "held, %d sends completed (RNR held the rest), connection up; first round %d ms; second "
                    + "round: %d held%n", K, RECEIVE_BUFFERS, heldFirst, RECEIVE_BUFFERS, firstRound, heldSecond);
            }
            TestProbes.await("the connection is gone", Loopback.TIMEOUT, () -> activation.connectionCount() == 0);
            activation.close();
        }
    }

    /** Sends K messages while paused, checks what is held, resumes, checks that all K arrived; returns held. */
    private static int round(Activation activation, RdmaEndpoint endpoint, Recorder sink, List<WorkRequest> sends,
                             int first) throws Exception {
        int before = sends.size();
        for (int i = first; i < first + K; i++) {
            sends.add(endpoint.send(message(i)));
        }
        TestProbes.await("the sends the posted receives take complete", Loopback.TIMEOUT,
            () -> completed(sends) >= before + RECEIVE_BUFFERS);
        TestProbes.await("the receives held", Loopback.TIMEOUT, () -> activation.held() >= RECEIVE_BUFFERS);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WATCH_MILLIS);
        while (System.nanoTime() < until) {
            assertEquals(before + RECEIVE_BUFFERS, completed(sends), "receiver-not-ready holds the peer back at "
                + "ReceiveBufferCount sends while paused");
            assertEquals(first, sink.receives().size(), "nothing is delivered while paused");
            assertEquals(1, activation.connectionCount(), "the connection stays up");
            assertTrue(endpoint.isConnected(), "the client's endpoint stays connected");
            assertEquals(0, activation.inFlight(), "no delivery thread is held while paused");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // the next look; the guest's CPUs are few
        }
        int held = activation.held();
        assertTrue(activation.resumeDelivery());
        TestProbes.await("all " + (first + K) + " messages delivered", Loopback.TIMEOUT,
            () -> sink.receives().size() >= first + K);
        TestProbes.await("all sends complete", Loopback.TIMEOUT, () -> completed(sends) == sends.size());
        for (WorkRequest send : sends) {
            assertTrue(send.result().isSuccess(), send.result().toString());
        }
        List<MessageCompletion> delivered = sink.receives();
        assertEquals(first + K, delivered.size(), "each delivered once");
        for (int i = 0; i < first + K; i++) {
            assertEquals(i + 1, delivered.get(i).sequence(), "in order");
            assertArrayEquals(message(i), delivered.get(i).data(), "message " + i + "'s bytes");
        }
        assertEquals(0, activation.held());
        return held;
    }

    private static int completed(List<WorkRequest> requests) {
        return (int) requests.stream().filter(WorkRequest::isDone).count();
    }

    private static byte[] message(int i) {
        return ("paused " + i + " " + "z".repeat(i * 3)).getBytes(StandardCharsets.UTF_8);
    }
}
