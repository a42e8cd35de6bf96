package org.rdmaconnector.connector;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The Linux kernel's counting completion ({@code struct completion}, {@code include/linux/completion.h},
 * {@code kernel/sched/completion.c}): a count of "done" events that an application waits on, or polls without
 * blocking, for a posted RDMA work request. Each {@link #complete()} adds one event and wakes one waiter; each
 * successful wait consumes one event. {@link #completeAll()} makes the completion sticky: every current and future
 * wait succeeds without consuming anything until {@link #reinit()}.
 *
 * <p>Threading: every method may be called from any thread, except {@link #reinit()}, which (as
 * {@code reinit_completion()}) must not race with waiters or completers. A waiter that is interrupted or times out
 * consumes nothing; as in the kernel, a wait that can be satisfied immediately consumes an event and returns
 * normally even if the calling thread's interrupt status is set (the status is left as it was).
 */
public final class Completion {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    /** Events not yet consumed; saturates at {@link Integer#MAX_VALUE}. Guarded by {@link #lock}. */
    private int done;
    /** Set by {@link #completeAll()}, cleared by {@link #reinit()}. Guarded by {@link #lock}. */
    private boolean all;

    /** A completion with no events, as {@code init_completion()} / {@code DECLARE_COMPLETION()}. */
    public Completion() {
    }

    /**
     * Signals one event and wakes one waiter, as {@code complete()}. The count saturates at
     * {@link Integer#MAX_VALUE}; after {@link #completeAll()} the call changes nothing.
     */
    public void complete() {
        lock.lock();
        try {
            if (!all && done != Integer.MAX_VALUE) {
                done++;
            }
            available.signal();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Marks the completion done for every current and future waiter until {@link #reinit()}, and wakes all waiters,
     * as {@code complete_all()}.
     */
    public void completeAll() {
        lock.lock();
        try {
            all = true;
            available.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Blocks until an event is available, then consumes it (nothing is consumed after {@link #completeAll()}), as
     * {@code wait_for_completion_interruptible()}.
     *
     * @throws InterruptedException if the thread is interrupted while it would have to block; nothing is consumed
     */
    public void waitForCompletion() throws InterruptedException {
        lock.lock();
        try {
            while (!isDone()) {
                awaitOrPassOn(-1L);
            }
            consume();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Blocks until an event is available, ignoring interrupts, then consumes it, as the uninterruptible
     * {@code wait_for_completion()}. If the thread was interrupted while waiting, its interrupt status is set again
     * on return.
     */
    public void waitForCompletionUninterruptibly() {
        lock.lock();
        try {
            while (!isDone()) {
                available.awaitUninterruptibly();
            }
            consume();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits at most {@code timeout} for an event and consumes it if one arrives, as
     * {@code wait_for_completion_interruptible_timeout()}. A zero timeout is {@link #tryWaitForCompletion()} (it
     * never blocks and never throws {@link InterruptedException}).
     *
     * @param timeout the longest time to wait, zero or positive
     * @return {@code true} if an event was consumed or the completion is completed-all, {@code false} on timeout
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     * @throws InterruptedException if the thread is interrupted while it would have to block; nothing is consumed
     */
    public boolean waitForCompletion(Duration timeout) throws InterruptedException {
        if (timeout == null) {
            throw new IllegalArgumentException("timeout must not be null");
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        if (timeout.isZero()) {
            return tryWaitForCompletion();
        }
        long nanos = saturatedNanos(timeout);
        lock.lock();
        try {
            while (!isDone()) {
                if (nanos <= 0L) {
                    return false;
                }
                nanos = awaitOrPassOn(nanos);
            }
            consume();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Consumes an event if one is available without blocking, as {@code try_wait_for_completion()}.
     *
     * @return {@code true} if an event was consumed or the completion is completed-all, {@code false} if a wait
     *     would have to block
     */
    public boolean tryWaitForCompletion() {
        lock.lock();
        try {
            if (!isDone()) {
                return false;
            }
            consume();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether a wait would not block, as {@code completion_done()}: {@code true} if an event is available or the
     * completion is completed-all. Consumes nothing.
     */
    public boolean completionDone() {
        lock.lock();
        try {
            return isDone();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drops all events and the completed-all state, as {@code reinit_completion()}. Like the kernel function it must
     * not race with waiters or completers: call it only when no thread can be waiting on or completing this
     * completion, e.g. before re-posting the work request it tracks.
     */
    public void reinit() {
        lock.lock();
        try {
            done = 0;
            all = false;
        } finally {
            lock.unlock();
        }
    }

    /** Number of threads waiting on the condition; for tests. */
    int waiterCount() {
        lock.lock();
        try {
            return lock.getWaitQueueLength(available);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return all ? "Completion[done=all]" : "Completion[done=" + done + "]";
        } finally {
            lock.unlock();
        }
    }

    private boolean isDone() {
        return all || done > 0;
    }

    private void consume() {
        if (!all) {
            done--;
        }
    }

    /**
     * Awaits the condition ({@code nanos < 0}: without a deadline) and returns the nanoseconds left. If interrupted
     * while an event is available, passes the wake-up on to another waiter so that a signal consumed by this thread
     * is not lost, then rethrows.
     */
    private long awaitOrPassOn(long nanos) throws InterruptedException {
        try {
            if (nanos < 0L) {
                available.await();
                return -1L;
            }
            return available.awaitNanos(nanos);
        } catch (InterruptedException e) {
            if (isDone()) {
                available.signal();
            }
            throw e;
        }
    }

    private static long saturatedNanos(Duration timeout) {
        try {
            return timeout.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
