package org.rdmaconnector.connector.spi;

import java.lang.System.Logger.Level;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.rdmaconnector.connector.ConnectionEvent;
import org.rdmaconnector.connector.MessageCompletion;

/**
 * One endpoint activated on a listener (a JCA endpoint activation, an OSGi whiteboard service): its state and
 * counters. {@link #close()} deactivates it and returns when its deliveries in progress have ended (bounded); the
 * listener stops when its last activation closes.
 */
public final class Activation implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Activation.class.getName());
    private static final long DRAIN_MILLIS = 10_000;

    /** Where an activation stands. */
    public enum State {
        /** The listener cannot listen yet (no device, address not on a device); it retries with backoff. */
        WAITING_FOR_DEVICE,
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
    private volatile boolean closed;

    Activation(ListenerSettings settings, EndpointSink sink, Listener listener) {
        this.settings = settings;
        this.sink = sink;
        this.listener = listener;
        this.permits = new Semaphore(settings.maxConcurrentDeliveries(), true);
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

    /** Events and completions the endpoint returned from. */
    public long delivered() {
        return delivered.get();
    }

    /** Deliveries the endpoint ended with an exception. */
    public long errors() {
        return errors.get();
    }

    /** Deliveries running now. */
    public int inFlight() {
        return running.get();
    }

    /** Connections the listener holds now (shared by the activations of the listener). */
    public int connectionCount() {
        return listener.connectionCount();
    }

    boolean receivesCmEvents() {
        return !closed && sink.receivesCmEvents();
    }

    boolean receivesCompletions() {
        return !closed && sink.receivesCompletions();
    }

    void deliver(ConnectionEvent event) {
        deliver(event, null);
    }

    void deliver(MessageCompletion completion) {
        deliver(null, completion);
    }

    private void deliver(ConnectionEvent event, MessageCompletion completion) {
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
            if (event != null) {
                sink.deliver(event);
            } else {
                sink.deliver(completion);
            }
        } catch (Throwable t) {
            errors.incrementAndGet();
            LOG.log(Level.WARNING, "endpoint " + sink.name() + " failed on " + (event != null ? event : completion)
                + "; the next event is delivered as usual", t);
        } finally {
            delivered.incrementAndGet();
            running.decrementAndGet();
            permits.release();
        }
    }

    /** Deactivates: no new deliveries; waits (bounded) for those running; the last activation stops the listener. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (permits.tryAcquire(settings.maxConcurrentDeliveries()) || drain()) {
            permits.release(settings.maxConcurrentDeliveries());
        }
        listener.remove(this);
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
            + ", " + delivered + " delivered, " + errors + " errors]";
    }
}
