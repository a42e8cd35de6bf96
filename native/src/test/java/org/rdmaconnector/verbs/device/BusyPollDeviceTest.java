package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.ChannelSetInfo;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.ConnectorRuntime;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.engine.EventEngine;
import org.rdmaconnector.verbs.engine.Registration;

/**
 * Busy polling on rxe0, through the connector (a pooled client's channel set and an echo listener, on one runtime):
 * request/reply exchanges one at a time, each answer checked. Without busy polling, every exchange costs the client
 * at least one completion event (it waits for each answer); with a budget far above a round trip, the thread that
 * awaits a request polls the client's CQ itself and reads the completions, while the listener's CQ is busy-polled by
 * the loop or by the delivery thread that sent the echo before, and nothing is lost either way.
 */
@Tag("device")
@Timeout(300)
class BusyPollDeviceTest {
    private static final int EXCHANGES = 200;

    /** Runs the exchanges with {@code budget} and {@code hold}; returns the client set's figures after them. */
    private static ChannelSetInfo exchange(Duration budget, Duration hold, String name) throws Exception {
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone(name, 2)) {
            runtime.engine().setBusyPoll(budget);
            runtime.engine().setWaiterHold(hold);
            int port = Loopback.nextPort();
            Activation activation = echoListener(runtime, port, 4, 1);
            try (ChannelSet set = ChannelSet.open(new ChannelSettings("rxe0", 1, 64, 0, 4, 4, 0, 1 << 20),
                runtime.devices(), runtime.engine())) {
                RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT);
                ChannelSetInfo before = set.info();
                String clientCq = "completions[fd " + before.completionChannelFd() + "]";
                long readByWaitersBefore = readByWaiters(runtime, cq -> cq.equals(clientCq));
                exchanges(endpoint, "a budget of " + budget);
                // the loop thread completes a request as it polls it and counts it just after: wait for the count
                TestProbes.await("every completion counted", Loopback.TIMEOUT,
                    () -> set.info().completionsRead() - before.completionsRead() >= 2L * EXCHANGES);
                ChannelSetInfo after = set.info();
                // the loop's busy polls, and the completions threads read while they waited or delivered (their busy
                // polls): with a budget far above a round trip those threads may read every one, the loop none
                long busyPolls = runtime.engine().registrations().stream().mapToLong(Registration::busyPolls).sum()
                    + readByWaiters(runtime, cq -> true);
                assertEquals(budget.isZero(), busyPolls == 0, busyPolls + " busy polls with a budget of " + budget);
                long byWaiters = readByWaiters(runtime, cq -> cq.equals(clientCq)) - readByWaitersBefore;
                // the listener's: read by its delivery thread after it delivered the one before
                long byDeliveries = readByWaiters(runtime, cq -> cq.startsWith("completions[")
                    && !cq.equals(clientCq));
                System.out.println("BusyPollDeviceTest: " + byWaiters + " completions read by the awaiting thread, "
                    + byDeliveries + " by the listener's delivery threads, with a budget of " + budget);
                if (budget.isZero()) {
                    assertEquals(0, byWaiters + byDeliveries, "a budget of 0 leaves every completion to the loop");
                } else {
                    // the waiter polls without pause, the loop only wakes for a CQ event: the waiter reads nearly all
                    assertTrue(byWaiters >= EXCHANGES, byWaiters + " of " + 2 * EXCHANGES + " read by the waiter");
                    // each request comes within the budget after the echo before it: the delivery thread that sent
                    // the echo reads it, and the echo's own completion
                    assertTrue(byDeliveries >= EXCHANGES, byDeliveries + " of " + 2 * EXCHANGES + " read by the "
                        + "listener's delivery threads");
                }
                endpoint.close();
                activation.close();
                return new ChannelSetInfo(after.state(), after.eventChannelFd(), after.completionChannelFd(),
                    after.completionQueueCapacity(), after.cmEventsRead() - before.cmEventsRead(),
                    after.completionsRead() - before.completionsRead(),
                    after.completionEvents() - before.completionEvents(), after.registeredBytes());
            }
        }
    }

    @Test
    void severalThreadsAwaitingOnOneCompletionQueueEachGetTheirOwnAnswers() throws Exception {
        int threads = 4;
        try (ConnectorRuntime runtime = ConnectorRuntime.standalone("rdma-waiters", 2)) {
            // below this VM's round trip: waiters often give up and sleep, so the CQ passes from the waiters to the
            // loop (the last waiter's arming) and back again and again
            runtime.engine().setBusyPoll(Duration.ofNanos(200_000));
            int port = Loopback.nextPort();
            Activation activation = echoListener(runtime, port, 8, threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try (ChannelSet set = ChannelSet.open(new ChannelSettings("rxe0", 1, 256, 0, 4, 4, 0, 1 << 22),
                runtime.devices(), runtime.engine())) {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    RdmaEndpoint endpoint = set.connect(new InetSocketAddress(Loopback.ADDRESS, port),
                        Loopback.TIMEOUT);
                    String name = "thread " + t;
                    results.add(pool.submit(() -> {
                        exchanges(endpoint, name);
                        endpoint.close();
                        return EXCHANGES;
                    }));
                }
                for (Future<Integer> result : results) {
                    assertEquals(EXCHANGES, result.get(2, TimeUnit.MINUTES));
                }
                long byWaiters = readByWaiters(runtime, cq -> true);
                System.out.println("BusyPollDeviceTest: " + threads + " threads on one CQ, " + byWaiters
                    + " of " + 4 * threads * EXCHANGES + " completions (the client's and the listener's) read by "
                    + "threads other than the loop");
                long expected = 2L * threads * EXCHANGES; // a send and a receive per exchange
                TestProbes.await("every completion counted", Loopback.TIMEOUT,
                    () -> set.info().completionsRead() >= expected);
                assertEquals(expected, set.info().completionsRead(), "every completion read once");
            } finally {
                pool.shutdownNow();
            }
            activation.close();
        }
    }

    /** An echo listener on {@code port} with {@code receives} buffers per connection and {@code deliveries}. */
    private static Activation echoListener(ConnectorRuntime runtime, int port, int receives, int deliveries)
        throws InterruptedException {
        Activation activation = runtime.hub().activate(ListenerSettings.of(Loopback.ADDRESS, port, null, null, null,
            receives, 256, deliveries), Recorder.echo());
        TestProbes.await("listening", Loopback.TIMEOUT, () -> activation.state() == Activation.State.LISTENING);
        return activation;
    }

    /** Completions read by threads other than the loop, over the runtime's registrations named as {@code which}. */
    private static long readByWaiters(ConnectorRuntime runtime, Predicate<String> which) {
        return runtime.engine().registrations().stream().filter(r -> which.test(r.name()))
            .mapToLong(Registration::eventsReadByWaiters).sum();
    }

    /** {@link #EXCHANGES} request/answer exchanges on {@code endpoint}, one at a time, each answer checked. */
    private static void exchanges(RdmaEndpoint endpoint, String name) throws InterruptedException {
        for (int i = 0; i < EXCHANGES; i++) {
            WorkRequest answer = endpoint.receive();
            byte[] request = (name + ", request " + i).getBytes(StandardCharsets.UTF_8);
            WorkRequest sent = endpoint.send(request);
            assertNotNull(answer.await(Loopback.TIMEOUT), name + ": answer " + i);
            // the send's completion comes with the peer's ACK, which rxe may deliver after the answer
            assertNotNull(sent.await(Loopback.TIMEOUT), name + ": send " + i);
            assertArrayEquals(request, answer.data(), name + ": answer " + i);
        }
    }

    @Test
    void withABudgetTheAwaitingThreadReadsTheCompletionsAndNothingIsLost() throws Exception {
        ChannelSetInfo waiting = exchange(Duration.ZERO, Duration.ZERO, "rdma-no-busy-poll");
        ChannelSetInfo polling = exchange(EventEngine.MAX_BUSY_POLL, Duration.ZERO, "rdma-busy-poll");
        ChannelSetInfo holding = exchange(EventEngine.MAX_BUSY_POLL, EventEngine.MAX_WAITER_HOLD, "rdma-hold");
        String figures = "without busy polling: " + waiting.completionsRead() + " completions, "
            + waiting.completionEvents() + " completion events; with a budget of " + EventEngine.MAX_BUSY_POLL
            + ": " + polling.completionsRead() + " completions, " + polling.completionEvents() + " completion events"
            + "; and a waiter hold of " + EventEngine.MAX_WAITER_HOLD + ": " + holding.completionsRead()
            + " completions, " + holding.completionEvents() + " completion events";
        System.out.println("BusyPollDeviceTest: " + figures);
        // a send and a receive completion per exchange, on each budget
        assertEquals(2L * EXCHANGES, waiting.completionsRead(), figures);
        assertEquals(2L * EXCHANGES, polling.completionsRead(), figures);
        assertEquals(2L * EXCHANGES, holding.completionsRead(), figures);
        // the client waits for each answer, so without busy polling it sleeps and wakes about once per exchange
        // (the look after arming finds an answer that came early, so not always)
        assertTrue(waiting.completionEvents() >= EXCHANGES / 2, figures);
        // with the budget, the client's CQ is armed only when its last waiter leaves (the loop leaves it to the
        // waiter meanwhile): at most one event per wait, two waits per exchange
        assertTrue(polling.completionEvents() <= 2L * EXCHANGES, figures);
        // with the hold as well, it stays unarmed while the waiter keeps reading it: an event only where a waiter
        // gave up (an answer slower than the budget) or at the start
        assertTrue(holding.completionEvents() <= EXCHANGES / 10, figures);
    }
}
