package org.rdmaconnector.verbs.engine;

/**
 * Something with a file descriptor that turns readiness into events: a CM event channel, a completion channel, a
 * device's async fd (see {@link Sources}), or anything else with a non-blocking fd. The engine calls every method
 * from its loop thread only.
 *
 * @param <E> the event type; events are copied and acknowledged by {@link #next()}, so they stay valid
 */
public interface EventSource<E> {
    /** The file descriptor to watch for readability; it must be non-blocking after {@link #open()}. */
    int fd();

    /** Called once when the source is registered: make the fd non-blocking, arm queues. */
    default void open() {
    }

    /** The next event, copied and acknowledged; null when none is ready now (the fd would block). */
    E next();

    /**
     * Events with equal keys are delivered one at a time in the order {@link #next()} returned them; events with
     * different keys may be delivered concurrently. By default all events of a source share one order.
     */
    default Object orderKey(E event) {
        return this;
    }

    /** Called once when the source is removed, after the last {@link #next()}: acknowledge what is left. */
    default void close() {
    }

    /**
     * The kernel events this source has acknowledged, or -1 (the default) when each event is acknowledged as
     * {@link #next()} reads it. Called from any thread.
     */
    default long acknowledged() {
        return -1;
    }

    /** A name for logs and counters. */
    default String name() {
        return getClass().getSimpleName() + "[fd " + fd() + "]";
    }
}
