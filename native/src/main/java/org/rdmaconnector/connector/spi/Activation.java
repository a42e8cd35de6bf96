package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * One endpoint activated on a listener (a JCA endpoint activation, an OSGi whiteboard service): its state and
 * counters. A delivery that throws is attempted again, up to the activation's delivery attempts, and then counted
 * as undeliverable; one to an unavailable endpoint ({@link EndpointUnavailableException}) waits and is tried again
 * until the endpoint is available or the activation closes. {@link #close()} deactivates it and returns when its
 * deliveries in progress have ended (bounded); the listener stops when its last activation closes.
 *
 * <p>It is the one home of "paused" ({@link #pauseDelivery()}, DeliveryActive=false): while paused, each event of a
 * connection is held here in order and its connection is told only when it is delivered, so a held receive is not
 * posted again and RC flow control (receiver not ready) holds the peer back; nothing is dropped and no thread waits.
 * {@link #resumeDelivery()} delivers what is held, in order per connection, on the delivery executor; meanwhile
 * newer events of those connections queue behind it.
 */
public final class Activation implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Activation.class.getName());
    private static final long DRAIN_MILLIS = 10_000;
    private static final int MAX_DELIVERY_ATTEMPTS = 1000;
    // backoff while the endpoint is unavailable: each pause is bounded, the waiting is not (the event is kept)
    private static final long FIRST_UNAVAILABLE_PAUSE_MILLIS = 250;
    private static final long LAST_UNAVAILABLE_PAUSE_MILLIS = 5000;

    /** Where an activation stands. */
    public enum State {
        /** The listener cannot listen yet (no device, address not on a device); it retries with backoff. */
        WAITING_FOR_DEVICE,
        /**
         * The listener gave up listening: its SetupAttempts tries failed ({@link #stateDetail()} says why); nothing
         * is delivered until {@link #retrySetup()} or a redeploy.
         */
        GAVE_UP,
        /**
         * The address and port are taken by another listener (rdma_bind_addr: EADDRINUSE), in this process or
         * another; it retries with backoff, and listens once the other lets go.
         */
        ADDRESS_IN_USE,
        /** Listening; events are delivered. */
        LISTENING,
        /** Deactivated. */
        STOPPED
    }

    private final ListenerSettings settings;
    private final EndpointSink sink;
    private final Listener listener;
    private final Semaphore permits;
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong undeliverable = new AtomicLong();
    private final int deliveryAttempts;
    // set while deliveries wait for an unavailable endpoint: its first wait is logged, and its return
    private final java.util.concurrent.atomic.AtomicBoolean endpointUnavailable =
        new java.util.concurrent.atomic.AtomicBoolean();
    // close() notifies it: deliveries waiting for an unavailable endpoint give up at once
    private final Object closeSignal = new Object();
    private volatile boolean closed;
    // runs the catch-up of held events after a resume
    private final Executor catchUp;
    // guarded by 'held': whether delivery is paused, and the events held per connection, each queue in order
    private final Map<Object, Held> held = new LinkedHashMap<>();
    private boolean paused;
    private int heldCount;

    /** The events of one connection held for this activation, in order; caught up by one task at a time. */
    private static final class Held {
        final ArrayDeque<Pending> queue = new ArrayDeque<>();
        boolean catchingUp;
    }

    /** An event (or completion) to deliver, and what its connection does once it is delivered. */
    private record Pending(ConnectionEvent event, MessageCompletion completion, Deliveries.Done done) {
        Object what() {
            return event != null ? event : completion;
        }
    }

    /** An activation with the settings' DeliveryAttempts, catching up held events on {@code catchUp}. */
    Activation(ListenerSettings settings, EndpointSink sink, Listener listener, Executor catchUp) {
        this(settings, sink, listener, settings.deliveryAttempts(), catchUp);
    }

    /**
     * @param deliveryAttempts how many times a delivery that throws is attempted, from 1 to 1000
     * @param catchUp runs the delivery of held events after {@link #resumeDelivery()} (the delivery executor); when
     *     it refuses, the resuming thread delivers them
     */
    Activation(ListenerSettings settings, EndpointSink sink, Listener listener, int deliveryAttempts,
               Executor catchUp) {
        if (deliveryAttempts < 1 || deliveryAttempts > MAX_DELIVERY_ATTEMPTS) {
            throw new IllegalArgumentException("deliveryAttempts must be from 1 to " + MAX_DELIVERY_ATTEMPTS
                + ", was " + deliveryAttempts);
        }
        this.settings = settings;
        this.sink = sink;
        this.listener = listener;
        this.deliveryAttempts = deliveryAttempts;
        this.permits = new Semaphore(settings.maxConcurrentDeliveries(), true);
        this.catchUp = catchUp;
        this.paused = !settings.deliveryActive();
    }

    /** The settings it was activated with. */
    public ListenerSettings settings() {
        return settings;
    }

    /** The sink's name. */
    public String name() {
        return sink.name();
    }

    /** The state now. */
    public State state() {
        return closed ? State.STOPPED : listener.state();
    }

    /** Why the listener waits (the last error, with the next retry), or the listening address; for people. */
    public String stateDetail() {
        return closed ? "stopped" : listener.stateDetail();
    }

    /** Events and completions the endpoint took (returned from without an exception). */
    public long delivered() {
        return delivered.get();
    }

    /** Delivery attempts the endpoint ended with an exception (an event attempted again counts each time). */
    public long errors() {
        return errors.get();
    }

    /**
     * Events never delivered: the endpoint failed on every attempt, or was unavailable until the activation closed.
     * Each is logged at WARNING with the event (its connection and sequence).
     */
    public long undeliverable() {
        return undeliverable.get();
    }

    /** Deliveries running now. */
    public int inFlight() {
        return running.get();
    }

    /** Connections the listener holds now (shared by the activations of the listener). */
    public int connectionCount() {
        return listener.connectionCount();
    }

    /**
     * CONNECT_REQUESTs the listener rejected, by reason (PEER_NOT_ALLOWED, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER,
     * NOT_ACCEPTED, NO_RESOURCES); shared by the activations of the listener.
     */
    public Map<String, Long> rejections() {
        Map<String, Long> byName = new LinkedHashMap<>();
        listener.decision().rejections().forEach((reason, count) -> byName.put(reason.name(), count));
        return byName;
    }

    boolean receivesCmEvents() {
        return !closed && sink.receivesCmEvents();
    }

    boolean receivesCompletions() {
        return !closed && sink.receivesCompletions();
    }

    /** Delivers {@code event} now, or holds it while paused; {@code done} runs once it is delivered or given up. */
    void deliver(ConnectionEvent event, Deliveries.Done done) {
        offer(event, null, done, event.connection());
    }

    /** Delivers {@code completion} now, or holds it while paused; {@code done} runs once delivered or given up. */
    void deliver(MessageCompletion completion, Deliveries.Done done) {
        offer(null, completion, done, completion.connection());
    }

    // an event or a completion: held (a Pending) only when it must wait, so a delivery made now costs no object here
    private void offer(ConnectionEvent event, MessageCompletion completion, Deliveries.Done done,
                       Object connection) {
        Object key = connection == null ? Held.class : connection;
        synchronized (held) {
            Held queue = held.get(key);
            if (!closed && (paused || queue != null)) { // a connection with events held: this one waits behind them
                if (queue == null) {
                    queue = new Held();
                    held.put(key, queue);
                }
                queue.queue.add(new Pending(event, completion, done));
                heldCount++;
                return;
            }
        }
        deliverNow(event, completion, done);
    }

    private void deliverNow(ConnectionEvent event, MessageCompletion completion, Deliveries.Done done) {
        try {
            deliverToEndpoint(event, completion);
        } finally {
            done.run();
        }
    }

    /** Whether deliveries go to the endpoint (not paused). */
    public boolean isDeliveryActive() {
        synchronized (held) {
            return !paused;
        }
    }

    /** Events and completions held now, to be delivered on resume. */
    public int held() {
        synchronized (held) {
            return heldCount;
        }
    }

    /**
     * Pauses delivery: from now on each event is held, in order per connection, and its connection does not post
     * the receive again until the event is delivered, so peers are held back by RC flow control; connections stay
     * open. Deliveries running now finish.
     *
     * @return whether it was delivering (false: already paused, or closed)
     */
    public boolean pauseDelivery() {
        synchronized (held) {
            if (closed || paused) {
                return false;
            }
            paused = true;
        }
        LOG.log(Level.INFO, "endpoint " + sink.name() + " on " + settings.address() + ":" + settings.port()
            + ": delivery paused; events are held and the peers held back until it is resumed");
        return true;
    }

    /**
     * Resumes delivery: what was held is delivered, in order per connection, on the delivery executor (each
     * connection's newer events after it), then events go straight to the endpoint again.
     *
     * @return whether it was paused (false: already delivering, or closed)
     */
    public boolean resumeDelivery() {
        List<Map.Entry<Object, Held>> toCatchUp = new ArrayList<>();
        int count;
        synchronized (held) {
            if (closed || !paused) {
                return false;
            }
            paused = false;
            count = heldCount;
            for (Map.Entry<Object, Held> entry : held.entrySet()) {
                if (!entry.getValue().catchingUp) {
                    entry.getValue().catchingUp = true;
                    toCatchUp.add(entry);
                }
            }
        }
        LOG.log(Level.INFO, "endpoint " + sink.name() + " on " + settings.address() + ":" + settings.port()
            + ": delivery resumed; " + count + " held events of " + toCatchUp.size() + " connections follow");
        for (Map.Entry<Object, Held> entry : toCatchUp) {
            Runnable task = () -> catchUp(entry.getKey(), entry.getValue());
            try {
                catchUp.execute(task);
            } catch (RejectedExecutionException e) {
                LOG.log(Level.DEBUG, "the delivery executor refused the catch-up of " + sink.name()
                    + "; delivering on the resuming thread", e);
                task.run();
            }
        }
        return true;
    }

    /** Tries to listen again after the listener gave up ({@link State#GAVE_UP}); see {@link Listener#retrySetup()}. */
    public boolean retrySetup() {
        return !closed && listener.retrySetup();
    }

    /** Delivers a connection's held events in order until none is left (then it delivers directly) or paused. */
    private void catchUp(Object key, Held queue) {
        while (true) {
            Pending next;
            synchronized (held) {
                if (paused || closed) {
                    queue.catchingUp = false; // the next resume (or the close) takes it on
                    return;
                }
                next = queue.queue.poll();
                if (next == null) {
                    held.remove(key, queue);
                    return;
                }
                heldCount--;
            }
            deliverNow(next.event(), next.completion(), next.done());
        }
    }

    // Holds the calling thread until the event is delivered or given up
    private void deliverToEndpoint(ConnectionEvent event, MessageCompletion completion) {
        if (closed) {
            return;
        }
        permits.acquireUninterruptibly();
        if (closed) { // deactivated while this delivery waited for a permit
            permits.release();
            return;
        }
        running.incrementAndGet();
        try {
            attempt(event, completion);
        } finally {
            running.decrementAndGet();
            permits.release();
        }
    }

    // Holds the calling delivery thread until the event is delivered or given up: the caller relies on it (a
    // receive not yet delivered keeps its buffer from the queue pair, so RC flow control holds the peer back).
    private void attempt(ConnectionEvent event, MessageCompletion completion) {
        Object what = event != null ? event : completion;
        long pause = FIRST_UNAVAILABLE_PAUSE_MILLIS;
        for (int failures = 0; ; ) {
            try {
                if (event != null) {
                    sink.deliver(event);
                } else {
                    sink.deliver(completion);
                }
                delivered.incrementAndGet();
                if (endpointUnavailable.compareAndSet(true, false)) {
                    LOG.log(Level.INFO, "endpoint " + sink.name() + " is available again; deliveries go on");
                }
                return;
            } catch (EndpointUnavailableException e) {
                // not the delivery's fault: it does not use up an attempt
                if (endpointUnavailable.compareAndSet(false, true)) {
                    LOG.log(Level.WARNING, "endpoint " + sink.name() + " is unavailable (" + e.getMessage()
                        + "); its deliveries wait and are tried again until it is available or deactivated");
                }
                if (pauseUnlessClosed(pause)) {
                    giveUp(what, "the endpoint was unavailable until the activation was closed", e);
                    return;
                }
                pause = Math.min(pause * 2, LAST_UNAVAILABLE_PAUSE_MILLIS);
            } catch (Throwable t) {
                errors.incrementAndGet();
                failures++;
                if (failures >= deliveryAttempts || closed) {
                    giveUp(what, "the endpoint failed on it " + failures + " time(s)", t);
                    return;
                }
                LOG.log(Level.DEBUG, "endpoint " + sink.name() + " failed on " + what + " (attempt " + failures
                    + " of " + deliveryAttempts + "); trying again", t);
            }
        }
    }

    private void giveUp(Object what, String why, Throwable last) {
        undeliverable.incrementAndGet();
        LOG.log(Level.WARNING, "endpoint " + sink.name() + ": " + what + " is not delivered: " + why
            + "; the next event is delivered as usual", last);
    }

    /** Waits {@code millis} unless the activation closes first; returns whether it is closed. */
    private boolean pauseUnlessClosed(long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (closeSignal) {
            while (!closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(closeSignal, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // the delivery thread is being stopped: give the event up
                    return true;
                }
            }
        }
        return true;
    }

    /**
     * Deactivates: no new deliveries; waits (bounded) for those running, then closes the sink; the last activation
     * stops the listener.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        List<Pending> notDelivered = new ArrayList<>();
        synchronized (held) {
            closed = true;
            held.values().forEach(queue -> notDelivered.addAll(queue.queue));
            held.clear();
            heldCount = 0;
        }
        synchronized (closeSignal) {
            closeSignal.notifyAll();
        }
        giveUpHeld(notDelivered);
        if (permits.tryAcquire(settings.maxConcurrentDeliveries()) || drain()) {
            permits.release(settings.maxConcurrentDeliveries());
        }
        try {
            sink.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "endpoint " + sink.name() + " failed to close", e);
        }
        listener.remove(this);
    }

    /** Held events of a closed activation: counted and logged as undeliverable, their connections told. */
    private void giveUpHeld(List<Pending> notDelivered) {
        if (notDelivered.isEmpty()) {
            return;
        }
        undeliverable.addAndGet(notDelivered.size());
        LOG.log(Level.WARNING, "endpoint " + sink.name() + " was deactivated with " + notDelivered.size()
            + " events held (paused): they are not delivered; the first: " + notDelivered.get(0).what());
        for (Pending pending : notDelivered) {
            LOG.log(Level.DEBUG, "endpoint " + sink.name() + ": " + pending.what() + " is not delivered (deactivated "
                + "while held)");
            try {
                pending.done().run();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "the connection's follow-up of a held event failed", e);
            }
        }
    }

    private boolean drain() {
        try {
            if (permits.tryAcquire(settings.maxConcurrentDeliveries(), DRAIN_MILLIS, TimeUnit.MILLISECONDS)) {
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.log(Level.WARNING, "endpoint " + sink.name() + " still has " + running.get() + " deliveries running after "
            + DRAIN_MILLIS + " ms; deactivating anyway");
        return false;
    }

    @Override
    public String toString() {
        return "Activation[" + sink.name() + " on " + settings.address() + ":" + settings.port() + ", " + state()
            + (isDeliveryActive() ? "" : ", paused with " + held() + " held") + ", " + delivered + " delivered, "
            + errors + " errors, " + undeliverable + " undeliverable]";
    }
}
