package org.rdmaconnector.verbs.engine;

import java.util.function.BooleanSupplier;

/**
 * A source registered with an {@link EventEngine}, with its counters. {@link #close()} stops reading the source,
 * lets events already read be delivered, waits for them (bounded), and returns when the engine will never touch the
 * source again: then the caller may close the channel behind it.
 */
public interface Registration extends AutoCloseable {
    /** The source's name. */
    String name();

    /**
     * Whether the engine still reads the source: false once the registration was closed, the source failed and was
     * dropped ({@link #failure()}), or the engine's loop ended (closed, or failed). Owners check it before lending
     * what depends on the source: its events would never be read again.
     */
    boolean isActive();

    /** Events read from the source (for a completion channel: work completions). */
    long eventsRead();

    /**
     * Kernel events acknowledged: CM and async events as they are read; a completion channel's CQ events in batches,
     * every one by the time the channel's queues close.
     */
    long eventsAcked();

    /** Events the handler returned from (normally or with an exception). */
    long eventsDelivered();

    /** Handler exceptions and source errors. */
    long errors();

    /** Events read and not yet delivered; never more than the registration's bound. */
    int inFlight();

    /**
     * Times the delivery executor refused a task of this registration (each resubmission refused counts again). The
     * events are kept, and the source is not read until the executor accepts again.
     */
    long refusals();

    /**
     * Whether the source is paused because {@link #inFlight()} reached the bound or the delivery executor refuses
     * its tasks.
     */
    boolean isPaused();

    /**
     * Busy polls of the source that found it empty and kept it unarmed, within the engine's busy-poll budget
     * ({@link EventEngine#setBusyPoll}); 0 for a source that is not busy-pollable.
     */
    long busyPolls();

    /**
     * Of {@link #eventsRead()}, those read by threads other than the loop: waiting threads ({@link #pollUntil}), and
     * delivery threads that poll a busy-pollable source after a short delivery ({@link EventEngine#setBusyPoll}).
     */
    default long eventsReadByWaiters() {
        return 0;
    }

    /**
     * Completions read on the awaiting thread: for a busy-pollable source (work completions, whose polling completes
     * work requests), the calling thread reads the source itself ({@link EventSource#poll()}) and handles each event
     * as the loop would (on a registration with deliveries: dispatched to the delivery executor, under the in-flight
     * bound), one reader at a time with the loop, until {@code done} says true or the engine's busy-poll budget
     * ({@link EventEngine#setBusyPoll})
     * has passed since the call. A thread about to wait for a completion then needs no wake-up from the loop: the
     * price is up to the budget of its CPU. The loop still arms the source and reads it when this thread gives up;
     * while threads keep calling this, it leaves the source unarmed for the engine's waiter hold
     * ({@link EventEngine#setWaiterHold}) after the last call began.
     * For a source that is not busy-pollable, or a budget of 0, it only asks {@code done}.
     *
     * @return {@code done}'s last answer: false when the budget passed first (then wait as usual)
     */
    default boolean pollUntil(BooleanSupplier done) {
        return done.getAsBoolean();
    }

    /** The error that made the engine drop this source (its fd failed), or null. */
    Throwable failure();

    /**
     * Deregisters the source; see the type's description. Twice is a no-op.
     *
     * @throws IllegalStateException if the engine's loop did not remove it within its bound (busy or stuck; logged
     *     and counted in {@link EventEngine#loopWaitTimeouts()}): the source may still be read, so the caller must
     *     not close the channel behind it yet; it may call close() again
     */
    @Override
    void close();
}
