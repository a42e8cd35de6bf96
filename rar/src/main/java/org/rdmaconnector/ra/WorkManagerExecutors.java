package org.rdmaconnector.ra;

import jakarta.resource.spi.BootstrapContext;
import jakarta.resource.spi.work.HintsContext;
import jakarta.resource.spi.work.Work;
import jakarta.resource.spi.work.WorkContext;
import jakarta.resource.spi.work.WorkContextProvider;
import jakarta.resource.spi.work.WorkException;
import jakarta.resource.spi.work.WorkManager;
import java.time.Duration;
import java.util.List;
import java.util.Timer;
import java.util.TimerTask;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.rdmaconnector.connector.spi.Scheduler;

/**
 * The server's threads, as the shared machinery wants them: the WorkManager and the bootstrap context's timer. The
 * event loop is long-running Work; when the server releases it ({@link Work#release()}, e.g. while it shuts its
 * WorkManager down) the adapter's release action ({@link #onLoopRelease}) ends the loop, so the Work returns.
 */
final class WorkManagerExecutors {
    private static final System.Logger LOG = System.getLogger(WorkManagerExecutors.class.getName());
    private final WorkManager workManager;
    private final boolean hints;
    private final Timer timer;
    private final LoopRelease loopRelease = new LoopRelease();

    WorkManagerExecutors(BootstrapContext context) throws jakarta.resource.spi.UnavailableException {
        this.workManager = context.getWorkManager();
        this.hints = context.isContextSupported(HintsContext.class);
        this.timer = context.createTimer();
    }

    /** Starts the event loop as long-running Work (startWork returns once it runs, or fails after the timeout). */
    Executor loopRunner() {
        return task -> {
            try {
                workManager.startWork(new Task(task, "rdma-event-loop", true, loopRelease),
                    loopStartTimeout().toMillis(), null, null);
            } catch (WorkException e) {
                throw new RejectedExecutionException("the WorkManager did not start the RDMA event loop: " + e, e);
            }
        };
    }

    /**
     * Runs deliveries as short Work. A refusal (the pool is saturated) throws at once: the caller is the event loop,
     * which must not wait; the engine keeps the task and submits it again with backoff.
     */
    Executor delivery() {
        return task -> schedule(task, "rdma-delivery");
    }

    /**
     * Runs {@code task} once as short Work, off the caller's thread (for callbacks that may block).
     *
     * @throws RejectedExecutionException if the WorkManager refused it: the task will not run
     */
    void later(Runnable task) {
        schedule(task, "rdma-callback");
    }

    private void schedule(Runnable task, String name) {
        try {
            workManager.scheduleWork(new Task(task, name, false, null));
        } catch (WorkException e) {
            throw new RejectedExecutionException("the WorkManager refused the " + name + " Work: " + e, e);
        }
    }

    /** Retries and deadlines on the bootstrap context's timer. */
    Scheduler scheduler() {
        return (task, delay) -> {
            TimerTask timerTask = new TimerTask() {
                @Override
                public void run() {
                    try {
                        task.run();
                    } catch (RuntimeException | Error e) { // a failing task must not kill the shared timer
                        LOG.log(System.Logger.Level.WARNING, "RDMA timer task failed", e);
                    }
                }
            };
            timer.schedule(timerTask, timerDelayMillis(delay));
            return timerTask::cancel;
        };
    }

    /**
     * What ends the event loop when the server releases its Work (the engine's close). Runs at once if the server
     * released it already; runs at most once.
     */
    void onLoopRelease(Runnable action) {
        loopRelease.set(action);
    }

    void close() {
        timer.cancel();
    }

    /** The release action of the loop's Work: set once the engine exists; a release before that runs it then. */
    private static final class LoopRelease {
        private Runnable action;
        private boolean released;
        private boolean ran;

        void set(Runnable action) {
            synchronized (this) {
                this.action = action;
                if (!released) {
                    return;
                }
            }
            runOnce();
        }

        void release() {
            synchronized (this) {
                released = true;
                if (action == null) {
                    return;
                }
            }
            runOnce();
        }

        private void runOnce() {
            Runnable a;
            synchronized (this) {
                if (ran) {
                    return;
                }
                ran = true;
                a = action;
            }
            LOG.log(System.Logger.Level.INFO, "the server released the RDMA event loop's Work; ending the loop");
            try {
                a.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "ending the RDMA event loop on release failed", e);
            }
        }
    }

    // java.util.Timer adds the delay to the current time and refuses a sum that overflows; Duration.toMillis()
    // throws first for the largest durations. A thousand years is "never" for a retry or a deadline.
    private static final Duration MAX_TIMER_DELAY = Duration.ofDays(365L * 1000);

    /** {@code delay} as java.util.Timer takes it: at least 1 ms, at most {@link #MAX_TIMER_DELAY}. */
    static long timerDelayMillis(Duration delay) {
        if (delay.isNegative()) {
            return 1;
        }
        return delay.compareTo(MAX_TIMER_DELAY) > 0 ? MAX_TIMER_DELAY.toMillis() : Math.max(1, delay.toMillis());
    }

    static Duration loopStartTimeout() {
        return Duration.ofSeconds(60);
    }

    /** A Runnable as Work, with the long-running hint where the server understands hints. */
    private final class Task implements Work, WorkContextProvider {
        private static final long serialVersionUID = 1L;
        // dropped once run: a server thread may keep its last Work long after it ran (WildFly's pool threads do),
        // and the loop's task holds the whole engine
        private transient volatile Runnable task;
        private final String name;
        private final boolean longRunning;
        private transient volatile LoopRelease release;

        /** {@code release}: what {@link #release()} runs; null for short Work (deliveries end on their own). */
        Task(Runnable task, String name, boolean longRunning, LoopRelease release) {
            this.task = task;
            this.name = name;
            this.longRunning = longRunning;
            this.release = release;
        }

        @Override
        public void run() {
            Runnable t = task;
            try {
                if (t != null) {
                    t.run();
                }
            } finally {
                task = null;
                release = null;
            }
        }

        @Override
        public void release() {
            LoopRelease r = release;
            if (r != null) {
                r.release();
            }
        }

        @Override
        public List<WorkContext> getWorkContexts() {
            if (!hints) {
                return List.of();
            }
            HintsContext context = new HintsContext();
            context.setName(name);
            context.setHint(HintsContext.LONGRUNNING_HINT, longRunning);
            return List.of(context);
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
