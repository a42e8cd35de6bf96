package org.rdmaconnector.verbs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rdmaconnector.connector.RdmaException;

/**
 * A node of the ownership tree (after rdma-core's pyverbs): every verbs/CM object registers with the objects it
 * depends on; {@link #close()} closes its dependents first, newest first (a thing can only depend on what existed
 * before it), then frees itself and leaves its parents. Native calls run between {@link #acquire()} and
 * {@link #release()}, so close waits for calls in progress and no call ever touches freed memory.
 */
abstract class NativeResource implements AutoCloseable {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile boolean closed;
    private final LinkedHashSet<NativeResource> dependents = new LinkedHashSet<>();
    private final List<NativeResource> parents = new ArrayList<>(2);

    /** Frees the native object. Throw (an {@link RdmaException}) to stay open. Runs once, with no call in progress. */
    protected abstract void destroy();

    /** Registers this object as a dependent of {@code parent}; the parent must be acquired by the caller. */
    final void dependOn(NativeResource parent) {
        synchronized (parent.dependents) {
            parent.dependents.add(this);
        }
        synchronized (parents) {
            parents.add(parent);
        }
    }

    /** Moves this object from one parent to another (rdma_migrate_id). */
    final void moveDependency(NativeResource from, NativeResource to) {
        synchronized (from.dependents) {
            from.dependents.remove(this);
        }
        synchronized (to.dependents) {
            to.dependents.add(this);
        }
        synchronized (parents) {
            parents.remove(from);
            parents.add(to);
        }
    }

    /** Enters a native call on this object; throws {@link IllegalStateException} if it is closed or closing. */
    final void acquire() {
        if (closing.get()) {
            // checked before the lock too: a waiting close() holds new readers back
            throw closedError();
        }
        lock.readLock().lock();
        if (closing.get()) {
            lock.readLock().unlock();
            throw closedError();
        }
    }

    /**
     * Enters a native call if this object is open and no close is under way, without waiting; false otherwise (then
     * nothing was entered). For diagnostics ({@code toString}) that must never touch freed memory nor block.
     */
    final boolean tryAcquire() {
        if (closing.get() || !lock.readLock().tryLock()) {
            return false;
        }
        if (closing.get()) {
            lock.readLock().unlock();
            return false;
        }
        return true;
    }

    private IllegalStateException closedError() {
        return new IllegalStateException(getClass().getSimpleName() + " is closed");
    }

    /** Leaves a native call entered with {@link #acquire()}. */
    final void release() {
        lock.readLock().unlock();
    }

    /** Whether {@link #close()} has freed this object. */
    public final boolean isClosed() {
        return closed;
    }

    /**
     * Closes the dependents, newest first, then frees this object. Closing twice, or while another thread closes, is
     * a no-op. If freeing fails (an {@link RdmaException}) the object stays open and the error is thrown.
     */
    @Override
    public final void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        boolean done = false;
        try {
            lock.writeLock().lock();
            try {
                // under the write lock no call on this object is in progress, so no dependent can appear meanwhile
                for (List<NativeResource> left = dependentsNewestFirst(); !left.isEmpty(); left = dependentsNewestFirst()) {
                    for (NativeResource dependent : left) {
                        dependent.close();
                    }
                }
                destroy();
                closed = true;
                done = true;
            } finally {
                lock.writeLock().unlock();
            }
        } finally {
            if (!done) {
                closing.set(false);
            }
        }
        List<NativeResource> former;
        synchronized (parents) {
            former = new ArrayList<>(parents);
            parents.clear();
        }
        for (NativeResource parent : former) {
            synchronized (parent.dependents) {
                parent.dependents.remove(this);
            }
        }
    }

    /** The open dependents, newest first. */
    final List<NativeResource> dependentsNewestFirst() {
        List<NativeResource> list;
        synchronized (dependents) {
            list = new ArrayList<>(dependents);
        }
        java.util.Collections.reverse(list);
        return list;
    }

    /** How many dependents are open, for tests and diagnostics. */
    final int dependentCount() {
        synchronized (dependents) {
            return dependents.size();
        }
    }
}
