package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.spi.DeliveryThreads;
import org.rdmaconnector.connector.spi.Pool;

/** The thread watch on the host: what it takes for stuck (the connector's waits, any BLOCKED thread) and what not. */
@Timeout(60)
class ThreadWatchTest {
    private static final Duration LIMIT = Duration.ofMillis(200);
    private static final Duration WITHIN = Duration.ofSeconds(20);

    @Test
    void aThreadWaitingInTheConnectorsCodeLongerThanTheLimitIsReported() throws Exception {
        Pool<Object> pool = new Pool<>(new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ofSeconds(30)),
            Object::new, r -> true, r -> { }, r -> { });
        pool.borrow();
        Thread waiter = new Thread(pool::borrow, "watched-borrower"); // waits in Pool.borrow for the one resource
        waiter.setDaemon(true);
        waiter.start();
        try {
            List<String> violations = sampleUntilReported("watched-borrower");
            assertTrue(violations.get(0).contains("WAITING"), violations.toString());
        } finally {
            pool.close(); // the waiting borrower fails and ends
            waiter.join(WITHIN.toMillis());
        }
    }

    @Test
    void aBlockedThreadIsReportedWhereverItIs() throws Exception {
        Object monitor = new Object();
        Thread blocked;
        synchronized (monitor) {
            blocked = new Thread(() -> {
                synchronized (monitor) {
                    monitor.notifyAll();
                }
            }, "watched-blocked");
            blocked.setDaemon(true);
            blocked.start();
            List<String> violations = sampleUntilReported("watched-blocked");
            assertTrue(violations.get(0).contains("BLOCKED"), violations.toString());
        }
        blocked.join(WITHIN.toMillis());
    }

    @Test
    void aThreadWaitingInCodeTheConnectorCalledOrIdleInAPoolIsNotReported() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        // called by the connector (Pool.borrow), waiting in its own code: as an endpoint sleeping in a delivery
        Pool<Object> pool = new Pool<>(new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ofSeconds(30)), () -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new Object();
        }, r -> true, r -> { }, r -> { });
        Thread sleeper = new Thread(pool::borrow, "watched-sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        java.util.concurrent.ExecutorService idle = java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> new Thread(r, "watched-idle-pool"));
        idle.submit(() -> { }).get();
        Thread[] deliveryThread = new Thread[1];
        DeliveryThreads delivery = new DeliveryThreads(r -> deliveryThread[0] = new Thread(r, "watched-delivery"), 1);
        CountDownLatch delivered = new CountDownLatch(1);
        delivery.execute(delivered::countDown);
        assertTrue(delivered.await(WITHIN.toMillis(), TimeUnit.MILLISECONDS));
        try {
            ThreadWatch watch = new ThreadWatch("nobody-", LIMIT);
            List<String> violations = new ArrayList<>();
            long end = System.nanoTime() + LIMIT.multipliedBy(4).toNanos();
            while (System.nanoTime() < end) {
                watch.sample(violations);
                Thread.sleep(50); // the sampling period
            }
            assertEquals(Thread.State.WAITING, sleeper.getState());
            assertEquals(Thread.State.WAITING, deliveryThread[0].getState(), "idle in the connector's delivery pool");
            assertEquals(List.of(), violations.stream().filter(v -> v.contains("watched-")).toList());
        } finally {
            release.countDown();
            delivery.shutdown();
            assertTrue(delivery.awaitTermination(WITHIN));
            idle.shutdown();
            sleeper.join(WITHIN.toMillis());
            assertTrue(idle.awaitTermination(WITHIN.toMillis(), TimeUnit.MILLISECONDS));
        }
    }

    /** Samples every 50 ms until {@code name} is reported (at least the limit after it was first seen stuck). */
    private static List<String> sampleUntilReported(String name) throws InterruptedException {
        ThreadWatch watch = new ThreadWatch("nobody-", LIMIT);
        long deadline = System.nanoTime() + WITHIN.toNanos();
        while (System.nanoTime() < deadline) {
            List<String> violations = new ArrayList<>();
            watch.sample(violations);
            List<String> mine = violations.stream().filter(v -> v.startsWith("thread " + name + " ")).toList();
            if (!mine.isEmpty()) {
                return mine;
            }
            Thread.sleep(50); // the sampling period
        }
        throw new AssertionError(name + " was not reported within " + WITHIN);
    }
}
