package org.rdmaconnector.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class CompletionTest {
    private static final long JOIN_MILLIS = 5_000;

    private final List<Thread> started = new ArrayList<>();

    @AfterEach
    void stopStragglers() throws InterruptedException {
        Thread.interrupted();
        for (Thread t : started) {
            t.interrupt();
            t.join(JOIN_MILLIS);
        }
    }

    @Test
    @Timeout(10)
    void countsCompletesAndTryWaitConsumesExactlyThatMany() {
        Completion c = new Completion();
        assertFalse(c.tryWaitForCompletion());
        for (int i = 0; i < 7; i++) {
            c.complete();
        }
        for (int i = 0; i < 7; i++) {
            assertTrue(c.tryWaitForCompletion(), "tryWait #" + i);
        }
        assertFalse(c.tryWaitForCompletion());
        assertFalse(c.tryWaitForCompletion());
    }

    @Test
    @Timeout(10)
    void completionDoneReportsWhetherAWaitWouldNotBlockAndConsumesNothing() {
        Completion c = new Completion();
        assertFalse(c.completionDone());
        c.complete();
        assertTrue(c.completionDone());
        assertTrue(c.completionDone());
        assertTrue(c.tryWaitForCompletion());
        assertFalse(c.completionDone());
        c.completeAll();
        assertTrue(c.completionDone());
    }

    @Test
    @Timeout(10)
    void waitForCompletionConsumesOneAvailableEventWithoutBlocking() throws InterruptedException {
        Completion c = new Completion();
        c.complete();
        c.complete();
        c.waitForCompletion();
        assertEquals("Completion[done=1]", c.toString());
        c.waitForCompletionUninterruptibly();
        assertEquals("Completion[done=0]", c.toString());
        assertFalse(c.completionDone());
    }

    @Test
    @Timeout(10)
    void completeAllWakesEveryBlockedWaiterAndEveryLaterWaitSucceedsUntilReinit() throws Exception {
        Completion c = new Completion();
        List<Waiter> waiters = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            switch (i % 3) {
                case 0 -> waiters.add(start(() -> {
                    c.waitForCompletion();
                    return true;
                }));
                case 1 -> waiters.add(start(() -> c.waitForCompletion(Duration.ofSeconds(60))));
                default -> waiters.add(start(() -> {
                    c.waitForCompletionUninterruptibly();
                    return true;
                }));
            }
        }
        awaitWaiters(c, 12);
        c.completeAll();
        for (Waiter w : waiters) {
            assertEquals(true, w.result());
        }
        for (int i = 0; i < 1_000; i++) {
            assertTrue(c.tryWaitForCompletion());
        }
        c.waitForCompletion();
        c.waitForCompletionUninterruptibly();
        assertTrue(c.waitForCompletion(Duration.ZERO));
        assertTrue(c.waitForCompletion(Duration.ofMillis(1)));
        c.complete();
        assertEquals("Completion[done=all]", c.toString());
        assertTrue(c.completionDone());

        c.reinit();
        assertFalse(c.completionDone());
        assertFalse(c.tryWaitForCompletion());
        c.complete();
        assertTrue(c.tryWaitForCompletion());
        assertFalse(c.tryWaitForCompletion());
    }

    @Test
    @Timeout(10)
    void reinitDropsPendingEvents() {
        Completion c = new Completion();
        c.complete();
        c.complete();
        c.complete();
        c.reinit();
        assertFalse(c.completionDone());
        assertFalse(c.tryWaitForCompletion());
        assertEquals("Completion[done=0]", c.toString());
        c.complete();
        assertTrue(c.tryWaitForCompletion());
        assertFalse(c.tryWaitForCompletion());
    }

    @Test
    @Timeout(10)
    void timedWaitReturnsFalseAfterTheTimeout() throws InterruptedException {
        Completion c = new Completion();
        Duration timeout = Duration.ofMillis(200);
        long t0 = System.nanoTime();
        boolean consumed = c.waitForCompletion(timeout);
        long elapsed = System.nanoTime() - t0;
        assertFalse(consumed);
        assertTrue(elapsed >= timeout.toNanos(), "returned after " + elapsed + " ns");
        assertTrue(elapsed < TimeUnit.SECONDS.toNanos(5), "returned after " + elapsed + " ns");
        c.complete();
        assertTrue(c.tryWaitForCompletion(), "a timed-out wait must not have consumed anything");
    }

    @Test
    @Timeout(10)
    void timedWaitReturnsTrueWhenCompletedByAnotherThread() throws Exception {
        Completion c = new Completion();
        Waiter w = start(() -> c.waitForCompletion(Duration.ofSeconds(60)));
        awaitWaiters(c, 1);
        c.complete();
        assertEquals(true, w.result());
        assertFalse(c.completionDone());
    }

    @Test
    @Timeout(10)
    void zeroTimeoutBehavesLikeTryWait() throws InterruptedException {
        Completion c = new Completion();
        assertFalse(c.waitForCompletion(Duration.ZERO));
        Thread.currentThread().interrupt();
        try {
            assertFalse(c.waitForCompletion(Duration.ZERO), "a zero timeout never blocks, so never throws");
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
        c.complete();
        c.complete();
        assertTrue(c.waitForCompletion(Duration.ZERO));
        assertTrue(c.waitForCompletion(Duration.ZERO));
        assertFalse(c.waitForCompletion(Duration.ZERO));
    }

    @Test
    @Timeout(10)
    void rejectsNullAndNegativeTimeouts() {
        Completion c = new Completion();
        c.complete();
        IllegalArgumentException nul = assertThrows(IllegalArgumentException.class, () -> c.waitForCompletion(null));
        assertTrue(nul.getMessage().contains("timeout"), nul.getMessage());
        IllegalArgumentException neg =
                assertThrows(IllegalArgumentException.class, () -> c.waitForCompletion(Duration.ofNanos(-1)));
        assertTrue(neg.getMessage().contains("timeout"), neg.getMessage());
        assertTrue(c.tryWaitForCompletion(), "a rejected call must not consume");
    }

    @Test
    @Timeout(10)
    void hugeTimeoutDoesNotOverflow() throws Exception {
        Completion c = new Completion();
        Waiter w = start(() -> c.waitForCompletion(Duration.ofSeconds(Long.MAX_VALUE)));
        awaitWaiters(c, 1);
        assertTrue(w.thread.isAlive());
        c.complete();
        assertEquals(true, w.result());
    }

    @Test
    @Timeout(10)
    void interruptingABlockedWaiterThrowsAndConsumesNothing() throws Exception {
        Completion c = new Completion();
        Waiter untimed = start(() -> {
            c.waitForCompletion();
            return true;
        });
        awaitWaiters(c, 1);
        untimed.thread.interrupt();
        assertInstanceOf(InterruptedException.class, untimed.result());

        Waiter timed = start(() -> c.waitForCompletion(Duration.ofSeconds(60)));
        awaitWaiters(c, 1);
        timed.thread.interrupt();
        assertInstanceOf(InterruptedException.class, timed.result());

        assertEquals(0, c.waiterCount());
        c.complete();
        assertTrue(c.completionDone());
        assertTrue(c.tryWaitForCompletion(), "the interrupted waiters must not have consumed the event");
        assertFalse(c.tryWaitForCompletion());
    }

    @Test
    @Timeout(10)
    void interruptStatusOnlyMattersWhenTheWaitWouldBlock() {
        Completion c = new Completion();
        c.complete();
        c.complete();
        Thread.currentThread().interrupt();
        try {
            // As the kernel: an available event is consumed even with a pending signal; the status is kept.
            assertDoesNotThrowInterrupted(c::waitForCompletion);
            assertTrue(Thread.currentThread().isInterrupted());
            assertDoesNotThrowInterrupted(() -> assertTrue(c.waitForCompletion(Duration.ofSeconds(1))));
            assertTrue(Thread.currentThread().isInterrupted());
            assertThrows(InterruptedException.class, c::waitForCompletion);
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> c.waitForCompletion(Duration.ofSeconds(1)));
        } finally {
            Thread.interrupted();
        }
        c.complete();
        assertTrue(c.tryWaitForCompletion());
        assertFalse(c.tryWaitForCompletion());
    }

    @Test
    @Timeout(10)
    void uninterruptibleWaitKeepsWaitingWhenInterruptedAndRestoresTheStatus() throws Exception {
        Completion c = new Completion();
        AtomicReference<Boolean> interruptedOnReturn = new AtomicReference<>();
        Waiter w = start(() -> {
            c.waitForCompletionUninterruptibly();
            interruptedOnReturn.set(Thread.currentThread().isInterrupted());
            return true;
        });
        awaitWaiters(c, 1);
        w.thread.interrupt();
        Thread.sleep(100);
        assertTrue(w.thread.isAlive(), "an interrupt must not end an uninterruptible wait");
        c.complete();
        assertEquals(true, w.result());
        assertEquals(true, interruptedOnReturn.get());
        assertFalse(c.completionDone());
    }

    @Test
    @Timeout(10)
    void completeWakesExactlyOneOfTwoWaiters() throws Exception {
        Completion c = new Completion();
        AtomicInteger returned = new AtomicInteger();
        Waiter a = start(() -> {
            c.waitForCompletion();
            return returned.incrementAndGet();
        });
        Waiter b = start(() -> {
            c.waitForCompletion();
            return returned.incrementAndGet();
        });
        awaitWaiters(c, 2);
        c.complete();
        awaitTrue(() -> returned.get() == 1, "one waiter to return");
        Thread.sleep(100);
        assertEquals(1, returned.get(), "a single complete() released more than one waiter");
        assertEquals(1, c.waiterCount());
        assertFalse(c.completionDone());
        c.complete();
        a.result();
        b.result();
        assertEquals(2, returned.get());
        assertFalse(c.completionDone());
    }

    @Test
    @Timeout(10)
    void interruptRacingWithCompleteLosesNoWakeUp() throws Exception {
        for (int round = 0; round < 200; round++) {
            Completion c = new Completion();
            Waiter first = start(() -> {
                c.waitForCompletion();
                return true;
            });
            awaitWaiters(c, 1);
            Waiter second = start(() -> {
                c.waitForCompletion();
                return true;
            });
            awaitWaiters(c, 2);
            if (round % 2 == 0) {
                first.thread.interrupt();
                c.complete();
            } else {
                c.complete();
                first.thread.interrupt();
            }
            Object firstResult = first.result();
            if (firstResult instanceof InterruptedException) {
                // The event is still there, so the other waiter must get it.
                assertEquals(true, second.result(), "round " + round + ": lost wake-up");
            } else {
                assertEquals(true, firstResult, "round " + round);
                assertFalse(c.completionDone(), "round " + round);
                c.complete();
                assertEquals(true, second.result(), "round " + round);
            }
            assertFalse(c.completionDone(), "round " + round);
            started.clear();
        }
    }

    @Test
    @Timeout(20)
    void manyProducersAndConsumersConsumeExactlyWhatWasCompleted() throws Exception {
        int threads = 8;
        int perThread = 10_000;
        Completion c = new Completion();
        CountDownLatch go = new CountDownLatch(1);
        AtomicLong consumed = new AtomicLong();
        List<Waiter> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            boolean timed = i % 2 == 1;
            all.add(start(() -> {
                go.await();
                for (int n = 0; n < perThread; n++) {
                    if (timed) {
                        if (!c.waitForCompletion(Duration.ofSeconds(30))) {
                            return "timed out after " + n;
                        }
                    } else {
                        c.waitForCompletion();
                    }
                    consumed.incrementAndGet();
                }
                return true;
            }));
            all.add(start(() -> {
                go.await();
                for (int n = 0; n < perThread; n++) {
                    c.complete();
                }
                return true;
            }));
        }
        go.countDown();
        for (Waiter w : all) {
            assertEquals(true, w.result(15_000));
        }
        assertEquals((long) threads * perThread, consumed.get());
        assertFalse(c.tryWaitForCompletion(), "events left over");
        assertEquals("Completion[done=0]", c.toString());
    }

    @Test
    @Timeout(20)
    void pingPongLosesNoWakeUps() throws Exception {
        int rounds = 100_000;
        Completion ping = new Completion();
        Completion pong = new Completion();
        Waiter other = start(() -> {
            for (int i = 0; i < rounds; i++) {
                ping.waitForCompletion();
                pong.complete();
            }
            return true;
        });
        for (int i = 0; i < rounds; i++) {
            ping.complete();
            if (!pong.waitForCompletion(Duration.ofSeconds(10))) {
                fail("lost wake-up in round " + i);
            }
        }
        assertEquals(true, other.result());
        assertFalse(ping.completionDone());
        assertFalse(pong.completionDone());
    }

    @Test
    @Timeout(10)
    void toStringShowsCountOrAll() {
        Completion c = new Completion();
        assertEquals("Completion[done=0]", c.toString());
        c.complete();
        c.complete();
        assertEquals("Completion[done=2]", c.toString());
        c.completeAll();
        assertEquals("Completion[done=all]", c.toString());
        c.reinit();
        assertEquals("Completion[done=0]", c.toString());
    }

    // --- helpers ---

    @FunctionalInterface
    private interface Action {
        Object run() throws Exception;
    }

    @FunctionalInterface
    private interface InterruptibleRunnable {
        void run() throws InterruptedException;
    }

    private static void assertDoesNotThrowInterrupted(InterruptibleRunnable r) {
        try {
            r.run();
        } catch (InterruptedException e) {
            fail("threw InterruptedException although an event was available", e);
        }
    }

    /** A started thread and what its action returned or threw. */
    private static final class Waiter {
        final Thread thread;
        final AtomicReference<Object> outcome = new AtomicReference<>();

        Waiter(Action action) {
            thread = new Thread(() -> {
                try {
                    outcome.set(action.run());
                } catch (Throwable t) {
                    outcome.set(t);
                }
            }, "completion-test");
            thread.setDaemon(true);
        }

        Object result() throws InterruptedException {
            return result(JOIN_MILLIS);
        }

        Object result(long millis) throws InterruptedException {
            thread.join(millis);
            assertFalse(thread.isAlive(), "thread still blocked after " + millis + " ms");
            return outcome.get();
        }
    }

    private Waiter start(Action action) {
        Waiter w = new Waiter(action);
        started.add(w.thread);
        w.thread.start();
        return w;
    }

    private static void awaitWaiters(Completion c, int n) throws InterruptedException {
        awaitTrue(() -> c.waiterCount() == n, n + " blocked waiters");
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_MILLIS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what);
            }
            Thread.sleep(1);
        }
    }
}
