package org.rdmaconnector.verbs.engine;

import com.sun.jna.Memory;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.rdmaconnector.connector.RdmaException;
import org.rdmaconnector.verbs.RdmaErrors;
import org.rdmaconnector.verbs.jna.Layout;
import org.rdmaconnector.verbs.jna.LibC;
import org.rdmaconnector.verbs.jna.Mem;

/**
 * Multiplexes many channel fds on one epoll loop: readiness becomes copied, acknowledged events (read by each
 * {@link EventSource}), handed to the caller's delivery {@link Executor}. Events with the same order key are
 * delivered one at a time, in order; at most {@code maxInFlight} events per registration are read and not yet
 * delivered: at the bound the engine stops reading that fd (backpressure, nothing buffered without limit) and
 * resumes when deliveries catch up. The loop thread comes from the caller's {@link ThreadFactory}; the engine starts
 * no other thread. The loop never runs a handler and never sleeps: a task the delivery executor refuses stays pending
 * (its events kept, in order), its registration stops reading, and the loop submits it again with backoff. Every
 * wait of another thread on the loop is bounded; a breach is logged and counted ({@link #loopWaitTimeouts()}).
 * Thread-safe.
 */
public final class EventEngine implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(EventEngine.class.getName());
    /** The default bound on events in flight per registration. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 1024;
    /** {@link #DEFAULT_BUSY_POLL} in microseconds, for settings in that unit. */
    public static final int DEFAULT_BUSY_POLL_MICROS = 50;
    /**
     * The default busy-poll budget: 50 us, the value the Linux documentation recommends for socket busy polling
     * ({@code net.core.busy_poll}). Long enough for the next completion of a busy RC connection on hardware (a round
     * trip takes a few microseconds), short enough that an idle connection costs nothing and a quiet one little.
     */
    public static final Duration DEFAULT_BUSY_POLL = Duration.of(DEFAULT_BUSY_POLL_MICROS, ChronoUnit.MICROS);
    /** The largest busy-poll budget: 100 ms. */
    public static final Duration MAX_BUSY_POLL = Duration.ofMillis(100);
    /** {@link #DEFAULT_WAITER_HOLD} in microseconds, for settings in that unit. */
    public static final int DEFAULT_WAITER_HOLD_MICROS = 5000;
    /**
     * The default waiter hold ({@link #setWaiterHold}): 5 ms, longer than a thread's usual gap between two awaits even
     * in an emulated VM (where a 1 ms hold ran out between READs now and then, and each time the next completion woke
     * the loop). A completion nobody polls for is read at most about two holds late while threads keep awaiting the
     * queue.
     */
    public static final Duration DEFAULT_WAITER_HOLD = Duration.of(DEFAULT_WAITER_HOLD_MICROS, ChronoUnit.MICROS);
    /** The longest waiter hold: 1 s. */
    public static final Duration MAX_WAITER_HOLD = Duration.ofSeconds(1);
    private static final int MAX_EPOLL_EVENTS = 64;
    // events read from one source before the loop turns to the others (fairness)
    private static final int READ_BUDGET = 64;
    // events one delivery task hands over before it yields its executor thread
    private static final int DELIVERY_BUDGET = 64;
    private static final long WAKE_TOKEN = 0;
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);
    // how long another thread waits for the loop to run a command or to end before it reports a stuck loop
    private static final Duration LOOP_WAIT_BOUND = Duration.ofSeconds(20);
    // backoff of the loop's resubmission of refused tasks: the epoll_wait timeout while any are pending
    private static final long FIRST_RETRY_MILLIS = 10;
    private static final long LAST_RETRY_MILLIS = 1000;
    // a saturated executor refuses again and again: a registration's refusals are logged at WARNING (and the
    // recovery at INFO) once per period, the others at DEBUG, so a busy server's log is not flooded
    private static final long REFUSAL_REPORT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Executor delivery;
    private final int epfd;
    private final int wakeFd;
    private final Layout.EpollEvent epollLayout;
    private final Memory epollEvents;
    private final Memory ctlEvent;
    private final Memory wakeBuffer = Mem.allocate(8);
    private final Memory wakeReadBuffer = Mem.allocate(8);
    private final Map<Long, Reg<?>> registrations = new ConcurrentHashMap<>();
    // sources to read again in the next pass, newest first: a stack the registrations link themselves into (each at
    // most once), so that adding one, which a busy-polling loop does in every pass, makes no queue node
    private final AtomicReference<Reg<?>> resumed = new AtomicReference<>();
    private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
    // delivery tasks the executor refused, pending until it accepts them (added from any thread, resubmitted by the
    // loop, or by close() once the loop ended): nothing is dropped and each keeps its own order
    private final Queue<Reg<?>.OrderQueue> refused = new ConcurrentLinkedQueue<>();
    // a delivery task ended while tasks were refused: an executor thread came free, so try again before the backoff
    private final AtomicBoolean capacityReturned = new AtomicBoolean();
    private final java.util.concurrent.atomic.AtomicLong loopWaitTimeouts = new java.util.concurrent.atomic.AtomicLong();
    // package-private so tests can shorten it
    volatile Duration loopWaitBound = LOOP_WAIT_BOUND;
    // how long after its last event a busy-pollable source is polled again instead of armed and waited for
    private volatile long busyPollNanos = DEFAULT_BUSY_POLL.toNanos();
    // loop thread only: a source was busy-polled in this pass (the loop yields its CPU before the next)
    private boolean busyPolledInPass;
    // how long the loop leaves a source unarmed after a thread awaited it (Reg.leftToWaiters)
    private volatile long waiterHoldNanos = DEFAULT_WAITER_HOLD.toNanos();
    // sources the loop left unarmed to waiting threads, each looked at again when its hold ends (loop thread only)
    private final List<Reg<?>> held = new ArrayList<>();
    // removed by the loop (engine close, failed sources) and not yet drained: close() waits for their deliveries
    private final List<Reg<?>> allClosed = new ArrayList<>();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    // set by close() or by a loop that ended on its own; closeCalled: close() ran (it drains once)
    private final AtomicBoolean closing = new AtomicBoolean();
    private final AtomicBoolean closeCalled = new AtomicBoolean();
    private final CountDownLatch loopStarted = new CountDownLatch(1);
    private final CountDownLatch loopExited = new CountDownLatch(1);
    // taken once, by the loop as it starts or by close() when it never did: the taker closes the fds
    private final AtomicBoolean loopClaimed = new AtomicBoolean();
    private final AtomicInteger nextToken = new AtomicInteger();
    private volatile Thread loop;
    // why the loop ended without close(), or null
    private volatile Throwable loopFailure;
    // set under the lock of wakeBuffer (resp. ctlEvent) when the loop closed the eventfd (resp. epoll fd): the fd
    // number may belong to another file by then, so nothing may write to it or control it again
    private boolean wakeFdClosed;
    private boolean epfdClosed;
    // the loop has a thread of its own (from a ThreadFactory), which close() waits to end
    private final boolean ownThread;

    /**
     * Creates the epoll fd and the wake-up eventfd and starts the loop on a thread from {@code threads}.
     *
     * @param threads makes the one loop thread (in an application server: a managed thread factory)
     * @param delivery runs the deliveries (a WorkManager, an OSGi-managed executor, a pool) on its own threads: one
     *     that runs a task on the submitting thread (a direct executor, {@code CallerRunsPolicy}) would run handlers
     *     on the loop, or on a thread that holds a source while it reads it
     */
    public EventEngine(ThreadFactory threads, Executor delivery) {
        this(startingThreadsOf(threads), delivery, "thread factory", START_TIMEOUT, true);
    }

    /**
     * An engine whose loop runs as one long task on {@code loopRunner} (in a resource adapter: long-running Work
     * started on the WorkManager), which must start it within {@code startTimeout}.
     *
     * @param loopRunner runs the loop task; the task returns when the engine is closed
     * @param delivery runs the deliveries
     * @param startTimeout how long to wait for the loop task to start, from 1 ms to 1 day
     * @throws IllegalStateException if the loop did not start in time
     * @throws IllegalArgumentException if {@code startTimeout} is outside its range
     */
    public static EventEngine runningOn(Executor loopRunner, Executor delivery, Duration startTimeout) {
        if (loopRunner == null || startTimeout == null) {
            throw new IllegalArgumentException("loopRunner and startTimeout must not be null");
        }
        if (startTimeout.compareTo(Duration.ofMillis(1)) < 0 || startTimeout.compareTo(MAX_START_TIMEOUT) > 0) {
            throw new IllegalArgumentException("startTimeout must be from 1 ms to " + MAX_START_TIMEOUT + ", was "
                + startTimeout);
        }
        return new EventEngine(loopRunner, delivery, "loop executor", startTimeout, false);
    }

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    // a start taking longer is a failure to report, and larger values overflow toMillis()
    private static final Duration MAX_START_TIMEOUT = Duration.ofDays(1);

    private static Executor startingThreadsOf(ThreadFactory threads) {
        if (threads == null) {
            throw new IllegalArgumentException("threads must not be null");
        }
        return task -> {
            Thread thread = threads.newThread(task);
            if (thread == null) {
                throw new IllegalStateException("the thread factory returned no thread");
            }
            thread.start();
        };
    }

    private EventEngine(Executor loopRunner, Executor delivery, String runnerName, Duration startTimeout,
                        boolean ownThread) {
        this.ownThread = ownThread;
        if (delivery == null) {
            throw new IllegalArgumentException("delivery must not be null");
        }
        this.delivery = delivery;
        this.epollLayout = epollLayoutOf(Layout.ARCH);
        this.epollEvents = Mem.allocate((long) MAX_EPOLL_EVENTS * epollLayout.size());
        this.ctlEvent = Mem.allocate(epollLayout.size());
        int ep = LibC.epoll_create1(Layout.EPOLL_CLOEXEC);
        if (ep < 0) {
            throw RdmaErrors.of("epoll_create1", Mem.errno());
        }
        int wake = LibC.eventfd(0, Layout.EFD_NONBLOCK | Layout.EFD_CLOEXEC);
        if (wake < 0) {
            int errno = Mem.errno();
            LibC.close(ep);
            throw RdmaErrors.of("eventfd", errno);
        }
        this.epfd = ep;
        this.wakeFd = wake;
        try {
            control(Layout.EPOLL_CTL_ADD, wake, Layout.EPOLLIN, WAKE_TOKEN);
            loopRunner.execute(this::run);
        } catch (RuntimeException | Error e) {
            LibC.close(wake);
            LibC.close(ep);
            throw e;
        }
        boolean started;
        try {
            started = loopStarted.await(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            started = false;
        }
        if (!started) {
            close(); // the loop, if it ever starts, sees 'closing' and releases the fds
            throw new IllegalStateException("the " + runnerName + " did not start the RDMA event loop within "
                + startTimeout.toMillis() + " ms");
        }
    }

    /**
     * The layout of {@code struct epoll_event} on architecture {@code arch} (as {@code os.arch} names it).
     *
     * @throws RdmaException EOPNOTSUPP when this build has not laid it out for {@code arch}: epoll_wait would write
     *     past its buffer, so the engine refuses to start
     */
    static Layout.EpollEvent epollLayoutOf(String arch) {
        Layout.EpollEvent layout = Layout.epollEventOf(arch);
        if (layout == null) {
            throw RdmaErrors.explained("epoll_wait", Layout.EOPNOTSUPP, "struct epoll_event is not laid out for "
                + "architecture '" + arch + "' (os.arch) in this build, so the RDMA event loop does not start; laid "
                + "out: " + Layout.EpollEvent.ARCHITECTURES);
        }
        return layout;
    }

    /** Registers {@code source} with the default bound of {@value #DEFAULT_MAX_IN_FLIGHT} events in flight. */
    public <E> Registration register(EventSource<E> source, EventHandler<? super E> handler) {
        return register(source, handler, DEFAULT_MAX_IN_FLIGHT);
    }

    /**
     * Registers {@code source}: its events go to {@code handler}, at most {@code maxInFlight} read and undelivered.
     *
     * @param maxInFlight from 1 to 1,000,000
     */
    public <E> Registration register(EventSource<E> source, EventHandler<? super E> handler, int maxInFlight) {
        return register(source, handler, maxInFlight, false);
    }

    private <E> Registration register(EventSource<E> source, EventHandler<? super E> handler, int maxInFlight,
                                      boolean onLoop) {
        if (source == null || handler == null) {
            throw new IllegalArgumentException("source and handler must not be null");
        }
        if (maxInFlight < 1 || maxInFlight > 1_000_000) {
            throw new IllegalArgumentException("maxInFlight must be from 1 to 1000000, was " + maxInFlight);
        }
        ensureOpen();
        source.open();
        long token = nextToken.incrementAndGet();
        Reg<E> reg = new Reg<>(token, source, handler, maxInFlight, onLoop);
        registrations.put(token, reg);
        try {
            control(Layout.EPOLL_CTL_ADD, reg.fd, Layout.EPOLLIN | Layout.EPOLLONESHOT, token);
        } catch (RuntimeException e) {
            registrations.remove(token);
            source.close();
            throw e;
        }
        if (closing.get()) {
            // the loop may have taken its last look at the registrations before this one came in
            onLoop(reg::remove, "the removal of the late registration " + reg.name);
            ensureOpen();
        }
        return reg;
    }

    /**
     * Registers {@code source} with a handler that runs on the loop thread itself, as each event is read: no
     * executor, no queue, nothing in flight, so it keeps running while the delivery executor is busy or refuses.
     * Only for the connector's own bookkeeping that never blocks and calls no user code (completing a work request,
     * handing a CM event to a thread that waits for it); an exception is logged and counted like a delivery's.
     */
    public <E> Registration registerOnLoop(EventSource<E> source, EventHandler<? super E> handler) {
        return register(source, handler, 1, true);
    }

    /**
     * Waits of other threads on the loop (a command such as a registration's removal, the loop's end in
     * {@link #close()}) that ran out of their bound because the loop was busy or stuck; each is logged at WARNING.
     */
    public long loopWaitTimeouts() {
        return loopWaitTimeouts.get();
    }

    /**
     * Sets the busy-poll budget (hybrid polling, as in NAPI or io_uring's hybrid poll): after an event of a
     * busy-pollable source (work completions), the loop polls that source again between its looks at the other fds
     * until it has found nothing for this long, and only then arms it and lets epoll sleep. Under load no wake-up and
     * no CQ event is needed per completion; the price is up to this much of the loop's CPU after each last event.
     * While it busy-polls, the loop yields its CPU once per pass, so a thread it has just woken (a delivery thread,
     * an awaiting thread) is not kept waiting for a CPU it shares with the loop.
     * A delivery thread that delivered an event of such a source in less than this budget then polls the source
     * itself for up to the budget (one thread per source at a time, the loop leaving the source to it as to a
     * waiter): the next event of its key, often the answer to what its handler sent, is delivered on that thread
     * with no hand-over from the loop, and the other keys' events it reads are dispatched as the loop would.
     * Zero turns it off (arm and sleep as soon as the source runs dry). Takes effect at once.
     *
     * @param budget from 0 to {@link #MAX_BUSY_POLL}
     */
    public void setBusyPoll(Duration budget) {
        if (budget == null || budget.isNegative() || budget.compareTo(MAX_BUSY_POLL) > 0) {
            throw new IllegalArgumentException("the busy-poll budget must be from 0 to " + MAX_BUSY_POLL.toMillis()
                + " ms, was " + budget);
        }
        busyPollNanos = budget.toNanos();
    }

    /** The busy-poll budget ({@link #setBusyPoll}). */
    public Duration busyPoll() {
        return Duration.ofNanos(busyPollNanos);
    }

    /**
     * Sets the waiter hold. Where threads that await their own completions read the source themselves
     * ({@link Registration#pollUntil}), the loop leaves the source unarmed while they do and for this long after a
     * thread last awaited it: a completion then raises no CQ event, so the loop is not woken to take the CPU from the
     * thread that posts and awaits (on rxe the whole operation runs in that thread's post). The loop looks at the
     * source once per hold, reads what nobody polled for, and arms it once a whole hold passed without a thread
     * awaiting it. A waiter that gives up before its completion comes arms the source at once, so it is not kept
     * waiting for the hold. Zero arms as soon as the last waiter leaves. Takes effect at the next hold.
     *
     * @param hold from 0 to {@link #MAX_WAITER_HOLD}
     */
    public void setWaiterHold(Duration hold) {
        if (hold == null || hold.isNegative() || hold.compareTo(MAX_WAITER_HOLD) > 0) {
            throw new IllegalArgumentException("the waiter hold must be from 0 to " + MAX_WAITER_HOLD.toMillis()
                + " ms, was " + hold);
        }
        waiterHoldNanos = hold.toNanos();
    }

    /** The waiter hold ({@link #setWaiterHold}). */
    public Duration waiterHold() {
        return Duration.ofNanos(waiterHoldNanos);
    }

    /** Where the engine's loop stands. */
    public enum LoopState {
        /** Created; the loop has not started yet. */
        STARTING,
        /** The loop reads its registrations. */
        RUNNING,
        /** The loop ended on an error of its own ({@link #loopFailure()}); nothing is read. */
        FAILED,
        /** Closed (or closing); nothing is read. */
        CLOSED
    }

    /** The loop's state now. */
    public LoopState loopState() {
        if (loopFailure != null) {
            return LoopState.FAILED;
        }
        if (closing.get()) {
            return LoopState.CLOSED;
        }
        return loopStarted.getCount() > 0 ? LoopState.STARTING : LoopState.RUNNING;
    }

    /** Why the loop ended on its own, or null. */
    public Throwable loopFailure() {
        return loopFailure;
    }

    /** The executor the deliveries run on (the connector runs catch-up deliveries there too). */
    public Executor deliveryExecutor() {
        return delivery;
    }

    /** The current registrations (for diagnostics: shell commands, counters). */
    public List<Registration> registrations() {
        return List.copyOf(registrations.values());
    }

    /**
     * Stops the loop: removes every registration (their queued events are still delivered, bounded by a timeout),
     * closes the epoll fd and the eventfd, and returns when the loop thread has ended. Twice is a no-op.
     */
    @Override
    public void close() {
        if (!closeCalled.compareAndSet(false, true)) {
            awaitLoopExit();
            return;
        }
        closing.set(true);
        if (loopClaimed.compareAndSet(false, true)) {
            // the loop never started (the executor never ran it): nothing else will close the fds; a late start
            // finds the claim taken and returns without touching them (their numbers may belong to others by then)
            closeFds();
            loopExited.countDown();
            return;
        }
        wake();
        awaitLoopExit();
        long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        submitRefusedUntil(deadline);
        for (Reg<?> reg : new ArrayList<>(allClosed)) {
            reg.awaitDrained(deadline);
        }
    }

    // The loop has ended, so nobody else resubmits what the executor refused: this thread does, until the deadline.
    private void submitRefusedUntil(long deadlineNanos) {
        long pauseMillis = FIRST_RETRY_MILLIS;
        while (!submitRefused()) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                for (Reg<?>.OrderQueue queue; (queue = refused.poll()) != null; ) {
                    queue.abandon();
                }
                return;
            }
            synchronized (refused) {
                try {
                    // a delivery task that ends notifies: an executor thread came free
                    refused.wait(Math.max(1, Math.min(pauseMillis, TimeUnit.NANOSECONDS.toMillis(left))));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    deadlineNanos = System.nanoTime(); // give up at once, as an interrupted close should
                }
            }
            pauseMillis = Math.min(pauseMillis * 2, LAST_RETRY_MILLIS);
        }
    }

    /**
     * Submits the refused tasks again, in the order they were refused; stops at the first one refused again (the
     * executor is still saturated). Any thread; returns whether none is left.
     */
    private boolean submitRefused() {
        for (int k = refused.size(); k > 0; k--) {
            Reg<?>.OrderQueue queue = refused.poll();
            if (queue == null) {
                break;
            }
            if (!queue.resubmit()) {
                return false;
            }
        }
        return refused.isEmpty();
    }

    // A delivery task ended: if tasks wait for a free executor thread, let the loop (or a closing thread) try now.
    private void capacityReturned() {
        if (!refused.isEmpty() && capacityReturned.compareAndSet(false, true)) {
            wake();
            synchronized (refused) {
                refused.notifyAll();
            }
        }
    }

    private void loopWaitTimedOut(String what) {
        loopWaitTimeouts.incrementAndGet();
        Thread t = loop;
        LOG.log(Level.WARNING, "the RDMA event loop" + (t == null ? "" : " (thread " + t.getName() + ")")
            + " did not " + what + " within " + loopWaitBound.toMillis() + " ms: it is busy or stuck"
            + (t == null ? "" : " at " + (t.getStackTrace().length == 0 ? "?" : t.getStackTrace()[0])));
    }

    private void awaitLoopExit() {
        if (Thread.currentThread() == loop || loopStarted.getCount() != 0) {
            return; // on the loop itself, or the loop never started (it exits at once if it ever does)
        }
        // bounded: a loop stuck in a source must not hang the undeployment. Returning early is safe: the loop
        // closes its epoll fd and eventfd itself when it ends, and nothing here touches them
        long deadline = System.nanoTime() + loopWaitBound.toNanos();
        boolean interrupted = false;
        boolean ended = false;
        while (!ended) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                ended = loopExited.await(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        Thread t = loop;
        while (ended && ownThread && t != null && t.isAlive()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                ended = false;
                break;
            }
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (!ended) {
            loopWaitTimedOut("end after close()");
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void ensureOpen() {
        if (closing.get()) {
            Throwable failure = loopFailure;
            throw failure == null ? new IllegalStateException("EventEngine is closed")
                : new IllegalStateException("EventEngine is closed: its loop failed (" + failure + ")", failure);
        }
    }

    private void control(int op, int fd, int events, long token) {
        synchronized (ctlEvent) {
            if (epfdClosed) {
                ensureOpen();
                throw new IllegalStateException("EventEngine is closed");
            }
            ctlEvent.setInt(epollLayout.events(), events);
            ctlEvent.setLong(epollLayout.data(), token);
            if (LibC.epoll_ctl(epfd, op, fd, Mem.address(ctlEvent)) != 0) {
                throw RdmaErrors.of("epoll_ctl", Mem.errno(), "fd " + fd);
            }
        }
    }

    // Wakes the loop; the eventfd is written only when the loop may be asleep and no wake-up is pending.
    private void wake() {
        if (Thread.currentThread() != loop && wakePending.compareAndSet(false, true)) {
            synchronized (wakeBuffer) {
                if (!wakeFdClosed) {
                    wakeBuffer.setLong(0, 1);
                    LibC.write(wakeFd, Mem.address(wakeBuffer), 8);
                }
            }
        }
    }

    private void run() {
        if (!loopClaimed.compareAndSet(false, true)) {
            return; // close() came first and closed the fds
        }
        loop = Thread.currentThread();
        loopStarted.countDown();
        long events = Mem.address(epollEvents);
        long wakeRead = Mem.address(wakeReadBuffer); // a field: JNA frees a Memory once it is unreachable
        long retryMillis = FIRST_RETRY_MILLIS;
        long nextRetry = 0; // System.nanoTime() of the next resubmission, while tasks are refused
        boolean retrying = false;
        try {
            while (!closing.get()) {
                if (busyPolledInPass) {
                    // as NAPI's busy poll ends its spin when another task needs the CPU (need_resched): a thread this
                    // loop just woke (a delivery thread, a waiter that slept) runs now, not after the loop's time
                    // slice; with nothing else runnable on this CPU the yield returns at once
                    busyPolledInPass = false;
                    Thread.yield();
                }
                int timeout = -1;
                if (resumed.get() != null) {
                    timeout = 0; // sources that used their read budget are waiting: only look, do not sleep
                } else if (!refused.isEmpty()) {
                    if (!retrying) {
                        retrying = true;
                        nextRetry = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retryMillis);
                    }
                    // the backoff is epoll_wait's timeout: the loop stays responsive and never sleeps
                    timeout = (int) Math.max(0, TimeUnit.NANOSECONDS.toMillis(nextRetry - System.nanoTime() + 999_999));
                }
                if (timeout != 0 && !held.isEmpty()) {
                    int untilHeld = millisUntilHeldLook();
                    timeout = timeout < 0 ? untilHeld : Math.min(timeout, untilHeld);
                }
                int n = LibC.epoll_wait(epfd, events, MAX_EPOLL_EVENTS, timeout);
                if (n < 0) {
                    int errno = Mem.errno();
                    if (errno == Layout.EINTR) {
                        continue;
                    }
                    loopFailure = RdmaErrors.of("epoll_wait", errno);
                    LOG.log(Level.ERROR, "RDMA event loop failed; the engine is closed: " + loopFailure.getMessage());
                    break;
                }
                for (int i = 0; i < n; i++) {
                    long token = Mem.getLong(events + (long) i * epollLayout.size() + epollLayout.data());
                    if (token == WAKE_TOKEN) {
                        // consume, THEN allow the next wake-up: the other order loses one that comes in between
                        // (its write is read here, and no later wake-up writes again), and the loop then sleeps
                        // through commands, resumed sources and close(). One that comes before the reset finds its
                        // work done below, in this pass.
                        LibC.read(wakeFd, wakeRead, 8);
                        wakePending.set(false);
                    } else {
                        Reg<?> reg = registrations.get(token);
                        if (reg != null) {
                            reg.pump();
                        }
                    }
                }
                for (Runnable command; (command = commands.poll()) != null; ) {
                    command.run();
                }
                if (retrying && (capacityReturned.getAndSet(false) || System.nanoTime() - nextRetry >= 0)) {
                    if (submitRefused()) {
                        retrying = false;
                        retryMillis = FIRST_RETRY_MILLIS;
                    } else {
                        retryMillis = Math.min(retryMillis * 2, LAST_RETRY_MILLIS);
                        nextRetry = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retryMillis);
                    }
                }
                pumpResumed();
                if (!held.isEmpty()) {
                    lookAtHeld();
                }
            }
        } catch (Throwable t) {
            loopFailure = t;
            LOG.log(Level.ERROR, "RDMA event loop failed; the engine is closed", t);
        } finally {
            // a loop that failed closes the engine: nothing may register on it any more
            closing.set(true);
            for (Runnable command; (command = commands.poll()) != null; ) {
                command.run();
            }
            for (Reg<?> reg : new ArrayList<>(registrations.values())) {
                reg.remove();
                if (loopFailure != null) {
                    reg.failure = loopFailure;
                }
            }
            closeFds();
            loopExited.countDown();
        }
    }

    // Once, by whoever claimed the loop: the eventfd and epoll fd, guarded against writers and epoll_ctl callers.
    private void closeFds() {
        synchronized (wakeBuffer) {
            wakeFdClosed = true;
            LibC.close(wakeFd);
        }
        synchronized (ctlEvent) {
            epfdClosed = true;
            LibC.close(epfd);
        }
        epollEvents.close();
    }

    /**
     * Runs {@code command} on the loop thread and waits for it (directly if called from the loop thread), at most
     * {@link #loopWaitBound}.
     *
     * @throws IllegalStateException if the loop did not run it in time (logged, counted): when the loop had not
     *     taken it yet it never will; when it had, it may still finish later
     */
    private void onLoop(Runnable command, String what) {
        if (Thread.currentThread() == loop || loopExited.getCount() == 0) {
            command.run();
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        // QUEUED -> RUNNING by whoever runs it, or QUEUED -> ABANDONED by a caller that waited too long
        AtomicInteger state = new AtomicInteger(QUEUED);
        commands.add(() -> {
            if (!state.compareAndSet(QUEUED, RUNNING)) {
                return;
            }
            try {
                command.run();
            } finally {
                done.countDown();
            }
        });
        wake();
        long deadline = System.nanoTime() + loopWaitBound.toNanos();
        boolean interrupted = false;
        while (true) {
            try {
                if (done.await(100, TimeUnit.MILLISECONDS) || loopExited.getCount() == 0) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
            if (System.nanoTime() - deadline >= 0) {
                boolean taken = !state.compareAndSet(QUEUED, ABANDONED);
                loopWaitTimedOut((taken ? "finish " : "take ") + what);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                throw new IllegalStateException("the RDMA event loop did not " + (taken ? "finish " : "take ") + what
                    + " within " + loopWaitBound.toMillis() + " ms (busy or stuck); "
                    + (taken ? "it may still finish later" : "it was not done"));
            }
        }
        if (done.getCount() != 0) {
            // the loop ended between our check and the command: run what is left here, under the same guard
            synchronized (commands) {
                for (Runnable c; (c = commands.poll()) != null; ) {
                    c.run();
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Any thread: {@code reg} is read again in the loop's next pass (woken by the caller if it sleeps). */
    private void resume(Reg<?> reg) {
        if (!reg.resumeQueued.compareAndSet(false, true)) {
            return; // there already
        }
        Reg<?> below;
        do {
            below = resumed.get();
            reg.nextResumed = below;
        } while (!resumed.compareAndSet(below, reg));
    }

    /**
     * Loop thread: reads again the sources resumed before this pass, oldest first (one resumed meanwhile waits for
     * the next pass: a source that never runs dry must not starve the others).
     */
    private void pumpResumed() {
        Reg<?> oldest = null;
        for (Reg<?> reg = resumed.getAndSet(null); reg != null; ) { // newest first: turned around
            Reg<?> below = reg.nextResumed;
            reg.nextResumed = oldest;
            oldest = reg;
            reg = below;
        }
        while (oldest != null) {
            Reg<?> reg = oldest;
            oldest = reg.nextResumed;
            reg.nextResumed = null;
            reg.resumeQueued.set(false); // before its pump, which may resume it again
            reg.pump();
        }
    }

    // Loop thread only: epoll_wait's timeout until the first held source is due, rounded up to whole milliseconds
    private int millisUntilHeldLook() {
        long first = Long.MAX_VALUE;
        long now = System.nanoTime();
        for (int i = 0; i < held.size(); i++) {
            first = Math.min(first, held.get(i).heldUntil - now);
        }
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(first + 999_999)));
    }

    // Loop thread only: looks at each held source whose hold has ended (one held again is added after the others)
    private void lookAtHeld() {
        long now = System.nanoTime();
        for (int i = held.size() - 1; i >= 0; i--) {
            Reg<?> reg = held.get(i);
            if (now - reg.heldUntil >= 0) {
                held.remove(i);
                reg.holdEnded();
            }
        }
    }

    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int ABANDONED = 2;

    /** One registered source, its per-key delivery queues and counters. */
    private final class Reg<E> implements Registration {
        final long token;
        final EventSource<E> source;
        final EventHandler<? super E> handler;
        final int maxInFlight;
        final int fd;
        final String name;
        final OrderQueue single = new OrderQueue(null);
        final Map<Object, OrderQueue> byKey = new ConcurrentHashMap<>();
        final AtomicInteger inFlight = new AtomicInteger();
        volatile boolean paused;
        volatile boolean removed;
        volatile Throwable failure;
        volatile long read;
        final java.util.concurrent.atomic.AtomicLong delivered = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong errors = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong refusals = new java.util.concurrent.atomic.AtomicLong();
        // its queues waiting in 'refused': while any wait, its fd is not read (backpressure on the peer)
        final AtomicInteger refusedQueues = new AtomicInteger();
        // when a refusal was last logged at WARNING, and whether the current refusal was
        volatile long refusalReportedAt;
        volatile boolean refusalReported;
        final AtomicBoolean closed = new AtomicBoolean();

        // handled on the loop as read (registerOnLoop): no delivery queue, no executor
        final boolean onLoop;
        // busy polling (loop thread only): whether the source allows it, when it last gave an event, and the polls
        // that found nothing yet kept the source unarmed (the engine's MBean shows them)
        final boolean pollable;
        long lastEventAt;
        volatile long busyPolls;
        // read on the loop, by waiting threads (pollUntil) and by a delivery thread after its delivery (pollForNext):
        // one reader at a time, the loop included, so the source keeps its order; null for a source not busy-pollable
        final ReentrantLock reading;
        volatile long readByWaiters;
        // a delivery thread polls the source after its delivery now (pollForNext): one at a time per registration
        final AtomicBoolean deliveryPolls = new AtomicBoolean();
        // in the engine's resumed stack (at most once), and the registration below it there
        final AtomicBoolean resumeQueued = new AtomicBoolean();
        Reg<?> nextResumed;
        // threads in pollUntil now; while any polls, the loop neither busy-polls nor arms the source, and the last to
        // leave arms it if the loop left that to it (armingOwed: set before waiters is read, so one of them arms)
        final AtomicInteger waiters = new AtomicInteger();
        volatile boolean armingOwed;
        // the waiter hold: while holdPending, the loop will look at the source at heldUntil (loop only), so a waiter
        // that got what it waited for leaves the arming to that look; awaitedAt: when a thread last called pollUntil
        // (it may have found its event read by the loop already: it would have read it itself); waiterGaveUp: a
        // waiter left without what it waited for, so the source is armed at once for the thread that now sleeps
        volatile boolean holdPending;
        long heldUntil;
        volatile long awaitedAt;
        volatile boolean waiterGaveUp;
        // when a waiter (pollUntil, pollForNext) last read the source; while waiters keep reading it within each hold,
        // the loop's look at the hold's end is put off (holdEnded)
        volatile long lookedAt;

        Reg(long token, EventSource<E> source, EventHandler<? super E> handler, int maxInFlight, boolean onLoop) {
            this.onLoop = onLoop;
            this.token = token;
            this.source = source;
            this.handler = handler;
            this.maxInFlight = maxInFlight;
            this.fd = source.fd();
            this.name = source.name();
            this.pollable = source.busyPollable();
            this.lastEventAt = System.nanoTime() - MAX_BUSY_POLL.toNanos() - 1; // no event yet: not busy-polled
            this.awaitedAt = System.nanoTime() - MAX_WAITER_HOLD.toNanos() - 1; // never awaited yet: not held
            this.lookedAt = awaitedAt;
            this.reading = pollable ? new ReentrantLock() : null;
        }

        // Loop thread only: whether the source had an event within the busy-poll budget, so it is polled again
        // instead of armed and waited for
        private boolean busyPolling() {
            long budget = busyPollNanos;
            return pollable && budget > 0 && System.nanoTime() - lastEventAt < budget;
        }

        // Loop thread only.
        void pump() {
            if (reading == null) {
                read();
                return;
            }
            reading.lock(); // a waiting thread holds it for one short poll at a time
            try {
                read();
            } finally {
                reading.unlock();
            }
        }

        private void read() {
            if (removed) {
                return;
            }
            for (int budget = READ_BUDGET; budget > 0; budget--) {
                if (refusedQueues.get() > 0) {
                    // the executor refuses its tasks: leave the fd disarmed until a resubmission succeeds
                    paused = true;
                    return;
                }
                if (inFlight.get() >= maxInFlight) {
                    paused = true;
                    // a delivery may have finished between the check and the flag: look again
                    if (inFlight.get() >= maxInFlight) {
                        return;
                    }
                    paused = false;
                }
                E event;
                try {
                    event = source.next();
                } catch (RuntimeException e) {
                    fail(e);
                    return;
                }
                if (event == null) {
                    try {
                        if (reading != null && leftToWaiters()) {
                            return;
                        }
                    } catch (RuntimeException e) {
                        fail(e);
                        return;
                    }
                    if (busyPolling()) {
                        busyPolls++;
                        busyPolledInPass = true;
                        resume(this); // polled again after a look at the other fds, its own still unarmed
                        return;
                    }
                    try {
                        waiterGaveUp = false; // armed now, for whoever sleeps
                        // an event that came before the arming is read now: epoll would not report it. Polled, never
                        // next(): a completion that came since the arming raised the arming's own CQ event, and next()
                        // would take it, leaving the queue unarmed while the loop sleeps (when all it read completed
                        // inline, no event follows to make the loop decide again). Left on the channel, that event
                        // wakes the loop, whose next pass reads it and arms again.
                        if (!source.armBeforeWait() || (event = source.poll()) == null) {
                            control(Layout.EPOLL_CTL_MOD, fd, Layout.EPOLLIN | Layout.EPOLLONESHOT, token);
                            return;
                        }
                    } catch (RuntimeException e) {
                        fail(e);
                        return;
                    }
                }
                read++;
                if (pollable) {
                    lastEventAt = System.nanoTime();
                }
                if (onLoop) {
                    handleOnLoop(event);
                    continue;
                }
                inFlight.incrementAndGet();
                dispatch(event);
            }
            resume(this); // budget used: come back after the others
        }

        // Loop thread, holding reading, the source run dry: while a thread polls it (pollUntil), or within the waiter
        // hold after one awaited it, the loop leaves it to the waiters, unarmed (no CQ event, no busy poll beside the
        // waiter's), and looks at it again when the hold ends; the last waiter to leave without what it waited for
        // arms it at once (leave)
        private boolean leftToWaiters() {
            armingOwed = true;
            long hold = waiterHoldNanos; // read once: a hold decided on is a look scheduled
            if (waiters.get() > 0 || keptByWaiters(hold)) {
                control(Layout.EPOLL_CTL_MOD, fd, Layout.EPOLLIN | Layout.EPOLLONESHOT, token);
                hold(hold);
                return true;
            }
            armingOwed = false; // no waiter: armed (or busy-polled) below, as ever
            return false;
        }

        // Loop thread: whether a thread awaited the source within the hold, and none gave up since it was last armed
        private boolean keptByWaiters(long hold) {
            return hold > 0 && !waiterGaveUp && System.nanoTime() - awaitedAt < hold;
        }

        // Loop thread: whether a waiter polls the source now, or read it within the hold, and none gave up since it was
        // last armed. A thread that found its event done without polling (pollUntil) does not count: it read nothing
        private boolean lookedAtByWaiters(long hold) {
            return hold > 0 && !waiterGaveUp && (waiters.get() > 0 || System.nanoTime() - lookedAt < hold);
        }

        // Loop thread: a look at the source when the waiter hold ends (one at a time); none for a hold of 0 (then the
        // last waiter arms the source as it leaves)
        private void hold(long hold) {
            if (hold > 0 && !holdPending) {
                heldUntil = System.nanoTime() + hold;
                holdPending = true;
                held.add(this);
            }
        }

        // Loop thread, the hold ended: unless a waiter read the source during the hold (then it holds on, unread: the
        // waiters read what comes while they keep looking, and a look by the loop would only take the CPU from them),
        // reads what is there and decides again (hold on, or arm)
        void holdEnded() {
            holdPending = false;
            if (armingOwed && !removed) {
                long hold = waiterHoldNanos;
                if (lookedAtByWaiters(hold)) {
                    hold(hold); // what came is theirs to read; the loop looks once a hold passed without a look
                    return;
                }
                pump();
            }
        }

        // A waiter leaves (done: it got what it waited for). The last one arms the source if the loop left that to
        // the waiters, then polls it once more, as the loop does before it waits (a completion that came before the
        // arming raises no event); one that got what it waited for leaves the arming to the loop's look at the end
        // of the hold, while one is pending
        private void leave(boolean done) {
            if (!done) {
                // before the decrement: the last waiter, or the loop's next decision, sees them; this await no longer
                // keeps the source unarmed, since its thread now sleeps until someone reads its completion
                awaitedAt = System.nanoTime() - MAX_WAITER_HOLD.toNanos() - 1;
                waiterGaveUp = true;
            }
            if (waiters.decrementAndGet() > 0 || !armingOwed || (!waiterGaveUp && holdPending)) {
                return;
            }
            reading.lock();
            try {
                if (!armingOwed || waiters.get() > 0 || removed || (!waiterGaveUp && holdPending)) {
                    return; // the loop armed it meanwhile, a new waiter will, or the loop's look at the hold's end
                }
                armingOwed = false;
                waiterGaveUp = false;
                if (source.armBeforeWait() && readHere(READ_BUDGET) == READ_BUDGET) {
                    readSoon(); // more came before the arming, and raise no event: the loop reads on
                }
            } catch (RuntimeException e) {
                failedHere(e);
            } finally {
                reading.unlock();
            }
        }

        // A thread other than the loop, holding reading: reads up to max events the source holds now and handles
        // (onLoop) or dispatches each as the loop would; returns how many, or -1 when the source failed or is at its
        // bound (in flight, or tasks refused: then the loop is woken to pause it)
        private int readHere(int max) {
            int n = 0;
            try {
                for (E event; n < max; n++) {
                    if (!onLoop && (refusedQueues.get() > 0 || inFlight.get() >= maxInFlight)) {
                        readSoon();
                        return -1;
                    }
                    if ((event = source.poll()) == null) {
                        break;
                    }
                    read++;
                    readByWaiters++;
                    if (onLoop) {
                        handleOnLoop(event);
                    } else {
                        inFlight.incrementAndGet();
                        dispatch(event);
                    }
                }
                return n;
            } catch (RuntimeException e) {
                failedHere(e);
                return -1;
            }
        }

        // The source failed on a waiting thread: counted, and the loop is woken to meet the failure itself when it
        // reads next, and to drop the source (fail)
        private void failedHere(RuntimeException e) {
            errors.incrementAndGet();
            LOG.log(Level.DEBUG, name + " failed on a waiting thread: " + e.getMessage());
            readSoon();
        }

        // Any thread: the loop reads the source again in its next pass, woken if it sleeps
        private void readSoon() {
            resume(this);
            wake();
        }

        @Override
        public boolean pollUntil(BooleanSupplier done) {
            long budget = busyPollNanos;
            boolean polls = reading != null && budget > 0;
            long start = 0;
            if (polls) {
                start = System.nanoTime();
                awaitedAt = start; // even if the loop read it already: this thread would have
            }
            if (done.getAsBoolean()) {
                return true;
            }
            if (!polls) {
                return false;
            }
            waiters.incrementAndGet();
            boolean got = false;
            try {
                readUntil(done, budget, start);
                got = done.getAsBoolean();
                return got;
            } finally {
                leave(got);
            }
        }

        // A waiting thread (pollUntil) or a delivery thread (pollForNext): reads the source as the loop would until
        // done or the budget from start (System.nanoTime()) has passed, taking reading when the loop does not hold it;
        // returns how many events it read, or -1 when it stopped early: the source is closed, failed or at its bound
        // (the loop decides then)
        private int readUntil(BooleanSupplier done, long budget, long start) {
            int read = 0;
            for (long now = start; !done.getAsBoolean() && now - start < budget; now = System.nanoTime()) {
                if (removed) {
                    return -1;
                }
                if (reading.tryLock()) { // else the loop reads it now, and may be handling what this thread waits for
                    try {
                        int n = removed ? -1 : readHere(READ_BUDGET);
                        if (n < 0) {
                            return -1;
                        }
                        read += n;
                        lookedAt = now; // what had come by now is read: the loop's look at the hold's end may wait
                    } finally {
                        reading.unlock();
                    }
                }
                Thread.onSpinWait();
            }
            return read;
        }

        private void handleOnLoop(E event) {
            try {
                handler.onEvent(event);
            } catch (Exception e) {
                errors.incrementAndGet();
                LOG.log(Level.WARNING, "handler of " + name + " threw on " + event + ": " + e, e);
            }
            delivered.incrementAndGet();
        }

        private void fail(RuntimeException e) {
            errors.incrementAndGet();
            LOG.log(Level.ERROR, "RDMA event source " + name + " failed and was removed: " + e.getMessage(), e);
            remove();
            failure = e; // published once the source is closed
        }

        private void dispatch(E event) {
            Object key = source.orderKey(event);
            if (key instanceof OrderKey held && dispatchHeld(held, event)) {
                return;
            }
            while (true) {
                OrderQueue queue = key == source ? single : byKey.computeIfAbsent(key, OrderQueue::new);
                int offered = queue.offer(event);
                if (offered == OrderQueue.SCHEDULE) {
                    submit(queue);
                }
                if (offered != OrderQueue.RETIRED) {
                    return;
                }
                // the queue emptied and left the map meanwhile: take the key's new queue
            }
        }

        // The reading thread (the loop, or another thread holding reading): the key's own queue, made on its first
        // event and kept (never retired) while the key lives; false when the key holds another registration's queue
        // (then it is a plain key here). Made under the key's lock: two registrations' readers may meet here.
        private boolean dispatchHeld(OrderKey key, E event) {
            if (key.queue == null) {
                synchronized (key) {
                    if (key.queue == null) {
                        key.queue = new OrderQueue(key, true);
                    }
                }
            }
            if (!(key.queue instanceof Reg<?>.OrderQueue held) || held.registration() != this) {
                return false;
            }
            @SuppressWarnings("unchecked")
            OrderQueue queue = (OrderQueue) held;
            if (queue.offer(event) == OrderQueue.SCHEDULE) {
                submit(queue);
            }
            return true;
        }

        // Any thread. A refused task is kept for the loop to resubmit: never run here (the loop must not run
        // handlers: one that blocks would stop every channel), never dropped.
        private void submit(OrderQueue queue) {
            try {
                delivery.execute(queue);
            } catch (RuntimeException e) {
                refusals.incrementAndGet();
                if (refusedQueues.getAndIncrement() == 0) {
                    LOG.log(reportRefusal() ? Level.WARNING : Level.DEBUG, "the delivery executor refused a task for "
                        + name + " (" + e + "); its events are kept and its source is not read until the executor "
                        + "accepts again (" + refusals + " refusals in all; logged at WARNING once a minute)");
                }
                refused.add(queue);
                wake();
            }
        }

        /** Whether this refusal is logged at WARNING: the first of its {@link #REFUSAL_REPORT_NANOS} period. */
        private boolean reportRefusal() {
            long now = System.nanoTime();
            long last = refusalReportedAt;
            boolean due = last == 0 || now - last >= REFUSAL_REPORT_NANOS;
            if (due) {
                refusalReportedAt = now == 0 ? 1 : now;
            }
            refusalReported = due;
            return due;
        }

        void delivered() {
            delivered.incrementAndGet();
            settled();
        }

        // An event read has left the engine (delivered or abandoned): make room under the bound.
        private void settled() {
            int now = inFlight.decrementAndGet();
            if (paused && now < maxInFlight && !removed) {
                paused = false;
                readSoon();
            }
            if (now == 0 && removed) {
                synchronized (this) {
                    notifyAll();
                }
            }
        }

        // Loop thread only (or after the loop ended).
        void remove() {
            if (removed) {
                return;
            }
            removed = true;
            registrations.remove(token);
            try {
                control(Layout.EPOLL_CTL_DEL, fd, 0, token);
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "epoll_ctl DEL of " + name + ": " + e.getMessage());
            }
            if (reading != null) {
                reading.lock(); // a waiting thread's poll ends before the source closes, and none starts after
            }
            try {
                source.close();
            } catch (RuntimeException e) {
                errors.incrementAndGet();
                LOG.log(Level.WARNING, "closing RDMA event source " + name + " failed: " + e.getMessage(), e);
            } finally {
                if (reading != null) {
                    reading.unlock();
                }
            }
            synchronized (allClosed) {
                allClosed.add(this);
            }
        }

        void awaitDrained(long deadlineNanos) {
            synchronized (this) {
                while (inFlight.get() > 0) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        LOG.log(Level.WARNING, name + ": " + inFlight.get()
                            + " event(s) still being delivered after the drain timeout");
                        return;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            try {
                onLoop(this::remove, "the removal of the registration " + name);
            } catch (IllegalStateException e) {
                closed.set(false); // still registered: the caller must not close the channel, and may try again
                throw e;
            }
            if (Thread.currentThread() != loop) {
                awaitDrained(System.nanoTime() + DRAIN_TIMEOUT.toNanos());
            }
            synchronized (allClosed) {
                allClosed.remove(this);
            }
        }

        @Override
        public boolean isActive() {
            return !removed && !closed.get() && !closing.get();
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public long eventsRead() {
            return read;
        }

        @Override
        public long eventsAcked() {
            long acked = source.acknowledged();
            return acked < 0 ? read : acked;
        }

        @Override
        public long eventsDelivered() {
            return delivered.get();
        }

        @Override
        public long errors() {
            return errors.get();
        }

        @Override
        public long refusals() {
            return refusals.get();
        }

        @Override
        public int inFlight() {
            return inFlight.get();
        }

        @Override
        public long busyPolls() {
            return busyPolls;
        }

        @Override
        public long eventsReadByWaiters() {
            return readByWaiters;
        }

        @Override
        public boolean isPaused() {
            return paused;
        }

        @Override
        public Throwable failure() {
            return failure;
        }

        @Override
        public String toString() {
            return "Registration[" + name + ", read " + read + ", acked " + eventsAcked() + ", delivered " + delivered
                + ", errors " + errors + ", refusals " + refusals + ", in flight " + inFlight
                + (paused ? ", paused" : "")
                + (removed ? ", removed]" : "]");
        }

        /** The events of one order key; runs as a delivery task, one at a time per key. */
        final class OrderQueue implements Runnable {
            private final Object key;
            // held by its key (OrderKey): never retired, never in the map
            private final boolean held;
            private final java.util.ArrayDeque<E> events = new java.util.ArrayDeque<>();
            static final int QUEUED = 0;
            static final int SCHEDULE = 1;
            static final int RETIRED = 2;
            private boolean scheduled;
            private boolean retired;
            // how long the last delivery took (run by one task at a time): a task that yielded its thread after the
            // delivery budget goes on polling in its next run (pollForNext), since the source was left to it
            private long lastDelivery = Long.MAX_VALUE;
            // this queue's last poll left the source unarmed to it, to come back after delivering what it found
            // (pollForNext): it does, or hands the source back (handBack)
            private boolean keeps;
            // pollForNext's condition, made once
            private final BooleanSupplier hasEvent = this::hasEvent;

            OrderQueue(Object key) {
                this(key, false);
            }

            OrderQueue(Object key, boolean held) {
                this.key = key;
                this.held = held;
            }

            Reg<E> registration() {
                return Reg.this;
            }

            /** Adds an event: SCHEDULE when the caller must schedule the queue, RETIRED when it must not use it. */
            synchronized int offer(E event) {
                if (retired) {
                    return RETIRED;
                }
                events.add(event);
                if (scheduled) {
                    return QUEUED;
                }
                scheduled = true;
                return SCHEDULE;
            }

            /** The next event; when there is none and {@code release}, the queue is no longer scheduled. */
            private synchronized E take(boolean release) {
                E event = events.poll();
                if (event == null && release) {
                    scheduled = false;
                    if (key != null && !held) {
                        // a keyed queue leaves the map when empty, so idle keys cost nothing; once retired it
                        // refuses events, so a key never has two queues delivering at once
                        retired = true;
                        byKey.remove(key, this);
                    }
                }
                return event;
            }

            private synchronized boolean hasEvent() {
                return !events.isEmpty();
            }

            /** Submits this refused task again (any thread); false when it was refused again and is kept. */
            boolean resubmit() {
                try {
                    delivery.execute(this);
                } catch (RuntimeException e) {
                    refusals.incrementAndGet();
                    refused.add(this);
                    return false;
                }
                if (refusedQueues.decrementAndGet() == 0) {
                    LOG.log(refusalReported ? Level.INFO : Level.DEBUG, "the delivery executor accepts the tasks of "
                        + name + " again (" + refusals
                        + " refusals in all); reading its source resumes");
                    if (!removed) {
                        resume(Reg.this);
                        wake();
                    }
                }
                return true;
            }

            /** The engine closed and the executor still refuses: the events are counted as errors, and logged. */
            void abandon() {
                int lost;
                synchronized (this) {
                    lost = events.size();
                    events.clear();
                }
                refusedQueues.decrementAndGet();
                errors.addAndGet(lost);
                LOG.log(Level.WARNING, lost + " event(s) of " + name + " were not delivered: the delivery executor "
                    + "refused them until the engine's drain timeout");
                for (int i = 0; i < lost; i++) {
                    settled();
                }
            }

            @Override
            public void run() {
                try {
                    deliverSome();
                } finally {
                    capacityReturned();
                }
            }

            private void deliverSome() {
                for (int budget = DELIVERY_BUDGET; budget > 0; budget--) {
                    E event = take(false);
                    if (event == null && (event = pollForNext()) == null) {
                        lastDelivery = Long.MAX_VALUE; // before the queue is released: the next run starts afresh
                        if ((event = take(true)) == null) {
                            return;
                        }
                    }
                    long start = System.nanoTime();
                    try {
                        handler.onEvent(event);
                    } catch (Throwable t) {
                        // counted and logged; the following events are delivered as usual
                        errors.incrementAndGet();
                        LOG.log(Level.WARNING, "handler of " + name + " threw on " + event + ": " + t, t);
                    }
                    delivered();
                    lastDelivery = System.nanoTime() - start;
                }
                submit(this); // budget used: let other work run, keep the order
            }

            // Delivery polling (leader/follower): after a delivery shorter than the busy-poll budget, with this queue
            // empty, the delivery thread reads the source itself for up to the budget, as a waiter does (pollUntil),
            // one such thread per registration: each event read is dispatched as the loop would, and the next event
            // of this key, the likely answer to what the handler just sent, is returned to be delivered here, with no
            // hand-over from the loop to another thread. Null when it found none (or may not poll).
            private E pollForNext() {
                long budget = busyPollNanos;
                if (reading == null || budget <= 0 || lastDelivery >= budget || removed
                    || !deliveryPolls.compareAndSet(false, true)) {
                    handBack();
                    return null;
                }
                long start = System.nanoTime();
                awaitedAt = start;
                waiters.incrementAndGet();
                E event = null;
                int read = -1;
                try {
                    read = readUntil(hasEvent, budget, start);
                    return event = take(false);
                } finally {
                    deliveryPolls.set(false);
                    // what it waited for (the answer to what its handler sent), and whatever came with it (a
                    // stream): it comes back after delivering them, and the arming may wait. A stream given back to
                    // the loop had the loop read beside this thread, a wake-up and a hand-over per batch where one
                    // thread does both, and on a shared CPU the two took turns (BENCHMARKS.md, "A stream kept by its
                    // delivery thread"). None, or stopped early (closed, failed or at its bound): the loop decides
                    keeps = event != null && read >= 0;
                    leave(keeps);
                }
            }

            // A poll that left the source to this queue is not followed by another (the delivery took longer than
            // the budget, or polling stopped): the source is armed at once, as by a waiter that gave up, instead of
            // waiting for the loop's look at the end of the hold
            private void handBack() {
                if (keeps) {
                    keeps = false;
                    waiters.incrementAndGet();
                    leave(false);
                }
            }
        }
    }
}
