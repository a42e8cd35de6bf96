package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;

/**
 * The delivery threads of a {@link ConnectorRuntime#standalone standalone} runtime: a fixed pool whose hand-over
 * allocates nothing. The engine hands it one task per order queue with events (never one per event); a task waits in
 * one {@link ArrayDeque} (no node per task) and an idle thread waits on this object's monitor (no condition node per
 * wait), where a {@code ThreadPoolExecutor} makes a queue node per task and a condition node per idle wait (about 56
 * bytes per delivered message when each message wakes a thread). A thread starts for each task until the pool is
 * full, and lives until {@link #shutdown}. A task that throws is logged and the thread goes on.
 */
public final class DeliveryThreads implements Executor {
    private static final System.Logger LOG = System.getLogger(DeliveryThreads.class.getName());

    private final ThreadFactory factory;
    private final int size;
    // guarded by this
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final Thread[] threads;
    private int started;
    private int idle;
    private int running; // threads started and not ended
    private boolean shutdown;

    /** A pool of {@code size} threads made by {@code factory} as tasks come. */
    public DeliveryThreads(ThreadFactory factory, int size) {
        if (factory == null || size < 1) {
            throw new IllegalArgumentException("a thread factory and at least one thread are needed, was " + size);
        }
        this.factory = factory;
        this.size = size;
        this.threads = new Thread[size];
    }

    /** The most threads it runs. */
    public int size() {
        return size;
    }

    /**
     * Queues {@code task} for a new thread while the pool is not full, else for the next idle thread.
     *
     * @throws RejectedExecutionException after {@link #shutdown}, or when no thread could be made for it (then it
     *     is not queued: the engine keeps it and submits it again)
     */
    @Override
    public void execute(Runnable task) {
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        Thread starting = null;
        synchronized (this) {
            if (shutdown) {
                throw new RejectedExecutionException("the delivery threads are shut down");
            }
            tasks.addLast(task);
            if (started < size) { // one new thread per task until the pool is full, as a pool's core threads
                starting = newThread(task);
                threads[started++] = starting;
                running++;
            } else if (idle > 0) {
                notify();
            }
        }
        if (starting != null) {
            try {
                starting.start();
            } catch (RuntimeException | Error e) { // no native thread to be had
                synchronized (this) {
                    release(starting);
                    running--;
                    notifyAll(); // awaitTermination
                    // a task another caller queued meanwhile waits for the next execute to start a thread
                    if (tasks.removeLastOccurrence(task)) {
                        throw new RejectedExecutionException("cannot start a delivery thread: " + e, e);
                    }
                }
            }
        }
    }

    /** {@code thread} never started, or ended before a shutdown: its place is free again. Under this. */
    private void release(Thread thread) {
        for (int i = 0; i < started; i++) {
            if (threads[i] == thread) {
                threads[i] = threads[--started];
                threads[started] = null;
                return;
            }
        }
    }

    /** A thread from the factory; when it cannot make one, {@code task} is not queued after all. */
    private Thread newThread(Runnable task) {
        try {
            Thread thread = factory.newThread(this::work);
            if (thread == null) {
                throw new IllegalStateException("the thread factory made none");
            }
            return thread;
        } catch (RuntimeException | Error e) {
            tasks.removeLastOccurrence(task);
            throw new RejectedExecutionException("cannot make a delivery thread: " + e, e);
        }
    }

    private void work() {
        Thread self = Thread.currentThread();
        try {
            for (Runnable task = next(); task != null; task = next()) {
                try {
                    task.run();
                } catch (Throwable t) {
                    LOG.log(Level.WARNING, "a delivery task threw: " + t, t);
                }
                Thread.interrupted(); // a task's interrupt was its own: the next one starts without it
            }
        } finally {
            synchronized (this) {
                running--;
                if (!shutdown) {
                    release(self); // ended by an error of its own: another thread may start in its place
                }
                notifyAll(); // awaitTermination
            }
        }
    }

    /** The next task, waiting for one; null once shut down with none left. */
    private synchronized Runnable next() {
        while (tasks.isEmpty()) {
            if (shutdown) {
                return null;
            }
            idle++;
            try {
                wait();
            } catch (InterruptedException e) {
                // shutdownNow (the loop sees it), or a stray interrupt: waits on
            } finally {
                idle--;
            }
        }
        return tasks.pollFirst();
    }

    /** Refuses new tasks; the queued ones still run, then the threads end. */
    public synchronized void shutdown() {
        shutdown = true;
        notifyAll();
    }

    /** Refuses new tasks, drops the queued ones and interrupts the threads. */
    public void shutdownNow() {
        synchronized (this) {
            shutdown = true;
            tasks.clear();
            notifyAll();
            for (int i = 0; i < started; i++) {
                threads[i].interrupt();
            }
        }
    }

    /** Waits up to {@code timeout} for every thread to end after {@link #shutdown}; whether they all did. */
    public synchronized boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (running > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }
}
