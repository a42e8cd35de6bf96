package org.rdmaconnector.connector.spi;

/**
 * A connector runtime's event engine as JMX shows it ({@code org.rdmaconnector:type=Engine,name=...}): its loop's
 * state, its registrations and the counters that say whether its loop keeps up.
 */
public interface EngineMXBean {
    /** Channels the engine reads now (CM event channels, completion channels, device async fds). */
    int getRegistrations();

    /** Events read and not yet delivered, over every registration. */
    long getInFlight();

    /** Registrations not read now (backpressure: at their bound, or their deliveries refused). */
    int getPaused();

    /** Delivery tasks the executor refused so far (they are kept and submitted again). */
    long getRefusals();

    /** Waits on the loop (close, undeploy, a removal) that ran out of their bound; each is logged at WARNING. */
    long getLoopWaitTimeouts();

    /** Errors of handlers and sources so far. */
    long getErrors();

    /** STARTING, RUNNING, FAILED (the loop ended on an error: see {@link #getLoopFailure()}) or CLOSED. */
    String getLoopState();

    /** Why the loop ended on its own, or null. */
    String getLoopFailure();

    /** Each registration: its name, events read, delivered, in flight, and whether it is paused. */
    java.util.List<String> getRegistrationDetails();

    /** Events read so far by the registrations open now. */
    long getEventsRead();

    /** Events delivered so far by the registrations open now. */
    long getEventsDelivered();

    /**
     * The busy-poll budget in microseconds: how long the loop keeps polling a completion queue after its last work
     * completion before it arms it and sleeps (0: never busy-poll). Settable at run time.
     */
    long getBusyPollMicros();

    /**
     * Sets the busy-poll budget, from 0 to 100000 microseconds.
     *
     * @throws IllegalArgumentException outside that range
     */
    void setBusyPollMicros(long micros);

    /**
     * The waiter hold in microseconds: while threads keep awaiting a client connection's completion queue, how long
     * after the last await began the loop leaves the queue unarmed to them (0: re-armed as the last one leaves).
     * Settable at run time.
     */
    long getWaiterHoldMicros();

    /**
     * Sets the waiter hold, from 0 to 1000000 microseconds.
     *
     * @throws IllegalArgumentException outside that range
     */
    void setWaiterHoldMicros(long micros);

    /** Busy polls that found a completion queue empty and kept it unarmed, by the registrations open now. */
    long getBusyPolls();

    /**
     * Work completions read by threads other than the loop, by the registrations open now: a thread about to wait
     * for a request of a client connection polls its completion queue for up to the busy-poll budget first, and a
     * listener's delivery thread polls its queue after a delivery shorter than the budget.
     */
    long getEventsReadByWaiters();
}
