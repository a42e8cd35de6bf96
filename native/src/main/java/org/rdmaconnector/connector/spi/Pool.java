package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A bounded pool of expensive resources (channel sets, for the OSGi side that has no server pool): borrowed ones are
 * checked ({@code healthy}), given back ones are reset ({@code cleanup}) and kept idle, idle ones beyond the minimum
 * are destroyed after the idle timeout, and a borrower waits up to the borrow timeout when all are in use. Counters
 * show what happened. Thread-safe.
 *
 * @param <R> the pooled resource
 */
public final class Pool<R> implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Pool.class.getName());

    /**
     * How a pool behaves. A timeout longer than {@link Long#MAX_VALUE} nanoseconds (about 292 years) counts as that
     * long: forever.
     *
     * @param minSize resources kept even when idle (opened lazily)
     * @param maxSize resources at most, borrowed and idle together
     * @param idleTimeout how long a resource beyond the minimum may stay idle
     * @param borrowTimeout how long a borrower waits when all are borrowed
     */
    public record Settings(int minSize, int maxSize, Duration idleTimeout, Duration borrowTimeout) {
        /** Every problem, each naming its property; empty when valid. */
        public List<SettingProblem> problems() {
            List<SettingProblem> problems = new ArrayList<>();
            SettingProblem.checkRange(problems, "MinPoolSize", minSize, 0, 10_000);
            SettingProblem.checkRange(problems, "MaxPoolSize", maxSize, 1, 10_000);
            if (minSize > maxSize) {
                problems.add(new SettingProblem("MinPoolSize", "MinPoolSize (" + minSize
                    + ") must not be larger than MaxPoolSize (" + maxSize + ")"));
            }
            if (idleTimeout == null || idleTimeout.isNegative() || idleTimeout.isZero()) {
                problems.add(new SettingProblem("IdleTimeout", "IdleTimeout must be positive, was " + idleTimeout));
            }
            if (borrowTimeout == null || borrowTimeout.isNegative()) {
                problems.add(new SettingProblem("BorrowTimeout", "BorrowTimeout must not be negative, was "
                    + borrowTimeout));
            }
            return problems;
        }
    }

    /** What the pool has done so far, and holds now. */
    public record Counters(int idle, int borrowed, long opened, long destroyed, long borrows, long waits,
                           long timeouts, long invalid) {
    }

    private record Idle<R>(R resource, long since) {
    }

    private final Settings settings;
    private final Supplier<R> opener;
    private final Predicate<R> healthy;
    private final Consumer<R> cleanup;
    private final Consumer<R> destroyer;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    private final Deque<Idle<R>> idle = new ArrayDeque<>();
    private int borrowed;
    private int opening;
    private boolean closed;
    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong destroyed = new AtomicLong();
    private final AtomicLong borrows = new AtomicLong();
    private final AtomicLong waits = new AtomicLong();
    private final AtomicLong timeouts = new AtomicLong();
    private final AtomicLong invalid = new AtomicLong();

    /**
     * @param settings the sizes and timeouts (validated)
     * @param opener opens a resource; its exception reaches the borrower
     * @param healthy whether an idle resource may still be lent
     * @param cleanup resets a resource given back (close what the borrower made)
     * @param destroyer frees a resource
     * @throws IllegalArgumentException naming every invalid setting
     */
    public Pool(Settings settings, Supplier<R> opener, Predicate<R> healthy, Consumer<R> cleanup,
                Consumer<R> destroyer) {
        SettingProblem.throwIfAny("invalid pool settings", settings.problems());
        this.settings = settings;
        this.opener = opener;
        this.healthy = healthy;
        this.cleanup = cleanup;
        this.destroyer = destroyer;
    }

    /** The settings. */
    public Settings settings() {
        return settings;
    }

    /**
     * Lends a resource: an idle healthy one, else a new one while below the maximum, else waits up to the borrow
     * timeout for one to come back.
     *
     * @throws IllegalStateException when the pool is closed, or the timeout passed with all resources borrowed
     */
    public R borrow() {
        // a deadline wraps around for a saturated timeout; 'deadline - now' below still gives what is left
        long deadline = System.nanoTime() + saturatedNanos(settings.borrowTimeout());
        boolean waited = false;
        List<R> unhealthy = new ArrayList<>();
        lock.lock();
        try {
            while (true) {
                if (closed) {
                    throw new IllegalStateException("the pool is closed");
                }
                Idle<R> candidate = idle.pollLast(); // the most recently used: the others may time out
                if (candidate != null) {
                    if (healthy.test(candidate.resource())) {
                        borrowed++;
                        borrows.incrementAndGet();
                        return candidate.resource();
                    }
                    invalid.incrementAndGet();
                    unhealthy.add(candidate.resource());
                    continue;
                }
                if (borrowed + opening < settings.maxSize()) {
                    opening++;
                    break;
                }
                if (!waited) {
                    waited = true;
                    waits.incrementAndGet();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    timeouts.incrementAndGet();
                    throw new IllegalStateException("all " + settings.maxSize() + " pooled connections are in use "
                        + "(MaxPoolSize) and none came back within " + settings.borrowTimeout().toMillis() + " ms "
                        + "(BorrowTimeout)");
                }
                try {
                    available.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for a pooled connection", e);
                }
            }
        } finally {
            lock.unlock();
            unhealthy.forEach(this::destroy);
        }
        R resource;
        try {
            resource = opener.get();
        } catch (RuntimeException | Error e) {
            lock.lock();
            try {
                opening--;
                available.signal();
            } finally {
                lock.unlock();
            }
            throw e;
        }
        opened.incrementAndGet();
        boolean tooLate;
        lock.lock();
        try {
            opening--;
            tooLate = closed;
            if (!tooLate) {
                borrowed++;
                borrows.incrementAndGet();
            }
        } finally {
            lock.unlock();
        }
        if (tooLate) {
            destroy(resource);
            throw new IllegalStateException("the pool is closed");
        }
        return resource;
    }

    /**
     * Takes back a borrowed resource: reset and kept idle if healthy, else destroyed. The slot comes back in every
     * case, also when the reset or the health check throws (then the resource is destroyed).
     */
    public void giveBack(R resource) {
        boolean keep = false;
        try {
            cleanup.accept(resource);
            keep = healthy.test(resource);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cleaning up " + resource + " failed; destroying it", e);
        } finally {
            boolean kept;
            lock.lock();
            try {
                borrowed--;
                kept = keep && !closed;
                if (kept) {
                    idle.addLast(new Idle<>(resource, System.nanoTime()));
                } else if (!keep) {
                    invalid.incrementAndGet();
                }
                available.signal();
            } finally {
                lock.unlock();
            }
            if (!kept) {
                destroy(resource);
            }
        }
    }

    /** Nanoseconds of {@code timeout}, {@link Long#MAX_VALUE} when it is longer (toNanos would throw). */
    private static long saturatedNanos(Duration timeout) {
        return timeout.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : timeout.toNanos();
    }

    /** Destroys idle resources beyond the minimum that have been idle longer than the idle timeout. */
    public void evictIdle() {
        long now = System.nanoTime();
        List<R> expired = new ArrayList<>();
        lock.lock();
        try {
            while (idle.size() + borrowed > settings.minSize() && !idle.isEmpty()
                && now - idle.peekFirst().since() >= saturatedNanos(settings.idleTimeout())) {
                expired.add(idle.pollFirst().resource());
            }
        } finally {
            lock.unlock();
        }
        expired.forEach(this::destroy);
    }

    /**
     * Destroys the idle resources that are no longer healthy now, instead of when a borrower comes across them (a
     * removed device is released only once nothing holds it). Counted as invalid.
     */
    public void evictUnhealthy() {
        List<R> unhealthy = new ArrayList<>();
        lock.lock();
        try {
            idle.removeIf(i -> {
                if (healthy.test(i.resource())) {
                    return false;
                }
                unhealthy.add(i.resource());
                return true;
            });
            invalid.addAndGet(unhealthy.size());
        } finally {
            lock.unlock();
        }
        unhealthy.forEach(this::destroy);
    }

    /** The counters now. */
    public Counters counters() {
        lock.lock();
        try {
            return new Counters(idle.size(), borrowed, opened.get(), destroyed.get(), borrows.get(), waits.get(),
                timeouts.get(), invalid.get());
        } finally {
            lock.unlock();
        }
    }

    private void destroy(R resource) {
        destroyed.incrementAndGet();
        try {
            destroyer.accept(resource);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "destroying " + resource + " failed", e);
        }
    }

    /** Destroys the idle resources; borrowed ones are destroyed when they come back. Borrowers waiting fail. */
    @Override
    public void close() {
        List<R> all = new ArrayList<>();
        lock.lock();
        try {
            closed = true;
            for (Idle<R> i; (i = idle.poll()) != null; ) {
                all.add(i.resource());
            }
            available.signalAll();
        } finally {
            lock.unlock();
        }
        all.forEach(this::destroy);
    }
}
