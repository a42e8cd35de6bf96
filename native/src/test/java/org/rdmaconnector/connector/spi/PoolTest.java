package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rdmaconnector.verbs.TestProbes;

/** The pool's policy with a stand-in resource: reuse, bounds, waiting, validation, idle eviction, counters. */
class PoolTest {
    /** A stand-in for a channel set. */
    static final class Thing {
        final int id;
        boolean healthy = true;
        int cleanups;
        boolean destroyed;

        Thing(int id) {
            this.id = id;
        }
    }

    private final AtomicInteger ids = new AtomicInteger();
    private final List<Thing> destroyed = new ArrayList<>();

    private Pool<Thing> pool(int min, int max, Duration idle, Duration borrow) {
        return new Pool<>(new Pool.Settings(min, max, idle, borrow), () -> new Thing(ids.incrementAndGet()),
            t -> t.healthy, t -> t.cleanups++, t -> {
                t.destroyed = true;
                destroyed.add(t);
            });
    }

    @Test
    void aResourceGivenBackIsCleanedAndLentAgain() {
        Pool<Thing> pool = pool(0, 2, Duration.ofMinutes(1), Duration.ZERO);
        Thing first = pool.borrow();
        pool.giveBack(first);
        assertEquals(1, first.cleanups);
        assertSame(first, pool.borrow());
        assertEquals(new Pool.Counters(0, 1, 1, 0, 2, 0, 0, 0), pool.counters());
    }

    /** Waits until a borrower of {@code pool} waits for a resource to come back (it counts its wait first). */
    private static void awaitAWaitingBorrower(Pool<Thing> pool) throws InterruptedException {
        TestProbes.await("a borrower waiting", Duration.ofSeconds(10), () -> pool.counters().waits() == 1);
    }

    @Test
    void atTheMaximumABorrowerWaitsAndGetsWhatComesBack() throws Exception {
        Pool<Thing> pool = pool(0, 1, Duration.ofMinutes(1), Duration.ofSeconds(10));
        Thing only = pool.borrow();
        CompletableFuture<Thing> waiting = CompletableFuture.supplyAsync(pool::borrow);
        awaitAWaitingBorrower(pool);
        assertTrue(!waiting.isDone(), "the second borrower waits");
        pool.giveBack(only);
        assertSame(only, waiting.get(5, TimeUnit.SECONDS));
        assertEquals(1, pool.counters().waits());
    }

    @Test
    void timeoutsTooLongForNanosecondsCountAsForever() throws Exception {
        Pool<Thing> pool = pool(0, 1, Duration.ofSeconds(Long.MAX_VALUE), Duration.ofMillis(Long.MAX_VALUE));
        Thing first = pool.borrow();
        CompletableFuture<Thing> waiting = CompletableFuture.supplyAsync(pool::borrow);
        awaitAWaitingBorrower(pool); // its timeout counted as forever: it waits, and does not fail at once
        pool.giveBack(first);
        assertSame(first, waiting.get(5, TimeUnit.SECONDS));
        pool.giveBack(first);
        pool.evictIdle();
        assertEquals(List.of(), destroyed);
    }

    @Test
    void aBorrowerThatWaitsTooLongIsToldWhy() {
        Pool<Thing> pool = pool(0, 1, Duration.ofMinutes(1), Duration.ofMillis(50));
        pool.borrow();
        IllegalStateException e = assertThrows(IllegalStateException.class, pool::borrow);
        assertEquals("all 1 pooled connections are in use (MaxPoolSize) and none came back within 50 ms "
            + "(BorrowTimeout)", e.getMessage());
        assertEquals(1, pool.counters().timeouts());
    }

    @Test
    void unhealthyResourcesAreDestroyedNotLent() {
        Pool<Thing> pool = pool(0, 2, Duration.ofMinutes(1), Duration.ZERO);
        Thing sick = pool.borrow();
        Thing other = pool.borrow();
        pool.giveBack(other);
        other.healthy = false; // fails while idle (e.g. PORT_ERR)
        sick.healthy = false;
        pool.giveBack(sick); // fails while borrowed
        assertTrue(sick.destroyed);
        Thing fresh = pool.borrow();
        assertTrue(other.destroyed);
        assertEquals(3, fresh.id);
        assertEquals(2, pool.counters().invalid());
    }

    @Test
    void unhealthyIdleResourcesAreDestroyedAtOnceAndBorrowedOnesWhenTheyComeBack() {
        Pool<Thing> pool = pool(2, 3, Duration.ofMinutes(1), Duration.ZERO);
        Thing idleSick = pool.borrow();
        Thing idleWell = pool.borrow();
        Thing lentSick = pool.borrow();
        pool.giveBack(idleSick);
        pool.giveBack(idleWell);
        idleSick.healthy = false; // its device removed while idle
        lentSick.healthy = false; // its device removed while lent
        pool.evictUnhealthy();
        assertEquals(List.of(idleSick), destroyed, "only the idle unhealthy one goes now, although within the minimum");
        assertEquals(new Pool.Counters(1, 1, 3, 1, 3, 0, 0, 1), pool.counters());
        pool.giveBack(lentSick);
        assertEquals(List.of(idleSick, lentSick), destroyed);
        assertSame(idleWell, pool.borrow());
        assertEquals(2, pool.counters().invalid());
    }

    @Test
    void idleResourcesBeyondTheMinimumAreEvicted() throws Exception {
        Pool<Thing> pool = pool(1, 3, Duration.ofMillis(20), Duration.ZERO);
        Thing a = pool.borrow();
        Thing b = pool.borrow();
        Thing c = pool.borrow();
        pool.giveBack(a);
        pool.giveBack(b);
        pool.giveBack(c);
        Thread.sleep(40);
        pool.evictIdle();
        assertEquals(List.of(a, b), destroyed, "the oldest idle ones go, the minimum stays");
        assertEquals(1, pool.counters().idle());
    }

    @Test
    void anOpenerFailureReachesTheBorrowerAndFreesTheSlot() {
        AtomicInteger attempts = new AtomicInteger();
        Pool<Thing> pool = new Pool<>(new Pool.Settings(0, 1, Duration.ofMinutes(1), Duration.ZERO), () -> {
            if (attempts.incrementAndGet() == 1) {
                throw new IllegalStateException("no device");
            }
            return new Thing(7);
        }, t -> true, t -> { }, t -> { });
        assertEquals("no device", assertThrows(IllegalStateException.class, pool::borrow).getMessage());
        assertEquals(7, pool.borrow().id);
    }

    @Test
    void closingDestroysTheIdleAndLaterReturns() {
        Pool<Thing> pool = pool(0, 2, Duration.ofMinutes(1), Duration.ZERO);
        Thing idle = pool.borrow();
        Thing busy = pool.borrow();
        pool.giveBack(idle);
        pool.close();
        assertTrue(idle.destroyed);
        pool.giveBack(busy);
        assertTrue(busy.destroyed);
        assertEquals("the pool is closed", assertThrows(IllegalStateException.class, pool::borrow).getMessage());
    }

    @Test
    void invalidSettingsAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pool(3, 2, Duration.ZERO,
            Duration.ofSeconds(-1)));
        assertEquals("invalid pool settings: MinPoolSize (3) must not be larger than MaxPoolSize (2); IdleTimeout "
            + "must be positive, was PT0S; BorrowTimeout must not be negative, was PT-1S", e.getMessage());
    }
}
