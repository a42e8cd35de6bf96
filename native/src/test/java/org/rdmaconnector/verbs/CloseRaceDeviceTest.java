package org.rdmaconnector.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.device.Loopback;

/**
 * Closes racing other calls on rxe0, through the package-private seams that let a test stop between two steps: a
 * completion queue closed between ibv_get_cq_event and the counting of that event, a CM id printed while its close
 * waits, two threads creating a queue pair on one id.
 */
@Tag("device")
@Timeout(120)
class CloseRaceDeviceTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, WAIT, condition);
    }

    private static Thread daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true); // if a fix regresses it stays blocked in native code: it must not hold the JVM
        thread.start();
        return thread;
    }

    private static boolean inNative(Thread thread, String method) {
        return Arrays.stream(thread.getStackTrace()).limit(3).anyMatch(f -> f.getMethodName().equals(method));
    }

    @Test
    void aQueueClosedBetweenGettingItsEventAndCountingItIsDestroyedAndTheEventAcked() throws Exception {
        try (Loopback loopback = Loopback.connect(1, 64)) {
            Loopback.Side client = loopback.client;
            CompletionChannel channel = client.channel();
            CompletionQueue cq = client.cq();
            cq.requestNotify(false);
            client.id().queuePair().postSend(client.buffer(), 0, 16, 1, true);
            assertTrue(channel.awaitEvent(WAIT), "no completion event within " + WAIT);

            channel.acquire();
            Thread closer;
            try {
                long got = channel.readCqEvent(); // the event is got: ibv_destroy_cq now waits for its ack
                assertEquals(cq.address(), got);
                closer = daemon("cq-closer", cq::close);
                // the closer is inside ibv_destroy_cq, waiting for the ack of the event not yet counted
                await("the closer waits in ibv_destroy_cq", () -> inNative(closer, "ibv_destroy_cq"));
                assertEquals(cq, channel.countCqEvent(got), "the event is for the closing queue");
            } finally {
                channel.release();
            }
            closer.join(WAIT.toMillis());
            assertFalse(closer.isAlive(), "ibv_destroy_cq still waits for an ack: the event counted meanwhile was "
                + "never acked");
            assertTrue(cq.isClosed());
            assertEquals(1, channel.eventsReceived());
            assertEquals(1, channel.eventsAcknowledged(), "the event was acked by the thread that counted it");
            assertEquals(0, channel.attachedQueues());
        }
    }

    @Test
    void aCmIdPrintedWhileItsCloseWaitsReadsNoNativeMemory() throws Exception {
        try (EventChannel channel = EventChannel.create()) {
            CmId listener = Loopback.listen(channel);
            String open = listener.toString();
            assertTrue(open.startsWith("CmId[TCP, local /" + Loopback.ADDRESS + ":"), open);

            listener.acquire(); // a call in progress: close waits for it
            Thread closer;
            try {
                closer = daemon("id-closer", listener::close);
                await("the close waits for the call in progress", () -> closer.getState() == Thread.State.WAITING);
                assertFalse(listener.isClosed());
                // the close is under way: what toString would read is about to be freed
                assertEquals("CmId[closed]", listener.toString());
            } finally {
                listener.release();
            }
            closer.join(WAIT.toMillis());
            assertTrue(listener.isClosed());
            assertEquals("CmId[closed]", listener.toString());
        }
    }

    @Test
    void twoThreadsCreatingAQueuePairOnOneIdGetOneQueuePairAndOneClearError() throws Exception {
        int rounds = 20;
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (EventChannel channel = EventChannel.create()) {
            CmId listener = Loopback.listen(channel);
            int port = listener.localAddress().getPort();
            for (int round = 0; round < rounds; round++) {
                CmId id = Loopback.resolved(channel, port);
                try (DeviceContext context = id.openDeviceContext()) {
                    ProtectionDomain pd = context.allocateProtectionDomain();
                    CompletionQueue cq = context.createCompletionQueue(16, null, 0);
                    CyclicBarrier start = new CyclicBarrier(2);
                    List<Future<Object>> calls = new ArrayList<>();
                    for (int t = 0; t < 2; t++) {
                        calls.add(threads.submit(() -> {
                            start.await(10, TimeUnit.SECONDS);
                            try {
                                return id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(4, 4));
                            } catch (RuntimeException e) {
                                return e;
                            }
                        }));
                    }
                    List<Object> results = new ArrayList<>();
                    for (Future<Object> call : calls) {
                        results.add(call.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
                    }
                    List<Object> queuePairs = results.stream().filter(r -> r instanceof QueuePair).toList();
                    assertEquals(1, queuePairs.size(), "round " + round + ": " + results);
                    Object other = results.get(results.get(0) instanceof QueuePair ? 1 : 0);
                    assertTrue(other instanceof IllegalStateException && ((Exception) other).getMessage()
                        .equals("CmId already has a queue pair, or another thread is creating one"),
                        "round " + round + ": " + other);
                    assertEquals(queuePairs.get(0), id.queuePair());
                    id.close(); // its one queue pair with it
                    assertTrue(((QueuePair) queuePairs.get(0)).isClosed());
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aQueuePairThatFailedToBeCreatedLeavesTheIdFreeToTryAgain() {
        try (EventChannel channel = EventChannel.create()) {
            CmId listener = Loopback.listen(channel);
            CmId id = Loopback.resolved(channel, listener.localAddress().getPort());
            try (DeviceContext context = id.openDeviceContext()) {
                ProtectionDomain pd = context.allocateProtectionDomain();
                CompletionQueue cq = context.createCompletionQueue(16, null, 0);
                RdmaException tooBig = org.junit.jupiter.api.Assertions.assertThrows(RdmaException.class,
                    () -> id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(1 << 30, 4)));
                assertEquals("rdma_create_qp", tooBig.function());
                assertNull(id.queuePair());
                QueuePair created = id.createQueuePair(pd, cq, cq, QueuePairCapabilities.of(4, 4));
                assertNotEquals(0, created.qpNumber());
            }
        }
    }
}
