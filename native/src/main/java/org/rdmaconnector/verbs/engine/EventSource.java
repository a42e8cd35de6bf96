package org.rdmaconnector.verbs.engine;

/**
 * Something with a file descriptor that turns readiness into events: a CM event channel, a completion channel, a
 * device's async fd (see {@link Sources}), or anything else with a non-blocking fd. The engine calls every method
 * from its loop thread, except {@link #poll()}, which a waiting thread calls (never at the same time as the loop's
 * {@link #next()}, {@link #armBeforeWait()} or {@link #close()}).
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

    /**
     * Called when {@link #next()} has returned null and the engine is about to wait for the fd. A source whose fd
     * reports only what was armed (a completion channel reports a CQ only after ibv_req_notify_cq) arms here and
     * returns true; the engine then calls {@link #poll()} once, since an event may have come before the arming (not
     * {@link #next()}: a notification the arming raised must stay on the fd, or the source is left unarmed).
     * The default arms nothing and returns false: the fd reports every event.
     */
    default boolean armBeforeWait() {
        return false;
    }

    /**
     * Whether the engine may busy-poll this source: after an event, keep calling {@link #next()} between its looks at
     * the other fds, for the engine's busy-poll budget ({@link EventEngine#setBusyPoll}), before it arms the source
     * and waits. Worth it where an event costs a wake-up and the next one is likely to follow soon (work
     * completions); the default is false.
     */
    default boolean busyPollable() {
        return false;
    }

    /**
     * The next event the source holds or can poll now without reading its fd: a busy-pollable source's queues, polled
     * (ibv_poll_cq), after what its last {@link #next()} read and has not returned yet, so the order stays the
     * source's. Never what the fd reports (a CQ event): that stays for {@link #next()}, or the source could be left
     * unarmed with the loop asleep. Called by {@link Registration#pollUntil} on a thread that waits for an event, one
     * reader at a time with the loop, and by the loop right after {@link #armBeforeWait()}. The default returns null:
     * nothing to poll.
     */
    default E poll() {
        return null;
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
