package org.rdmaconnector.verbs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.verbs.TestProbes;

/**
 * The engine's busy polling and arm-before-wait protocol, on a source that behaves like a completion queue on its
 * channel: events are queued without a sound, and the fd (a real pipe) becomes readable only for the first event
 * after the source was armed, as ibv_req_notify_cq arms a CQ for one event.
 */
@Timeout(30)
class BusyPollTest {
    private ExecutorService pool;
    private EventEngine engine;
    private final Pipe bell = new Pipe();

    @BeforeEach
    void start() {
        pool = Executors.newFixedThreadPool(2);
        engine = new EventEngine(r -> {
            Thread t = new Thread(r, "rdma-event-loop-busy-poll-test");
            t.setDaemon(true);
            return t;
        }, pool);
    }

    @AfterEach
    void stop() throws InterruptedException {
        engine.close();
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(5, TimeUnit.SECONDS));
        bell.closeFds();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, Duration.ofSeconds(10), condition);
    }

    /** A completion queue's behaviour: polled events, and one notification per arming. */
    private final class ArmedQueue implements EventSource<Integer> {
        private final ArrayDeque<Integer> queued = new ArrayDeque<>();
        private boolean armed;
        int notifications;
        int armings;

        /** Adds an event; rings the bell only when armed, and disarms (one notification per arming). */
        synchronized void add(int event) {
            queued.add(event);
            if (armed) {
                armed = false;
                notifications++;
                assertTrue(bell.write(0, event), "the bell pipe is full");
            }
        }

        synchronized boolean isArmed() {
            return armed;
        }

        @Override
        public int fd() {
            return bell.readFd;
        }

        @Override
        public synchronized void open() {
            armed = true;
        }

        @Override
        public synchronized Integer next() {
            while (bell.next() != null) {
                // the notification was taken, as ibv_get_cq_event takes it; the queue is polled below
            }
            return queued.poll();
        }

        @Override
        public synchronized boolean armBeforeWait() {
            armed = true;
            armings++;
            return true;
        }

        @Override
        public boolean busyPollable() {
            return true;
        }
    }

    private static void awaitInOrder(List<Integer> seen, int count) throws InterruptedException {
        await(count + " events delivered", () -> seen.size() == count);
        for (int i = 0; i < count; i++) {
            assertEquals(i, seen.get(i), "event " + i);
        }
    }

    /** Ping-pong: each delivered event makes the next one, from the delivery thread, until {@code count}. */
    private Registration pingPong(ArmedQueue queue, List<Integer> seen, int count) {
        Registration registration = engine.register(queue, event -> {
            seen.add(event);
            if (event + 1 < count) {
                queue.add(event + 1);
            }
        }, 16);
        queue.add(0);
        return registration;
    }

    @Test
    void withoutBusyPollingNothingIsLostAndTheSourceIsArmedAfterEachRun() throws InterruptedException {
        engine.setBusyPoll(Duration.ZERO);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = pingPong(queue, seen, 500);
        awaitInOrder(seen, 500);
        await("the source armed before the engine waits", queue::isArmed);
        assertEquals(0, registration.busyPolls(), "no busy poll with a budget of 0");
        assertTrue(queue.armings > 0, "armed before each wait");
    }

    @Test
    void busyPollingFindsTheNextEventsWithoutNotifications() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = pingPong(queue, seen, 500);
        awaitInOrder(seen, 500);
        // each next event comes within microseconds of the last, far within the budget: the engine keeps polling
        // instead of arming, so the events need no notification (a stall of the budget's 100 ms lets one through)
        assertTrue(queue.notifications < 50, queue.notifications + " notifications for 500 events");
        assertTrue(registration.busyPolls() > 0, "busy polls counted");
        await("the source armed once the budget ran out", queue::isArmed);
    }

    @Test
    void aSourceBeingBusyPolledDoesNotDelayTheOthers() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        pingPong(queue, seen, Integer.MAX_VALUE); // never idle: busy-polled as long as the test runs
        await("the ping-pong runs", () -> seen.size() > 100);
        Pipe other = new Pipe();
        try {
            List<long[]> otherSeen = new CopyOnWriteArrayList<>();
            engine.register(other, otherSeen::add, 16);
            assertTrue(other.write(7, 1));
            await("the other source's event delivered while the first is busy", () -> otherSeen.size() == 1);
            assertEquals(7, otherSeen.get(0)[0]);
        } finally {
            engine.close();
            other.closeFds();
        }
    }

    @Test
    void theBudgetIsCheckedAndTakesEffect() {
        assertEquals(EventEngine.DEFAULT_BUSY_POLL, engine.busyPoll());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
            () -> engine.setBusyPoll(Duration.ofNanos(-1)));
        assertEquals("the busy-poll budget must be from 0 to 100 ms, was PT-0.000000001S", negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> engine.setBusyPoll(Duration.ofMillis(101)));
        assertThrows(IllegalArgumentException.class, () -> engine.setBusyPoll(null));
        engine.setBusyPoll(Duration.ofNanos(7_000));
        assertEquals(Duration.ofNanos(7_000), engine.busyPoll());
    }
}
