package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Closing several connections with one deadline for all their disconnects, with stand-ins for the native side. */
@Timeout(60)
class DisconnectsTest {
    /** A stand-in: its peer answers the disconnect when {@code answers}, else never. */
    private static final class StandIn implements Disconnects.Disconnecting {
        final boolean answers;
        final CountDownLatch answered = new CountDownLatch(1);
        RuntimeException failDisconnect;
        RuntimeException failDestroy;
        int disconnects;
        int destroys;

        StandIn(boolean answers) {
            this.answers = answers;
        }

        @Override
        public boolean disconnect() {
            disconnects++;
            if (failDisconnect != null) {
                throw failDisconnect;
            }
            if (answers) {
                answered.countDown();
            }
            return true;
        }

        @Override
        public boolean awaitDisconnected(long deadline) throws InterruptedException {
            return answered.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        @Override
        public void destroy() {
            destroys++;
            if (failDestroy != null) {
                throw failDestroy;
            }
        }
    }

    private static List<StandIn> standIns(int n, boolean answer) {
        return IntStream.range(0, n).mapToObj(i -> new StandIn(answer)).toList();
    }

    @Test
    void fiveDeadPeersAreWaitedForOnceNotFiveTimes() {
        Duration wait = Duration.ofSeconds(1);
        List<StandIn> dead = standIns(5, false);
        long start = System.nanoTime();
        Disconnects.closeAll(dead, wait);
        long elapsed = System.nanoTime() - start;
        assertTrue(dead.stream().allMatch(s -> s.disconnects == 1 && s.destroys == 1), "each disconnected and destroyed");
        assertTrue(elapsed >= wait.toNanos(), "the dead peers get the whole wait: " + elapsed + " ns");
        // one after another would take 5 x 1 s = 5 s; one shared deadline takes 1 s plus the loop's own time, so 4
        // waits (4 s) leave a slow shared machine 3 s of slack and still tell the two apart
        assertTrue(elapsed < 4 * wait.toNanos(), "one wait for all five, not five: " + elapsed / 1_000_000 + " ms");
    }

    @Test
    void peersThatAnswerEndTheWaitBeforeTheDeadline() {
        List<StandIn> alive = standIns(3, true);
        Disconnects.closeAll(alive, Duration.ofDays(1)); // returns at all only because every peer answered
        assertTrue(alive.stream().allMatch(s -> s.destroys == 1));
    }

    @Test
    void aFailingDisconnectIsNotWaitedForAndStillDestroyed() {
        StandIn failing = new StandIn(false);
        failing.failDisconnect = new IllegalStateException("rdma_disconnect failed");
        List<StandIn> all = List.of(failing, new StandIn(true));
        Disconnects.closeAll(all, Duration.ofDays(1)); // would not return if the failed one were awaited
        assertTrue(all.stream().allMatch(s -> s.destroys == 1));
    }

    @Test
    void everyConnectionIsDestroyedBeforeTheFirstFailureToDestroyIsThrown() {
        List<StandIn> all = standIns(3, true);
        IllegalStateException first = new IllegalStateException("first");
        IllegalStateException second = new IllegalStateException("second");
        all.get(0).failDestroy = first;
        all.get(1).failDestroy = second;
        assertSame(first, assertThrows(IllegalStateException.class, () -> Disconnects.closeAll(all, Duration.ZERO)));
        assertEquals(List.of(second), List.of(first.getSuppressed()));
        assertTrue(all.stream().allMatch(s -> s.destroys == 1));
    }

    @Test
    void anInterruptedCloserStopsWaitingDestroysAllAndKeepsTheInterrupt() {
        List<StandIn> dead = standIns(2, false);
        Thread.currentThread().interrupt();
        try {
            Disconnects.closeAll(dead, Duration.ofDays(1));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
        assertTrue(dead.stream().allMatch(s -> s.destroys == 1));
    }
}
