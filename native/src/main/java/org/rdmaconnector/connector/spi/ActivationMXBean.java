package org.rdmaconnector.connector.spi;

/**
 * An endpoint activation as JMX shows it ({@code org.rdmaconnector:type=Activation,...}): whether it listens or
 * waits for its device, whether it delivers, its counters; and the operations to pause and resume delivery and to
 * retry a setup that gave up.
 */
public interface ActivationMXBean {
    /** The endpoint (activation name or MDB class). */
    String getEndpoint();

    /** The listen address and port. */
    String getListenAddress();

    /** WAITING_FOR_DEVICE, GAVE_UP, ADDRESS_IN_USE, LISTENING or STOPPED. */
    String getState();

    /** Why it waits (the last error and the next retry), or where it listens. */
    String getStateDetail();

    /** Events and completions the endpoint took. */
    long getDelivered();

    /** Delivery attempts that ended with an exception (an event attempted again counts each time). */
    long getErrors();

    /** Events never delivered (failed on every attempt, or the endpoint unavailable until deactivation). */
    long getUndeliverable();

    /** Deliveries running now. */
    int getInFlight();

    /** Connections the listener holds now. */
    int getConnections();

    /** Connection requests the listener rejected, by reason (see {@link Activation#rejections()}). */
    java.util.Map<String, Long> getRejections();

    /** Whether events go to the endpoint; false while paused (DeliveryActive=false, or {@link #pauseDelivery()}). */
    boolean isDeliveryActive();

    /** Events and completions held while paused, delivered on resume. */
    int getHeld();

    /**
     * Pauses delivery: events are held in order, the connections stay open and their peers are held back by RC flow
     * control; returns false when it was paused already.
     */
    boolean pauseDelivery();

    /** Resumes delivery: what was held is delivered in order per connection; false when it was not paused. */
    boolean resumeDelivery();

    /** After GAVE_UP: tries to listen again with a fresh count of tries; false in any other state. */
    boolean retrySetup();
}
