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
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
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
    private class ArmedQueue implements EventSource<Integer> {
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
            nexts++;
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

        @Override
        public synchronized Integer poll() {
            polls++;
            return queued.poll(); // the queue only: a notification stays for next()
        }

        @Override
        public synchronized void close() {
            closed = true;
        }

        int polls;
        int nexts;
        boolean closed;
    }

    /** A queue that was never armed: only a waiting thread's poll finds its events (the loop is never told). */
    private class SilentQueue extends ArmedQueue {
        @Override
        public synchronized void open() {
        }

        @Override
        public synchronized Integer poll() {
            assertTrue(!closed, "polled after close");
            return super.poll();
        }
    }

    /**
     * A queue some of whose completions (the negative ones) are consumed where it is polled and make no event, as a
     * request the reader completes in place; one can be made to land right after the next arming, raising its
     * notification.
     */
    private class InlineQueue extends ArmedQueue {
        volatile boolean landAfterNextArming;

        @Override
        public synchronized Integer next() {
            return firstEvent(super::next);
        }

        @Override
        public synchronized Integer poll() {
            return firstEvent(super::poll);
        }

        /** What {@code read} gives after the completions it consumes in place, which make no event. */
        private Integer firstEvent(Supplier<Integer> read) {
            Integer event;
            while ((event = read.get()) != null && event < 0) {
                // completed in place: no event
            }
            return event;
        }

        @Override
        public synchronized boolean armBeforeWait() {
            boolean armed = super.armBeforeWait();
            if (landAfterNextArming) {
                landAfterNextArming = false;
                add(-1); // armed: its notification rings, and the queue is unarmed again until the next arming
            }
            return armed;
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
        return pingPong(queue, seen, count, new CopyOnWriteArrayList<>());
    }

    /** {@link #pingPong(ArmedQueue, List, int)}, adding the thread each event was delivered on to {@code on}. */
    private Registration pingPong(ArmedQueue queue, List<Integer> seen, int count, List<Thread> on) {
        Registration registration = engine.register(queue, event -> {
            seen.add(event);
            on.add(Thread.currentThread());
            if (event + 1 < count) { // the answer to what the handler sent, as a peer's echo
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
    void aCompletionThatLandsRightAfterTheArmingLeavesTheSourceArmedForTheNextOne() throws InterruptedException {
        engine.setBusyPoll(Duration.ZERO); // armed as soon as it runs dry
        InlineQueue queue = new InlineQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        engine.register(queue, seen::add, 16);
        queue.add(0);
        awaitInOrder(seen, 1);
        await("armed after event 0", queue::isArmed);
        // after event 1 the loop arms the queue, and a completion lands at once and is consumed in place: the
        // look after the arming must leave its notification to wake the loop, which arms the queue again
        queue.landAfterNextArming = true;
        queue.add(1);
        awaitInOrder(seen, 2);
        await("armed again after the completion that landed", () -> !queue.landAfterNextArming && queue.isArmed());
        queue.add(2); // heard only if the queue is armed
        awaitInOrder(seen, 3);
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
        // the loop's busy polls, or the delivery thread's reads after its deliveries (delivery polling), which may
        // find every event after the first before the loop polls once
        assertTrue(registration.busyPolls() + registration.eventsReadByWaiters() > 0, "polls counted: "
            + registration.busyPolls() + " by the loop, " + registration.eventsReadByWaiters() + " events read by "
            + "the delivery thread");
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
    void anAwaitingThreadReadsTheSourceItselfAndHandlesEachEventAsTheLoopWould() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        SilentQueue queue = new SilentQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        List<Thread> handledOn = new CopyOnWriteArrayList<>();
        Registration registration = engine.registerOnLoop(queue, event -> {
            seen.add(event);
            handledOn.add(Thread.currentThread());
        });
        for (int i = 0; i < 100; i++) {
            queue.add(i);
            int expected = i + 1;
            assertTrue(registration.pollUntil(() -> seen.size() == expected), "event " + i + " read by the waiter");
        }
        awaitInOrder(seen, 100);
        assertTrue(handledOn.stream().allMatch(t -> t == Thread.currentThread()), "every event handled here");
        assertEquals(0, queue.notifications, "the loop was never told");
        assertEquals(100, registration.eventsRead());
        assertEquals(100, registration.eventsReadByWaiters());
        assertEquals(100, registration.eventsDelivered());
    }

    @Test
    void aWaiterGivesUpAfterTheBudgetAndOnlyAsksWhereItMayNotPoll() throws InterruptedException {
        // long enough that a pause of this thread (GC, a busy CPU) cannot use it up before its first poll
        engine.setBusyPoll(Duration.ofMillis(50));
        SilentQueue queue = new SilentQueue();
        Registration onLoop = engine.registerOnLoop(queue, event -> { });
        assertTrue(!onLoop.pollUntil(() -> false), "nothing came within the budget");
        assertTrue(queue.polls > 0, "polled while it waited");

        engine.setBusyPoll(Duration.ZERO);
        int polls = queue.polls;
        queue.add(1);
        assertTrue(!onLoop.pollUntil(() -> false), "a budget of 0 only asks");
        assertEquals(polls, queue.polls, "and does not poll");

        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        onLoop.close();
        assertTrue(queue.closed);
        assertTrue(!onLoop.pollUntil(() -> false), "a closed registration is not polled (SilentQueue asserts it)");
        assertEquals(0, onLoop.eventsRead());

        SilentQueue delivered = new SilentQueue(); // on the same pipe: registered once the first left
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration withDelivery = engine.register(delivered, seen::add, 16);
        delivered.add(1);
        assertTrue(withDelivery.pollUntil(() -> withDelivery.eventsReadByWaiters() == 1), "a registration with "
            + "deliveries is read by the waiter too");
        await("the event the waiter read delivered by the executor", () -> seen.size() == 1);
    }

    @Test
    void aSourceThatFailsOnAWaiterIsCountedAndTheWaiterStopsPolling() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        SilentQueue queue = new SilentQueue() {
            @Override
            public synchronized Integer poll() {
                super.poll();
                throw new IllegalStateException("ibv_poll_cq failed");
            }
        };
        Registration registration = engine.registerOnLoop(queue, event -> { });
        queue.add(1);
        long start = System.nanoTime();
        assertTrue(!registration.pollUntil(() -> false), "the waiter gave up at the failure");
        assertTrue(System.nanoTime() - start < EventEngine.MAX_BUSY_POLL.toNanos() * 10, "returned at once");
        // the loop counts its own failure as it drops the source, which may be after the waiter returned
        await("each failure counted", () -> registration.errors() == queue.polls && !registration.isActive());
        // once, once more if the loop left the arming to it (the look after arming), and once by the loop if it
        // armed the source itself and looked (then it dropped the source): not for the whole budget
        assertTrue(queue.polls >= 1 && queue.polls <= 3, queue.polls + " polls");
    }

    @Test
    void theLastWaiterLeavesTheSourceArmedSoThatTheLoopHearsTheNextEvent() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = engine.registerOnLoop(queue, seen::add);
        int next = 0;
        for (int round = 0; round < 30; round++) {
            for (int k = 0; k < 10; k++, next++) {
                queue.add(next); // armed: the loop is told, and races the waiter for it
                int expected = next + 1;
                assertTrue(registration.pollUntil(() -> seen.size() == expected), "event " + next);
            }
            // no waiter now: the loop alone must hear the next event, so the source must have been armed
            engine.setBusyPoll(Duration.ZERO);
            await("the source armed after the waiter left (round " + round + ")", queue::isArmed);
            queue.add(next++);
            int alone = next;
            await("event " + (next - 1) + " read by the loop alone", () -> seen.size() == alone);
            engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        }
        awaitInOrder(seen, next);
        assertTrue(registration.eventsReadByWaiters() > 0, "the waiters read some");
    }

    /**
     * A waiter reads an event of a queue the loop was never told about, then the bell makes the loop look at the
     * queue (dry): the loop leaves it unarmed for the waiter hold. Returns once the loop has begun to look; it may
     * still be deciding (holding the source's read lock), so what follows sees its decision only by waiting.
     */
    private Registration heldAfterAWaiterRead(SilentQueue queue, List<Integer> seen) throws InterruptedException {
        Registration registration = engine.registerOnLoop(queue, seen::add);
        queue.add(0);
        assertTrue(registration.pollUntil(() -> seen.size() == 1), "the waiter read event 0");
        assertTrue(bell.write(0, 1), "the bell pipe is full");
        await("the loop looked at the queue", () -> queue.nexts > 0);
        return registration;
    }

    @Test
    void afterAWaiterReadTheSourceTheLoopLeavesItUnarmedForTheHoldThenArmsIt() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        Duration hold = EventEngine.MAX_WAITER_HOLD;
        engine.setWaiterHold(hold);
        SilentQueue queue = new SilentQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        long start = System.nanoTime();
        Registration registration = heldAfterAWaiterRead(queue, seen);
        // a waiter that gets what it waits for leaves the arming to the loop's look at the end of the hold
        queue.add(1);
        assertTrue(registration.pollUntil(() -> seen.size() == 2), "the waiter read event 1");
        assertTrue(!queue.isArmed(), "left unarmed: a completion now raises no event and wakes no loop");
        await("armed once a hold passed without a waiter reading it", queue::isArmed);
        assertTrue(System.nanoTime() - start >= hold.toNanos(), "not armed before the hold ended");
        assertEquals(0, queue.notifications);
        // armed: the loop alone hears the next event
        queue.add(2);
        awaitInOrder(seen, 3);
        assertEquals(2, registration.eventsReadByWaiters());
    }

    @Test
    void aThreadThatFindsItsEventReadByTheLoopAlreadyStillKeepsTheSourceUnarmed() throws InterruptedException {
        engine.setBusyPoll(Duration.ofMillis(1));
        Duration hold = EventEngine.MAX_WAITER_HOLD;
        engine.setWaiterHold(hold);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = engine.registerOnLoop(queue, seen::add);
        queue.add(0); // armed at open: the loop is told and reads it
        awaitInOrder(seen, 1);
        await("armed again after the loop's busy poll", queue::isArmed);
        // this thread would have read event 0 had the loop not been first: the loop now holds the source for it
        assertTrue(registration.pollUntil(() -> seen.size() == 1), "read by the loop already");
        long awaited = System.nanoTime();
        queue.add(1);
        awaitInOrder(seen, 2);
        await("armed once a hold passed without a thread awaiting it", queue::isArmed);
        assertTrue(System.nanoTime() - awaited >= hold.toNanos(), "held after the await, not armed after the "
            + "busy poll");
        assertEquals(0, registration.eventsReadByWaiters());
    }

    @Test
    void whileWaitersKeepReadingTheSourceTheLoopPutsOffItsLookAtTheHoldsEnd() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        Duration hold = Duration.ofMillis(100);
        engine.setWaiterHold(hold);
        SilentQueue queue = new SilentQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = heldAfterAWaiterRead(queue, seen);
        // a waiter reads each event within a millisecond or so, for 20 holds; the loop reads (next()) only at a
        // hold's end, and one in which no waiter read the source takes a pause of this thread of a whole hold
        int next = 1;
        long start = System.nanoTime();
        int loopLooks = -1;
        while (System.nanoTime() - start < 22 * hold.toNanos()) {
            if (loopLooks < 0 && System.nanoTime() - start >= 2 * hold.toNanos()) {
                loopLooks = queue.nexts; // the loop has long decided on its first look, and held the source
            }
            queue.add(next);
            int expected = ++next;
            assertTrue(registration.pollUntil(() -> seen.size() == expected), "event " + (next - 1));
            Thread.sleep(1);
        }
        int looks = queue.nexts - loopLooks;
        assertTrue(looks <= 4, "the loop looked at the source at " + looks + " of 20 holds' ends while a waiter "
            + "read it in each");
        assertTrue(!queue.isArmed(), "kept unarmed for the waiters");
        long lastRead = System.nanoTime();
        await("armed once a hold passed without a waiter reading it", queue::isArmed);
        assertTrue(System.nanoTime() - lastRead >= hold.toNanos() / 2, "armed before the hold after the last read");
        queue.add(next);
        awaitInOrder(seen, next + 1); // heard by the loop alone
        assertEquals(next, registration.eventsReadByWaiters(), "every event but the last read by a waiter");
    }

    @Test
    void aThreadThatFindsItsEventDoneReadsNothingAndDoesNotPutOffTheLoopsLook() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        Duration hold = Duration.ofMillis(50);
        engine.setWaiterHold(hold);
        SilentQueue queue = new SilentQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = heldAfterAWaiterRead(queue, seen);
        queue.add(1); // the loop is never told (the queue is unarmed), and no waiter polls for it
        // awaits that find what they wait for done poll nothing: the loop's look at a hold's end reads event 1
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (seen.size() < 2 && System.nanoTime() - deadline < 0) {
            assertTrue(registration.pollUntil(() -> true));
            Thread.sleep(1);
        }
        awaitInOrder(seen, 2);
        assertEquals(1, registration.eventsReadByWaiters(), "event 1 read by the loop");
    }

    @Test
    void aWaiterThatGivesUpDuringTheHoldArmsTheSourceAtOnce() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL); // the waiter in heldAfterAWaiterRead must find its event
        Duration hold = EventEngine.MAX_WAITER_HOLD;
        engine.setWaiterHold(hold);
        SilentQueue queue = new SilentQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = heldAfterAWaiterRead(queue, seen);
        engine.setBusyPoll(Duration.ofMillis(1));
        assertTrue(!registration.pollUntil(() -> false), "nothing came within the budget");
        long gaveUp = System.nanoTime();
        // armed by the waiter as it leaves; or, when the loop had looked but not yet decided, by the loop, which
        // then sees that a waiter gave up: either way at once, not at the hold's end
        await("armed for the thread that now sleeps", queue::isArmed);
        assertTrue(System.nanoTime() - gaveUp < hold.toNanos() / 2, "armed at once, not when the hold ended");
        queue.add(1);
        awaitInOrder(seen, 2);
        assertEquals(1, queue.notifications, "the loop was told");
    }

    @Test
    void theLoopAndAWaiterReadOneSourceInItsOrderAndEachEventOnce() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = engine.registerOnLoop(queue, seen::add);
        int count = 20_000;
        Thread producer = new Thread(() -> {
            for (int i = 0; i < count; i++) {
                queue.add(i);
            }
        });
        producer.start();
        while (seen.size() < count) {
            registration.pollUntil(() -> seen.size() == count);
        }
        producer.join();
        awaitInOrder(seen, count);
        assertEquals(count, registration.eventsRead());
        assertTrue(registration.eventsReadByWaiters() <= count);
    }

    /** Two orders on one queue: even and odd events, as two queue pairs' completions on one CQ. */
    private class TwoKeyQueue extends ArmedQueue {
        @Override
        public Object orderKey(Integer event) {
            return event % 2;
        }
    }

    @Test
    void aDeliveryThreadReadsTheAnswerToItsHandlerItselfAndDeliversIt() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        List<Thread> deliveredOn = new CopyOnWriteArrayList<>();
        Registration registration = pingPong(queue, seen, 500, deliveredOn);
        awaitInOrder(seen, 500);
        // the loop read event 0 (and may race the delivery thread for a few); the delivery thread read the rest
        assertTrue(registration.eventsReadByWaiters() > 400, registration.eventsReadByWaiters() + " of 500 read by "
            + "the delivery thread");
        int sameThread = 0;
        for (int i = 1; i < 500; i++) {
            sameThread += deliveredOn.get(i) == deliveredOn.get(i - 1) ? 1 : 0;
        }
        // delivered where read: a task yields its thread after 64 events (then another may go on), not per event
        assertTrue(sameThread > 400, sameThread + " of 499 delivered on the thread of the one before");
        assertTrue(queue.notifications < 10, queue.notifications + " notifications for 500 events");
        await("the source armed once the delivery thread gave up", queue::isArmed);
        queue.add(500); // the loop alone must hear it
        awaitInOrder(seen, 501);
        assertEquals(501, registration.eventsRead());
        assertEquals(0, registration.inFlight());
    }

    @Test
    void aDeliveryThreadKeepsAStreamItReadsAndTheLoopLeavesItToIt() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        engine.setWaiterHold(EventEngine.MAX_WAITER_HOLD); // the loop looks once a second while the source is kept
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        int count = 3_001;
        // a stream: every third delivery brings three events at once, which the delivery thread's next poll reads
        Registration registration = engine.register(queue, event -> {
            seen.add(event);
            if (event % 3 == 0 && event + 3 < count) {
                queue.add(event + 1);
                queue.add(event + 2);
                queue.add(event + 3);
            }
        }, 16);
        queue.add(0);
        awaitInOrder(seen, count);
        // given back after each batch, the stream was read by the loop beside the delivery thread
        long byLoop = registration.eventsRead() - registration.eventsReadByWaiters();
        assertTrue(byLoop < 16, byLoop + " of " + count + " read by the loop");
        assertTrue(queue.notifications < 10, queue.notifications + " notifications for " + count + " events");
        await("the source armed once the delivery thread found nothing more", queue::isArmed);
        queue.add(count); // the loop alone must hear it
        awaitInOrder(seen, count + 1);
        assertEquals(0, registration.inFlight());
    }

    @Test
    void aDeliveryTaskThatYieldsItsThreadGoesOnPollingInItsNextRun() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        engine.setWaiterHold(EventEngine.MAX_WAITER_HOLD); // the loop looks once a second while the source is kept
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        int count = 2_000; // a task yields its thread every 64 deliveries: 31 times
        Registration registration = pingPong(queue, seen, count);
        awaitInOrder(seen, count);
        // had a task's next run not polled, the source would wait for the loop's look (a second) 31 times
        long byLoop = registration.eventsRead() - registration.eventsReadByWaiters();
        assertTrue(byLoop < 16, byLoop + " of " + count + " read by the loop");
    }

    /**
     * Two keys that each answer themselves, {@code count} events in all, under an in-flight bound of {@code bound},
     * every delivery thread polling: each event is delivered in its key's order, the bound holds, and nothing is
     * left in flight.
     */
    private Registration twoKeysAnsweringThemselves(TwoKeyQueue queue, int count, int bound)
        throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        List<Integer> even = new CopyOnWriteArrayList<>();
        List<Integer> odd = new CopyOnWriteArrayList<>();
        AtomicInteger maxInFlight = new AtomicInteger();
        Registration[] registration = new Registration[1];
        registration[0] = engine.register(queue, event -> {
            maxInFlight.accumulateAndGet(registration[0].inFlight(), Math::max);
            (event % 2 == 0 ? even : odd).add(event);
            if (event + 2 < count) {
                queue.add(event + 2); // each key answers itself: both keys' events interleave in the queue
            }
        }, bound);
        queue.add(0);
        queue.add(1);
        await("every event delivered", () -> even.size() + odd.size() == count);
        for (int i = 0; i < count / 2; i++) {
            assertEquals(2 * i, even.get(i), "even event " + i);
            assertEquals(2 * i + 1, odd.get(i), "odd event " + i);
        }
        assertTrue(maxInFlight.get() <= bound, maxInFlight + " in flight, over the bound of " + bound);
        assertEquals(count, registration[0].eventsRead());
        await("nothing left in flight", () -> registration[0].inFlight() == 0);
        return registration[0];
    }

    @Test
    void whatTheDeliveryThreadReadsForOtherKeysIsDeliveredInTheirOrder() throws InterruptedException {
        Registration registration = twoKeysAnsweringThemselves(new TwoKeyQueue(), 2_000, 3);
        assertTrue(registration.eventsReadByWaiters() > 0, "delivery threads read some");
    }

    @Test
    void underABoundOfOneDeliveryPollsStopEarlyAndNothingIsLostOrReordered() throws InterruptedException {
        // a bound of 1: a delivery thread that reads the other key's event is at the bound at once and stops early
        // (readUntil's -1), giving the source back to the loop
        TwoKeyQueue queue = new TwoKeyQueue();
        Registration registration = twoKeysAnsweringThemselves(queue, 400, 1);
        await("the source armed at the end", queue::isArmed);
        queue.add(400); // the loop alone must hear it
        await("the later event read and delivered", () -> registration.eventsRead() == 401
            && registration.inFlight() == 0);
    }

    @Test
    void aDeliveryLongerThanTheBudgetLeavesTheSourceToTheLoop() throws InterruptedException {
        engine.setBusyPoll(Duration.ofMillis(1));
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = engine.register(queue, event -> {
            seen.add(event);
            long until = System.nanoTime() + Duration.ofMillis(3).toNanos();
            while (System.nanoTime() < until) {
                Thread.onSpinWait(); // a slow endpoint: 3 ms per event, longer than the 1 ms budget
            }
            if (event + 1 < 20) {
                queue.add(event + 1);
            }
        }, 16);
        queue.add(0);
        awaitInOrder(seen, 20);
        assertEquals(0, registration.eventsReadByWaiters(), "no delivery thread polled after a slow delivery");

        engine.setBusyPoll(Duration.ZERO);
        ArmedQueue fast = new ArmedQueue();
        List<Integer> fastSeen = new CopyOnWriteArrayList<>();
        registration.close();
        Registration off = engine.register(fast, event -> {
            fastSeen.add(event);
            if (event + 1 < 50) {
                fast.add(event + 1);
            }
        }, 16);
        fast.add(0);
        awaitInOrder(fastSeen, 50);
        assertEquals(0, off.eventsReadByWaiters(), "a budget of 0 turns delivery polling off");
    }

    @Test
    void aDeliveryThatTurnsSlowHandsTheSourceBackAtOnceInsteadOfAfterTheHold() throws InterruptedException {
        engine.setBusyPoll(Duration.ofMillis(1));
        engine.setWaiterHold(EventEngine.MAX_WAITER_HOLD); // the loop looks once a second while the source is kept
        ArmedQueue queue = new ArmedQueue();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        long[] slowEnded = new long[1];
        List<Long> gaps = new CopyOnWriteArrayList<>();
        int count = 60;
        engine.register(queue, event -> {
            if (event % 10 == 1 && event > 1) {
                gaps.add(System.nanoTime() - slowEnded[0]); // the event after a slow one
            }
            seen.add(event);
            if (event + 1 < count) {
                queue.add(event + 1); // the next event is there before this delivery ends
            }
            if (event % 10 == 0 && event > 0) {
                long until = System.nanoTime() + Duration.ofMillis(3).toNanos();
                while (System.nanoTime() < until) {
                    Thread.onSpinWait(); // longer than the 1 ms budget: no poll follows it
                }
                slowEnded[0] = System.nanoTime();
            }
        }, 16);
        queue.add(0);
        awaitInOrder(seen, count);
        // kept for the hold, each next event would wait for the loop's look: up to a second, five times
        long longest = gaps.stream().mapToLong(Long::longValue).max().orElseThrow();
        assertEquals(5, gaps.size());
        assertTrue(longest < Duration.ofMillis(200).toNanos(), "the event after a slow delivery waited "
            + longest / 1_000_000 + " ms");
    }

    @Test
    void closingWhileADeliveryThreadPollsEndsItsPollAndNothingIsPolledAfter() throws InterruptedException {
        engine.setBusyPoll(EventEngine.MAX_BUSY_POLL);
        AtomicBoolean polledAfterClose = new AtomicBoolean();
        ArmedQueue queue = new ArmedQueue() {
            @Override
            public synchronized Integer poll() {
                if (closed) {
                    polledAfterClose.set(true);
                }
                return super.poll();
            }
        };
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Registration registration = pingPong(queue, seen, 10);
        awaitInOrder(seen, 10);
        int polls = queue.polls;
        await("the delivery thread polls for the next event", () -> queue.polls > polls);
        long start = System.nanoTime();
        registration.close();
        assertTrue(queue.closed);
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "closed without waiting out polls");
        int after = queue.polls;
        await("the delivery thread's poll ended", () -> ((ThreadPoolExecutor) pool).getActiveCount() == 0);
        assertEquals(after, queue.polls, "not polled after close");
        assertTrue(!polledAfterClose.get(), "polled after close");
        assertEquals(0, registration.errors());
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

        assertEquals(EventEngine.DEFAULT_WAITER_HOLD, engine.waiterHold());
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
            () -> engine.setWaiterHold(Duration.ofMillis(1001)));
        assertEquals("the waiter hold must be from 0 to 1000 ms, was PT1.001S", tooLong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> engine.setWaiterHold(Duration.ofNanos(-1)));
        assertThrows(IllegalArgumentException.class, () -> engine.setWaiterHold(null));
        engine.setWaiterHold(Duration.ofMillis(3));
        assertEquals(Duration.ofMillis(3), engine.waiterHold());
    }
}
