package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.MessageCompletion;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.QueuePair;
import org.rdmaconnector.verbs.QueuePairAttributes;
import org.rdmaconnector.verbs.QueuePairState;
import org.rdmaconnector.verbs.RnrTimer;
import org.rdmaconnector.verbs.TestProbes;

/**
 * The receiver-not-ready NAK timer on rxe0. The RDMA CM leaves every connection at 655.36 ms, the longest timer: a
 * peer that finds no receive posted waits that long before it sends again. {@code QueuePair.setMinRnrTimer} changes
 * it on an established queue pair (ibv_query_qp shows it) and a queue pair in error refuses with the call's name.
 * MinRnrTimerMicros sets it on a listener's accepted connections and on a connection definition's endpoints: a peer
 * held back by receiver-not-ready then tries again at that pace, counted by rxe's {@code rcvd_rnr_err} (RNR NAKs the
 * requesters received), and everything arrives once receives are posted again.
 */
@Tag("device")
@Timeout(180)
class RnrTimerDeviceTest {
    private static final Path RNR_NAKS_RECEIVED = Path.of("/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_rnr_err");
    // RNR NAKs a held peer must receive within WINDOW: at the CM's 655.36 ms they would take 33 s
    private static final int NAKS = 50;
    private static final Duration WINDOW = Duration.ofSeconds(10);
    // how long a peer at the CM's timer is watched: counted from its first NAK, at most 2 + WATCH / 655 ms of them
    // (the first, and one more that may fall between the count read before the watch and its start)
    private static final long WATCH_MILLIS = 3000;
    private static final int RECEIVES = 2;
    private static final int MESSAGES = RECEIVES + 3;

    @Test
    void theCmLeavesTheLongestTimerAndAnEstablishedQueuePairTakesAShorterOne() {
        try (Loopback link = Loopback.connect(2, 64)) {
            QueuePair client = link.client.id().queuePair();
            QueuePair server = link.server.id().queuePair();
            QueuePairAttributes before = client.query();
            assertEquals(QueuePairState.RTS, before.state(), before.toString());
            assertEquals(RnrTimer.CM_DEFAULT, before.minRnrTimer(), "the RDMA CM's move to RTR: " + before);
            assertEquals(RnrTimer.CM_DEFAULT, server.query().minRnrTimer(), "the accepting side's too");
            assertEquals(7, before.rnrRetryCount(), "ConnectionParameters.defaults(): RNR retry for ever");
            assertEquals(6, before.retryCount(), "ConnectionParameters.defaults(): 6 transport retries");

            RnrTimer timer = RnrTimer.atLeastMicros(640);
            server.setMinRnrTimer(timer);
            QueuePairAttributes after = server.query();
            assertEquals(new RnrTimer(12), after.minRnrTimer(), after.toString());
            assertEquals(QueuePairState.RTS, after.state(), "still established");
            assertEquals(RnrTimer.CM_DEFAULT, client.query().minRnrTimer(), "the other side's is its own");

            link.sendAndAwait(16, 1); // the connection still carries a message into the server's receive

            link.disconnect();
            assertEquals(QueuePairState.ERR, client.query().state(), "rdma_disconnect moves the queue pair to ERR");
            RdmaException refused = assertThrows(RdmaException.class, () -> client.setMinRnrTimer(timer));
            assertTrue(refused.getMessage().contains("ibv_modify_qp(IBV_QP_MIN_RNR_TIMER)")
                && refused.getMessage().contains("qp " + client.qpNumber()), refused.getMessage());
        }
    }

    @Test
    void aPeerThatOutranAListenersReceivesTriesAgainAtItsTimerAndEverythingArrivesOnResume() throws Exception {
        heldByAPausedListener(640, RnrTimerDeviceTest::awaitAShortTimersPace);
    }

    @Test
    void atMinRnrTimerMicros0APeerWaitsTheCmsTimer() throws Exception {
        heldByAPausedListener(0, naks -> {
            TestProbes.await("the first RNR NAK", WINDOW, () -> naks.getAsLong() >= 1);
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WATCH_MILLIS);
            while (System.nanoTime() < until) {
                long seen = naks.getAsLong();
                assertTrue(seen <= 2 + WATCH_MILLIS / 655, seen + " RNR NAKs within " + WATCH_MILLIS + " ms: more "
                    + "than the CM's 655.36 ms timer allows");
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        });
    }

