package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.CmEventType;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.CmEvent;
import org.rdmaconnector.verbs.TestProbes;

/**
 * A slow decision under endpoint-decides on rxe0: while the deciding endpoint holds a CONNECT_REQUEST undecided, the
 * listener has set up nothing for it (the kernel counts no queue pair, memory region, completion queue or protection
 * domain beyond those before the request; only the request's CM id), and once the endpoint accepts, the connection
 * is set up and echoes.
 */
@Tag("device")
@Timeout(120)
class SlowDecisionDeviceTest {
    private static final List<String> SET_UP = List.of("qp", "mr", "cq", "pd");

    @Test
    void anUndecidedRequestHoldsNoQueuePairOrMemoryAndIsServedOnceAccepted() throws Exception {
        ExecutorService connector = Executors.newSingleThreadExecutor();
        try (ConnectorStack stack = new ConnectorStack()) {
            CountDownLatch requested = new CountDownLatch(1);
            CountDownLatch decide = new CountDownLatch(1);
            Recorder decider = Recorder.echo();
            decider.onEvent = e -> {
                if (e.isDecisionPending()) {
                    requested.countDown();
                    try {
                        if (decide.await(60, TimeUnit.SECONDS)) {
                            e.accept();
                        }
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            int port = Loopback.nextPort();
            Activation listener = stack.hub.activate(ListenerSettings.builder().address(Loopback.ADDRESS).port(port)
                .acceptPolicy("endpoint-decides").receiveBufferCount(8).receiveBufferSize(256).build(), decider);
            TestProbes.await("listening", Loopback.TIMEOUT, () -> listener.state() == Activation.State.LISTENING);

            try (RawClient client = RawClient.resolve(Loopback.ADDRESS, new InetSocketAddress(Loopback.ADDRESS,
                port))) {
                // the client's own queue pair, memory and queues exist now: they are in the baseline
                Map<String, Integer> before = RdmaRes.counts();
                long asked = System.nanoTime();
                Future<CmEvent> answer = connector.submit(client::connect);
                assertTrue(requested.await(Loopback.TIMEOUT.toSeconds(), TimeUnit.SECONDS),
                    "the CONNECT_REQUEST reached the deciding endpoint");
                long undecidedFrom = System.nanoTime();
                Map<String, Integer> undecided = RdmaRes.counts();
                assertEquals(1, listener.connectionCount(), "the undecided request is held");
                assertTrue(!answer.isDone(), "the client is still waiting for the decision");
                long undecidedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - undecidedFrom);

                decide.countDown();
                CmEvent event = answer.get(Loopback.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                long connectMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
                assertEquals(CmEventType.ESTABLISHED, event.type());
                Map<String, Integer> accepted = RdmaRes.counts();
                byte[] message = "after a slow decision".getBytes(StandardCharsets.US_ASCII);
                assertArrayEquals(message, client.echo(message), "the accepted connection echoes");

                System.out.printf("SlowDecisionDeviceTest: rdma res before the request %s, while undecided %s (held "
                        + "%d ms), after the accept %s; connect took %d ms including the held decision%n", before,
                    undecided, undecidedMillis, accepted, connectMillis);
                for (String kind : SET_UP) {
                    assertEquals(before.get(kind), undecided.get(kind), kind + " while the request is undecided");
                }
                assertEquals(before.get("qp") + 1, accepted.get("qp"), "the accept made the listener's queue pair");
            }
            TestProbes.await("the connection is gone", Loopback.TIMEOUT, () -> listener.connectionCount() == 0);
            listener.close();
        } finally {
            connector.shutdownNow();
        }
    }
}
