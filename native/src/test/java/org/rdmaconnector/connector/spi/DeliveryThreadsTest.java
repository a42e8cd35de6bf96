package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The standalone runtime's delivery threads: every task run, at most the pool's threads, nothing lost or hung. */
class DeliveryThreadsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final AtomicInteger made = new AtomicInteger();
    private final ThreadFactory factory = r -> {
        Thread t = new Thread(r, "delivery-test-" + made.incrementAndGet());
        t.setDaemon(true);
        return t;
    };
    private DeliveryThreads threads;

    @AfterEach
    void stop() throws InterruptedException {
        if (threads != null) {
            threads.shutdownNow();
            assertTrue(threads.awaitTermination(WAIT), "the threads ended");
        }
    }

    @Test
    void oneThreadRunsEveryTaskInOrder() throws InterruptedException {
        threads = new DeliveryThreads(factory, 1);
        List<Integer> ran = new CopyOnWriteArrayList<>();
        CountDownLatch all = new CountDownLatch(1000);
        for (int i = 0; i < 1000; i++) {
            int n = i;
            threads.execute(() -> {
                ran.add(n);
                all.countDown();
            });
        }
        assertTrue(all.await(WAIT.toSeconds(), TimeUnit.SECONDS), "every task ran");
        for (int i = 0; i < 1000; i++) {
            assertEquals(i, ran.get(i), "task " + i + " in its turn");
        }
        assertEquals(1, made.get(), "one thread");
    }

    @Test
    void tasksRunInParallelUpToThePoolsSizeAndNoFurther() throws InterruptedException {
        threads = new DeliveryThreads(factory, 2);
        CountDownLatch bothRunning = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch thirdRan = new CountDownLatch(1);
        Runnable blocking = () -> {
            bothRunning.countDown();
            await(release);
        };
        threads.execute(blocking);
        threads.execute(blocking);
        assertTrue(bothRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS), "two tasks run at once on two threads");
        threads.execute(thirdRan::countDown);
        assertEquals(1, thirdRan.getCount(), "a third task waits while both threads are busy");
        release.countDown();
        assertTrue(thirdRan.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the third task ran once one was free");
        assertEquals(2, made.get(), "no third thread");
    }

    @Test
    void manyTasksFromManyThreadsAreAllRunOnce() throws InterruptedException {
        threads = new DeliveryThreads(factory, 3);
        int perSubmitter = 20_000;
        Set<Integer> ran = ConcurrentHashMap.newKeySet();
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(4 * perSubmitter);
        Thread[] submitters = new Thread[4];
        for (int s = 0; s < submitters.length; s++) {
            int base = s * perSubmitter;
            submitters[s] = new Thread(() -> {
                for (int i = 0; i < perSubmitter; i++) {
                    int n = base + i;
                    threads.execute(() -> {
                        ran.add(n);
                        runs.incrementAndGet();
                        all.countDown();
                    });
                }
            });
            submitters[s].start();
        }
        for (Thread submitter : submitters) {
            submitter.join();
        }
        assertTrue(all.await(WAIT.toSeconds(), TimeUnit.SECONDS), "every task ran: " + runs.get());
        assertEquals(4 * perSubmitter, ran.size(), "each task once");
        assertEquals(4 * perSubmitter, runs.get(), "no task twice");
        assertTrue(made.get() <= 3, "at most the pool's threads: " + made.get());
    }

    @Test
    void aTaskThatThrowsLeavesItsThreadRunning() throws InterruptedException {
        threads = new DeliveryThreads(factory, 1);
        CountDownLatch next = new CountDownLatch(1);
        threads.execute(() -> {
            throw new IllegalStateException("a listener's mistake");
        });
        threads.execute(next::countDown);
        assertTrue(next.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the next task ran");
        assertEquals(1, made.get(), "on the same thread");
    }

    @Test
    void shutdownRunsWhatIsQueuedAndRefusesMore() throws InterruptedException {
        threads = new DeliveryThreads(factory, 1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        threads.execute(() -> await(release));
        for (int i = 0; i < 10; i++) {
            threads.execute(ran::incrementAndGet);
        }
        threads.shutdown();
        RejectedExecutionException refused =
            assertThrows(RejectedExecutionException.class, () -> threads.execute(ran::incrementAndGet));
        assertTrue(refused.getMessage().contains("shut down"), refused.getMessage());
        assertFalse(threads.awaitTermination(Duration.ofMillis(50)), "a task still runs");
        release.countDown();
        assertTrue(threads.awaitTermination(WAIT), "the threads ended");
        assertEquals(10, ran.get(), "the queued tasks ran, the refused one did not");
    }

    @Test
    void shutdownNowDropsWhatIsQueuedAndInterruptsWhatRuns() throws InterruptedException {
        threads = new DeliveryThreads(factory, 1);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        threads.execute(() -> {
            running.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        });
        threads.execute(ran::incrementAndGet);
        assertTrue(running.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the first task runs");
        threads.shutdownNow();
        assertTrue(interrupted.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the running task was interrupted");
        assertTrue(threads.awaitTermination(WAIT), "the threads ended");
        assertEquals(0, ran.get(), "the queued task was dropped");
    }

    @Test
    void aTaskNoThreadCouldBeMadeForIsRefusedAndNotRunLater() throws InterruptedException {
        AtomicInteger asked = new AtomicInteger();
        threads = new DeliveryThreads(r -> {
            if (asked.incrementAndGet() == 1) {
                throw new IllegalStateException("no thread to be had");
            }
            return factory.newThread(r);
        }, 1);
        AtomicInteger refusedRan = new AtomicInteger();
        RejectedExecutionException e = assertThrows(RejectedExecutionException.class,
            () -> threads.execute(refusedRan::incrementAndGet));
        assertTrue(e.getMessage().contains("no thread to be had"), e.getMessage());
        CountDownLatch next = new CountDownLatch(1);
        threads.execute(next::countDown);
        assertTrue(next.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the next task ran on a thread made for it");
        threads.shutdown();
        assertTrue(threads.awaitTermination(WAIT));
        assertEquals(0, refusedRan.get(), "the refused task was not queued");
    }

    @Test
    void aTaskThatLeavesItsThreadInterruptedDoesNotEndItOrReachTheNextTask() throws InterruptedException {
        threads = new DeliveryThreads(factory, 1);
        CountDownLatch first = new CountDownLatch(1);
        threads.execute(() -> {
            Thread.currentThread().interrupt(); // as a listener that restores the flag it caught
            first.countDown();
        });
        assertTrue(first.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        AtomicInteger interruptedAtStart = new AtomicInteger();
        CountDownLatch next = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            threads.execute(() -> {
                if (Thread.currentThread().isInterrupted()) {
                    interruptedAtStart.incrementAndGet();
                }
                next.countDown();
            });
        }
        assertTrue(next.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the thread went on");
        assertEquals(0, interruptedAtStart.get(), "each task started without the flag");
        assertEquals(1, made.get(), "on the same thread");
    }

    @Test
    void aFactoryThatMakesNoThreadRefusesTheTask() throws InterruptedException {
        threads = new DeliveryThreads(r -> null, 1);
        RejectedExecutionException e = assertThrows(RejectedExecutionException.class, () -> threads.execute(() -> { }));
        assertTrue(e.getMessage().contains("made none"), e.getMessage());
        threads.shutdownNow();
        assertTrue(threads.awaitTermination(Duration.ofMillis(1)), "no thread to wait for");
        threads = null;
    }

    @Test
    void badArgumentsAreNamed() {
        assertThrows(IllegalArgumentException.class, () -> new DeliveryThreads(factory, 0));
        assertThrows(IllegalArgumentException.class, () -> new DeliveryThreads(null, 1));
        threads = new DeliveryThreads(factory, 1);
        assertThrows(IllegalArgumentException.class, () -> threads.execute(null));
        assertEquals(0, made.get(), "no thread before a task");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