    @Test
    void anEndpointWithoutAReceiveHoldsTheListenersAnswerAtItsTimerAndTakesItOnceItPostsOne() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            int port = Loopback.nextPort();
            Activation activation = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS)
                .port(port).receiveBufferSize(256).build(), Recorder.echo());
            TestProbes.await("listening", Loopback.TIMEOUT, () -> activation.state() == Activation.State.LISTENING);
            ChannelSettings settings = new ChannelSettings("rxe0", 1, 128, 0, 16, 4, 0, 1 << 20)
                .withMinRnrTimerMicros(640);
            try (ChannelSet set = ChannelSet.open(settings, stack.devices, stack.engine);
                 RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT)) {
                long start = rnrNaksReceived();
                byte[] message = message(0);
                assertNotNull(endpoint.send(message).await(Loopback.TIMEOUT), "the message is sent");
                awaitAShortTimersPace(() -> rnrNaksReceived() - start);
                WorkRequest answer = endpoint.receive();
                assertNotNull(answer.await(Loopback.TIMEOUT), "the echo arrives once a receive is posted");
                assertArrayEquals(message, answer.data());
                System.out.printf("RnrTimerDeviceTest: an endpoint without a receive: %d RNR NAKs until it posted "
                    + "one%n", rnrNaksReceived() - start);
            }
            TestProbes.await("the connection is gone", Loopback.TIMEOUT, () -> activation.connectionCount() == 0);
            activation.close();
        }
    }

    /** What the test does while the peer is held: waits for, or watches, the RNR NAKs counted since it sent. */
    @FunctionalInterface
    private interface WhileHeld {
        void check(LongSupplier naksSinceSent) throws Exception;
    }

    /**
     * A client sends MESSAGES to a paused listener with RECEIVES receives and the given MinRnrTimerMicros; while the
     * rest are held back by receiver-not-ready, {@code whileHeld} runs; on resume all arrive, in order, each once.
     */
    private static void heldByAPausedListener(int minRnrTimerMicros, WhileHeld whileHeld) throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            Recorder sink = new Recorder(null);
            int port = Loopback.nextPort();
            Activation activation = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS)
                .port(port).receiveBufferCount(RECEIVES).receiveBufferSize(256).minRnrTimerMicros(minRnrTimerMicros)
                .deliveryActive(false).build(), sink);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> activation.state() == Activation.State.LISTENING);
            ChannelSettings settings = new ChannelSettings("rxe0", 1, 128, 0, 2 * MESSAGES, 4, 0, 1 << 20);
            try (ChannelSet set = ChannelSet.open(settings, stack.devices, stack.engine);
                 RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT)) {
                long start = rnrNaksReceived();
                List<WorkRequest> sends = new ArrayList<>();
                for (int i = 0; i < MESSAGES; i++) {
                    sends.add(endpoint.send(message(i)));
                }
                whileHeld.check(() -> rnrNaksReceived() - start);
                long naks = rnrNaksReceived() - start;
                assertEquals(0, sink.receives().size(), "nothing is delivered while paused");
                assertTrue(activation.resumeDelivery());
                TestProbes.await("all " + MESSAGES + " messages delivered", Loopback.TIMEOUT,
                    () -> sink.receives().size() >= MESSAGES);
                for (WorkRequest send : sends) {
                    assertNotNull(send.await(Loopback.TIMEOUT), "every send completes");
                    assertTrue(send.result().isSuccess(), send.result().toString());
                }
                List<MessageCompletion> delivered = sink.receives();
                assertEquals(MESSAGES, delivered.size(), "each delivered once");
                for (int i = 0; i < MESSAGES; i++) {
                    assertArrayEquals(message(i), delivered.get(i).data(), "message " + i + ", in order");
                }
                System.out.printf("RnrTimerDeviceTest: MinRnrTimerMicros %d: %d RNR NAKs while held%n",
                    minRnrTimerMicros, naks);
            }
            TestProbes.await("the connection is gone", Loopback.TIMEOUT, () -> activation.connectionCount() == 0);
            activation.close();
        }
    }

    /** Waits for NAKS RNR NAKs counted by {@code naksSinceSent} within WINDOW, which the CM's timer cannot give. */
    private static void awaitAShortTimersPace(LongSupplier naksSinceSent) throws InterruptedException {
        TestProbes.await(NAKS + " RNR NAKs within " + WINDOW + " (at the CM's 655.36 ms they would take 33 s)", WINDOW,
            () -> naksSinceSent.getAsLong() >= NAKS);
    }

    /** RNR NAKs rxe0's requesters have received since it was added. */
    private static long rnrNaksReceived() {
        try {
            return Long.parseLong(Files.readString(RNR_NAKS_RECEIVED).trim());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read rxe's RNR NAK counter " + RNR_NAKS_RECEIVED, e);
        }
    }

    private static byte[] message(int i) {
        return ("held " + i).getBytes(StandardCharsets.UTF_8);
    }
}
