package org.rdmaconnector.verbs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;

/** The event engine on real fds (pipes, eventfds) of the host kernel: order, backpressure, errors, shutdown, leaks. */
@Timeout(30)
class EventEngineTest {
    private final List<Thread> loopThreads = new CopyOnWriteArrayList<>();
    private final ThreadFactory threads = r -> {
        Thread t = new Thread(r, "rdma-event-loop-test");
        t.setDaemon(true);
        loopThreads.add(t);
        return t;
    };
    private final List<Pipe> pipes = new ArrayList<>();
    private ExecutorService pool;
    private EventEngine engine;

    @BeforeEach
    void start() {
        pool = Executors.newFixedThreadPool(4);
        engine = new EventEngine(threads, pool);
    }

    @AfterEach
    void stop() throws InterruptedException {
        engine.close();
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(5, TimeUnit.SECONDS));
        pipes.forEach(Pipe::closeFds);
    }

    private Pipe pipe() {
        Pipe pipe = new Pipe();
        pipes.add(pipe);
        return pipe;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        TestProbes.await(what, Duration.ofSeconds(10), condition);
    }

    /** Writes records 0 .. n-1 of key 0; they must fit in the pipe. */
    private static void writeSequence(Pipe pipe, int n) {
        for (int i = 0; i < n; i++) {
            assertTrue(pipe.write(0, i), "the pipe is full at record " + i);
        }
    }

    private static void assertInOrder(List<Long> seen, int n) {
        assertEquals(n, seen.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, seen.get(i), "event " + i);
        }
    }

    @Test
    void theLoopThreadComesFromTheCallersFactoryAndEndsOnClose() {
        assertEquals(1, loopThreads.size());
        assertTrue(loopThreads.get(0).isAlive());
        engine.close();
        assertFalse(loopThreads.get(0).isAlive(), "close returns after the loop thread ended");
        engine.close();
        assertThrows(IllegalStateException.class, () -> engine.register(pipe(), e -> { }));
    }

    @Test
    void theLoopCanRunAsOneLongTaskOfAnExecutor() throws Exception {
        ExecutorService runner = Executors.newSingleThreadExecutor();
        try {
            EventEngine onExecutor = EventEngine.runningOn(runner, pool, Duration.ofSeconds(10));
            Pipe pipe = pipe();
            List<Long> seen = new CopyOnWriteArrayList<>();
            onExecutor.register(pipe, e -> seen.add(e[1]));
            assertTrue(pipe.write(0, 7));
            await("delivered", () -> seen.size() == 1);
            onExecutor.close();
            runner.shutdown();
            assertTrue(runner.awaitTermination(5, TimeUnit.SECONDS), "the loop task returns on close");
        } finally {
            runner.shutdownNow();
        }
    }

    @Test
    void anExecutorThatNeverStartsTheLoopIsAClearError() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> EventEngine.runningOn(task -> { }, pool, Duration.ofMillis(200)));
        assertEquals("the loop executor did not start the RDMA event loop within 200 ms", e.getMessage());
    }

    @Test
    void aStartTimeoutAboveADayOrBelowAMillisecondIsRefusedByName() {
        for (Duration wrong : List.of(Duration.ofDays(1).plusNanos(1), Duration.ofSeconds(Long.MAX_VALUE),
            Duration.ZERO, Duration.ofMillis(-5))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EventEngine.runningOn(task -> { }, pool, wrong));
            assertEquals("startTimeout must be from 1 ms to PT24H, was " + wrong, e.getMessage());
        }
    }

    @Test
    void eventsOfOneSourceArriveInOrderOnThePool() throws Exception {
        Pipe pipe = pipe();
        List<Long> seen = new CopyOnWriteArrayList<>();
        Registration reg = engine.register(pipe, e -> seen.add(e[1]));
        assertEquals(1, pipe.opened.get());
        int n = 5000;
        Thread writer = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                while (!pipe.write(0, i)) {
                    Thread.onSpinWait();
                }
            }
        });
        writer.start();
        await("all delivered", () -> seen.size() == n);
        writer.join();
        assertInOrder(seen, n);
        assertEquals(n, reg.eventsRead());
        assertEquals(n, reg.eventsAcked(), "a source without its own count acknowledges each event it reads");
        assertEquals(n, reg.eventsDelivered());
        assertEquals(0, reg.inFlight());
        assertEquals(0, reg.errors());
    }

    @Test
    void eventsWithTheSameKeyKeepTheirOrderWhileKeysRunConcurrently() throws Exception {
        Pipe pipe = pipe();
        pipe.keyed = true;
        assertKeyedOrder(pipe);
    }

    @Test
    void keysThatHoldTheirQueueKeepTheOrderAndMakeItOnce() throws Exception {
        Pipe pipe = pipe();
        pipe.keyed = true;
        OrderKey[] keys = {new OrderKey(), new OrderKey(), new OrderKey(), new OrderKey()};
        pipe.heldKeys = keys;
        assertKeyedOrder(pipe);
        Object[] queues = new Object[keys.length];
        for (int k = 0; k < keys.length; k++) {
            assertNotNull(keys[k].queue, "key " + k + " holds its queue");
            queues[k] = keys[k].queue;
        }
        assertTrue(pipe.write(2, 500));
        await("one more event of key 2", () -> keys[2].queue == queues[2] && eventsOf(pipe, 2) == 501);
        for (int k = 0; k < keys.length; k++) {
            assertSame(queues[k], keys[k].queue, "key " + k + ": the same queue, not one per event");
        }
    }

    private final Map<Pipe, Map<Long, List<Long>>> delivered = new ConcurrentHashMap<>();

    private int eventsOf(Pipe pipe, long key) {
        return delivered.get(pipe).get(key).size();
    }

    /** 4 keys x 500 events through {@code pipe}: in order per key, never two of a key at once, keys concurrently. */
    private void assertKeyedOrder(Pipe pipe) throws Exception {
        Map<Long, List<Long>> byKey = new ConcurrentHashMap<>();
        delivered.put(pipe, byKey);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        Map<Long, AtomicInteger> runningPerKey = new ConcurrentHashMap<>();
        AtomicInteger overlapsWithinKey = new AtomicInteger();
        engine.register(pipe, e -> {
            AtomicInteger perKey = runningPerKey.computeIfAbsent(e[0], k -> new AtomicInteger());
            if (perKey.incrementAndGet() > 1) {
                overlapsWithinKey.incrementAndGet();
            }
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(0, 200_000);
            byKey.computeIfAbsent(e[0], k -> new CopyOnWriteArrayList<>()).add(e[1]);
            running.decrementAndGet();
            perKey.decrementAndGet();
        });
        int keys = 4;
        int perKeyCount = 500;
        for (int i = 0; i < perKeyCount; i++) {
            for (int k = 0; k < keys; k++) {
                while (!pipe.write(k, i)) {
                    Thread.sleep(1);
                }
            }
        }
        await("all delivered", () -> byKey.values().stream().mapToInt(List::size).sum() == keys * perKeyCount);
        for (long k = 0; k < keys; k++) {
            List<Long> seq = byKey.get(k);
            for (int i = 0; i < perKeyCount; i++) {
                assertEquals(i, seq.get(i), "key " + k + " event " + i);
            }
        }
        assertEquals(0, overlapsWithinKey.get(), "two deliveries of one key ran at the same time");
        assertTrue(maxRunning.get() > 1, "different keys should be delivered concurrently on a 4-thread pool");
    }

    @Test
    void aSlowConsumerStopsTheReadingAtTheBoundAndNothingIsLost() throws Exception {
        Pipe pipe = pipe();
        CountDownLatch release = new CountDownLatch(1);
        List<Long> seen = new CopyOnWriteArrayList<>();
        AtomicInteger maxInFlight = new AtomicInteger();
        Registration[] holder = new Registration[1];
        int bound = 8;
        holder[0] = engine.register(pipe, e -> {
            release.await();
            maxInFlight.accumulateAndGet(holder[0].inFlight(), Math::max);
            seen.add(e[1]);
        }, bound);
        int n = 200;
        writeSequence(pipe, n);
        await("the bound is reached", () -> holder[0].isPaused());
        Thread.sleep(100); // the loop has had time to read more, if it wrongly would
        assertEquals(bound, holder[0].eventsRead(), "the engine stops reading at the bound");
        assertEquals(bound, holder[0].inFlight());
        release.countDown();
        await("all delivered", () -> seen.size() == n);
        assertTrue(maxInFlight.get() <= bound, "in flight exceeded the bound: " + maxInFlight.get());
        assertInOrder(seen, n);
        assertFalse(holder[0].isPaused());
    }

    @Test
    void aThrowingHandlerLosesAndRepeatsNothing() throws Exception {
        Pipe pipe = pipe();
        List<Long> seen = new CopyOnWriteArrayList<>();
        Registration reg = engine.register(pipe, e -> {
            seen.add(e[1]);
            if (e[1] % 3 == 0) {
                throw new IllegalStateException("endpoint failed on " + e[1]);
            }
        });
        int n = 300;
        writeSequence(pipe, n);
        await("all delivered", () -> reg.eventsDelivered() == n);
        assertEquals(n, seen.size());
        assertInOrder(seen, n);
        assertEquals(n / 3, reg.errors());
    }

    @Test
    void closingARegistrationDeliversWhatWasReadAndNeverTouchesTheSourceAgain() throws Exception {
        Pipe pipe = pipe();
        AtomicInteger delivered = new AtomicInteger();
        CountDownLatch inFlightSeen = new CountDownLatch(1);
        Registration reg = engine.register(pipe, e -> {
            inFlightSeen.await(10, TimeUnit.SECONDS); // deliveries wait until the test has seen some in flight
            Thread.sleep(2);
            delivered.incrementAndGet();
        }, 16);
        writeSequence(pipe, 100);
        await("some in flight", () -> reg.inFlight() > 0);
        inFlightSeen.countDown();
        reg.close();
        assertEquals(0, reg.inFlight(), "close waits for the events already read");
        assertEquals(reg.eventsRead(), delivered.get());
        assertEquals(1, pipe.closed.get(), "the source is closed once (its acks done)");
        long read = reg.eventsRead();
        assertTrue(pipe.write(0, 1000));
        Thread.sleep(100);
        assertEquals(read, reg.eventsRead(), "nothing is read after close");
        assertTrue(engine.registrations().isEmpty());
        reg.close();
        assertEquals(1, pipe.closed.get());
    }

    @Test
    void closingTheEngineWithEventsInFlightDeliversThemAndClosesEverySource() throws Exception {
        Pipe a = pipe();
        Pipe b = pipe();
        AtomicInteger delivered = new AtomicInteger();
        CountDownLatch inFlightSeen = new CountDownLatch(1);
        Registration ra = engine.register(a, e -> {
            inFlightSeen.await(10, TimeUnit.SECONDS); // deliveries wait until the test has seen some in flight
            Thread.sleep(1);
            delivered.incrementAndGet();
        }, 32);
        Registration rb = engine.register(b, e -> delivered.incrementAndGet(), 32);
        writeSequence(a, 64);
        writeSequence(b, 64);
        await("events in flight", () -> ra.inFlight() > 0);
        inFlightSeen.countDown();
        engine.close();
        assertEquals(0, ra.inFlight());
        assertEquals(0, rb.inFlight());
        assertEquals(ra.eventsRead() + rb.eventsRead(), delivered.get());
        assertEquals(1, a.closed.get());
        assertEquals(1, b.closed.get());
        assertFalse(loopThreads.get(0).isAlive());
    }

    @Test
    void aFailingSourceIsRemovedWithItsCauseAndTheOthersGoOn() throws Exception {
        Pipe bad = pipe();
        Pipe good = pipe();
        Registration badReg = engine.register(bad, e -> { });
        AtomicInteger goodSeen = new AtomicInteger();
        engine.register(good, e -> goodSeen.incrementAndGet());
        bad.failNext = new IllegalStateException("channel broken");
        assertTrue(bad.write(0, 0));
        await("the bad source is dropped", () -> badReg.failure() != null);
        assertEquals("channel broken", badReg.failure().getMessage());
        assertEquals(1, bad.closed.get());
        assertTrue(good.write(0, 1));
        await("the good source still delivers", () -> goodSeen.get() == 1);
        assertEquals(1, engine.registrations().size());
    }

    @Test
    void aLoopThatFailsClosesTheEngineAndItsFds() throws Exception {
        Pipe pipe = pipe();
        engine.close();
        long fdsBefore = TestProbes.openEngineFds();
        engine = new EventEngine(threads, pool);
        engine.register(pipe, e -> { });
        pipe.crashNext = new AssertionError("a bug in a source");
        assertTrue(pipe.write(0, 0));
        Thread loop = loopThreads.get(1);
        await("the loop ended", () -> !loop.isAlive());
        assertEquals(1, pipe.closed.get(), "the failed loop removed its sources");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> engine.register(pipe, x -> { }));
        assertTrue(e.getMessage().contains("its loop failed (java.lang.AssertionError: a bug in a source)"),
            e.getMessage());
        engine.close();
        assertEquals(fdsBefore, TestProbes.openEngineFds(), "the epoll fd and the eventfd are closed");
    }

    @Test
    void noWakeUpIsLostWhenManyThreadsWakeTheLoopAtOnce() throws Exception {
        // every close() is a command the loop runs after a wake-up; a wake-up lost between the loop's reading of the
        // eventfd and its allowing the next one would leave a close() (and the engine's) waiting for good
        int callers = 4;
        int rounds = 3000;
        List<Pipe> own = new ArrayList<>();
        for (int t = 0; t < callers; t++) {
            own.add(pipe());
        }
        ExecutorService callerThreads = Executors.newFixedThreadPool(callers, r -> {
            Thread t = new Thread(r, "caller");
            t.setDaemon(true);
            return t;
        });
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (Pipe pipe : own) {
                done.add(callerThreads.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        engine.register(pipe, e -> { }).close();
                    }
                }));
            }
            for (java.util.concurrent.Future<?> f : done) {
                try {
                    f.get(20, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException lost) {
                    engine = new EventEngine(threads, pool); // the stuck one cannot close: leave it, fail clearly
                    throw new AssertionError("a close() waited 20 s for the loop: a wake-up was lost");
                }
            }
        } finally {
            callerThreads.shutdownNow();
        }
        assertEquals(0, engine.registrations().size());
    }

    @Test
    void aSourceThatNeverRunsDryDoesNotStarveTheOthers() throws Exception {
        int eventFd = LibC.eventfd(1, Layout.EFD_NONBLOCK | Layout.EFD_CLOEXEC); // always readable
        try {
            EventSource<Object> endless = new EventSource<>() {
                @Override
                public int fd() {
                    return eventFd;
                }

                @Override
                public Object next() {
                    return Boolean.TRUE;
                }
            };
            Registration busy = engine.register(endless, e -> { }, 64);
            Pipe quiet = pipe();
            CountDownLatch got = new CountDownLatch(1);
            engine.register(quiet, e -> got.countDown());
            assertTrue(quiet.write(0, 0));
            assertTrue(got.await(5, TimeUnit.SECONDS), "the quiet source's event was not delivered");
            busy.close();
            assertTrue(busy.eventsRead() > 0);
        } finally {
            LibC.close(eventFd);
        }
    }

    @Test
    void noFileDescriptorIsLeft() throws Exception {
        engine.close();
        long before = TestProbes.openEngineFds();
        for (int round = 0; round < 5; round++) {
            try (EventEngine e = new EventEngine(threads, pool)) {
                Pipe pipe = new Pipe();
                AtomicInteger seen = new AtomicInteger();
                Registration reg = e.register(pipe, ev -> seen.incrementAndGet());
                assertTrue(pipe.write(0, 1));
                await("delivered", () -> seen.get() == 1);
                reg.close();
                pipe.closeFds();
            }
        }
        assertEquals(before, TestProbes.openEngineFds(), "open epoll fds, eventfds and pipes before and after");
    }

    /** Passes tasks to the pool while it has accepts left and refuses the others, as a saturated WorkManager does. */
    private static final class Gate implements java.util.concurrent.Executor {
        final java.util.concurrent.Executor pool;
        final AtomicInteger acceptsLeft;
        final AtomicInteger refused = new AtomicInteger();

        Gate(java.util.concurrent.Executor pool, int accepts) {
            this.pool = pool;
            this.acceptsLeft = new AtomicInteger(accepts);
        }

        @Override
        public void execute(Runnable task) {
            if (acceptsLeft.getAndUpdate(n -> n > 0 ? n - 1 : n) > 0) {
                pool.execute(task);
                return;
            }
            refused.incrementAndGet();
            throw new java.util.concurrent.RejectedExecutionException("the test executor is saturated");
        }

        void open() {
            acceptsLeft.set(Integer.MAX_VALUE);
        }
    }

    /** A new engine on {@code delivery}; returns its loop thread. */
    private Thread restartOn(java.util.concurrent.Executor delivery) {
        engine.close();
        int before = loopThreads.size();
        engine = new EventEngine(threads, delivery);
        return loopThreads.get(before);
    }

    @Test
    void aTaskTheExecutorRefusesIsDeliveredLaterOnTheExecutorNeverOnTheLoopThread() throws Exception {
        Gate gate = new Gate(pool, 0);
        Thread loop = restartOn(gate);
        Pipe pipe = pipe();
        List<Long> seen = new CopyOnWriteArrayList<>();
        List<Thread> handlerThreads = new CopyOnWriteArrayList<>();
        engine.register(pipe, e -> {
            handlerThreads.add(Thread.currentThread());
            seen.add(e[1]);
        });
        writeSequence(pipe, 5);
        await("the executor refused a task", () -> gate.refused.get() > 0);
        gate.open();
        await("all delivered", () -> seen.size() == 5);
        assertFalse(handlerThreads.contains(loop), "a refused task ran its handler on the loop thread");
        assertInOrder(seen, 5);
    }

    @Test
    void whileTheExecutorRefusesTheLoopRunsNoHandlerAndAfterwardsEveryEventArrivesOnceInOrder() throws Exception {
        Gate gate = new Gate(pool, 1);
        Thread loop = restartOn(gate);
        List<Thread> handlerThreads = new CopyOnWriteArrayList<>();
        Pipe fast = pipe();
        AtomicInteger fastSeen = new AtomicInteger();
        Registration fastReg = engine.register(fast, e -> {
            handlerThreads.add(Thread.currentThread());
            fastSeen.incrementAndGet();
        });
        assertTrue(fast.write(0, 0));
        await("the one accepted task delivered", () -> fastSeen.get() == 1);

        // the blocking endpoint: its first event holds an executor thread until released
        Pipe slow = pipe();
        CountDownLatch slowBlocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Long> slowSeen = new CopyOnWriteArrayList<>();
        Registration slowReg = engine.register(slow, e -> {
            handlerThreads.add(Thread.currentThread());
            if (e[1] == 0) {
                slowBlocked.countDown();
                release.await();
            }
            slowSeen.add(e[1]);
        });
        int n = 300;
        writeSequence(slow, n);
        await("the slow registration's task is refused and its reading paused",
            () -> slowReg.refusals() > 0 && slowReg.isPaused());
        assertEquals(1, slowReg.eventsRead(), "reading stops at the refusal (backpressure)");
        assertEquals(1, slowReg.inFlight());
        for (int i = 1; i <= 50; i++) {
            assertTrue(fast.write(0, i));
        }
        await("the fast registration's task is refused too", () -> fastReg.refusals() > 0);
        assertEquals(1, slowBlocked.getCount(), "no handler ran while the executor refused");

        gate.open();
        assertTrue(slowBlocked.await(10, TimeUnit.SECONDS), "the refused task was submitted again");
        await("the other registration is delivered while the slow endpoint blocks", () -> fastSeen.get() == 51);
        for (int i = 51; i <= 100; i++) {
            assertTrue(fast.write(0, i));
        }
        await("and keeps being delivered", () -> fastSeen.get() == 101);
        assertTrue(slowSeen.isEmpty(), "the slow endpoint still blocks");

        release.countDown();
        await("every event of the refused registration delivered", () -> slowReg.eventsDelivered() == n);
        assertInOrder(slowSeen, n);
        assertEquals(n, slowReg.eventsRead());
        assertEquals(101, fastReg.eventsDelivered());
        assertFalse(handlerThreads.contains(loop), "a handler ran on the loop thread");
        await("reading resumed", () -> !slowReg.isPaused());
        assertEquals(0, slowReg.errors());
    }

    @Test
    void aLoopStuckInASourceMakesWaitsOnItEndAtTheirBoundAndCountsThem() throws Exception {
        engine.loopWaitBound = Duration.ofMillis(200);
        Pipe stuck = pipe();
        Pipe other = pipe();
        Registration otherReg = engine.register(other, e -> { });
        engine.register(stuck, e -> { });
        CountDownLatch unblock = new CountDownLatch(1);
        stuck.holdNext = unblock;
        assertTrue(stuck.write(0, 0));
        assertTrue(stuck.inNext.await(10, TimeUnit.SECONDS));

        IllegalStateException e = assertThrows(IllegalStateException.class, otherReg::close);
        assertEquals("the RDMA event loop did not take the removal of the registration " + other.name()
            + " within 200 ms (busy or stuck); it was not done", e.getMessage());
        assertEquals(1, engine.loopWaitTimeouts());
        assertEquals(0, other.closed.get(), "the source stays registered: its channel must not be closed yet");

        engine.close();
        assertEquals(2, engine.loopWaitTimeouts(), "close() returns at the bound on a stuck loop, and counts it");

        stuck.holdNext = null;
        unblock.countDown();
        Thread loop = loopThreads.get(0);
        await("the loop ends once its source returns", () -> !loop.isAlive());
        assertEquals(1, other.closed.get(), "the ending loop closed the source it still had");
        assertEquals(1, stuck.closed.get());
        otherReg.close();
        assertEquals(1, other.closed.get());
    }

    @Test
    void aRegistrationIsActiveUntilItIsClosedItsSourceFailsOrTheLoopEnds() throws Exception {
        Registration closedByOwner = engine.register(pipe(), e -> { });
        Pipe failing = pipe();
        Registration failed = engine.register(failing, e -> { });
        Registration endedWithTheLoop = engine.register(pipe(), e -> { });
        assertTrue(closedByOwner.isActive() && failed.isActive() && endedWithTheLoop.isActive());

        closedByOwner.close();
        assertFalse(closedByOwner.isActive(), "closed by its owner");

        failing.failNext = new IllegalStateException("channel broken");
        assertTrue(failing.write(0, 0));
        await("the failed source is dropped", () -> failed.failure() != null);
        assertFalse(failed.isActive(), "dropped after its source failed");
        assertTrue(endedWithTheLoop.isActive(), "the others are still read");

        engine.close();
        assertFalse(endedWithTheLoop.isActive(), "the engine's loop ended");
    }

    @Test
    void anEngineWhoseLoopNeverStartedClosesItsFdsAndALateStartTouchesNone() throws Exception {
        engine.close();
        long before = TestProbes.openEngineFds();
        List<Runnable> neverRun = new ArrayList<>();
        assertThrows(IllegalStateException.class,
            () -> EventEngine.runningOn(neverRun::add, pool, Duration.ofMillis(100)));
        assertEquals(1, neverRun.size());
        assertEquals(before, TestProbes.openEngineFds(), "the epoll fd and the eventfd of the engine are closed");

        // the numbers of the closed fds go to the next fds opened: a loop that starts late must not close them
        Pipe reused = pipe();
        Thread late = new Thread(neverRun.get(0), "late-loop");
        late.start();
        late.join(5000);
        assertFalse(late.isAlive(), "the late loop returns at once");
        assertTrue(reused.write(0, 1), "the fd that reused an engine fd's number is still open");
        assertEquals(before + 2, TestProbes.openEngineFds(), "only the pipe's two fds are open");
        engine = new EventEngine(threads, pool); // for stop()
    }

    @Test
    void anArchitectureWithoutAnEpollEventLayoutIsRefusedWithAClearError() {
        assertEquals(Layout.EpollEvent.PACKED, EventEngine.epollLayoutOf("amd64"));
        assertEquals(Layout.EpollEvent.NATURAL, EventEngine.epollLayoutOf("aarch64"));
        org.rdmaconnector.connector.RdmaException e = assertThrows(org.rdmaconnector.connector.RdmaException.class,
            () -> EventEngine.epollLayoutOf("mips"));
        assertEquals("epoll_wait", e.function());
        assertEquals("EOPNOTSUPP", e.errnoName());
        assertTrue(e.getMessage().contains("struct epoll_event is not laid out for architecture 'mips'")
            && e.getMessage().contains("aarch64, amd64"), e.getMessage());
    }

    @Test
    void badArguments() {
        Pipe pipe = pipe();
        assertThrows(IllegalArgumentException.class, () -> new EventEngine(null, pool));
        assertThrows(IllegalArgumentException.class, () -> new EventEngine(threads, null));
        assertThrows(IllegalArgumentException.class, () -> engine.register(null, e -> { }));
        assertThrows(IllegalArgumentException.class, () -> engine.register(pipe, null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> engine.register(pipe, ev -> { }, 0));
        assertTrue(e.getMessage().contains("maxInFlight must be from 1"), e.getMessage());
        assertNotNull(engine.register(pipe, ev -> { }, 1));
    }
}
