package org.rdmaconnector.connector.spi;

/**
 * A connector runtime's event engine as JMX shows it ({@code org.rdmaconnector:type=Engine,name=...}): its
 * registrations and the counters that say whether its loop keeps up.
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
}
