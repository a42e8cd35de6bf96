package org.rdmaconnector.connector.spi;

import java.time.Duration;

/**
 * One pending deadline on a {@link Scheduler}: {@link #set} runs an action once after a delay unless the deadline is
 * {@link #clear cleared} or set again first. A timer may keep a cancelled task until its time (java.util.Timer does),
 * so a cleared or replaced task lets go of its action at once: nothing it refers to stays reachable. Thread-safe.
 */
final class Deadline {
    private final Scheduler scheduler;
    // guarded by this
    private Task pending;

    Deadline(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    /** Runs {@code action} once {@code after} from now, replacing the pending one. */
    void set(Duration after, Runnable action) {
        Task task = new Task(action);
        Task old;
        synchronized (this) {
            old = pending;
            pending = task;
        }
        task.cancel = scheduler.schedule(task, after);
        if (old != null) {
            old.clear();
        }
    }

    /** Cancels the pending action, if any. */
    void clear() {
        Task old;
        synchronized (this) {
            old = pending;
            pending = null;
        }
        if (old != null) {
            old.clear();
        }
    }

    private static final class Task implements Runnable {
        private volatile Runnable action;
        private volatile Runnable cancel;

        Task(Runnable action) {
            this.action = action;
        }

        @Override
        public void run() {
            Runnable a = action;
            action = null;
            if (a != null) {
                a.run();
            }
        }

        void clear() {
            action = null;
            Runnable c = cancel;
            if (c != null) {
                c.run();
            }
        }
    }
}
